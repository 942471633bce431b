package results_test

import (
	"context"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/pbt"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
)

// TestLineage runs PBT on the sim executor and reads each trial's
// ancestry back: exploits in order, each continuing from its donor, and a
// schedule whose last step is the trial's final configuration.
func TestLineage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pbt")
	cfg := pbt.DefaultConfig()
	cfg.TimeAttr = hone.FieldTrainingIteration
	cfg.PerturbationInterval = 3
	cfg.Mutations = map[string]any{"rate": func(r *rand.Rand) any { return 0.05 + 0.4*r.Float64() }}
	sched, err := pbt.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sr, err := random.New(space.Space{"rate": space.Uniform(0.05, 0.45), "asymptote": space.Uniform(0, 1)}, 8, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := local.New(dir, local.NoSync())
	exp := &hone.Experiment{Name: "pbt", Metric: "loss", Searcher: sr, Scheduler: sched, Seed: 2, MaxConcurrentTrials: 4,
		Checkpoint: hone.CheckpointConfig{NumToKeep: 1}}
	if _, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Store: st, Log: io.Discard,
		Executor: sim.New(sim.Curve{MaxIterations: 15}.New)}); err != nil {
		t.Fatal(err)
	}
	res, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	exploited := 0
	for _, tr := range res.Trials {
		lin, err := tr.Lineage()
		if err != nil {
			t.Fatal(err)
		}
		steps, err := tr.Schedule()
		if err != nil {
			t.Fatal(err)
		}
		if len(lin) == 0 {
			if len(steps) != 1 || steps[0].Config["rate"] != tr.Config["rate"] {
				t.Errorf("trial %s: schedule %v without exploits", tr.ID, steps)
			}
			continue
		}
		exploited++
		if last := lin[len(lin)-1]; !strings.HasPrefix(tr.Tag, last.Target+"@perturbed[") || last.TargetID != tr.ID {
			t.Errorf("trial %s (%s): last exploit's target is %s (%s)", tr.ID, tr.Tag, last.Target, last.TargetID)
		}
		for _, e := range lin {
			donor := res.Trial(e.DonorID)
			if donor == nil || !strings.HasPrefix(donor.Tag, e.Donor) || e.TargetID == e.DonorID {
				t.Errorf("trial %s: exploit %+v names donor id %q", tr.ID, e, e.DonorID)
			}
		}
		// A policy log is a chain: each exploit's target is the donor of
		// the next (the log was copied from that donor's).
		for i := 1; i < len(lin); i++ {
			if lin[i].Donor != lin[i-1].Target {
				t.Errorf("trial %s: lineage is not a chain: %+v", tr.ID, lin)
			}
		}
		if got, want := steps[len(steps)-1].Config["rate"], tr.Config["rate"]; got != want {
			t.Errorf("trial %s: schedule ends with rate %v, trial has %v", tr.ID, got, want)
		}
	}
	if exploited == 0 {
		t.Fatal("no trial was exploited; the test needs PBT to act")
	}
	// The global log holds every exploit once; each trial's own exploits
	// (the last of its lineage) are among them.
	all, err := res.Exploits()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < exploited {
		t.Fatalf("%d exploits in the global log, fewer than the %d trials exploited", len(all), exploited)
	}
	for _, tr := range res.Trials {
		lin, _ := tr.Lineage()
		if len(lin) == 0 {
			continue
		}
		last := lin[len(lin)-1]
		found := false
		for _, x := range all {
			if x.TargetID == last.TargetID && x.DonorID == last.DonorID && x.TargetIteration == last.TargetIteration {
				found = true
			}
		}
		if !found {
			t.Errorf("trial %s: exploit %+v is not in the global log", tr.ID, last)
		}
	}
}

package pb2_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/pb2"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
)

var writeEarlier = flag.String("write-earlier-journal", "", "run earlierExperiment into this directory and stop")

// earlierExperiment is PB2 over six trials of lrCurve on the sim executor,
// all running at once, perturbing every 4 iterations, with linear bounds.
func earlierExperiment(t *testing.T) *hone.Experiment {
	const seed = 21
	sr, err := random.New(space.Space{"lr": space.Uniform(0, 0.5)}, 6, nil, seed)
	if err != nil {
		t.Fatal(err)
	}
	cfg := pb2.DefaultConfig()
	cfg.PBT.TimeAttr = hone.FieldTrainingIteration
	cfg.PBT.PerturbationInterval = 4
	cfg.Bounds = map[string][2]float64{"lr": {0, 1}}
	sched, err := pb2.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &hone.Experiment{Name: "pb2", Metric: "loss", Mode: hone.Min, Searcher: sr, Scheduler: sched, Seed: seed,
		MaxConcurrentTrials: 6, Checkpoint: hone.CheckpointConfig{NumToKeep: 2}}
}

func earlierOptions(t *testing.T, dir string) runner.Options {
	st, err := local.New(dir, local.NoSync())
	if err != nil {
		t.Fatal(err)
	}
	model := sim.Curve{Params: lrCurve, Noise: 0.002, MaxIterations: 24, Seed: 21}.New
	// The fixture was written with a pool of 2 CPUs (its header's
	// settings): a run today needs the same pool to make the same choices.
	return runner.Options{Dir: dir, Store: st, Log: io.Discard, Executor: sim.New(model), Pool: hone.Resources{CPU: 2}}
}

// journalConfigs returns each trial's configuration as the journal in dir
// recorded it last, and how many exploits (config records) it holds.
func journalConfigs(t *testing.T, dir string) (map[string]string, int) {
	t.Helper()
	j, err := journal.Read(filepath.Join(dir, journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	out, exploits := map[string]string{}, 0
	for _, l := range j.Lines {
		if l.Rec == nil || l.Rec.Op != "trial" && l.Rec.Op != "config" {
			continue
		}
		out[l.Rec.Trial] = fmt.Sprint(map[string]any(l.Rec.Config))
		if l.Rec.Op == "config" {
			exploits++
		}
	}
	return out, exploits
}

// TestResumeJournalOfEarlierRelease: testdata/earlier holds the journal of
// earlierExperiment as hone wrote it before PB2 had log scales. A resume
// replays it to the configurations it recorded (the explored ones
// included), and a run today makes the same choices: without a log-scale
// key PB2 decides as it did. If PB2's choices change, an experiment
// started before would replay to choices it never made, so such a change
// has to keep the earlier rule for journals written before it.
func TestResumeJournalOfEarlierRelease(t *testing.T) {
	if *writeEarlier != "" {
		if _, err := runner.Run(context.Background(), earlierExperiment(t), earlierOptions(t, *writeEarlier)); err != nil {
			t.Fatal(err)
		}
		t.Skip("wrote the journal")
	}
	src, err := os.ReadFile(filepath.Join("testdata", "earlier", journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	want, exploits := journalConfigs(t, filepath.Join("testdata", "earlier"))
	if exploits < 3 {
		t.Fatalf("the fixture holds %d exploits: it does not exercise PB2's choices", exploits)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, journal.FileName), src, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runner.Resume(context.Background(), earlierExperiment(t), earlierOptions(t, dir), hone.ResumeFlags{})
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if len(out.Trials) != len(want) {
		t.Fatalf("%d trials after the resume, the journal has %d", len(out.Trials), len(want))
	}
	for _, tr := range out.Trials {
		if got := fmt.Sprint(map[string]any(tr.Config)); got != want[tr.ID] {
			t.Errorf("trial %s replayed to %s, the journal recorded %s", tr.ID, got, want[tr.ID])
		}
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	if _, err := runner.Run(context.Background(), earlierExperiment(t), earlierOptions(t, fresh)); err != nil {
		t.Fatal(err)
	}
	got, _ := journalConfigs(t, fresh)
	for id, cfg := range want {
		if got[id] != cfg {
			t.Errorf("trial %s: a run today ends with %s, the earlier release's with %s", id, got[id], cfg)
		}
	}
}

package runner_test

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
)

// TestResumeDifferentExperiment: resuming a directory with a changed
// search space or number of samples fails with an error naming the first
// trial that differs, and changes nothing; the original experiment then
// still resumes.
func TestResumeDifferentExperiment(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "exp")
	mk := func(hi float64, samples int) *hone.Experiment {
		sr, err := random.New(space.Space{"rate": space.Uniform(0.01, hi), "step_seconds": 60}, samples, nil, 4)
		if err != nil {
			t.Fatal(err)
		}
		return &hone.Experiment{Name: "sim", Metric: "loss", Searcher: sr, MaxConcurrentTrials: 2, Seed: 4}
	}
	opts := func() runner.Options {
		st, err := local.New(dir, local.NoSync())
		if err != nil {
			t.Fatal(err)
		}
		return runner.Options{Dir: dir, Store: st, Log: io.Discard, Executor: sim.New(sim.Curve{MaxIterations: 3}.New)}
	}
	if _, err := runner.Run(context.Background(), mk(0.5, 6), opts()); err != nil {
		t.Fatal(err)
	}
	for name, exp := range map[string]*hone.Experiment{"space": mk(0.9, 6), "samples": mk(0.5, 9)} {
		_, err := runner.Resume(context.Background(), exp, opts(), hone.ResumeFlags{Unfinished: true})
		t.Logf("%s changed: %v", name, err)
		if err == nil || !strings.Contains(err.Error(), "holds a different experiment") || !strings.Contains(err.Error(), "trial") {
			t.Errorf("%s changed: resume gave %v", name, err)
		}
	}
	out, err := runner.Resume(context.Background(), mk(0.5, 6), opts(), hone.ResumeFlags{Unfinished: true})
	if err != nil || len(out.Trials) != 6 {
		t.Fatalf("resuming the original experiment: %v", err)
	}
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s: %s", tr.ID, tr.Status)
		}
	}
}

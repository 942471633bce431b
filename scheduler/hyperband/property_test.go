package hyperband_test

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/scratch"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/hyperband"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
	"pgregory.net/rapid"
)

// TestNoDeadlock is docs/SEMANTICS.md §4's no-deadlock property on the sim
// executor: for random max_t ∈ [1, 1000], η ∈ {2,3,4,5}, num_samples ∈
// [1, 200], concurrency ∈ [1, 32] and random trial failures, both HyperBand
// and HyperBand for BOHB end with every trial TERMINATED or ERROR, and no
// trial trains past max_t.
func TestNoDeadlock(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := hyperband.DefaultConfig()
		cfg.MaxT = float64(rapid.IntRange(1, 1000).Draw(t, "max_t"))
		cfg.ReductionFactor = float64(rapid.IntRange(2, 5).Draw(t, "eta"))
		bohb := rapid.Bool().Draw(t, "bohb")
		var sched hone.Scheduler
		var err error
		if bohb {
			sched, err = hyperband.NewForBOHB(cfg, nil)
		} else {
			sched, err = hyperband.New(cfg)
		}
		if err != nil {
			t.Fatal(err)
		}
		samples := rapid.IntRange(1, 200).Draw(t, "samples")
		sr, err := random.New(space.Space{"rate": space.Uniform(0.01, 0.5), "asymptote": space.Uniform(0, 1)}, samples, nil, 9)
		if err != nil {
			t.Fatal(err)
		}
		failAt := rapid.IntRange(0, int(cfg.MaxT)+1).Draw(t, "fail_at") // 0: no failures
		var model sim.Model = sim.Curve{Noise: 0.05, CheckpointEvery: 20}.New
		if failAt > 0 {
			fm := &sim.FailingModel{Model: model, Iteration: failAt, Times: rapid.IntRange(0, 2).Draw(t, "fail_times")}
			model = fm.New
		}
		exp := &hone.Experiment{Name: "hb", Metric: "loss", Mode: hone.Min, Searcher: sr, Scheduler: sched, Seed: 7,
			MaxConcurrentTrials: rapid.IntRange(1, 32).Draw(t, "concurrency"),
			Failure:             hone.FailureConfig{MaxFailures: rapid.IntRange(0, 2).Draw(t, "max_failures")}}
		dir, err := os.MkdirTemp(scratch.Dir(), "hone-hb-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		st, _ := local.New(dir, local.NoSync())
		out, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Store: st, Log: io.Discard, Executor: sim.New(model)})
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		if len(out.Trials) != samples {
			t.Fatalf("%d trials, want %d", len(out.Trials), samples)
		}
		for _, tr := range out.Trials {
			if !tr.Status.Finished() {
				t.Fatalf("trial %s ended %s", tr.ID, tr.Status)
			}
			if tr.LastResult != nil && float64(tr.LastResult.TrainingIteration) > cfg.MaxT {
				t.Fatalf("trial %s trained to %d > max_t %v", tr.ID, tr.LastResult.TrainingIteration, cfg.MaxT)
			}
		}
	})
}

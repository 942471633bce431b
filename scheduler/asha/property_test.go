package asha_test

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/scratch"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/asha"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
	"pgregory.net/rapid"
)

// TestEveryTrialEnds is the no-deadlock property on the sim executor: for
// random max_t, η, brackets, samples, concurrency and injected failures,
// every experiment ends with every trial TERMINATED or ERROR, no trial runs
// past max_t, and the survivors of the top rung ran to max_t.
func TestEveryTrialEnds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		maxT := rapid.IntRange(1, 200).Draw(t, "max_t")
		cfg := asha.DefaultConfig()
		cfg.MaxT = float64(maxT)
		cfg.ReductionFactor = float64(rapid.IntRange(2, 5).Draw(t, "eta"))
		cfg.Brackets = rapid.IntRange(1, 3).Draw(t, "brackets")
		sched, err := asha.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		samples := rapid.IntRange(1, 60).Draw(t, "samples")
		sr, err := random.New(space.Space{"rate": space.Uniform(0.01, 0.5), "asymptote": space.Uniform(0, 1)}, samples, nil, 3)
		if err != nil {
			t.Fatal(err)
		}
		fm := &sim.FailingModel{Model: sim.Curve{Noise: 0.05, CheckpointEvery: 3}.New,
			Iteration: rapid.IntRange(1, maxT+1).Draw(t, "fail_at"), Times: rapid.IntRange(0, 2).Draw(t, "fail_times")}
		exp := &hone.Experiment{Name: "asha", Metric: "loss", Mode: hone.Min, Searcher: sr, Scheduler: sched, Seed: 5,
			MaxConcurrentTrials: rapid.IntRange(1, 32).Draw(t, "concurrency"),
			Failure:             hone.FailureConfig{MaxFailures: rapid.IntRange(0, 2).Draw(t, "max_failures")}}
		dir, err := os.MkdirTemp(scratch.Dir(), "hone-asha-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		st, _ := local.New(dir, local.NoSync())
		out, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Store: st, Log: io.Discard, Executor: sim.New(fm.New)})
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
			if tr.LastResult != nil && tr.LastResult.TrainingIteration > maxT {
				t.Fatalf("trial %s ran to %d > max_t %d", tr.ID, tr.LastResult.TrainingIteration, maxT)
			}
		}
	})
}

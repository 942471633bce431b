package runner_test

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
)

// simExperiment runs n sim trials of iters one-hour steps each, 8 at a time.
func simExperiment(tb testing.TB, dir string, n, iters int) *runner.Outcome {
	sr, err := random.New(space.Space{"rate": space.Uniform(0.01, 1), "step_seconds": 3600}, n, nil, 1)
	if err != nil {
		tb.Fatal(err)
	}
	exp := &hone.Experiment{Name: "sim", Metric: "loss", Searcher: sr, MaxConcurrentTrials: 8, Seed: 1}
	st, err := local.New(dir, local.NoSync())
	if err != nil {
		tb.Fatal(err)
	}
	out, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Store: st, Log: io.Discard,
		Executor: sim.New(sim.Curve{MaxIterations: iters}.New)})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestManySimTrials: thousands of trials of simulated hours run to the end
// (the time they take is measured by BenchmarkSimBookkeeping, not here).
func TestManySimTrials(t *testing.T) {
	out := simExperiment(t, filepath.Join(t.TempDir(), "many"), 2000, 5)
	if len(out.Trials) != 2000 {
		t.Fatalf("%d trials, want 2000", len(out.Trials))
	}
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusTerminated || tr.LastResult.TrainingIteration != 5 || tr.LastResult.TimeTotal != 5*3600 {
			t.Fatalf("trial %s: %s, iteration %d, %v s", tr.ID, tr.Status, tr.LastResult.TrainingIteration, tr.LastResult.TimeTotal)
		}
	}
}

// BenchmarkSimBookkeeping measures whole experiments of 10,000 sim trials ×
// 10 results through the controller, runner and journal, beside the sim
// executor driven alone (the baseline) in the same run.
func BenchmarkSimBookkeeping(b *testing.B) {
	const n, iters = 10000, 10
	var hone_, base time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		simExperiment(b, filepath.Join(b.TempDir(), "bench"), n, iters)
		hone_ += time.Since(start)

		start = time.Now()
		driveSimAlone(b, n, iters)
		base += time.Since(start)
	}
	trialsPerSec := float64(n*b.N) / hone_.Seconds()
	b.ReportMetric(trialsPerSec, "trials/s")
	b.ReportMetric(float64(n*iters*b.N)/hone_.Seconds(), "results/s")
	b.ReportMetric(float64(n*b.N)/base.Seconds(), "baseline-trials/s")
	b.ReportMetric(base.Seconds()/hone_.Seconds(), "ratio")
}

// driveSimAlone runs the same trials on the sim executor with the simplest
// possible loop: the cost of the executor itself.
func driveSimAlone(b *testing.B, n, iters int) {
	ex := sim.New(sim.Curve{MaxIterations: iters}.New)
	dir := b.TempDir()
	started, running := 0, 0
	startOne := func() {
		if err := ex.Start(hone.StartSpec{TrialID: string(rune('a'+started%26)) + time.Duration(started).String(), Config: hone.Config{"rate": 0.5}, Dir: dir}); err != nil {
			b.Fatal(err)
		}
		started++
		running++
	}
	for running < 8 && started < n {
		startOne()
	}
	for running > 0 {
		ev, err := ex.Next(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		switch ev.Kind {
		case hone.EventResult:
			if ev.Done {
				ex.Direct(ev.TrialID, hone.DirectStop)
			} else {
				ex.Direct(ev.TrialID, hone.DirectContinue)
			}
		case hone.EventExited:
			running--
			if started < n {
				startOne()
			}
		}
	}
}

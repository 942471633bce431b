package fifo_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/scratch"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/fifo"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
	"pgregory.net/rapid"
)

// checked is FIFO that pauses or stops trials at random and, at every
// choice, compares the controller's index (hone.OldestByStatus) with a scan
// of every trial in creation order.
type checked struct {
	fifo.Scheduler
	pause, stop float64
	choices     int
	mismatch    string
}

func (s *checked) OnResult(c hone.Control, _ *hone.Trial, _ *hone.Result) hone.Decision {
	switch x := c.Rand().Float64(); {
	case x < s.stop:
		return hone.Stop
	case x < s.stop+s.pause:
		return hone.Pause
	}
	return hone.Continue
}

func scan(c hone.Control, st hone.Status) *hone.Trial {
	for _, t := range c.Trials() {
		if t.Status == st {
			return t
		}
	}
	return nil
}

func (s *checked) ChooseTrialToRun(c hone.Control) *hone.Trial {
	q, ok := c.(hone.OldestByStatus)
	if !ok {
		s.mismatch = "the controller's Control does not implement hone.OldestByStatus"
		return s.Scheduler.ChooseTrialToRun(c)
	}
	s.choices++
	for _, st := range []hone.Status{hone.StatusPending, hone.StatusPaused, hone.StatusRunning} {
		want := scan(c, st)
		if st == hone.StatusRunning {
			want = nil // only PENDING and PAUSED are indexed
		}
		if got := q.Oldest(st); got != want && s.mismatch == "" {
			s.mismatch = fmt.Sprintf("choice %d: Oldest(%s) = %v, a scan finds %v", s.choices, st, got, want)
		}
	}
	return s.Scheduler.ChooseTrialToRun(c)
}

// TestOldestMatchesScan: over random experiments with pauses, early stops,
// failures and retries, the controller's oldest-by-status index always
// agrees with a scan of every trial, so FIFO's order is unchanged by it.
func TestOldestMatchesScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sched := &checked{pause: rapid.Float64Range(0, 0.6).Draw(t, "pause"), stop: rapid.Float64Range(0, 0.2).Draw(t, "stop")}
		samples := rapid.IntRange(1, 40).Draw(t, "samples")
		sr, err := random.New(space.Space{"rate": space.Uniform(0.05, 0.5)}, samples, nil, 3)
		if err != nil {
			t.Fatal(err)
		}
		var model sim.Model = sim.Curve{MaxIterations: 12, CheckpointEvery: 3}.New
		if failAt := rapid.IntRange(0, 12).Draw(t, "fail_at"); failAt > 0 {
			model = (&sim.FailingModel{Model: model, Iteration: failAt, Times: rapid.IntRange(1, 3).Draw(t, "fail_times")}).New
		}
		exp := &hone.Experiment{Name: "oldest", Metric: "loss", Searcher: sr, Scheduler: sched,
			Seed: rapid.Uint64().Draw(t, "seed"), MaxConcurrentTrials: rapid.IntRange(1, 8).Draw(t, "concurrency"),
			MaxPendingTrials: rapid.IntRange(1, 8).Draw(t, "pending"),
			Failure:          hone.FailureConfig{MaxFailures: rapid.IntRange(0, 2).Draw(t, "max_failures")}}
		dir, err := os.MkdirTemp(scratch.Dir(), "hone-fifo-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		st, err := local.New(dir, local.NoSync())
		if err != nil {
			t.Fatal(err)
		}
		out, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Store: st, Log: io.Discard, Executor: sim.New(model)})
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		if sched.mismatch != "" {
			t.Fatal(sched.mismatch)
		}
		if sched.choices == 0 || len(out.Trials) != samples {
			t.Fatalf("%d choices, %d trials of %d", sched.choices, len(out.Trials), samples)
		}
		for _, tr := range out.Trials {
			if !tr.Status.Finished() {
				t.Fatalf("trial %s ended %s", tr.ID, tr.Status)
			}
		}
	})
}

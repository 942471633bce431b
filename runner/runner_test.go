package runner_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/callback"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/trial"
)

// quadratic is a function-style trainable: loss falls towards (x-3)^2 and
// it checkpoints its step every second iteration.
func quadratic(ctx context.Context, s trial.Session) error {
	x, _ := hone.Number(s.Config()["x"])
	step := 0
	if d := s.Checkpoint(); d != "" {
		b, err := os.ReadFile(filepath.Join(d, "step"))
		if err != nil {
			return err
		}
		fmt.Sscan(string(b), &step)
	}
	for step < 6 {
		step++
		loss := (x-3)*(x-3) + 1/float64(step)
		var opts []trial.ReportOption
		if step%2 == 0 {
			d, err := s.StagingDir()
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(d, "step"), []byte(fmt.Sprint(step)), 0o644); err != nil {
				return err
			}
			opts = append(opts, trial.WithCheckpoint(d))
		}
		if err := s.Report(trial.Metrics{"loss": loss}, opts...); err != nil {
			return err
		}
	}
	return nil
}

func experiment(t *testing.T, dir string, samples int) *hone.Experiment {
	t.Helper()
	sr, err := random.New(space.Space{"x": space.Uniform(0, 6)}, samples, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	return &hone.Experiment{
		Name: "e2e", Metric: "loss", Mode: hone.Min, Searcher: sr, MaxConcurrentTrials: 2, Seed: 3,
		Checkpoint: hone.CheckpointConfig{NumToKeep: 1},
		Callbacks:  []hone.Callback{callback.NewTrialFiles(dir)},
	}
}

func TestRunEndToEnd(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "e2e")
	out, err := runner.Run(context.Background(), experiment(t, dir, 4), runner.Options{
		Dir: dir, Executor: inproc.NewFunc(quadratic), Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Trials) != 4 {
		t.Fatalf("%d trials, want 4", len(out.Trials))
	}
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s: %s", tr.ID, tr.Status)
		}
		td := filepath.Join(dir, tr.Dir)
		for _, f := range []string{"params.json", "result.json", "progress.csv"} {
			if _, err := os.Stat(filepath.Join(td, f)); err != nil {
				t.Errorf("trial %s: %v", tr.ID, err)
			}
		}
		// num_to_keep=1: only the latest checkpoint (iteration 6) is left.
		cps, _ := filepath.Glob(filepath.Join(td, "checkpoint_*"))
		if len(cps) != 1 || filepath.Base(cps[0]) != "checkpoint_000002" {
			t.Errorf("trial %s: checkpoints %v, want only checkpoint_000002", tr.ID, cps)
		}
	}
	res, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	best, v, err := res.Best(hone.Objective{Metric: "loss", Mode: hone.Min}, results.ScopeLast)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Trials {
		x, _ := hone.Number(tr.Config["x"])
		bx, _ := hone.Number(best.Config["x"])
		if (x-3)*(x-3) < (bx-3)*(bx-3) {
			t.Errorf("best trial %s (x=%v, loss %v) is not the closest to 3: %s has x=%v", best.ID, bx, v, tr.ID, x)
		}
		rows, _ := tr.Results()
		if len(rows) != 6 {
			t.Errorf("trial %s: %d results, want 6", tr.ID, len(rows))
		}
	}
	if _, _, err := res.Best(hone.Objective{Metric: "accuracy", Mode: hone.Max}, results.ScopeLast); err == nil || !strings.Contains(err.Error(), `metric "accuracy" is in no result`) {
		t.Errorf("best by a missing metric: %v", err)
	}
	if _, err := runner.Run(context.Background(), experiment(t, dir, 4), runner.Options{Dir: dir, Executor: inproc.NewFunc(quadratic), Log: io.Discard}); err == nil {
		t.Error("a second Run in the same directory succeeded")
	}
}

// TestRetryFromCheckpoint: a trial that fails after its second checkpoint
// restarts from it (docs/SEMANTICS.md §3) and finishes.
func TestRetryFromCheckpoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "retry")
	fn := func(ctx context.Context, s trial.Session) error {
		if s.Iteration() == 0 && s.Checkpoint() == "" {
			// first attempt: run to iteration 4 (checkpoint at 4), then fail
			for i := 1; i <= 4; i++ {
				var opts []trial.ReportOption
				if i == 4 {
					d, _ := s.StagingDir()
					os.WriteFile(filepath.Join(d, "step"), []byte("4"), 0o644)
					opts = append(opts, trial.WithCheckpoint(d))
				}
				if err := s.Report(trial.Metrics{"loss": 1.0}, opts...); err != nil {
					return err
				}
			}
			return errors.New("simulated crash")
		}
		if s.Iteration() != 4 {
			return fmt.Errorf("restarted at iteration %d, want 4", s.Iteration())
		}
		return s.Report(trial.Metrics{"loss": 0.5}, trial.Done())
	}
	exp := experiment(t, dir, 2)
	exp.Failure.MaxFailures = 1
	out, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Executor: inproc.NewFunc(fn), Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusTerminated || tr.Failures != 1 || tr.LastResult.TrainingIteration != 5 {
			t.Errorf("trial %s: status %s failures %d last iteration %d; want TERMINATED, 1, 5",
				tr.ID, tr.Status, tr.Failures, tr.LastResult.TrainingIteration)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, out.Trials[0].Dir, "error.txt"))
	if err != nil || !strings.Contains(string(b), "simulated crash") {
		t.Errorf("error.txt: %q, %v", b, err)
	}
}

// TestInterruptAndResume: cancelling the context stops gracefully; Resume
// finishes without redoing finished trials.
func TestInterruptAndResume(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "int")
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	starts := map[string]int{}
	var seen int
	fn := func(c context.Context, s trial.Session) error {
		mu.Lock()
		starts[s.TrialID()]++
		mu.Unlock()
		return quadratic(c, &countingSession{Session: s, onReport: func() {
			mu.Lock()
			defer mu.Unlock()
			seen++
			if seen == 15 {
				cancel()
			}
		}})
	}
	out, err := runner.Run(ctx, experiment(t, dir, 6), runner.Options{Dir: dir, Executor: inproc.NewFunc(fn), Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Interrupted {
		t.Fatal("not interrupted")
	}
	finished := map[string]bool{}
	for _, tr := range out.Trials {
		if tr.Status == hone.StatusTerminated {
			finished[tr.ID] = true
		}
	}
	if len(finished) == 0 || len(finished) == 6 {
		t.Fatalf("%d finished trials before the interrupt; the test needs some but not all", len(finished))
	}
	mu.Lock()
	before := map[string]int{}
	for id, n := range starts {
		before[id] = n
	}
	mu.Unlock()
	out, err = runner.Resume(context.Background(), experiment(t, dir, 6), runner.Options{Dir: dir, Executor: inproc.NewFunc(fn), Log: io.Discard},
		hone.ResumeFlags{Unfinished: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Trials) != 6 {
		t.Fatalf("%d trials after resume, want 6", len(out.Trials))
	}
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s: %s after resume", tr.ID, tr.Status)
		}
		mu.Lock()
		again := starts[tr.ID] != before[tr.ID]
		mu.Unlock()
		if finished[tr.ID] && again {
			t.Errorf("finished trial %s was started again on resume", tr.ID)
		}
		if tr.LastResult.TrainingIteration != 6 {
			t.Errorf("trial %s ended at iteration %d, want 6", tr.ID, tr.LastResult.TrainingIteration)
		}
	}
}

type countingSession struct {
	trial.Session
	onReport func()
}

func (c *countingSession) Report(m trial.Metrics, opts ...trial.ReportOption) error {
	c.onReport()
	return c.Session.Report(m, opts...)
}

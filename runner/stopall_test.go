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
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/callback"
	"github.com/hone-tune/hone/controller"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/trial"
)

const stopIters = 6

// gatedTrain trains to stopIters iterations, checkpointing every one. With
// fail set, the trial with x = 0 fails at iteration 2; the others report
// iteration 3 only once gate is closed, so they are still mid-training
// when the failure stops the experiment.
func gatedTrain(fail bool, gate <-chan struct{}) trial.Func {
	return func(ctx context.Context, s trial.Session) error {
		x, _ := hone.Number(s.Config()["x"])
		step := 0
		if d := s.Checkpoint(); d != "" {
			b, err := os.ReadFile(filepath.Join(d, "step"))
			if err != nil {
				return err
			}
			fmt.Sscan(string(b), &step)
		}
		for step < stopIters {
			step++
			if fail && x == 0 && step == 2 {
				return errors.New("boom at iteration 2")
			}
			if step == 3 {
				select {
				case <-gate:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			d, err := s.StagingDir()
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(d, "step"), []byte(fmt.Sprint(step)), 0o644); err != nil {
				return err
			}
			if err := s.Report(trial.Metrics{"loss": x + 1/float64(step)}, trial.WithCheckpoint(d)); err != nil {
				return err
			}
		}
		return nil
	}
}

// openGate closes its channel when the first trial error reaches the
// callbacks, that is, after the controller acted on it.
type openGate struct {
	hone.NopCallback
	once sync.Once
	ch   chan struct{}
}

func (g *openGate) OnTrialError(*hone.Trial, error) { g.once.Do(func() { close(g.ch) }) }

func failFastExperiment(t *testing.T, dir string, gate *openGate) *hone.Experiment {
	t.Helper()
	sr, err := random.New(space.Space{"x": space.GridSearch(0.0, 1.0, 2.0, 3.0)}, 1, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	return &hone.Experiment{
		Name: "ff", Metric: "loss", Mode: hone.Min, Searcher: sr, MaxConcurrentTrials: 3, Seed: 3,
		Failure:   hone.FailureConfig{FailFast: true, MaxFailures: 2},
		Callbacks: []hone.Callback{callback.NewTrialFiles(dir), gate},
	}
}

// rowsOf returns the training_iteration of each result.json row of every
// trial, by trial id.
func rowsOf(t *testing.T, dir string) map[string][]int {
	t.Helper()
	res, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]int{}
	for _, tr := range res.Trials {
		rows, err := tr.Results()
		if err != nil {
			t.Fatal(err)
		}
		its := []int{}
		for _, r := range rows {
			n, _ := hone.Number(r[hone.FieldTrainingIteration])
			its = append(its, int(n))
		}
		out[tr.ID] = its
	}
	return out
}

func wantRows(t *testing.T, rows map[string][]int, id string, n int) {
	t.Helper()
	got := rows[id]
	ok := len(got) == n
	for i := 0; ok && i < n; i++ {
		ok = got[i] == i+1
	}
	if !ok {
		t.Errorf("trial %s: result rows at iterations %v, want 1..%d once each", id, got, n)
	}
}

// TestFailFastLeavesOthersResumable pins docs/SEMANTICS.md §3's fail_fast with real
// in-process trials: the first failure stops the experiment, the trials
// still training are saved and stopped but not TERMINATED, a plain resume
// continues them to their end and ends without error, the failed trial
// stays ERROR until a resume that retries errored trials.
func TestFailFastLeavesOthersResumable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ff")
	gate := &openGate{ch: make(chan struct{})}
	out, err := runner.Run(context.Background(), failFastExperiment(t, dir, gate), runner.Options{
		Dir: dir, Executor: inproc.NewFunc(gatedTrain(true, gate.ch)), Log: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "fail_fast") || !strings.Contains(err.Error(), "boom at iteration 2") {
		t.Fatalf("first run: err = %v, want the fail_fast failure", err)
	}
	var failed string
	for _, tr := range out.Trials {
		x, _ := hone.Number(tr.Config["x"])
		switch {
		case x == 0:
			failed = tr.ID
			if tr.Status != hone.StatusError {
				t.Errorf("failing trial %s: %s, want ERROR", tr.ID, tr.Status)
			}
		case tr.Status == hone.StatusTerminated || tr.Status == hone.StatusError:
			t.Errorf("trial %s (x=%v) is %s after fail_fast, at iteration %d; want it resumable", tr.ID, x, tr.Status, iterOf(tr))
		case tr.Index == 3 && tr.Status != hone.StatusPending:
			t.Errorf("trial %s (index 3) is %s, want PENDING (never started)", tr.ID, tr.Status)
		}
	}
	if failed == "" {
		t.Fatal("no trial with x = 0")
	}

	// A plain resume: nothing fails any more.
	gate2 := &openGate{ch: make(chan struct{})}
	close(gate2.ch)
	gate2.once.Do(func() {})
	out, err = runner.Resume(context.Background(), failFastExperiment(t, dir, gate2), runner.Options{
		Dir: dir, Executor: inproc.NewFunc(gatedTrain(false, gate2.ch)), Log: io.Discard}, hone.ResumeFlags{Unfinished: true})
	if err != nil {
		t.Fatalf("resume: %v (nothing failed in it)", err)
	}
	rows := rowsOf(t, dir)
	for _, tr := range out.Trials {
		if tr.ID == failed {
			if tr.Status != hone.StatusError {
				t.Errorf("failed trial after a plain resume: %s, want ERROR", tr.Status)
			}
			wantRows(t, rows, tr.ID, 1)
			continue
		}
		if tr.Status != hone.StatusTerminated || iterOf(tr) != stopIters {
			t.Errorf("trial %s after resume: %s at iteration %d, want TERMINATED at %d", tr.ID, tr.Status, iterOf(tr), stopIters)
		}
		wantRows(t, rows, tr.ID, stopIters)
	}

	// Retrying errored trials continues the failed one from its checkpoint.
	out, err = runner.Resume(context.Background(), failFastExperiment(t, dir, gate2), runner.Options{
		Dir: dir, Executor: inproc.NewFunc(gatedTrain(false, gate2.ch)), Log: io.Discard},
		hone.ResumeFlags{Unfinished: true, Errored: true})
	if err != nil {
		t.Fatalf("resume with errored trials: %v", err)
	}
	rows = rowsOf(t, dir)
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusTerminated || iterOf(tr) != stopIters {
			t.Errorf("trial %s after resuming errored trials: %s at iteration %d", tr.ID, tr.Status, iterOf(tr))
		}
		wantRows(t, rows, tr.ID, stopIters)
	}
}

func iterOf(tr *hone.Trial) int {
	if tr.LastResult == nil {
		return 0
	}
	return tr.LastResult.TrainingIteration
}

// TestTimeBudgetLeavesTrialsResumable: a run stopped by its time budget
// (sim executor, virtual time) leaves the trials it stopped resumable, not
// TERMINATED short of their end; the resume gets a new budget and runs
// them to their end, every result row once.
func TestTimeBudgetLeavesTrialsResumable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "budget")
	const iters = 15 // 15 s of virtual training per trial
	exp := func() *hone.Experiment {
		sr, err := random.New(space.Space{"x": space.GridSearch(1.0, 2.0)}, 1, nil, 4)
		if err != nil {
			t.Fatal(err)
		}
		return &hone.Experiment{
			Name: "budget", Metric: "loss", Searcher: sr, MaxConcurrentTrials: 2, Seed: 4,
			TimeBudget: 10 * time.Second, Callbacks: []hone.Callback{callback.NewTrialFiles(dir)},
		}
	}
	ex := func() hone.Executor { return sim.New(sim.Curve{MaxIterations: iters, CheckpointEvery: 1}.New) }
	out, err := runner.Run(context.Background(), exp(), runner.Options{Dir: dir, Executor: ex(), Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if out.Interrupted {
		t.Error("a budget stop is reported as an interrupt")
	}
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusRunning || iterOf(tr) >= iters {
			t.Errorf("trial %s after the budget: %s at iteration %d, want RUNNING short of %d", tr.ID, tr.Status, iterOf(tr), iters)
		}
	}
	out, err = runner.Resume(context.Background(), exp(), runner.Options{Dir: dir, Executor: ex(), Log: io.Discard},
		hone.ResumeFlags{Unfinished: true})
	if err != nil {
		t.Fatal(err)
	}
	rows := rowsOf(t, dir)
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusTerminated || iterOf(tr) != iters {
			t.Errorf("trial %s after resume: %s at iteration %d, want TERMINATED at %d", tr.ID, tr.Status, iterOf(tr), iters)
		}
		wantRows(t, rows, tr.ID, iters)
	}
}

// TestPendingBoundRandomEndless: random search with num_samples -1 keeps
// at most AutoPending(slots) trials PENDING at any moment of a run that a
// time budget ends (read back from the journal's status records).
func TestPendingBoundRandomEndless(t *testing.T) {
	for _, slots := range []int{1, 4, 20} {
		t.Run(fmt.Sprint(slots), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "pending")
			sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, -1, nil, 5)
			if err != nil {
				t.Fatal(err)
			}
			exp := &hone.Experiment{Name: "pending", Metric: "loss", Searcher: sr, Seed: 5, TimeBudget: time.Minute}
			pool := hone.Resources{CPU: float64(slots)}
			bound := controller.AutoPending(controller.Slots(exp, pool))
			if want := max(16, (11*slots+9)/10); bound != want {
				t.Fatalf("bound %d, want %d", bound, want)
			}
			_, err = runner.Run(context.Background(), exp, runner.Options{Dir: dir, Pool: pool, Log: io.Discard,
				Executor: sim.New(sim.Curve{MaxIterations: 3}.New)})
			if err != nil {
				t.Fatal(err)
			}
			j, err := journal.Read(filepath.Join(dir, journal.FileName))
			if err != nil {
				t.Fatal(err)
			}
			status := map[string]hone.Status{}
			pending, most, trials := 0, 0, 0
			for _, l := range j.Lines {
				if l.Rec == nil || l.Rec.Op != "status" {
					continue
				}
				if status[l.Rec.Trial] == "" {
					trials++
				}
				if status[l.Rec.Trial] == hone.StatusPending {
					pending--
				}
				if l.Rec.Status == hone.StatusPending {
					pending++
				}
				status[l.Rec.Trial] = l.Rec.Status
				most = max(most, pending)
			}
			if most > bound {
				t.Errorf("%d trials PENDING at once, bound %d", most, bound)
			}
			if most < bound || trials <= bound+slots {
				t.Errorf("the run never reached the bound (%d pending at most of %d trials): the test proves nothing", most, trials)
			}
		})
	}
}

// steppingClock stands still until start is called, then advances by step
// on every reading: time passes only while a trial hangs, as the runner
// ticks, so the healthy iterations before it never come near a limit.
type steppingClock struct {
	mu      sync.Mutex
	now     time.Time
	step    time.Duration
	running bool
}

func (c *steppingClock) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.running = true
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running {
		c.now = c.now.Add(c.step)
	}
	return c.now
}

// TestTrialLimits pins trial_timeout and report_timeout with in-process
// trials that hang (until told to stop) and an injected clock: the trial
// is stopped, the failure is retried from its checkpoint, and once its
// retries are used it is ERROR with a message naming the limit, which is in
// its error.txt.
func TestTrialLimits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		set    func(*hone.Experiment)
		hangAt int // the iteration that never reports
		want   string
	}{
		{"trial_timeout", func(e *hone.Experiment) { e.TrialTimeout = 5 * time.Minute }, 3, "trial exceeded trial_timeout of 5m0s"},
		{"report_timeout", func(e *hone.Experiment) { e.ReportTimeout = 30 * time.Second }, 3, "no report for 30s (report_timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), tc.name)
			var mu sync.Mutex
			var restores []string // the checkpoint each run of the trial restored from
			clock := &steppingClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), step: time.Second}
			hang := func(ctx context.Context, s trial.Session) error {
				mu.Lock()
				restores = append(restores, filepath.Base(s.Checkpoint()))
				mu.Unlock()
				for step := s.Iteration() + 1; ; step++ {
					if step == tc.hangAt {
						clock.start()
						<-ctx.Done() // hung until hone stops it
						return ctx.Err()
					}
					d, err := s.StagingDir()
					if err != nil {
						return err
					}
					if err := s.Report(trial.Metrics{"loss": 1 / float64(step)}, trial.WithCheckpoint(d)); err != nil {
						return err
					}
				}
			}
			sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, 1, nil, 6)
			if err != nil {
				t.Fatal(err)
			}
			exp := &hone.Experiment{Name: tc.name, Metric: "loss", Searcher: sr, Seed: 6,
				Failure: hone.FailureConfig{MaxFailures: 1}, Callbacks: []hone.Callback{callback.NewTrialFiles(dir)}}
			tc.set(exp)
			out, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Log: io.Discard, Tick: time.Millisecond,
				Executor: inproc.NewFunc(hang, inproc.WithClock(clock))})
			if err != nil {
				t.Fatal(err)
			}
			tr := out.Trials[0]
			if tr.Status != hone.StatusError || tr.Failures != 2 || !strings.Contains(tr.Error, tc.want) {
				t.Fatalf("trial: %s failures=%d error %q, want ERROR after 2 failures with %q", tr.Status, tr.Failures, tr.Error, tc.want)
			}
			mu.Lock()
			got := append([]string(nil), restores...)
			mu.Unlock()
			if len(got) != 2 || got[0] != "." || got[1] != hone.CheckpointDirName(1) {
				t.Errorf("runs restored from %v, want scratch then %s (the retry from the checkpoint)", got, hone.CheckpointDirName(1))
			}
			b, err := os.ReadFile(filepath.Join(dir, tr.Dir, callback.ErrorFile))
			if err != nil || strings.Count(string(b), tc.want) != 2 {
				t.Errorf("error.txt (%v):\n%s\nwant %q twice", err, b, tc.want)
			}
		})
	}
}

package runner_test

import (
	"context"
	"io"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/fifo"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/stopper"
	"github.com/hone-tune/hone/store/local"
	"github.com/hone-tune/hone/trial"
)

// countingSaves is the counter trainable, counting its Save calls.
type countingSaves struct {
	counter
	saves *atomic.Int64
}

func (c *countingSaves) Save(dir string) error {
	c.saves.Add(1)
	return c.counter.Save(dir)
}

// saveThrice asks for a save three times on every other result, and counts
// the saves that resolve to a checkpoint (hone.SaveListener).
type saveThrice struct {
	fifo.Scheduler
	asked    int
	distinct map[*hone.SaveFuture]bool
	resolved int
	mismatch bool
}

func (s *saveThrice) OnResult(c hone.Control, t *hone.Trial, r *hone.Result) hone.Decision {
	if r.TrainingIteration%2 == 1 {
		return hone.Continue
	}
	s.asked++
	f := c.ScheduleSave(t)
	s.distinct[f] = true
	for range 2 {
		if g := c.ScheduleSave(t); g != f {
			s.mismatch = true
		}
	}
	if cp, err := f.Result(); f.Done() && cp != nil && err == nil {
		s.resolved++ // answered at once: no OnTrialSave follows
	}
	return hone.Continue
}

func (s *saveThrice) OnTrialSave(_ hone.Control, _ *hone.Trial, cp *hone.Checkpoint, err error) {
	if cp != nil && err == nil {
		s.resolved++
	}
}

// TestSaveJoinsInFlight: a save asked for while one is in flight joins
// it, counted at the trainable: three ScheduleSave calls per decision give
// one future and one Save call, end to end through the runner and a real
// executor.
func TestSaveJoinsInFlight(t *testing.T) {
	const trials, steps = 3, 20
	var saves atomic.Int64
	sched := &saveThrice{distinct: map[*hone.SaveFuture]bool{}}
	sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, trials, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "join")
	st, err := local.New(dir, local.NoSync())
	if err != nil {
		t.Fatal(err)
	}
	exp := &hone.Experiment{Name: "join", Metric: "loss", Searcher: sr, Scheduler: sched, Seed: 1, MaxConcurrentTrials: 2,
		Stoppers: []hone.Stopper{stopper.MaxIterations(steps)}}
	if _, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Store: st, Log: io.Discard,
		Executor: inproc.NewClass(func() trial.Trainable { return &countingSaves{saves: &saves} })}); err != nil {
		t.Fatal(err)
	}
	// Even iterations ask, except the last: the stopper ends the trial on
	// that result before the scheduler sees it.
	want := trials * (steps/2 - 1)
	if sched.mismatch {
		t.Error("a second ScheduleSave during a save in flight returned another future")
	}
	if sched.asked != want || len(sched.distinct) != want || sched.resolved != want {
		t.Errorf("%d decisions asked for saves, %d futures, %d resolved; want %d of each", sched.asked, len(sched.distinct), sched.resolved, want)
	}
	if n := saves.Load(); n != int64(want) {
		t.Errorf("the trainables saved %d times for %d decisions of three ScheduleSave calls each", n, want)
	}
}

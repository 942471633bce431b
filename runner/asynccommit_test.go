package runner_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/fifo"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/stopper"
	"github.com/hone-tune/hone/store/local"
	"github.com/hone-tune/hone/trial"
)

// checkpointing is the counter trainable checkpointing every result.
type checkpointing struct{ counter }

func (c *checkpointing) Step(ctx context.Context) (trial.Metrics, error) {
	m, err := c.counter.Step(ctx)
	m["should_checkpoint"] = true
	return m, err
}

// stallingStore injects a slow commit: the first commit of the first
// trial to commit blocks until release is closed; with fail, every commit
// of that trial fails instead.
type stallingStore struct {
	hone.Store
	fail    bool
	release chan struct{}
	// blocking, if set, is called once the stalled commit blocks.
	blocking func()

	mu        sync.Mutex
	stalled   string // the trial directory whose commit stalls or fails
	done      bool   // the stalled commit went through
	isBlocked bool   // the stalled commit is blocking
}

func (s *stallingStore) Commit(ctx context.Context, staged, dest string) error {
	dir := path.Dir(dest)
	s.mu.Lock()
	if s.stalled == "" {
		s.stalled = dir
	}
	mine, first := s.stalled == dir, !s.done
	if mine {
		s.done = true
	}
	s.mu.Unlock()
	if mine && s.fail {
		return errors.New("injected commit failure")
	}
	if mine && first {
		// Fail safe against a runner that commits on its own goroutine:
		// it could never see the other trial finish, so this would hang.
		t := time.NewTimer(time.Minute)
		defer t.Stop()
		s.mu.Lock()
		s.isBlocked = true
		s.mu.Unlock()
		if s.blocking != nil {
			s.blocking()
		}
		select {
		case <-s.release:
		case <-t.C:
			return errors.New("released by the fail-safe: other trials were not stepped while this commit was blocked")
		}
	}
	return s.Store.Commit(ctx, staged, dest)
}

func (s *stallingStore) blocked() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.isBlocked
}

func (s *stallingStore) stalledDir() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stalled
}

// eventLog records, per trial directory, what the callbacks saw, in order,
// and releases the store once a trial other than the stalled one
// completed.
type eventLog struct {
	hone.NopCallback
	st *stallingStore

	once       sync.Once
	seen       map[string][]string
	stalledSaw int // results of the stalled trial seen before the release
}

func (l *eventLog) OnTrialResult(t *hone.Trial, r *hone.Result) {
	l.seen[t.Dir] = append(l.seen[t.Dir], "result")
}

func (l *eventLog) OnTrialComplete(t *hone.Trial) {
	l.seen[t.Dir] = append(l.seen[t.Dir], "complete")
	if t.Dir != l.st.stalledDir() {
		l.once.Do(func() {
			l.stalledSaw = len(l.seen[l.st.stalledDir()])
			close(l.st.release)
		})
	}
}

func (l *eventLog) OnTrialError(t *hone.Trial, err error) {
	l.seen[t.Dir] = append(l.seen[t.Dir], "error: "+err.Error())
}

func runStalling(t *testing.T, st *stallingStore, steps int) ([]*hone.Trial, *eventLog) {
	t.Helper()
	sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, 2, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "stall")
	ls, err := local.New(dir, local.NoSync())
	if err != nil {
		t.Fatal(err)
	}
	st.Store = ls
	log := &eventLog{st: st, seen: map[string][]string{}}
	exp := &hone.Experiment{Name: "stall", Metric: "loss", Searcher: sr, Scheduler: &fifo.Scheduler{}, Seed: 1, MaxConcurrentTrials: 2,
		Stoppers: []hone.Stopper{stopper.MaxIterations(steps)}, Callbacks: []hone.Callback{log}}
	out, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Store: st, Log: io.Discard,
		Executor: inproc.NewClass(func() trial.Trainable { return &checkpointing{} })})
	if err != nil {
		t.Fatal(err)
	}
	return out.Trials, log
}

// TestSlowCommitDoesNotStallOtherTrials: while one trial's checkpoint
// commit is blocked, the other trial's results (and their commits) are
// stepped, journaled and notified to the end; the blocked trial's own
// results wait, then arrive in order, with its completion last.
func TestSlowCommitDoesNotStallOtherTrials(t *testing.T) {
	const steps = 5
	st := &stallingStore{release: make(chan struct{})}
	trials, log := runStalling(t, st, steps)
	if log.stalledSaw != 0 {
		t.Errorf("the stalled trial had %d events stepped before its first checkpoint was committed", log.stalledSaw)
	}
	want := strings.Repeat("result ", steps) + "complete"
	for _, tr := range trials {
		if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s ended %s (%s), want %s", tr.ID, tr.Status, tr.Error, hone.StatusTerminated)
		}
		if got := strings.Join(log.seen[tr.Dir], " "); got != want {
			t.Errorf("trial %s: callbacks saw %q, want %q", tr.ID, got, want)
		}
		if tr.Checkpoint == nil || tr.Checkpoint.Index != steps-1 {
			t.Errorf("trial %s: latest checkpoint %+v, want index %d", tr.ID, tr.Checkpoint, steps-1)
		}
	}
}

// TestCommitErrorOffLoopFailsTrial: a commit that fails on the pool fails
// its trial as a commit on the runner's goroutine did; the other trial
// runs to its end.
func TestCommitErrorOffLoopFailsTrial(t *testing.T) {
	st := &stallingStore{fail: true, release: make(chan struct{})}
	trials, _ := runStalling(t, st, 3)
	var failed, ok int
	for _, tr := range trials {
		switch {
		case tr.Dir == st.stalledDir():
			if tr.Status != hone.StatusError || !strings.Contains(tr.Error, "commit checkpoint: injected commit failure") {
				t.Errorf("trial %s with failing commits ended %s (%q), want %s with the commit error", tr.ID, tr.Status, tr.Error, hone.StatusError)
			}
			failed++
		case tr.Status == hone.StatusTerminated:
			ok++
		default:
			t.Errorf("trial %s ended %s (%s)", tr.ID, tr.Status, tr.Error)
		}
	}
	if failed != 1 || ok != 1 {
		t.Errorf("%d trials failed and %d terminated, want 1 and 1", failed, ok)
	}
}

// watchingExecutor releases the stalled commit once the executor hands the
// runner a later event of the stalled trial.
type watchingExecutor struct {
	hone.Executor
	st   *stallingStore
	dirs map[string]string // trial id → base name of its directory
	once sync.Once
}

func (w *watchingExecutor) Start(spec hone.StartSpec) error {
	w.dirs[spec.TrialID] = filepath.Base(spec.Dir)
	return w.Executor.Start(spec)
}

func (w *watchingExecutor) Next(ctx context.Context) (hone.Event, error) {
	ev, err := w.Executor.Next(ctx)
	if err == nil && w.st.blocked() && w.dirs[ev.TrialID] == path.Base(w.st.stalledDir()) {
		w.once.Do(func() { close(w.st.release) })
	}
	return ev, err
}

// failStalled is a fallible callback that fails the stalled trial (its
// own error, as a callback's per-trial failure) on the first result of
// another trial while the stalled commit blocks.
type failStalled struct {
	hone.NopCallback
	st    *stallingStore
	exec  *watchingExecutor
	fired bool
	errs  []error
}

func (f *failStalled) OnTrialResult(t *hone.Trial, r *hone.Result) {
	stalled := path.Base(f.st.stalledDir())
	if f.fired || !f.st.blocked() || path.Base(t.Dir) == stalled {
		return
	}
	for id, d := range f.exec.dirs {
		if d == stalled {
			f.fired = true
			f.errs = append(f.errs, &hone.TrialError{TrialID: id, Err: errors.New("injected callback failure")})
		}
	}
}

func (f *failStalled) TakeErrors() []error {
	errs := f.errs
	f.errs = nil
	return errs
}

// TestLaterEventsWaitForCommit: a trial's events that come while its
// checkpoint is being committed (here its exit, after it was failed and
// told to stop) are stepped after the event carrying the checkpoint; the
// checkpoint of that event, which the stopped trial's controller ignores,
// is deleted, as an executor deletes the staged checkpoints of the events
// it drops for a stopped trial.
func TestLaterEventsWaitForCommit(t *testing.T) {
	sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, 2, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "wait")
	ls, err := local.New(dir, local.NoSync())
	if err != nil {
		t.Fatal(err)
	}
	st := &stallingStore{Store: ls, release: make(chan struct{})}
	exec := &watchingExecutor{Executor: inproc.NewClass(func() trial.Trainable { return &checkpointing{} }), st: st, dirs: map[string]string{}}
	fail := &failStalled{st: st, exec: exec}
	exp := &hone.Experiment{Name: "wait", Metric: "loss", Searcher: sr, Scheduler: &fifo.Scheduler{}, Seed: 1, MaxConcurrentTrials: 2,
		Stoppers: []hone.Stopper{stopper.MaxIterations(5)}, Callbacks: []hone.Callback{fail}}
	out, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Store: st, Log: io.Discard, Executor: exec})
	if err != nil {
		t.Fatal(err)
	}
	if !fail.fired {
		t.Fatal("the other trial reported nothing while the stalled commit blocked")
	}
	var stalled *hone.Trial
	for _, tr := range out.Trials {
		if tr.Dir == st.stalledDir() {
			stalled = tr
		} else if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s ended %s (%s), want %s", tr.ID, tr.Status, tr.Error, hone.StatusTerminated)
		}
	}
	if stalled == nil || stalled.Status != hone.StatusError || !strings.Contains(stalled.Error, "injected callback failure") {
		t.Fatalf("the stalled trial: %+v; want it failed by the callback", stalled)
	}
	j, err := journal.Read(filepath.Join(dir, journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, l := range j.Lines {
		if l.Event == nil || l.Event.TrialID != stalled.ID {
			continue
		}
		switch k := l.Event.Kind; k {
		case hone.EventResult, hone.EventSaved, hone.EventExited:
			s := string(k)
			if l.Event.Checkpoint != nil {
				s += "+checkpoint"
			}
			kinds = append(kinds, s)
		}
	}
	if got := strings.Join(kinds, " "); got != "result+checkpoint exited" {
		t.Errorf("the stalled trial's inputs in the journal: %q; want %q", got, "result+checkpoint exited")
	}
	if stalled.Checkpoint != nil {
		t.Errorf("the stalled trial registered checkpoint %+v after it was told to stop", stalled.Checkpoint)
	}
	if _, err := ls.LocalDir(context.Background(), path.Join(stalled.Dir, hone.CheckpointDirName(0))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the ignored checkpoint of the stalled trial: LocalDir says %v, want it deleted", err)
	}
}

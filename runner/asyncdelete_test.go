package runner_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/fifo"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/stopper"
	"github.com/hone-tune/hone/store/local"
	"github.com/hone-tune/hone/trial"
)

// ckdels returns the paths of the checkpoint deletions (ckdel records)
// the journal file at jp holds.
func ckdels(jp string) (map[string]bool, error) {
	j, err := journal.ReadPrefix(jp)
	if err != nil {
		return nil, err
	}
	paths := map[string]bool{}
	for _, l := range j.Lines {
		if l.Rec != nil && l.Rec.Op == "ckdel" {
			paths[l.Rec.Path] = true
		}
	}
	return paths, nil
}

// deleteWatcher is a store that checks every Delete against the journal:
// the journal file already holds the ckdel record of the path, and
// BeforeDelete was called for it. The first Delete blocks until release
// is closed (a slow object store), with a fail-safe for a runner that
// deletes on its own goroutine.
type deleteWatcher struct {
	hone.Store
	jp      string
	release chan struct{}
	// blockedCh, if set, is closed once the first Delete blocks.
	blockedCh chan struct{}
	fail      bool // every Delete fails (after the checks)

	mu        sync.Mutex
	blocked   bool // the first Delete is blocking now
	before    int  // BeforeDelete calls
	started   int
	finished  int
	deleted   []string
	errs      []string
	failsafe  bool
	keepAfter int // BeforeDelete fails from this call on (0: never)
}

func (w *deleteWatcher) errorf(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.errs = append(w.errs, fmt.Sprintf(format, args...))
}

func (w *deleteWatcher) BeforeDelete(ctx context.Context) error {
	w.mu.Lock()
	w.before++
	n := w.before
	w.mu.Unlock()
	paths, err := ckdels(w.jp)
	if err != nil {
		w.errorf("BeforeDelete: read journal: %v", err)
	} else if len(paths) < n {
		w.errorf("BeforeDelete call %d: the journal holds only %d ckdel records", n, len(paths))
	}
	if w.keepAfter > 0 && n >= w.keepAfter {
		return errors.New("journal not shipped")
	}
	return nil
}

func (w *deleteWatcher) Delete(ctx context.Context, p string) error {
	w.mu.Lock()
	w.started++
	first := w.started == 1
	if w.started > w.before {
		w.errs = append(w.errs, fmt.Sprintf("Delete(%s) without BeforeDelete (%d deletes, %d calls)", p, w.started, w.before))
	}
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.finished++
		w.mu.Unlock()
	}()
	paths, err := ckdels(w.jp)
	if err != nil {
		w.errorf("Delete(%s): read journal: %v", p, err)
	} else if !paths[p] {
		w.errorf("Delete(%s) ran before the journal file held its ckdel record", p)
	}
	if first && w.release != nil {
		w.mu.Lock()
		w.blocked = true
		w.mu.Unlock()
		if w.blockedCh != nil {
			close(w.blockedCh)
		}
		t := time.NewTimer(time.Minute)
		defer t.Stop()
		select {
		case <-w.release:
		case <-t.C:
			w.mu.Lock()
			w.failsafe = true
			w.mu.Unlock()
		}
		w.mu.Lock()
		w.blocked = false
		w.mu.Unlock()
	}
	if w.fail {
		return errors.New("injected delete failure")
	}
	err = w.Store.Delete(ctx, p)
	w.mu.Lock()
	w.deleted = append(w.deleted, p)
	w.mu.Unlock()
	return err
}

// releaseAfter closes the watcher's release once the runner has stepped
// n results while the first Delete blocks.
type releaseAfter struct {
	hone.NopCallback
	w     *deleteWatcher
	n     int
	while int // results stepped while the delete blocked
	once  sync.Once
}

func (r *releaseAfter) OnTrialResult(*hone.Trial, *hone.Result) {
	r.w.mu.Lock()
	blocked := r.w.blocked
	r.w.mu.Unlock()
	if !blocked {
		return
	}
	r.while++
	if r.while >= r.n {
		r.once.Do(func() { close(r.w.release) })
	}
}

// runDeleting runs two trials that checkpoint every step, keeping one
// checkpoint each, on w over a local store; logw receives the log.
func runDeleting(t *testing.T, w *deleteWatcher, steps int, cbs ...hone.Callback) (*runner.Outcome, string, *bytes.Buffer) {
	t.Helper()
	return runDeletingWith(t, w, steps, func() trial.Trainable { return &checkpointing{} }, cbs...)
}

// runDeletingWith is runDeleting with trainables from newTrainable.
func runDeletingWith(t *testing.T, w *deleteWatcher, steps int, newTrainable func() trial.Trainable, cbs ...hone.Callback) (*runner.Outcome, string, *bytes.Buffer) {
	t.Helper()
	sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, 2, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "del")
	ls, err := local.New(dir, local.NoSync())
	if err != nil {
		t.Fatal(err)
	}
	w.Store = ls
	w.jp = filepath.Join(dir, journal.FileName)
	var log bytes.Buffer
	exp := &hone.Experiment{Name: "del", Metric: "loss", Searcher: sr, Scheduler: &fifo.Scheduler{}, Seed: 1, MaxConcurrentTrials: 2,
		Checkpoint: hone.CheckpointConfig{NumToKeep: 1},
		Stoppers:   []hone.Stopper{stopper.MaxIterations(steps)}, Callbacks: cbs}
	out, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Store: w, Log: &syncWriter{w: &log},
		BeforeDelete: w.BeforeDelete,
		Executor:     inproc.NewClass(newTrainable)})
	if err != nil {
		t.Fatal(err)
	}
	return out, dir, &log
}

// syncWriter makes a writer safe for the pool's log lines in tests that
// read it afterwards.
type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// TestDeletesOffLoop: a checkpoint delete that blocks does not block the
// runner (results keep being stepped while it blocks); every delete runs
// after its ckdel record reached the journal file and after BeforeDelete
// saw that record there; and every delete the journal records has run by
// the time Run returns.
func TestDeletesOffLoop(t *testing.T) {
	const steps = 6
	w := &deleteWatcher{release: make(chan struct{}), blockedCh: make(chan struct{})}
	rel := &releaseAfter{w: w, n: 3}
	// Trials wait before their 4th step until the first delete blocks (a
	// delete issued at the latest when a trial's 2nd checkpoint is
	// registered), so results 4 to 6 of both are reported while it
	// blocks, however the goroutines are scheduled.
	gated := func() trial.Trainable { return &gatedCheckpointing{gate: w.blockedCh, at: 4} }
	out, dir, _ := runDeletingWith(t, w, steps, gated, rel)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failsafe {
		t.Fatalf("the blocked delete was released by the fail-safe: %d results were stepped while it blocked, want %d", rel.while, rel.n)
	}
	for _, e := range w.errs {
		t.Error(e)
	}
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s ended %s (%s)", tr.ID, tr.Status, tr.Error)
		}
	}
	paths, err := ckdels(filepath.Join(dir, journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2*(steps-1) {
		t.Errorf("the journal records %d deletes, want %d", len(paths), 2*(steps-1))
	}
	if w.started != len(paths) || w.finished != w.started || len(w.deleted) != len(paths) {
		t.Errorf("when Run returned: %d deletes started, %d finished, %d done, want all %d the journal records",
			w.started, w.finished, len(w.deleted), len(paths))
	}
	for p := range paths {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err == nil {
			t.Errorf("checkpoint %s survives its delete", p)
		}
	}
	for _, tr := range out.Trials {
		if tr.Checkpoint == nil {
			t.Errorf("trial %s has no checkpoint left", tr.ID)
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(tr.Checkpoint.Path))); err != nil {
			t.Errorf("trial %s: its latest checkpoint %s: %v", tr.ID, tr.Checkpoint.Path, err)
		}
	}
}

// TestFailedDeleteLogged: a delete that fails is logged and fails neither
// the trial nor the experiment.
func TestFailedDeleteLogged(t *testing.T) {
	w := &deleteWatcher{fail: true}
	out, _, log := runDeleting(t, w, 4)
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s ended %s (%s), want %s", tr.ID, tr.Status, tr.Error, hone.StatusTerminated)
		}
	}
	if n := strings.Count(log.String(), "injected delete failure"); n != 6 {
		t.Errorf("the log names the delete failure %d times, want 6:\n%s", n, log)
	}
}

// TestBeforeDeleteKeeps: a BeforeDelete that fails keeps the checkpoint,
// with a log line naming it; the experiment goes on.
func TestBeforeDeleteKeeps(t *testing.T) {
	w := &deleteWatcher{keepAfter: 3}
	out, dir, log := runDeleting(t, w, 4)
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s ended %s (%s), want %s", tr.ID, tr.Status, tr.Error, hone.StatusTerminated)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.errs {
		t.Error(e)
	}
	if w.before != 6 || len(w.deleted) != 2 {
		t.Fatalf("BeforeDelete called %d times and %d checkpoints deleted, want 6 and 2", w.before, len(w.deleted))
	}
	paths, err := ckdels(filepath.Join(dir, journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for p := range paths {
		if !strings.Contains(log.String(), "kept checkpoint "+p+": journal not shipped") {
			continue
		}
		kept++
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			t.Errorf("kept checkpoint %s: %v", p, err)
		}
		if d := path.Base(p); !strings.HasPrefix(d, "checkpoint_") {
			t.Errorf("kept %s is not a checkpoint", p)
		}
	}
	if kept != 4 {
		t.Errorf("the log names %d kept checkpoints, want 4:\n%s", kept, log)
	}
}

// stuckCommit is a store whose first commit hangs until its context ends
// (an upload to a server that stopped answering), cancelling run once it
// hangs.
type stuckCommit struct {
	hone.Store
	run context.CancelFunc

	mu        sync.Mutex
	hung      bool
	cancelled error // the hung commit's ctx.Err() when it gave up
}

func (s *stuckCommit) Commit(ctx context.Context, staged, dest string) error {
	s.mu.Lock()
	first := !s.hung
	s.hung = true
	s.mu.Unlock()
	if !first {
		return s.Store.Commit(ctx, staged, dest)
	}
	s.run()
	<-ctx.Done()
	s.mu.Lock()
	s.cancelled = ctx.Err()
	s.mu.Unlock()
	return fmt.Errorf("upload: %w", ctx.Err())
}

// TestStuckCommitCancelledAtEnd: a commit that never returns by itself
// does not hang the end of an interrupted experiment: after the stop
// grace the runner cancels its context, Run returns, the checkpoint is
// not registered, and a resume cleans up and completes the experiment.
func TestStuckCommitCancelledAtEnd(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "stuck")
	ls, err := local.New(dir, local.NoSync())
	if err != nil {
		t.Fatal(err)
	}
	newExp := func() *hone.Experiment {
		sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, 1, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		return &hone.Experiment{Name: "stuck", Metric: "loss", Searcher: sr, Scheduler: &fifo.Scheduler{}, Seed: 1,
			Stoppers: []hone.Stopper{stopper.MaxIterations(3)}}
	}
	exp := newExp()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := &stuckCommit{Store: ls, run: cancel}
	exec := func() hone.Executor { return inproc.NewClass(func() trial.Trainable { return &checkpointing{} }) }
	out, err := runner.Run(ctx, exp, runner.Options{Dir: dir, Store: st, Log: io.Discard, StopGrace: 50 * time.Millisecond, Tick: 10 * time.Millisecond, Executor: exec()})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !out.Interrupted {
		t.Error("Run was not interrupted")
	}
	st.mu.Lock()
	gaveUp := st.cancelled
	st.mu.Unlock()
	if !errors.Is(gaveUp, context.Canceled) {
		t.Fatalf("the hung commit ended with %v, want its context cancelled", gaveUp)
	}
	committed, _, err := ls.List(context.Background(), out.Trials[0].Dir)
	if err != nil || len(committed) != 0 {
		t.Errorf("committed after the cancelled commit: %q, %v; want none", committed, err)
	}
	exp2 := newExp()
	it := &iterations{seen: map[string][]int{}}
	exp2.Callbacks = []hone.Callback{it}
	out, err = runner.Resume(context.Background(), exp2, runner.Options{Dir: dir, Store: ls, Log: io.Discard, Executor: exec()}, hone.ResumeFlags{Unfinished: true})
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	tr := out.Trials[0]
	if got := it.seen[tr.Dir]; tr.Status != hone.StatusTerminated || !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("after resume: trial %s ended %s (%s) with iterations %v, want %s after 1 2 3", tr.ID, tr.Status, tr.Error, got, hone.StatusTerminated)
	}
	_, left, err := ls.List(context.Background(), tr.Dir)
	if err != nil || len(left) != 0 {
		t.Errorf("leftovers after resume: %q, %v", left, err)
	}
}

// syncChecker checks, at every result, that each delete the journal
// records has already been done by the store: with an executor on
// virtual time deletes run on the runner's goroutine, in order.
type syncChecker struct {
	hone.NopCallback
	w    *deleteWatcher
	errs []string
	max  int // most deletes seen done at a result
}

func (c *syncChecker) OnTrialResult(*hone.Trial, *hone.Result) {
	paths, err := ckdels(c.w.jp)
	if err != nil {
		c.errs = append(c.errs, err.Error())
		return
	}
	c.w.mu.Lock()
	done := len(c.w.deleted)
	c.w.mu.Unlock()
	// The journal already holds this step's records, whose delete may
	// come after this notification in the same batch; every delete of
	// earlier steps must be done.
	if done < len(paths)-1 {
		c.errs = append(c.errs, fmt.Sprintf("at a result %d deletes were journaled and only %d done", len(paths), done))
	}
	c.max = max(c.max, done)
}

// TestVirtualTimeDeletesInline: with the sim executor (virtual time),
// checkpoint deletes (and BeforeDelete) run on the runner's goroutine
// before the next input is stepped, so the experiment stays
// deterministic.
func TestVirtualTimeDeletesInline(t *testing.T) {
	sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, 3, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "sim")
	ls, err := local.New(dir, local.NoSync())
	if err != nil {
		t.Fatal(err)
	}
	w := &deleteWatcher{Store: ls, jp: filepath.Join(dir, journal.FileName)}
	check := &syncChecker{w: w}
	exp := &hone.Experiment{Name: "sim", Metric: "loss", Searcher: sr, Scheduler: &fifo.Scheduler{}, Seed: 1, MaxConcurrentTrials: 3,
		Checkpoint: hone.CheckpointConfig{NumToKeep: 1}, Callbacks: []hone.Callback{check}}
	_, err = runner.Run(context.Background(), exp, runner.Options{Dir: dir, Store: w, Log: io.Discard, BeforeDelete: w.BeforeDelete,
		Executor: sim.New(sim.Curve{MaxIterations: 8, CheckpointEvery: 1}.New)})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range append(w.errs, check.errs...) {
		t.Error(e)
	}
	if check.max == 0 {
		t.Error("no delete was done by any result")
	}
}

// gatedCheckpointing checkpoints every step, and waits before step at
// until gate is closed (with a fail-safe).
type gatedCheckpointing struct {
	checkpointing
	gate <-chan struct{}
	at   int
}

func (g *gatedCheckpointing) Step(ctx context.Context) (trial.Metrics, error) {
	if g.n+1 >= g.at {
		t := time.NewTimer(time.Minute)
		defer t.Stop()
		select {
		case <-g.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
			return nil, errors.New("gate never opened: no delete blocked")
		}
	}
	return g.checkpointing.Step(ctx)
}

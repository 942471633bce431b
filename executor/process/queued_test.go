package process_test

import (
	"context"
	"errors"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/process"
)

// queue is a launcher whose trials wait, as in a cluster's queue, until
// the test lets them run; then each is a real process launched as
// detached launches it. Only the timing is the test's: when a trial's
// command runs (release) and when the launcher notices (see).
type queue struct {
	d    detached
	tell bool // the launcher can tell when a trial runs (process.Queued)
	jobs chan *queuedJob
}

func newQueue(tell bool) *queue { return &queue{tell: tell, jobs: make(chan *queuedJob, 16)} }

func (q *queue) Launch(spec process.LaunchSpec) (process.Launched, error) {
	j := &queuedJob{q: q, spec: spec, seen: make(chan struct{}), ran: make(chan struct{}), gone: make(chan struct{})}
	q.jobs <- j
	return j, nil
}

// job returns the next trial launched.
func (q *queue) job(t *testing.T) *queuedJob {
	t.Helper()
	select {
	case j := <-q.jobs:
		return j
	case <-time.After(20 * time.Second):
		t.Fatal("no trial was launched")
		return nil
	}
}

type queuedJob struct {
	q    *queue
	spec process.LaunchSpec
	seen chan struct{} // Running's: closed once the launcher sees the trial run
	ran  chan struct{} // closed once run is set
	gone chan struct{} // closed when the trial is cancelled in the queue

	mu        sync.Mutex
	run       process.Launched // the trial's command, once released
	cancelled bool
	signals   []syscall.Signal
}

// release runs the trial's command: it leaves the queue.
func (j *queuedJob) release(t *testing.T) {
	t.Helper()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.cancelled {
		t.Fatal("release of a trial cancelled in the queue")
	}
	run, err := j.q.d.Launch(j.spec)
	if err != nil {
		t.Fatal(err)
	}
	j.run = run
	close(j.ran)
}

// see makes the launcher say the trial runs.
func (j *queuedJob) see() { close(j.seen) }

func (j *queuedJob) Running() <-chan struct{} {
	if !j.q.tell {
		return nil
	}
	return j.seen
}

func (j *queuedJob) Signal(sig syscall.Signal) error {
	j.mu.Lock()
	j.signals = append(j.signals, sig)
	run := j.run
	if run == nil && !j.cancelled {
		j.cancelled = true // a queued job is cancelled, whatever the signal
		close(j.gone)
	}
	j.mu.Unlock()
	if run == nil {
		return nil
	}
	return run.Signal(sig)
}

func (j *queuedJob) Wait() error {
	select {
	case <-j.ran:
		return j.run.Wait()
	case <-j.gone:
		return nil
	}
}

func (j *queuedJob) Where() (node, id string) { return "node7", "job 5" }

// rest returns trial id's events up to its exit, answering its results
// with DirectContinue, and fails on any EventStarted among them.
func rest(t *testing.T, ex *process.Executor, id string) error {
	t.Helper()
	for {
		ev := next(t, ex)
		if ev.TrialID != id {
			t.Fatalf("event of trial %s, want one of %s", ev.TrialID, id)
		}
		switch ev.Kind {
		case hone.EventExited:
			return ev.Cause
		case hone.EventResult:
			direct(t, ex, id, hone.DirectContinue)
		default:
			t.Fatalf("%v event of %s, want its results and exit only", ev.Kind, id)
		}
	}
}

// TestAnnouncesStarts: the executor announces starts when it launches
// trials (they may be queued), not when it runs child processes (they run
// at Start).
func TestAnnouncesStarts(t *testing.T) {
	var ex hone.Executor = newExecutor(t, shell("true"))
	if a, ok := ex.(hone.StartAnnouncer); !ok || a.AnnouncesStarts() {
		t.Error("an executor of child processes announces starts")
	}
	opts := shell("true")
	opts.Listen, opts.Launch = "127.0.0.1:0", &detached{}
	ex = newExecutor(t, opts)
	if a, ok := ex.(hone.StartAnnouncer); !ok || !a.AnnouncesStarts() {
		t.Error("an executor with a launcher does not announce starts")
	}
}

// TestLaunchQueued: a trial waiting in the launcher's queue gives no
// event; once the launcher says it runs, one EventStarted names where,
// and the trial's hello, which comes after, announces nothing more.
func TestLaunchQueued(t *testing.T) {
	q := newQueue(true)
	opts := raw(t, hello, "<read>", `{"type":"report","metrics":{"n":1},"done":true}`, "<read>")
	opts.Listen, opts.Launch = "127.0.0.1:0", q
	ex := newExecutor(t, opts)
	start(t, ex, "a", "", hone.Resources{})
	j := q.job(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if ev, err := ex.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next while the trial is queued = (%v event, %v), want nothing", ev.Kind, err)
	}
	j.see()
	ev := next(t, ex)
	if ev.Kind != hone.EventStarted || ev.TrialID != "a" || ev.Hostname != "node7 (job 5)" || ev.Time == 0 {
		t.Fatalf("event %+v, want a started on node7 (job 5)", ev)
	}
	j.release(t)
	result(t, ex, "a")
	direct(t, ex, "a", hone.DirectContinue)
	if err := rest(t, ex, "a"); err != nil {
		t.Fatal(err)
	}
}

// TestLaunchHelloStarts: a trial whose launcher cannot tell when it runs,
// or tells it late, is announced by its hello, once, before its first
// result, with the node the hello names.
func TestLaunchHelloStarts(t *testing.T) {
	for _, tell := range []bool{false, true} {
		q := newQueue(tell)
		opts := raw(t, `{"type":"hello","v":1,"token":"{token}","trial_id":"{trial_id}","host":"n9"}`, "<read>",
			`{"type":"report","metrics":{"n":1}}`, "<read>", `{"type":"report","metrics":{"n":2},"done":true}`, "<read>")
		opts.Listen, opts.Launch = "127.0.0.1:0", q
		ex := newExecutor(t, opts)
		start(t, ex, "a", "", hone.Resources{})
		j := q.job(t)
		j.release(t)
		if ev := next(t, ex); ev.Kind != hone.EventStarted || ev.TrialID != "a" || ev.Hostname != "n9 (job 5)" {
			t.Fatalf("tell=%v: first event %v of %s from %q, want a started on n9 (job 5)", tell, ev.Kind, ev.TrialID, ev.Hostname)
		}
		if tell {
			j.see() // the launcher notices only now: nothing more to say
		}
		result(t, ex, "a")
		direct(t, ex, "a", hone.DirectContinue)
		if err := rest(t, ex, "a"); err != nil {
			t.Fatalf("tell=%v: %v", tell, err)
		}
	}
}

// TestLaunchStopQueued: a trial stopped in the queue is cancelled there
// and exits normally without a started event, also when the launcher
// says afterwards that it ran.
func TestLaunchStopQueued(t *testing.T) {
	q := newQueue(true)
	opts := raw(t, hello, "<read>", `{"type":"report","metrics":{"n":1},"done":true}`, "<read>")
	opts.Listen, opts.Launch = "127.0.0.1:0", q
	ex := newExecutor(t, opts)
	start(t, ex, "a", "", hone.Resources{})
	j := q.job(t)
	direct(t, ex, "a", hone.DirectStop)
	if err := rest(t, ex, "a"); err != nil {
		t.Fatalf("a trial stopped in the queue: exit error %v, want nil", err)
	}
	j.see()
	if _, err := ex.Next(context.Background()); !errors.Is(err, hone.ErrIdle) {
		t.Fatalf("Next after the trial's exit = %v, want hone.ErrIdle", err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.cancelled || len(j.signals) == 0 || j.signals[0] != syscall.SIGTERM {
		t.Errorf("the queued trial got %v, cancelled %v: want SIGTERM, which cancels it", j.signals, j.cancelled)
	}
}

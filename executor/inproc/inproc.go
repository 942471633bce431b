// Package inproc runs Go trainables in goroutines of the current process.
//
// An Executor runs either function-style trainables ([NewFunc]) or
// class-style ones ([NewClass]), one goroutine per running trial. It
// implements [hone.Executor]:
//
//   - Function style: every Session.Report emits an EventResult (Done from
//     the Done option or a "done": true metric, CheckpointDir from
//     WithCheckpoint) and blocks until the runner's directive.
//     DirectContinue returns nil from Report; DirectCheckpoint emits an EventSaved
//     with CheckpointDir "" (a function cannot save on demand) and Report
//     keeps waiting; DirectStop cancels the function's context and makes
//     Report return hone.ErrTrialStopped. The restore point is
//     Session.Checkpoint.
//   - Class style: Setup, then Load(RestoreDir) when restoring, then Step
//     after Step. Each step emits an EventResult (Done when the metrics
//     hold "done": true; with "should_checkpoint": true the trainable is
//     saved first and the result carries the checkpoint) and waits.
//     DirectContinue runs the next step; DirectCheckpoint saves into a fresh
//     staging directory and emits an EventSaved, then waits again;
//     DirectStop ends the trial. After a Done result the runner is
//     expected to send DirectStop (or DirectCheckpoint first); a DirectContinue
//     also ends the trial, normally, instead of stepping past the end.
//
// In both styles DirectStop may also come while the trial computes: its
// context is cancelled and its EventExited follows when the code returns.
// Once Direct(id, DirectStop) has returned, the only event still to come
// for id is its EventExited: a result or save that the trial emitted but
// Next has not yet returned is dropped (with its staged directory). The
// exit is normal (Err nil) when the trainable returns nil or
// hone.ErrTrialStopped, or returns anything but a panic after a stop was
// requested; a panic anywhere in training code becomes an error holding the
// panic value and the stack ([trial.PanicError]).
//
// Checkpoints are staged in fresh directories <Dir>/.staging/<n> (see
// [trial.Stager]); the runner commits them.
package inproc

import (
	"context"
	"errors"
	"fmt"
	"github.com/hone-tune/hone/internal/eventq"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/trial"
)

// Option configures an Executor; pass options to NewFunc or NewClass.
type Option func(*options)

type options struct {
	clock    hone.Clock
	hostname string
	pid      int
}

// WithClock makes the executor stamp events with c (default: the wall
// clock). c.Now is called from trial goroutines, one call at a time.
func WithClock(c hone.Clock) Option { return func(o *options) { o.clock = c } }

// WithHostname sets the Hostname of every event (default: os.Hostname).
func WithHostname(name string) Option { return func(o *options) { o.hostname = name } }

// WithPID sets the PID of every event (default: os.Getpid).
func WithPID(pid int) Option { return func(o *options) { o.pid = pid } }

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// body runs one trial's training code on the trial's goroutine and returns
// how it ended.
type body func(ctx context.Context, r *run) error

// Executor runs Go trainables in goroutines. Its methods are called by the
// runner, from one goroutine; trial goroutines talk to it through an
// internal queue. Create it with NewFunc or NewClass.
type Executor struct {
	opts options
	body body
	wake chan struct{} // capacity 1: an event was queued
	wg   sync.WaitGroup

	mu      sync.Mutex
	trials  map[string]*run // started trials whose EventExited Next has not returned
	queue   eventq.Queue    // events not yet returned by Next
	running int             // trial goroutines still alive
	closed  bool
}

// run is one start of one trial.
type run struct {
	e          *Executor
	spec       hone.StartSpec
	cancel     context.CancelFunc
	directives chan hone.Directive // capacity 1; sent to only while waiting
	stager     *trial.Stager
	mkdir      sync.Once // creates spec.Dir on first use

	// Guarded by Executor.mu.
	waiting  bool // an emitted event awaits its directive
	stopping bool // DirectStop or Close was received
	exited   bool // the goroutine has returned
}

// dir returns the trial's directory, creating it on first use. A failure
// to create it surfaces when the trainable writes there.
func (r *run) dir() string {
	r.mkdir.Do(func() { _ = os.MkdirAll(r.spec.Dir, 0o755) })
	return r.spec.Dir
}

// NewFunc returns an executor that runs fn for every trial.
func NewFunc(fn trial.Func, opts ...Option) *Executor {
	return newExecutor(func(ctx context.Context, r *run) error {
		return funcBody(ctx, fn, r)
	}, opts)
}

// NewClass returns an executor that runs a trainable made by factory for
// every trial start. factory is called on the trial's goroutine.
func NewClass(factory func() trial.Trainable, opts ...Option) *Executor {
	return newExecutor(func(ctx context.Context, r *run) error {
		return classBody(ctx, factory, r)
	}, opts)
}

func newExecutor(b body, opts []Option) *Executor {
	o := options{clock: wallClock{}, pid: os.Getpid()}
	o.hostname, _ = os.Hostname()
	for _, opt := range opts {
		opt(&o)
	}
	return &Executor{
		opts:   o,
		body:   b,
		wake:   make(chan struct{}, 1),
		trials: make(map[string]*run),
	}
}

// Clock returns the clock that stamps events, so the runner can use the
// same one. It implements hone.Clocked.
func (e *Executor) Clock() hone.Clock { return e.opts.clock }

// Start starts the trial on a new goroutine. spec.Dir is created when the
// trainable first asks for it (Session.Dir, or a checkpoint's staging
// directory): a trial that writes nothing costs no mkdir. It fails when spec.TrialID is empty, spec.Dir is not absolute, a trial
// with that id is still running (its EventExited not yet returned by Next),
// or the executor is closed.
func (e *Executor) Start(spec hone.StartSpec) error {
	if spec.TrialID == "" {
		return errors.New("start trial: empty trial id")
	}
	if !filepath.IsAbs(spec.Dir) {
		return fmt.Errorf("start trial %s: dir %q is not an absolute path", spec.TrialID, spec.Dir)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return fmt.Errorf("start trial %s: executor closed", spec.TrialID)
	}
	if _, ok := e.trials[spec.TrialID]; ok {
		return fmt.Errorf("start trial %s: already running", spec.TrialID)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &run{
		e:          e,
		spec:       spec,
		cancel:     cancel,
		directives: make(chan hone.Directive, 1),
		stager:     trial.NewStager(spec.Dir),
	}
	e.trials[spec.TrialID] = r
	e.running++
	e.wg.Add(1)
	go e.runTrial(ctx, r)
	return nil
}

// runTrial is a trial's goroutine.
func (e *Executor) runTrial(ctx context.Context, r *run) {
	defer e.wg.Done()
	err := e.body(ctx, r)
	r.cancel()

	e.mu.Lock()
	defer e.mu.Unlock()
	var pe *trial.PanicError
	if err != nil && !errors.As(err, &pe) && (r.stopping || errors.Is(err, hone.ErrTrialStopped)) {
		err = nil
	}
	r.exited = true
	r.waiting = false
	e.running--
	e.pushLocked(r, hone.Event{Kind: hone.EventExited, Cause: err})
}

// Direct answers a waiting trial, or stops a computing one. It fails for
// an unknown trial (never started, or its EventExited already returned by
// Next), and for DirectContinue or DirectCheckpoint to a trial that is not
// waiting for a directive. DirectStop to a trial that is already stopping
// or has exited is a no-op.
func (e *Executor) Direct(trialID string, d hone.Directive) error {
	e.mu.Lock()
	r := e.trials[trialID]
	if r == nil {
		e.mu.Unlock()
		return fmt.Errorf("direct %v to trial %s: no such trial running", d, trialID)
	}
	switch d {
	case hone.DirectStop:
		dropped := e.stopLocked(r)
		e.mu.Unlock()
		discard(dropped)
		return nil
	case hone.DirectContinue, hone.DirectCheckpoint:
		defer e.mu.Unlock()
		if !r.waiting {
			return fmt.Errorf("direct %v to trial %s: trial is not waiting for a directive", d, trialID)
		}
		r.waiting = false
		r.directives <- d
		return nil
	}
	e.mu.Unlock()
	return fmt.Errorf("direct %v to trial %s: unknown directive", d, trialID)
}

// stopLocked asks r to stop and drops its queued, unseen events; it returns
// the staged checkpoint directories of the dropped events.
func (e *Executor) stopLocked(r *run) []string {
	if r.stopping || r.exited {
		return nil
	}
	r.stopping = true
	r.cancel()
	if r.waiting {
		r.waiting = false
		r.directives <- hone.DirectStop
	}
	return e.queue.DropTrial(r.spec.TrialID)
}

// Next returns the next event in arrival order. It returns ctx.Err() if
// ctx is done, and hone.ErrIdle at once when no trial goroutine is alive
// and no event is queued; otherwise it blocks. When it returns a trial's
// EventExited, the trial id becomes free for another Start.
func (e *Executor) Next(ctx context.Context) (hone.Event, error) {
	return eventq.Next(ctx, &e.mu, &e.queue, e.wake,
		func() bool { return e.running == 0 },
		func(id string) { delete(e.trials, id) })
}

// Close stops every trial and waits for their goroutines to return. A
// trainable that ignores its cancelled context and never reports again
// keeps Close waiting. Close may be called more than once; Next must not be
// called after it.
func (e *Executor) Close() error {
	e.mu.Lock()
	e.closed = true
	var dropped []string
	for _, r := range e.trials {
		dropped = append(dropped, e.stopLocked(r)...)
	}
	e.mu.Unlock()
	discard(dropped)
	e.wg.Wait()
	return nil
}

// pushLocked stamps ev for r and queues it.
func (e *Executor) pushLocked(r *run, ev hone.Event) {
	ev.TrialID = r.spec.TrialID
	ev.Time = e.opts.clock.Now().UnixNano()
	ev.PID = e.opts.pid
	ev.Hostname = e.opts.hostname
	e.queue.Push(ev)
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// exchange is called on r's goroutine: it emits ev and waits for the
// runner's answer, answering DirectCheckpoint with save (or with an EventSaved
// without a checkpoint when save is nil) and waiting again. It returns
// DirectContinue or DirectStop; DirectStop also when the trial is stopping
// or has exited, so ev cannot be emitted any more.
func (r *run) exchange(ev hone.Event, save func() (string, error)) hone.Directive {
	e := r.e
	for {
		e.mu.Lock()
		ok := !r.stopping && !r.exited
		if ok {
			e.pushLocked(r, ev)
			r.waiting = true
		}
		e.mu.Unlock()
		if !ok {
			discard([]string{ev.CheckpointDir})
			return hone.DirectStop
		}
		d := <-r.directives
		if d != hone.DirectCheckpoint {
			return d
		}
		ev = hone.Event{Kind: hone.EventSaved}
		if save != nil {
			ev.CheckpointDir, ev.Cause = save()
		}
	}
}

// discard removes staged checkpoint directories that will never be
// committed. Failures are ignored: the store cleans up staging leftovers.
func discard(dirs []string) {
	for _, d := range dirs {
		if d != "" {
			_ = os.RemoveAll(d)
		}
	}
}

// Contained reports true: trials cannot outlive the process (hone.Contained).
func (e *Executor) Contained() bool { return true }

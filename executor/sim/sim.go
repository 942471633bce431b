// Package sim runs simulated trials on a virtual clock: thousands of trials
// of simulated hours finish in seconds, and every run of the same sequence
// of calls produces the same events, bit for bit. It is the executor of
// scheduler tests and benchmarks.
//
// A trial is a [Trainable] made by a [Model]. The Executor computes a step
// when the trial is started or told to continue, and schedules the step's
// result at the current virtual time plus the step's Duration. Next pops the
// earliest scheduled event, by (virtual time, order of scheduling), and
// moves the clock to it; it never blocks. Checkpoints are real directories:
// the bytes of [Trainable.Save] in a file named [StateFile] inside a fresh
// staging directory <Dir>/.staging/<n>, written when the event that carries
// the checkpoint is popped.
//
// Protocol details, per trial:
//
//   - Start schedules the first result at now + StartDuration + the step's
//     Duration. A failure to create or restore the trainable is an
//     EventExited with the error at now + StartDuration.
//   - A step that fails is an EventExited with the error at now + the
//     failed Step's Duration (0 unless the model says how long it ran).
//   - DirectContinue computes the next step; after a Done result it ends
//     the trial instead (EventExited at now, no error).
//   - DirectCheckpoint schedules an EventSaved at now + SaveDuration, or at now
//     with no checkpoint when the executor was made with
//     CannotSaveOnDemand.
//   - DirectStop cancels whatever the trial has scheduled and schedules its
//     EventExited at now; a trial whose exit is already due is left alone.
//   - Next returns hone.ErrIdle when nothing is scheduled: no trial is
//     running, or every running trial waits for a directive (which, for a
//     runner, means it forgot to answer one).
//   - A panic in model code is a trial error holding the panic value and
//     the stack, like an error return.
package sim

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/trial"
)

// Step is the outcome of one simulated training iteration.
type Step struct {
	// Metrics is the report; it belongs to hone once returned.
	Metrics map[string]any
	// Duration is the virtual time the step takes (>= 0).
	Duration time.Duration
	// Done marks the trial's last result.
	Done bool
	// Checkpoint makes the result carry a checkpoint of the trainable's
	// state after the step.
	Checkpoint bool
}

// Trainable is one simulated trial's training state. The Executor calls its
// methods on the runner's goroutine, one at a time. Any randomness must be
// kept in the Save bytes or derived from (trial id, iteration), so that a
// restored trial continues exactly as the original would have.
type Trainable interface {
	// Step trains one iteration.
	Step() (Step, error)
	// Save returns the trainable's state; the bytes belong to the caller.
	Save() ([]byte, error)
	// Load restores a state returned by Save (possibly of another trial,
	// after an exploit).
	Load(state []byte) error
}

// Model makes the trainable of one trial start from its configuration (the
// trainable's own copy) and id. It is called by the Executor on the runner's
// goroutine.
type Model func(cfg hone.Config, trialID string) (Trainable, error)

// StateFile is the name of the file holding the Save bytes in a checkpoint
// directory.
const StateFile = "state"

// Option configures an Executor; pass options to New.
type Option func(*options)

type options struct {
	start         time.Time
	saveDuration  time.Duration
	startDuration time.Duration
	cannotSave    bool
}

// WithStart sets the virtual time at which the executor's clock starts
// (default 2024-01-01T00:00:00Z).
func WithStart(t time.Time) Option { return func(o *options) { o.start = t } }

// WithSaveDuration sets the virtual time an on-demand save takes (default 0).
func WithSaveDuration(d time.Duration) Option { return func(o *options) { o.saveDuration = d } }

// WithStartDuration sets the virtual time it takes to start (or restore) a
// trial, before its first step (default 0).
func WithStartDuration(d time.Duration) Option { return func(o *options) { o.startDuration = d } }

// CannotSaveOnDemand makes trials behave like function trainables:
// DirectCheckpoint is answered at once by an EventSaved without a checkpoint.
func CannotSaveOnDemand() Option { return func(o *options) { o.cannotSave = true } }

// Executor runs simulated trials in virtual time. It is not safe for
// concurrent use: the runner calls all its methods, and the clock's, from
// one goroutine. Create it with New.
type Executor struct {
	model  Model
	opts   options
	now    time.Duration // virtual time since opts.start
	seq    uint64        // scheduling order, the tie-breaker of equal times
	queue  eventHeap
	trials map[string]*simTrial // started trials whose EventExited Next has not returned
	closed bool
}

// phase is where a simulated trial is in the protocol.
type phase uint8

const (
	waiting   phase = iota // its latest event awaits a directive
	computing              // a result or a save is scheduled
	exiting                // its exit is scheduled
)

// simTrial is one start of one trial, with its one scheduled event.
type simTrial struct {
	id     string
	dir    string
	t      Trainable
	stager *trial.Stager // created on the first checkpoint
	phase  phase
	done   bool // the latest step was Done

	// The scheduled event, while computing or exiting.
	at         time.Duration
	seq        uint64
	index      int // position in Executor.queue, -1 when not scheduled
	kind       hone.EventKind
	metrics    map[string]any
	checkpoint bool
	err        error
}

// New returns an executor whose trials are made by m.
func New(m Model, opts ...Option) *Executor {
	o := options{start: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
	for _, opt := range opts {
		opt(&o)
	}
	return &Executor{model: m, opts: o, trials: make(map[string]*simTrial)}
}

// Clock returns the executor's virtual clock; its Now is the time of the
// event Next returned last (the start time before that). It implements
// hone.Clocked.
func (e *Executor) Clock() hone.Clock { return virtualClock{e} }

type virtualClock struct{ e *Executor }

func (c virtualClock) Now() time.Time { return c.e.opts.start.Add(c.e.now) }

// Virtual reports true: the time moves only with the executor's events
// (hone.VirtualClock).
func (virtualClock) Virtual() bool { return true }

// Start makes the trial's trainable, restores it from spec.RestoreDir if
// set, and computes and schedules its first step. spec.Iteration and
// spec.Resources are not used: the restored state carries the trainable's
// progress, and virtual trials need no resources. It fails only when
// spec.TrialID is empty, a trial with that id is still running (its
// EventExited not yet returned by Next), or the executor is closed; a
// failure of the model is reported by an EventExited.
func (e *Executor) Start(spec hone.StartSpec) error {
	switch {
	case spec.TrialID == "":
		return errors.New("start trial: empty trial id")
	case e.closed:
		return fmt.Errorf("start trial %s: executor closed", spec.TrialID)
	case e.trials[spec.TrialID] != nil:
		return fmt.Errorf("start trial %s: already running", spec.TrialID)
	}
	tr := &simTrial{id: spec.TrialID, dir: spec.Dir, index: -1}
	e.trials[spec.TrialID] = tr
	at := e.now + e.opts.startDuration
	t, err := e.newTrainable(spec)
	if err != nil {
		e.schedule(tr, at, hone.EventExited, err)
		return nil
	}
	tr.t = t
	e.step(tr, at)
	return nil
}

// newTrainable makes and restores the trainable of a trial start.
func (e *Executor) newTrainable(spec hone.StartSpec) (Trainable, error) {
	var t Trainable
	err := trial.Guard(func() (err error) {
		t, err = e.model(spec.Config.Clone(), spec.TrialID)
		if err == nil && t == nil {
			err = errors.New("model returned nil")
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create trainable: %w", err)
	}
	if spec.RestoreDir == "" {
		return t, nil
	}
	state, err := os.ReadFile(filepath.Join(spec.RestoreDir, StateFile))
	if err == nil {
		err = trial.Guard(func() error { return t.Load(state) })
	}
	if err != nil {
		return nil, fmt.Errorf("load checkpoint %s: %w", spec.RestoreDir, err)
	}
	return t, nil
}

// step computes tr's next step and schedules its result (or its failure)
// after the step's duration, counted from at.
func (e *Executor) step(tr *simTrial, at time.Duration) {
	var st Step
	err := trial.Guard(func() (err error) {
		st, err = tr.t.Step()
		return err
	})
	if err == nil && st.Duration < 0 {
		err = fmt.Errorf("negative duration %v", st.Duration)
	}
	if err != nil {
		e.schedule(tr, at+max(st.Duration, 0), hone.EventExited, fmt.Errorf("step: %w", err))
		return
	}
	tr.done = st.Done
	tr.metrics = st.Metrics
	tr.checkpoint = st.Checkpoint
	e.schedule(tr, at+st.Duration, hone.EventResult, nil)
}

// schedule makes kind tr's one scheduled event, at virtual time at.
func (e *Executor) schedule(tr *simTrial, at time.Duration, kind hone.EventKind, err error) {
	if tr.index >= 0 {
		panic("sim: trial " + tr.id + " scheduled twice")
	}
	tr.at, tr.seq, tr.kind, tr.err = at, e.seq, kind, err
	e.seq++
	if kind == hone.EventExited {
		tr.phase = exiting
	} else {
		tr.phase = computing
	}
	heap.Push(&e.queue, tr)
}

// unschedule cancels tr's scheduled event.
func (e *Executor) unschedule(tr *simTrial) {
	heap.Remove(&e.queue, tr.index)
	tr.metrics, tr.checkpoint, tr.err = nil, false, nil
}

// Direct answers a waiting trial, or stops a computing one. It fails for
// an unknown trial (never started, or its EventExited already returned by
// Next), and for DirectContinue or DirectCheckpoint to a trial that is not
// waiting for a directive.
func (e *Executor) Direct(trialID string, d hone.Directive) error {
	tr := e.trials[trialID]
	if tr == nil {
		return fmt.Errorf("direct %v to trial %s: no such trial running", d, trialID)
	}
	switch d {
	case hone.DirectStop:
		switch tr.phase {
		case exiting:
			if tr.at <= e.now {
				return nil
			}
			e.unschedule(tr)
		case computing:
			e.unschedule(tr)
		}
		e.schedule(tr, e.now, hone.EventExited, nil)
		return nil
	case hone.DirectContinue, hone.DirectCheckpoint:
		if tr.phase != waiting {
			return fmt.Errorf("direct %v to trial %s: trial is not waiting for a directive", d, trialID)
		}
	default:
		return fmt.Errorf("direct %v to trial %s: unknown directive", d, trialID)
	}
	switch {
	case d == hone.DirectCheckpoint && e.opts.cannotSave:
		e.schedule(tr, e.now, hone.EventSaved, nil)
	case d == hone.DirectCheckpoint:
		e.schedule(tr, e.now+e.opts.saveDuration, hone.EventSaved, nil)
	case tr.done:
		e.schedule(tr, e.now, hone.EventExited, nil)
	default:
		e.step(tr, e.now)
	}
	return nil
}

// Next pops the earliest scheduled event and moves the clock to its time.
// It never blocks: it returns ctx.Err() if ctx is done, and hone.ErrIdle
// when nothing is scheduled.
func (e *Executor) Next(ctx context.Context) (hone.Event, error) {
	if err := ctx.Err(); err != nil {
		return hone.Event{}, err
	}
	if len(e.queue) == 0 {
		return hone.Event{}, hone.ErrIdle
	}
	tr := heap.Pop(&e.queue).(*simTrial)
	e.now = tr.at
	ev := hone.Event{Kind: tr.kind, TrialID: tr.id, Time: e.opts.start.Add(e.now).UnixNano(), Cause: tr.err}
	tr.err = nil
	tr.phase = waiting
	switch tr.kind {
	case hone.EventResult:
		ev.Metrics, ev.Done = tr.metrics, tr.done
		tr.metrics = nil
		if tr.checkpoint {
			tr.checkpoint = false
			dir, err := e.stage(tr)
			if err != nil {
				delete(e.trials, tr.id)
				return hone.Event{Kind: hone.EventExited, TrialID: tr.id, Time: ev.Time, Cause: fmt.Errorf("checkpoint after step: %w", err)}, nil
			}
			ev.CheckpointDir = dir
		}
	case hone.EventSaved:
		if !e.opts.cannotSave {
			ev.CheckpointDir, ev.Cause = e.stage(tr)
		}
	case hone.EventExited:
		delete(e.trials, tr.id)
	}
	return ev, nil
}

// stage writes tr's state into a fresh staging directory.
func (e *Executor) stage(tr *simTrial) (string, error) {
	var state []byte
	err := trial.Guard(func() (err error) {
		state, err = tr.t.Save()
		return err
	})
	if err != nil {
		return "", fmt.Errorf("save: %w", err)
	}
	if tr.stager == nil {
		tr.stager = trial.NewStager(tr.dir)
	}
	dir, err := tr.stager.New()
	if err != nil {
		return "", fmt.Errorf("save: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, StateFile), state, 0o644); err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("save: %w", err)
	}
	return dir, nil
}

// Close drops every trial; nothing else is held. Next must not be called
// after it.
func (e *Executor) Close() error {
	e.closed = true
	e.queue = nil
	clear(e.trials)
	return nil
}

// eventHeap is a min-heap of scheduled trials by (at, seq).
type eventHeap []*simTrial

func (q eventHeap) Len() int { return len(q) }

func (q eventHeap) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}

func (q eventHeap) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index = i
	q[j].index = j
}

func (q *eventHeap) Push(x any) {
	tr := x.(*simTrial)
	tr.index = len(*q)
	*q = append(*q, tr)
}

func (q *eventHeap) Pop() any {
	old := *q
	n := len(old) - 1
	tr := old[n]
	old[n] = nil
	tr.index = -1
	*q = old[:n]
	return tr
}

// Contained reports true: trials cannot outlive the process (hone.Contained).
func (e *Executor) Contained() bool { return true }

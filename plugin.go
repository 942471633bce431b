package hone

import (
	"errors"
	"math/rand/v2"
	"time"
)

// Decision is a scheduler's verdict on a trial after one of its results.
type Decision int

// The decisions of docs/SEMANTICS.md §1. In the per-trial decision queue STOP beats
// PAUSE beats CONTINUE.
const (
	Continue Decision = iota // keep training
	Pause                    // checkpoint if needed, stop the process, status PAUSED
	Stop                     // stop gracefully, status TERMINATED
	Noop                     // the scheduler already acted through Control
)

func (d Decision) String() string {
	switch d {
	case Continue:
		return "CONTINUE"
	case Pause:
		return "PAUSE"
	case Stop:
		return "STOP"
	case Noop:
		return "NOOP"
	}
	return "Decision(?)"
}

// Errors a Searcher returns from Suggest.
var (
	// ErrNotNow means "no suggestion now, ask again later" (e.g. a
	// concurrency limit is reached).
	ErrNotNow = errors.New("searcher: no suggestion now")
	// ErrSearchDone means the searcher will never suggest again.
	ErrSearchDone = errors.New("searcher: finished")
)

// Searcher proposes configurations. It is called on the controller's
// goroutine only, so it needs no locking; it must be deterministic given its
// seed and the sequence of calls, because resume replays that sequence.
type Searcher interface {
	// Suggest returns the configuration of a new trial with the given id,
	// or ErrNotNow, or ErrSearchDone.
	Suggest(trialID string) (Config, error)
	// OnResult is told every result of a trial unless the scheduler's
	// decision for it was STOP.
	OnResult(trialID string, r *Result)
	// OnTrialComplete is told once per trial when it finishes: last is its
	// last result (nil if none) and failed is true if it ended in ERROR.
	OnTrialComplete(trialID string, last *Result, failed bool)
}

// PendingLimit is an optional ability of searchers: how many of their
// trials may wait PENDING at once. MaxPending returns a positive count, or
// PendingAuto for a searcher that does not learn from results (random,
// grid): the controller then allows max(16, ⌈1.1 × the trials that can run
// at once⌉), so a free slot always finds a trial and a scheduler can
// time-multiplex a population larger than the slots. Model-based searchers
// want few, so each suggestion uses the latest results. Without it, or
// with another value, the limit is 1. Experiment.MaxPendingTrials
// overrides it.
type PendingLimit interface{ MaxPending() int }

// PendingAuto is what PendingLimit.MaxPending returns to let the
// controller size the bound from the trials that can run at once.
const PendingAuto = -1

// Stateful is an optional ability of searchers, schedulers and stoppers:
// their state can be saved and restored. Callers type-assert for it.
//
// MarshalState returns the plugin's whole state as versioned JSON: what its
// next calls depend on, trials named by id (never by pointer), its own
// random source included if it has one. UnmarshalState restores such a
// snapshot into a fresh plugin built with the same configuration; it
// refuses, with an error, a snapshot of another version or of a plugin
// configured otherwise. A restored plugin then answers every call as the
// one that was snapshotted would, against a Control whose trials are the
// same (Control.Trial resolves the ids).
type Stateful interface {
	MarshalState() ([]byte, error)
	UnmarshalState([]byte) error
}

// Scheduler decides what happens to running trials and which waiting trial
// runs next. It is called on the controller's goroutine only. It never sets
// a trial's status: it returns decisions, acts through Control, and brings
// paused trials back by returning them from ChooseTrialToRun.
type Scheduler interface {
	// OnTrialAdd is told of a new trial, and of a trial re-added for a retry.
	OnTrialAdd(c Control, t *Trial)
	// OnResult returns the decision for t after result r.
	OnResult(c Control, t *Trial, r *Result) Decision
	// OnTrialComplete is told when a RUNNING trial finishes normally or is
	// stopped; r is its last result (may be nil).
	OnTrialComplete(c Control, t *Trial, r *Result)
	// OnTrialError is told when a RUNNING trial fails (whether or not it
	// will be retried).
	OnTrialError(c Control, t *Trial)
	// OnTrialRemove is told when a PENDING or PAUSED trial is stopped or
	// fails.
	OnTrialRemove(c Control, t *Trial)
	// ChooseTrialToRun returns a PENDING or PAUSED trial to start next, or
	// nil. It is asked whenever a slot is free.
	ChooseTrialToRun(c Control) *Trial
}

// SaveListener is an optional ability of schedulers that wait on saves
// (PBT's donors): the controller calls OnTrialSave when a save of t that
// was in flight resolves, whoever asked for it (Control.ScheduleSave, a
// pause, the checkpoint frequency), to cp (nil for "no checkpoint") or to
// err. It is called inside the controller step that resolves the save,
// where a SaveFuture resolves, before the trial's next decision is acted
// on. A save that ScheduleSave answers at once (the trial is not running)
// is not reported: the future it returns is already Done. What the
// scheduler does then is decided from its own state, which is plain data,
// so that it can be snapshotted (Stateful) and restored.
type SaveListener interface {
	OnTrialSave(c Control, t *Trial, cp *Checkpoint, err error)
}

// OldestByStatus is an optional extension of Control for schedulers that
// pick trials in creation order: Oldest returns the earliest-created trial
// whose status is s (PENDING or PAUSED; nil for any other status) in
// amortised logarithmic time, where scanning Trials costs one step per
// trial ever created. FIFO uses it when the Control provides it.
type OldestByStatus interface {
	Oldest(s Status) *Trial
}

// TrialFailer is an optional extension of Control for schedulers that find
// that a trial cannot go on (PBT's require_attrs): FailTrial fails t with
// msg as an error of the trial itself does — retried from its checkpoint
// while max_failures allows, else ERROR, with msg in its error file. From
// OnResult for t itself, the failure takes effect when OnResult returns,
// whose decision is then ignored (the searcher is not told the result).
// A finished trial is left alone.
type TrialFailer interface {
	FailTrial(t *Trial, msg string)
}

// Control is what the controller gives schedulers: a read-only view of the
// experiment and a small action API. It may be kept and used later on the
// controller's goroutine, e.g. in SaveListener.OnTrialSave, never from
// another goroutine.
type Control interface {
	// Trials returns every trial in creation order. Read only.
	Trials() []*Trial
	// Trial returns the trial with id, or nil.
	Trial(id string) *Trial
	// Now is the time of the event being processed.
	Now() time.Time
	// Rand is the scheduler's seeded random source.
	Rand() *rand.Rand
	// Objectives are the experiment's objectives, each with its mode
	// (Experiment.ResolvedObjectives); none if the experiment names no
	// metric. A scheduler that optimises one number takes Primary, or its
	// own objective with Objective.Or(Primary()).
	Objectives() Objectives
	// Constraints are the experiment's constraints (Experiment.Constraints),
	// which a scheduler that implements MultiObjective honours.
	Constraints() Constraints
	// ScheduleSave asks t to checkpoint and returns the save future; if a
	// save is already in flight it returns that same future.
	ScheduleSave(t *Trial) *SaveFuture
	// PauseTrial pauses t (RUNNING) at the next opportunity; with save
	// false it does not checkpoint first.
	PauseTrial(t *Trial, save bool)
	// StopTrial stops t (any live status).
	StopTrial(t *Trial)
	// SetConfig replaces t's configuration and experiment tag; it takes
	// effect at t's next start.
	SetConfig(t *Trial, cfg Config, tag string)
	// SetRestore makes t's next start restore from cp (which may belong to
	// another trial) and pins cp until t has restored from it.
	SetRestore(t *Trial, cp *Checkpoint)
	// Pin keeps cp from retention until a matching Unpin (for a scheduler
	// that may later hand cp to a trial, like PBT's donors).
	Pin(cp *Checkpoint)
	// Unpin releases one Pin of cp.
	Unpin(cp *Checkpoint)
	// Logf writes a line to the experiment log.
	Logf(format string, args ...any)
	// AppendLine appends line (a newline is added) to a text file, path
	// relative to the experiment directory; the runner writes it once the
	// journal has the step. For a scheduler's own logs (PBT's policies).
	AppendLine(path, line string)
	// CopyFile makes dst a copy of src (both relative to the experiment
	// directory), in order with AppendLine; a missing src makes dst empty.
	CopyFile(src, dst string)
}

// Stopper decides when trials, or the whole experiment, stop. It is called
// on the controller's goroutine with every result before the scheduler.
type Stopper interface {
	// ShouldStop reports whether trialID should stop after result r.
	ShouldStop(trialID string, r *Result) bool
	// ShouldStopAll reports whether the whole experiment should stop.
	ShouldStopAll() bool
}

// FieldStopper is an optional ability of a Stopper that reads fields of
// every result, such as a threshold on a metric. A result (other than a
// final one, done) that lacks one of them, or holds something other than a
// number there, fails the experiment with an error naming the field and
// the fields the result has, as for a metric that no result contains: the
// field is almost certainly misspelt, and the stopper would never stop a
// trial. The auto-filled fields (training_iteration, time_total_s, ...)
// are in every result.
type FieldStopper interface {
	Stopper
	// Fields returns the result fields the stopper reads.
	Fields() []string
}

// Callback is told what happens in an experiment. Callbacks run on the
// runner's goroutine after the journal has the event; a slow callback slows
// the experiment. A callback may keep the *Trial pointers it is given and
// read them during later callbacks (the controller never changes a trial
// while a callback runs), but must not modify them or read them from other
// goroutines. Embed NopCallback to implement only some methods.
// OnTrialError's err is a *TrialFailedError.
type Callback interface {
	OnTrialStart(t *Trial)
	OnTrialResult(t *Trial, r *Result)
	OnCheckpoint(t *Trial, cp *Checkpoint)
	OnTrialComplete(t *Trial)
	OnTrialError(t *Trial, err error)
	// OnExperimentEnd is called once, after the last trial finished or the
	// experiment was stopped, with every trial.
	OnExperimentEnd(trials []*Trial)
}

// NopCallback implements Callback with methods that do nothing.
type NopCallback struct{}

func (NopCallback) OnTrialStart(*Trial)              {}
func (NopCallback) OnTrialResult(*Trial, *Result)    {}
func (NopCallback) OnCheckpoint(*Trial, *Checkpoint) {}
func (NopCallback) OnTrialComplete(*Trial)           {}
func (NopCallback) OnTrialError(*Trial, error)       {}
func (NopCallback) OnExperimentEnd(trials []*Trial)  {}

// ResumeCallback is an optional ability of a Callback that shows the whole
// experiment, such as a table of its trials. On resume, once the journal
// is replayed and before any trial runs again, the runner calls
// OnExperimentResume with every trial as the journal left it (the trials
// of earlier sessions included), on the runner's goroutine, like the
// other methods. It is not called when an experiment starts.
type ResumeCallback interface {
	Callback
	OnExperimentResume(trials []*Trial)
}

// BufferedCallback is an optional ability of a Callback whose
// OnTrialResult only buffers: nothing outside the process changes until
// FlushResults. The runner hands the journal to the operating system
// before each other callback method, as for any callback, but not before
// each result; it calls FlushResults (journal first) at most a fraction of
// a second after a result, before the experiment ends, and on resume.
// FlushResults(false) hands the buffered results over (enough to survive a
// kill of the process); FlushResults(true) also makes every result handed
// over so far durable. A result whose write failed must stay buffered (or
// be reported lost by the error) and FlushResults must return the error:
// the runner records that results are safe only after a FlushResults(true)
// that returned nil, and never after an error in the same session, so a
// resume takes every result that might be missing again.
//
// Results buffered when the process is killed are not lost: on resume,
// before any other method, the runner calls KeepResults for every trial
// that may hold more results than the journal (a journal cut short: n is
// the number of the trial's results in the journal, and the callback drops
// any beyond), then RecoverResult for every result journaled after the
// last safe point it recorded, in journal order, then FlushResults(true).
// seq is the result's position among all of t's results (0, 1, …); the
// callback keeps what it already holds and takes the rest, so a result it
// flushed just before the kill is not taken twice.
//
// The methods are called on the runner's goroutine, like the others. Their
// errors are those of FallibleCallback.
type BufferedCallback interface {
	Callback
	FlushResults(sync bool) error
	KeepResults(t *Trial, n int) error
	RecoverResult(t *Trial, r *Result, seq int)
}

// FallibleCallback is an optional ability of a Callback whose methods can
// fail. After calling its methods the runner calls TakeErrors, which
// returns (and forgets) the errors met since the last call. An error that
// wraps a *TrialError fails that trial if it is running (and is only
// logged otherwise); the experiment goes on. An error meaning the disk is
// full, and any other error, stops the experiment as an I/O failure that
// Resume continues.
type FallibleCallback interface {
	Callback
	TakeErrors() []error
}

// TrialError is a callback's failure confined to one trial, such as its
// own files not being writable.
type TrialError struct {
	TrialID string
	Err     error
}

func (e *TrialError) Error() string { return "trial " + e.TrialID + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *TrialError) Unwrap() error { return e.Err }

package hone

import (
	"context"
	"errors"
	"time"
)

// Directive is what the runner tells a trial that is waiting after a result
// or a save.
type Directive int

// The directives an Executor carries out.
const (
	// DirectContinue resumes training.
	DirectContinue Directive = iota
	// DirectSave asks the trial to checkpoint now; the executor answers
	// with an EventSaved and the trial waits for another directive.
	DirectSave
	// DirectStop stops the trial gracefully; the executor answers with an
	// EventExited.
	DirectStop
)

func (d Directive) String() string {
	switch d {
	case DirectContinue:
		return "continue"
	case DirectSave:
		return "save"
	case DirectStop:
		return "stop"
	}
	return "directive(?)"
}

// StartSpec is everything an executor needs to start (or restart) a trial.
type StartSpec struct {
	TrialID string
	// Config is the trial's configuration, shared with the controller:
	// the executor must not modify it, and gives trainables a copy.
	Config Config
	// Dir is the trial's local directory (absolute). The executor may write
	// logs there and creates checkpoint staging directories under it; it
	// creates Dir itself when it needs it (the runner does not).
	Dir string
	// RestoreDir is the local directory of the checkpoint to restore from
	// before the first step, or "" to start from scratch.
	RestoreDir string
	// Iteration is the training iteration the restored checkpoint was taken
	// at (0 when starting from scratch); the first result after the start
	// is Iteration+1.
	Iteration int
	Resources Resources
}

// EventKind tells what an Event reports.
type EventKind int

// The kinds of executor events.
const (
	// EventResult: the trial reported metrics (and maybe a checkpoint) and
	// now waits for a Directive.
	EventResult EventKind = iota + 1
	// EventSaved: the trial answered DirectSave. CheckpointDir is the staged
	// checkpoint, or "" if the trial cannot save on demand; Err is a failed
	// save. The trial waits for a Directive.
	EventSaved
	// EventExited: the trial's process or goroutine ended. Err is nil for a
	// normal end or a requested stop.
	EventExited
)

func (k EventKind) String() string {
	switch k {
	case EventResult:
		return "result"
	case EventSaved:
		return "saved"
	case EventExited:
		return "exited"
	}
	return "event(?)"
}

// Event is something that happened to a running trial.
type Event struct {
	Kind    EventKind
	TrialID string
	// Time is when it happened on the executor's clock (virtual for sim).
	Time time.Time
	// Metrics is the user's report (EventResult). Ownership passes to the
	// receiver.
	Metrics map[string]any
	// Done is set when the trial said this is its last result.
	Done bool
	// CheckpointDir is a staged checkpoint directory (absolute, local) that
	// the runner commits into storage, or "".
	CheckpointDir string
	// Err is the failure, for EventSaved and EventExited.
	Err error
	// PID and Hostname say where the trial ran (0 and "" if unknown).
	PID      int
	Hostname string
}

// ErrTrialStopped is what a trial sees when it is told to stop: function
// trainables get it from Report and may return it; an executor treats a
// trial that returns it as having stopped normally.
var ErrTrialStopped = errors.New("trial stopped")

// Contained is implemented by executors whose trials cannot outlive the
// runner's process (goroutines, simulated trials). The runner starts their
// trials without first handing the journal to the operating system: after
// a crash nothing they started is left running, so nothing outside can be
// ahead of the journal.
type Contained interface {
	Contained() bool
}

// Executor runs trials. The runner is its only caller and calls it from one
// goroutine. Protocol, per trial: Start; then the trial emits EventResult or
// EventSaved and waits, and the runner answers each with exactly one
// Direct; DirectStop (which may also be sent while the trial is computing)
// ends with EventExited, as does a trial that finishes or fails by itself.
// Every started trial emits exactly one EventExited.
type Executor interface {
	// Start begins running a trial. An error means it did not start and no
	// event will come for it.
	Start(spec StartSpec) error
	// Direct answers a waiting trial, or (DirectStop only) interrupts a
	// computing one.
	Direct(trialID string, d Directive) error
	// Next returns the next event, blocking until one arrives or ctx is
	// done (then it returns ctx.Err()). An executor with nothing running
	// returns ErrIdle at once.
	Next(ctx context.Context) (Event, error)
	// Close stops every trial and releases resources; Next must not be
	// called after it.
	Close() error
}

// ErrIdle is returned by Executor.Next when no trial is running, so no event
// can ever come.
var ErrIdle = errors.New("executor: no trial running")

// Clock tells the time. The sim executor's clock is virtual; the runner
// uses the executor's clock when it implements Clocked.
type Clock interface{ Now() time.Time }

// Clocked is an optional ability of executors that keep their own time.
type Clocked interface{ Clock() Clock }

// VirtualClock is implemented by a Clock whose time moves only with its
// executor's events (the sim executor's). When an executor's Clock is
// virtual, the runner steps each event, committing its checkpoint, before
// it takes the next, so that virtual time stays in order; with any other
// executor it commits checkpoints on a pool, holding each event (and its
// trial's later events) until its checkpoint is durable.
type VirtualClock interface {
	Clock
	Virtual() bool
}

// Store keeps committed checkpoint directories. Paths are relative to the
// experiment directory and use forward slashes. Called from the runner's
// goroutine, except Commit, which may run on other goroutines, concurrently
// with the other methods, for distinct paths.
type Store interface {
	// Commit atomically turns the staged local directory into the
	// checkpoint at dest: after it returns nil, all bytes are durable and a
	// crash cannot leave dest half-written. The staged directory is
	// consumed.
	Commit(staged, dest string) error
	// Link makes dest a copy of the committed checkpoint src, as cheaply as
	// the store allows (hard links locally).
	Link(src, dest string) error
	// Delete removes a committed checkpoint. Deleting a missing one is not
	// an error.
	Delete(path string) error
	// LocalDir returns a local directory holding the checkpoint's files,
	// for a trial to restore from.
	LocalDir(path string) (string, error)
	// List returns the committed checkpoint paths under a trial directory,
	// and separately any leftover uncommitted directories.
	List(trialDir string) (committed, leftovers []string, err error)
}

// TopLister is an optional extension of Store: the names of the entries
// at the top of the experiment directory, in one call. A resume's cleanup
// then lists only the trial directories that exist, where asking List for
// every trial costs a lookup per trial (most simulated or in-process
// trials that never checkpointed have no directory).
type TopLister interface {
	ListTop() ([]string, error)
}

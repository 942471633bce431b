package hone

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"path"
	"strings"
	"time"
)

// Directive is what the runner tells a trial that is waiting after a result
// or a save. Its values are the actions of the wire protocol's directive
// message (package wire), so that a trial in another process is told
// exactly the directive's text.
type Directive string

// The directives an Executor carries out.
const (
	// DirectContinue resumes training.
	DirectContinue Directive = "continue"
	// DirectCheckpoint asks the trial to checkpoint now; the executor
	// answers with an EventSaved and the trial waits for another directive.
	DirectCheckpoint Directive = "checkpoint"
	// DirectStop stops the trial gracefully; the executor answers with an
	// EventExited.
	DirectStop Directive = "stop"
)

func (d Directive) String() string { return string(d) }

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
	// Restore is the store path of that checkpoint ("" to start from
	// scratch). For an executor whose trials restore from the store
	// themselves (RemoteCommitter), it is set and RestoreDir is not.
	Restore string
	// Iteration is the training iteration the restored checkpoint was taken
	// at (0 when starting from scratch); the first result after the start
	// is Iteration+1.
	Iteration int
	Resources Resources
	// GPUs are the devices the trial gets, as indexes into the pool's GPUs
	// (0 to pool.GPU-1), ceil(Resources.GPU) of them: the controller,
	// which admits trials against the pool, hands them out, and an
	// executor that runs trials on this machine maps them to devices.
	GPUs []int
}

// EventKind names what an Event reports. Its values are journaled.
type EventKind string

// The kinds of events. An executor reports EventResult, EventSaved,
// EventExited and EventStarted; the runner adds the others. Every event the
// controller steps on is journaled before the controller sees it, so
// replaying the journal rebuilds the same state.
const (
	// EventBegin: the experiment starts.
	EventBegin EventKind = "begin"
	// EventResult: the trial reported metrics (and maybe a checkpoint) and
	// now waits for a Directive.
	EventResult EventKind = "result"
	// EventSaved: the trial answered DirectCheckpoint. CheckpointDir (or
	// CheckpointStored) is the staged checkpoint, or "" if the trial cannot
	// save on demand; Cause is a failed save. The trial waits for a
	// Directive.
	EventSaved EventKind = "saved"
	// EventExited: the trial's process or goroutine ended. Cause is nil for
	// a normal end or a requested stop.
	EventExited EventKind = "exited"
	// EventStartFailed: the executor could not start a trial.
	EventStartFailed EventKind = "startfail"
	// EventTick: time passed with no event.
	EventTick EventKind = "tick"
	// EventInterrupt: stop gracefully, keeping state for resume.
	EventInterrupt EventKind = "interrupt"
	// EventResume: the experiment resumes after a stop or crash, with the
	// options Resume (nil: the defaults).
	EventResume EventKind = "resume"
	// EventTrialFailed: the runner fails the trial for Err, which is not
	// the trial's own doing (its files could not be written). Only a
	// running trial fails; for any other the error is logged.
	EventTrialFailed EventKind = "trialfail"
	// EventCheckpointMissing: the checkpoint Checkpoint.Path, from which
	// the trial was just started, does not exist (deleted by hand). The
	// trial is started again from its newest other registered checkpoint,
	// or from scratch, and the experiment log says so.
	EventCheckpointMissing EventKind = "ckmissing"
	// EventStarted: a started trial began to run (a cluster job left the
	// queue, or the trial said hello), Hostname saying where if known.
	// Only an executor that announces starts (StartAnnouncer) emits it, at
	// most once per Start, before the trial's first result; nothing
	// answers it. It does not come after the trial was told to stop. With
	// such an executor (Settings.StartsAnnounced) a trial's per-trial
	// limits count from here; the controller ignores it for a trial that
	// is not running, was told to stop, or already started in its current
	// run.
	EventStarted EventKind = "started"
)

func (k EventKind) String() string { return string(k) }

// Event is one thing that happened to a trial or to the experiment: what
// an executor reports, what the runner journals, and what the controller
// steps on, all the same value. An executor sets Kind, TrialID, Time,
// Metrics, Done, Cause, PID and Hostname, and stages a checkpoint in
// CheckpointDir or CheckpointStored; the runner commits that checkpoint
// into the store and sets Checkpoint, and sets Err from Cause, before the
// event is journaled. Only the fields with a JSON name are journaled.
type Event struct {
	Kind    EventKind `json:"k"`
	TrialID string    `json:"t,omitempty"`
	// Time is when it happened, in unix nanoseconds, on the executor's
	// clock (virtual for sim); At returns it as a time.Time.
	Time int64 `json:"ns"`
	// Metrics is the user's report (EventResult). Ownership passes to the
	// receiver.
	Metrics map[string]any `json:"m,omitempty"`
	// Done is set when the trial said this is its last result.
	Done bool `json:"d,omitempty"`
	// Checkpoint is the checkpoint the runner committed for the event (its
	// staged CheckpointDir or CheckpointStored), or nil.
	Checkpoint *CheckpointRef `json:"c,omitempty"`
	// Err is the failure's text (Cause's), as journaled; "" for none.
	Err string `json:"e,omitempty"`
	// PID and Hostname say where the trial ran (0 and "" if unknown).
	PID      int    `json:"pid,omitempty"`
	Hostname string `json:"host,omitempty"`
	// Resume holds the options of an EventResume (nil: the defaults).
	Resume *ResumeFlags `json:"r,omitempty"`
	// Cause is the failure as an error, as the executor (or the runner)
	// met it, for EventSaved and EventExited: the runner sets Err from it,
	// and it keeps the failure's type for callbacks and for the error that
	// ends an experiment under fail_fast. It is not journaled: a replayed
	// event has only Err, and decisions depend on Err alone.
	Cause error `json:"-"`
	// CheckpointDir is a staged checkpoint directory (absolute, local) that
	// the runner commits into the store, setting Checkpoint, before the
	// event is journaled; "" for none. It is not journaled.
	CheckpointDir string `json:"-"`
	// CheckpointStored is, instead, a checkpoint the trial's side already
	// committed to the experiment's store, at a path under its trial's
	// UploadDirName (see RemoteCommitter): the runner makes it the
	// trial's next checkpoint with the store's Link, deletes it, and sets
	// Checkpoint. It is not journaled.
	CheckpointStored string `json:"-"`
}

// At returns the event's time.
func (ev *Event) At() time.Time { return time.Unix(0, ev.Time) }

// CheckpointRef names a checkpoint the runner committed for an event: its
// index among the trial's checkpoints and its path in the store.
type CheckpointRef struct {
	Index int    `json:"i"`
	Path  string `json:"p"`
}

// ResumeFlags are the options of a resume (docs/SEMANTICS.md §3), carried
// by its EventResume.
type ResumeFlags struct {
	// Unfinished resumes PENDING, RUNNING and PAUSED trials; when false they
	// are terminated. Default true in the runner.
	Unfinished bool `json:"unfinished"`
	// Errored retries ERROR trials from their latest checkpoint.
	Errored bool `json:"errored,omitempty"`
	// RestartErrored restarts ERROR trials from scratch under a new id.
	RestartErrored bool `json:"restart_errored,omitempty"`
	// Settings, when set, are the settings the resumed session runs with
	// (see Settings); nil keeps the ones in use.
	Settings *Settings `json:"settings,omitempty"`
}

// Settings are the parts of an experiment that a resume may change (a
// resume with another spec: more CPUs per trial, a different concurrency
// cap, more retries) although the controller's decisions depend on them.
// A journal replay must see each session with the settings it ran with, or
// the rebuilt state would not match the journal: the runner journals the
// first session's settings in the journal's header and each resume's in
// its EventResume (ResumeFlags.Settings), and the controller applies them
// at those points. Everything else a decision depends on (metric, mode,
// seed, search space, searcher, scheduler, stoppers, checkpoint scoring)
// is fixed for the experiment's life.
type Settings struct {
	// Pool is the resource pool trials share.
	Pool Resources `json:"pool"`
	// Resources is what each new trial needs, or nil when the experiment
	// sizes trials with ResourcesFn (which is not data, so a Go caller
	// must resume with the same function).
	Resources *Resources `json:"resources,omitempty"`
	// MaxConcurrentTrials, MaxPendingTrials, Failure, TrialTimeout and
	// ReportTimeout are the Experiment fields of the same names.
	MaxConcurrentTrials int           `json:"max_concurrent_trials,omitempty"`
	MaxPendingTrials    int           `json:"max_pending_trials,omitempty"`
	Failure             FailureConfig `json:"failure"`
	TrialTimeout        time.Duration `json:"trial_timeout,omitempty"`
	ReportTimeout       time.Duration `json:"report_timeout,omitempty"`
	// StartsAnnounced says the session's executor announces when a
	// started trial begins to run (StartAnnouncer): a trial's per-trial
	// limits then count from its EventStarted, not from its start, so
	// that time in a cluster's queue is not held against it. It is the
	// executor's, so a resume with another executor changes it.
	StartsAnnounced bool `json:"starts_announced,omitempty"`
	// SpareIDs says that the id of a suggestion the searcher declined
	// (ErrNotNow) is kept for the next one rather than drawn again, so
	// that trial ids do not depend on how often the searcher was asked.
	// Every session of hone sets it; a journal whose sessions ran without
	// it (absent: false) replays with the ids it drew then.
	SpareIDs bool `json:"spare_ids,omitempty"`
}

// ErrTrialStopped is what a trial sees when it is told to stop: function
// trainables get it from Report and may return it; an executor treats a
// trial that returns it as having stopped normally.
var ErrTrialStopped = errors.New("trial stopped")

// ErrStopExperiment is wrapped by the Cause of an EventExited whose cause is
// not the trial but where it ran, so that retrying it elsewhere cannot
// help (a cluster's nodes that do not see the experiment's storage). The
// runner does not fail such a trial: it stops the experiment, as for a
// full disk, with the trial left to resume from its latest checkpoint
// once the cause is fixed.
var ErrStopExperiment = errors.New("the experiment cannot go on until this is fixed")

// RemoteCommitter is implemented by executors whose trials run on other
// machines and talk to the experiment's store themselves: a trial's side
// commits each checkpoint to the store under its trial directory's
// UploadDirName (Event.CheckpointStored) and downloads the checkpoint it
// restores from (StartSpec.Restore), so that no checkpoint's bytes pass
// through the runner's machine. The runner then neither downloads
// restore points nor uploads checkpoints for it.
type RemoteCommitter interface {
	CommitsRemotely() bool
}

// Contained is implemented by executors whose trials cannot outlive the
// runner's process (goroutines, simulated trials). The runner starts their
// trials without first handing the journal to the operating system: after
// a crash nothing they started is left running, so nothing outside can be
// ahead of the journal.
type Contained interface {
	Contained() bool
}

// StartAnnouncer is implemented by executors whose trials may wait after
// Start before they run: a cluster's queue holds a job until nodes are
// free, a job step waits for resources in its allocation. When
// AnnouncesStarts reports true, the executor emits an EventStarted once
// each started trial runs, and the runner counts a trial's per-trial
// limits (Experiment.TrialTimeout, ReportTimeout) from that event rather
// than from Start: a trial is not timed out while it is queued. Executors
// whose trials run at Start (child processes, goroutines, simulated
// trials) need not implement it.
type StartAnnouncer interface {
	AnnouncesStarts() bool
}

// Executor runs trials. The runner is its only caller and calls it from one
// goroutine. Protocol, per trial: Start; then the trial emits EventResult or
// EventSaved and waits, and the runner answers each with exactly one
// Direct; DirectStop (which may also be sent while the trial is computing)
// ends with EventExited, as does a trial that finishes or fails by itself.
// Every started trial emits exactly one EventExited. An executor that
// announces starts (StartAnnouncer) also emits an EventStarted when the
// trial begins to run, before its first result.
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
// experiment directory and use forward slashes. Every method takes a
// context first: a cancelled or expired ctx makes the method give up (a
// remote store stops its retries at once) and return an error wrapping
// ctx.Err(); what such a method leaves behind is never registered (see
// Commit) and is a leftover for List. The runner calls the store from its
// goroutine, except Commit and Delete, which run on its store pool,
// concurrently with the other methods, for distinct paths. A Store must
// not depend on the runner: a trial-side process (an executor's uploader
// on another machine) may open one and commit to it directly.
type Store interface {
	// Commit atomically turns the staged local directory into the
	// checkpoint at dest: after it returns nil, all bytes are durable and a
	// crash cannot leave dest half-written; dest is registered (List
	// reports it committed) only once everything under it is durable. An
	// error, including ctx's, leaves dest unregistered. The staged
	// directory is consumed on success and left in place on error.
	Commit(ctx context.Context, staged, dest string) error
	// Link makes dest a copy of the committed checkpoint src, as cheaply as
	// the store allows (hard links locally, server-side copies remotely).
	Link(ctx context.Context, src, dest string) error
	// Delete removes a committed checkpoint (or a leftover List reported).
	// Deleting a missing one is not an error.
	Delete(ctx context.Context, path string) error
	// LocalDir returns a local directory holding the checkpoint's files,
	// for a trial to restore from. Its files must not be modified.
	LocalDir(ctx context.Context, path string) (string, error)
	// List returns the committed checkpoint paths under a trial directory,
	// and separately any leftover uncommitted ones (a cut-short or failed
	// commit, a staged directory never committed), which Delete removes.
	List(ctx context.Context, trialDir string) (committed, leftovers []string, err error)
}

// FileCommitter is an optional extension of Store: it commits a checkpoint
// from a stream of files instead of a staged local directory, writing each
// file straight to the checkpoint's final place (no local staging copy,
// no second pass). It is meant for trial-side uploaders, which send a
// trial's checkpoint to storage from the machine the trial ran on without
// going through the runner; the runner itself commits staged directories.
//
// CommitFiles pulls files in order: each is a slash-separated path relative
// to the checkpoint (clean, not escaping it, no duplicates) and a reader of
// its content, read to io.EOF before the next is pulled; the reader is
// valid until the iteration continues and is not closed by the store. A
// reader's error (a producer that cannot produce a file yields a reader
// that returns the error) fails the commit. The checkpoint is registered
// only after every file is durable, exactly as for Commit (an object
// store writes its manifest last); on any error, including ctx's, dest is
// not registered and what was written is removed or left as a leftover for
// List. If dest is already committed the error wraps fs.ErrExist.
type FileCommitter interface {
	CommitFiles(ctx context.Context, dest string, files iter.Seq2[string, io.Reader]) error
}

// TopLister is an optional extension of Store: the names of the entries
// at the top of the experiment directory, in one call. A resume's cleanup
// then lists only the trial directories that exist, where asking List for
// every trial costs a lookup per trial (most simulated or in-process
// trials that never checkpointed have no directory). Every trial directory
// for which List would report anything, committed or leftover, must be
// among the names.
type TopLister interface {
	ListTop(ctx context.Context) ([]string, error)
}

// TreeLister is an optional extension of Store: what List reports for
// every trial directory at once. An object store answers it with one
// listing of the experiment where List costs a request per trial, so a
// resume's cleanup of an experiment with many trials prefers it. The map
// is keyed by trial directory (clean, slash-separated, as passed to List)
// and holds every directory for which List would report anything, with
// the same committed and leftover paths, in the same order.
type TreeLister interface {
	ListTree(ctx context.Context) (map[string]Listing, error)
}

// Listing is what List reports for one trial directory.
type Listing struct {
	Committed, Leftovers []string
}

// CheckFileName returns nil if name may name a file of a checkpoint
// committed with FileCommitter: a non-empty, clean, slash-separated path
// relative to the checkpoint that does not leave it ("a/b.bin", not
// "/a", "../a", "a//b", "./a" or "a\\b"), and an error saying why not
// otherwise.
func CheckFileName(name string) error {
	switch {
	case name == "" || name == ".":
		return fmt.Errorf("checkpoint file name %q is empty", name)
	case strings.Contains(name, "\\"):
		return fmt.Errorf("checkpoint file name %q holds a backslash; use forward slashes", name)
	case path.IsAbs(name):
		return fmt.Errorf("checkpoint file name %q is absolute; it must be relative to the checkpoint", name)
	case path.Clean(name) != name:
		return fmt.Errorf("checkpoint file name %q is not clean (want %q)", name, path.Clean(name))
	case name == ".." || strings.HasPrefix(name, "../"):
		return fmt.Errorf("checkpoint file name %q leaves the checkpoint", name)
	}
	return nil
}

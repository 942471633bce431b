package controller

import (
	"time"

	"github.com/hone-tune/hone"
)

// InputKind names what an Input reports.
type InputKind string

// The inputs the controller steps on. Every input is journaled before the
// controller sees it, so replaying the journal rebuilds the same state.
const (
	InBegin       InputKind = "begin"     // the experiment starts
	InResult      InputKind = "result"    // a trial reported (EventResult)
	InSaved       InputKind = "saved"     // a trial answered a save (EventSaved)
	InExited      InputKind = "exited"    // a trial's process ended (EventExited)
	InStartFailed InputKind = "startfail" // the executor could not start a trial
	InTick        InputKind = "tick"      // time passed with no event
	InInterrupt   InputKind = "interrupt" // stop gracefully, keeping state for resume
	InResume      InputKind = "resume"    // the experiment resumes after a stop or crash
	// InTrialFailed: the runner fails the trial for Err, which is not the
	// trial's own doing (its files could not be written). Only a running
	// trial fails; for any other the error is logged.
	InTrialFailed InputKind = "trialfail"
	// InCheckpointMissing: the checkpoint Checkpoint.Path, from which the
	// trial was just started, does not exist (deleted by hand). The trial
	// is started again from its newest other registered checkpoint, or
	// from scratch, and the experiment log says so.
	InCheckpointMissing InputKind = "ckmissing"
	// InStarted: a started trial began to run (EventStarted), with an
	// executor that announces starts (Settings.StartsAnnounced): its
	// per-trial limits count from here. Ignored for a trial that is not
	// running, was told to stop, or already started in its current run.
	InStarted InputKind = "started"
)

// CheckpointRef names a checkpoint the runner committed for an input.
type CheckpointRef struct {
	Index int    `json:"i"`
	Path  string `json:"p"`
}

// ResumeFlags are the options of a resume (docs/SEMANTICS.md §3).
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

// Input is one thing that happened, fed to Controller.Step.
type Input struct {
	Kind       InputKind      `json:"k"`
	Trial      string         `json:"t,omitempty"`
	Time       int64          `json:"ns"` // unix nanoseconds
	Metrics    map[string]any `json:"m,omitempty"`
	Done       bool           `json:"d,omitempty"`
	Checkpoint *CheckpointRef `json:"c,omitempty"`
	Err        string         `json:"e,omitempty"`
	PID        int            `json:"pid,omitempty"`
	Hostname   string         `json:"host,omitempty"`
	Resume     *ResumeFlags   `json:"r,omitempty"`
	// Cause is Err as an error, as the executor (or the runner) met it,
	// so that a trial's failure keeps its type for callbacks and for the
	// error that ends an experiment under fail_fast. It is not journaled:
	// a replayed input has only Err, and decisions depend on Err alone.
	Cause error `json:"-"`
}

// At returns the input's time.
func (in *Input) At() time.Time { return time.Unix(0, in.Time) }

// FromEvent converts an executor event into an input. The runner commits
// the event's staged checkpoint first and passes its reference (or nil).
func FromEvent(ev hone.Event, cp *CheckpointRef) Input {
	in := Input{Trial: ev.TrialID, Time: ev.Time.UnixNano(), Metrics: ev.Metrics,
		Done: ev.Done, Checkpoint: cp, PID: ev.PID, Hostname: ev.Hostname}
	switch ev.Kind {
	case hone.EventResult:
		in.Kind = InResult
	case hone.EventSaved:
		in.Kind = InSaved
	case hone.EventExited:
		in.Kind = InExited
	case hone.EventStarted:
		in.Kind = InStarted
	}
	if ev.Err != nil {
		in.Cause = ev.Err
		in.Err = ev.Err.Error()
		if in.Err == "" {
			in.Err = "error"
		}
	}
	return in
}

// ActionKind names what an Action asks the runner to do.
type ActionKind int

// The actions.
const (
	// ActRecord: append Record to the journal (before anything else in the
	// same batch is acted on).
	ActRecord ActionKind = iota + 1
	// ActStart: start Trial, restoring from Checkpoint if not nil.
	ActStart
	// ActDirect: send Directive to Trial.
	ActDirect
	// ActDelete: delete the committed Checkpoint.
	ActDelete
	// ActNotify: tell the callbacks Note about Trial (Result, Checkpoint, Err).
	ActNotify
	// ActLog: write Text to the experiment log.
	ActLog
	// ActAppend: append the line Text to the file Path (relative to the
	// experiment directory), creating it if needed.
	ActAppend
	// ActCopy: make the file Path a copy of the file Src (both relative to
	// the experiment directory); a missing Src makes Path empty.
	ActCopy
)

// Note is the callback an ActNotify action calls.
type Note int

// The notes, one per hone.Callback method.
const (
	NoteStart Note = iota + 1
	NoteResult
	NoteCheckpoint
	NoteComplete
	NoteError
	NoteEnd
)

// Action is one thing the runner must do. Pointers refer to controller
// state that stays valid until the next Step.
type Action struct {
	Kind       ActionKind
	Trial      *hone.Trial
	Directive  hone.Directive
	Checkpoint *hone.Checkpoint
	Result     *hone.Result
	Note       Note
	Err        string
	Text       string
	Record     *Record
	// Iteration is the training iteration a started trial resumes from.
	Iteration int
	// GPUs are the pool's GPUs, by index (0 to pool.GPU-1), a started
	// trial holds until it exits: the controller is the one ledger of the
	// pool, and executors hand out these devices.
	GPUs []int
	// Path and Src are files for ActAppend and ActCopy.
	Path, Src string
	// Cause is the error behind Err for NoteError, when the input that
	// failed the trial carried one (Input.Cause); else nil.
	Cause error
}

// Record is a journal line describing state the controller decided: trials
// created, statuses, configurations and checkpoints. Readers of an
// experiment directory rebuild trial state from records alone; resume
// replays inputs instead.
type Record struct {
	Op        string          `json:"o"` // trial, status, config, ckpt, ckdel, drop
	Trial     string          `json:"t"`
	Index     int             `json:"idx,omitempty"`
	Config    hone.Config     `json:"cfg,omitempty"`
	Tag       string          `json:"tag,omitempty"`
	Dir       string          `json:"dir,omitempty"`
	Status    hone.Status     `json:"st,omitempty"`
	Error     string          `json:"err,omitempty"`
	Failures  int             `json:"fail,omitempty"`
	Path      string          `json:"p,omitempty"`
	CkIndex   int             `json:"ci,omitempty"`
	Iteration int             `json:"it,omitempty"`
	TimeTotal float64         `json:"tt,omitempty"`
	Resources *hone.Resources `json:"res,omitempty"`
}

package controller

import (
	"github.com/hone-tune/hone"
)

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
	// failed the trial carried one (Event.Cause); else nil.
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

package wire

import "github.com/hone-tune/hone"

// Version is the protocol version this package speaks.
const Version = 1

// MaxMessageSize is the largest message, in bytes, including its newline.
const MaxMessageSize = 1 << 20

// ReportPrefix starts a stdout fallback report line.
const ReportPrefix = "HONE_REPORT "

// Message types.
const (
	TypeHello     = "hello"
	TypeWelcome   = "welcome"
	TypeReport    = "report"
	TypeDirective = "directive"
	TypeSaved     = "saved"
	TypeError     = "error"
)

// Directive actions: the directive message's action is the text of the
// hone.Directive the trial is told.
const (
	ActionContinue   = string(hone.DirectContinue)
	ActionCheckpoint = string(hone.DirectCheckpoint)
	ActionStop       = string(hone.DirectStop)
)

// Environment variable names.
const (
	EnvProtocol   = "HONE_PROTOCOL"
	EnvSocket     = "HONE_SOCKET"
	EnvToken      = "HONE_TOKEN"
	EnvTrialID    = "HONE_TRIAL_ID"
	EnvTrialDir   = "HONE_TRIAL_DIR"
	EnvStagingDir = "HONE_STAGING_DIR"
	EnvRestoreDir = "HONE_RESTORE_DIR"
	EnvIteration  = "HONE_ITERATION"
	EnvConfig     = "HONE_CONFIG"
	// EnvHost, when set, is what a trial's hello names as its machine:
	// the slurm executor's check of a job-mode trial's node and the node
	// agent set it to the node's name. Clients fall back to
	// EnvSlurmNode, which Slurm sets in every job step (a step-mode
	// trial runs as its step's task, with nothing of hone's around it),
	// then to the host name.
	EnvHost = "HONE_HOST"
	// EnvSlurmNode is Slurm's name of the node a job step runs on.
	EnvSlurmNode = "SLURMD_NODENAME"
	// EnvStorage, EnvStoreTrialDir and EnvRestoreCheckpoint are for a
	// node agent (hone agent) that commits a remote trial's checkpoints
	// to the experiment's object store itself: the store's URL, the
	// trial's directory in it, and the store path of the checkpoint to
	// restore ("" for none). The agent gives the trial local
	// HONE_TRIAL_DIR, HONE_STAGING_DIR and HONE_RESTORE_DIR instead.
	EnvStorage           = "HONE_STORAGE"
	EnvStoreTrialDir     = "HONE_STORE_TRIAL_DIR"
	EnvRestoreCheckpoint = "HONE_RESTORE_CHECKPOINT"
)

// StoredPrefix starts the checkpoint of a report or saved message that a
// node agent has committed to the experiment's store already: the rest
// is its store path, under the trial's hone.UploadDirName.
const StoredPrefix = "store:"

// Message is any protocol message; Type says which fields matter.
type Message struct {
	Type       string         `json:"type"`
	V          int            `json:"v,omitempty"`          // hello, welcome
	Token      string         `json:"token,omitempty"`      // hello
	TrialID    string         `json:"trial_id,omitempty"`   // hello
	CanSave    bool           `json:"can_save,omitempty"`   // hello
	Host       string         `json:"host,omitempty"`       // hello: the machine the trial runs on
	Metrics    map[string]any `json:"metrics,omitempty"`    // report
	Checkpoint string         `json:"checkpoint,omitempty"` // report, saved
	Done       bool           `json:"done,omitempty"`       // report
	Action     string         `json:"action,omitempty"`     // directive
	Reason     string         `json:"reason,omitempty"`     // directive
	Error      string         `json:"error,omitempty"`      // saved
	Message    string         `json:"message,omitempty"`    // error
}

package process

import (
	"syscall"

	"github.com/hone-tune/hone"
)

// Launcher starts trials' commands somewhere other than as child
// processes of hone: a batch job on a cluster, say. The executor keeps
// everything else: the protocol with the trial (over TCP, Options.Listen),
// its directives, stops and events. A launched trial writes its own
// standard output and error to the files LaunchSpec names; it reports
// over its connection only (the HONE_REPORT fallback on standard output
// needs a child process).
//
// Launch is called from the runner's goroutine; the Launched methods from
// the executor's goroutines, concurrently.
//
// A launched trial may wait before it runs (in a cluster's queue): the
// executor announces starts (hone.StartAnnouncer), emitting a
// hone.EventStarted when the Launched says it runs (Queued) or the
// trial's hello arrives, whichever comes first, so that hone counts the
// trial's limits from then.
type Launcher interface {
	Launch(spec LaunchSpec) (Launched, error)
}

// LaunchSpec is one start of one trial.
type LaunchSpec struct {
	TrialID string
	// Argv is the command (Options.Command).
	Argv []string
	// Env is the trial's whole environment, HONE_* included.
	Env []string
	// Dir is the working directory (Options.Dir), TrialDir the trial's
	// directory.
	Dir, TrialDir string
	// Stdout and Stderr are the files the trial's output is appended to.
	Stdout, Stderr string
	// Resources is what the trial needs.
	Resources hone.Resources
}

// Launched is one launched trial.
type Launched interface {
	// Signal asks the trial to stop (syscall.SIGTERM) or ends it at once
	// (syscall.SIGKILL). It may be called after the trial ended, and
	// concurrently with itself: the executor calls it on a goroutine of
	// its own, so it may take a while.
	Signal(sig syscall.Signal) error
	// Wait blocks until the trial has ended and returns nil when it ended
	// well (or after Signal), else why it failed. It is called once.
	Wait() error
	// Where says where the trial runs: the node (or "" when the launcher
	// does not know it: the trial's hello names it) and the launcher's
	// name for the run, such as "slurm job 12" ("" while not known).
	Where() (node, id string)
}

// Queued is implemented by a Launched whose trial may wait before its
// command runs, and whose launcher can tell when it does (a cluster job
// that leaves the queue). Running returns a channel closed once the
// trial's command runs, or nil when the launcher cannot tell; it is
// called once, after Launch returned. The executor announces the trial
// started (hone.EventStarted) when the channel is closed or the trial's
// hello arrives, whichever comes first: a launcher that cannot tell
// leaves it to the hello.
type Queued interface {
	Running() <-chan struct{}
}

// Preparer is implemented by a Launcher that must find what a killed run
// of hone left running, or check where trials will run, before any start
// (the executor's Prepare calls it with the executor's state directory).
// Its error says what failed.
type Preparer interface {
	Prepare(stateDir string) error
}

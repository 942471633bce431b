package slurmcmd

import (
	"fmt"
	"strings"
)

// Outcome is what a job's state means to hone.
type Outcome int

// The outcomes Classify tells apart.
const (
	// Unknown is a state this package does not know.
	Unknown Outcome = iota
	// Pending jobs wait to start (PENDING, REQUEUED, the holds).
	Pending
	// Running jobs have started and not ended (RUNNING, COMPLETING,
	// CONFIGURING, SUSPENDED, SIGNALING...).
	Running
	// Completed jobs exited 0 (COMPLETED).
	Completed
	// Failed jobs exited non-zero or were ended by a signal that Slurm
	// did not send (FAILED, SPECIAL_EXIT).
	Failed
	// Cancelled jobs were cancelled by scancel, an administrator or
	// Slurm (CANCELLED, REVOKED).
	Cancelled
	// Timeout jobs hit their time limit or deadline (TIMEOUT, DEADLINE).
	Timeout
	// NodeFail jobs lost a node (NODE_FAIL, BOOT_FAIL).
	NodeFail
	// OutOfMemory jobs were killed for using more memory than they asked
	// for (OUT_OF_MEMORY).
	OutOfMemory
	// Preempted jobs were ended for a job of higher priority (PREEMPTED).
	Preempted
)

// String returns the outcome in words: "node failure", "timeout"...
func (o Outcome) String() string {
	switch o {
	case Unknown:
		return "unknown"
	case Pending:
		return "pending"
	case Running:
		return "running"
	case Completed:
		return "completed"
	case Failed:
		return "failed"
	case Cancelled:
		return "cancelled"
	case Timeout:
		return "timeout"
	case NodeFail:
		return "node failure"
	case OutOfMemory:
		return "out of memory"
	case Preempted:
		return "preempted"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// Ended reports whether the outcome is the end of the job.
func (o Outcome) Ended() bool {
	return o >= Completed
}

// Classify returns what Slurm's job state means: squeue's %T, scontrol's
// JobState or sacct's State ("CANCELLED by 0" is CANCELLED), in any case.
func Classify(state string) Outcome {
	s, _, _ := strings.Cut(strings.TrimSpace(state), " ")
	s, _, _ = strings.Cut(s, "+") // a state with flags, as some versions print
	switch strings.ToUpper(s) {
	case "PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD":
		return Pending
	case "RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED", "STOPPED",
		"SIGNALING", "STAGE_OUT", "RESIZING", "UPDATE_DB", "POWER_UP_NODE":
		return Running
	case "COMPLETED":
		return Completed
	case "FAILED", "SPECIAL_EXIT":
		return Failed
	case "CANCELLED", "REVOKED":
		return Cancelled
	case "TIMEOUT", "DEADLINE":
		return Timeout
	case "NODE_FAIL", "BOOT_FAIL":
		return NodeFail
	case "OUT_OF_MEMORY":
		return OutOfMemory
	case "PREEMPTED":
		return Preempted
	}
	return Unknown
}

// Summary says in one line how the job ended, or where it is, for a
// trial's error.txt: "slurm job 11 ended NODE_FAIL on n2 (NodeDown)",
// "slurm job 4 ended FAILED on n1 (NonZeroExitCode), exit code 3",
// "slurm job 3 ended FAILED on n1 (JobLaunchFailure), signal 15".
func (j Job) Summary() string {
	var b strings.Builder
	b.WriteString("slurm job " + j.ID)
	if Classify(j.State).Ended() {
		b.WriteString(" ended ")
	} else {
		b.WriteString(" is ")
	}
	b.WriteString(j.State)
	if j.Nodes != "" {
		b.WriteString(" on " + j.Nodes)
	}
	if j.Reason != "" {
		b.WriteString(" (" + j.Reason + ")")
	}
	switch {
	case j.Signal > 0:
		fmt.Fprintf(&b, ", signal %d", j.Signal)
	case j.ExitCode > 0:
		fmt.Fprintf(&b, ", exit code %d", j.ExitCode)
	}
	return b.String()
}

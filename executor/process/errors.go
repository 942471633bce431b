package process

// ExitError is the end of a trial process that failed by itself: it
// exited with a non-zero status, or a signal that hone did not send
// ended it.
type ExitError struct {
	// Status says how the process ended, as os.ProcessState does:
	// "exit status 3", "signal: segmentation fault".
	Status string
	// ExitCode is the exit status, or -1 when a signal ended the process.
	ExitCode int
	// Stderr holds the last lines (at most 20) of the process's standard
	// error.
	Stderr string
}

// Error returns the status followed by the last lines of stderr, e.g.
//
//	trial process failed: exit status 3
//	last lines of stderr:
//	Traceback (most recent call last):
//	...
func (e *ExitError) Error() string {
	s := "trial process failed: " + e.Status
	if e.Stderr != "" {
		s += "\nlast lines of stderr:\n" + e.Stderr
	}
	return s
}

// ProtocolError is the end of a trial process that broke the protocol of
// package wire; hone killed it.
type ProtocolError struct {
	// Err says what was wrong, in the words sent to the trial.
	Err error
}

// Error returns "protocol error: " and what was wrong.
func (e *ProtocolError) Error() string { return "protocol error: " + e.Err.Error() }

// Unwrap returns Err.
func (e *ProtocolError) Unwrap() error { return e.Err }

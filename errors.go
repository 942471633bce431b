package hone

import (
	"fmt"
	"strings"
)

// TrialFailedError is a trial's failure, as callbacks (OnTrialError) and
// the error that ends an experiment under fail_fast (FailFastError) carry
// it. Msg is the failure as hone records it: the text of the trial's error
// file, which Error returns. Err is the error itself, as the executor
// reported it (the process executor's *process.ExitError, what a function
// trainable returned, a checkpoint that could not be committed), when the
// session that failed the trial saw it; it is nil when hone failed the
// trial itself (a timeout, a scheduler's FailTrial) and after a resume,
// which has only the journal's text. errors.Is and errors.As reach Err
// through Unwrap.
type TrialFailedError struct {
	TrialID string
	Msg     string
	Err     error
}

// Error returns Msg.
func (e *TrialFailedError) Error() string { return e.Msg }

// Unwrap returns Err.
func (e *TrialFailedError) Unwrap() error { return e.Err }

// FailFastError is the error that ends an experiment under fail_fast
// (FailureConfig.FailFast): Trial failed for good. runner.Run and
// runner.Resume return it (wrapped), and the hone command decides its exit
// code by it.
type FailFastError struct {
	Trial *TrialFailedError
}

// Error names the trial and the first line of its failure.
func (e *FailFastError) Error() string {
	msg, _, _ := strings.Cut(e.Trial.Msg, "\n")
	return fmt.Sprintf("trial %s failed and fail_fast is set: %s", e.Trial.TrialID, msg)
}

// Unwrap returns the trial's failure.
func (e *FailFastError) Unwrap() error { return e.Trial }

// ParamError is an invalid parameter of a plugin (a searcher, scheduler,
// executor or store) as its configuration's Validate reports it: Plugin
// names the plugin ("asha"), Param the parameter ("grace_period"; a dotted
// path for one inside another, "hyperparam_mutations.lr"; "" when the
// problem is no single parameter's), and Err what is wrong, worded with
// the parameter, as "grace_period = 0: must be > 0". A spec reports it at
// the parameter's line.
type ParamError struct {
	Plugin string
	Param  string
	Err    error
}

// Error returns "Plugin: Err".
func (e *ParamError) Error() string { return e.Plugin + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *ParamError) Unwrap() error { return e.Err }

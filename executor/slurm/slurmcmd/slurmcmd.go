// Package slurmcmd drives Slurm through its commands: it builds the
// arguments of srun, sbatch, squeue, scontrol, sacct and scancel, parses
// their output, and classifies the state a job ended in. It is the only
// place the slurm executor knows Slurm's command lines and output formats
// from; it needs no Slurm library, only the commands on the PATH (and
// SLURM_CONF where the cluster's configuration is not the default).
//
// It is tested against Slurm 22.05 (Debian 12's), on the cluster of
// scripts/slurm.sh.
//
// # Signals and steps
//
// A trial that runs as a step (StepArgs) is ended by signalling the step,
// not its srun: srun answers SIGTERM (and SIGQUIT, SIGHUP) by killing the
// step's tasks with SIGKILL at once ("forcing job termination"), answers
// one SIGINT with a status line only and two within a second with SIGINT
// to the tasks, after which it may exit 0 whatever the tasks did. A step is
// stopped gracefully with Cancel(ctx, "TERM", "JOB.STEP"): the task gets
// SIGTERM, and srun exits with the task's status.
//
// srun forks a watcher that cancels the step if srun dies: a SIGKILL of
// srun alone ends the step within a second. A SIGKILL of srun and its
// watcher together (of their process group, say) leaves the step running
// without anyone to read its output; such orphan steps are found with
// StepsArgs and ended with Cancel.
package slurmcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Runner runs one Slurm command and returns its standard output. Its
// error, when the command fails, is a *CmdError carrying the command, its
// exit status and its standard error.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// Exec is the Runner that runs the commands with os/exec.
type Exec struct {
	// Env is the commands' environment; nil is this process's.
	Env []string
	// Dir is the commands' working directory; "" is this process's.
	Dir string
}

// Run runs name with args and returns its standard output; it returns a
// *CmdError if the command cannot start, fails, or ctx ends first.
func (e Exec) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = e.Env
	cmd.Dir = e.Dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		ce := &CmdError{Args: append([]string{name}, args...), ExitCode: -1, Stderr: strings.TrimSpace(stderr.String()), Err: err}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ce.ExitCode = ee.ExitCode()
		}
		if ctx.Err() != nil {
			ce.Err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return stdout.Bytes(), ce
	}
	return stdout.Bytes(), nil
}

// CmdError is a Slurm command that failed.
type CmdError struct {
	// Args is the command and its arguments.
	Args []string
	// ExitCode is the command's exit status, or -1 when it did not exit
	// by itself (it could not start, or a signal ended it).
	ExitCode int
	// Stderr is the command's standard error, trimmed.
	Stderr string
	// Err is what os/exec returned.
	Err error
}

// maxErrorArgs is how much of the command line an error message shows.
const maxErrorArgs = 300

// Error returns the command line (shortened past a few hundred bytes),
// the status and the standard error on one line, e.g.
//
//	sbatch --parsable --partition=nope ...: exit status 1: sbatch: error: invalid partition specified: nope
func (e *CmdError) Error() string {
	cmd := strings.Join(e.Args, " ")
	if len(cmd) > maxErrorArgs {
		cmd = cmd[:maxErrorArgs] + "..."
	}
	s := cmd + ": " + e.Err.Error()
	if e.Stderr != "" {
		s += ": " + strings.ReplaceAll(e.Stderr, "\n", "; ")
	}
	return s
}

// Unwrap returns Err.
func (e *CmdError) Unwrap() error { return e.Err }

// stderrOf returns the standard error a *CmdError in err's chain carries,
// or "".
func stderrOf(err error) string {
	var ce *CmdError
	if errors.As(err, &ce) {
		return ce.Stderr
	}
	return ""
}

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/spec"
	"github.com/hone-tune/hone/trial"
)

// negativeError is a trainable's own error type, which must reach the
// CLI's exit-code decision intact.
type negativeError struct{ x float64 }

func (e *negativeError) Error() string { return fmt.Sprintf("negative x = %v", e.x) }

// TestFailFastErrorKeepsItsType: under fail_fast, the error a trial fails
// with reaches the exit-code decision of hone run as a typed error: a
// *hone.FailFastError naming the trial, wrapping its *hone.TrialFailedError,
// wrapping the trainable's own error; and the exit code follows from the
// types alone.
func TestFailFastErrorKeepsItsType(t *testing.T) {
	exec := func(spec.Process) (hone.Executor, error) {
		return inproc.NewFunc(func(ctx context.Context, s trial.Session) error {
			x, _ := hone.Number(s.Config()["x"])
			if x < 0 {
				return &negativeError{x}
			}
			for it := s.Iteration() + 1; ; it++ {
				if err := s.Report(trial.Metrics{"score": x * float64(it)}); err != nil {
					return err
				}
			}
		}), nil
	}
	path, _ := writeSpec(t, "fast", strings.Replace(gridSpec, "[1, 3, 2]", "[-1, 1]", 1)+"failure: {fail_fast: true}\n")
	var out, errb bytes.Buffer
	a := newApp(&out, &errb)
	a.newExecutor = exec
	err := a.command(context.Background(), []string{"run", path})
	if err == nil {
		t.Fatalf("run: no error\n%s", errb.String())
	}
	var ff *hone.FailFastError
	if !errors.As(err, &ff) || ff.Trial == nil || ff.Trial.TrialID == "" || !strings.Contains(ff.Trial.Msg, "negative x = -1") {
		t.Fatalf("run: %v (%T), want a *hone.FailFastError naming the trial", err, err)
	}
	var tf *hone.TrialFailedError
	if !errors.As(err, &tf) || tf != ff.Trial {
		t.Errorf("errors.As(*hone.TrialFailedError) = %v", tf)
	}
	var ne *negativeError
	if !errors.As(err, &ne) || ne.x != -1 {
		t.Errorf("the trainable's error does not reach the CLI: %v", err)
	}
	if got := exitCode(err); got != exitFailed {
		t.Errorf("exitCode = %d, want %d (exitFailed)", got, exitFailed)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "experiment failed: trial "+ff.Trial.TrialID+" failed and fail_fast is set: ") || !strings.Contains(msg, "negative x = -1") {
		t.Errorf("message: %v", err)
	}
}

// TestExitCodeByType: the exit code follows from the error's type, not its
// text, however deeply the error is wrapped.
func TestExitCodeByType(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, exitOK},
		{errors.New("unknown flag: --x"), exitUsage},
		{withCode(exitFailed, errors.New("experiment failed")), exitFailed},
		{fmt.Errorf("context: %w", withCode(exitInterrupted, errors.New("stopped"))), exitInterrupted},
		{withCode(exitUsage, withCode(exitFailed, errors.New("kept"))), exitFailed},
		{exitWith(exitTrialErrors), exitTrialErrors},
		// A text that names a code is not one.
		{errors.New("exit code 4: experiment failed"), exitUsage},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

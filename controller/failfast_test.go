package controller

import (
	"errors"
	"io/fs"
	"testing"
	"time"

	"github.com/hone-tune/hone"
)

// TestFailFastErrorTyped: under fail_fast, Err is a *hone.FailFastError
// whose trial failure wraps the input's Cause, so that errors.Is and
// errors.As reach the executor's error; the NoteError action carries the
// same cause. A replayed input has no Cause, and the failure then has only
// its text.
func TestFailFastErrorTyped(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		cause error
	}{
		{"live", &fs.PathError{Op: "open", Path: "data.csv", Err: fs.ErrNotExist}},
		{"replayed", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exp := &hone.Experiment{Searcher: &listSearcher{n: 2}, Metric: "loss", Failure: hone.FailureConfig{FailFast: true}}
			c, err := New(exp, hone.Resources{CPU: 2})
			if err != nil {
				t.Fatal(err)
			}
			step(t, c, hone.Event{Kind: hone.EventBegin, Time: t0.UnixNano()})
			tr := c.Trials()[0]
			msg := "open data.csv: file does not exist"
			acts := step(t, c, hone.Event{Kind: hone.EventExited, TrialID: tr.ID, Time: t0.Add(time.Second).UnixNano(), Err: msg, Cause: tc.cause})
			var ff *hone.FailFastError
			if !errors.As(c.Err(), &ff) || ff.Trial.TrialID != tr.ID || ff.Trial.Msg != msg || ff.Trial.Err != tc.cause {
				t.Fatalf("Err = %v (%T), want a *hone.FailFastError for %s with cause %v", c.Err(), c.Err(), tr.ID, tc.cause)
			}
			if want := "trial " + tr.ID + " failed and fail_fast is set: " + msg; c.Err().Error() != want {
				t.Errorf("Err = %q, want %q", c.Err(), want)
			}
			if got := errors.Is(c.Err(), fs.ErrNotExist); got != (tc.cause != nil) {
				t.Errorf("errors.Is(Err, fs.ErrNotExist) = %v", got)
			}
			noted := false
			for _, a := range acts {
				if a.Kind == ActNotify && a.Note == NoteError {
					noted = true
					if a.Err != msg || a.Cause != tc.cause {
						t.Errorf("NoteError: Err %q, Cause %v", a.Err, a.Cause)
					}
				}
			}
			if !noted {
				t.Error("no NoteError action")
			}
			// The cause is the input's only: once it is handled, a
			// failure hone decides itself has none.
			if c.causeOf(tr) != nil || c.cause != nil {
				t.Error("a cause outlives its input")
			}
		})
	}
}

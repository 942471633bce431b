package runner_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/runner"
)

// queueing holds each started trial, as a cluster's queue holds a job,
// for wait before it starts it on the in-process executor, and announces
// it then (hone.StartAnnouncer). A trial stopped in the queue exits at
// once. Like every executor, it is called from the runner's goroutine
// only.
type queueing struct {
	*inproc.Executor
	wait   time.Duration
	queued map[string]queuedStart
	events []hone.Event // the queue's own events, handed out first
}

type queuedStart struct {
	spec hone.StartSpec
	at   time.Time
}

func newQueueing(wait time.Duration, ex *inproc.Executor) *queueing {
	return &queueing{Executor: ex, wait: wait, queued: map[string]queuedStart{}}
}

func (q *queueing) AnnouncesStarts() bool { return true }

func (q *queueing) Start(spec hone.StartSpec) error {
	q.queued[spec.TrialID] = queuedStart{spec, time.Now().Add(q.wait)}
	return nil
}

func (q *queueing) Direct(id string, d hone.Directive) error {
	if _, ok := q.queued[id]; !ok {
		return q.Executor.Direct(id, d)
	}
	if d != hone.DirectStop {
		return fmt.Errorf("direct %v to trial %s: it is queued", d, id)
	}
	delete(q.queued, id)
	q.events = append(q.events, hone.Event{Kind: hone.EventExited, TrialID: id, Time: time.Now().UnixNano()})
	return nil
}

func (q *queueing) Next(ctx context.Context) (hone.Event, error) {
	for {
		if len(q.events) > 0 {
			ev := q.events[0]
			q.events = q.events[1:]
			return ev, nil
		}
		first, at := "", time.Time{}
		for id, s := range q.queued {
			if first == "" || s.at.Before(at) {
				first, at = id, s.at
			}
		}
		if first != "" && !time.Now().Before(at) {
			spec := q.queued[first].spec
			delete(q.queued, first)
			ev := hone.Event{Kind: hone.EventStarted, TrialID: first, Time: time.Now().UnixNano(), Hostname: "queue"}
			if err := q.Executor.Start(spec); err != nil {
				ev.Kind, ev.Cause = hone.EventExited, err
			}
			q.events = append(q.events, ev)
			continue
		}
		wctx, cancel := ctx, context.CancelFunc(func() {})
		if first != "" {
			wctx, cancel = context.WithDeadline(ctx, at)
		}
		ev, err := q.Executor.Next(wctx)
		cancel()
		switch {
		case err == nil:
			return ev, nil
		case first != "" && errors.Is(err, hone.ErrIdle):
			select {
			case <-time.After(time.Until(at)):
			case <-ctx.Done():
				return hone.Event{}, ctx.Err()
			}
		case first != "" && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
			// the first queued trial's turn
		default:
			return ev, err
		}
	}
}

// TestQueuedTrialsNotTimedOut: trials that wait in an executor's queue
// for longer than trial_timeout and report_timeout run to their end: the
// executor announces starts, and the limits count from each trial's
// started event, which the journal holds (one per start), with the
// session's setting in its header. A resume on an executor whose trials
// run at Start replays the journal as the run went.
func TestQueuedTrialsNotTimedOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "queued")
	exp := experiment(t, dir, 3)
	exp.TrialTimeout, exp.ReportTimeout = time.Second, time.Second
	out, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Log: io.Discard, Tick: 50 * time.Millisecond,
		Executor: newQueueing(1500*time.Millisecond, inproc.NewFunc(quadratic))})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusTerminated || tr.Failures != 0 {
			t.Errorf("trial %s ended %s after %d failures (%s), want TERMINATED without one", tr.ID, tr.Status, tr.Failures, tr.Error)
		}
	}
	j, err := journal.Read(filepath.Join(dir, journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if s := j.Header.Settings; s == nil || !s.StartsAnnounced {
		t.Errorf("the journal's header settings %+v do not say the executor announces starts", s)
	}
	starts, started := 0, 0
	for _, l := range j.Lines {
		switch {
		case l.Rec != nil && l.Rec.Op == "status" && l.Rec.Status == hone.StatusRunning:
			starts++
		case l.Event != nil && l.Event.Kind == hone.EventStarted:
			started++
			if l.Event.Hostname != "queue" {
				t.Errorf("started input %+v does not say where", l.Event)
			}
		}
	}
	if starts != 3 || started != starts {
		t.Errorf("%d starts and %d started inputs in the journal, want 3 of each", starts, started)
	}
	// The journal replays with the first session's setting: a replay that
	// counted the limits from the starts would fail the trials.
	exp = experiment(t, dir, 3)
	exp.TrialTimeout, exp.ReportTimeout = time.Second, time.Second
	out, err = runner.Resume(context.Background(), exp, runner.Options{Dir: dir, Log: io.Discard, Executor: inproc.NewFunc(quadratic)},
		hone.ResumeFlags{Unfinished: true})
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if len(out.Trials) != 3 {
		t.Errorf("%d trials after the resume, want 3", len(out.Trials))
	}
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusTerminated || tr.Failures != 0 {
			t.Errorf("after the resume's replay trial %s is %s after %d failures (%s), want TERMINATED as in the run", tr.ID, tr.Status, tr.Failures, tr.Error)
		}
	}
}

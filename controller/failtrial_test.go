package controller

import (
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/scheduler/fifo"
)

// failingScheduler fails trials through hone.TrialFailer: in OnResult, the
// trial itself when its metric "bad" is set, and the trial named by the
// metric "fail_other".
type failingScheduler struct {
	fifo.Scheduler
	decided int
}

func (s *failingScheduler) OnResult(c hone.Control, t *hone.Trial, r *hone.Result) hone.Decision {
	f := c.(hone.TrialFailer)
	if _, ok := r.Metrics["bad"]; ok {
		f.FailTrial(t, "bad result")
		return hone.Stop // ignored: the failure wins
	}
	if id, ok := r.Metrics["fail_other"].(string); ok {
		f.FailTrial(c.Trial(id), "failed by the scheduler")
	}
	return hone.Continue
}

// countingSearcher counts the results it is told per trial.
type countingSearcher struct {
	listSearcher
	results map[string]int
}

func (s *countingSearcher) OnResult(id string, _ *hone.Result) { s.results[id]++ }

// TestSchedulerFailsTrial pins hone.TrialFailer: failing the trial being
// decided takes effect once OnResult returns (the decision and the
// searcher's OnResult are skipped) and goes through the failure path
// (retried under max_failures, then ERROR with the message); failing
// another, PENDING trial takes effect at once.
func TestSchedulerFailsTrial(t *testing.T) {
	sr := &countingSearcher{listSearcher: listSearcher{n: 2}, results: map[string]int{}}
	exp := &hone.Experiment{Searcher: sr, Scheduler: &failingScheduler{}, Metric: "loss",
		Failure: hone.FailureConfig{MaxFailures: 1}}
	c, err := New(exp, hone.Resources{CPU: 1})
	if err != nil {
		t.Fatal(err)
	}
	step(t, c, hone.Event{Kind: hone.EventBegin, Time: 1})
	if len(c.Trials()) != 2 {
		t.Fatalf("%d trials, want 2", len(c.Trials()))
	}
	a, b := c.Trials()[0], c.Trials()[1]
	if a.Status != hone.StatusRunning || b.Status != hone.StatusPending {
		t.Fatalf("statuses %s %s", a.Status, b.Status)
	}
	step(t, c, hone.Event{Kind: hone.EventResult, TrialID: a.ID, Time: 2, Metrics: map[string]any{"loss": 1.0}})
	step(t, c, hone.Event{Kind: hone.EventResult, TrialID: a.ID, Time: 3, Metrics: map[string]any{"loss": 1.0, "bad": true}})
	if a.Status != hone.StatusPending || a.Failures != 1 || a.Error != "bad result" {
		t.Fatalf("after the first failure: %s failures %d error %q", a.Status, a.Failures, a.Error)
	}
	if sr.results[a.ID] != 1 {
		t.Fatalf("the searcher heard %d results of %s, want 1 (not the failing one)", sr.results[a.ID], a.ID)
	}
	// FIFO restarts a, the oldest waiting trial; b still waits. a's next
	// result fails b, which is PENDING: at once, and as it has a retry
	// left it is PENDING again.
	step(t, c, hone.Event{Kind: hone.EventExited, TrialID: a.ID, Time: 4})
	if a.Status != hone.StatusRunning || b.Status != hone.StatusPending {
		t.Fatalf("after the retry: %s %s", a.Status, b.Status)
	}
	step(t, c, hone.Event{Kind: hone.EventResult, TrialID: a.ID, Time: 5, Metrics: map[string]any{"loss": 1.0, "fail_other": b.ID}})
	if b.Status != hone.StatusPending || b.Failures != 1 || b.Error != "failed by the scheduler" {
		t.Fatalf("b: %s failures %d error %q", b.Status, b.Failures, b.Error)
	}
	if a.Status != hone.StatusRunning || sr.results[a.ID] != 2 {
		t.Fatalf("a: %s, %d results told", a.Status, sr.results[a.ID])
	}
	// Failing a again, from its own result, with no retry left: ERROR.
	step(t, c, hone.Event{Kind: hone.EventResult, TrialID: a.ID, Time: 6, Metrics: map[string]any{"bad": true}})
	if a.Status != hone.StatusError || a.Failures != 2 || a.Error != "bad result" {
		t.Fatalf("a: %s failures %d error %q", a.Status, a.Failures, a.Error)
	}
	// Failing a finished trial does nothing.
	c.Control().(hone.TrialFailer).FailTrial(a, "late")
	if a.Status != hone.StatusError || a.Failures != 2 || a.Error != "bad result" {
		t.Fatalf("a finished trial was failed again: %s failures %d error %q", a.Status, a.Failures, a.Error)
	}
}

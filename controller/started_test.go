package controller

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone"
)

// queuedController returns a controller of n trials, each of one CPU on a
// pool of n, with trial_timeout and report_timeout, whose executor
// announces starts, begun at t0.
func queuedController(t *testing.T, n int, trialTimeout, reportTimeout time.Duration) (*Controller, func(time.Duration) int64) {
	t.Helper()
	exp := &hone.Experiment{Searcher: &listSearcher{n: n}, Metric: "loss", MaxConcurrentTrials: n,
		TrialTimeout: trialTimeout, ReportTimeout: reportTimeout}
	c, err := New(exp, hone.Resources{CPU: float64(n)})
	if err != nil {
		t.Fatal(err)
	}
	c.SetStartsAnnounced(true)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) int64 { return t0.Add(d).UnixNano() }
	step(t, c, hone.Event{Kind: hone.EventBegin, Time: at(0)})
	if len(c.Trials()) != n || c.Alive() != n {
		t.Fatalf("%d trials, %d alive; want %d started", len(c.Trials()), c.Alive(), n)
	}
	return c, at
}

// failures returns the errors the actions notify.
func failures(acts []Action) []string {
	var errs []string
	for _, a := range acts {
		if a.Kind == ActNotify && a.Note == NoteError {
			errs = append(errs, a.Err)
		}
	}
	return errs
}

// TestQueuedTrialNotTimedOut: with an executor that announces starts, a
// trial that waits (queued) for far longer than either limit is not
// failed; once started, its limits count from the started input.
func TestQueuedTrialNotTimedOut(t *testing.T) {
	c, at := queuedController(t, 1, 15*time.Second, 10*time.Second)
	tr := c.Trials()[0]
	for s := time.Duration(0); s <= time.Hour; s += 30 * time.Second {
		if errs := failures(step(t, c, hone.Event{Kind: hone.EventTick, Time: at(s)})); len(errs) > 0 {
			t.Fatalf("queued for %v: %v", s, errs)
		}
	}
	started := time.Hour + time.Second
	step(t, c, hone.Event{Kind: hone.EventStarted, TrialID: tr.ID, Time: at(started), Hostname: "n1 (slurm job 3)"})
	if errs := failures(step(t, c, hone.Event{Kind: hone.EventTick, Time: at(started + 10*time.Second)})); len(errs) > 0 {
		t.Fatalf("10s after its start: %v", errs)
	}
	step(t, c, hone.Event{Kind: hone.EventResult, TrialID: tr.ID, Time: at(started + 10*time.Second), Metrics: map[string]any{"loss": 1.0}})
	if errs := failures(step(t, c, hone.Event{Kind: hone.EventTick, Time: at(started + 15*time.Second)})); len(errs) > 0 {
		t.Fatalf("15s after its start: %v", errs)
	}
	errs := failures(step(t, c, hone.Event{Kind: hone.EventTick, Time: at(started + 16*time.Second)}))
	if len(errs) != 1 || errs[0] != "trial exceeded trial_timeout of 15s (it ran for 16s)" {
		t.Fatalf("16s after its start: %q, want trial_timeout counted from the started input", errs)
	}
}

// TestReportLimitFromStarted: report_timeout counts from the started
// input until the first report, not from the start.
func TestReportLimitFromStarted(t *testing.T) {
	c, at := queuedController(t, 1, 0, 10*time.Second)
	tr := c.Trials()[0]
	step(t, c, hone.Event{Kind: hone.EventStarted, TrialID: tr.ID, Time: at(time.Minute)})
	if errs := failures(step(t, c, hone.Event{Kind: hone.EventTick, Time: at(time.Minute + 10*time.Second)})); len(errs) > 0 {
		t.Fatalf("10s after its start: %v", errs)
	}
	errs := failures(step(t, c, hone.Event{Kind: hone.EventTick, Time: at(time.Minute + 11*time.Second)}))
	if len(errs) != 1 || !strings.Contains(errs[0], "the last was 11s ago") {
		t.Fatalf("11s after its start without a report: %q, want report_timeout", errs)
	}
}

// TestStartedAfterStopIgnored: a started input for a trial told to stop
// (its job left the queue as it was cancelled), for one that exited, and
// a second one for the same run change nothing.
func TestStartedAfterStopIgnored(t *testing.T) {
	c, at := queuedController(t, 2, time.Minute, 0)
	a, b := c.Trials()[0], c.Trials()[1]
	c.Control().StopTrial(a) // a computing trial: stopped at once
	c.Ready()
	if a.Status != hone.StatusTerminated || !c.HasProcess(a.ID) {
		t.Fatalf("a is %s (process %v), want TERMINATED and stopping", a.Status, c.HasProcess(a.ID))
	}
	step(t, c, hone.Event{Kind: hone.EventStarted, TrialID: a.ID, Time: at(time.Second)})
	if c.st[a.ID].life != lifeStopping || watched(c, a.ID) {
		t.Fatal("a trial told to stop was put under its limits by a late started input")
	}
	step(t, c, hone.Event{Kind: hone.EventExited, TrialID: a.ID, Time: at(2 * time.Second)})
	step(t, c, hone.Event{Kind: hone.EventStarted, TrialID: a.ID, Time: at(3 * time.Second)})
	if c.st[a.ID].life != lifeIdle || watched(c, a.ID) || c.HasProcess(a.ID) {
		t.Fatal("an exited trial was put under its limits by a late started input")
	}

	step(t, c, hone.Event{Kind: hone.EventStarted, TrialID: b.ID, Time: at(10 * time.Second)})
	step(t, c, hone.Event{Kind: hone.EventStarted, TrialID: b.ID, Time: at(40 * time.Second)}) // again: ignored
	errs := failures(step(t, c, hone.Event{Kind: hone.EventTick, Time: at(71 * time.Second)}))
	if len(errs) != 1 || errs[0] != "trial exceeded trial_timeout of 1m0s (it ran for 1m1s)" {
		t.Fatalf("61s after b's first started input: %q, want trial_timeout counted from the first", errs)
	}
}

// TestStartsAnnouncedSettings: the setting is part of the settings a
// session runs with (journaled in the header and in a resume), and a
// started input comes from an EventStarted.
func TestStartsAnnouncedSettings(t *testing.T) {
	c, err := New(&hone.Experiment{Searcher: &listSearcher{n: 1}}, hone.Resources{CPU: 1})
	if err != nil {
		t.Fatal(err)
	}
	if c.Settings().StartsAnnounced {
		t.Fatal("a new controller takes starts as announced")
	}
	c.SetStartsAnnounced(true)
	b, err := json.Marshal(c.Settings())
	if err != nil {
		t.Fatal(err)
	}
	var s hone.Settings
	if err := json.Unmarshal(b, &s); err != nil || !s.StartsAnnounced {
		t.Fatalf("settings %s read back as %+v (%v)", b, s, err)
	}
	s.StartsAnnounced = false
	if err := c.ApplySettings(s); err != nil || c.Settings().StartsAnnounced {
		t.Fatalf("ApplySettings without announced starts: %v, %+v", err, c.Settings())
	}
}

// TestQueueTimeNotTrainingTime: a queued trial's first result counts its
// time from the started input, not from the start: time_this_iter_s,
// time_total_s and time_since_restore leave the wait out.
func TestQueueTimeNotTrainingTime(t *testing.T) {
	c, at := queuedController(t, 1, 0, 0)
	tr := c.Trials()[0]
	step(t, c, hone.Event{Kind: hone.EventStarted, TrialID: tr.ID, Time: at(time.Hour)})
	var r *hone.Result
	for _, a := range step(t, c, hone.Event{Kind: hone.EventResult, TrialID: tr.ID, Time: at(time.Hour + 3*time.Second), Metrics: map[string]any{"loss": 1.0}}) {
		if a.Kind == ActNotify && a.Note == NoteResult {
			r = a.Result
		}
	}
	if r == nil {
		t.Fatal("no result")
	}
	if r.TimeThisIter != 3 || r.TimeTotal != 3 || r.TimeSinceRestore != 3 {
		t.Errorf("first result after an hour queued and 3s running: time_this_iter %v, time_total %v, time_since_restore %v; want 3 each",
			r.TimeThisIter, r.TimeTotal, r.TimeSinceRestore)
	}
}

// watched reports whether trial id is in the deadline queue.
func watched(c *Controller, id string) bool {
	for _, t := range c.deadlines.ts {
		if t.ID == id {
			return true
		}
	}
	return false
}

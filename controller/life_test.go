package controller

import (
	"strings"
	"testing"

	"github.com/hone-tune/hone"
)

// TestLifeTable enumerates every (state, event) pair of a trial's run:
// the legal ones land where the lifecycle says, every other one is
// refused by next and makes to panic, leaving the state as it was.
func TestLifeTable(t *testing.T) {
	type pair struct {
		from runLife
		ev   lifeEvent
	}
	legal := map[pair]runLife{
		{lifeIdle, evStart}:       lifeQueued,
		{lifeQueued, evRun}:       lifeComputing,
		{lifeComputing, evResult}: lifeBlocked,
		{lifeBlocked, evSaveSent}: lifeSaving,
		{lifeSaved, evSaveSent}:   lifeSaving,
		{lifeSaving, evSaved}:     lifeSaved,
		{lifeBlocked, evContinue}: lifeComputing,
		{lifeSaved, evContinue}:   lifeComputing,
		{lifeQueued, evStop}:      lifeStopping,
		{lifeComputing, evStop}:   lifeStopping,
		{lifeBlocked, evStop}:     lifeStopping,
		{lifeSaved, evStop}:       lifeStopping,
		{lifeSaving, evStop}:      lifeStopping,
		{lifeQueued, evGone}:      lifeIdle,
		{lifeComputing, evGone}:   lifeIdle,
		{lifeBlocked, evGone}:     lifeIdle,
		{lifeSaved, evGone}:       lifeIdle,
		{lifeSaving, evGone}:      lifeIdle,
		{lifeStopping, evGone}:    lifeIdle,
	}
	n := 0
	for from := range numLives {
		for ev := range numLifeEvents {
			want, ok := legal[pair{from, ev}]
			got, gotOK := from.next(ev)
			switch {
			case ok && (!gotOK || got != want):
				t.Errorf("%s --%s-->: got %s (legal %v), want %s", from, ev, got, gotOK, want)
			case !ok && gotOK:
				t.Errorf("%s --%s-->: accepted (to %s), want refused", from, ev, got)
			case !ok && got != from:
				t.Errorf("%s --%s-->: refused but moved to %s", from, ev, got)
			}
			s := &tstate{life: from}
			msg := panicOf(func() { s.to(ev) })
			switch {
			case ok && msg != "":
				t.Errorf("%s --%s-->: to panicked: %s", from, ev, msg)
			case ok && s.life != want:
				t.Errorf("%s --%s-->: to moved to %s, want %s", from, ev, s.life, want)
			case !ok && !strings.Contains(msg, "state "+from.String()+" cannot take event "+ev.String()):
				t.Errorf("%s --%s-->: to panicked with %q, want it to name the state and the event", from, ev, msg)
			case !ok && s.life != from:
				t.Errorf("%s --%s-->: an illegal event moved the run to %s", from, ev, s.life)
			}
			n++
		}
	}
	if n != 7*8 {
		t.Errorf("enumerated %d pairs, want 56 (7 states × 8 events): update the table when the lifecycle grows", n)
	}
}

func panicOf(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg, _ = r.(string)
			if msg == "" {
				msg = "panic"
			}
		}
	}()
	f()
	return ""
}

// TestLifeNames: every state and event has a name of its own.
func TestLifeNames(t *testing.T) {
	seen := map[string]bool{}
	for l := range numLives {
		if s := l.String(); strings.HasPrefix(s, "runLife(") || seen[s] {
			t.Errorf("state %d is named %q", l, s)
		} else {
			seen[s] = true
		}
	}
	clear(seen)
	for e := range numLifeEvents {
		if s := e.String(); strings.HasPrefix(s, "lifeEvent(") || seen[s] {
			t.Errorf("event %d is named %q", e, s)
		} else {
			seen[s] = true
		}
	}
}

// TestDecisionQueue enumerates every (queued, arriving) pair: STOP beats
// PAUSE beats CONTINUE, NOOP adds nothing, and a pause without a save
// stays one when a pause arrives.
func TestDecisionQueue(t *testing.T) {
	all := []queuedDecision{qContinue, qPause, qPauseNoSave, qStop}
	want := map[queuedDecision]map[hone.Decision]queuedDecision{
		qContinue:    {hone.Continue: qContinue, hone.Noop: qContinue, hone.Pause: qPause, hone.Stop: qStop},
		qPause:       {hone.Continue: qPause, hone.Noop: qPause, hone.Pause: qPause, hone.Stop: qStop},
		qPauseNoSave: {hone.Continue: qPauseNoSave, hone.Noop: qPauseNoSave, hone.Pause: qPauseNoSave, hone.Stop: qStop},
		qStop:        {hone.Continue: qStop, hone.Noop: qStop, hone.Pause: qStop, hone.Stop: qStop},
	}
	for _, q := range all {
		for _, d := range []hone.Decision{hone.Continue, hone.Pause, hone.Stop, hone.Noop} {
			if got := q.with(queueOf(d)); got != want[q][d] {
				t.Errorf("%s then %s: %s, want %s", q, d, got, want[q][d])
			}
		}
	}
}

// TestLifeOfARun follows one trial's run through the controller: each
// input and decision leaves it in the state the table names.
func TestLifeOfARun(t *testing.T) {
	at := lifeClock()
	c := newLifeController(t, at)
	tr := c.Trials()[0]
	s := c.st[tr.ID]
	if s.life != lifeComputing {
		t.Fatalf("after its start the run is %s, want computing", s.life)
	}
	step(t, c, hone.Event{Kind: hone.EventResult, TrialID: tr.ID, Time: at(), Metrics: map[string]any{"loss": 1.0}})
	if s.life != lifeComputing {
		t.Fatalf("after a CONTINUE the run is %s, want computing", s.life)
	}
	f := c.Control().ScheduleSave(tr)
	if s.life != lifeComputing || f.Done() {
		t.Fatalf("a save scheduled while computing: run %s, resolved %v; want it sent at the next report", s.life, f.Done())
	}
	step(t, c, hone.Event{Kind: hone.EventResult, TrialID: tr.ID, Time: at(), Metrics: map[string]any{"loss": 0.9}})
	if s.life != lifeSaving {
		t.Fatalf("after a report with a save due the run is %s, want saving", s.life)
	}
	// A report while it saves breaks the executor contract: refused.
	acts := step(t, c, hone.Event{Kind: hone.EventResult, TrialID: tr.ID, Time: at(), Metrics: map[string]any{"loss": 0.8}})
	if s.life != lifeSaving || !logged(acts, "not waiting to result") {
		t.Fatalf("a report while saving: run %s, actions %+v; want it ignored", s.life, acts)
	}
	c.Control().PauseTrial(tr, true)
	if s.life != lifeSaving || s.next != qPause {
		t.Fatalf("a pause while saving: run %s, queue %s; want saving, pause", s.life, s.next)
	}
	i, p, _ := c.NextCheckpointPath(tr.ID)
	step(t, c, hone.Event{Kind: hone.EventSaved, TrialID: tr.ID, Time: at(), Checkpoint: &hone.CheckpointRef{Index: i, Path: p}})
	if s.life != lifeStopping || tr.Status != hone.StatusPaused {
		t.Fatalf("after the save of a pausing trial: run %s, status %s; want stopping, PAUSED", s.life, tr.Status)
	}
	acts = step(t, c, hone.Event{Kind: hone.EventExited, TrialID: tr.ID, Time: at()})
	// The slot is free and FIFO resumes the paused trial: a new run.
	if len(acts) == 0 || s.life != lifeComputing || tr.Status != hone.StatusRunning {
		t.Fatalf("after its exit: run %s, status %s; want the paused trial started again", s.life, tr.Status)
	}
	c.Control().StopTrial(tr)
	step(t, c, hone.Event{Kind: hone.EventExited, TrialID: tr.ID, Time: at()})
	if s.life != lifeIdle || tr.Status != hone.StatusTerminated || !c.Done() {
		t.Fatalf("after a stop and its exit: run %s, status %s, done %v; want idle, TERMINATED, done", s.life, tr.Status, c.Done())
	}
}

// newLifeController returns a controller with one started trial.
func newLifeController(t *testing.T, at func() int64) *Controller {
	t.Helper()
	exp := &hone.Experiment{Name: "life", Metric: "loss", Mode: hone.Min, Searcher: &listSearcher{n: 1}}
	c, err := New(exp, hone.Resources{CPU: 1})
	if err != nil {
		t.Fatal(err)
	}
	step(t, c, hone.Event{Kind: hone.EventBegin, Time: at()})
	if len(c.Trials()) != 1 {
		t.Fatalf("%d trials, want 1", len(c.Trials()))
	}
	return c
}

func lifeClock() func() int64 {
	var n int64 = 1e18
	return func() int64 { n += 1e9; return n }
}

func logged(acts []Action, text string) bool {
	for _, a := range acts {
		if a.Kind == ActLog && strings.Contains(a.Text, text) {
			return true
		}
	}
	return false
}

// TestFinishedTrialKeepsLittle: a finished trial with no process gives up
// its run state, a trial makes its checkpoint manager only at its first
// checkpoint, and an ERROR trial that a resume retries runs again with a
// new run state, from its checkpoint.
func TestFinishedTrialKeepsLittle(t *testing.T) {
	at := lifeClock()
	exp := &hone.Experiment{Name: "life", Metric: "loss", Mode: hone.Min, Searcher: &listSearcher{n: 2}}
	c, err := New(exp, hone.Resources{CPU: 2})
	if err != nil {
		t.Fatal(err)
	}
	step(t, c, hone.Event{Kind: hone.EventBegin, Time: at()})
	a, b := c.Trials()[0], c.Trials()[1]
	sa, sb := c.st[a.ID], c.st[b.ID]
	if sa.run == nil || sa.mgr != nil {
		t.Fatalf("a started trial: run %v, manager %v; want a run state and no manager yet", sa.run, sa.mgr)
	}

	// a reports a checkpoint, then crashes for good: ERROR.
	i, p, _ := c.NextCheckpointPath(a.ID)
	step(t, c, hone.Event{Kind: hone.EventResult, TrialID: a.ID, Time: at(), Metrics: map[string]any{"loss": 1.0},
		Checkpoint: &hone.CheckpointRef{Index: i, Path: p}})
	step(t, c, hone.Event{Kind: hone.EventExited, TrialID: a.ID, Time: at(), Err: "crashed"})
	if a.Status != hone.StatusError || sa.life != lifeIdle || sa.run != nil {
		t.Fatalf("a crashed for good: status %s, run %s, run state %v; want ERROR, idle, none", a.Status, sa.life, sa.run)
	}
	if sa.mgr.Latest() == nil || sa.mgr.Latest().Path != p {
		t.Fatalf("a's checkpoint manager lost %s", p)
	}

	// b stops itself: TERMINATED once its process has exited, not before.
	step(t, c, hone.Event{Kind: hone.EventResult, TrialID: b.ID, Time: at(), Metrics: map[string]any{"loss": 2.0}, Done: true})
	if b.Status != hone.StatusTerminated || sb.life != lifeStopping || sb.run == nil {
		t.Fatalf("b is done and stopping: status %s, run %s, run state %v; want TERMINATED, stopping, kept", b.Status, sb.life, sb.run)
	}
	step(t, c, hone.Event{Kind: hone.EventExited, TrialID: b.ID, Time: at()})
	if sb.life != lifeIdle || sb.run != nil || sb.mgr != nil {
		t.Fatalf("b exited: run %s, run state %v, manager %v; want idle and nothing kept", sb.life, sb.run, sb.mgr)
	}

	// A resume that retries errored trials runs a again from its checkpoint.
	acts := step(t, c, hone.Event{Kind: hone.EventResume, Time: at(), Resume: &hone.ResumeFlags{Unfinished: true, Errored: true}})
	var from *hone.Checkpoint
	for _, x := range acts {
		if x.Kind == ActStart && x.Trial == a {
			from = x.Checkpoint
		}
	}
	if a.Status != hone.StatusRunning || sa.life != lifeComputing || sa.run == nil || sa.run.iter != 1 || from == nil || from.Path != p {
		t.Fatalf("a retried: status %s, run %s, run state %+v, from %v; want RUNNING from %s at iteration 1", a.Status, sa.life, sa.run, from, p)
	}
}

package controller

import (
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/scheduler/fifo"
)

// saveCounter is FIFO that counts the saves the controller reports.
type saveCounter struct {
	fifo.Scheduler
	saves []*hone.Checkpoint
}

func (s *saveCounter) OnTrialSave(_ hone.Control, _ *hone.Trial, cp *hone.Checkpoint, err error) {
	if err == nil {
		s.saves = append(s.saves, cp)
	}
}

// A scheduler that listens (hone.SaveListener) hears of a save when the
// controller step that resolves it runs, once; a save asked of a trial with
// no live process is done when ScheduleSave returns and is not reported
// (docs/SEMANTICS.md §1, "Saves (futures)").
func TestSaveListener(t *testing.T) {
	at := lifeClock()
	sc := &saveCounter{Scheduler: fifo.New()}
	exp := &hone.Experiment{Name: "save", Metric: "loss", Mode: hone.Min, Searcher: &listSearcher{n: 1}, Scheduler: sc}
	c, err := New(exp, hone.Resources{CPU: 1})
	if err != nil {
		t.Fatal(err)
	}
	step(t, c, hone.Event{Kind: hone.EventBegin, Time: at()})
	tr := c.Trials()[0]
	f := c.Control().ScheduleSave(tr)
	step(t, c, hone.Event{Kind: hone.EventResult, TrialID: tr.ID, Time: at(), Metrics: map[string]any{"loss": 1.0}})
	if f.Done() || len(sc.saves) != 0 {
		t.Fatalf("before the save's answer: done %v, %d saves heard", f.Done(), len(sc.saves))
	}
	i, p, _ := c.NextCheckpointPath(tr.ID)
	step(t, c, hone.Event{Kind: hone.EventSaved, TrialID: tr.ID, Time: at(), Checkpoint: &hone.CheckpointRef{Index: i, Path: p}})
	cp, err := f.Result()
	if !f.Done() || err != nil || len(sc.saves) != 1 || sc.saves[0] != cp {
		t.Fatalf("after the answer: done %v, err %v, saves heard %v; want the future's checkpoint once", f.Done(), err, sc.saves)
	}
	// Stopped, the trial has no live process: a save is answered at once
	// with its latest checkpoint, and nothing more is heard.
	c.Control().StopTrial(tr)
	step(t, c, hone.Event{Kind: hone.EventResult, TrialID: tr.ID, Time: at(), Metrics: map[string]any{"loss": 0.9}})
	step(t, c, hone.Event{Kind: hone.EventExited, TrialID: tr.ID, Time: at()})
	if c.st[tr.ID] != nil && c.st[tr.ID].life.alive() {
		t.Fatalf("the stopped trial still has a process (status %s)", tr.Status)
	}
	g := c.Control().ScheduleSave(tr)
	if got, _ := g.Result(); !g.Done() || got != cp || len(sc.saves) != 1 {
		t.Fatalf("a save of a trial without a process: done %v, checkpoint %v, %d saves heard; want done at once with %v, still 1", g.Done(), got, len(sc.saves), cp)
	}
}

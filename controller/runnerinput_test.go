package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone"
)

// TestCheckpointMissingInput pins hone.EventCheckpointMissing: the trial started
// from a checkpoint that is gone starts again from its newest other one
// (and its iteration), then from scratch; each missing checkpoint is
// forgotten (a ckdel record) and logged with the trial and the paths; no
// failure is counted.
func TestCheckpointMissingInput(t *testing.T) {
	exp := &hone.Experiment{Searcher: &listSearcher{n: 1}, Metric: "loss", Failure: hone.FailureConfig{MaxFailures: 1}}
	c, err := New(exp, hone.Resources{CPU: 1})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) int64 { return t0.Add(time.Duration(s) * time.Second).UnixNano() }
	step(t, c, hone.Event{Kind: hone.EventBegin, Time: at(0)})
	tr := c.Trials()[0]
	var paths []string
	for i := 1; i <= 4; i++ {
		in := hone.Event{Kind: hone.EventResult, TrialID: tr.ID, Time: at(i), Metrics: map[string]any{"loss": 1.0}}
		if i%2 == 0 {
			idx, p, _ := c.NextCheckpointPath(tr.ID)
			in.Checkpoint = &hone.CheckpointRef{Index: idx, Path: p}
			paths = append(paths, p)
		}
		step(t, c, in)
		step(t, c, hone.Event{Kind: hone.EventTick, Time: at(i)})
	}
	startOf := func(acts []Action) *Action {
		for i := range acts {
			if acts[i].Kind == ActStart {
				return &acts[i]
			}
		}
		t.Fatalf("no start among %+v", acts)
		return nil
	}
	logs := func(acts []Action) string {
		var b strings.Builder
		for _, a := range acts {
			if a.Kind == ActLog {
				b.WriteString(a.Text + "\n")
			}
		}
		return b.String()
	}
	ckdel := func(acts []Action, p string) bool {
		for _, a := range acts {
			if a.Kind == ActRecord && a.Record.Op == "ckdel" && a.Record.Path == p {
				return true
			}
		}
		return false
	}
	s := startOf(step(t, c, hone.Event{Kind: hone.EventExited, TrialID: tr.ID, Time: at(5), Err: "boom"}))
	if s.Checkpoint == nil || s.Checkpoint.Path != paths[1] || s.Iteration != 4 {
		t.Fatalf("retry start %+v, want from %s at iteration 4", s, paths[1])
	}
	acts := step(t, c, hone.Event{Kind: hone.EventCheckpointMissing, TrialID: tr.ID, Time: at(6), Checkpoint: &hone.CheckpointRef{Path: paths[1]}})
	s = startOf(acts)
	if s.Checkpoint == nil || s.Checkpoint.Path != paths[0] || s.Iteration != 2 {
		t.Fatalf("start after %s went missing: %+v, want from %s at iteration 2", paths[1], s, paths[0])
	}
	if l := logs(acts); !strings.Contains(l, "trial "+tr.ID+": checkpoint "+paths[1]+" is missing") || !strings.Contains(l, "restarting from "+paths[0]) {
		t.Errorf("log: %q", l)
	}
	if !ckdel(acts, paths[1]) || c.Registered(paths[1]) {
		t.Errorf("%s is still registered", paths[1])
	}
	acts = step(t, c, hone.Event{Kind: hone.EventCheckpointMissing, TrialID: tr.ID, Time: at(7), Checkpoint: &hone.CheckpointRef{Path: paths[0]}})
	if s = startOf(acts); s.Checkpoint != nil || s.Iteration != 0 {
		t.Fatalf("start with no checkpoint left: %+v, want from scratch", s)
	}
	if !strings.Contains(logs(acts), "restarting from scratch") || !ckdel(acts, paths[0]) {
		t.Errorf("log: %q", logs(acts))
	}
	if tr.Failures != 1 || tr.Status != hone.StatusRunning || c.Alive() != 1 {
		t.Fatalf("trial %s, %d failures, %d alive; want RUNNING, the one failure of the crash, 1 alive", tr.Status, tr.Failures, c.Alive())
	}
	step(t, c, hone.Event{Kind: hone.EventResult, TrialID: tr.ID, Time: at(8), Metrics: map[string]any{"loss": 0.5}})
	if tr.LastResult.TrainingIteration != 1 {
		t.Fatalf("first result from scratch has iteration %d, want 1", tr.LastResult.TrainingIteration)
	}
}

// TestTrialFailedInput pins hone.EventTrialFailed: a running trial fails
// with the error (retried under max_failures); for a trial that is not
// running it is only logged.
func TestTrialFailedInput(t *testing.T) {
	exp := &hone.Experiment{Searcher: &listSearcher{n: 1}, Metric: "loss"}
	c, err := New(exp, hone.Resources{CPU: 1})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	step(t, c, hone.Event{Kind: hone.EventBegin, Time: t0.UnixNano()})
	tr := c.Trials()[0]
	step(t, c, hone.Event{Kind: hone.EventResult, TrialID: tr.ID, Time: t0.UnixNano(), Metrics: map[string]any{"loss": 1.0}})
	acts := step(t, c, hone.Event{Kind: hone.EventTrialFailed, TrialID: tr.ID, Time: t0.UnixNano(), Err: "write result.json: not a directory"})
	if tr.Status != hone.StatusError || tr.Error != "write result.json: not a directory" || tr.Failures != 1 {
		t.Fatalf("trial %s %q after hone.EventTrialFailed, want ERROR with the error", tr.Status, tr.Error)
	}
	stopped := false
	for _, a := range acts {
		stopped = stopped || (a.Kind == ActDirect && a.Directive == hone.DirectStop)
	}
	if !stopped {
		t.Errorf("the failed trial's process was not told to stop: %+v", acts)
	}
	acts = step(t, c, hone.Event{Kind: hone.EventTrialFailed, TrialID: tr.ID, Time: t0.UnixNano(), Err: "write error.txt: not a directory"})
	if tr.Failures != 1 || tr.Error != "write result.json: not a directory" {
		t.Fatalf("a second error for a trial no longer running changed it: %d %q", tr.Failures, tr.Error)
	}
	logged := false
	for _, a := range acts {
		logged = logged || (a.Kind == ActLog && strings.Contains(a.Text, "write error.txt: not a directory"))
	}
	if !logged {
		t.Errorf("the error for a trial not running was not logged: %+v", acts)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/trial"
)

// endlessSpec samples until stopped, one trial at a time, so that trials
// wait PENDING and never start when the experiment stops.
const endlessSpec = `metric: score
mode: max
num_samples: -1
search_space:
  x: {uniform: [1, 2]}
stop: {training_iteration: 2}
max_concurrent_trials: 1
command: [unused]
`

// TestStoppedAndNotStarted interrupts an experiment that samples without
// end: hone status and hone results show the trial that was running as
// STOPPED, count the trials that never started apart and leave them out of
// the table, the CSV and the best trial unless --not-started is given; the
// summary of hone run does the same.
func TestStoppedAndNotStarted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var reports atomic.Int32
	c := cli{t: t, ctx: ctx, exec: goTrainer(func(s trial.Session, it int) {
		// Interrupt the third trial after its first of two results.
		if reports.Add(1) == 5 {
			cancel()
		}
	})}
	path, dir := writeSpec(t, "endless", endlessSpec)
	code, runOut, errOut := c.run("run", path)
	if code != exitInterrupted {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var started, notStarted, running int
	for _, tr := range e.Trials {
		switch {
		case tr.NotStarted():
			notStarted++
		default:
			started++
		}
		if tr.Status == hone.StatusRunning {
			running++
		}
	}
	if notStarted == 0 || running == 0 {
		t.Fatalf("the interrupt left %d trials that never started and %d RUNNING; the test needs both", notStarted, running)
	}
	ns := plural(notStarted, "trial") + " never started"
	if !strings.Contains(runOut, ", "+strconv.Itoa(notStarted)+" not started).") || !strings.Contains(runOut, ns) {
		t.Errorf("the run's summary does not count %d trials not started:\n%s", notStarted, runOut)
	}

	for _, cmd := range []string{"status", "results"} {
		code, out, errOut := c.run(cmd, dir)
		if code != exitOK {
			t.Fatalf("%s: exit %d\n%s", cmd, code, errOut)
		}
		if !strings.Contains(out, strconv.Itoa(notStarted)+" not started)") || !strings.Contains(out, ns+" (no results) and") {
			t.Errorf("%s does not count %d trials not started apart:\n%s", cmd, notStarted, out)
		}
		if strings.Contains(out, "PENDING") || strings.Contains(out, "RUNNING") {
			t.Errorf("%s lists a trial that never started, or one RUNNING while no hone runs:\n%s", cmd, out)
		}
		if !strings.Contains(out, " "+statusStopped+" ") {
			t.Errorf("%s shows no trial %s:\n%s", cmd, statusStopped, out)
		}
		if n := tableRows(out); n != started {
			t.Errorf("%s lists %d trials, want the %d that started:\n%s", cmd, n, started, out)
		}
		code, out, _ = c.run(cmd, dir, "--not-started")
		if n := tableRows(out); code != exitOK || n != len(e.Trials) || !strings.Contains(out, "PENDING (not started)") {
			t.Errorf("%s --not-started: exit %d, %d trials listed, want %d:\n%s", cmd, code, n, len(e.Trials), out)
		}
	}
	code, out, _ := c.run("status", dir)
	if code != exitOK || !strings.Contains(out, "STOPPED: was running when the experiment stopped; hone resume continues it") {
		t.Errorf("status does not explain STOPPED:\n%s", out)
	}

	for _, tc := range []struct {
		flag string
		want int
	}{{"", started}, {"--not-started", len(e.Trials)}} {
		args := []string{"results", dir, "--csv"}
		if tc.flag != "" {
			args = append(args, tc.flag)
		}
		code, out, _ := c.run(args...)
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if code != exitOK || err != nil || len(recs) != 1+tc.want {
			t.Errorf("results --csv %s: exit %d, %v, %d rows, want %d", tc.flag, code, err, len(recs)-1, tc.want)
		}
	}
	code, out, _ = c.run("results", dir, "--best")
	if code != exitOK || !strings.Contains(out, "Best trial: ") {
		t.Errorf("results --best: %d\n%s", code, out)
	}
	for _, tr := range e.Trials {
		if tr.NotStarted() && strings.Contains(out, tr.ID) {
			t.Errorf("the best trial never started:\n%s", out)
		}
	}
}

// tableRows counts the lines of a status or results table that start with
// a trial id.
func tableRows(out string) int {
	n := 0
	in := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "Trial "):
			in = true
		case in && l != "" && !strings.Contains(l, "never started"):
			n++
		default:
			in = false
		}
	}
	return n
}

// TestStatusTornJournal cuts a real journal at every byte offset, as a
// crash in the middle of a write leaves it: hone status and hone results
// read every trial whose record is complete, with the status the complete
// records give it; a journal cut inside its header is a clear error.
func TestStatusTornJournal(t *testing.T) {
	c := cli{t: t, exec: goTrainer(nil)}
	path, dir := writeSpec(t, "torn", gridSpec)
	if code, _, errOut := c.run("run", path); code != exitOK {
		t.Fatalf("run: %d %s", code, errOut)
	}
	jp := filepath.Join(dir, journal.FileName)
	data, err := os.ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	header := bytes.IndexByte(data, '\n') + 1
	// Every byte offset with HONE_LONG=1; otherwise, around each line's
	// ends and in its middle.
	var cuts []int
	if os.Getenv("HONE_LONG") != "" {
		for cut := 0; cut <= len(data); cut++ {
			cuts = append(cuts, cut)
		}
	} else {
		start := 0
		for _, l := range bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			end := start + len(l)
			cuts = append(cuts, start, start+1, start+len(l)/2, end-1, end)
			start = end
		}
		cuts = append(cuts, len(data))
	}
	for _, cut := range cuts {
		if err := os.WriteFile(jp, data[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		// What the complete lines of the prefix say.
		want := map[string]hone.Status{}
		var order []string
		complete := data[header:max(cut, header)]
		complete = complete[:bytes.LastIndexByte(complete, '\n')+1] // a line without its newline is torn
		for _, l := range bytes.Split(complete, []byte("\n")) {
			var line journal.Line
			if json.Unmarshal(l, &line) != nil || line.Rec == nil {
				continue // the torn last line, or an input
			}
			switch r := line.Rec; r.Op {
			case "trial":
				want[r.Trial] = ""
				order = append(order, r.Trial)
			case "status":
				want[r.Trial] = r.Status
			}
		}
		code, out, errOut := c.run("status", dir)
		if cut < header {
			if code != exitFailed || !strings.Contains(errOut, "journal") {
				t.Errorf("cut at %d, inside the header: status exit %d, %q", cut, code, errOut)
			}
			continue
		}
		if code != exitOK || !strings.Contains(out, ": "+plural(len(order), "trial")+" (") {
			t.Fatalf("cut at %d of %d: status exit %d, want %s\nstdout:\n%s\nstderr:\n%s", cut, len(data), code, plural(len(order), "trial"), out, errOut)
		}
		e, err := results.Open(dir)
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if len(e.Trials) != len(order) {
			t.Fatalf("cut at %d: %d trials, want %d", cut, len(e.Trials), len(order))
		}
		for i, tr := range e.Trials {
			if tr.ID != order[i] || tr.Status != want[tr.ID] {
				t.Errorf("cut at %d: trial %d is %s %s, want %s %s", cut, i, tr.ID, tr.Status, order[i], want[order[i]])
			}
		}
		if code, out, errOut := c.run("results", dir, "--csv", "--not-started"); code != exitOK || strings.Count(out, "\n") != 1+len(order) {
			t.Fatalf("cut at %d: results --csv exit %d, %d lines, want %d\n%s%s", cut, code, strings.Count(out, "\n"), 1+len(order), out, errOut)
		}
	}
}

// TestBudgetStopSaysHowToContinue: a run that its time budget ends while
// trials still run exits 0 and says it stopped, why, and how to continue
// the unfinished trials, instead of "done".
func TestBudgetStopSaysHowToContinue(t *testing.T) {
	c := cli{t: t, exec: goTrainer(func(trial.Session, int) { time.Sleep(5 * time.Millisecond) })}
	path, dir := writeSpec(t, "budget", `metric: score
mode: max
num_samples: 2
search_space:
  x: {uniform: [1, 2]}
time_budget_s: 0.3
command: [unused]
`)
	code, _, errOut := c.run("run", path)
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "hone: stopped (time budget of 300ms used) with 2 trials unfinished") ||
		!strings.Contains(errOut, "hone resume "+dir) || strings.Contains(errOut, "hone: done") {
		t.Errorf("the end of a budget-stopped run does not say how to continue it:\n%s", errOut)
	}
}

package main

import (
	"context"
	"encoding/csv"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hone-tune/hone"
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
		// Interrupt in the middle of the third trial.
		if reports.Add(1) == 6 {
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

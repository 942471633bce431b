package main

import (
	"github.com/hone-tune/hone"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone/executor/slurm"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/internal/slurmtest"
	"github.com/hone-tune/hone/results"
)

// jobState returns the state squeue shows for job id ("" once it is
// gone).
func jobState(id string) string {
	out, err := exec.Command("squeue", "--noheader", "--states=all", "--jobs="+id, "--format=%T").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// pendingJobs returns the jobs whose names start with prefix that wait in
// the queue (experimentJobs leaves them out: they have no node yet).
func pendingJobs(t *testing.T, prefix string) []string {
	t.Helper()
	out, err := exec.Command("squeue", "--noheader", "--states=PENDING", "--format=%i|%j").Output()
	if err != nil {
		t.Fatalf("squeue: %v", err)
	}
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if id, name, ok := strings.Cut(line, "|"); ok && strings.HasPrefix(name, prefix) {
			ids = append(ids, id)
		}
	}
	return ids
}

// TestSlurmQueuedNotTimedOut: trials whose jobs wait in Slurm's queue for
// longer than trial_timeout and report_timeout (a job of someone else
// holds every node) are not failed for it: their limits count from when
// each runs. Every trial ends TERMINATED without a failure, and the
// journal holds a started input for each start.
func TestSlurmQueuedNotTimedOut(t *testing.T) {
	c := slurmtest.RequireExclusive(t) // the blocking job takes both nodes whole
	// The trials take a few seconds each, well within the limits; the
	// queue holds them for longer than either.
	path, storage := slurmSpec(t, 2, 30, "{name: slurm, poll_interval_s: 0.5}",
		"trial_timeout: 15s\nreport_timeout: 12s\n")
	dir := filepath.Join(storage, "onslurm")
	out, err := exec.Command("sbatch", "--parsable", "--exclusive", "-N2", "--partition="+c.Partition,
		"--job-name=hone-test-blocker", "--output=/dev/null", "--wrap=sleep 25").CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch the blocking job: %v %s", err, out)
	}
	blocker, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	t.Cleanup(func() { _ = exec.Command("scancel", blocker).Run() })
	for deadline := time.Now().Add(2 * time.Minute); jobState(blocker) != "RUNNING"; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the blocking job %s is %q after 2 minutes, want RUNNING", blocker, jobState(blocker))
		}
	}

	h := startHone(t, "run", path)
	// The experiment's jobs wait behind the blocking one.
	prefix := "hone-" + slurm.ExperimentKey(dir) + "-"
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if len(pendingJobs(t, prefix)) > 0 && jobState(blocker) == "RUNNING" {
			break
		}
		if time.Now().After(deadline) {
			stdout, stderr := output(h.cmd)
			t.Fatalf("no job of the experiment waited behind the blocking job (%s) within 2 minutes: %v\n%s%s",
				jobState(blocker), experimentJobs(t, prefix), stdout, stderr)
		}
	}
	h.wait(t, 5*time.Minute, exitOK)

	checkFinished(t, dir)
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range e.Trials {
		if tr.Failures != 0 {
			t.Errorf("trial %s failed %d times: %s", tr.ID, tr.Failures, tr.Error)
		}
		if b, err := os.ReadFile(filepath.Join(tr.Dir, "error.txt")); err == nil {
			t.Errorf("trial %s has an error.txt:\n%s", tr.ID, b)
		}
	}
	j, err := journal.Read(filepath.Join(dir, journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if s := j.Header.Settings; s == nil || !s.StartsAnnounced {
		t.Errorf("the journal's header settings %+v do not say the executor announces starts", s)
	}
	var begun int64
	starts, started := 0, 0
	for _, l := range j.Lines {
		switch {
		case l.Event != nil && l.Event.Kind == hone.EventBegin:
			begun = l.Event.Time
		case l.Event != nil && l.Event.Kind == hone.EventStarted:
			started++
			t.Logf("trial %s started on %s, %v after the experiment began", l.Event.TrialID, l.Event.Hostname, time.Duration(l.Event.Time-begun))
		case l.Rec != nil && l.Rec.Op == "status" && l.Rec.Status == "RUNNING":
			starts++
		}
	}
	if started != starts || starts == 0 {
		t.Errorf("%d started inputs for %d starts, want one each", started, starts)
	}
}

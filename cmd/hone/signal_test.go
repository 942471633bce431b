package main

import (
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/results"
)

// TestBinaryHangup sends SIGHUP to a running hone whose standard output is
// a pipe nobody reads any more, as when the SSH session of
// "hone run spec.yaml | tee log" closes: hone stops gracefully with exit
// code 3, as for SIGTERM, and hone resume continues the trials from their
// checkpoints.
func TestBinaryHangup(t *testing.T) {
	hangupReaches(t)
	const iters = 12
	path, dir := writeSpec(t, "hup", shSpec(iters, "0.1", ""))
	t.Cleanup(func() { killTrials(t, dir) })
	cmd := binary(t, "run", path)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	waitReports(t, dir, 4, cmd)
	r.Close() // the reader of the pipe is gone
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	stderr := cmd.Stderr.(*syncBuffer).String()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("hone after SIGHUP: exit %d (%v), want %d\nstderr:\n%s", code, err, exitInterrupted, stderr)
	}
	if !strings.Contains(stderr, "hone resume "+dir) {
		t.Errorf("no resume hint after SIGHUP:\n%s", stderr)
	}
	before, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	reported := map[string]int{}
	stopped := 0
	for _, tr := range before.Trials {
		rows, _ := tr.Results()
		reported[tr.ID] = len(rows)
		if !tr.Status.Finished() && len(tr.Checkpoints) > 0 {
			stopped++
		}
	}
	if stopped == 0 {
		t.Fatalf("no unfinished trial with a checkpoint after SIGHUP: %+v", before.Trials)
	}
	// hone status says what the trials that were running are now.
	code, out, _ := runBinary(t, "status", dir)
	if code != exitOK || !strings.Contains(out, "Not running") || !strings.Contains(out, " "+statusStopped+" ") || strings.Contains(out, "RUNNING") {
		t.Errorf("status after the graceful stop: exit %d, want no trial RUNNING and some %s:\n%s", code, statusStopped, out)
	}

	code, out, errOut := runBinary(t, "resume", dir)
	if code != exitOK {
		t.Fatalf("resume: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	after, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range after.Trials {
		rows, _ := tr.Results()
		last, _ := tr.Last()
		it, _ := last.Value(hone.FieldTrainingIteration)
		if tr.Status != hone.StatusTerminated || it != iters {
			t.Errorf("trial %s: %s at iteration %v after resume", tr.ID, tr.Status, it)
		}
		// Continued, not started over: iteration 1 appears once.
		if ones := atIteration(rows, 1); ones != 1 && reported[tr.ID] > 0 {
			t.Errorf("trial %s started over after the SIGHUP: %d results at iteration 1", tr.ID, ones)
		}
	}
}

// TestBinarySecondSignal checks that any two of the stop signals make hone
// quit at once (130): here SIGHUP, then SIGTERM during the graceful stop.
func TestBinarySecondSignal(t *testing.T) {
	hangupReaches(t)
	cmd, _, _ := stoppingStubborn(t, "hupterm", syscall.SIGHUP)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitKilled {
		t.Fatalf("exit %d after SIGHUP and SIGTERM, want %d\nstderr:\n%s", code, exitKilled, cmd.Stderr)
	}
}

// hangupReaches makes the hone processes the test starts get SIGHUP's
// default disposition even when the tests themselves run with it ignored
// (under nohup, say): an ignored signal stays ignored across exec, and
// hone rightly keeps ignoring a hangup it was started to ignore
// (TestBinaryNohup). A signal the test process catches is reset to the
// default in its children, so it catches SIGHUP until the test ends. It
// does so whatever signal.Ignored says: once an earlier test's catch has
// ended, SIGHUP is ignored again but no longer reported as ignored.
func hangupReaches(t *testing.T) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	t.Cleanup(func() { signal.Stop(ch) })
}

// TestBinaryNohup starts hone with SIGHUP ignored, as nohup does: the
// hangup does not stop it, and the experiment goes on.
func TestBinaryNohup(t *testing.T) {
	path, dir := writeSpec(t, "nohup", shSpec(12, "0.1", ""))
	t.Cleanup(func() { killTrials(t, dir) })
	cmd := binary(t, "run", path)
	cmd.Args = []string{"sh", "-c", `trap '' HUP; exec "$0" "$@"`, honeBin, "run", path}
	cmd.Path = "/bin/sh"
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitReports(t, dir, 3, cmd)
	before := countReports(dir)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(time.Minute)
	for countReports(dir) < before+6 {
		select {
		case <-exited:
			t.Fatalf("hone started with SIGHUP ignored exited on SIGHUP (exit %d)\nstderr:\n%s", cmd.ProcessState.ExitCode(), cmd.Stderr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			t.Fatalf("no new results within a minute of the SIGHUP\nstderr:\n%s", cmd.Stderr)
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	<-exited
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Errorf("hone after SIGINT: exit %d, want %d\nstderr:\n%s", code, exitInterrupted, cmd.Stderr)
	}
}

// countReports counts the results in the experiment's files so far.
func countReports(dir string) int {
	e, err := results.Open(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, tr := range e.Trials {
		rows, _ := tr.Results()
		n += len(rows)
	}
	return n
}

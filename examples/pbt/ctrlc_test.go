package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone"
)

// TestCtrlCThenResume runs the example as a real process, interrupts it
// with SIGINT (Ctrl-C) while the population trains, and runs the same
// command again: the second run resumes, every result reported before the
// stop is kept as it was (nothing is redone), and every trial finishes.
func TestCtrlCThenResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "pbt")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	dir := filepath.Join(tmp, "exp")
	args := []string{"-dir", dir, "-population", "4", "-epochs", "24", "-train-size", "4000", "-seed", "9"}

	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the population has reported some epochs.
	deadline := time.Now().Add(2 * time.Minute)
	for countResults(dir) < 16 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the experiment never reported 16 results")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("interrupted run: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "stopped; run the same command again") {
		if strings.Contains(stdout.String(), "best trial") {
			t.Skip("the experiment finished before the interrupt; nothing to resume")
		}
		t.Fatalf("interrupted run's output:\n%s\n%s", stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "stopping: trials are saving") {
		t.Errorf("no stopping notice on stderr:\n%s", stderr.String())
	}
	before := openResults(t, dir)
	unfinished := 0
	for _, tr := range before.Trials {
		if !tr.Status.Finished() {
			unfinished++
		}
	}
	if unfinished == 0 {
		t.Fatal("no trial left unfinished by the interrupt")
	}

	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	for _, want := range []string{"resuming the experiment", "best trial", "schedule of trial"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("resumed run's output lacks %q:\n%s", want, out)
		}
	}
	after := openResults(t, dir)
	if len(after.Trials) != 4 {
		t.Fatalf("%d trials after resume, want 4", len(after.Trials))
	}
	for _, tr := range after.Trials {
		if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s is %s after resume", tr.ID, tr.Status)
		}
		old := rows(t, before.Trial(tr.ID))
		now := rows(t, tr)
		if len(now) < len(old) || !reflect.DeepEqual(now[:len(old)], old) {
			t.Errorf("trial %s: the %d results reported before the stop are not the first of the %d after resume", tr.ID, len(old), len(now))
		}
		if last, _ := tr.Last(); last != nil {
			if it, _ := last.Value(hone.FieldTrainingIteration); it != 24 {
				t.Errorf("trial %s ended at epoch %v, want 24", tr.ID, it)
			}
		}
	}
}

// countResults counts the results all trials of the experiment in dir have
// written so far.
func countResults(dir string) int {
	files, _ := filepath.Glob(filepath.Join(dir, "*", "result.json"))
	n := 0
	for _, f := range files {
		b, _ := os.ReadFile(f)
		n += bytes.Count(b, []byte("\n"))
	}
	return n
}

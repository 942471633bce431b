package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/results"
)

// TestKill9ThenResume runs the quickstart as a real process, kills it with
// SIGKILL once some trials have finished and others are running, and runs it
// again: the experiment finishes, finished trials are not redone, and every
// checkpoint the journal registered is still on disk.
func TestKill9ThenResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "quickstart")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	dir := filepath.Join(tmp, "exp")
	args := []string{"-dir", dir, "-samples", "6", "-epochs", "12", "-train-size", "3000"}

	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until at least two trials are TERMINATED and one is RUNNING.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the experiment never reached two finished trials")
		}
		if n := countStatus(t, dir, hone.StatusTerminated); n >= 2 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	before, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	finished := map[string]int{}
	var registered []string
	for _, tr := range before.Trials {
		if tr.Status == hone.StatusTerminated {
			rows, _ := tr.Results()
			finished[tr.ID] = len(rows)
		}
		registered = append(registered, tr.Checkpoints...)
	}
	// Right after the kill, every checkpoint the journal registered is on
	// disk and complete (its model file is there).
	for _, p := range registered {
		if _, err := os.Stat(filepath.Join(p, "model.json")); err != nil {
			t.Errorf("registered checkpoint incomplete after SIGKILL: %v", err)
		}
	}
	if len(finished) == 6 {
		t.Skip("the experiment finished before the kill; nothing to resume")
	}

	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "resuming the experiment") || !strings.Contains(string(out), "best trial") {
		t.Fatalf("resume output:\n%s", out)
	}
	after, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Trials) != 6 {
		t.Fatalf("%d trials after resume, want 6", len(after.Trials))
	}
	for _, tr := range after.Trials {
		if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s is %s after resume", tr.ID, tr.Status)
		}
		if n, ok := finished[tr.ID]; ok {
			rows, _ := tr.Results()
			if len(rows) != n {
				t.Errorf("finished trial %s was redone: %d results before, %d after", tr.ID, n, len(rows))
			}
		}
	}
	// Registered checkpoints survive unless retention later replaced them:
	// those of finished trials must all still exist.
	for _, tr := range before.Trials {
		if _, ok := finished[tr.ID]; !ok {
			continue
		}
		for _, p := range tr.Checkpoints {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("registered checkpoint lost: %v", err)
			}
		}
	}
}

func countStatus(t *testing.T, dir string, st hone.Status) int {
	f, err := os.Open(filepath.Join(dir, "experiment_state.jsonl"))
	if err != nil {
		return 0
	}
	defer f.Close()
	// Count trials whose latest status record is st.
	last := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		l := sc.Text()
		if i := strings.Index(l, `"o":"status"`); i >= 0 {
			id := field(l, `"t":"`)
			last[id] = field(l, `"st":"`)
		}
	}
	n := 0
	for _, s := range last {
		if s == string(st) {
			n++
		}
	}
	return n
}

func field(l, key string) string {
	i := strings.Index(l, key)
	if i < 0 {
		return ""
	}
	rest := l[i+len(key):]
	if j := strings.IndexByte(rest, '"'); j >= 0 {
		return rest[:j]
	}
	return ""
}

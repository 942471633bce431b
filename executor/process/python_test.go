package process_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/process"
)

// pythonTrial returns options that run a Python script using the Python
// client, clients/python/hone.py; the test is skipped without python3 or
// the client.
func pythonTrial(t *testing.T, script string) process.Options {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	client, err := filepath.Abs(filepath.Join("..", "..", "clients", "python"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(client, "hone.py")); err != nil {
		t.Skipf("no Python client: %v", err)
	}
	path := filepath.Join(t.TempDir(), "train.py")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return process.Options{Command: []string{py, path}, Env: []string{"PYTHONPATH=" + client, "PYTHONDONTWRITEBYTECODE=1"}}
}

// TestPythonFunction runs a function-style Python trial: it reports with
// checkpoints, cannot save on demand, stops when told, and restores.
func TestPythonFunction(t *testing.T) {
	ex := newExecutor(t, pythonTrial(t, `
import os, hone

cfg = hone.get_config()
start = hone.get_iteration()
restore = hone.get_checkpoint()
if restore:
    with open(os.path.join(restore, "i")) as f:
        assert int(f.read()) == start
for i in range(start + 1, 4):
    ck = hone.checkpoint_dir()
    with open(os.path.join(ck, "i"), "w") as f:
        f.write(str(i))
    if hone.report({"loss": cfg["lr"] / i, "i": i, "id": hone.trial_id()}, checkpoint_dir=ck, done=(i == 3)) == "stop":
        break
`))
	dir := start(t, ex, "py", "", hone.Resources{})
	ev := result(t, ex, "py")
	if ev.Metrics["loss"] != 0.5 || ev.Metrics["i"] != 1.0 || ev.Metrics["id"] != "py" || ev.Done {
		t.Errorf("first result %+v", ev)
	}
	direct(t, ex, "py", hone.DirectCheckpoint)
	if ev := next(t, ex); ev.Kind != hone.EventSaved || ev.CheckpointDir != "" || ev.Cause != nil {
		t.Fatalf("save of a function trial: %v %q %v", ev.Kind, ev.CheckpointDir, ev.Cause)
	}
	direct(t, ex, "py", hone.DirectContinue)
	ev = result(t, ex, "py")
	staged := ev.CheckpointDir
	if ev.Metrics["i"] != 2.0 || filepath.Dir(staged) != filepath.Join(dir, ".staging") {
		t.Errorf("second result %+v", ev)
	}
	direct(t, ex, "py", hone.DirectStop)
	if err := exitErr(t, ex, "py"); err != nil {
		t.Fatal(err)
	}

	cp := filepath.Join(dir, "checkpoint_000001")
	if err := os.Rename(staged, cp); err != nil {
		t.Fatal(err)
	}
	if err := ex.Start(hone.StartSpec{TrialID: "py", Dir: dir, Config: hone.Config{"lr": 0.5}, RestoreDir: cp, Iteration: 2}); err != nil {
		t.Fatal(err)
	}
	if ev := result(t, ex, "py"); ev.Metrics["i"] != 3.0 || !ev.Done {
		t.Errorf("result after the restore %+v", ev)
	}
	direct(t, ex, "py", hone.DirectStop)
	if err := exitErr(t, ex, "py"); err != nil {
		t.Fatal(err)
	}
}

// TestPythonClass runs a class-style Python trial, which saves on demand.
func TestPythonClass(t *testing.T) {
	ex := newExecutor(t, pythonTrial(t, `
import os, hone

class Count(hone.Trainable):
    def setup(self, config):
        self.n = 0
    def step(self):
        self.n += 1
        return {"n": self.n}
    def save(self, d):
        with open(os.path.join(d, "n"), "w") as f:
            f.write(str(self.n))
    def load(self, d):
        with open(os.path.join(d, "n")) as f:
            self.n = int(f.read())

Count.run()
`))
	start(t, ex, "py", "", hone.Resources{})
	result(t, ex, "py")
	direct(t, ex, "py", hone.DirectContinue)
	result(t, ex, "py")
	direct(t, ex, "py", hone.DirectCheckpoint)
	ev := next(t, ex)
	if ev.Kind != hone.EventSaved || ev.Cause != nil || ev.CheckpointDir == "" {
		t.Fatalf("save: %v %q %v", ev.Kind, ev.CheckpointDir, ev.Cause)
	}
	if b, err := os.ReadFile(filepath.Join(ev.CheckpointDir, "n")); err != nil || string(b) != "2" {
		t.Errorf("saved %q, %v", b, err)
	}
	direct(t, ex, "py", hone.DirectStop)
	if err := exitErr(t, ex, "py"); err != nil {
		t.Fatal(err)
	}
}

// TestPythonNaN: Python's json writes NaN as a bare token; a report line
// holding one fails the trial with a message that names the metric.
func TestPythonNaN(t *testing.T) {
	ex := newExecutor(t, pythonTrial(t, `
import json, sys, time
print("HONE_REPORT " + json.dumps({"metrics": {"eval": {"loss": float("-inf")}}}), flush=True)
time.sleep(30)
`))
	start(t, ex, "py", "", hone.Resources{})
	err := exitErr(t, ex, "py")
	want := `protocol error: HONE_REPORT line: metric "eval.loss" is -Infinity: report finite numbers only (leave the metric out, or fail the trial)`
	if err == nil || err.Error() != want {
		t.Fatalf("exit error:\n%v\nwant:\n%s", err, want)
	}
}

// TestPythonException: a Python trial that raises fails with the end of
// its traceback.
func TestPythonException(t *testing.T) {
	ex := newExecutor(t, pythonTrial(t, `
import hone
hone.report({"loss": 1.0})
raise RuntimeError("diverged")
`))
	start(t, ex, "py", "", hone.Resources{})
	err := exitErr(t, ex, "py")
	if err == nil || !strings.HasPrefix(err.Error(), "trial process failed: exit status 1\nlast lines of stderr:\nTraceback") ||
		!strings.HasSuffix(err.Error(), "RuntimeError: diverged") {
		t.Fatalf("exit error:\n%v", err)
	}
}

// TestPythonClassSIGTERM: a Python class trainable that can save, sent
// SIGTERM by Interrupt during a step, finishes the step, reports it,
// saves when asked and exits when told to stop.
func TestPythonClassSIGTERM(t *testing.T) {
	ex := newExecutor(t, pythonTrial(t, `
import os, time, hone

class Count(hone.Trainable):
    def setup(self, config):
        self.n = 0
    def step(self):
        self.n += 1
        if self.n == 2:
            with open(os.path.join(hone.trial_dir(), "in-step-2"), "w") as f:
                f.write("2\n")
            time.sleep(0.5)
        return {"n": self.n}
    def save(self, d):
        with open(os.path.join(d, "n"), "w") as f:
            f.write(str(self.n))
    def load(self, d):
        pass

Count.run()
`))
	dir := start(t, ex, "py", "", hone.Resources{})
	result(t, ex, "py")
	direct(t, ex, "py", hone.DirectContinue)
	waitFile(t, filepath.Join(dir, "in-step-2"))
	ex.Interrupt()
	if ev := result(t, ex, "py"); ev.Metrics["n"] != 2.0 {
		t.Fatalf("result after SIGTERM: %+v, want n=2", ev.Metrics)
	}
	direct(t, ex, "py", hone.DirectCheckpoint)
	ev := next(t, ex)
	if ev.Kind != hone.EventSaved || ev.Cause != nil || ev.CheckpointDir == "" {
		t.Fatalf("save after SIGTERM: %v %q %v", ev.Kind, ev.CheckpointDir, ev.Cause)
	}
	if n := readFile(t, filepath.Join(ev.CheckpointDir, "n")); n != "2" {
		t.Errorf("checkpoint holds n=%s, want 2", n)
	}
	direct(t, ex, "py", hone.DirectStop)
	if err := exitErr(t, ex, "py"); err != nil {
		t.Fatal(err)
	}
}

package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/results"
)

// honeBin is the hone binary TestMain builds for the tests that run it as
// a real process; buildErr is why it could not be built.
var (
	honeBin  string
	buildErr error
)

func TestMain(m *testing.M) {
	tmp, err := os.MkdirTemp("", "hone-cli-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	honeBin = filepath.Join(tmp, "hone")
	if out, err := exec.Command("go", "build", "-o", honeBin, ".").CombinedOutput(); err != nil {
		buildErr = fmt.Errorf("go build: %v\n%s", err, out)
	}
	code := m.Run()
	os.RemoveAll(tmp)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// shTrainer is a trial in plain sh: it reports score = x * iteration on
// stdout with a checkpoint holding the iteration, every $PAUSE seconds,
// continuing from a restored checkpoint, until hone stops it.
const shTrainer = `
x=$(printf '%s' "$HONE_CONFIG" | sed -n 's/.*"x": *\([0-9]*\).*/\1/p')
i=${HONE_ITERATION:-0}
if [ -n "$HONE_RESTORE_DIR" ]; then i=$(cat "$HONE_RESTORE_DIR/iter"); fi
while :; do
  i=$((i+1))
  d="$HONE_STAGING_DIR/c$i"
  mkdir -p "$d" && echo "$i" > "$d/iter"
  echo "HONE_REPORT {\"metrics\":{\"score\":$((x*i))},\"checkpoint\":\"$d\"}"
  sleep "$PAUSE"
done
`

// shSpec returns a spec running shTrainer over x in {1, 2, 3}.
func shSpec(iterations int, pause string, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "metric: score\nmode: max\nsearch_space:\n  x: {grid: [1, 2, 3]}\n")
	fmt.Fprintf(&b, "stop: {training_iteration: %d}\nmax_concurrent_trials: 2\n", iterations)
	fmt.Fprintf(&b, "checkpoint: {num_to_keep: 2}\nenv: {PAUSE: %q}\n%s", pause, extra)
	b.WriteString("command:\n  - sh\n  - -c\n  - |")
	for _, l := range strings.Split(strings.TrimSpace(shTrainer), "\n") {
		b.WriteString("\n    " + l)
	}
	b.WriteString("\n")
	return b.String()
}

// syncBuffer is a bytes.Buffer safe to read while a process writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// output returns what cmd wrote to its standard output and error.
func output(cmd *exec.Cmd) (stdout, stderr string) {
	return cmd.Stdout.(*syncBuffer).String(), cmd.Stderr.(*syncBuffer).String()
}

// binary returns an exec.Cmd running the built hone, or skips the test.
func binary(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	if buildErr != nil {
		t.Fatalf("hone binary: %v", buildErr)
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	cmd := exec.Command(honeBin, args...)
	// A hone the test kills cannot remove its trials' socket directory:
	// keep it in the test's own temporary directory.
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	cmd.Stdout, cmd.Stderr = new(syncBuffer), new(syncBuffer)
	return cmd
}

// runBinary runs hone to its end and returns the exit code and output.
func runBinary(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := binary(t, args...)
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("hone %v: %v", args, err)
	}
	stdout, stderr := output(cmd)
	return cmd.ProcessState.ExitCode(), stdout, stderr
}

// killTrials kills the process groups of every trial that reported, in case
// an aborted hone left some behind.
func killTrials(t *testing.T, dir string) {
	e, err := results.Open(dir)
	if err != nil {
		return
	}
	for _, tr := range e.Trials {
		rows, _ := tr.Results()
		seen := map[int]bool{}
		for _, r := range rows {
			if pid, ok := r.Value(hone.FieldPID); ok && pid > 1 && !seen[int(pid)] {
				seen[int(pid)] = true
				_ = syscall.Kill(-int(pid), syscall.SIGKILL)
			}
		}
	}
}

// waitReports waits until the experiment in dir has at least n results in
// all, or fails the test.
func waitReports(t *testing.T, dir string, n int, cmd *exec.Cmd) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if e, err := results.Open(dir); err == nil {
			total := 0
			for _, tr := range e.Trials {
				rows, _ := tr.Results()
				total += len(rows)
			}
			if total >= n {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	t.Fatalf("no %d results within a minute\nstderr:\n%s", n, cmd.Stderr)
}

func TestBinaryRunStatusResults(t *testing.T) {
	path, dir := writeSpec(t, "sh", shSpec(3, "0.01", ""))
	t.Cleanup(func() { killTrials(t, dir) })
	code, out, errOut := runBinary(t, "run", path)
	if code != exitOK {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "Experiment finished") {
		t.Errorf("no final table:\n%s", out)
	}

	code, out, _ = runBinary(t, "status", dir)
	if code != exitOK || !strings.Contains(out, "3 trials (3 TERMINATED)") {
		t.Errorf("status: %d\n%s", code, out)
	}

	code, out, errOut = runBinary(t, "results", dir, "--best", "--csv")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != exitOK || err != nil || len(rows) != 2 {
		t.Fatalf("results --best --csv: %d %v\n%s%s", code, err, out, errOut)
	}
	col := map[string]string{}
	for i, h := range rows[0] {
		col[h] = rows[1][i]
	}
	if col["config/x"] != "3" || col["score"] != "9" || col["training_iteration"] != "3" || col["checkpoint_dir_name"] != "checkpoint_000002" {
		t.Errorf("best row: %v", col)
	}
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range e.Trials {
		if len(tr.Checkpoints) != 2 {
			t.Errorf("trial %s keeps %d checkpoints, want 2", tr.ID, len(tr.Checkpoints))
		}
		for _, cp := range tr.Checkpoints {
			if _, err := os.Stat(filepath.Join(cp, "iter")); err != nil {
				t.Error(err)
			}
		}
	}

	code, _, errOut = runBinary(t, "run", path)
	if code != exitUsage || !strings.Contains(errOut, "already holds an experiment") {
		t.Errorf("second run: %d\n%s", code, errOut)
	}
}

// TestBinaryInterrupt sends SIGINT to a running hone: it stops gracefully
// with exit code 3, and hone resume finishes the experiment, continuing
// trials from their checkpoints.
func TestBinaryInterrupt(t *testing.T) {
	const iters = 12
	path, dir := writeSpec(t, "intr", shSpec(iters, "0.1", ""))
	t.Cleanup(func() { killTrials(t, dir) })
	cmd := binary(t, "run", path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitReports(t, dir, 4, cmd)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("interrupted run: exit %d (%v)\nstderr:\n%s", code, err, cmd.Stderr)
	}
	if _, stderr := output(cmd); !strings.Contains(stderr, "hone resume "+dir) {
		t.Errorf("no resume hint:\n%s", cmd.Stderr)
	}
	before, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	reported := map[string]int{}
	for _, tr := range before.Trials {
		rows, _ := tr.Results()
		reported[tr.ID] = len(rows)
	}

	code, out, errOut := runBinary(t, "resume", dir)
	if code != exitOK {
		t.Fatalf("resume: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	after, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Trials) != 3 {
		t.Fatalf("%d trials after resume", len(after.Trials))
	}
	for _, tr := range after.Trials {
		last, _ := tr.Last()
		it, _ := last.Value(hone.FieldTrainingIteration)
		score, _ := last.Value("score")
		x, _ := hone.Number(tr.Config["x"])
		if tr.Status != hone.StatusTerminated || it != iters || score != x*iters {
			t.Errorf("trial %s: %s at iteration %v with score %v", tr.ID, tr.Status, it, score)
		}
		// Trials resumed from a checkpoint: their iterations go on without
		// starting over (a restart from scratch would repeat iteration 1).
		rows, _ := tr.Results()
		if ones := atIteration(rows, 1); ones != 1 && reported[tr.ID] > 0 {
			t.Errorf("trial %s started over after resume: %d results at iteration 1", tr.ID, ones)
		}
	}
}

// atIteration counts the rows at training iteration it: a trial resumed
// from a checkpoint has one row at iteration 1, one started over more.
func atIteration(rows []results.Row, it float64) int {
	n := 0
	for _, r := range rows {
		if v, _ := r.Value(hone.FieldTrainingIteration); v == it {
			n++
		}
	}
	return n
}

// stoppingStubborn starts hone on a spec whose trials ignore SIGTERM (so
// its graceful stop would last stop_grace, a minute), sends it sig once
// two results are in, and returns once hone says it is stopping: the
// running command, the spec's path and the experiment directory.
func stoppingStubborn(t *testing.T, name string, sig os.Signal) (*exec.Cmd, string, string) {
	t.Helper()
	stubborn := strings.Replace(shSpec(6, "0.1", "stop_grace: 1m\n"), "    x=$(", "    trap '' TERM\n    x=$(", 1)
	path, dir := writeSpec(t, name, stubborn)
	t.Cleanup(func() { killTrials(t, dir) })
	cmd := binary(t, "run", path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitReports(t, dir, 2, cmd)
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, stderr := output(cmd); !strings.Contains(stderr, "stopping") && time.Now().Before(deadline); _, stderr = output(cmd) {
		time.Sleep(10 * time.Millisecond) // the signal was seen
	}
	return cmd, path, dir
}

// TestBinarySecondInterrupt checks that a second SIGINT during a graceful
// stop exits at once with code 130, and that the experiment still resumes.
func TestBinarySecondInterrupt(t *testing.T) {
	cmd, path, dir := stoppingStubborn(t, "twice", os.Interrupt)
	start := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitKilled {
		t.Fatalf("exit %d after two interrupts, want %d\nstderr:\n%s", code, exitKilled, cmd.Stderr)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the second interrupt took %v", d)
	}
	killTrials(t, dir)

	// Resume with a spec whose trials stop when told.
	tame := filepath.Join(t.TempDir(), "tame.yaml")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tame, bytes.Replace(src, []byte("trap '' TERM"), []byte(":"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runBinary(t, "resume", dir, "--spec", tame)
	if code != exitOK {
		t.Fatalf("resume: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range e.Trials {
		if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s: %s", tr.ID, tr.Status)
		}
	}
}

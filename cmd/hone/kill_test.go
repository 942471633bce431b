package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/results"
)

// ckptTrainer is a trial in plain sh that checkpoints every iteration: it
// reports score = x * iteration on stdout with a checkpoint holding the
// iteration, every $PAUSE seconds, continuing from a restored checkpoint,
// and marks its report at iteration $LAST (3 when x is $SHORT) done. It
// writes a line to stderr each time it starts, and when $CRASH_AT is set,
// it exits with status 1 on reaching that iteration the first time.
const ckptTrainer = `
x=$(printf '%s' "$HONE_CONFIG" | sed -n 's/.*"x": *\([0-9]*\).*/\1/p')
n=$LAST
if [ "$x" = "$SHORT" ]; then n=3; fi
i=0
if [ -n "$HONE_RESTORE_DIR" ]; then i=$(cat "$HONE_RESTORE_DIR/iter"); fi
echo "start x=$x iteration=${HONE_ITERATION:-0} restored=$i" >&2
while [ "$i" -lt "$n" ]; do
  i=$((i+1))
  if [ "$i" = "$CRASH_AT" ] && [ ! -e "$HONE_TRIAL_DIR/crashed" ]; then
    touch "$HONE_TRIAL_DIR/crashed"
    echo "crash at iteration $i" >&2
    exit 1
  fi
  d="$HONE_STAGING_DIR/c$i"
  mkdir -p "$d" && echo "$i" > "$d/iter"
  done=false
  if [ "$i" -ge "$n" ]; then done=true; fi
  echo "HONE_REPORT {\"metrics\":{\"score\":$((x*i))},\"checkpoint\":\"$d\",\"done\":$done}"
  sleep "$PAUSE"
done
`

// ckptSpec returns a spec running ckptTrainer over x in grid, two trials
// at a time, with the given environment and extra keys.
func ckptSpec(grid string, env map[string]string, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "metric: score\nmode: max\nsearch_space:\n  x: {grid: %s}\n", grid)
	b.WriteString("max_concurrent_trials: 2\ncheckpoint: {num_to_keep: 2}\nenv:\n")
	for _, k := range []string{"PAUSE", "LAST", "SHORT", "CRASH_AT"} {
		fmt.Fprintf(&b, "  %s: %q\n", k, env[k])
	}
	b.WriteString(extra)
	b.WriteString("command:\n  - sh\n  - -c\n  - |")
	for _, l := range strings.Split(strings.TrimSpace(ckptTrainer), "\n") {
		b.WriteString("\n    " + l)
	}
	b.WriteString("\n")
	return b.String()
}

// childPIDs returns the process ids of pid's children, read from /proc.
func childPIDs(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var kids []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // it ended meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) >= 2 && fields[1] == strconv.Itoa(pid) {
			kids = append(kids, p)
		}
	}
	return kids
}

// lastCheckpointIteration returns the iteration stored in the trial's
// latest registered checkpoint.
func lastCheckpointIteration(t *testing.T, tr *results.Trial) int {
	t.Helper()
	latest := tr.Checkpoints[len(tr.Checkpoints)-1]
	b, err := os.ReadFile(filepath.Join(latest, "iter"))
	if err != nil {
		t.Fatalf("trial %s: latest checkpoint: %v", tr.ID, err)
	}
	it, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("trial %s: latest checkpoint %s holds %q", tr.ID, latest, b)
	}
	return it
}

// rowValue returns a numeric field of a result row, failing the test when
// it is missing.
func rowValue(t *testing.T, tr *results.Trial, r results.Row, key string) float64 {
	t.Helper()
	v, ok := r.Value(key)
	if !ok {
		t.Fatalf("trial %s: result row without %s: %v", tr.ID, key, r)
	}
	return v
}

// TestBinaryKillResume kills hone with SIGKILL while one trial has
// finished and another is running with checkpoints, kills the trials' process
// groups as a crash of the machine would, and resumes: the finished trial
// is not run again, and the running one continues from its latest
// registered checkpoint.
func TestBinaryKillResume(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds the trial processes in /proc")
	}
	const last = 40
	// x=1 stops at iteration 3; x=2 and x=3 run to 40, one started when
	// x=1 ends.
	env := map[string]string{"PAUSE": "0.05", "LAST": strconv.Itoa(last), "SHORT": "1"}
	path, dir := writeSpec(t, "kill", ckptSpec("[1, 2, 3]", env, ""))
	t.Cleanup(func() { killTrials(t, dir) })
	cmd := binary(t, "run", path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var trialPIDs []int
	killAll := func() {
		// Freeze hone so that it starts no trial while its children are
		// listed, then kill it and their process groups.
		_ = cmd.Process.Signal(syscall.SIGSTOP)
		trialPIDs = childPIDs(t, cmd.Process.Pid)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		for _, pid := range trialPIDs {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			// A child caught between fork and joining its own group.
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}

	// Wait until the journal shows a TERMINATED trial and a RUNNING one
	// with at least two registered checkpoints.
	ready := func() bool {
		e, err := results.Open(dir)
		if err != nil {
			return false
		}
		var terminated, running bool
		for _, tr := range e.Trials {
			switch {
			case tr.Status == hone.StatusTerminated:
				terminated = true
			case tr.Status == hone.StatusRunning && len(tr.Checkpoints) >= 2:
				running = true
			}
		}
		return terminated && running
	}
	deadline := time.Now().Add(time.Minute)
	for !ready() {
		if time.Now().After(deadline) {
			killAll()
			e, _ := results.Open(dir)
			var states []string
			if e != nil {
				for _, tr := range e.Trials {
					states = append(states, fmt.Sprintf("%s %v %s with %d checkpoints", tr.ID, tr.Config["x"], tr.Status, len(tr.Checkpoints)))
				}
			}
			t.Fatalf("no TERMINATED and RUNNING trials at once within a minute: %v\nstderr:\n%s", states, cmd.Stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	killAll()
	if len(trialPIDs) == 0 {
		t.Fatal("hone had no trial processes when it was killed")
	}
	if cmd.ProcessState.Success() {
		t.Fatal("hone exited normally before it was killed")
	}

	// What the crash left.
	before, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	type snapshot struct {
		status hone.Status
		rows   int // results journaled: result.json holds them after resume
		ckpt   int // iteration of the latest registered checkpoint, or 0
	}
	snap := map[string]snapshot{}
	resumedFromCheckpoint := 0
	journaled := journaledResults(t, dir)
	for _, tr := range before.Trials {
		rows, err := tr.Results()
		if err != nil {
			t.Fatal(err)
		}
		// The per-trial files buffer rows: at a kill they may lag the
		// journal, never lead it.
		if len(rows) > journaled[tr.ID] {
			t.Errorf("trial %s: result.json has %d rows at the kill, the journal %d results", tr.ID, len(rows), journaled[tr.ID])
		}
		s := snapshot{status: tr.Status, rows: journaled[tr.ID]}
		if len(tr.Checkpoints) > 0 {
			s.ckpt = lastCheckpointIteration(t, tr)
		}
		if s.status == hone.StatusRunning && s.ckpt >= 2 {
			resumedFromCheckpoint++
		}
		snap[tr.ID] = s
	}
	if resumedFromCheckpoint == 0 {
		t.Fatalf("after the kill, no RUNNING trial has a checkpoint: %+v", snap)
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
		t.Fatalf("%d trials after resume, want 3", len(after.Trials))
	}
	for _, tr := range after.Trials {
		rows, err := tr.Results()
		if err != nil {
			t.Fatal(err)
		}
		x, _ := hone.Number(tr.Config["x"])
		want := last
		if x == 1 {
			want = 3
		}
		if tr.Status != hone.StatusTerminated || len(rows) == 0 {
			t.Errorf("trial %s (x=%v): %s with %d results after resume, want TERMINATED", tr.ID, x, tr.Status, len(rows))
			continue
		}
		if it := rowValue(t, tr, rows[len(rows)-1], hone.FieldTrainingIteration); it != float64(want) {
			t.Errorf("trial %s (x=%v): last training_iteration %v, want %d", tr.ID, x, it, want)
		}
		s, existed := snap[tr.ID]
		switch {
		case !existed:
			// Created after the kill: it ran from the start.
		case s.status == hone.StatusTerminated:
			if len(rows) != s.rows {
				t.Errorf("trial %s finished before the kill with %d results, has %d after resume: it ran again", tr.ID, s.rows, len(rows))
			}
		case s.status == hone.StatusRunning && s.ckpt > 0:
			if len(rows) <= s.rows {
				t.Errorf("trial %s was running at the kill with %d results, has %d after resume", tr.ID, s.rows, len(rows))
				continue
			}
			// The first result after resume follows the latest
			// registered checkpoint, in hone's count and in the trial's
			// own, which it read from the checkpoint.
			next := rows[s.rows]
			it := rowValue(t, tr, next, hone.FieldTrainingIteration)
			score := rowValue(t, tr, next, "score")
			if it != float64(s.ckpt+1) || score != x*float64(s.ckpt+1) {
				t.Errorf("trial %s: latest checkpoint at iteration %d before the kill, but its first result after resume has training_iteration %v and score %v (want %d and %v)",
					tr.ID, s.ckpt, it, score, s.ckpt+1, x*float64(s.ckpt+1))
			}
			for _, r := range rows[s.rows:] {
				if v := rowValue(t, tr, r, hone.FieldTrainingIteration); v <= float64(s.ckpt) {
					t.Errorf("trial %s: training_iteration %v after resuming from the checkpoint at %d", tr.ID, v, s.ckpt)
					break
				}
			}
		}
	}
}

// journaledResults counts the results of each trial in dir's journal.
func journaledResults(t *testing.T, dir string) map[string]int {
	t.Helper()
	j, err := journal.Read(filepath.Join(dir, journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, l := range j.Lines {
		if l.Event != nil && l.Event.Kind == hone.EventResult {
			n[l.Event.TrialID]++
		}
	}
	return n
}

// TestBinaryCrashRetry runs trials that each crash (exit status 1) once,
// with max_failures: 1: each is retried once from its last checkpoint and
// finishes; its results count on from the checkpoint without repeating an
// iteration, and error.txt holds the crash.
func TestBinaryCrashRetry(t *testing.T) {
	const last = 5
	env := map[string]string{"PAUSE": "0.01", "LAST": strconv.Itoa(last), "CRASH_AT": "3"}
	path, dir := writeSpec(t, "crash", ckptSpec("[1, 2]", env, "failure: {max_failures: 1}\n"))
	t.Cleanup(func() { killTrials(t, dir) })
	code, out, errOut := runBinary(t, "run", path)
	if code != exitOK {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Trials) != 2 {
		t.Fatalf("%d trials, want 2", len(e.Trials))
	}
	for _, tr := range e.Trials {
		if tr.Status != hone.StatusTerminated || tr.Failures != 1 {
			t.Errorf("trial %s: %s after %d failures, want TERMINATED after 1", tr.ID, tr.Status, tr.Failures)
		}
		x, _ := hone.Number(tr.Config["x"])
		rows, err := tr.Results()
		if err != nil {
			t.Fatal(err)
		}
		// Iterations 1 and 2 before the crash, 3 to 5 after the retry
		// from the checkpoint of iteration 2.
		pids := map[float64]bool{}
		if len(rows) != last {
			t.Errorf("trial %s: %d results, want %d", tr.ID, len(rows), last)
		}
		for i, r := range rows {
			it := rowValue(t, tr, r, hone.FieldTrainingIteration)
			score := rowValue(t, tr, r, "score")
			if it != float64(i+1) || score != x*float64(i+1) {
				t.Errorf("trial %s: result %d has training_iteration %v and score %v, want %d and %v", tr.ID, i, it, score, i+1, x*float64(i+1))
			}
			pids[rowValue(t, tr, r, hone.FieldPID)] = true
		}
		if len(pids) != 2 {
			t.Errorf("trial %s: results came from %d processes, want 2 (one retry)", tr.ID, len(pids))
		}
		stderr, err := os.ReadFile(filepath.Join(tr.Dir, "stderr.log"))
		if err != nil {
			t.Fatal(err)
		}
		wantStarts := fmt.Sprintf("start x=%v iteration=0 restored=0\ncrash at iteration 3\nstart x=%v iteration=2 restored=2\n", x, x)
		if string(stderr) != wantStarts {
			t.Errorf("trial %s: stderr.log:\n%s\nwant:\n%s", tr.ID, stderr, wantStarts)
		}
		errText, err := os.ReadFile(filepath.Join(tr.Dir, "error.txt"))
		if err != nil || !strings.Contains(string(errText), "crash at iteration 3") {
			t.Errorf("trial %s: error.txt %q (%v), want the crash", tr.ID, errText, err)
		}
	}
}

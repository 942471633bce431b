package process_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/process"
	"github.com/hone-tune/hone/trial"
	"github.com/hone-tune/hone/wire"
)

// newExecutor returns an executor closed at the end of the test.
func newExecutor(t *testing.T, opts process.Options) *process.Executor {
	t.Helper()
	opts.Env = append(testEnv(), opts.Env...)
	ex, err := process.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	return ex
}

// shell returns options running script with sh -c.
func shell(script string) process.Options {
	return process.Options{Command: []string{"sh", "-c", script}}
}

// raw returns options running the scripted program in raw mode with
// lines.
func raw(t *testing.T, lines ...string) process.Options {
	t.Helper()
	b, err := json.Marshal(lines)
	if err != nil {
		t.Fatal(err)
	}
	return process.Options{Command: []string{scripted, "raw"}, Env: []string{"HONE_TEST_LINES=" + string(b)}}
}

const hello = `{"type":"hello","v":1,"token":"{token}","trial_id":"{trial_id}"}`

// start starts trial id in dir (a new temporary directory if "") and
// returns dir.
func start(t *testing.T, ex *process.Executor, id, dir string, res hone.Resources) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	if err := ex.Start(hone.StartSpec{TrialID: id, Dir: dir, Config: hone.Config{"lr": 0.5}, Resources: res}); err != nil {
		t.Fatalf("Start(%s): %v", id, err)
	}
	return dir
}

func next(t *testing.T, ex *process.Executor) hone.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ev, err := ex.Next(ctx)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return ev
}

func direct(t *testing.T, ex *process.Executor, id string, d hone.Directive) {
	t.Helper()
	if err := ex.Direct(id, d); err != nil {
		t.Fatalf("Direct(%s, %v): %v", id, d, err)
	}
}

// result expects a result of trial id.
func result(t *testing.T, ex *process.Executor, id string) hone.Event {
	t.Helper()
	ev := next(t, ex)
	if ev.Kind != hone.EventResult || ev.TrialID != id {
		t.Fatalf("got %v event of %s (err %v), want a result of %s", ev.Kind, ev.TrialID, ev.Cause, id)
	}
	return ev
}

// exitErr waits for trial id's exit, answering its results with
// DirectContinue, and returns its error.
func exitErr(t *testing.T, ex *process.Executor, id string) error {
	t.Helper()
	for {
		ev := next(t, ex)
		if ev.TrialID != id {
			t.Fatalf("event of trial %s, want one of %s", ev.TrialID, id)
		}
		switch ev.Kind {
		case hone.EventExited:
			return ev.Cause
		case hone.EventResult:
			direct(t, ex, id, hone.DirectContinue)
		case hone.EventStarted:
			if !ex.AnnouncesStarts() {
				t.Fatalf("a started event from an executor without a launcher")
			}
		default:
			t.Fatalf("unexpected %v event", ev.Kind)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStdoutReports: a shell script reports on stdout; its reports reach
// Next one at a time, each after the previous one was answered; it cannot
// save on demand; its output is logged.
func TestStdoutReports(t *testing.T) {
	ex := newExecutor(t, shell(`
echo "epoch 1"
echo 'HONE_REPORT {"metrics":{"loss":0.5,"eval":{"acc":[1,2]}}}'
mkdir -p "$HONE_STAGING_DIR/c1" && echo 1 > "$HONE_STAGING_DIR/c1/model"
echo "HONE_REPORT {\"metrics\":{\"loss\":0.25},\"checkpoint\":\"$HONE_STAGING_DIR/c1\"}"
echo 'HONE_REPORT {"metrics":{"loss":0.125,"done":true}}'
echo "a warning" >&2
`))
	dir := start(t, ex, "a", "", hone.Resources{})
	ev := result(t, ex, "a")
	want := map[string]any{"loss": 0.5, "eval": map[string]any{"acc": []any{1.0, 2.0}}}
	if !equalJSON(ev.Metrics, want) || ev.Done || ev.CheckpointDir != "" {
		t.Errorf("first result: %+v", ev)
	}
	if ev.PID <= 0 || ev.PID == os.Getpid() || ev.Hostname == "" {
		t.Errorf("result stamped with pid %d, host %q; want the trial's", ev.PID, ev.Hostname)
	}
	// The script has long finished; its next result still waits.
	time.Sleep(100 * time.Millisecond)
	if err := ex.Direct("a", hone.DirectCheckpoint); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ex); ev.Kind != hone.EventSaved || ev.CheckpointDir != "" || ev.Cause != nil {
		t.Fatalf("save of a stdout trial: %v %q %v; want a save without a checkpoint", ev.Kind, ev.CheckpointDir, ev.Cause)
	}
	direct(t, ex, "a", hone.DirectContinue)
	ev = result(t, ex, "a")
	if want := filepath.Join(dir, trial.StagingDirName, "c1"); ev.CheckpointDir != want || ev.Metrics["loss"] != 0.25 {
		t.Errorf("second result: %+v, want checkpoint %s", ev, want)
	}
	direct(t, ex, "a", hone.DirectContinue)
	if ev := result(t, ex, "a"); !ev.Done {
		t.Errorf("result with a done metric not Done")
	}
	direct(t, ex, "a", hone.DirectContinue)
	if err := exitErr(t, ex, "a"); err != nil {
		t.Fatal(err)
	}
	out := readFile(t, filepath.Join(dir, process.StdoutLog))
	if !strings.HasPrefix(out, "epoch 1\nHONE_REPORT {\"metrics\":{\"loss\":0.5,") || strings.Count(out, "\n") != 4 {
		t.Errorf("stdout.log:\n%s", out)
	}
	if got := readFile(t, filepath.Join(dir, process.StderrLog)); got != "a warning\n" {
		t.Errorf("stderr.log: %q", got)
	}

	// A second start of the trial appends to the logs.
	start(t, ex, "a", dir, hone.Resources{})
	if err := exitErr(t, ex, "a"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, process.StderrLog)); got != "a warning\na warning\n" {
		t.Errorf("stderr.log after a restart: %q", got)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestEnvironment: the process gets hone's environment, Options.Env, the
// HONE_* variables, and OMP_NUM_THREADS unless the user set it.
func TestEnvironment(t *testing.T) {
	t.Setenv("HONE_TEST_INHERITED", "yes")
	for _, c := range []struct {
		name    string
		env     []string
		cpu     float64
		wantOMP string
	}{
		{"OMPFromCPU", nil, 1.5, "2"},
		{"OMPSetByUser", []string{"OMP_NUM_THREADS=7"}, 4, "7"},
		{"NoCPU", nil, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			workDir := t.TempDir()
			opts := shell(`env > "$HONE_TRIAL_DIR/env"; pwd > "$HONE_TRIAL_DIR/pwd"`)
			opts.Env = append(c.env, "HONE_TEST_EXTRA=1", "HONE_TRIAL_ID=overridden")
			opts.Dir = workDir
			ex := newExecutor(t, opts)
			dir := t.TempDir()
			restore := t.TempDir()
			err := ex.Start(hone.StartSpec{TrialID: "t7", Dir: dir, RestoreDir: restore, Iteration: 12,
				Config: hone.Config{"lr": 0.5, "m": map[string]any{"w": 8}}, Resources: hone.Resources{CPU: c.cpu}})
			if err != nil {
				t.Fatal(err)
			}
			if err := exitErr(t, ex, "t7"); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{}
			for _, line := range strings.Split(readFile(t, filepath.Join(dir, "env")), "\n") {
				if k, v, ok := strings.Cut(line, "="); ok {
					env[k] = v
				}
			}
			want := map[string]string{
				"HONE_TEST_INHERITED":  "yes",
				"HONE_TEST_EXTRA":      "1",
				wire.EnvProtocol:       "1",
				wire.EnvTrialID:        "t7",
				wire.EnvTrialDir:       dir,
				wire.EnvStagingDir:     filepath.Join(dir, trial.StagingDirName),
				wire.EnvRestoreDir:     restore,
				wire.EnvIteration:      "12",
				wire.EnvConfig:         `{"lr":0.5,"m":{"w":8}}`,
				"CUDA_VISIBLE_DEVICES": "",
				"OMP_NUM_THREADS":      c.wantOMP,
			}
			for k, v := range want {
				if env[k] != v {
					t.Errorf("%s=%q, want %q", k, env[k], v)
				}
			}
			if sock := env[wire.EnvSocket]; sock == "" || len(sock) > 100 {
				t.Errorf("%s=%q: want a short socket path", wire.EnvSocket, sock)
			}
			if tok := env[wire.EnvToken]; len(tok) != 32 {
				t.Errorf("%s=%q: want 32 hex digits", wire.EnvToken, tok)
			}
			if fi, err := os.Stat(env[wire.EnvStagingDir]); err != nil || !fi.IsDir() {
				t.Errorf("staging directory not created: %v", err)
			}
			if got := strings.TrimSpace(readFile(t, filepath.Join(dir, "pwd"))); got != workDir {
				t.Errorf("working directory %s, want %s", got, workDir)
			}
		})
	}
}

// TestTokensDiffer: every trial start gets its own token.
func TestTokensDiffer(t *testing.T) {
	ex := newExecutor(t, shell(`echo "HONE_REPORT {\"metrics\":{\"token\":\"$HONE_TOKEN\"}}"`))
	seen := map[string]bool{}
	for _, id := range []string{"a", "b", "a"} {
		start(t, ex, id, "", hone.Resources{})
		ev := result(t, ex, id)
		for _, k := range []string{"token"} {
			v := ev.Metrics[k].(string)
			if seen[v] {
				t.Errorf("%s %s used twice", k, v)
			}
			seen[v] = true
		}
		direct(t, ex, id, hone.DirectContinue)
		if err := exitErr(t, ex, id); err != nil {
			t.Fatal(err)
		}
	}
}

// TestExitStatus: a process that exits non-zero fails with its status and
// the last 20 lines of its stderr.
func TestExitStatus(t *testing.T) {
	ex := newExecutor(t, shell(`for i in $(seq 1 30); do echo "line $i" >&2; done; printf 'no newline' >&2; exit 3`))
	start(t, ex, "a", "", hone.Resources{})
	err := exitErr(t, ex, "a")
	var xe *process.ExitError
	if !errors.As(err, &xe) || xe.ExitCode != 3 {
		t.Fatalf("exit error %v, want an *ExitError with code 3", err)
	}
	var lines []string
	for i := 12; i <= 30; i++ {
		lines = append(lines, "line "+strconv.Itoa(i))
	}
	want := "trial process failed: exit status 3\nlast lines of stderr:\n" + strings.Join(lines, "\n") + "\nno newline"
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
}

// TestKilledBySignal: a process killed by a signal that hone did not send
// has failed.
func TestKilledBySignal(t *testing.T) {
	ex := newExecutor(t, shell(`echo "about to crash" >&2; kill -SEGV $$`))
	start(t, ex, "a", "", hone.Resources{})
	err := exitErr(t, ex, "a")
	var xe *process.ExitError
	if !errors.As(err, &xe) || xe.ExitCode != -1 {
		t.Fatalf("exit error %v, want an *ExitError with code -1", err)
	}
	if want := "trial process failed: signal: segmentation fault\nlast lines of stderr:\nabout to crash"; err.Error() != want {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
}

// TestProtocolViolations: each violation fails the trial with an exact
// error, which the trial is told before it is killed.
func TestProtocolViolations(t *testing.T) {
	const nan = `metric "loss" is NaN: report finite numbers only (leave the metric out, or fail the trial)`
	for _, c := range []struct {
		name  string
		lines []string
		want  string // the error, after "protocol error: "
	}{
		{"WrongVersion", []string{`{"type":"hello","v":2,"token":"{token}","trial_id":"{trial_id}"}`},
			"hello: protocol version 2 is not supported (hone speaks 1)"},
		{"HelloTwice", []string{hello, "<read>", hello},
			"hello out of turn: the trial already said hello"},
		{"Directive", []string{hello, "<read>", `{"type":"directive","action":"stop"}`},
			"directive out of turn: hone sends directive messages, trials do not"},
		{"SavedUnasked", []string{hello, "<read>", `{"type":"saved","checkpoint":""}`},
			"saved out of turn: hone did not ask for a checkpoint"},
		{"NotJSON", []string{hello, "<read>", "loss=0.3"},
			"message is not JSON: invalid character 'l' looking for beginning of value (at byte 1)"},
		{"Oversized", []string{hello, "<read>", "<big>"},
			"message is over 1048576 bytes (the limit, newline included)"},
		{"NaN", []string{hello, "<read>", `{"type":"report","metrics":{"loss":NaN}}`}, nan},
		{"UnknownType", []string{hello, "<read>", `{"type":"result"}`},
			"unknown message type \"result\" (want one of hello, welcome, report, directive, saved, error)"},
		{"CheckpointOutside", []string{hello, "<read>", "<mkdir {trial_dir}/elsewhere>",
			`{"type":"report","metrics":{},"checkpoint":"{trial_dir}/elsewhere"}`},
			"checkpoint {trial_dir}/elsewhere is not inside HONE_STAGING_DIR ({trial_dir}/.staging)"},
		{"CheckpointStagingItself", []string{hello, "<read>", `{"type":"report","metrics":{},"checkpoint":"{staging}"}`},
			"checkpoint {trial_dir}/.staging is not inside HONE_STAGING_DIR ({trial_dir}/.staging)"},
		{"CheckpointMissing", []string{hello, "<read>", `{"type":"report","metrics":{},"checkpoint":"{staging}/nope"}`},
			"checkpoint {trial_dir}/.staging/nope does not exist"},
		{"CheckpointEscapes", []string{hello, "<read>", `{"type":"report","metrics":{},"checkpoint":"{staging}/../x"}`},
			"checkpoint {trial_dir}/x is not inside HONE_STAGING_DIR ({trial_dir}/.staging)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ex := newExecutor(t, raw(t, append(c.lines, "<read>", "<sleep>")...))
			dir := start(t, ex, "a", "", hone.Resources{})
			want := "protocol error: " + strings.ReplaceAll(c.want, "{trial_dir}", dir)
			err := exitErr(t, ex, "a")
			var pe *process.ProtocolError
			if !errors.As(err, &pe) || err.Error() != want {
				t.Fatalf("exit error:\n%v\nwant a *ProtocolError:\n%s", err, want)
			}
			out := readFile(t, filepath.Join(dir, process.StdoutLog))
			told := `GOT {"type":"error","message":` + jsonString(strings.TrimPrefix(want, "protocol error: ")) + "}\n"
			if !strings.HasSuffix(out, told) {
				t.Errorf("the trial did not hear of it; its stdout:\n%s\nwant it to end with:\n%s", out, told)
			}
		})
	}
}

func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// TestStdoutViolation: a bad HONE_REPORT line fails the trial.
func TestStdoutViolation(t *testing.T) {
	ex := newExecutor(t, shell(`echo 'HONE_REPORT {"metrics":{"loss":NaN}}'; sleep 30`))
	start(t, ex, "a", "", hone.Resources{})
	err := exitErr(t, ex, "a")
	want := `protocol error: HONE_REPORT line: metric "loss" is NaN: report finite numbers only (leave the metric out, or fail the trial)`
	if err == nil || err.Error() != want {
		t.Fatalf("exit error:\n%v\nwant:\n%s", err, want)
	}
}

// TestSymlinkCheckpoint: a checkpoint must be a real directory inside
// the staging directory, not a link to one elsewhere.
func TestSymlinkCheckpoint(t *testing.T) {
	outside := t.TempDir()
	for _, c := range []struct {
		name, setup, checkpoint, want string
	}{
		{"Link", `ln -s ` + outside + ` "$HONE_STAGING_DIR/ln"`, "{staging}/ln",
			"checkpoint {staging}/ln is a symbolic link, not a directory"},
		{"LinkedParent", `ln -s ` + outside + ` "$HONE_STAGING_DIR/ln"; mkdir -p ` + outside + `/sub`, "{staging}/ln/sub",
			"checkpoint {staging}/ln/sub leads outside HONE_STAGING_DIR ({staging})"},
		{"File", `touch "$HONE_STAGING_DIR/f"`, "{staging}/f", "checkpoint {staging}/f is not a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cp := strings.ReplaceAll(c.checkpoint, "{staging}", "$HONE_STAGING_DIR")
			ex := newExecutor(t, shell(c.setup+`; echo "HONE_REPORT {\"metrics\":{},\"checkpoint\":\"`+cp+`\"}"; sleep 30`))
			dir := start(t, ex, "a", "", hone.Resources{})
			want := "protocol error: HONE_REPORT line: " + strings.ReplaceAll(c.want, "{staging}", filepath.Join(dir, trial.StagingDirName))
			if err := exitErr(t, ex, "a"); err == nil || err.Error() != want {
				t.Fatalf("exit error:\n%v\nwant:\n%s", err, want)
			}
		})
	}
}

// TestRelativeCheckpoint: a relative checkpoint path is taken from the
// trial's working directory, and reported absolute.
func TestRelativeCheckpoint(t *testing.T) {
	dir := t.TempDir()
	opts := shell(`mkdir .staging/rel && echo 'HONE_REPORT {"metrics":{},"checkpoint":".staging/rel"}'`)
	opts.Dir = dir
	ex := newExecutor(t, opts)
	start(t, ex, "a", dir, hone.Resources{})
	if ev := result(t, ex, "a"); ev.CheckpointDir != filepath.Join(dir, ".staging", "rel") {
		t.Errorf("checkpoint %q", ev.CheckpointDir)
	}
	direct(t, ex, "a", hone.DirectContinue)
	if err := exitErr(t, ex, "a"); err != nil {
		t.Fatal(err)
	}
}

// TestStopIgnoringSIGTERM: a computing trial that ignores SIGTERM is
// killed StopGrace later, and that is a normal end.
func TestStopIgnoringSIGTERM(t *testing.T) {
	const grace = 300 * time.Millisecond
	opts := shell(`trap '' TERM; echo 'HONE_REPORT {"metrics":{"n":1}}'; sleep 30`)
	opts.StopGrace = grace
	ex := newExecutor(t, opts)
	start(t, ex, "a", "", hone.Resources{})
	result(t, ex, "a")
	t0 := time.Now()
	direct(t, ex, "a", hone.DirectStop)
	if err := exitErr(t, ex, "a"); err != nil {
		t.Fatalf("exit error %v, want a normal end", err)
	}
	if d := time.Since(t0); d < grace || d > grace+5*time.Second {
		t.Errorf("stopped after %v, want about %v", d, grace)
	}
}

// TestStopDirectiveIgnored: a trial told to stop on its socket that does
// not exit gets SIGTERM a little later, and SIGKILL StopGrace after that.
func TestStopDirectiveIgnored(t *testing.T) {
	const grace = 300 * time.Millisecond
	opts := raw(t, hello, "<read>", `{"type":"report","metrics":{"n":1}}`, "<read>", "<ignoreterm>", "<sleep>")
	opts.StopGrace = grace
	ex := newExecutor(t, opts)
	dir := start(t, ex, "a", "", hone.Resources{})
	result(t, ex, "a")
	t0 := time.Now()
	direct(t, ex, "a", hone.DirectStop)
	if err := exitErr(t, ex, "a"); err != nil {
		t.Fatalf("exit error %v, want a normal end", err)
	}
	if d := time.Since(t0); d < 2*grace || d > 2*grace+5*time.Second {
		t.Errorf("stopped after %v, want about %v", d, 2*grace)
	}
	want := "GOT {\"type\":\"welcome\",\"v\":1}\nGOT {\"type\":\"directive\",\"action\":\"stop\",\"reason\":\"stop\"}\n"
	if out := readFile(t, filepath.Join(dir, process.StdoutLog)); out != want {
		t.Errorf("the trial heard:\n%s\nwant:\n%s", out, want)
	}
}

// TestStopAfterExit: a trial that exits without waiting for the answer
// to its result still gets its exit reported after that answer, and a stop
// at that point neither signals nor hides a failure.
func TestStopAfterExit(t *testing.T) {
	ex := newExecutor(t, shell(`echo 'HONE_REPORT {"metrics":{"n":1}}'; echo 'HONE_REPORT {"metrics":{"n":2}}'; exit 4`))
	start(t, ex, "a", "", hone.Resources{})
	ev := result(t, ex, "a")
	waitGone(t, ev.PID)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if ev, err := ex.Next(ctx); err == nil {
		t.Fatalf("got %v event of %s before answering the result", ev.Kind, ev.TrialID)
	}
	direct(t, ex, "a", hone.DirectStop)
	ev = next(t, ex)
	var xe *process.ExitError
	if ev.Kind != hone.EventExited || !errors.As(ev.Cause, &xe) || xe.ExitCode != 4 {
		t.Fatalf("got %v event (err %v), want the exit with status 4", ev.Kind, ev.Cause)
	}
}

// waitGone waits until the process pid has ended and been reaped.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still there", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestProcessGroup: hone's signals reach the trial's children, and what
// a trial leaves running when it exits is killed.
func TestProcessGroup(t *testing.T) {
	t.Run("Stop", func(t *testing.T) {
		ex := newExecutor(t, shell(`sleep 300 & echo $! > "$HONE_TRIAL_DIR/pid"; echo 'HONE_REPORT {}'; wait`))
		dir := start(t, ex, "a", "", hone.Resources{})
		result(t, ex, "a")
		direct(t, ex, "a", hone.DirectStop)
		if err := exitErr(t, ex, "a"); err != nil {
			t.Fatal(err)
		}
		checkDead(t, dir)
	})
	t.Run("Leftover", func(t *testing.T) {
		ex := newExecutor(t, shell(`sleep 300 & echo $! > "$HONE_TRIAL_DIR/pid"`))
		dir := start(t, ex, "a", "", hone.Resources{})
		t0 := time.Now()
		if err := exitErr(t, ex, "a"); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(t0); d > time.Second {
			t.Errorf("exit took %v: the leftover child kept the output open", d)
		}
		checkDead(t, dir)
	})
	t.Run("Close", func(t *testing.T) {
		ex := newExecutor(t, shell(`sleep 300 & echo $! > "$HONE_TRIAL_DIR/pid"; echo 'HONE_REPORT {}'; wait`))
		dir := start(t, ex, "a", "", hone.Resources{})
		result(t, ex, "a")
		if err := ex.Close(); err != nil {
			t.Fatal(err)
		}
		checkDead(t, dir)
	})
}

// checkDead checks that the process whose id is in <dir>/pid is gone.
func checkDead(t *testing.T, dir string) {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(dir, "pid"))))
	if err != nil {
		t.Fatal(err)
	}
	// The child of the ended shell is reaped by init, maybe a moment
	// later.
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); strings.Contains(string(b), ") Z ") {
			return // a zombie waiting for init
		}
		if time.Now().After(deadline) {
			t.Fatalf("child process %d still running", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestGPUs: trials get whole GPUs of the executor's, lowest free first,
// and give them back when they end.
func TestGPUs(t *testing.T) {
	t.Setenv("CUDA_VISIBLE_DEVICES", "")
	os.Unsetenv("CUDA_VISIBLE_DEVICES")
	report := `echo "HONE_REPORT {\"metrics\":{\"cuda\":\"$CUDA_VISIBLE_DEVICES\"}}"; sleep 30`
	cuda := func(ev hone.Event) string { return ev.Metrics["cuda"].(string) }

	opts := shell(report)
	opts.GPUs = 2
	ex := newExecutor(t, opts)
	startGPUs := func(id string, need float64, gpus ...int) error {
		return ex.Start(hone.StartSpec{TrialID: id, Dir: t.TempDir(), Resources: hone.Resources{GPU: need}, GPUs: gpus})
	}
	for _, c := range []struct {
		id   string
		need float64
		gpus []int
	}{{"a", 1, []int{1}}, {"b", 0.5, []int{0}}, {"c", 0, nil}} {
		if err := startGPUs(c.id, c.need, c.gpus...); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]string{}
	for range 3 {
		ev := next(t, ex)
		got[ev.TrialID] = cuda(ev)
	}
	if want := map[string]string{"a": "1", "b": "0", "c": ""}; !equalJSON(got, want) {
		t.Errorf("CUDA_VISIBLE_DEVICES %v, want the GPUs given: %v", got, want)
	}
	for _, c := range []struct {
		need float64
		gpus []int
		want string
	}{
		{1, nil, "start trial d: needs 1 GPU, but was given 0 (StartSpec.GPUs)"},
		{3, []int{0, 1}, "start trial d: needs 3 GPUs, but was given 2 (StartSpec.GPUs)"},
		{1, []int{2}, "start trial d: GPU 2 is not one of the executor's 2 (Options.GPUs)"},
	} {
		if err := startGPUs("d", c.need, c.gpus...); err == nil || err.Error() != c.want {
			t.Errorf("start needing %g GPUs given %v: %v, want %q", c.need, c.gpus, err, c.want)
		}
	}

	// With CUDA_VISIBLE_DEVICES set for hone, its entries are handed out.
	opts.Env = []string{"CUDA_VISIBLE_DEVICES=5, 7,9"}
	ex = newExecutor(t, opts)
	if err := ex.Start(hone.StartSpec{TrialID: "a", Dir: t.TempDir(), Resources: hone.Resources{GPU: 2}, GPUs: []int{0, 1}}); err != nil {
		t.Fatal(err)
	}
	if ev := result(t, ex, "a"); cuda(ev) != "5,7" {
		t.Errorf("a got GPUs %q, want 5,7", cuda(ev))
	}
	opts.GPUs = 4
	if _, err := process.New(opts); err == nil || err.Error() != `process executor: Options.GPUs = 4, but CUDA_VISIBLE_DEVICES="5, 7,9" lists 3 GPUs` {
		t.Errorf("New with too few inherited GPUs: %v", err)
	}
}

// TestSaveOnDemand covers the answers to checkpoint directives: a
// trial that cannot save, a failed save, and a save outside the staging
// directory.
func TestSaveOnDemand(t *testing.T) {
	t.Run("CannotSave", func(t *testing.T) {
		// can_save is false: hone answers for the trial, which hears
		// nothing but the continue.
		ex := newExecutor(t, raw(t, hello, "<read>", `{"type":"report","metrics":{}}`, "<read>"))
		dir := start(t, ex, "a", "", hone.Resources{})
		result(t, ex, "a")
		direct(t, ex, "a", hone.DirectCheckpoint)
		if ev := next(t, ex); ev.Kind != hone.EventSaved || ev.CheckpointDir != "" || ev.Cause != nil {
			t.Fatalf("got %v %q %v, want a save without a checkpoint", ev.Kind, ev.CheckpointDir, ev.Cause)
		}
		direct(t, ex, "a", hone.DirectContinue)
		if err := exitErr(t, ex, "a"); err != nil {
			t.Fatal(err)
		}
		want := "GOT {\"type\":\"welcome\",\"v\":1}\nGOT {\"type\":\"directive\",\"action\":\"continue\"}\n"
		if out := readFile(t, filepath.Join(dir, process.StdoutLog)); out != want {
			t.Errorf("the trial heard:\n%s", out)
		}
	})
	const canSave = `{"type":"hello","v":1,"token":"{token}","trial_id":"{trial_id}","can_save":true}`
	t.Run("Failed", func(t *testing.T) {
		ex := newExecutor(t, raw(t, canSave, "<read>", `{"type":"report","metrics":{}}`, "<read>",
			`{"type":"saved","error":"disk full"}`, "<read>"))
		start(t, ex, "a", "", hone.Resources{})
		result(t, ex, "a")
		direct(t, ex, "a", hone.DirectCheckpoint)
		if ev := next(t, ex); ev.Kind != hone.EventSaved || ev.Cause == nil || ev.Cause.Error() != "disk full" {
			t.Fatalf("got %v (err %v), want a failed save", ev.Kind, ev.Cause)
		}
		direct(t, ex, "a", hone.DirectStop)
		if err := exitErr(t, ex, "a"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("Outside", func(t *testing.T) {
		ex := newExecutor(t, raw(t, canSave, "<read>", `{"type":"report","metrics":{}}`, "<read>",
			`{"type":"saved","checkpoint":"/"}`, "<sleep>"))
		start(t, ex, "a", "", hone.Resources{})
		result(t, ex, "a")
		direct(t, ex, "a", hone.DirectCheckpoint)
		err := exitErr(t, ex, "a")
		if err == nil || !strings.HasPrefix(err.Error(), "protocol error: checkpoint / is not inside HONE_STAGING_DIR") {
			t.Fatalf("exit error %v", err)
		}
	})
}

// TestReportOutOfTurn: a report before the previous one was answered.
func TestReportOutOfTurn(t *testing.T) {
	// Both reports in one write: hone reads the second right after the
	// first, long before the runner's answer.
	ex := newExecutor(t, raw(t, hello, "<read>", `{"type":"report","metrics":{"n":1}}`+"\n"+`{"type":"report","metrics":{"n":2}}`, "<sleep>"))
	start(t, ex, "a", "", hone.Resources{})
	// The first report is a result; the second kills the trial, whose
	// exit follows the answer to the first.
	result(t, ex, "a")
	time.Sleep(100 * time.Millisecond)
	direct(t, ex, "a", hone.DirectContinue)
	err := exitErr(t, ex, "a")
	if want := "protocol error: report out of turn: the previous report has not been answered"; err == nil || err.Error() != want {
		t.Fatalf("exit error %v, want %s", err, want)
	}
}

// TestStartErrors: Start refuses bad specs, a command that does not
// exist, and a closed executor; New refuses bad options.
func TestStartErrors(t *testing.T) {
	ex := newExecutor(t, shell("true"))
	if err := ex.Start(hone.StartSpec{Dir: t.TempDir()}); err == nil {
		t.Error("Start with no trial id succeeded")
	}
	if err := ex.Start(hone.StartSpec{TrialID: "a", Dir: "relative"}); err == nil {
		t.Error("Start with a relative dir succeeded")
	}
	if err := ex.Start(hone.StartSpec{TrialID: "a", Dir: t.TempDir(), Config: hone.Config{"x": func() {}}}); err == nil {
		t.Error("Start with a config that is not JSON succeeded")
	}
	if err := ex.Start(hone.StartSpec{TrialID: "a", Dir: t.TempDir(), Resources: hone.Resources{GPU: 1}}); err == nil {
		t.Error("Start needing a GPU of an executor without any succeeded")
	}
	ex.Close()
	if err := ex.Start(hone.StartSpec{TrialID: "a", Dir: t.TempDir()}); err == nil {
		t.Error("Start after Close succeeded")
	}
	if _, err := ex.Next(context.Background()); !errors.Is(err, hone.ErrIdle) {
		t.Errorf("Next after failed starts: %v, want ErrIdle", err)
	}

	missing := newExecutor(t, process.Options{Command: []string{"/nonexistent/trainer"}})
	if err := missing.Start(hone.StartSpec{TrialID: "a", Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "/nonexistent/trainer") {
		t.Errorf("Start of a missing command: %v", err)
	}
	if _, err := missing.Next(context.Background()); !errors.Is(err, hone.ErrIdle) {
		t.Errorf("Next after a failed start: %v, want ErrIdle", err)
	}

	for _, c := range []struct {
		opts process.Options
		want string
	}{
		{process.Options{}, "process executor: Options.Command is empty"},
		{process.Options{Command: []string{"x"}, StopGrace: -1}, "process executor: Options.StopGrace = -1ns: must be >= 0"},
		{process.Options{Command: []string{"x"}, GPUs: -1}, "process executor: Options.GPUs = -1: must be >= 0"},
		{process.Options{Command: []string{"x"}, Env: []string{"NOEQUALS"}}, `process executor: Options.Env entry "NOEQUALS" is not KEY=VALUE`},
	} {
		if _, err := process.New(c.opts); err == nil || err.Error() != c.want {
			t.Errorf("New(%+v): %v, want %s", c.opts, err, c.want)
		}
	}
}

// TestClock: events are stamped with the configured clock.
func TestClock(t *testing.T) {
	t0 := time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)
	opts := shell("true")
	opts.Clock = fixedClock{t0}
	ex := newExecutor(t, opts)
	var _ hone.Clocked = ex
	start(t, ex, "a", "", hone.Resources{})
	if ev := next(t, ex); !ev.At().Equal(t0) || ev.Kind != hone.EventExited {
		t.Errorf("got %v at %v", ev.Kind, ev.At())
	}
}

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// TestGoTrialFailure: a Go trial whose function fails exits with its
// error on stderr; one that hone refuses says so.
func TestGoTrialFailure(t *testing.T) {
	b, _ := json.Marshal(map[string]int{"reports": 3, "fail_at_report": 2})
	ex := newExecutor(t, process.Options{Command: []string{scripted, "func"}, Env: []string{"HONE_TEST_SCRIPT=" + string(b)}})
	start(t, ex, "a", "", hone.Resources{})
	err := exitErr(t, ex, "a")
	want := "trial process failed: exit status 1\nlast lines of stderr:\nhone trial: trial function: report 2: executortest: scripted failure"
	if err == nil || err.Error() != want {
		t.Errorf("exit error:\n%v\nwant:\n%s", err, want)
	}
}

// TestMetricsOrder: many results of several trials all arrive, in order
// per trial.
func TestMetricsOrder(t *testing.T) {
	ex := newExecutor(t, shell(`for i in $(seq 1 200); do echo "HONE_REPORT {\"metrics\":{\"i\":$i}}"; done`))
	ids := []string{"a", "b", "c"}
	for _, id := range ids {
		start(t, ex, id, "", hone.Resources{})
	}
	got := map[string][]int{}
	for live := len(ids); live > 0; {
		ev := next(t, ex)
		switch ev.Kind {
		case hone.EventResult:
			got[ev.TrialID] = append(got[ev.TrialID], int(ev.Metrics["i"].(float64)))
			direct(t, ex, ev.TrialID, hone.DirectContinue)
		case hone.EventExited:
			if ev.Cause != nil {
				t.Error(ev.Cause)
			}
			live--
		}
	}
	for _, id := range ids {
		if len(got[id]) != 200 || !slices.IsSorted(got[id]) || got[id][0] != 1 {
			t.Errorf("trial %s: %d results", id, len(got[id]))
		}
	}
}

// TestSocketDirectory: the trials connect to the executor's one socket,
// in a private directory of the executor, and Close removes the
// directory.
func TestSocketDirectory(t *testing.T) {
	opts := shell(fmt.Sprintf(`echo "$%s" > "$HONE_TRIAL_DIR/sock"`, wire.EnvSocket))
	t.Setenv("TMPDIR", t.TempDir())
	ex, err := process.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	var socks []string
	for _, id := range []string{"a", "b"} {
		dir := start(t, ex, id, "", hone.Resources{})
		if err := exitErr(t, ex, id); err != nil {
			t.Fatal(err)
		}
		socks = append(socks, strings.TrimSpace(readFile(t, filepath.Join(dir, "sock"))))
	}
	if socks[0] != socks[1] {
		t.Fatalf("the trials got sockets %v, want the executor's one", socks)
	}
	sockDir := filepath.Dir(socks[0])
	if filepath.Dir(sockDir) != filepath.Clean(os.Getenv("TMPDIR")) {
		t.Errorf("socket %s not in a directory of TMPDIR %s", socks[0], os.Getenv("TMPDIR"))
	}
	fi, err := os.Stat(sockDir)
	if err != nil {
		t.Fatalf("socket directory gone before Close: %v", err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("socket directory mode %v, want private (0700)", fi.Mode().Perm())
	}
	if entries, err := os.ReadDir(sockDir); err != nil || len(entries) != 1 {
		t.Errorf("socket directory after both trials ended: %v, %v; want the socket alone", entries, err)
	}
	if err := ex.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sockDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket directory %s after Close: %v, want it removed", sockDir, err)
	}
}

// TestSocketDirectoryRemade: if the socket directory disappears between
// starts (a cleaner of the temporary directory), the next start makes a
// new one instead of failing.
func TestSocketDirectoryRemade(t *testing.T) {
	opts := shell(fmt.Sprintf(`echo "$%s" > "$HONE_TRIAL_DIR/sock"`, wire.EnvSocket))
	t.Setenv("TMPDIR", t.TempDir())
	ex, err := process.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	var dirs []string
	for _, id := range []string{"a", "b"} {
		dir := start(t, ex, id, "", hone.Resources{})
		if err := exitErr(t, ex, id); err != nil {
			t.Fatalf("trial %s: %v", id, err)
		}
		sockDir := filepath.Dir(strings.TrimSpace(readFile(t, filepath.Join(dir, "sock"))))
		dirs = append(dirs, sockDir)
		if err := os.RemoveAll(sockDir); err != nil {
			t.Fatal(err)
		}
	}
	if dirs[0] == dirs[1] {
		t.Errorf("the second trial's socket is in the removed directory %s", dirs[0])
	}
}

// TestRefusedConnection: a connection to a trial's socket whose first
// message is not a hello with the trial's token is told why and closed;
// the socket keeps waiting, and the trial, connecting after it, runs to
// its end.
func TestRefusedConnection(t *testing.T) { testRefusedConnection(t, "") }

// TestRefusedConnectionTCP: the same over the executor's TCP server.
func TestRefusedConnectionTCP(t *testing.T) { testRefusedConnection(t, "127.0.0.1:0") }

func testRefusedConnection(t *testing.T, listen string) {
	cases := []struct {
		name, first, why string
	}{
		{"WrongToken", `{"type":"hello","v":1,"token":"0123","trial_id":"{trial_id}"}`,
			"hello: wrong token (use HONE_TOKEN as it is)"},
		{"ReportBeforeHello", `{"type":"report","metrics":{}}`,
			"report out of turn: the first message must be hello"},
		{"NotJSON", "hello", "message is not JSON: invalid character 'h' looking for beginning of value (at byte 1)"},
	}
	// A hello naming another trial reaches no trial: it can fail none.
	cases = append(cases, struct{ name, first, why string }{"OtherTrial",
		`{"type":"hello","v":1,"token":"{token}","trial_id":"b"}`,
		`hello: no trial "b" waits for a connection here`})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			opts := raw(t, c.first, "<read>", "<reconnect>", hello, "<read>",
				`{"type":"report","metrics":{"n":1},"done":true}`, "<read>")
			opts.Listen = listen
			ex := newExecutor(t, opts)
			dir := start(t, ex, "a", "", hone.Resources{})
			ev := result(t, ex, "a")
			if n, _ := hone.Number(ev.Metrics["n"]); n != 1 || !ev.Done {
				t.Errorf("result %v (done %v), want n=1, done", ev.Metrics, ev.Done)
			}
			direct(t, ex, "a", hone.DirectContinue)
			if err := exitErr(t, ex, "a"); err != nil {
				t.Fatalf("exit error %v, want a normal end", err)
			}
			want := `GOT {"type":"error","message":` + jsonString(c.why) + "}\n" +
				`GOT {"type":"welcome","v":1}` + "\n" +
				`GOT {"type":"directive","action":"continue"}` + "\n"
			if out := readFile(t, filepath.Join(dir, process.StdoutLog)); out != want {
				t.Errorf("the trial heard:\n%s\nwant:\n%s", out, want)
			}
		})
	}
}

// TestListenEveryInterface: with Listen ":0" the trials get this
// machine's address (process.HostAddress), not a loopback one, and reach
// hone through it.
func TestListenEveryInterface(t *testing.T) {
	opts := raw(t, hello, "<read>", `{"type":"report","metrics":{"n":1},"done":true}`, "<read>")
	opts.Listen = ":0"
	ex := newExecutor(t, opts)
	start(t, ex, "a", "", hone.Resources{})
	ev := result(t, ex, "a")
	if n, _ := hone.Number(ev.Metrics["n"]); n != 1 {
		t.Fatalf("result %v", ev.Metrics)
	}
	direct(t, ex, "a", hone.DirectContinue)
	if err := exitErr(t, ex, "a"); err != nil {
		t.Fatal(err)
	}
	host, err := process.HostAddress()
	if err != nil {
		t.Fatal(err)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		t.Errorf("HostAddress() = %s, a loopback address other machines cannot reach", host)
	}
}

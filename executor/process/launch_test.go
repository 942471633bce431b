package process_test

import (
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

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/executortest"
	"github.com/hone-tune/hone/executor/process"
)

// detached launches each trial as a process that is not hone's child in
// the executor's sense: the executor knows it only through the Launched
// interface, as it knows a cluster job. It records what it was given.
type detached struct {
	mu       sync.Mutex
	specs    []process.LaunchSpec
	signals  []syscall.Signal
	prepared string
}

func (d *detached) Prepare(stateDir string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.prepared = stateDir
	return nil
}

func (d *detached) Launch(spec process.LaunchSpec) (process.Launched, error) {
	d.mu.Lock()
	d.specs = append(d.specs, spec)
	d.mu.Unlock()
	out, err := os.OpenFile(spec.Stdout, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	errf, err := os.OpenFile(spec.Stderr, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	defer errf.Close()
	cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = spec.Env, spec.Dir, out, errf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &detachedJob{d: d, cmd: cmd}, nil
}

type detachedJob struct {
	d   *detached
	cmd *exec.Cmd
}

func (j *detachedJob) Signal(sig syscall.Signal) error {
	j.d.mu.Lock()
	j.d.signals = append(j.d.signals, sig)
	j.d.mu.Unlock()
	return syscall.Kill(-j.cmd.Process.Pid, sig)
}

func (j *detachedJob) Wait() error {
	err := j.cmd.Wait()
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		return fmt.Errorf("job ended with status %d on node7", xe.ExitCode())
	}
	return err
}

func (j *detachedJob) Where() (node, id string) { return "node7", "job 5" }

// TestLaunchConformance: trials started through a Launcher pass the
// executor suite.
func TestLaunchConformance(t *testing.T) {
	for _, mode := range []string{"func", "class"} {
		t.Run(mode, func(t *testing.T) {
			executortest.Run(t, executortest.Harness{
				New: func(t *testing.T, s executortest.Script) hone.Executor {
					return scriptedWith(t, mode, s, process.Options{Listen: "127.0.0.1:0", Launch: &detached{}})
				},
				SaveOnDemand: mode == "class",
			})
		})
	}
}

// TestLaunch: a launched trial gets the whole environment, writes its own
// logs, is told where it runs, is stopped through Signal, and a failure
// the launcher reports is the trial's exit error as it is.
func TestLaunch(t *testing.T) {
	if _, err := process.New(process.Options{Command: []string{"true"}, Launch: &detached{}}); err == nil {
		t.Error("New with Launch and without Listen: no error")
	}
	d := &detached{}
	opts := shell(`echo "out $HONE_TRIAL_ID"; echo "err $HONE_SOCKET" >&2; ` +
		`[ -n "$CUDA_VISIBLE_DEVICES" ] && echo cuda; ` +
		`[ "$HONE_TRIAL_ID" = b ] && exit 3; sleep 60`)
	opts.Listen, opts.Launch = "127.0.0.1:0", d
	ex := newExecutor(t, opts)
	state := t.TempDir()
	if err := ex.Prepare(state); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(state, process.StateDirName); d.prepared != want {
		t.Errorf("the launcher prepared %q, want %q", d.prepared, want)
	}
	dirA := start(t, ex, "a", "", hone.Resources{GPU: 2}) // GPUs are the launcher's business
	dirB := start(t, ex, "b", "", hone.Resources{})
	ev := next(t, ex)
	if ev.Kind != hone.EventExited || ev.TrialID != "b" {
		t.Fatalf("first event %+v, want b's exit", ev)
	}
	if ev.Cause == nil || ev.Cause.Error() != "job ended with status 3 on node7" {
		t.Errorf("b's exit error %v, want the launcher's as it is", ev.Cause)
	}
	if ev.Hostname != "node7 (job 5)" {
		t.Errorf("b's exit says it ran on %q, want the launcher's node7 (job 5)", ev.Hostname)
	}
	// a has written its output before it is stopped.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(filepath.Join(dirA, process.StderrLog)); len(b) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if err := ex.Direct("a", hone.DirectStop); err != nil {
		t.Fatal(err)
	}
	if err := exitErr(t, ex, "a"); err != nil {
		t.Errorf("a stopped by hone: exit error %v, want nil", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.signals) == 0 || d.signals[0] != syscall.SIGTERM {
		t.Errorf("signals %v, want SIGTERM first", d.signals)
	}
	for _, c := range []struct{ dir, id string }{{dirA, "a"}, {dirB, "b"}} {
		out := readFile(t, filepath.Join(c.dir, process.StdoutLog))
		if out != "out "+c.id+"\n" {
			t.Errorf("%s's stdout.log %q, want its own output (and no CUDA_VISIBLE_DEVICES)", c.id, out)
		}
		if errOut := readFile(t, filepath.Join(c.dir, process.StderrLog)); !strings.HasPrefix(errOut, "err tcp://127.0.0.1:") {
			t.Errorf("%s's stderr.log %q, want the TCP address", c.id, errOut)
		}
	}
	if len(d.specs) != 2 || d.specs[0].Resources.GPU != 2 || d.specs[0].TrialDir != dirA {
		t.Errorf("launch specs %+v", d.specs)
	}
}

// TestLaunchHelloHost: the machine a launched trial's hello names is
// where its results come from, beside the launcher's id of the run.
func TestLaunchHelloHost(t *testing.T) {
	opts := raw(t, `{"type":"hello","v":1,"token":"{token}","trial_id":"{trial_id}","host":"n9"}`, "<read>",
		`{"type":"report","metrics":{"n":1},"done":true}`, "<read>")
	opts.Listen, opts.Launch = "127.0.0.1:0", &detached{}
	ex := newExecutor(t, opts)
	start(t, ex, "a", "", hone.Resources{})
	if ev := next(t, ex); ev.Kind != hone.EventStarted || ev.Hostname != "n9 (job 5)" {
		t.Errorf("first event %v from %q, want started on n9 (job 5)", ev.Kind, ev.Hostname)
	}
	if ev := result(t, ex, "a"); ev.Hostname != "n9 (job 5)" {
		t.Errorf("the result came from %q, want n9 (job 5)", ev.Hostname)
	}
	direct(t, ex, "a", hone.DirectContinue)
	if err := exitErr(t, ex, "a"); err != nil {
		t.Fatal(err)
	}
}

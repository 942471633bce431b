package agent_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/agent"
	"github.com/hone-tune/hone/executor/process"
	"github.com/hone-tune/hone/remote"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/spec"
	"github.com/hone-tune/hone/trial"
)

// The test binary plays the node's processes: "agent -- ARGV" runs the
// agent, "trial" a class trainable through hone's Go trial API.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "agent":
			argv := os.Args[2:]
			if len(argv) > 0 && argv[0] == "--" {
				argv = argv[1:]
			}
			os.Exit(agent.Run(context.Background(), agent.Options{Argv: argv, Env: os.Environ(),
				Stdout: os.Stdout, Stderr: os.Stderr, Logs: os.Getenv("AGENT_TEST_LOGS") != ""}))
		case "trial":
			trial.MainClass(func() trial.Trainable { return &counter{} })
		case "trial-fifo":
			trial.MainClass(func() trial.Trainable { return &counter{fifo: true} })
		}
	}
	os.Exit(m.Run())
}

// counter counts iterations. It saves at every even one, reports where it
// restored from, ends at 6, and the first time it reaches 3 without a
// restore it fails (a process exit), once per trial: its marker is in its
// directory on the node.
type counter struct {
	n, restoredFrom int
	fifo            bool // saves a named pipe, which no store takes
}

func (c *counter) Setup(hone.Config) error { return nil }

func (c *counter) Step(context.Context) (trial.Metrics, error) {
	c.n++
	marker := filepath.Join(os.Getenv("HONE_TRIAL_DIR"), "failed-once")
	if c.n == 3 && c.restoredFrom == 0 {
		if _, err := os.Stat(marker); errors.Is(err, fs.ErrNotExist) {
			_ = os.WriteFile(marker, nil, 0o644)
			fmt.Fprintln(os.Stderr, "failing once at 3")
			os.Exit(3)
		}
	}
	fmt.Printf("step %d\n", c.n)
	return trial.Metrics{"score": float64(c.n), "restored_from": c.restoredFrom,
		"should_checkpoint": c.n%2 == 0, "done": c.n >= 6}, nil
}

func (c *counter) Save(dir string) error {
	if c.fifo {
		return syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644)
	}
	return os.WriteFile(filepath.Join(dir, "n"), []byte(strconv.Itoa(c.n)), 0o644)
}

func (c *counter) Load(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "n"))
	if err != nil {
		return err
	}
	c.n, err = strconv.Atoi(string(b))
	c.restoredFrom = c.n
	return err
}

// node launches each trial on "another machine": a process of its own
// behind the agent, which the executor knows only as launched, with its
// output in the trial's logs as srun would carry it back.
type node struct {
	self string
	env  []string // added to each trial's
}

func (n *node) Launch(spec process.LaunchSpec) (process.Launched, error) {
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
	argv := append([]string{n.self, "agent", "--"}, spec.Argv...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(append([]string(nil), spec.Env...), n.env...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = spec.Dir, out, errf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &launched{cmd: cmd}, nil
}

type launched struct {
	cmd  *exec.Cmd
	once sync.Once
	done chan struct{}
}

func (l *launched) Signal(sig syscall.Signal) error {
	err := l.cmd.Process.Signal(sig)
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

func (l *launched) Wait() error { return l.cmd.Wait() }

func (l *launched) Where() (node, id string) { return "node", "pid " + strconv.Itoa(l.cmd.Process.Pid) }

// run runs a FIFO experiment of two trials with its storage the bucket
// (a file:// URL) and its trials behind the agent, and returns its
// trials, the driver's cache directory and its working copy there.
func run(t *testing.T, bucket, role string, maxFailures int, nodeEnv ...string) (trials []*hone.Trial, cache, work string) {
	t.Helper()
	ctx := context.Background()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	u := "file://" + filepath.ToSlash(bucket) + "/exp"
	cache = t.TempDir()
	e, err := remote.Open(ctx, u, cache)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	text := fmt.Sprintf(`name: exp
metric: score
mode: max
seed: 1
num_samples: 2
search_space: {x: {uniform: [0, 1]}}
failure: {max_failures: %d}
command: [%q, %s]
`, maxFailures, self, role)
	s, err := spec.Parse([]byte(text), "exp.yaml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	plan, err := spec.Build(s, e.Dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := process.New(process.Options{Command: plan.Process.Command, Dir: plan.Process.Dir,
		Listen: "127.0.0.1:0", Launch: &node{self: self, env: nodeEnv}, Store: u})
	if err != nil {
		t.Fatal(err)
	}
	if !ex.CommitsRemotely() {
		t.Fatal("a launching executor with a store does not commit remotely")
	}
	plan.Options.Executor = ex
	plan.Options.Log = io.Discard
	if err := e.Start(ctx, &plan.Options, func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	out, err := runner.Run(ctx, plan.Experiment, plan.Options)
	if cerr := plan.Close(); err == nil {
		err = cerr
	}
	if ferr := e.Finish(ctx); err == nil {
		err = ferr
	}
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return out.Trials, cache, e.Dir
}

// TestRestoreAndCommitOnTheNode: trials behind the agent commit their
// checkpoints to the bucket and restore from it on their node; a trial
// that failed restarts from its latest checkpoint; the driver's machine
// never holds a checkpoint's files, and nothing is left in the bucket's
// upload directories.
func TestRestoreAndCommitOnTheNode(t *testing.T) {
	bucket, nodeCache := t.TempDir(), t.TempDir()
	trials, driverCache, _ := run(t, bucket, "trial", 2, agent.EnvCacheDir+"="+nodeCache)
	if len(trials) != 2 {
		t.Fatalf("%d trials, want 2", len(trials))
	}
	for _, tr := range trials {
		if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s ended %s (%s)", tr.ID, tr.Status, tr.Error)
		}
		if tr.Failures != 1 {
			t.Errorf("trial %s failed %d times, want once", tr.ID, tr.Failures)
		}
		last := tr.LastResult
		if last == nil || last.TrainingIteration != 6 {
			t.Fatalf("trial %s ended at %+v, want iteration 6", tr.ID, last)
		}
		if rf := fmt.Sprint(last.Metrics["restored_from"]); rf != "2" {
			t.Errorf("trial %s restored from iteration %s, want 2 (its checkpoint before the failure)", tr.ID, rf)
		}
	}
	// The bucket holds each trial's checkpoints and no upload (a file
	// bucket keeps the empty directories of deleted objects).
	var uploads, checkpoints []string
	_ = filepath.WalkDir(filepath.Join(bucket, "exp"), func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
		case !d.IsDir() && strings.Contains(p, string(filepath.Separator)+hone.UploadDirName+string(filepath.Separator)):
			uploads = append(uploads, p)
		case d.IsDir() && strings.HasPrefix(d.Name(), "checkpoint_"):
			checkpoints = append(checkpoints, p)
		}
		return nil
	})
	if len(uploads) != 0 {
		t.Errorf("uploads left in the bucket: %v", uploads)
	}
	if len(checkpoints) < 2 {
		t.Errorf("checkpoints in the bucket: %v, want the trials'", checkpoints)
	}
	// Nothing of a checkpoint on the driver's machine.
	_ = filepath.WalkDir(driverCache, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Name() == "n" || d.IsDir() && strings.HasPrefix(d.Name(), "checkpoint_") {
			t.Errorf("the driver's cache holds %s", p)
		}
		return nil
	})
	// The node's cache keeps no checkpoint once its trials have ended:
	// neither the copies it committed nor those it restored from.
	_ = filepath.WalkDir(nodeCache, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "n" {
			t.Errorf("the node's cache still holds %s", p)
		}
		return nil
	})
}

// TestStoreUnreachable: a node that cannot reach the store exits with
// ExitStorage before the trial starts, saying so.
func TestStoreUnreachable(t *testing.T) {
	// The store opens with the process's environment, as on a node.
	t.Setenv("AWS_ACCESS_KEY_ID", "k")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
	var stderr bytes.Buffer
	code := agent.Run(context.Background(), agent.Options{
		Argv: []string{"sh", "-c", "echo ran > " + filepath.Join(t.TempDir(), "ran")},
		Env: []string{
			"HONE_STORAGE=s3://nobucket/exp?endpoint=http://127.0.0.1:1&region=us-east-1&use_path_style=true",
			"HONE_SOCKET=tcp://127.0.0.1:1", "HONE_STORE_TRIAL_DIR=trial_a", "HONE_HOST=n9",
			agent.EnvCacheDir + "=" + t.TempDir(),
		},
		Stdout: io.Discard, Stderr: &stderr,
	})
	if code != agent.ExitStorage || !strings.Contains(stderr.String(), "node n9 cannot reach the experiment's storage") {
		t.Errorf("exit %d, stderr %q; want %d and why", code, stderr.String(), agent.ExitStorage)
	}
}

// TestBadEnvironment: the agent run without hone's environment says what
// is missing.
func TestBadEnvironment(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want string
	}{
		{nil, "HONE_STORAGE is not set"},
		{[]string{"HONE_STORAGE=file:///x"}, "HONE_SOCKET is not set"},
		{[]string{"HONE_STORAGE=file:///x", "HONE_SOCKET=/s", "HONE_STORE_TRIAL_DIR=../x"}, `HONE_STORE_TRIAL_DIR="../x"`},
	} {
		var stderr bytes.Buffer
		code := agent.Run(context.Background(), agent.Options{Argv: []string{"true"}, Env: c.env, Stdout: io.Discard, Stderr: &stderr})
		if code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("env %v: exit %d, %q; want 2 and %q", c.env, code, stderr.String(), c.want)
		}
	}
}

// TestCommitFails: a checkpoint the store cannot take (a named pipe in
// it) ends the trial: the agent kills it and exits with ExitCommit, and
// the trial's stderr.log says why.
func TestCommitFails(t *testing.T) {
	trials, _, work := run(t, t.TempDir(), "trial-fifo", 0, agent.EnvCacheDir+"="+t.TempDir())
	for _, tr := range trials {
		if tr.Status != hone.StatusError {
			t.Errorf("trial %s ended %s, want ERROR", tr.ID, tr.Status)
		}
		if !strings.Contains(tr.Error, "exit status "+strconv.Itoa(agent.ExitCommit)) {
			t.Errorf("trial %s: error %q, want the agent's exit status %d", tr.ID, tr.Error, agent.ExitCommit)
		}
		b, _ := os.ReadFile(filepath.Join(work, filepath.FromSlash(tr.Dir), "stderr.log"))
		if !strings.Contains(string(b), "hone agent: commit the checkpoint") || !strings.Contains(string(b), "not a regular file") {
			t.Errorf("trial %s: stderr.log = %q, want the agent's reason", tr.ID, b)
		}
	}
}

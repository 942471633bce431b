package trial_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/trial"
	"github.com/hone-tune/hone/wire"
)

// childEnv names the trainable that the test binary runs, re-executed as
// a trial process, instead of the tests.
const childEnv = "HONE_TRIAL_TEST_CHILD"

func TestMain(m *testing.M) {
	if name := os.Getenv(childEnv); name != "" {
		runChild(name)
		fmt.Fprintln(os.Stderr, "Main returned")
		os.Exit(100)
	}
	goleak.VerifyTestMain(m)
}

// runChild runs the named trainable with trial.Main or trial.MainClass.
func runChild(name string) {
	switch name {
	case "func":
		// Reports lr, then a checkpoint with done; answers a stop.
		trial.Main(func(ctx context.Context, s trial.Session) error {
			lr, _ := hone.Number(s.Config()["lr"])
			if err := s.Report(trial.Metrics{"lr": lr, "iter": s.Iteration(), "restore": s.Checkpoint()}); err != nil {
				return err
			}
			dir, err := s.StagingDir()
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, "w"), []byte("1"), 0o644); err != nil {
				return err
			}
			err = s.Report(trial.Metrics{"n": 2, "id": s.TrialID(), "dir": s.Dir()}, trial.WithCheckpoint(dir), trial.Done())
			if errors.Is(err, hone.ErrTrialStopped) && ctx.Err() == nil {
				return errors.New("stopped, but the context is not cancelled")
			}
			return err
		})
	case "class":
		trial.MainClass(func() trial.Trainable { return &counter{} })
	case "slowclass":
		// Its second step computes until its context is cancelled.
		trial.MainClass(func() trial.Trainable { return &slowCounter{} })
	case "block":
		// Reports once, then computes until stopped.
		trial.Main(func(ctx context.Context, s trial.Session) error {
			if err := s.Report(trial.Metrics{"n": 1}); err != nil {
				return err
			}
			<-ctx.Done()
			return ctx.Err()
		})
	case "fail":
		trial.Main(func(ctx context.Context, s trial.Session) error { return errors.New("diverged") })
	case "panic":
		trial.Main(func(ctx context.Context, s trial.Session) error { panic("kaboom") })
	case "nan":
		trial.Main(func(ctx context.Context, s trial.Session) error {
			return s.Report(trial.Metrics{"loss": math.NaN()})
		})
	}
}

// counter is a class trainable: metric "n" counts steps from the restored
// count; it is done at 3 and checkpoints at 2.
type counter struct{ n int }

func (c *counter) Setup(cfg hone.Config) error {
	if cfg["lr"] != 0.5 {
		return fmt.Errorf("config %v", cfg)
	}
	return nil
}

func (c *counter) Load(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "n"))
	if err == nil {
		_, err = fmt.Sscan(string(b), &c.n)
	}
	return err
}

func (c *counter) Save(dir string) error {
	return os.WriteFile(filepath.Join(dir, "n"), []byte(fmt.Sprint(c.n)), 0o644)
}

func (c *counter) Step(context.Context) (trial.Metrics, error) {
	c.n++
	return trial.Metrics{"n": c.n, "done": c.n >= 3, "should_checkpoint": c.n == 2}, nil
}

// slowCounter counts steps like counter; its second step returns only
// when its context is cancelled.
type slowCounter struct{ counter }

func (c *slowCounter) Step(ctx context.Context) (trial.Metrics, error) {
	if c.n == 1 {
		<-ctx.Done()
	}
	c.n++
	return trial.Metrics{"n": c.n}, nil
}

// child is a trial process of the test binary.
type child struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
}

// startChild starts the trainable name with env added to the test's
// environment.
func startChild(t *testing.T, name string, env ...string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(os.Args[0], "-test.run=^$")}
	// GORACE: no second of sleep at exit under the race detector.
	c.cmd.Env = append(os.Environ(), childEnv+"="+name, "GORACE=atexit_sleep_ms=0")
	c.cmd.Env = append(c.cmd.Env, env...)
	c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.cmd.Process.Kill(); c.cmd.Wait() })
	return c
}

// wait waits for the child's end and returns its exit status.
func (c *child) wait(t *testing.T) int {
	t.Helper()
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		c.cmd.Process.Kill()
		<-done
		t.Fatalf("trial process did not exit; stderr:\n%s", &c.stderr)
	}
	return c.cmd.ProcessState.ExitCode()
}

// honeSide is the hone end of a trial's connection.
type honeSide struct {
	t    *testing.T
	ln   net.Listener
	conn net.Conn
	r    *wire.Reader
	env  []string
	dir  string
}

// listen opens a socket for one trial and returns the environment that
// points the trial at it.
func listen(t *testing.T) *honeSide {
	t.Helper()
	sockDir, err := os.MkdirTemp("", "hone-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	ln, err := net.Listen("unix", filepath.Join(sockDir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	dir := t.TempDir()
	h := &honeSide{t: t, ln: ln, dir: dir}
	h.env = []string{
		wire.EnvProtocol + "=1",
		wire.EnvSocket + "=" + ln.Addr().String(),
		wire.EnvToken + "=cafe",
		wire.EnvTrialID + "=t1",
		wire.EnvTrialDir + "=" + dir,
		wire.EnvStagingDir + "=" + filepath.Join(dir, trial.StagingDirName),
		wire.EnvRestoreDir + "=",
		wire.EnvIteration + "=0",
		wire.EnvConfig + `={"lr":0.5}`,
	}
	return h
}

// accept takes the trial's connection, checks its hello and returns it.
func (h *honeSide) accept(canSave bool) wire.Message {
	h.t.Helper()
	conn, err := h.ln.Accept()
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { conn.Close() })
	h.conn, h.r = conn, wire.NewReader(conn)
	want := wire.Message{Type: wire.TypeHello, V: 1, Token: "cafe", TrialID: "t1", CanSave: canSave}
	m := h.recv()
	if m.Type != want.Type || m.V != want.V || m.Token != want.Token || m.TrialID != want.TrialID || m.CanSave != want.CanSave {
		h.t.Fatalf("hello %+v, want %+v", m, want)
	}
	return m
}

func (h *honeSide) send(m wire.Message) {
	h.t.Helper()
	b, err := wire.Encode(m)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.conn.Write(b); err != nil {
		h.t.Fatal(err)
	}
}

func (h *honeSide) recv() wire.Message {
	h.t.Helper()
	h.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	line, err := h.r.ReadLine()
	if err != nil {
		h.t.Fatalf("read from the trial: %v", err)
	}
	m, err := wire.Decode(line)
	if err != nil {
		h.t.Fatalf("message from the trial: %v", err)
	}
	return m
}

func (h *honeSide) report() wire.Message {
	h.t.Helper()
	m := h.recv()
	if m.Type != wire.TypeReport {
		h.t.Fatalf("got %+v, want a report", m)
	}
	return m
}

func (h *honeSide) directive(action string) {
	h.t.Helper()
	h.send(wire.Message{Type: wire.TypeDirective, Action: action})
}

var welcome = wire.Message{Type: wire.TypeWelcome, V: 1}

func TestMainFunc(t *testing.T) {
	h := listen(t)
	c := startChild(t, "func", h.env...)
	h.accept(false)
	h.send(welcome)
	m := h.report()
	if m.Metrics["lr"] != 0.5 || m.Metrics["iter"] != 0.0 || m.Metrics["restore"] != "" || m.Done || m.Checkpoint != "" {
		t.Errorf("first report %+v", m)
	}
	// A function cannot save on demand: it says so, and waits on.
	for range 2 {
		h.directive(wire.ActionCheckpoint)
		if m := h.recv(); m.Type != wire.TypeSaved || m.Checkpoint != "" || m.Error != "" {
			t.Fatalf("answer to a checkpoint directive: %+v", m)
		}
	}
	h.directive(wire.ActionContinue)
	m = h.report()
	staged := filepath.Join(h.dir, trial.StagingDirName, "0")
	if m.Checkpoint != staged || !m.Done || m.Metrics["id"] != "t1" || m.Metrics["dir"] != h.dir {
		t.Errorf("second report %+v, want done with checkpoint %s", m, staged)
	}
	h.send(wire.Message{Type: wire.TypeDirective, Action: wire.ActionStop, Reason: "stop"})
	if code := c.wait(t); code != 0 || c.stderr.Len() != 0 {
		t.Fatalf("exit status %d, stderr:\n%s", code, &c.stderr)
	}
}

// TestHelloHost: the hello names the machine HONE_HOST names, else the
// node SLURMD_NODENAME names (a Slurm step's task, which step mode starts
// with nothing of hone's around it), else the host name.
func TestHelloHost(t *testing.T) {
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		honeHost, slurmNode, want string
	}{
		{"n5", "n7", "n5"},
		{"", "n7", "n7"},
		{"", "", hostname},
	} {
		h := listen(t)
		child := startChild(t, "fail", append(h.env, wire.EnvHost+"="+c.honeHost, wire.EnvSlurmNode+"="+c.slurmNode)...)
		hello := h.accept(false)
		h.send(welcome)
		child.wait(t)
		if hello.Host != c.want {
			t.Errorf("HONE_HOST=%q SLURMD_NODENAME=%q: the hello names %q, want %q", c.honeHost, c.slurmNode, hello.Host, c.want)
		}
	}
}

func TestMainClass(t *testing.T) {
	h := listen(t)
	c := startChild(t, "class", h.env...)
	h.accept(true)
	h.send(welcome)
	if m := h.report(); m.Metrics["n"] != 1.0 || m.Checkpoint != "" {
		t.Errorf("first report %+v", m)
	}
	h.directive(wire.ActionCheckpoint)
	m := h.recv()
	if m.Type != wire.TypeSaved || m.Error != "" || filepath.Dir(m.Checkpoint) != filepath.Join(h.dir, trial.StagingDirName) {
		t.Fatalf("answer to a checkpoint directive: %+v", m)
	}
	if b, err := os.ReadFile(filepath.Join(m.Checkpoint, "n")); err != nil || string(b) != "1" {
		t.Errorf("saved checkpoint holds %q, %v", b, err)
	}
	h.directive(wire.ActionContinue)
	m = h.report()
	if _, ok := m.Metrics[trial.MetricShouldCheckpoint]; ok || m.Checkpoint == "" || m.Metrics["n"] != 2.0 {
		t.Errorf("report with should_checkpoint: %+v", m)
	}
	h.directive(wire.ActionContinue)
	if m := h.report(); !m.Done || m.Metrics["n"] != 3.0 {
		t.Errorf("last report %+v", m)
	}
	h.directive(wire.ActionContinue) // ends the trial after done
	if code := c.wait(t); code != 0 || c.stderr.Len() != 0 {
		t.Fatalf("exit status %d, stderr:\n%s", code, &c.stderr)
	}
}

// TestMainClassRestore: the class trainable restores HONE_RESTORE_DIR.
func TestMainClassRestore(t *testing.T) {
	h := listen(t)
	restore := t.TempDir()
	if err := os.WriteFile(filepath.Join(restore, "n"), []byte("2"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startChild(t, "class", append(h.env, wire.EnvRestoreDir+"="+restore, wire.EnvIteration+"=2")...)
	h.accept(true)
	h.send(welcome)
	if m := h.report(); m.Metrics["n"] != 3.0 || !m.Done {
		t.Errorf("report after restoring 2: %+v", m)
	}
	h.directive(wire.ActionStop)
	if code := c.wait(t); code != 0 {
		t.Fatalf("exit status %d, stderr:\n%s", code, &c.stderr)
	}
}

// TestMainSIGTERM: SIGTERM cancels the function's context; the trial
// ends normally.
func TestMainSIGTERM(t *testing.T) {
	h := listen(t)
	c := startChild(t, "block", h.env...)
	h.accept(false)
	h.send(welcome)
	h.report()
	h.directive(wire.ActionContinue)
	time.Sleep(50 * time.Millisecond)
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := c.wait(t); code != 0 || c.stderr.Len() != 0 {
		t.Fatalf("exit status %d, stderr:\n%s", code, &c.stderr)
	}
}

// TestMainSIGTERMWhileWaiting: SIGTERM while Report waits for its
// directive makes Report return hone.ErrTrialStopped.
func TestMainSIGTERMWhileWaiting(t *testing.T) {
	h := listen(t)
	c := startChild(t, "block", h.env...)
	h.accept(false)
	h.send(welcome)
	h.report()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := c.wait(t); code != 0 || c.stderr.Len() != 0 {
		t.Fatalf("exit status %d, stderr:\n%s", code, &c.stderr)
	}
}

// TestMainFailures: what a trial process says and how it exits when
// things go wrong.
func TestMainFailures(t *testing.T) {
	for _, c := range []struct {
		name   string
		child  string
		env    []string
		hone   func(h *honeSide)
		code   int
		stderr string // prefix
	}{
		{"Error", "fail", nil, func(h *honeSide) { h.accept(false); h.send(welcome) },
			1, "hone trial: trial function: diverged\n"},
		{"Panic", "panic", nil, func(h *honeSide) { h.accept(false); h.send(welcome) },
			2, "hone trial: trial function: panic: kaboom\n"},
		{"NaN", "nan", nil, func(h *honeSide) { h.accept(false); h.send(welcome) },
			1, `hone trial: trial function: report: metric "loss" is NaN: report finite numbers only (leave the metric out, or fail the trial)` + "\n"},
		{"Refused", "func", nil, func(h *honeSide) {
			h.accept(false)
			h.send(wire.Message{Type: wire.TypeError, Message: "hello: wrong token"})
		}, 1, "hone trial: hone refused this trial: hello: wrong token\n"},
		{"RefusedReport", "func", nil, func(h *honeSide) {
			h.accept(false)
			h.send(welcome)
			h.report()
			h.send(wire.Message{Type: wire.TypeError, Message: "no"})
		}, 1, "hone trial: trial function: hone refused this trial: no\n"},
		{"HoneGone", "func", nil, func(h *honeSide) {
			h.accept(false)
			h.send(welcome)
			h.report()
			h.conn.Close()
		}, 1, "hone trial: trial function: hone closed the connection\n"},
		{"Version", "func", []string{wire.EnvProtocol + "=2"}, func(*honeSide) {},
			1, "hone trial: hone speaks protocol version 2; this program speaks 1 (update one of them)\n"},
		{"NoHone", "func", []string{wire.EnvSocket + "=/nonexistent/s"}, func(*honeSide) {},
			1, "hone trial: connect to hone: dial unix /nonexistent/s: connect: no such file or directory\n"},
		{"BadConfig", "func", []string{wire.EnvConfig + "=[1]"}, func(*honeSide) {},
			1, "hone trial: HONE_CONFIG is not a JSON object: json: cannot unmarshal array into Go value of type hone.Config\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := listen(t)
			ch := startChild(t, c.child, append(h.env, c.env...)...)
			c.hone(h)
			code := ch.wait(t)
			if code != c.code || !strings.HasPrefix(ch.stderr.String(), c.stderr) {
				t.Fatalf("exit status %d, stderr:\n%s\nwant status %d, stderr:\n%s", code, &ch.stderr, c.code, c.stderr)
			}
		})
	}
}

// TestMainByHand: without HONE_SOCKET, reports are printed and training
// goes on.
func TestMainByHand(t *testing.T) {
	dir := t.TempDir()
	c := startChild(t, "func", wire.EnvConfig+`={"lr":0.5}`, wire.EnvTrialDir+"="+dir)
	if code := c.wait(t); code != 0 {
		t.Fatalf("exit status %d, stderr:\n%s", code, &c.stderr)
	}
	want := `HONE_REPORT {"metrics":{"iter":0,"lr":0.5,"restore":""}}` + "\n" +
		`HONE_REPORT {"metrics":{"dir":"` + dir + `","id":"","n":2},"checkpoint":"` + filepath.Join(dir, ".staging", "0") + `","done":true}` + "\n"
	if got := c.stdout.String(); got != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", got, want)
	}
	for _, line := range strings.SplitAfter(strings.TrimSuffix(want, "\n"), "\n") {
		if _, ok, err := wire.ParseReportLine([]byte(line)); !ok || err != nil {
			t.Errorf("printed report %q does not parse: %v", line, err)
		}
	}

	// A class trainable runs until done; without HONE_TRIAL_DIR the
	// trial directory is the working directory.
	c = &child{cmd: exec.Command(os.Args[0], "-test.run=^$")}
	c.cmd.Env = append(os.Environ(), childEnv+"=class", wire.EnvConfig+`={"lr":0.5}`, "GORACE=atexit_sleep_ms=0")
	c.cmd.Dir = dir
	c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.stderr
	if err := c.cmd.Run(); err != nil {
		t.Fatalf("%v, stderr:\n%s", err, &c.stderr)
	}
	lines := strings.Split(strings.TrimSpace(c.stdout.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], `"checkpoint":"`+filepath.Join(dir, ".staging", "1")+`"`) || !strings.HasSuffix(lines[2], `"done":true}`) {
		t.Errorf("class reports:\n%s", &c.stdout)
	}
}

// expectSave sends a checkpoint directive and checks that the trial saves
// a checkpoint holding n.
func (h *honeSide) expectSave(n string) {
	h.t.Helper()
	h.directive(wire.ActionCheckpoint)
	m := h.recv()
	if m.Type != wire.TypeSaved || m.Error != "" || m.Checkpoint == "" {
		h.t.Fatalf("answer to a checkpoint directive: %+v", m)
	}
	if b, err := os.ReadFile(filepath.Join(m.Checkpoint, "n")); err != nil || string(b) != n {
		h.t.Errorf("saved checkpoint holds %q, %v; want %s", b, err, n)
	}
}

// TestMainClassSIGTERMWhileWaiting: a class trainable that gets SIGTERM
// while it waits for hone's directive still saves when hone asks, and
// exits when told to stop.
func TestMainClassSIGTERMWhileWaiting(t *testing.T) {
	h := listen(t)
	c := startChild(t, "class", h.env...)
	h.accept(true)
	h.send(welcome)
	h.report()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the signal is handled meanwhile
	h.expectSave("1")
	h.directive(wire.ActionStop)
	if code := c.wait(t); code != 0 || c.stderr.Len() != 0 {
		t.Fatalf("exit status %d, stderr:\n%s", code, &c.stderr)
	}
}

// TestMainClassSIGTERMWhileStepping: SIGTERM cancels the context of a
// computing Step; the metrics it returns are reported, hone's checkpoint
// directive is answered, and no further Step starts: after a continue the
// trial exits.
func TestMainClassSIGTERMWhileStepping(t *testing.T) {
	for _, last := range []string{wire.ActionStop, wire.ActionContinue} {
		t.Run(last, func(t *testing.T) {
			h := listen(t)
			c := startChild(t, "slowclass", h.env...)
			h.accept(true)
			h.send(welcome)
			h.report()
			h.directive(wire.ActionContinue)
			time.Sleep(50 * time.Millisecond) // in its second step
			if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if m := h.report(); m.Metrics["n"] != 2.0 {
				t.Errorf("report after SIGTERM: %+v, want n=2", m)
			}
			h.expectSave("2")
			h.directive(last)
			if code := c.wait(t); code != 0 || c.stderr.Len() != 0 {
				t.Fatalf("exit status %d, stderr:\n%s", code, &c.stderr)
			}
		})
	}
}

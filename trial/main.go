package trial

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/wire"
)

// Main runs fn as the trial of this process and exits the process; call it
// from func main of a Go program that hone's process executor runs (see
// package wire for the protocol). It reads the HONE_* environment,
// connects to hone, and gives fn a Session with the same behaviour as in
// process: Report blocks until hone's directive; when hone asks for a
// checkpoint, Main answers that a function cannot save on demand; when hone
// stops the trial (a stop directive, or SIGTERM), the context passed to fn
// is cancelled and Report returns hone.ErrTrialStopped.
//
// Main exits with status 0 when fn returns nil or hone.ErrTrialStopped, or
// returns anything but a panic after hone stopped it; otherwise it writes
// the error (for a panic, with its stack) to standard error and exits with
// status 1 (2 for a panic).
//
// Without HONE_SOCKET, as when the program is run by hand, Main still
// runs fn: the configuration comes from HONE_CONFIG (a JSON object) or is
// empty, every report is printed to standard output as a
// wire.ReportPrefix line, and Report returns nil at once.
func Main(fn Func) {
	os.Exit(runMain(os.Getenv, os.Stdout, os.Stderr, func(ctx context.Context, c *client) error {
		if err := Guard(func() error { return fn(ctx, &procSession{c: c}) }); err != nil {
			return fmt.Errorf("trial function: %w", err)
		}
		return nil
	}, false))
}

// MainClass runs a class-style trainable made by factory as the trial of
// this process and exits the process, like Main. It calls Setup, then Load
// when hone restores the trial, then Step after Step, reporting each
// step's metrics and waiting for hone's directive. A step's
// "should_checkpoint": true metric makes it save into a fresh staging
// directory first and report that checkpoint; a checkpoint directive saves
// into a fresh staging directory too. On SIGTERM (hone sends it to every
// trial when the experiment is interrupted) the context passed to Step is
// cancelled and no further Step starts, but the exchange with hone goes
// on: the metrics of a Step that returns are reported, and a checkpoint
// directive is still answered with a save. MainClass exits with status 0
// after a stop, after SIGTERM, after a result with "done": true, or, run
// by hand, when the trainable reports done.
func MainClass(factory func() Trainable) {
	os.Exit(runMain(os.Getenv, os.Stdout, os.Stderr, func(ctx context.Context, c *client) error {
		return classMain(ctx, factory, c)
	}, true))
}

// Exit statuses of Main and MainClass.
const (
	exitOK     = 0
	exitFailed = 1
	exitPanic  = 2
)

// runMain runs body with a client made from the environment getenv and
// returns the process's exit status. Errors go to stderr; reports made
// without hone go to stdout.
func runMain(getenv func(string) string, stdout, stderr io.Writer, body func(context.Context, *client) error, canSave bool) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := newClient(getenv, stdout, cancel)
	if err != nil {
		fmt.Fprintf(stderr, "hone trial: %v\n", err)
		return exitFailed
	}
	defer c.close()
	if c.conn != nil {
		if err := c.handshake(canSave); err != nil {
			fmt.Fprintf(stderr, "hone trial: %v\n", err)
			return exitFailed
		}
		stopSignals := c.watchSignals(canSave)
		defer stopSignals()
	}
	err = body(ctx, c)
	var pe *PanicError
	switch {
	case errors.As(err, &pe):
		fmt.Fprintf(stderr, "hone trial: %v\n", err)
		return exitPanic
	case err == nil, errors.Is(err, hone.ErrTrialStopped), c.isStopped(), c.isTerminated():
		if ferr := c.failure(); ferr != nil {
			fmt.Fprintf(stderr, "hone trial: %v\n", ferr)
			return exitFailed
		}
		return exitOK
	}
	fmt.Fprintf(stderr, "hone trial: %v\n", err)
	return exitFailed
}

// client is a trial process's side of the protocol: its environment and,
// when hone started it, the connection.
type client struct {
	cfg        hone.Config
	trialID    string
	dir        string
	restoreDir string
	iteration  int
	token      string
	host       string // HONE_HOST, else SLURMD_NODENAME, else the host name: named in the hello
	stager     *Stager
	stdout     io.Writer
	cancel     context.CancelFunc // cancels the trainable's context

	conn net.Conn // nil when run by hand
	r    *wire.Reader

	mu      sync.Mutex // serialises exchanges with hone and stdout reports
	stopped bool       // guarded by stateMu
	// terminated: SIGTERM ended a class trainable; guarded by stateMu.
	terminated bool
	fatal      error // guarded by stateMu: the connection failed
	stateMu    sync.Mutex
}

// newClient reads the environment and connects to hone if HONE_SOCKET is
// set.
func newClient(getenv func(string) string, stdout io.Writer, cancel context.CancelFunc) (*client, error) {
	c := &client{
		cfg:        hone.Config{},
		trialID:    getenv(wire.EnvTrialID),
		dir:        getenv(wire.EnvTrialDir),
		restoreDir: getenv(wire.EnvRestoreDir),
		token:      getenv(wire.EnvToken),
		host:       cmp.Or(getenv(wire.EnvHost), getenv(wire.EnvSlurmNode)),
		stdout:     stdout,
		cancel:     cancel,
	}
	if s := getenv(wire.EnvConfig); s != "" {
		if err := json.Unmarshal([]byte(s), &c.cfg); err != nil {
			return nil, fmt.Errorf("%s is not a JSON object: %w", wire.EnvConfig, err)
		}
		if c.cfg == nil {
			c.cfg = hone.Config{}
		}
	}
	if s := getenv(wire.EnvIteration); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s=%q is not an iteration number", wire.EnvIteration, s)
		}
		c.iteration = n
	}
	if c.dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("trial directory: %w", err)
		}
		c.dir = wd
	} else if abs, err := filepath.Abs(c.dir); err == nil {
		c.dir = abs
	}
	if s := getenv(wire.EnvStagingDir); s != "" {
		abs, err := filepath.Abs(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", wire.EnvStagingDir, err)
		}
		c.stager = &Stager{dir: abs, root: abs}
	} else {
		c.stager = NewStager(c.dir)
	}
	sock := getenv(wire.EnvSocket)
	if sock == "" {
		return c, nil
	}
	if v := getenv(wire.EnvProtocol); v != "" && v != strconv.Itoa(wire.Version) {
		return nil, fmt.Errorf("hone speaks protocol version %s; this program speaks %d (update one of them)", v, wire.Version)
	}
	conn, err := wire.Dial(sock)
	if err != nil {
		return nil, fmt.Errorf("connect to hone: %w", err)
	}
	c.conn = conn
	c.r = wire.NewReader(conn)
	return c, nil
}

func (c *client) close() {
	if c.conn != nil {
		_ = c.conn.Close()
	}
}

// handshake says hello and waits for the welcome.
func (c *client) handshake(canSave bool) error {
	host := c.host
	if host == "" {
		host, _ = os.Hostname()
	}
	err := c.send(wire.Message{Type: wire.TypeHello, V: wire.Version, Token: c.token, TrialID: c.trialID, CanSave: canSave, Host: host})
	if err != nil {
		return err
	}
	m, err := c.receive()
	if err != nil {
		return err
	}
	if m.Type != wire.TypeWelcome {
		return c.fail(fmt.Errorf("hone answered hello with a %s message, want welcome", m.Type))
	}
	if m.V != wire.Version {
		return c.fail(fmt.Errorf("hone speaks protocol version %d; this program speaks %d", m.V, wire.Version))
	}
	return nil
}

// watchSignals ends the trial on SIGTERM, and a second SIGTERM kills the
// process. The trainable's context is cancelled. A function trainable
// (canSave false) stops at once: a pending Report returns
// hone.ErrTrialStopped, and its latest reported checkpoint is where it
// resumes. A class trainable saves if it can: the exchange with hone in
// progress goes on (hone, which sends SIGTERM when the experiment is
// interrupted, answers with a checkpoint directive and then a stop), a
// Step that returns metrics still reports them, and no further Step
// starts. The returned function stops watching.
func (c *client) watchSignals(canSave bool) func() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-ch:
			signal.Reset(syscall.SIGTERM)
			if canSave {
				c.terminate()
				return
			}
			c.stop()
			// Wake a Report waiting for its directive.
			_ = c.conn.SetReadDeadline(time.Now())
		case <-done:
		}
	})
	return func() {
		signal.Stop(ch)
		close(done)
		wg.Wait()
	}
}

// stop marks the trial stopped and cancels the trainable's context.
func (c *client) stop() {
	c.stateMu.Lock()
	c.stopped = true
	c.stateMu.Unlock()
	c.cancel()
}

// terminate marks the trial terminated by SIGTERM and cancels the
// trainable's context; exchanges with hone go on.
func (c *client) terminate() {
	c.stateMu.Lock()
	c.terminated = true
	c.stateMu.Unlock()
	c.cancel()
}

func (c *client) isTerminated() bool {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	return c.terminated
}

func (c *client) isStopped() bool {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	return c.stopped
}

// fail records err as the connection's failure, unless there is one, and
// returns the recorded failure.
func (c *client) fail(err error) error {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	if c.fatal == nil {
		c.fatal = err
	}
	return c.fatal
}

func (c *client) failure() error {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	return c.fatal
}

func (c *client) send(m wire.Message) error {
	b, err := wire.Encode(m)
	if err != nil {
		return err // the trainable's fault, not the connection's
	}
	if _, err := c.conn.Write(b); err != nil {
		return c.fail(fmt.Errorf("send %s to hone: %w", m.Type, err))
	}
	return nil
}

// receive reads hone's next message; an error message from hone, or a
// broken connection, fails the trial.
func (c *client) receive() (wire.Message, error) {
	line, err := c.r.ReadLine()
	if err != nil {
		if c.isStopped() {
			return wire.Message{}, hone.ErrTrialStopped
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return wire.Message{}, c.fail(errors.New("hone closed the connection"))
		}
		return wire.Message{}, c.fail(fmt.Errorf("read from hone: %w", err))
	}
	m, err := wire.Decode(line)
	if err != nil {
		return wire.Message{}, c.fail(fmt.Errorf("hone sent a bad message: %w", err))
	}
	if m.Type == wire.TypeError {
		return wire.Message{}, c.fail(fmt.Errorf("hone refused this trial: %s", m.Message))
	}
	return m, nil
}

// report sends a report and returns hone's directive action, answering
// checkpoint directives with save (or with "cannot save" when save is nil)
// in between. Run by hand, it prints the report and returns continue.
// The action is stop, with hone.ErrTrialStopped, when the trial is
// stopped.
func (c *client) report(m wire.Message, save func() (string, error)) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.isStopped() {
		return wire.ActionStop, hone.ErrTrialStopped
	}
	if err := c.failure(); err != nil {
		return "", err
	}
	if err := wire.CheckMetrics(m.Metrics); err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	if m.Checkpoint != "" {
		abs, err := filepath.Abs(m.Checkpoint)
		if err != nil {
			return "", fmt.Errorf("checkpoint %s: %w", m.Checkpoint, err)
		}
		m.Checkpoint = abs
	}
	if c.conn == nil {
		return wire.ActionContinue, c.print(m)
	}
	if err := c.send(m); err != nil {
		return "", err
	}
	for {
		d, err := c.receive()
		if err != nil {
			if errors.Is(err, hone.ErrTrialStopped) {
				return wire.ActionStop, err
			}
			return "", err
		}
		if d.Type != wire.TypeDirective {
			return "", c.fail(fmt.Errorf("hone answered a report with a %s message, want a directive", d.Type))
		}
		switch d.Action {
		case wire.ActionContinue:
			return wire.ActionContinue, nil
		case wire.ActionStop:
			c.stop()
			return wire.ActionStop, hone.ErrTrialStopped
		}
		saved := wire.Message{Type: wire.TypeSaved}
		if save != nil {
			dir, err := save()
			if err != nil {
				saved.Error = err.Error()
			} else {
				saved.Checkpoint = dir
			}
		}
		if err := c.send(saved); err != nil {
			return "", err
		}
	}
}

// print writes a report to stdout as a stdout fallback line.
func (c *client) print(m wire.Message) error {
	line, err := json.Marshal(struct {
		Metrics    map[string]any `json:"metrics"`
		Checkpoint string         `json:"checkpoint,omitempty"`
		Done       bool           `json:"done,omitempty"`
	}{m.Metrics, m.Checkpoint, m.Done})
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err = fmt.Fprintf(c.stdout, "%s%s\n", wire.ReportPrefix, line)
	return err
}

// procSession is the Session of a function trainable in a trial process.
type procSession struct{ c *client }

func (s *procSession) Config() hone.Config         { return s.c.cfg }
func (s *procSession) TrialID() string             { return s.c.trialID }
func (s *procSession) Dir() string                 { return s.c.dir }
func (s *procSession) Checkpoint() string          { return s.c.restoreDir }
func (s *procSession) Iteration() int              { return s.c.iteration }
func (s *procSession) StagingDir() (string, error) { return s.c.stager.New() }

func (s *procSession) Report(m Metrics, opts ...ReportOption) error {
	o := CollectReportOptions(opts...)
	msg := wire.Message{Type: wire.TypeReport, Metrics: m, Checkpoint: o.Checkpoint, Done: o.Done || IsDone(m)}
	if msg.Checkpoint != "" {
		if fi, err := os.Stat(msg.Checkpoint); err != nil {
			return fmt.Errorf("report: checkpoint: %w", err)
		} else if !fi.IsDir() {
			return fmt.Errorf("report: checkpoint %s: not a directory", msg.Checkpoint)
		}
	}
	_, err := s.c.report(msg, nil)
	return err
}

// classMain drives a class-style trainable for MainClass.
func classMain(ctx context.Context, factory func() Trainable, c *client) error {
	var t Trainable
	err := Guard(func() error {
		if t = factory(); t == nil {
			return errors.New("factory returned nil")
		}
		return t.Setup(c.cfg)
	})
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	if dir := c.restoreDir; dir != "" {
		if err := Guard(func() error { return t.Load(dir) }); err != nil {
			return fmt.Errorf("load checkpoint %s: %w", dir, err)
		}
	}
	save := func() (string, error) {
		dir, err := c.stager.New()
		if err != nil {
			return "", err
		}
		if err := Guard(func() error { return t.Save(dir) }); err != nil {
			_ = os.RemoveAll(dir)
			return "", fmt.Errorf("save: %w", err)
		}
		return dir, nil
	}
	for ctx.Err() == nil {
		var m Metrics
		err := Guard(func() (err error) {
			m, err = t.Step(ctx)
			return err
		})
		if err != nil {
			return fmt.Errorf("step: %w", err)
		}
		msg := wire.Message{Type: wire.TypeReport, Metrics: m, Done: IsDone(m)}
		if ck, _ := m[MetricShouldCheckpoint].(bool); ck {
			delete(m, MetricShouldCheckpoint)
			if msg.Checkpoint, err = save(); err != nil {
				return fmt.Errorf("checkpoint after step: %w", err)
			}
		}
		action, err := c.report(msg, save)
		if err != nil {
			return err
		}
		if action == wire.ActionStop || msg.Done {
			return nil
		}
	}
	return nil
}

// Package process runs each trial as a command in a subprocess, speaking
// the protocol of package wire with it. The command can be anything: a Go
// program built on trial.Main or trial.MainClass, a Python script using
// clients/python/hone.py, or a shell script printing HONE_REPORT lines.
//
// Every start of a trial is one process, in a process group of its own
// (so hone's signals reach its children and a Ctrl-C at hone's terminal
// does not: Interrupt forwards it). On Linux the process also dies with
// hone: the kernel kills it (SIGKILL) when hone's process ends, even by
// kill -9. Its children do not get that signal; Prepare, at the next
// resume, ends them (see below). Its environment is hone's, plus
// Options.Env, plus the HONE_* variables and CUDA_VISIBLE_DEVICES of the
// protocol, plus OMP_NUM_THREADS = ceil(Resources.CPU) when the trial
// needs CPUs and the user has not set it. Its standard output and error are appended to stdout.log and
// stderr.log in the trial directory; standard output is also scanned for
// HONE_REPORT lines.
//
// An Executor implements [hone.Executor]:
//
//   - A report (over the socket or on stdout) is an EventResult: Done from
//     its "done" field or a "done": true metric, CheckpointDir from its
//     checkpoint, which must be a directory inside HONE_STAGING_DIR
//     (<trial dir>/.staging). Reports reach Next one at a time: the next
//     one only after the runner answered the previous one.
//   - DirectContinue and DirectCheckpoint become directives. A trial that said
//     it cannot save on demand (can_save false), or reports on stdout, gets
//     no checkpoint directive: hone answers for it with an EventSaved
//     without a checkpoint.
//   - DirectStop sends a stop directive to a trial waiting on its socket
//     and SIGTERM to its process group if it has not exited within a few
//     seconds; a trial that is computing (or reports on stdout) gets
//     SIGTERM at once. SIGKILL follows SIGTERM after Options.StopGrace.
//     Once Direct(id, DirectStop) has returned, the only event still to
//     come for id is its EventExited, as with package inproc.
//   - The end of the process is one EventExited, after everything the
//     process wrote was read and every earlier event was answered. Its Err
//     is nil for status 0 and for any end after hone signalled the process
//     group; otherwise it is an *ExitError with the status and the last
//     lines of stderr.
//   - Trials connect to the executor's one wire server: a Unix socket in
//     a private directory, or a TCP port with Options.Listen. The server
//     reads each connection's hello and hands the connection to the trial
//     it names. A connection whose first message is not a hello with that
//     trial's HONE_TOKEN (or that names no trial waiting for one) is
//     answered {"type":"error"} and closed, and the trial keeps waiting:
//     another process can neither take a trial's place nor fail it.
//   - A protocol violation by the trial's connection (a wrong protocol
//     version, bad JSON, a message out of turn or over
//     wire.MaxMessageSize, a non-finite metric, a checkpoint outside the
//     staging directory) fails that trial only: hone answers
//     {"type":"error"}, kills its process group, and its EventExited
//     carries a *ProtocolError.
//   - Interrupt (the runner calls it on Ctrl-C) sends SIGTERM to every
//     trial's process group at once and SIGKILL to those left after
//     Options.StopGrace; the trials may still report, save and stop
//     meanwhile.
//
// Prepare (the runner calls it with the experiment directory) keeps the
// executor's files under <experiment>/.hone: a record of each running
// trial process (its pid, start time and token) and the trials' socket
// (in a private directory of the system's temporary directory, recorded
// there, when the experiment's path is too long for a socket). At the
// next Prepare after a crash, every recorded process still running, its
// process group and every process carrying its token are killed before
// any trial starts, and the socket is removed. Close removes all of it.
//
// With Options.Launch, a trial may wait before it runs (a job in a
// cluster's queue), and the executor announces starts
// (hone.StartAnnouncer): one hone.EventStarted per start, when the
// launcher says the trial runs (Queued) or its hello arrives, whichever
// comes first, and never after it was told to stop.
//
// Events carry the process id and the executor's host name.
package process

import (
	"context"
	"errors"
	"fmt"
	"github.com/hone-tune/hone/internal/eventq"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hone-tune/hone"
)

// Options configures an Executor.
type Options struct {
	// Command is the program and its arguments (argv); required. The
	// program is looked up in PATH when it has no slash.
	Command []string
	// Env holds extra "KEY=VALUE" entries added to hone's environment
	// (and overriding it) for every trial.
	Env []string
	// Dir is the working directory of the trials ("" = hone's current
	// one).
	Dir string
	// StopGrace is how long a process group gets between SIGTERM and
	// SIGKILL (default 10s).
	StopGrace time.Duration
	// GPUs is how many GPUs the machine offers trials: a trial gets the
	// ones its StartSpec.GPUs name (indexes, handed out by the controller
	// against the pool) in CUDA_VISIBLE_DEVICES. The GPUs are
	// 0..GPUs-1, or, when hone's environment (or Env) sets
	// CUDA_VISIBLE_DEVICES, the first GPUs entries of that list.
	GPUs int
	// Clock stamps events (default: the wall clock). Its Now is called
	// with the executor's lock held, from several goroutines.
	Clock hone.Clock
	// Listen, when set, makes trials connect over TCP instead of a Unix
	// socket: the executor listens on this HOST:PORT (":0": every
	// interface, a free port) and trials get HONE_SOCKET=tcp://HOST:PORT.
	// Trials that run on other machines (Launch) need it.
	Listen string
	// Advertise is the HOST:PORT trials dial when Listen is set ("" =
	// Listen's host, or this machine's address when that host is empty
	// or unspecified, with the port listened on).
	Advertise string
	// Launch, when set, starts each trial's command somewhere other than
	// as a child process of hone (a batch job on a cluster); see
	// Launcher. Nil starts a child process.
	Launch Launcher
	// Store, with Launch, is the URL of the experiment's object store,
	// which launched trials reach themselves: each trial's command runs
	// behind a node agent (hone agent) that downloads the checkpoint it
	// restores from and commits the checkpoints it saves to the store,
	// on the trial's machine, so that no checkpoint passes through hone's
	// (see hone.RemoteCommitter). The trial's environment carries the URL
	// (wire.EnvStorage), its directory in the store and its restore
	// point; the launcher wraps the command in the agent.
	Store string
}

// DefaultStopGrace is the StopGrace used when Options leaves it zero.
const DefaultStopGrace = 10 * time.Second

// maxStopWait bounds how long a trial told to stop over its socket may
// take to exit before it gets SIGTERM (StopGrace bounds it further).
const maxStopWait = 3 * time.Second

// drainTimeout bounds how long the end of a process waits for its output
// and its socket to be read to the end, in case a process outside its
// group holds them open.
const drainTimeout = 2 * time.Second

// Log file names in a trial directory.
const (
	StdoutLog = "stdout.log"
	StderrLog = "stderr.log"
)

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// Executor runs trials as subprocesses. Its methods are called by the
// runner from one goroutine; each trial's goroutines deliver events
// through an internal queue. Create it with New.
type Executor struct {
	opts     Options
	workDir  string   // absolute working directory of the trials
	gpuIDs   []string // the GPUs to hand out, by index
	hostname string
	wake     chan struct{} // capacity 1: an event was queued
	wg       sync.WaitGroup

	mu      sync.Mutex
	trials  map[string]*proc // started trials whose EventExited Next has not returned
	queue   eventq.Queue     // events not yet returned by Next
	running int              // trials whose EventExited is not queued yet
	closed  bool

	forker forker // starts the trial processes

	sockMu   sync.Mutex
	stateDir string  // <experiment>/.hone once Prepare was called, else ""
	sockDir  string  // private directory of the trials' socket; "" until the first start
	srv      *server // the wire server: TCP (Options.Listen) from New, else a Unix socket from the first start
}

// state returns the state directory ("" without Prepare).
func (e *Executor) state() string {
	e.sockMu.Lock()
	defer e.sockMu.Unlock()
	return e.stateDir
}

// New returns an executor that runs opts.Command for every trial. It
// fails when the command is empty, a field is out of range, or GPUs is
// larger than an inherited CUDA_VISIBLE_DEVICES list.
func New(opts Options) (*Executor, error) {
	if len(opts.Command) == 0 || opts.Command[0] == "" {
		return nil, errors.New("process executor: Options.Command is empty")
	}
	if opts.StopGrace < 0 {
		return nil, fmt.Errorf("process executor: Options.StopGrace = %v: must be >= 0", opts.StopGrace)
	}
	if opts.StopGrace == 0 {
		opts.StopGrace = DefaultStopGrace
	}
	if opts.GPUs < 0 {
		return nil, fmt.Errorf("process executor: Options.GPUs = %d: must be >= 0", opts.GPUs)
	}
	for _, kv := range opts.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, fmt.Errorf("process executor: Options.Env entry %q is not KEY=VALUE", kv)
		}
	}
	if opts.Clock == nil {
		opts.Clock = wallClock{}
	}
	opts.Command = append([]string(nil), opts.Command...)
	opts.Env = append([]string(nil), opts.Env...)
	e := &Executor{
		opts:   opts,
		wake:   make(chan struct{}, 1),
		trials: make(map[string]*proc),
	}
	var err error
	if opts.Dir == "" {
		e.workDir, err = os.Getwd()
	} else {
		e.workDir, err = filepath.Abs(opts.Dir)
	}
	if err != nil {
		return nil, fmt.Errorf("process executor: working directory: %w", err)
	}
	inherited, set := lookupEnv(append(os.Environ(), opts.Env...), "CUDA_VISIBLE_DEVICES")
	e.gpuIDs, err = gpuIDs(opts.GPUs, inherited, set)
	if err != nil {
		return nil, fmt.Errorf("process executor: %w", err)
	}
	e.hostname, _ = os.Hostname()
	if opts.Launch != nil && opts.Listen == "" {
		return nil, errors.New("process executor: Options.Launch needs Options.Listen: trials elsewhere connect over TCP")
	}
	if opts.Listen != "" {
		if e.srv, err = listenTCP(opts.Listen, opts.Advertise); err != nil {
			return nil, fmt.Errorf("process executor: %w", err)
		}
	}
	return e, nil
}

// gpuIDs returns the ids of n GPUs: 0..n-1, or the first n entries of an
// inherited CUDA_VISIBLE_DEVICES value.
func gpuIDs(n int, inherited string, set bool) ([]string, error) {
	ids := make([]string, 0, n)
	if !set {
		for i := range n {
			ids = append(ids, strconv.Itoa(i))
		}
		return ids, nil
	}
	var list []string
	for _, s := range strings.Split(inherited, ",") {
		if s = strings.TrimSpace(s); s != "" {
			list = append(list, s)
		}
	}
	if n > len(list) {
		return nil, fmt.Errorf("Options.GPUs = %d, but CUDA_VISIBLE_DEVICES=%q lists %d GPUs", n, inherited, len(list))
	}
	return append(ids, list[:n]...), nil
}

// lookupEnv returns the value of the last entry for key in env.
func lookupEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// AnnouncesStarts reports whether the executor emits a hone.EventStarted
// when a started trial begins to run: with a Launcher, whose trials may
// wait (in a cluster's queue) before they run. A child process runs at
// Start, and gets no such event. It implements hone.StartAnnouncer.
func (e *Executor) AnnouncesStarts() bool { return e.opts.Launch != nil }

// Clock returns the clock that stamps events, so the runner can use the
// same one. It implements hone.Clocked.
func (e *Executor) Clock() hone.Clock { return e.opts.Clock }

// Start starts a process for the trial. It creates spec.Dir and its
// staging directory if needed. It fails when spec.TrialID is empty,
// spec.Dir is not absolute, a trial with that id is still running (its
// EventExited not yet returned by Next), the trial needs more GPUs than
// are free, the executor is closed, or the process cannot be started.
func (e *Executor) Start(spec hone.StartSpec) error {
	if spec.TrialID == "" {
		return errors.New("start trial: empty trial id")
	}
	if !filepath.IsAbs(spec.Dir) {
		return fmt.Errorf("start trial %s: dir %q is not an absolute path", spec.TrialID, spec.Dir)
	}
	if err := spec.Resources.Validate(); err != nil {
		return fmt.Errorf("start trial %s: %w", spec.TrialID, err)
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return fmt.Errorf("start trial %s: executor closed", spec.TrialID)
	}
	if _, ok := e.trials[spec.TrialID]; ok {
		e.mu.Unlock()
		return fmt.Errorf("start trial %s: already running", spec.TrialID)
	}
	var gpus []int
	if e.opts.Launch == nil { // a launcher's trials get their GPUs where they run
		var err error
		if gpus, err = e.devices(spec); err != nil {
			e.mu.Unlock()
			return fmt.Errorf("start trial %s: %w", spec.TrialID, err)
		}
	}
	p := &proc{
		e:          e,
		spec:       spec,
		gpus:       gpus,
		escalate:   make(chan escalation, 3),
		reaped:     make(chan struct{}),
		stdoutDone: make(chan struct{}),
		stderrDone: make(chan struct{}),
		sockDone:   make(chan struct{}),
	}
	e.trials[spec.TrialID] = p
	e.running++
	e.mu.Unlock()

	if err := p.start(); err != nil {
		e.mu.Lock()
		delete(e.trials, spec.TrialID)
		e.running--
		e.mu.Unlock()
		return fmt.Errorf("start trial %s: %w", spec.TrialID, err)
	}
	return nil
}

// devices checks the GPUs the runner gave the trial (StartSpec.GPUs):
// ceil(Resources.GPU) indexes of the executor's GPUs.
func (e *Executor) devices(spec hone.StartSpec) ([]int, error) {
	need := int(math.Ceil(spec.Resources.GPU))
	if len(spec.GPUs) != need {
		return nil, fmt.Errorf("needs %s, but was given %d (StartSpec.GPUs)", plural(need, "GPU"), len(spec.GPUs))
	}
	for _, i := range spec.GPUs {
		if i < 0 || i >= len(e.gpuIDs) {
			return nil, fmt.Errorf("GPU %d is not one of the executor's %d (Options.GPUs)", i, len(e.gpuIDs))
		}
	}
	return spec.GPUs, nil
}

// Direct answers a waiting trial, or stops a running one. It fails for an
// unknown trial (never started, or its EventExited already returned by
// Next), and for DirectContinue or DirectCheckpoint to a trial that is not
// waiting for a directive. DirectStop to a trial that is already stopping
// or has exited is a no-op.
func (e *Executor) Direct(trialID string, d hone.Directive) error {
	e.mu.Lock()
	p := e.trials[trialID]
	if p == nil {
		e.mu.Unlock()
		return fmt.Errorf("direct %v to trial %s: no such trial running", d, trialID)
	}
	var dropped []string
	var err error
	switch d {
	case hone.DirectStop:
		dropped = p.stopLocked()
	case hone.DirectContinue, hone.DirectCheckpoint:
		if p.turn != turnWaiting {
			err = fmt.Errorf("direct %v to trial %s: trial is not waiting for a directive", d, trialID)
			break
		}
		p.answerLocked(d)
	default:
		err = fmt.Errorf("direct %v to trial %s: unknown directive", d, trialID)
	}
	e.mu.Unlock()
	discard(dropped)
	return err
}

// Next returns the next event in arrival order. It returns ctx.Err() if
// ctx is done, and hone.ErrIdle at once when no trial is running and no
// event is queued; otherwise it blocks. When it returns a trial's
// EventExited, the trial id becomes free for another Start.
func (e *Executor) Next(ctx context.Context) (hone.Event, error) {
	return eventq.Next(ctx, &e.mu, &e.queue, e.wake,
		func() bool { return e.running == 0 },
		func(id string) { delete(e.trials, id) })
}

// pushLocked stamps ev for p and queues it.
func (e *Executor) pushLocked(p *proc, ev hone.Event) {
	ev.TrialID = p.spec.TrialID
	ev.Time = e.opts.Clock.Now().UnixNano()
	ev.PID = p.pid
	ev.Hostname = e.hostname
	if p.launched != nil {
		ev.Hostname = p.whereLocked()
	}
	e.queue.Push(ev)
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// dropQueuedLocked removes p's queued events other than its exit and
// returns their staged checkpoint directories.
func (e *Executor) dropQueuedLocked(p *proc) []string {
	return e.queue.DropTrial(p.spec.TrialID)
}

// Interrupt sends SIGTERM to the process group of every running trial
// at once, and SIGKILL to those still running Options.StopGrace later.
// Nothing else changes: the trials may still report, and save and stop
// when directed (hone's trial libraries save if they can and exit on
// SIGTERM), and each start still ends with one EventExited, whose Err is
// nil as for any end after hone signalled the process group. The runner
// calls it when the experiment is interrupted (Ctrl-C): the trials are in
// process groups of their own, so the terminal's signal does not reach
// them. Calling it again signals only trials started since.
func (e *Executor) Interrupt() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range e.trials {
		p.interruptLocked()
	}
}

// Close kills the process group of every running trial with SIGKILL and
// waits until their processes have ended and their goroutines returned;
// then it stops the wire server and removes the directory of the trials'
// socket and, after Prepare, the executor's files in the experiment
// directory.
// Close may be called more than once; Next must not be called after it.
func (e *Executor) Close() error {
	e.mu.Lock()
	e.closed = true
	var dropped []string
	for _, p := range e.trials {
		dropped = append(dropped, p.stopLocked()...)
		p.killLocked()
	}
	e.mu.Unlock()
	discard(dropped)
	e.wg.Wait()
	e.forker.close()
	e.sockMu.Lock()
	defer e.sockMu.Unlock()
	var srvErr error
	if e.srv != nil {
		srvErr = e.srv.close()
		e.srv = nil
	}
	err := errors.Join(removeState(e.stateDir, e.sockDir), srvErr)
	e.sockDir = ""
	if err != nil {
		return fmt.Errorf("process executor: %w", err)
	}
	return nil
}

// discard removes staged checkpoint directories that will never be
// committed. Failures are ignored: the store cleans up staging leftovers.
func discard(dirs []string) {
	for _, d := range dirs {
		if d != "" {
			_ = os.RemoveAll(d)
		}
	}
}

// plural returns "1 GPU", "2 GPUs".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// CommitsRemotely reports whether the executor's trials commit their
// checkpoints to the store themselves (Options.Store with Launch; see
// hone.RemoteCommitter).
func (e *Executor) CommitsRemotely() bool { return e.opts.Launch != nil && e.opts.Store != "" }

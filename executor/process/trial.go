package process

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/trial"
	"github.com/hone-tune/hone/wire"
)

// maxSocketPath keeps socket paths well within the 108 bytes that Linux
// allows (104 on some systems).
const maxSocketPath = 100

// violationGrace is how long a trial that broke the protocol has, after
// hone told it so, to exit by itself before it is killed.
const violationGrace = 500 * time.Millisecond

// writeTimeout bounds a write to a trial's socket, so a trial that stops
// reading cannot block the executor.
const writeTimeout = 5 * time.Second

// source says where a trial's message came from, and so where the
// runner's answer goes.
type source int

const (
	fromSocket source = iota
	fromStdout
)

// pending is an event that waits to be emitted: a trial emits its next
// event only after the runner answered the previous one.
type pending struct {
	ev  hone.Event
	src source
}

// escalation asks the supervisor to send sig to the process group after
// a delay (SIGKILL follows SIGTERM after StopGrace).
type escalation struct {
	after time.Duration
	sig   syscall.Signal
}

// proc is one start of one trial: its process and the goroutines around
// it. The fields set by start are read-only afterwards.
type proc struct {
	e    *Executor
	spec hone.StartSpec
	gpus []int // indexes into e.gpuIDs (StartSpec.GPUs)

	token     string
	staging   string       // HONE_STAGING_DIR
	ln        net.Listener // the trial's Unix socket (Close removes it), or its share of the TCP server
	sock      string       // HONE_SOCKET
	cmd       *exec.Cmd
	pid       int
	launched  Launched // with Options.Launch, instead of cmd
	recorded  string   // the path of the process's record, or ""
	stdoutR   *os.File
	stderrR   *os.File
	stdoutLog *os.File
	stderrLog *os.File
	tail      tail  // stderr's last lines; owned by readStderr until stderrDone
	lobby     lobby // connections to the socket that have not said hello

	escalate   chan escalation // capacity 3: a stop, a violation and an interrupt at most
	reaped     chan struct{}   // closed once the process has been waited for
	waitErr    error           // cmd.Wait's result, set before reaped is closed
	stdoutDone chan struct{}
	stderrDone chan struct{}
	sockDone   chan struct{}

	// Guarded by sigMu, not e.mu: the supervisor signals without e.mu,
	// and waitEnd marks the process gone around its reaping, so these two
	// facts about the OS process stay apart from the lifecycles below.
	sigMu     sync.Mutex
	gone      bool // the process has been waited for: its pid may be reused
	signalled bool // hone sent SIGTERM or SIGKILL to the group (the exit is then no error)

	// Guarded by e.mu. The three lifecycles of the start (see life.go).
	turn  turn     // between the runner and the trial
	talk  sockTurn // on the trial's socket
	phase phase    // of the process and its output

	conn    net.Conn  // the accepted connection, nil before
	outbox  []pending // events waiting to be emitted, in order
	waitSrc source    // where the event the runner is to answer came from
	exitErr error     // how the process ended, once phaseFinished
	// Facts that are no lifecycle of their own:
	canSave bool   // the trial's hello says it saves on demand (a capability, fixed at hello)
	host    string // the machine the trial's hello names
	// interrupted: Interrupt signalled the process group, once. It is
	// orthogonal to the turn: an interrupted trial may still report, save
	// and stop when directed.
	interrupted bool
	violation   error // the first protocol violation; the trial is being killed
	// announced: a launched trial's EventStarted was queued, or is no
	// longer due. A latch, once per start, beside the turn: nothing
	// answers an EventStarted.
	announced bool
}

// start prepares the trial's files, socket and environment, and starts
// the process and its goroutines.
func (p *proc) start() (err error) {
	e, spec := p.e, p.spec
	var undo []func()
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
	}()
	p.staging = filepath.Join(spec.Dir, trial.StagingDirName)
	if err := os.MkdirAll(p.staging, 0o755); err != nil {
		return err
	}
	cfg := spec.Config
	if cfg == nil {
		cfg = hone.Config{}
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	var tok [16]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return fmt.Errorf("token: %w", err)
	}
	p.token = hex.EncodeToString(tok[:])

	if p.ln, p.sock, err = e.listen(spec.TrialID); err != nil {
		return err
	}
	undo = append(undo, func() { p.ln.Close() })
	if e.opts.Launch != nil {
		return p.launch(string(cfgJSON))
	}
	if p.stdoutLog, err = openLog(filepath.Join(spec.Dir, StdoutLog)); err != nil {
		return err
	}
	undo = append(undo, func() { p.stdoutLog.Close() })
	if p.stderrLog, err = openLog(filepath.Join(spec.Dir, StderrLog)); err != nil {
		return err
	}
	undo = append(undo, func() { p.stderrLog.Close() })
	var stdoutW, stderrW *os.File
	if p.stdoutR, stdoutW, err = os.Pipe(); err != nil {
		return err
	}
	undo = append(undo, func() { p.stdoutR.Close() })
	defer stdoutW.Close()
	if p.stderrR, stderrW, err = os.Pipe(); err != nil {
		return err
	}
	undo = append(undo, func() { p.stderrR.Close() })
	defer stderrW.Close()

	cmd := exec.Command(e.opts.Command[0], e.opts.Command[1:]...)
	cmd.Dir = e.workDir
	cmd.Env = p.environ(string(cfgJSON))
	cmd.Stdout = stdoutW
	cmd.Stderr = stderrW
	cmd.SysProcAttr = sysProcAttr()
	var startErr error
	if err := e.forker.do(func() { startErr = cmd.Start() }); err != nil {
		return err
	}
	if startErr != nil {
		return startErr
	}
	p.cmd = cmd
	p.pid = cmd.Process.Pid
	// Without its record (a full disk), the process still dies with
	// hone; only children it starts could outlive a kill of hone.
	p.record()
	e.wg.Add(5)
	go p.wait()
	go p.supervise()
	go p.readStdout()
	go p.readStderr()
	go p.serve()
	return nil
}

// whereLocked says where a launched trial runs: its node (as its hello
// names it, else as the launcher knows it) and the launcher's id of the
// run, "n7 (slurm job 12)".
func (p *proc) whereLocked() string {
	node, id := p.launched.Where()
	if p.host != "" {
		node = p.host
	}
	switch {
	case id == "":
		return node
	case node == "":
		return id
	}
	return node + " (" + id + ")"
}

// launch starts the trial through Options.Launch: the trial writes its
// own logs, so there is no output to read.
func (p *proc) launch(cfgJSON string) error {
	e, spec := p.e, p.spec
	l, err := e.opts.Launch.Launch(LaunchSpec{
		TrialID:   spec.TrialID,
		Argv:      e.opts.Command,
		Env:       p.environ(cfgJSON),
		Dir:       e.workDir,
		TrialDir:  spec.Dir,
		Stdout:    filepath.Join(spec.Dir, StdoutLog),
		Stderr:    filepath.Join(spec.Dir, StderrLog),
		Resources: spec.Resources,
	})
	if err != nil {
		return err
	}
	p.launched = l
	close(p.stdoutDone)
	close(p.stderrDone)
	e.wg.Add(3)
	go p.wait()
	go p.supervise()
	go p.serve()
	if q, ok := l.(Queued); ok {
		if running := q.Running(); running != nil {
			e.wg.Add(1)
			go p.awaitRunning(running)
		}
	}
	return nil
}

// awaitRunning announces the trial started once the launcher says it
// runs, unless it ends first.
func (p *proc) awaitRunning(running <-chan struct{}) {
	defer p.e.wg.Done()
	select {
	case <-running:
		p.e.mu.Lock()
		p.announceLocked()
		p.e.mu.Unlock()
	case <-p.reaped:
	}
}

// announceLocked queues a launched trial's EventStarted, once per start:
// when the launcher says it runs or its hello arrives, whichever comes
// first. A trial told to stop, or that has ended, is not announced.
func (p *proc) announceLocked() {
	if p.launched == nil || p.announced {
		return
	}
	p.announced = true
	if p.stopped() || p.finished() {
		return
	}
	p.e.pushLocked(p, hone.Event{Kind: hone.EventStarted})
}

// environ returns the process's environment.
func (p *proc) environ(cfgJSON string) []string {
	e, spec := p.e, p.spec
	env := append(os.Environ(), e.opts.Env...)
	_, ompSet := lookupEnv(env, "OMP_NUM_THREADS")
	gpus := make([]string, len(p.gpus))
	for i, g := range p.gpus {
		gpus[i] = e.gpuIDs[g]
	}
	env = append(env,
		wire.EnvProtocol+"="+strconv.Itoa(wire.Version),
		wire.EnvSocket+"="+p.sock,
		wire.EnvToken+"="+p.token,
		wire.EnvTrialID+"="+spec.TrialID,
		wire.EnvTrialDir+"="+spec.Dir,
		wire.EnvStagingDir+"="+p.staging,
		wire.EnvRestoreDir+"="+spec.RestoreDir,
		wire.EnvIteration+"="+strconv.Itoa(spec.Iteration),
		wire.EnvConfig+"="+cfgJSON,
	)
	if e.CommitsRemotely() {
		env = append(env,
			wire.EnvStorage+"="+e.opts.Store,
			wire.EnvStoreTrialDir+"="+p.storeDir(),
			wire.EnvRestoreCheckpoint+"="+spec.Restore,
		)
	}
	if e.opts.Launch == nil { // elsewhere, the GPUs are the launcher's to set
		env = append(env, "CUDA_VISIBLE_DEVICES="+strings.Join(gpus, ","))
	}
	if spec.Resources.CPU > 0 && !ompSet {
		env = append(env, "OMP_NUM_THREADS="+strconv.Itoa(int(math.Ceil(spec.Resources.CPU))))
	}
	return env
}

// listen returns the listener of the trial's connection, its share of
// the executor's wire server, and the HONE_SOCKET value that reaches it.
func (e *Executor) listen(trialID string) (net.Listener, string, error) {
	srv, err := e.server()
	if err != nil {
		return nil, "", err
	}
	ln, err := srv.listen(trialID)
	return ln, srv.advertise, err
}

// sockName is the name of the wire server's socket in the socket
// directory.
const sockName = "hone.sock"

// server returns the wire server. Without Options.Listen it is a Unix
// socket in the executor's private socket directory, made at the first
// start, and made again, in a new directory, when the socket is gone (a
// cleaner of the temporary directory removed it): the trials that
// connected keep their connections.
func (e *Executor) server() (*server, error) {
	e.sockMu.Lock()
	defer e.sockMu.Unlock()
	if e.opts.Listen != "" {
		return e.srv, nil
	}
	if e.srv != nil {
		if _, err := os.Lstat(e.srv.advertise); err == nil {
			return e.srv, nil
		}
		_ = e.srv.close()
		e.srv, e.sockDir = nil, ""
	}
	var firstErr error
	for attempt := 0; attempt < 2; attempt++ {
		if e.sockDir == "" {
			dir, err := makeSockDir(e.stateDir)
			if err != nil {
				return nil, fmt.Errorf("trial socket: %w", err)
			}
			e.sockDir = dir
		}
		srv, err := listenUnix(filepath.Join(e.sockDir, sockName))
		if err == nil {
			e.srv = srv
			return srv, nil
		}
		firstErr = cmp(firstErr, err)
		if !errors.Is(err, fs.ErrNotExist) {
			break
		}
		// The directory went meanwhile: make a new one, once.
		e.sockDir = ""
	}
	return nil, firstErr
}

// cmp returns the first non-nil error.
func cmp(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func openLog(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
}

// signal sends sig to the process group unless the process has been
// waited for (its id may then belong to another process).
func (p *proc) signal(sig syscall.Signal) {
	p.sigMu.Lock()
	defer p.sigMu.Unlock()
	if p.launched != nil {
		// A launcher's signal may be a command (scancel) that takes a
		// while: it runs apart, so that no lock of the executor waits on
		// it. The trial counts as signalled by hone from now on.
		p.signalled = true
		p.e.wg.Add(1)
		go func() {
			defer p.e.wg.Done()
			_ = p.launched.Signal(sig)
		}()
		return
	}
	if p.gone || p.pid <= 0 {
		return // never kill(0) or kill(-1): that would signal hone
	}
	if err := syscall.Kill(-p.pid, sig); err == nil {
		p.signalled = true
	}
}

// wait waits for the process to end and reaps it (waitEnd, which kills
// what is left of its process group), then removes its record.
func (p *proc) wait() {
	defer p.e.wg.Done()
	if p.launched != nil {
		p.waitErr = p.launched.Wait()
		close(p.reaped)
		return
	}
	p.waitErr = p.waitEnd()
	if p.recorded != "" {
		// Failures are harmless: a later run finds the process gone.
		_ = os.Remove(p.recorded)
	}
	close(p.reaped)
}

// record writes the process's record in the executor's state directory,
// if it has one and the system tells start times. A record that cannot be
// written (a full disk) is left out, and a partial one removed.
func (p *proc) record() {
	state := p.e.state()
	if state == "" {
		return
	}
	start, err := startTime(p.pid)
	if err != nil {
		return
	}
	self := os.Getpid()
	selfStart, err := startTime(self)
	if err != nil {
		return
	}
	rec := procRecord{PID: p.pid, Start: start, Token: p.token, Owner: self, OwnerStart: selfStart,
		Host: p.e.hostname, Boot: bootID()}
	path := procRecordPath(state, p.pid)
	if err := recordProc(state, rec); err != nil {
		_ = os.Remove(path)
		return
	}
	p.recorded = path
}

// supervise carries out the delayed signals of a stop, and after the
// process has ended waits for its output and socket to be drained and
// emits its end.
func (p *proc) supervise() {
	e := p.e
	defer e.wg.Done()
	// The earliest signal of each kind wins, and a SIGKILL follows every
	// SIGTERM within StopGrace: a later request never postpones a kill.
	var termAt, killAt time.Time // zero: none due
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	earlier := func(t *time.Time, at time.Time) {
		if t.IsZero() || at.Before(*t) {
			*t = at
		}
	}
	rearm := func() {
		next := termAt
		if next.IsZero() || (!killAt.IsZero() && killAt.Before(next)) {
			next = killAt
		}
		if next.IsZero() {
			timer.Stop()
			return
		}
		timer.Reset(time.Until(next))
	}
loop:
	for {
		select {
		case <-p.reaped:
			break loop
		case esc := <-p.escalate:
			at := time.Now().Add(esc.after)
			if esc.sig == syscall.SIGKILL {
				earlier(&killAt, at)
			} else {
				earlier(&termAt, at)
			}
			rearm()
		case <-timer.C:
			now := time.Now()
			switch {
			case !killAt.IsZero() && !now.Before(killAt):
				p.signal(syscall.SIGKILL)
				termAt, killAt = time.Time{}, time.Time{}
			case !termAt.IsZero() && !now.Before(termAt):
				p.signal(syscall.SIGTERM)
				termAt = time.Time{}
				earlier(&killAt, now.Add(e.opts.StopGrace))
			}
			rearm()
		}
	}
	timer.Stop()

	// Read what the process wrote to the end; give up on output that
	// a process outside the group keeps open.
	p.ln.Close()
	drain := time.NewTimer(drainTimeout)
	for _, done := range []chan struct{}{p.stdoutDone, p.stderrDone, p.sockDone} {
		select {
		case <-done:
			continue
		case <-drain.C:
		}
		if p.launched == nil {
			p.stdoutR.Close()
			p.stderrR.Close()
		}
		p.lobby.close()
		e.mu.Lock()
		if p.phase == phaseLive {
			p.toPhase(pDrain)
		}
		if p.conn != nil {
			p.conn.Close()
		}
		e.mu.Unlock()
		<-done
	}
	drain.Stop()
	if p.launched == nil {
		p.stdoutR.Close()
		p.stderrR.Close()
		p.stdoutLog.Close()
		p.stderrLog.Close()
	}

	p.sigMu.Lock()
	signalled := p.signalled
	p.sigMu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	p.toPhase(pFinish)
	if p.turn == turnSaving {
		p.toTurn(tLost) // the runner gets the exit instead of the save
	}
	var xe *exec.ExitError
	switch {
	case p.violation != nil:
		p.exitErr = &ProtocolError{Err: p.violation}
	case p.waitErr == nil, signalled:
		p.exitErr = nil
	case p.launched != nil:
		p.exitErr = p.waitErr
	case errors.As(p.waitErr, &xe):
		p.exitErr = &ExitError{Status: xe.ProcessState.String(), ExitCode: xe.ExitCode(), Stderr: p.tail.String()}
	default:
		p.exitErr = fmt.Errorf("wait for trial process: %w", p.waitErr)
	}
	p.pumpLocked()
}

// serve accepts the trial's connection and handles its messages.
func (p *proc) serve() {
	e := p.e
	defer e.wg.Done()
	defer close(p.sockDone)
	a, ok := p.admit()
	if !ok {
		return // closed: the process ended without connecting
	}
	conn, r := a.conn, a.r
	defer conn.Close()
	e.mu.Lock()
	if p.drained() {
		e.mu.Unlock()
		return
	}
	p.conn = conn
	e.mu.Unlock()
	if !p.handle(a.hello) {
		return
	}
	for {
		line, err := r.ReadLine()
		if errors.Is(err, wire.ErrTooLong) {
			e.mu.Lock()
			p.violateLocked(err)
			e.mu.Unlock()
			return
		}
		if err != nil {
			return // the end of the connection; the process's end says why
		}
		if !p.handle(line) {
			return
		}
	}
}

// handle acts on one message from the trial's socket. It returns false
// when the connection is done with.
func (p *proc) handle(line []byte) bool {
	e := p.e
	var dropped []string
	defer func() { discard(dropped) }()
	e.mu.Lock()
	defer e.mu.Unlock()
	if p.violation != nil {
		return false
	}
	m, err := wire.Decode(line)
	if err != nil {
		p.violateLocked(err)
		return false
	}
	if p.talk == sockHello {
		if err := p.checkHello(m); err != nil {
			p.violateLocked(err)
			return false
		}
		p.toSock(sHello)
		p.canSave = m.CanSave
		p.host = m.Host
		p.writeLocked(wire.Message{Type: wire.TypeWelcome, V: wire.Version})
		p.announceLocked() // it runs, if the launcher has not said so yet
		return true
	}
	switch m.Type {
	case wire.TypeReport, wire.TypeSaved:
		if p.stopped() {
			// Told to stop (or being terminated) meanwhile: the message
			// is dropped and the trial told to stop, once.
			if m.Checkpoint != "" {
				if dir, _, err := p.checkpointRef(m.Checkpoint); err == nil && dir != "" {
					dropped = append(dropped, dir)
				}
			}
			if p.talk.can(sStop) {
				p.toSock(sStop)
				p.writeLocked(stopDirective)
			}
			return true
		}
		if m.Type == wire.TypeReport {
			return p.reportLocked(m)
		}
		return p.savedLocked(m)
	case wire.TypeHello:
		p.violateLocked(errors.New("hello out of turn: the trial already said hello"))
	default:
		p.violateLocked(fmt.Errorf("%s out of turn: hone sends %s messages, trials do not", m.Type, m.Type))
	}
	return false
}

var stopDirective = wire.Message{Type: wire.TypeDirective, Action: wire.ActionStop, Reason: "stop"}

// checkHello checks the first message of a connection.
func (p *proc) checkHello(m wire.Message) error {
	if m.Type != wire.TypeHello {
		return fmt.Errorf("%s out of turn: the first message must be hello", m.Type)
	}
	if m.V != wire.Version {
		return fmt.Errorf("hello: protocol version %d is not supported (hone speaks %d)", m.V, wire.Version)
	}
	if subtle.ConstantTimeCompare([]byte(m.Token), []byte(p.token)) != 1 {
		return fmt.Errorf("hello: wrong token (use %s as it is)", wire.EnvToken)
	}
	if m.TrialID != p.spec.TrialID {
		return fmt.Errorf("hello: trial id %q, but this is trial %q", m.TrialID, p.spec.TrialID)
	}
	return nil
}

func (p *proc) reportLocked(m wire.Message) bool {
	if !p.talk.can(sReport) {
		what := "the previous report"
		if p.talk == sockSaving {
			what = "the checkpoint directive"
		}
		p.violateLocked(fmt.Errorf("report out of turn: %s has not been answered", what))
		return false
	}
	ev, err := p.resultEvent(m)
	if err != nil {
		p.violateLocked(err)
		return false
	}
	p.toSock(sReport)
	p.outbox = append(p.outbox, pending{ev, fromSocket})
	p.pumpLocked()
	return true
}

func (p *proc) savedLocked(m wire.Message) bool {
	if !p.talk.can(sSaved) {
		p.violateLocked(errors.New("saved out of turn: hone did not ask for a checkpoint"))
		return false
	}
	ev := hone.Event{Kind: hone.EventSaved}
	switch {
	case m.Error != "":
		ev.Cause = errors.New(m.Error)
	case m.Checkpoint != "":
		dir, stored, err := p.checkpointRef(m.Checkpoint)
		if err != nil {
			p.violateLocked(err)
			return false
		}
		ev.CheckpointDir, ev.CheckpointStored = dir, stored
	}
	p.toSock(sSaved)
	p.toTurn(tSaved)
	p.pushEventLocked(ev, fromSocket)
	return true
}

// resultEvent turns a report into an EventResult.
func (p *proc) resultEvent(m wire.Message) (hone.Event, error) {
	ev := hone.Event{Kind: hone.EventResult, Metrics: m.Metrics, Done: m.Done || trial.IsDone(m.Metrics)}
	if m.Checkpoint != "" {
		dir, stored, err := p.checkpointRef(m.Checkpoint)
		if err != nil {
			return hone.Event{}, err
		}
		ev.CheckpointDir, ev.CheckpointStored = dir, stored
	}
	return ev, nil
}

// storeDir is the trial's directory in the store: its directory's path
// relative to the experiment directory, slash-separated.
func (p *proc) storeDir() string {
	e := p.e
	if e.stateDir != "" {
		if rel, err := filepath.Rel(filepath.Dir(e.stateDir), p.spec.Dir); err == nil && filepath.IsLocal(rel) {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.Base(p.spec.Dir)
}

// checkpointRef checks a reported checkpoint: a staged directory (see
// checkpointDir), or, for a trial whose agent commits to the store
// (CommitsRemotely), the store path of a checkpoint under the trial's
// upload directory, given as wire.StoredPrefix + path.
func (p *proc) checkpointRef(ref string) (dir, stored string, err error) {
	rest, ok := strings.CutPrefix(ref, wire.StoredPrefix)
	if !ok {
		dir, err := p.checkpointDir(ref)
		return dir, "", err
	}
	if !p.e.CommitsRemotely() {
		return "", "", fmt.Errorf("checkpoint %q: this trial's checkpoints are staged directories, not store paths", ref)
	}
	uploads := path.Join(p.storeDir(), hone.UploadDirName)
	if path.Clean(rest) != rest || path.Dir(rest) != uploads {
		return "", "", fmt.Errorf("checkpoint %q is not a checkpoint of %s", ref, uploads)
	}
	return "", rest, nil
}

// checkpointDir checks that a reported checkpoint is a directory inside
// the staging directory and returns its clean absolute path. A relative
// path is taken from the trial's working directory.
func (p *proc) checkpointDir(path string) (string, error) {
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(p.e.workDir, abs)
	}
	abs = filepath.Clean(abs)
	if !inside(p.staging, abs) {
		return "", fmt.Errorf("checkpoint %s is not inside %s (%s)", abs, wire.EnvStagingDir, p.staging)
	}
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("checkpoint %s does not exist", abs)
	case err != nil:
		return "", fmt.Errorf("checkpoint: %w", err)
	case fi.Mode()&os.ModeSymlink != 0:
		return "", fmt.Errorf("checkpoint %s is a symbolic link, not a directory", abs)
	case !fi.IsDir():
		return "", fmt.Errorf("checkpoint %s is not a directory", abs)
	}
	// A symbolic link among its parents could lead out of the staging
	// directory.
	real, err1 := filepath.EvalSymlinks(abs)
	realStaging, err2 := filepath.EvalSymlinks(p.staging)
	if err1 != nil || err2 != nil || !inside(realStaging, real) {
		return "", fmt.Errorf("checkpoint %s leads outside %s (%s)", abs, wire.EnvStagingDir, p.staging)
	}
	return abs, nil
}

// inside reports whether path is strictly inside dir (both clean and
// absolute).
func inside(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// violateLocked fails the trial for breaking the protocol: it tells the
// trial why, closes the connection and kills the process group, after a
// moment in which the trial may report the error and exit by itself. The
// first violation counts.
func (p *proc) violateLocked(err error) {
	if p.violation != nil {
		return
	}
	p.violation = err
	if p.conn == nil {
		p.signal(syscall.SIGKILL)
		return
	}
	p.writeLocked(wire.Message{Type: wire.TypeError, Message: err.Error()})
	p.conn.Close()
	p.escalateLocked(escalation{after: min(violationGrace, p.e.opts.StopGrace), sig: syscall.SIGKILL})
}

// writeLocked sends m to the trial. Errors are ignored: a trial that
// cannot be written to is ending, and its end is reported.
func (p *proc) writeLocked(m wire.Message) {
	if p.conn == nil || (p.violation != nil && m.Type != wire.TypeError) {
		return
	}
	b, err := wire.Encode(m)
	if err != nil {
		return
	}
	_ = p.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, _ = p.conn.Write(b)
}

// connOK reports whether directives can still reach the trial.
func (p *proc) connOK() bool {
	return p.conn != nil && p.violation == nil && !p.finished()
}

// pushEventLocked queues ev, which the runner is to answer, for the
// runner; the caller has moved the turn to turnWaiting.
func (p *proc) pushEventLocked(ev hone.Event, src source) {
	p.e.pushLocked(p, ev)
	p.waitSrc = src
}

// pumpLocked emits the next pending event when the runner has answered
// the previous one, and the exit once everything before it is answered.
func (p *proc) pumpLocked() {
	if p.turn == turnRunning && len(p.outbox) > 0 {
		next := p.outbox[0]
		p.outbox[0] = pending{}
		p.outbox = p.outbox[1:]
		p.toTurn(tEmit)
		p.pushEventLocked(next.ev, next.src)
	}
	if p.finished() && len(p.outbox) == 0 && p.turn.can(tExit) {
		p.toTurn(tExit)
		p.e.running--
		p.e.pushLocked(p, hone.Event{Kind: hone.EventExited, Cause: p.exitErr})
	}
}

// answerLocked carries out DirectContinue or DirectCheckpoint for the event the
// trial waits on.
func (p *proc) answerLocked(d hone.Directive) {
	fromSock := p.waitSrc == fromSocket
	switch {
	case d == hone.DirectContinue:
		p.toTurn(tContinue)
		if fromSock && p.connOK() && p.talk.can(sContinue) {
			p.writeLocked(wire.Message{Type: wire.TypeDirective, Action: wire.ActionContinue})
			p.toSock(sContinue)
		}
	case fromSock && p.canSave && p.connOK() && p.talk.can(sAskSave):
		p.writeLocked(wire.Message{Type: wire.TypeDirective, Action: wire.ActionCheckpoint})
		p.toSock(sAskSave)
		p.toTurn(tAskSave)
		return
	default:
		// The trial cannot save on demand (or its process is gone):
		// hone answers for it, and it waits for another directive.
		ev := hone.Event{Kind: hone.EventSaved}
		if fromSock && p.canSave {
			ev.Cause = errors.New("cannot save: the trial process has ended")
		}
		p.toTurn(tAnswerSave)
		p.pushEventLocked(ev, p.waitSrc)
		return
	}
	p.pumpLocked()
}

// stopLocked stops the trial: its pending and queued events are dropped
// (their staged directories are returned), and the process is told to stop
// or terminated.
func (p *proc) stopLocked() []string {
	if p.stopped() {
		return nil
	}
	p.toTurn(tStop)
	var dropped []string
	for _, pe := range p.outbox {
		if pe.ev.CheckpointDir != "" {
			dropped = append(dropped, pe.ev.CheckpointDir)
		}
	}
	p.outbox = nil
	dropped = append(dropped, p.e.dropQueuedLocked(p)...)
	grace := p.e.opts.StopGrace
	switch {
	case p.finished():
	case p.connOK() && p.talk == sockWaiting:
		p.toSock(sStop)
		p.writeLocked(stopDirective)
		p.escalateLocked(escalation{after: min(maxStopWait, grace), sig: syscall.SIGTERM})
	default:
		p.signal(syscall.SIGTERM)
		p.escalateLocked(escalation{after: grace, sig: syscall.SIGKILL})
	}
	p.pumpLocked()
	return dropped
}

// escalateLocked asks the supervisor for a delayed signal.
func (p *proc) escalateLocked(esc escalation) {
	select {
	case p.escalate <- esc:
	default: // cannot happen: at most one stop, one violation and one interrupt
	}
}

// interruptLocked sends SIGTERM to the process group at once and SIGKILL
// StopGrace later (Interrupt), once.
func (p *proc) interruptLocked() {
	if p.interrupted || p.finished() {
		return
	}
	p.interrupted = true
	p.signal(syscall.SIGTERM)
	p.escalateLocked(escalation{after: p.e.opts.StopGrace, sig: syscall.SIGKILL})
}

// killLocked kills the process group at once (Close).
func (p *proc) killLocked() {
	p.signal(syscall.SIGKILL)
}

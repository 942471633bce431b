// Package agent is the node side of a trial that runs on another machine
// than hone (a cluster executor's job or step) in an experiment whose
// storage is an object store: `hone agent -- COMMAND...` runs the trial's
// command and stands between it and hone.
//
// Before the command starts, the agent opens the experiment's store (its
// URL is in HONE_STORAGE; credentials come from the node's environment as
// for hone), downloads the checkpoint the trial restores from
// (HONE_RESTORE_CHECKPOINT) into the node's cache, and gives the trial
// local directories: HONE_TRIAL_DIR, HONE_STAGING_DIR and
// HONE_RESTORE_DIR on the node. The trial connects to the agent's own
// Unix socket (HONE_SOCKET); the agent relays each connection to hone
// (hone's HONE_SOCKET, over TCP), line for line, except that a report or
// saved message naming a staged checkpoint is held while the agent
// commits that checkpoint to the store, under the trial's upload
// directory (hone.UploadDirName), and then goes on naming the stored
// checkpoint (wire.StoredPrefix + its path). hone links it to its place
// with a copy inside the store: a checkpoint's bytes go from the node to
// the store once and never through hone's machine.
//
// The agent exits with the trial's status. It exits with ExitStorage when
// the node cannot reach the store, and with ExitCommit when a checkpoint
// cannot be committed (after the store's retries): the trial fails and
// hone retries it from its latest checkpoint.
package agent

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/store/blob"
	"github.com/hone-tune/hone/wire"
)

// Exit statuses of the agent itself (anything else is the trial's).
const (
	// ExitStorage: the node cannot reach the experiment's store.
	ExitStorage = 97
	// ExitCommit: a checkpoint could not be committed to the store, or
	// the restore point could not be downloaded.
	ExitCommit = 96
)

// EnvCacheDir names the node's cache directory: checkpoints downloaded
// or committed there, and the trials' local directories. Default:
// hone-node-<uid> in the system's temporary directory.
const EnvCacheDir = "HONE_NODE_CACHE_DIR"

// Options configure one run of the agent.
type Options struct {
	// Argv is the trial's command.
	Argv []string
	// Env is the agent's environment (the trial's, from hone).
	Env []string
	// Stdout and Stderr receive the trial's output (the agent's own
	// messages go to Stderr).
	Stdout, Stderr io.Writer
	// Logs, set when nothing carries the node's output back to hone's
	// machine (a batch job), appends the trial's output to the node's
	// copies of its stdout.log and stderr.log and uploads them to the
	// trial's directory in the store every LogEvery and at the end.
	Logs     bool
	LogEvery time.Duration
	// CacheDir is the node's cache directory (default: EnvCacheDir, else
	// hone-node-<uid> in the system's temporary directory).
	CacheDir string
}

// Run runs the trial and returns the agent's exit status.
func Run(ctx context.Context, o Options) int {
	a := &agent{o: o, env: envMap(o.Env)}
	code, err := a.run(ctx)
	if err != nil {
		a.say(err)
	}
	a.shipLogs(ctx)
	if a.store != nil {
		_ = a.store.Close()
	}
	return code
}

// say writes one of the agent's messages to the trial's stderr (and so,
// for a batch job, to its stderr.log in the store).
func (a *agent) say(err error) {
	var w io.Writer = a.o.Stderr
	if a.logs != nil {
		w = a.logs.stderr
	}
	fmt.Fprintf(w, "hone agent: %v\n", err)
}

type agent struct {
	o   Options
	env map[string]string

	store    *blob.Store
	storeDir string // the trial's directory in the store
	local    string // the trial's directory on this node
	logs     *logShipper

	failMu sync.Mutex
	failed error // a commit that failed: the trial is ended
	child  *exec.Cmd
}

func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// cacheDir is the node's cache directory.
func (a *agent) cacheDir() string {
	if a.o.CacheDir != "" {
		return a.o.CacheDir
	}
	if d := a.env[EnvCacheDir]; d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "hone-node-"+strconv.Itoa(os.Getuid()))
}

func (a *agent) run(ctx context.Context) (int, error) {
	if len(a.o.Argv) == 0 {
		return 2, errors.New("no command to run (hone agent -- COMMAND...)")
	}
	url, driver := a.env[wire.EnvStorage], a.env[wire.EnvSocket]
	a.storeDir = a.env[wire.EnvStoreTrialDir]
	switch {
	case url == "":
		return 2, fmt.Errorf("%s is not set: the agent runs trials that hone starts", wire.EnvStorage)
	case driver == "":
		return 2, fmt.Errorf("%s is not set: the agent runs trials that hone starts", wire.EnvSocket)
	case a.storeDir == "" || path.Clean(a.storeDir) != a.storeDir || !filepath.IsLocal(a.storeDir):
		return 2, fmt.Errorf("%s=%q: want the trial's directory in the store", wire.EnvStoreTrialDir, a.storeDir)
	}
	sum := sha256.Sum256([]byte(blob.Redact(url)))
	id := hex.EncodeToString(sum[:6])
	cache := a.cacheDir()
	host := a.host()
	st, err := blob.Open(ctx, url, filepath.Join(cache, "checkpoints", id))
	if err != nil {
		return ExitStorage, fmt.Errorf("node %s cannot reach the experiment's storage: %w", host, err)
	}
	a.store = st // closed by Run, after the last upload of the logs
	a.local = filepath.Join(cache, "trials", id, filepath.FromSlash(a.storeDir))
	staging := filepath.Join(a.local, hone.StagingDirName)
	// What an earlier run of the trial staged on this node was never
	// committed (or was, and then moved into the cache).
	if err := os.RemoveAll(staging); err != nil {
		return ExitCommit, fmt.Errorf("clear the staging directory: %w", err)
	}
	if err := os.MkdirAll(staging, 0o755); err != nil {
		return ExitCommit, fmt.Errorf("make the trial's directory on node %s: %w", host, err)
	}
	restoreDir := ""
	if cp := a.env[wire.EnvRestoreCheckpoint]; cp != "" {
		release, err := a.hold(filepath.Join(cache, "locks", id), cp)
		if err != nil {
			return ExitCommit, err
		}
		defer release()
		if restoreDir, err = st.LocalDir(ctx, cp); err != nil {
			return ExitCommit, fmt.Errorf("download the checkpoint %s to restore from: %w", cp, err)
		}
	}
	if a.o.Logs {
		if a.logs, err = a.startLogs(ctx); err != nil {
			return ExitStorage, err
		}
	}
	sockDir, err := os.MkdirTemp("", "hone-agent-")
	if err != nil {
		return ExitCommit, fmt.Errorf("socket directory: %w", err)
	}
	defer os.RemoveAll(sockDir)
	sock := filepath.Join(sockDir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return ExitCommit, fmt.Errorf("listen: %w", err)
	}
	defer ln.Close()

	env := a.childEnv(sock, staging, restoreDir, host)
	cmd := exec.Command(a.o.Argv[0], a.o.Argv[1:]...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = a.o.Stdout, a.o.Stderr
	if a.logs != nil {
		cmd.Stdout, cmd.Stderr = a.logs.stdout, a.logs.stderr
	}
	cmd.SysProcAttr = childAttr()
	// A stop reaches the agent (scancel signals the job's or step's
	// processes): it goes on to the trial, which decides how to end.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 127, fmt.Errorf("start %s: %w", a.o.Argv[0], err)
	}
	a.failMu.Lock()
	a.child = cmd
	a.failMu.Unlock()
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	var conns sync.WaitGroup
	go a.accept(ctx, ln, driver, &conns)
	werr := cmd.Wait()
	close(done)
	_ = ln.Close()
	a.failMu.Lock()
	failed := a.failed
	a.failMu.Unlock()
	if failed != nil {
		return ExitCommit, failed
	}
	return status(werr), nil
}

// host is the node's name: Slurm's name for it, else the host name.
func (a *agent) host() string {
	if h := a.env[wire.EnvHost]; h != "" {
		return h
	}
	if h := a.env[wire.EnvSlurmNode]; h != "" {
		return h
	}
	h, _ := os.Hostname()
	return h
}

// childEnv is the trial's environment: the agent's, with its socket and
// the trial's local directories.
func (a *agent) childEnv(sock, staging, restoreDir, host string) []string {
	set := map[string]string{
		wire.EnvSocket:     sock,
		wire.EnvTrialDir:   a.local,
		wire.EnvStagingDir: staging,
		wire.EnvRestoreDir: restoreDir,
		wire.EnvHost:       host,
	}
	env := make([]string, 0, len(a.o.Env)+len(set))
	for _, kv := range a.o.Env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			env = append(env, kv)
		}
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	return env
}

// status is the exit status for the trial's end: its exit code, or
// 128+signal when a signal ended it.
func status(err error) int {
	if err == nil {
		return 0
	}
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		if ws, ok := xe.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return xe.ExitCode()
	}
	return 1
}

// accept relays every connection of the trial to hone.
func (a *agent) accept(ctx context.Context, ln net.Listener, driver string, conns *sync.WaitGroup) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			a.relay(ctx, c, driver)
		}()
	}
}

// relay carries one connection of the trial to hone and back.
func (a *agent) relay(ctx context.Context, trial net.Conn, driver string) {
	defer trial.Close()
	up, err := wire.Dial(driver)
	if err != nil {
		a.say(fmt.Errorf("connect to hone at %s: %w", driver, err))
		return
	}
	defer up.Close()
	go func() {
		_, _ = io.Copy(trial, up)
		_ = trial.Close()
	}()
	r := bufio.NewReaderSize(trial, 64<<10)
	for {
		line, err := readLine(r)
		if len(line) > 0 {
			out, cerr := a.forward(ctx, line)
			if cerr != nil {
				a.fail(cerr)
				return
			}
			if _, err := up.Write(out); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// readLine reads one line, its newline included, of at most
// wire.MaxMessageSize bytes (a longer one is passed on in pieces, and
// hone refuses it).
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if err != bufio.ErrBufferFull || len(buf) >= wire.MaxMessageSize {
			return buf, err
		}
	}
}

// forward returns the line to send to hone for a line from the trial: the
// line itself, or, for a report or saved message naming a staged
// checkpoint, the same message naming the checkpoint once committed.
func (a *agent) forward(ctx context.Context, line []byte) ([]byte, error) {
	if !bytes.Contains(line, []byte(`"checkpoint"`)) {
		return line, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return line, nil // hone says what is wrong with it
	}
	var typ, ref string
	if json.Unmarshal(m["type"], &typ) != nil || (typ != wire.TypeReport && typ != wire.TypeSaved) ||
		json.Unmarshal(m["checkpoint"], &ref) != nil || ref == "" || strings.HasPrefix(ref, wire.StoredPrefix) {
		return line, nil
	}
	dir := ref
	if !filepath.IsAbs(dir) {
		wd, _ := os.Getwd()
		dir = filepath.Join(wd, dir)
	}
	dir = filepath.Clean(dir)
	staging := filepath.Join(a.local, hone.StagingDirName)
	if rel, err := filepath.Rel(staging, dir); err != nil || !filepath.IsLocal(rel) {
		// Not a staged checkpoint: hone refuses it, saying why.
		return line, nil
	}
	dest := path.Join(a.storeDir, hone.UploadDirName, newID())
	if err := a.store.Commit(ctx, dir, dest); err != nil {
		return nil, fmt.Errorf("commit the checkpoint %s to the experiment's storage: %w", ref, err)
	}
	// hone copies the upload to its place and deletes it: the node's
	// copy would never be read.
	if err := a.store.Forget(dest); err != nil {
		a.say(err)
	}
	b, _ := json.Marshal(wire.StoredPrefix + dest)
	m["checkpoint"] = b
	out, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// fail ends the trial after a commit failed: it cannot go on without its
// checkpoint, and the agent's exit tells hone why.
func (a *agent) fail(err error) {
	a.failMu.Lock()
	defer a.failMu.Unlock()
	if a.failed == nil {
		a.failed = err
		if a.child != nil && a.child.Process != nil {
			_ = a.child.Process.Kill()
		}
	}
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

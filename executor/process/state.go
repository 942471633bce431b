package process

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// StateDirName is the directory of an experiment directory where an
// executor that was given it (Prepare) keeps its own files: a record of
// every trial process it runs, and the trials' sockets. Nothing there
// outlives a run that ends normally.
const StateDirName = ".hone"

// Names inside the state directory.
const (
	procsDirName   = "procs"   // one record per trial process, named by its pid
	tmpDirName     = "tmp"     // the trials' sockets
	sockRecordName = "sockdir" // the path of a socket directory elsewhere
)

// sockPrefix starts the names of socket directories outside the
// experiment directory.
const sockPrefix = "hone-"

// procRecord identifies a trial process and the process that runs it,
// so that a later run can end a trial that outlived a crash without
// signalling a process that merely reuses its id.
type procRecord struct {
	PID        int    `json:"pid"`
	Start      uint64 `json:"start"` // start time, in clock ticks after boot
	Token      string `json:"token"` // HONE_TOKEN of the trial and its children
	Owner      int    `json:"owner"` // the pid of hone
	OwnerStart uint64 `json:"owner_start"`
	// Host and Boot say where the ids mean something: on another machine
	// (a shared file system), or after a reboot, the process is not
	// here to be ended.
	Host string `json:"host"`
	Boot string `json:"boot"`
}

// Prepare makes dir, the experiment directory, the home of the
// executor's own files (under dir/.hone, see StateDirName): each trial
// process is recorded there while it runs, and the trials' sockets live
// there, or, when dir's path is too long for a socket, in a private
// directory of the system's temporary directory whose path is recorded
// there. Close removes them.
//
// Before that, Prepare ends what a run of hone that was killed left
// there: every recorded trial process that is still running (the same
// process: its start time matches), with its process group and every
// process that carries its token, is killed with SIGKILL, and Prepare
// waits until they are gone; the records, the sockets and their
// directories are removed. It fails when a recorded trial belongs to
// another hone process that is still running, or a leftover process does
// not die, or when the Launcher is a Preparer whose Prepare fails. Call
// it before the first Start (the runner does, in Run and Resume);
// without it, sockets go to the system's temporary directory and nothing
// is recorded.
func (e *Executor) Prepare(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("process executor: %w", err)
	}
	state := filepath.Join(abs, StateDirName)
	e.mu.Lock()
	started := len(e.trials) > 0 || e.running > 0
	e.mu.Unlock()
	e.sockMu.Lock()
	defer e.sockMu.Unlock()
	if started || e.sockDir != "" {
		return errors.New("process executor: Prepare after a trial was started")
	}
	if err := reapLeftovers(filepath.Join(state, procsDirName)); err != nil {
		return fmt.Errorf("process executor: end the trials of an earlier run: %w", err)
	}
	if err := removeSockDirs(state); err != nil {
		return fmt.Errorf("process executor: %w", err)
	}
	if pr, ok := e.opts.Launch.(Preparer); ok {
		if err := pr.Prepare(state); err != nil {
			return fmt.Errorf("process executor: %w", err)
		}
	}
	// The directories are made when there is something to put there.
	e.stateDir = state
	return nil
}

// removeSockDirs removes the socket directory of an earlier run: the one
// in the state directory, and the one elsewhere whose path is recorded.
func removeSockDirs(state string) error {
	if err := os.RemoveAll(filepath.Join(state, tmpDirName)); err != nil {
		return fmt.Errorf("remove the socket directory: %w", err)
	}
	rec := filepath.Join(state, sockRecordName)
	b, err := os.ReadFile(rec)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the socket directory's record: %w", err)
	}
	// Only a directory of the kind sockDir makes, never what a damaged
	// record may name.
	if p := strings.TrimSpace(string(b)); filepath.IsAbs(p) && strings.HasPrefix(filepath.Base(p), sockPrefix) {
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			if err := os.RemoveAll(p); err != nil {
				return fmt.Errorf("remove the socket directory of an earlier run: %w", err)
			}
		}
	}
	if err := os.Remove(rec); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the socket directory's record: %w", err)
	}
	return nil
}

// makeSockDir makes the private directory of the trials' sockets: in the
// state directory when there is one and its path is short enough, else
// (or when it cannot be made there: a full disk) in the system's
// temporary directory (or /tmp), recording its path in the state
// directory so that a later run removes it if this one is killed.
func makeSockDir(state string) (string, error) {
	if state != "" {
		if dir := filepath.Join(state, tmpDirName); sockPathFits(dir) {
			if err := makePrivateDir(state, dir); err == nil {
				return dir, nil
			}
		}
	}
	var firstErr error
	for _, base := range []string{os.TempDir(), "/tmp"} {
		dir, err := os.MkdirTemp(base, sockPrefix)
		if err != nil {
			firstErr = cmp(firstErr, err)
			continue
		}
		if !sockPathFits(dir) {
			os.Remove(dir)
			firstErr = cmp(firstErr, fmt.Errorf("socket path %s is over %d bytes", longestSock(dir), maxSocketPath))
			continue
		}
		if state != "" {
			// Without the record (a full disk) only a kill of hone
			// would leave the directory behind.
			_ = writeSockRecord(state, dir)
		}
		return dir, nil
	}
	return "", firstErr
}

// makePrivateDir makes dir, mode 0700, in state, replacing a leftover
// (which holds nothing of a live trial).
func makePrivateDir(state, dir string) error {
	if err := os.MkdirAll(state, 0o755); err != nil {
		return err
	}
	err := os.Mkdir(dir, 0o700)
	if errors.Is(err, fs.ErrExist) {
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		err = os.Mkdir(dir, 0o700)
	}
	return err
}

func writeSockRecord(state, dir string) error {
	if err := os.MkdirAll(state, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(state, sockRecordName), []byte(dir+"\n"), 0o644)
}

// longestSock is the path of the wire server's socket in dir.
func longestSock(dir string) string {
	return filepath.Join(dir, sockName)
}

func sockPathFits(dir string) bool { return len(longestSock(dir)) <= maxSocketPath }

// removeState removes the socket directory and its record, the (empty)
// directory of process records and the state directory if it is empty
// then (Close).
func removeState(state, sockDir string) error {
	var errs []error
	if sockDir != "" {
		if err := os.RemoveAll(sockDir); err != nil {
			errs = append(errs, fmt.Errorf("remove the socket directory: %w", err))
		}
	}
	if state != "" {
		if err := os.Remove(filepath.Join(state, sockRecordName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		// Records of processes this executor could not reap stay, and
		// keep the directories.
		_ = os.Remove(filepath.Join(state, procsDirName))
		_ = os.Remove(state)
	}
	return errors.Join(errs...)
}

// recordProc records a started trial process in the state directory.
func recordProc(state string, rec procRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(state, procsDirName), 0o755); err != nil {
		return err
	}
	// Written aside and renamed into place: a hone killed while it writes
	// leaves either no record or a whole one, never a torn record that
	// the next run could not read (and so would not reap from).
	final := procRecordPath(state, rec.PID)
	tmp := filepath.Join(filepath.Dir(final), ".tmp-"+filepath.Base(final))
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

func procRecordPath(state string, pid int) string {
	return filepath.Join(state, procsDirName, strconv.Itoa(pid))
}

// readProcRecords reads the records in dir; a record that cannot be
// parsed (torn by a crash while it was written) is returned as nil with
// its file name.
func readProcRecords(dir string) (recs []*procRecord, files []string, err error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	for _, ent := range entries {
		p := filepath.Join(dir, ent.Name())
		files = append(files, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, nil, err
		}
		var rec procRecord
		if json.Unmarshal(b, &rec) != nil || rec.PID <= 1 {
			continue
		}
		recs = append(recs, &rec)
	}
	return recs, files, nil
}

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/hone-tune/hone/remote"
)

// lockFile is the file in an experiment directory that hone run and hone
// resume hold an exclusive lock on (flock) while the experiment runs, so
// that two hone processes never append to one journal. It holds the
// process id of the holder. The kernel releases the lock when the process
// ends, however it ends.
const lockFile = remote.LockFile

// lockExperiment locks the experiment directory dir, which must exist, and
// returns the function that unlocks it. If another process holds the lock,
// the error says which and carries the usage exit code.
func lockExperiment(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, withCode(exitFailed, fmt.Errorf("lock the experiment: %w", err))
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := readPID(f)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, withCode(exitUsage, fmt.Errorf("the experiment in %s is running in another hone process%s", dir, holder))
		}
		return nil, withCode(exitFailed, fmt.Errorf("lock the experiment: %w", err))
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0) // informational only
	}
	return func() { f.Close() }, nil
}

// runningIn reports whether a hone process holds the lock of the
// experiment in dir, and which (" (pid N)", or "").
func runningIn(dir string) (bool, string) {
	f, err := os.Open(filepath.Join(dir, lockFile))
	if err != nil {
		return false, ""
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK), readPID(f)
	}
	return false, ""
}

// readPID renders the process id written in a lock file as " (pid N)".
func readPID(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	if pid := strings.TrimSpace(string(b[:n])); pid != "" {
		if _, err := strconv.Atoi(pid); err == nil {
			return " (pid " + pid + ")"
		}
	}
	return ""
}

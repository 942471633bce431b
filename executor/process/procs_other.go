//go:build !linux

package process

import (
	"errors"
	"os"
	"syscall"
)

// sysProcAttr puts a trial process in a process group of its own. Only
// Linux has the parent-death signal.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// startTime is unknown without /proc: trial processes are not recorded.
func startTime(int) (uint64, error) { return 0, errors.ErrUnsupported }

// bootID is unknown without /proc.
func bootID() string { return "" }

// reapLeftovers removes the records in dir; without /proc they cannot be
// matched to processes safely.
func reapLeftovers(dir string) error {
	_, files, err := readProcRecords(dir)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

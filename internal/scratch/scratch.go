// Package scratch picks where property tests put the thousands of short
// experiment directories they create: a memory-backed file system when the
// machine has one (the directories and checkpoints are as real there, and
// the run is not bound by the disk's metadata latency), else the system's
// temporary directory.
package scratch

import (
	"os"
	"path/filepath"
)

// Dir returns the parent for os.MkdirTemp: /dev/shm when it is a writable
// directory, else "" (the default temporary directory).
func Dir() string {
	const shm = "/dev/shm"
	f, err := os.CreateTemp(shm, ".hone-probe-")
	if err != nil {
		return ""
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return filepath.Clean(shm)
}

//go:build linux && (amd64 || arm64)

package perf

import (
	"os"
	"syscall"
)

// fadvDontNeed is POSIX_FADV_DONTNEED.
const fadvDontNeed = 4

// evict drops the cached pages of the (fsynced, so clean) file at p, so
// that the next timed write does not pay to reclaim them: every timed
// write then starts from the same page-cache state. Errors are ignored:
// eviction is a courtesy to the measurement, not part of it.
func evict(p string) {
	f, err := os.Open(p)
	if err != nil {
		return
	}
	defer f.Close()
	_, _, _ = syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0)
}

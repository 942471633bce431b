//go:build unix

package callback

import (
	"syscall"
	"testing"
)

// TestDefaultMaxOpen: an eighth of the descriptor limit, within [256, 4096].
func TestDefaultMaxOpen(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("no descriptor limit to read: %v", err)
	}
	want := int(lim.Cur / 8)
	want = max(want, 256)
	want = min(want, 4096)
	if got := defaultMaxOpen(); got != want {
		t.Errorf("defaultMaxOpen() = %d with a limit of %d, want %d", got, lim.Cur, want)
	}
	if f := NewTrialFiles(t.TempDir()); f.maxOpen != want {
		t.Errorf("NewTrialFiles keeps %d trials' files open, want %d", f.maxOpen, want)
	}
}

package local

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/hone-tune/hone/store/storetest"
)

// TestCommitFromOtherFilesystem stages a checkpoint on /dev/shm (tmpfs) and
// commits it into an experiment on the test's temporary directory, when the
// two are different filesystems: the real EXDEV path.
func TestCommitFromOtherFilesystem(t *testing.T) {
	s := newStore(t)
	shm, err := os.MkdirTemp("/dev/shm", "hone-staging-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	defer os.RemoveAll(shm)
	if device(t, shm) == device(t, s.Root()) {
		t.Skip("/dev/shm and the temporary directory are one filesystem")
	}
	staged := filepath.Join(shm, "save")
	tree := storetest.Tree{"w": "weights", "sub/o": "optim"}
	write(t, staged, tree)
	if err := s.Commit(context.Background(), staged, "t/checkpoint_000000"); err != nil {
		t.Fatal(err)
	}
	if got := readTree(t, filepath.Join(s.Root(), "t/checkpoint_000000")); !got.Equal(tree) {
		t.Errorf("committed = %v", got)
	}
	if _, err := os.Stat(staged); !os.IsNotExist(err) {
		t.Errorf("staged directory survives the commit (err %v)", err)
	}
	committed, leftovers, err := s.List(context.Background(), "t")
	if err != nil || len(committed) != 1 || len(leftovers) != 0 {
		t.Errorf("List = %q, %q, %v", committed, leftovers, err)
	}
}

func device(t *testing.T, p string) uint64 {
	t.Helper()
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return uint64(info.Sys().(*syscall.Stat_t).Dev)
}

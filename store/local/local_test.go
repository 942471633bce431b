package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/fsutil"
	"github.com/hone-tune/hone/store/storetest"
)

func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"durable", nil},
		{"nosync", []Option{NoSync()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) (hone.Store, string) {
				s, err := New(filepath.Join(t.TempDir(), "exp"), tc.opts...)
				if err != nil {
					t.Fatal(err)
				}
				return s, s.Root()
			})
		})
	}
}

func newStore(t *testing.T, opts ...Option) *Store {
	t.Helper()
	s, err := New(t.TempDir(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func write(t *testing.T, dir string, tree storetest.Tree) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := tree.Write(dir); err != nil {
		t.Fatal(err)
	}
}

func readTree(t *testing.T, dir string) storetest.Tree {
	t.Helper()
	tr, err := storetest.ReadTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestCrashShapes builds by hand every state a crash can leave in a trial
// directory and checks that List tells committed from leftover, and that
// Delete cleans the leftovers.
func TestCrashShapes(t *testing.T) {
	s := newStore(t)
	trial := filepath.Join(s.Root(), "trial_x")
	full := storetest.Tree{"a": "aaaa", "sub/b": "bbbb"}
	partial := storetest.Tree{"a": "aa"}
	// Committed checkpoints.
	write(t, filepath.Join(trial, "checkpoint_000002"), full)
	write(t, filepath.Join(trial, "checkpoint_000010"), full)
	// A Link or cross-filesystem Commit that stopped before its rename.
	write(t, filepath.Join(trial, ".tmp-checkpoint_000003-0a1b2c3d"), partial)
	// A Delete that stopped after its rename, part way through RemoveAll.
	write(t, filepath.Join(trial, ".trash-checkpoint_000001-deadbeef"), partial)
	// A save staged by an executor and never committed.
	write(t, filepath.Join(trial, StagingDirName, "save-7"), partial)
	// Files and directories that are neither.
	write(t, trial, storetest.Tree{"params.json": "{}", "result.json": ""})
	write(t, filepath.Join(trial, "checkpoint_12"), full)      // too few digits
	write(t, filepath.Join(trial, "checkpoint_0000001"), full) // not CheckpointDirName(1)
	write(t, filepath.Join(trial, "checkpoint_latest"), full)
	if err := os.WriteFile(filepath.Join(trial, "checkpoint_000004"), nil, 0o644); err != nil {
		t.Fatal(err) // a file, not a directory
	}
	// Leftovers of a deleted trial directory, at the experiment level.
	write(t, filepath.Join(s.Root(), ".trash-trial_y-01234567"), partial)

	committed, leftovers, err := s.List(context.Background(), "trial_x")
	if err != nil {
		t.Fatal(err)
	}
	wantCommitted := []string{"trial_x/checkpoint_000002", "trial_x/checkpoint_000010"}
	wantLeftovers := []string{
		"trial_x/.staging/save-7",
		"trial_x/.tmp-checkpoint_000003-0a1b2c3d",
		"trial_x/.trash-checkpoint_000001-deadbeef",
	}
	slices.Sort(leftovers)
	if !slices.Equal(committed, wantCommitted) || !slices.Equal(leftovers, wantLeftovers) {
		t.Fatalf("List = %q, %q; want %q, %q", committed, leftovers, wantCommitted, wantLeftovers)
	}
	_, rootLeft, err := s.List(context.Background(), ".")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rootLeft, []string{".trash-trial_y-01234567"}) {
		t.Errorf("List(.) leftovers = %q", rootLeft)
	}

	// Recovery is what a resumed experiment does: a fresh store, List, and
	// Delete of every leftover.
	s2, err := New(s.Root())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range append(leftovers, rootLeft...) {
		if err := s2.Delete(context.Background(), l); err != nil {
			t.Fatalf("Delete(%s): %v", l, err)
		}
	}
	committed, leftovers, err = s2.List(context.Background(), "trial_x")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(committed, wantCommitted) || len(leftovers) != 0 {
		t.Fatalf("List after cleaning = %q, %q", committed, leftovers)
	}
	for _, c := range committed {
		if got := readTree(t, filepath.Join(s.Root(), c)); !got.Equal(full) {
			t.Errorf("%s = %v after cleaning", c, got)
		}
	}
	for _, gone := range []string{".tmp-checkpoint_000003-0a1b2c3d", ".trash-checkpoint_000001-deadbeef", ".staging/save-7", "../.trash-trial_y-01234567"} {
		if _, err := os.Stat(filepath.Join(trial, gone)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s survives cleaning (err %v)", gone, err)
		}
	}
	// Names that are neither committed nor leftovers are left alone.
	for _, kept := range []string{"params.json", "checkpoint_12", "checkpoint_latest", "checkpoint_000004"} {
		if _, err := os.Stat(filepath.Join(trial, kept)); err != nil {
			t.Errorf("%s: %v", kept, err)
		}
	}
}

// TestDeleteLeavesTrashOnCrash checks the shape a Delete leaves when it is
// cut short right after its rename: no committed name, one trash leftover.
func TestDeleteLeavesTrashOnCrash(t *testing.T) {
	s := newStore(t, NoSync())
	staged := filepath.Join(s.Root(), "t", StagingDirName, "s")
	write(t, staged, storetest.Tree{"f": "x"})
	if err := s.Commit(context.Background(), staged, "t/checkpoint_000000"); err != nil {
		t.Fatal(err)
	}
	s.rename = func(o, n string) error {
		if err := os.Rename(o, n); err != nil {
			return err
		}
		panic(crash{})
	}
	func() {
		defer func() {
			if _, ok := recover().(crash); !ok {
				t.Fatal("Delete did not reach its rename")
			}
		}()
		_ = s.Delete(context.Background(), "t/checkpoint_000000")
	}()
	committed, leftovers, err := s.List(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	if len(committed) != 0 || len(leftovers) != 1 || !strings.HasPrefix(leftovers[0], "t/.trash-checkpoint_000000-") {
		t.Fatalf("List = %q, %q; want only a trash leftover", committed, leftovers)
	}
}

type crash struct{}

func TestCommitAcrossFilesystems(t *testing.T) {
	s := newStore(t)
	var renames []string
	s.rename = func(o, n string) error {
		if strings.Contains(o, string(filepath.Separator)+StagingDirName+string(filepath.Separator)) {
			return &os.LinkError{Op: "rename", Old: o, New: n, Err: syscall.EXDEV}
		}
		renames = append(renames, filepath.Base(o))
		return os.Rename(o, n)
	}
	staged := filepath.Join(s.Root(), "t", StagingDirName, "s")
	tree := storetest.Tree{"a": "a", "d/b": strings.Repeat("b", 100000)}
	write(t, staged, tree)
	if err := s.Commit(context.Background(), staged, "t/checkpoint_000001"); err != nil {
		t.Fatal(err)
	}
	if len(renames) != 1 || !strings.HasPrefix(renames[0], ".tmp-checkpoint_000001-") {
		t.Errorf("renames = %q, want one from a temporary name", renames)
	}
	if got := readTree(t, filepath.Join(s.Root(), "t", "checkpoint_000001")); !got.Equal(tree) {
		t.Errorf("committed = %v", got)
	}
	committed, leftovers, err := s.List(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(committed, []string{"t/checkpoint_000001"}) || len(leftovers) != 0 {
		t.Errorf("List = %q, %q", committed, leftovers)
	}
}

func TestLinkUsesHardLinks(t *testing.T) {
	s := newStore(t)
	staged := filepath.Join(s.Root(), "a", StagingDirName, "s")
	write(t, staged, storetest.Tree{"w": "weights", "sub/o": "optim"})
	if err := os.Symlink("w", filepath.Join(staged, "latest")); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(context.Background(), staged, "a/checkpoint_000000"); err != nil {
		t.Fatal(err)
	}
	if err := s.Link(context.Background(), "a/checkpoint_000000", "b/checkpoint_000000"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"w", "sub/o"} {
		x, err := os.Stat(filepath.Join(s.Root(), "a/checkpoint_000000", f))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.Stat(filepath.Join(s.Root(), "b/checkpoint_000000", f))
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(x, y) {
			t.Errorf("%s was copied, not hard-linked", f)
		}
	}
	l, err := os.Readlink(filepath.Join(s.Root(), "b/checkpoint_000000/latest"))
	if err != nil || l != "w" {
		t.Errorf("symlink in clone = %q, %v", l, err)
	}
}

func TestLinkFallsBackToCopy(t *testing.T) {
	s := newStore(t)
	calls := 0
	s.link = func(o, n string) error {
		calls++
		return &os.LinkError{Op: "link", Old: o, New: n, Err: syscall.EPERM}
	}
	tree := storetest.Tree{"w": "weights", "sub/o": "optim", "sub/p": "p"}
	staged := filepath.Join(s.Root(), "a", StagingDirName, "s")
	write(t, staged, tree)
	if err := s.Commit(context.Background(), staged, "a/checkpoint_000000"); err != nil {
		t.Fatal(err)
	}
	if err := s.Link(context.Background(), "a/checkpoint_000000", "b/checkpoint_000003"); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("link tried %d times, want once before falling back to copies", calls)
	}
	if got := readTree(t, filepath.Join(s.Root(), "b/checkpoint_000003")); !got.Equal(tree) {
		t.Errorf("clone = %v", got)
	}
	x, _ := os.Stat(filepath.Join(s.Root(), "a/checkpoint_000000/w"))
	y, _ := os.Stat(filepath.Join(s.Root(), "b/checkpoint_000003/w"))
	if os.SameFile(x, y) {
		t.Error("clone shares a file although links fail")
	}
}

func TestErrorsNamePaths(t *testing.T) {
	s := newStore(t)
	staged := filepath.Join(s.Root(), "a", StagingDirName, "s")
	write(t, staged, storetest.Tree{"f": "1"})
	if err := s.Commit(context.Background(), staged, "a/checkpoint_000000"); err != nil {
		t.Fatal(err)
	}
	write(t, staged, storetest.Tree{"f": "2"})
	err := s.Commit(context.Background(), staged, "a/checkpoint_000000")
	if err == nil || !strings.HasPrefix(err.Error(), "commit checkpoint a/checkpoint_000000: ") {
		t.Errorf("err = %v", err)
	}
	if err := s.Delete(context.Background(), "../x"); !errors.Is(err, ErrBadPath) {
		t.Errorf("Delete(../x) = %v, want ErrBadPath", err)
	}
}

// BenchmarkLink clones a checkpoint of one small file and one of a 100 MB
// file; hard links make both cost the same. CopyBaseline is what a durable
// copy (copy + fsync) of the 100 MB checkpoint costs, for comparison.
func BenchmarkLink(b *testing.B) {
	for _, size := range []int{1 << 10, 100 << 20} {
		b.Run(fmt.Sprintf("size=%s", byteSize(size)), func(b *testing.B) {
			s, src := benchCheckpoint(b, size)
			b.ResetTimer()
			for i := range b.N {
				if err := s.Link(context.Background(), src, fmt.Sprintf("clone/checkpoint_%06d", i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("CopyBaseline/size=100MB", func(b *testing.B) {
		s, src := benchCheckpoint(b, 100<<20)
		from := filepath.Join(s.Root(), src)
		b.ResetTimer()
		for i := range b.N {
			to := filepath.Join(s.Root(), "copy", fmt.Sprint(i))
			if err := os.MkdirAll(to, 0o755); err != nil {
				b.Fatal(err)
			}
			for _, f := range []string{"model.bin", "meta.json"} {
				if err := fsutil.CopyFile(filepath.Join(from, f), filepath.Join(to, f)); err != nil {
					b.Fatal(err)
				}
				if err := fsutil.SyncFile(filepath.Join(to, f)); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

func byteSize(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMB", n>>20)
	}
	return fmt.Sprintf("%dKB", n>>10)
}

// benchCheckpoint commits a checkpoint holding a size-byte file and a small
// one, and returns its path.
func benchCheckpoint(b *testing.B, size int) (*Store, string) {
	s, err := New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	staged := filepath.Join(s.Root(), "src", StagingDirName, "s")
	if err := os.MkdirAll(staged, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(staged, "model.bin"), make([]byte, size), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(staged, "meta.json"), []byte(`{"step":1}`), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := s.Commit(context.Background(), staged, "src/checkpoint_000000"); err != nil {
		b.Fatal(err)
	}
	return s, "src/checkpoint_000000"
}

// TestListTop lists the entries at the top of the root, for a resume's
// cleanup to visit only the trial directories that exist.
func TestListTop(t *testing.T) {
	root := t.TempDir()
	s, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"trial_a", "trial_b"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	names, err := s.ListTop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, n := range names {
		got[n] = true
	}
	if !got["trial_a"] || !got["trial_b"] {
		t.Errorf("ListTop = %v", names)
	}
}

// TestLocalDirOfDeletedCheckpoint: a committed checkpoint removed by hand
// is fs.ErrNotExist for LocalDir (the runner then falls back to an older
// one), and a commit onto a trial directory that is now a regular file
// fails with ENOTDIR and leaves the staged directory in place.
func TestLocalDirOfDeletedCheckpoint(t *testing.T) {
	s := newStore(t)
	staged := filepath.Join(s.Root(), "a", StagingDirName, "s")
	write(t, staged, storetest.Tree{"f": "1"})
	if err := s.Commit(context.Background(), staged, "a/checkpoint_000000"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LocalDir(context.Background(), "a/checkpoint_000000"); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(s.Root(), "a", "checkpoint_000000")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LocalDir(context.Background(), "a/checkpoint_000000"); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "a/checkpoint_000000") {
		t.Errorf("LocalDir of a deleted checkpoint = %v, want fs.ErrNotExist naming it", err)
	}

	outside := filepath.Join(s.Root(), ".outside")
	write(t, outside, storetest.Tree{"f": "2"})
	if err := os.RemoveAll(filepath.Join(s.Root(), "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Root(), "a"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(context.Background(), outside, "a/checkpoint_000001"); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("Commit into a trial directory that is a file = %v, want ENOTDIR", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "f")); err != nil {
		t.Errorf("the failed commit lost the staged directory: %v", err)
	}
}

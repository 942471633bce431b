package local

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/hone-tune/hone/internal/fsutil"
	"github.com/hone-tune/hone/store/storetest"
)

// TestCommitSyncs pins the order Commit's crash safety rests on: first,
// at once, every file and directory of the staged checkpoint; then the
// rename; then, at once, the directory that now holds the checkpoint and
// the one it left.
func TestCommitSyncs(t *testing.T) {
	for _, tc := range []struct {
		name, staged string // staged, relative to the trial directory
		parents      []string
	}{
		{"from the staging directory", filepath.Join(StagingDirName, "s"), []string{"t", filepath.Join("t", StagingDirName)}},
		{"from the trial directory", "staged-here", []string{"t"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			staged := filepath.Join(s.Root(), "t", tc.staged)
			dst := filepath.Join(s.Root(), "t", "checkpoint_000001")
			tree := storetest.Tree{"a": "aaa", "d/b": "bbb", "d/e/c": "ccc", "empty": ""}
			write(t, staged, tree)
			content, err := fsutil.TreePaths(staged, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(content) != 1+len(tree)+2 { // staged, its files, d and d/e
				t.Fatalf("the checkpoint holds %q", content)
			}
			var batches [][]string
			var renamed []bool // whether dst existed at each batch
			s.sync = func(paths []string) error {
				_, err := os.Stat(dst)
				renamed = append(renamed, err == nil)
				batches = append(batches, slices.Clone(paths))
				return fsutil.SyncPaths(paths)
			}
			if err := s.Commit(context.Background(), staged, "t/checkpoint_000001"); err != nil {
				t.Fatal(err)
			}
			var parents []string
			for _, p := range tc.parents {
				parents = append(parents, filepath.Join(s.Root(), p))
			}
			if !slices.Equal(renamed, []bool{false, true}) {
				t.Fatalf("Commit synced %d batches, renamed before each: %v; want the content before the rename, the parents after", len(batches), renamed)
			}
			for i, want := range [][]string{content, parents} {
				got := batches[i]
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("batch %d: Commit fsynced\n%q\nwant\n%q", i, got, want)
				}
			}
			if got := readTree(t, dst); !got.Equal(tree) {
				t.Errorf("committed %v", got)
			}
		})
	}
}

// TestCommitFailedSync: when an fsync fails, before the rename or after
// it, Commit fails, dest is not committed and the staged directory is in
// place, so the same checkpoint index can be committed again.
func TestCommitFailedSync(t *testing.T) {
	for _, failing := range []int{1, 2} {
		s := newStore(t)
		staged := filepath.Join(s.Root(), "t", StagingDirName, "s")
		tree := storetest.Tree{"a": "aaa", "d/b": "bbb"}
		write(t, staged, tree)
		batch := 0
		s.sync = func(paths []string) error {
			if batch++; batch == failing {
				return &fs.PathError{Op: "sync", Path: paths[0], Err: syscall.EIO}
			}
			return fsutil.SyncPaths(paths)
		}
		err := s.Commit(context.Background(), staged, "t/checkpoint_000001")
		if !errors.Is(err, syscall.EIO) {
			t.Fatalf("Commit with fsync batch %d failing = %v, want EIO", failing, err)
		}
		if _, err := s.LocalDir(context.Background(), "t/checkpoint_000001"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("fsync batch %d failing: LocalDir after the failed commit: %v, want ErrNotExist", failing, err)
		}
		committed, leftovers, err := s.List(context.Background(), "t")
		if err != nil {
			t.Fatal(err)
		}
		if len(committed) != 0 || !slices.Equal(leftovers, []string{"t/" + StagingDirName + "/s"}) {
			t.Errorf("fsync batch %d failing: List = %q, %q; want nothing committed and the staged directory left", failing, committed, leftovers)
		}
		if got := readTree(t, staged); !got.Equal(tree) {
			t.Errorf("fsync batch %d failing: staged directory holds %v after the failed commit, want %v", failing, got, tree)
		}
		s.sync = fsutil.SyncPaths
		if err := s.Commit(context.Background(), staged, "t/checkpoint_000001"); err != nil {
			t.Fatalf("fsync batch %d failing: Commit again: %v", failing, err)
		}
		if got := readTree(t, filepath.Join(s.Root(), "t", "checkpoint_000001")); !got.Equal(tree) {
			t.Errorf("fsync batch %d failing: committed %v", failing, got)
		}
	}
}

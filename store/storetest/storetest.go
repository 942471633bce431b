// Package storetest is the conformance suite every hone.Store runs, in the
// spirit of testing/fstest: an implementation's tests call Run with a
// constructor, and the suite checks commit, list, link, delete, LocalDir,
// immutability and leftovers through the hone.Store interface only.
//
// The contract the suite pins, beyond the hone.Store doc comments:
//   - Commit onto an existing checkpoint and Link onto an existing
//     destination fail with an error wrapping fs.ErrExist, and leave the
//     existing checkpoint untouched; on error the staged directory stays.
//   - Link from, and LocalDir of, a missing checkpoint fail with an error
//     wrapping fs.ErrNotExist.
//   - A linked checkpoint is independent of its source: deleting either
//     leaves the other complete.
//   - List returns committed checkpoints in index order; a missing trial
//     directory lists nothing; a staged directory that was never committed
//     is a leftover, and Delete removes leftovers.
//   - Empty, absolute and escaping ("../x") paths are rejected.
package storetest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
)

// Tree is the content of a directory tree: file paths (slash-separated,
// relative to the tree's root) to file contents.
type Tree map[string]string

// Write creates the files of t under dir, creating directories as needed.
func (t Tree) Write(dir string) error {
	for name, content := range t {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write tree: %w", err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return fmt.Errorf("write tree: %w", err)
		}
	}
	return nil
}

// ReadTree returns the regular files under dir as a Tree.
func ReadTree(dir string) (Tree, error) {
	t := Tree{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		t[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read tree: %w", err)
	}
	return t, nil
}

// Equal reports whether t and u hold the same files with the same content.
func (t Tree) Equal(u Tree) bool {
	if len(t) != len(u) {
		return false
	}
	for k, v := range t {
		if w, ok := u[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Run runs the conformance suite. newStore is called once per subtest and
// returns a fresh store over an empty experiment, and root: the local
// experiment directory, under which the suite stages checkpoints as
// executors do (<root>/<trialDir>/.staging/<name>).
func Run(t *testing.T, newStore func(t *testing.T) (s hone.Store, root string)) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, h *harness)
	}{
		{"CommitAndList", testCommitAndList},
		{"CommitImmutable", testCommitImmutable},
		{"CommitBadStaged", testCommitBadStaged},
		{"Link", testLink},
		{"LinkErrors", testLinkErrors},
		{"Delete", testDelete},
		{"LocalDirMissing", testLocalDirMissing},
		{"Leftovers", testLeftovers},
		{"ListMissingTrial", testListMissingTrial},
		{"BadPaths", testBadPaths},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, root := newStore(t)
			tc.fn(t, &harness{t: t, s: s, root: root})
		})
	}
}

type harness struct {
	t    *testing.T
	s    hone.Store
	root string
	n    int
}

// stage writes tree into a fresh staging directory of trialDir and returns
// its absolute path.
func (h *harness) stage(trialDir string, tree Tree) string {
	h.t.Helper()
	h.n++
	dir := filepath.Join(h.root, filepath.FromSlash(trialDir), ".staging", fmt.Sprintf("save-%d", h.n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := tree.Write(dir); err != nil {
		h.t.Fatal(err)
	}
	return dir
}

// commit stages tree and commits it to dest.
func (h *harness) commit(dest string, tree Tree) {
	h.t.Helper()
	staged := h.stage(path.Dir(dest), tree)
	if err := h.s.Commit(staged, dest); err != nil {
		h.t.Fatalf("Commit(%s): %v", dest, err)
	}
	if _, err := os.Stat(staged); !errors.Is(err, fs.ErrNotExist) {
		h.t.Errorf("staged directory %s still exists after Commit (err %v)", staged, err)
	}
}

// expectTree checks that the checkpoint p holds exactly want.
func (h *harness) expectTree(p string, want Tree) {
	h.t.Helper()
	dir, err := h.s.LocalDir(p)
	if err != nil {
		h.t.Fatalf("LocalDir(%s): %v", p, err)
	}
	got, err := ReadTree(dir)
	if err != nil {
		h.t.Fatal(err)
	}
	if !got.Equal(want) {
		h.t.Errorf("checkpoint %s holds %v, want %v", p, got, want)
	}
}

// expectList checks List(trialDir).
func (h *harness) expectList(trialDir string, committed, leftovers []string) {
	h.t.Helper()
	c, l, err := h.s.List(trialDir)
	if err != nil {
		h.t.Fatalf("List(%s): %v", trialDir, err)
	}
	if !slices.Equal(c, committed) {
		h.t.Errorf("List(%s) committed = %q, want %q", trialDir, c, committed)
	}
	if !slices.Equal(l, leftovers) {
		h.t.Errorf("List(%s) leftovers = %q, want %q", trialDir, l, leftovers)
	}
}

func cp(trialDir string, i int) string { return path.Join(trialDir, hone.CheckpointDirName(i)) }

// The checkpoint contents the suite commits: nested, empty and larger files.
func treeA() Tree {
	return Tree{"model.bin": strings.Repeat("a", 5000), "meta/step.json": `{"step":1}`, "empty": ""}
}
func treeB() Tree { return Tree{"model.bin": "bbb", "optim/state/x": "x"} }
func treeC() Tree { return Tree{"c": "c"} }

func testCommitAndList(t *testing.T, h *harness) {
	h.expectList("trial_a", nil, nil)
	h.commit(cp("trial_a", 10), treeC())
	h.commit(cp("trial_a", 0), treeA())
	h.commit(cp("trial_a", 2), treeB())
	h.commit(cp("trial_b", 0), treeB())
	h.expectList("trial_a", []string{cp("trial_a", 0), cp("trial_a", 2), cp("trial_a", 10)}, nil)
	h.expectList("trial_b", []string{cp("trial_b", 0)}, nil)
	h.expectTree(cp("trial_a", 0), treeA())
	h.expectTree(cp("trial_a", 2), treeB())
	h.expectTree(cp("trial_a", 10), treeC())
}

func testCommitImmutable(t *testing.T, h *harness) {
	dest := cp("trial_a", 0)
	h.commit(dest, treeA())
	staged := h.stage("trial_a", treeB())
	err := h.s.Commit(staged, dest)
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Commit onto existing checkpoint: err = %v, want one wrapping fs.ErrExist", err)
	}
	if !strings.Contains(err.Error(), dest) {
		t.Errorf("error %q does not name %s", err, dest)
	}
	h.expectTree(dest, treeA())
	if got, err := ReadTree(staged); err != nil || !got.Equal(treeB()) {
		t.Errorf("staged directory after failed Commit = %v, %v; want it untouched", got, err)
	}
	_, left, err := h.s.List("trial_a")
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 {
		t.Fatalf("leftovers after failed Commit = %q, want the staged directory", left)
	}
	if err := h.s.Delete(left[0]); err != nil {
		t.Fatalf("Delete(%s): %v", left[0], err)
	}
	h.expectList("trial_a", []string{dest}, nil)
}

func testCommitBadStaged(t *testing.T, h *harness) {
	missing := filepath.Join(h.root, "trial_a", ".staging", "never-created")
	if err := h.s.Commit(missing, cp("trial_a", 0)); err == nil {
		t.Error("Commit of a missing staged directory succeeded")
	}
	file := filepath.Join(h.root, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.s.Commit(file, cp("trial_a", 1)); err == nil {
		t.Error("Commit of a regular file succeeded")
	}
	h.expectList("trial_a", nil, nil)
}

func testLink(t *testing.T, h *harness) {
	src := cp("trial_a", 3)
	h.commit(src, treeA())
	dest := cp("trial_b", 0)
	if err := h.s.Link(src, dest); err != nil {
		t.Fatalf("Link: %v", err)
	}
	h.expectTree(dest, treeA())
	h.expectList("trial_b", []string{dest}, nil)
	h.expectList("trial_a", []string{src}, nil)
	// A clone of a clone, then deleting the source: the clones stay complete.
	dest2 := cp("trial_c", 7)
	if err := h.s.Link(dest, dest2); err != nil {
		t.Fatalf("Link: %v", err)
	}
	if err := h.s.Delete(src); err != nil {
		t.Fatal(err)
	}
	h.expectTree(dest, treeA())
	if err := h.s.Delete(dest); err != nil {
		t.Fatal(err)
	}
	h.expectTree(dest2, treeA())
	h.expectList("trial_a", nil, nil)
	h.expectList("trial_b", nil, nil)
	h.expectList("trial_c", []string{dest2}, nil)
}

func testLinkErrors(t *testing.T, h *harness) {
	h.commit(cp("trial_a", 0), treeA())
	h.commit(cp("trial_b", 0), treeB())
	if err := h.s.Link(cp("trial_a", 0), cp("trial_b", 0)); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Link onto existing: err = %v, want one wrapping fs.ErrExist", err)
	}
	h.expectTree(cp("trial_b", 0), treeB())
	if err := h.s.Link(cp("trial_a", 9), cp("trial_b", 1)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Link from missing: err = %v, want one wrapping fs.ErrNotExist", err)
	}
	h.expectList("trial_b", []string{cp("trial_b", 0)}, nil)
}

func testDelete(t *testing.T, h *harness) {
	h.commit(cp("trial_a", 0), treeA())
	h.commit(cp("trial_a", 1), treeB())
	if err := h.s.Delete(cp("trial_a", 0)); err != nil {
		t.Fatal(err)
	}
	h.expectList("trial_a", []string{cp("trial_a", 1)}, nil)
	if _, err := h.s.LocalDir(cp("trial_a", 0)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LocalDir of deleted checkpoint: err = %v, want fs.ErrNotExist", err)
	}
	for _, p := range []string{cp("trial_a", 0), cp("trial_a", 5), cp("no_trial", 0)} {
		if err := h.s.Delete(p); err != nil {
			t.Errorf("Delete(%s) of missing checkpoint: %v", p, err)
		}
	}
	// A deleted index can be committed again.
	h.commit(cp("trial_a", 0), treeC())
	h.expectTree(cp("trial_a", 0), treeC())
	h.expectTree(cp("trial_a", 1), treeB())
}

func testLocalDirMissing(t *testing.T, h *harness) {
	if _, err := h.s.LocalDir(cp("trial_a", 0)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LocalDir of missing checkpoint: err = %v, want fs.ErrNotExist", err)
	}
}

func testLeftovers(t *testing.T, h *harness) {
	h.commit(cp("trial_a", 0), treeA())
	// A save that was staged but never committed (the runner crashed).
	staged := h.stage("trial_a", treeB())
	_, left, err := h.s.List("trial_a")
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || !strings.HasSuffix(left[0], filepath.Base(staged)) {
		t.Fatalf("leftovers = %q, want the staged directory %s", left, staged)
	}
	if err := h.s.Delete(left[0]); err != nil {
		t.Fatalf("Delete(%s): %v", left[0], err)
	}
	if _, err := os.Stat(staged); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("staged directory survives Delete of its leftover (err %v)", err)
	}
	h.expectList("trial_a", []string{cp("trial_a", 0)}, nil)
	h.expectTree(cp("trial_a", 0), treeA())
}

func testListMissingTrial(t *testing.T, h *harness) {
	h.expectList("nobody_here", nil, nil)
}

func testBadPaths(t *testing.T, h *harness) {
	h.commit(cp("trial_a", 0), treeA())
	for _, bad := range []string{"", ".", "/abs/checkpoint_000000", "../escape", "trial_a/../../escape"} {
		staged := h.stage("trial_a", treeC())
		if err := h.s.Commit(staged, bad); err == nil {
			t.Errorf("Commit to %q succeeded", bad)
		}
		if err := h.s.Link(cp("trial_a", 0), bad); err == nil {
			t.Errorf("Link to %q succeeded", bad)
		}
		if err := h.s.Link(bad, cp("trial_b", 0)); err == nil {
			t.Errorf("Link from %q succeeded", bad)
		}
		if err := h.s.Delete(bad); err == nil {
			t.Errorf("Delete(%q) succeeded", bad)
		}
		if _, err := h.s.LocalDir(bad); err == nil {
			t.Errorf("LocalDir(%q) succeeded", bad)
		}
	}
	h.expectTree(cp("trial_a", 0), treeA())
}

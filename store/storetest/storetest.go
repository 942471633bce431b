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
//   - A Commit with a cancelled context fails with an error wrapping
//     context.Canceled and registers nothing: List shows no checkpoint at
//     its destination, only leftovers, which Delete removes. The other
//     methods fail the same way, and a cancelled Delete deletes nothing.
//   - A store that is a hone.FileCommitter commits a stream of files with
//     the same contract as Commit; a failing reader, a bad file name or a
//     cancelled context registers nothing.
//   - A store that is a hone.TopLister names every trial directory that
//     List would report anything for.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"maps"
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
		{"CommitCancelled", testCommitCancelled},
		{"OthersCancelled", testOthersCancelled},
		{"CommitFiles", testCommitFiles},
		{"CommitFilesErrors", testCommitFilesErrors},
		{"CommitFilesCancelled", testCommitFilesCancelled},
		{"ListTop", testListTop},
		{"ListTree", testListTree},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, root := newStore(t)
			tc.fn(t, &harness{t: t, ctx: t.Context(), s: s, root: root})
		})
	}
}

type harness struct {
	t    *testing.T
	ctx  context.Context
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
	if err := h.s.Commit(h.ctx, staged, dest); err != nil {
		h.t.Fatalf("Commit(%s): %v", dest, err)
	}
	if _, err := os.Stat(staged); !errors.Is(err, fs.ErrNotExist) {
		h.t.Errorf("staged directory %s still exists after Commit (err %v)", staged, err)
	}
}

// expectTree checks that the checkpoint p holds exactly want.
func (h *harness) expectTree(p string, want Tree) {
	h.t.Helper()
	dir, err := h.s.LocalDir(h.ctx, p)
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
	c, l, err := h.s.List(h.ctx, trialDir)
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
	err := h.s.Commit(h.ctx, staged, dest)
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
	_, left, err := h.s.List(h.ctx, "trial_a")
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 {
		t.Fatalf("leftovers after failed Commit = %q, want the staged directory", left)
	}
	if err := h.s.Delete(h.ctx, left[0]); err != nil {
		t.Fatalf("Delete(%s): %v", left[0], err)
	}
	h.expectList("trial_a", []string{dest}, nil)
}

func testCommitBadStaged(t *testing.T, h *harness) {
	missing := filepath.Join(h.root, "trial_a", ".staging", "never-created")
	if err := h.s.Commit(h.ctx, missing, cp("trial_a", 0)); err == nil {
		t.Error("Commit of a missing staged directory succeeded")
	}
	file := filepath.Join(h.root, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.s.Commit(h.ctx, file, cp("trial_a", 1)); err == nil {
		t.Error("Commit of a regular file succeeded")
	}
	h.expectList("trial_a", nil, nil)
}

func testLink(t *testing.T, h *harness) {
	src := cp("trial_a", 3)
	h.commit(src, treeA())
	dest := cp("trial_b", 0)
	if err := h.s.Link(h.ctx, src, dest); err != nil {
		t.Fatalf("Link: %v", err)
	}
	h.expectTree(dest, treeA())
	h.expectList("trial_b", []string{dest}, nil)
	h.expectList("trial_a", []string{src}, nil)
	// A clone of a clone, then deleting the source: the clones stay complete.
	dest2 := cp("trial_c", 7)
	if err := h.s.Link(h.ctx, dest, dest2); err != nil {
		t.Fatalf("Link: %v", err)
	}
	if err := h.s.Delete(h.ctx, src); err != nil {
		t.Fatal(err)
	}
	h.expectTree(dest, treeA())
	if err := h.s.Delete(h.ctx, dest); err != nil {
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
	if err := h.s.Link(h.ctx, cp("trial_a", 0), cp("trial_b", 0)); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Link onto existing: err = %v, want one wrapping fs.ErrExist", err)
	}
	h.expectTree(cp("trial_b", 0), treeB())
	if err := h.s.Link(h.ctx, cp("trial_a", 9), cp("trial_b", 1)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Link from missing: err = %v, want one wrapping fs.ErrNotExist", err)
	}
	h.expectList("trial_b", []string{cp("trial_b", 0)}, nil)
}

func testDelete(t *testing.T, h *harness) {
	h.commit(cp("trial_a", 0), treeA())
	h.commit(cp("trial_a", 1), treeB())
	if err := h.s.Delete(h.ctx, cp("trial_a", 0)); err != nil {
		t.Fatal(err)
	}
	h.expectList("trial_a", []string{cp("trial_a", 1)}, nil)
	if _, err := h.s.LocalDir(h.ctx, cp("trial_a", 0)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LocalDir of deleted checkpoint: err = %v, want fs.ErrNotExist", err)
	}
	for _, p := range []string{cp("trial_a", 0), cp("trial_a", 5), cp("no_trial", 0)} {
		if err := h.s.Delete(h.ctx, p); err != nil {
			t.Errorf("Delete(%s) of missing checkpoint: %v", p, err)
		}
	}
	// A deleted index can be committed again.
	h.commit(cp("trial_a", 0), treeC())
	h.expectTree(cp("trial_a", 0), treeC())
	h.expectTree(cp("trial_a", 1), treeB())
}

func testLocalDirMissing(t *testing.T, h *harness) {
	if _, err := h.s.LocalDir(h.ctx, cp("trial_a", 0)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LocalDir of missing checkpoint: err = %v, want fs.ErrNotExist", err)
	}
}

func testLeftovers(t *testing.T, h *harness) {
	h.commit(cp("trial_a", 0), treeA())
	// A save that was staged but never committed (the runner crashed).
	staged := h.stage("trial_a", treeB())
	_, left, err := h.s.List(h.ctx, "trial_a")
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || !strings.HasSuffix(left[0], filepath.Base(staged)) {
		t.Fatalf("leftovers = %q, want the staged directory %s", left, staged)
	}
	if err := h.s.Delete(h.ctx, left[0]); err != nil {
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
		if err := h.s.Commit(h.ctx, staged, bad); err == nil {
			t.Errorf("Commit to %q succeeded", bad)
		}
		if err := h.s.Link(h.ctx, cp("trial_a", 0), bad); err == nil {
			t.Errorf("Link to %q succeeded", bad)
		}
		if err := h.s.Link(h.ctx, bad, cp("trial_b", 0)); err == nil {
			t.Errorf("Link from %q succeeded", bad)
		}
		if err := h.s.Delete(h.ctx, bad); err == nil {
			t.Errorf("Delete(%q) succeeded", bad)
		}
		if _, err := h.s.LocalDir(h.ctx, bad); err == nil {
			t.Errorf("LocalDir(%q) succeeded", bad)
		}
	}
	h.expectTree(cp("trial_a", 0), treeA())
}

// expectUnregistered checks that dest is not committed after a commit
// that failed: List of its trial directory reports no committed
// checkpoint at dest, and every leftover it reports can be deleted, after
// which nothing but what is committed elsewhere in the trial is left.
// LocalDir of dest fails with fs.ErrNotExist.
func (h *harness) expectUnregistered(dest string, committedElsewhere []string) {
	h.t.Helper()
	trialDir := path.Dir(dest)
	c, left, err := h.s.List(h.ctx, trialDir)
	if err != nil {
		h.t.Fatalf("List(%s): %v", trialDir, err)
	}
	if !slices.Equal(c, committedElsewhere) {
		h.t.Errorf("List(%s) committed = %q after a failed commit of %s, want %q", trialDir, c, dest, committedElsewhere)
	}
	for _, p := range left {
		if err := h.s.Delete(h.ctx, p); err != nil {
			h.t.Errorf("Delete(%s) of a leftover: %v", p, err)
		}
	}
	h.expectList(trialDir, committedElsewhere, nil)
	if _, err := h.s.LocalDir(h.ctx, dest); !errors.Is(err, fs.ErrNotExist) {
		h.t.Errorf("LocalDir(%s) after a failed commit: err = %v, want fs.ErrNotExist", dest, err)
	}
}

// cancelled returns a context that is already cancelled.
func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// testCommitCancelled: a Commit with a cancelled context fails with an
// error wrapping context.Canceled, registers nothing, leaves the staged
// directory in place, and the same checkpoint can be committed afterwards.
func testCommitCancelled(t *testing.T, h *harness) {
	h.commit(cp("trial_a", 0), treeA())
	dest := cp("trial_a", 1)
	staged := h.stage("trial_a", treeB())
	err := h.s.Commit(cancelled(), staged, dest)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Commit with a cancelled context: err = %v, want one wrapping context.Canceled", err)
	}
	if got, err := ReadTree(staged); err != nil || !got.Equal(treeB()) {
		t.Errorf("staged directory after a cancelled Commit = %v, %v; want it untouched", got, err)
	}
	h.expectUnregistered(dest, []string{cp("trial_a", 0)})
	h.commit(dest, treeB())
	h.expectTree(dest, treeB())
	h.expectTree(cp("trial_a", 0), treeA())
}

// stream returns tree's files as a stream for FileCommitter, in name
// order.
func stream(tree Tree) iter.Seq2[string, io.Reader] {
	return func(yield func(string, io.Reader) bool) {
		for _, name := range slices.Sorted(maps.Keys(tree)) {
			if !yield(name, strings.NewReader(tree[name])) {
				return
			}
		}
	}
}

// fileCommitter returns the store as a hone.FileCommitter, or skips.
func (h *harness) fileCommitter() hone.FileCommitter {
	h.t.Helper()
	fc, ok := h.s.(hone.FileCommitter)
	if !ok {
		h.t.Skipf("%T does not implement hone.FileCommitter", h.s)
	}
	return fc
}

// testCommitFiles: a checkpoint committed from a stream of files holds
// exactly those files, is listed with the others, and is immutable.
func testCommitFiles(t *testing.T, h *harness) {
	fc := h.fileCommitter()
	h.commit(cp("trial_a", 0), treeC())
	dest := cp("trial_a", 1)
	if err := fc.CommitFiles(h.ctx, dest, stream(treeA())); err != nil {
		t.Fatalf("CommitFiles(%s): %v", dest, err)
	}
	h.expectTree(dest, treeA())
	h.expectList("trial_a", []string{cp("trial_a", 0), dest}, nil)
	err := fc.CommitFiles(h.ctx, dest, stream(treeB()))
	if !errors.Is(err, fs.ErrExist) {
		t.Errorf("CommitFiles onto an existing checkpoint: err = %v, want one wrapping fs.ErrExist", err)
	}
	h.expectTree(dest, treeA())
	// A streamed checkpoint links and deletes as any other.
	if err := h.s.Link(h.ctx, dest, cp("trial_b", 0)); err != nil {
		t.Fatalf("Link of a streamed checkpoint: %v", err)
	}
	h.expectTree(cp("trial_b", 0), treeA())
	if err := h.s.Delete(h.ctx, dest); err != nil {
		t.Fatal(err)
	}
	h.expectList("trial_a", []string{cp("trial_a", 0)}, nil)
	h.expectTree(cp("trial_b", 0), treeA())
	// No files at all is an empty checkpoint.
	if err := fc.CommitFiles(h.ctx, cp("trial_c", 0), stream(Tree{})); err != nil {
		t.Fatalf("CommitFiles of no files: %v", err)
	}
	h.expectTree(cp("trial_c", 0), Tree{})
}

// failingReader yields n bytes of content, then fails.
type failingReader struct {
	n   int
	err error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, r.err
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = 'f'
	}
	r.n -= k
	return k, nil
}

// testCommitFilesErrors: a stream whose reader fails part way, or that
// names a file badly, fails the commit and registers nothing; what it
// leaves is a leftover List reports and Delete removes.
func testCommitFilesErrors(t *testing.T, h *harness) {
	fc := h.fileCommitter()
	h.commit(cp("trial_a", 0), treeC())
	dest := cp("trial_a", 1)
	readErr := errors.New("producer failed")
	broken := func(yield func(string, io.Reader) bool) {
		if !yield("first", strings.NewReader("complete file")) {
			return
		}
		yield("second", &failingReader{n: 3000, err: readErr})
	}
	if err := fc.CommitFiles(h.ctx, dest, broken); !errors.Is(err, readErr) {
		t.Errorf("CommitFiles with a failing reader: err = %v, want one wrapping the reader's error", err)
	}
	h.expectUnregistered(dest, []string{cp("trial_a", 0)})
	for _, bad := range [][]string{{"../escape"}, {"/abs"}, {"a//b"}, {"./a"}, {""}, {"ok", "ok"}, {"d", "d/x"}} {
		files := func(yield func(string, io.Reader) bool) {
			for _, name := range bad {
				if !yield(name, strings.NewReader("x")) {
					return
				}
			}
		}
		if err := fc.CommitFiles(h.ctx, dest, files); err == nil {
			t.Errorf("CommitFiles of files %q succeeded", bad)
		}
		h.expectUnregistered(dest, []string{cp("trial_a", 0)})
	}
	for _, bad := range []string{"", "/abs/checkpoint_000000", "../escape"} {
		if err := fc.CommitFiles(h.ctx, bad, stream(treeC())); err == nil {
			t.Errorf("CommitFiles to %q succeeded", bad)
		}
	}
	// The same checkpoint commits fine afterwards.
	if err := fc.CommitFiles(h.ctx, dest, stream(treeB())); err != nil {
		t.Fatal(err)
	}
	h.expectTree(dest, treeB())
}

// testCommitFilesCancelled: CommitFiles with a context already cancelled,
// or cancelled between two files, fails with an error wrapping
// context.Canceled and registers nothing.
func testCommitFilesCancelled(t *testing.T, h *harness) {
	fc := h.fileCommitter()
	dest := cp("trial_a", 0)
	if err := fc.CommitFiles(cancelled(), dest, stream(treeA())); !errors.Is(err, context.Canceled) {
		t.Errorf("CommitFiles with a cancelled context: err = %v, want one wrapping context.Canceled", err)
	}
	h.expectUnregistered(dest, nil)
	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	midway := func(yield func(string, io.Reader) bool) {
		if !yield("a", strings.NewReader(strings.Repeat("a", 4000))) {
			return
		}
		cancel()
		yield("b", strings.NewReader("b"))
	}
	if err := fc.CommitFiles(ctx, dest, midway); !errors.Is(err, context.Canceled) {
		t.Errorf("CommitFiles cancelled between files: err = %v, want one wrapping context.Canceled", err)
	}
	h.expectUnregistered(dest, nil)
}

// testListTop: a store that lists its top level names every trial
// directory that holds a committed checkpoint or a leftover, and no other
// trial directory.
func testListTop(t *testing.T, h *harness) {
	tl, ok := h.s.(hone.TopLister)
	if !ok {
		t.Skipf("%T does not implement hone.TopLister", h.s)
	}
	names, err := tl.ListTop(h.ctx)
	if err != nil {
		t.Fatalf("ListTop of an empty experiment: %v", err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "trial_") {
			t.Errorf("ListTop of an empty experiment names %s", n)
		}
	}
	h.commit(cp("trial_a", 0), treeA())
	h.commit(cp("trial_b", 3), treeB())
	h.commit(cp("trial_gone", 0), treeC())
	if err := h.s.Delete(h.ctx, cp("trial_gone", 0)); err != nil {
		t.Fatal(err)
	}
	h.stage("trial_c", treeC()) // only a leftover
	names, err = tl.ListTop(h.ctx)
	if err != nil {
		t.Fatalf("ListTop: %v", err)
	}
	var trials []string
	for _, n := range names {
		if strings.Contains(n, "/") {
			t.Errorf("ListTop name %q holds a slash", n)
		}
		if strings.HasPrefix(n, "trial_") && n != "trial_gone" {
			trials = append(trials, n)
		}
	}
	slices.Sort(trials)
	if want := []string{"trial_a", "trial_b", "trial_c"}; !slices.Equal(trials, want) {
		t.Errorf("ListTop names the trials %q, want %q (names %q)", trials, want, names)
	}
	if _, err := tl.ListTop(cancelled()); !errors.Is(err, context.Canceled) {
		t.Errorf("ListTop with a cancelled context: err = %v, want one wrapping context.Canceled", err)
	}
}

// testListTree: a store that lists its whole tree reports, for every
// trial directory, exactly what List does, and no directory List has
// nothing for.
func testListTree(t *testing.T, h *harness) {
	tl, ok := h.s.(hone.TreeLister)
	if !ok {
		t.Skipf("%T does not implement hone.TreeLister", h.s)
	}
	tree, err := tl.ListTree(h.ctx)
	if err != nil {
		t.Fatalf("ListTree of an empty experiment: %v", err)
	}
	if len(tree) != 0 {
		t.Errorf("ListTree of an empty experiment = %v", tree)
	}
	h.commit(cp("trial_a", 0), treeA())
	h.commit(cp("trial_a", 2), treeB())
	h.commit(cp("trial_a", 10), treeC())
	h.commit(cp("trial_b", 3), treeB())
	h.commit(cp("trial_gone", 0), treeC())
	if err := h.s.Delete(h.ctx, cp("trial_gone", 0)); err != nil {
		t.Fatal(err)
	}
	h.stage("trial_b", treeC()) // a leftover beside a checkpoint
	h.stage("trial_c", treeC()) // only a leftover
	tree, err = tl.ListTree(h.ctx)
	if err != nil {
		t.Fatalf("ListTree: %v", err)
	}
	for _, dir := range []string{"trial_a", "trial_b", "trial_c", "trial_gone", "trial_never"} {
		c, l, err := h.s.List(h.ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := tree[dir]
		if len(c)+len(l) == 0 {
			if ok {
				t.Errorf("ListTree has %s = %+v; List reports nothing for it", dir, got)
			}
			continue
		}
		if !slices.Equal(got.Committed, c) || !slices.Equal(got.Leftovers, l) {
			t.Errorf("ListTree[%s] = %+v; List reports committed %q, leftovers %q", dir, got, c, l)
		}
	}
	if len(tree["trial_a"].Committed) != 3 || len(tree["trial_c"].Leftovers) != 1 {
		t.Errorf("ListTree = %+v; want trial_a's 3 checkpoints and trial_c's leftover", tree)
	}
	if _, err := tl.ListTree(cancelled()); !errors.Is(err, context.Canceled) {
		t.Errorf("ListTree with a cancelled context: err = %v, want one wrapping context.Canceled", err)
	}
}

// testOthersCancelled: Link, Delete, LocalDir and List with a cancelled
// context fail with an error wrapping context.Canceled; the cancelled
// Delete leaves the checkpoint, and the cancelled Link registers nothing.
func testOthersCancelled(t *testing.T, h *harness) {
	src := cp("trial_a", 0)
	h.commit(src, treeA())
	ctx := cancelled()
	if err := h.s.Link(ctx, src, cp("trial_b", 0)); !errors.Is(err, context.Canceled) {
		t.Errorf("Link with a cancelled context: err = %v, want one wrapping context.Canceled", err)
	}
	if err := h.s.Delete(ctx, src); !errors.Is(err, context.Canceled) {
		t.Errorf("Delete with a cancelled context: err = %v, want one wrapping context.Canceled", err)
	}
	if _, err := h.s.LocalDir(ctx, src); !errors.Is(err, context.Canceled) {
		t.Errorf("LocalDir with a cancelled context: err = %v, want one wrapping context.Canceled", err)
	}
	if _, _, err := h.s.List(ctx, "trial_a"); !errors.Is(err, context.Canceled) {
		t.Errorf("List with a cancelled context: err = %v, want one wrapping context.Canceled", err)
	}
	h.expectTree(src, treeA())
	h.expectList("trial_a", []string{src}, nil)
	h.expectUnregistered(cp("trial_b", 0), nil)
}

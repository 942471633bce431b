package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"pgregory.net/rapid"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/store/storetest"
)

// TestPropertyNoPartialCheckpoint runs random sequences of Commit, Link and
// Delete, some of them cut short by a simulated crash at a rename or a
// link (just before or just after it), on filesystems with and without
// hard links and with staging on another filesystem. After every step, and
// after recovering from every crash, each committed checkpoint holds
// exactly the content it was committed with: a crash never leaves a
// partial checkpoint under a committed name and never loses one that was
// not being deleted.
func TestPropertyNoPartialCheckpoint(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := &machine{
			root:        t.TempDir(),
			crossDevice: rapid.Bool().Draw(rt, "crossDevice"),
			noLinks:     rapid.Bool().Draw(rt, "noLinks"),
			model:       map[string]storetest.Tree{},
		}
		m.s = m.newStore(rt)
		rt.Repeat(map[string]func(*rapid.T){
			"commit": m.commit,
			"link":   m.link,
			"delete": m.delete,
			"":       m.check,
		})
	})
}

var trials = [...]string{"t0", "t1", "t2"}

type machine struct {
	root        string
	s           *Store
	crossDevice bool // renames out of .staging fail with EXDEV
	noLinks     bool // hard links fail with EPERM
	model       map[string]storetest.Tree
	seq         int

	// Crash injection for the current step: crash at the crashAt-th hooked
	// call (0: no crash), after carrying it out if crashAfter.
	crashAt    int
	crashAfter bool
	calls      int
}

func (m *machine) newStore(rt *rapid.T) *Store {
	s, err := New(m.root, NoSync())
	if err != nil {
		rt.Fatal(err)
	}
	s.rename = func(o, n string) error {
		return m.hook(func() error {
			if m.crossDevice && strings.Contains(o, "/"+StagingDirName+"/") {
				return &os.LinkError{Op: "rename", Old: o, New: n, Err: syscall.EXDEV}
			}
			return os.Rename(o, n)
		})
	}
	s.link = func(o, n string) error {
		return m.hook(func() error {
			if m.noLinks {
				return &os.LinkError{Op: "link", Old: o, New: n, Err: syscall.EPERM}
			}
			return os.Link(o, n)
		})
	}
	return s
}

func (m *machine) hook(call func() error) error {
	m.calls++
	if m.calls != m.crashAt {
		return call()
	}
	if m.crashAfter {
		_ = call()
	}
	panic(crash{})
}

// run arms a possible crash and runs op; crashed reports whether it was cut
// short.
func (m *machine) run(rt *rapid.T, op func() error) (err error, crashed bool) {
	m.calls, m.crashAt = 0, 0
	if rapid.IntRange(0, 2).Draw(rt, "crash?") == 0 {
		m.crashAt = rapid.IntRange(1, 5).Draw(rt, "crashAt")
		m.crashAfter = rapid.Bool().Draw(rt, "crashAfter")
	}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crash); !ok {
				panic(r)
			}
			crashed = true
		}
	}()
	return op(), false
}

func (m *machine) drawDest(rt *rapid.T) string {
	trial := rapid.SampledFrom(trials[:]).Draw(rt, "trial")
	return path.Join(trial, hone.CheckpointDirName(rapid.IntRange(0, 3).Draw(rt, "index")))
}

func (m *machine) drawTree(rt *rapid.T) storetest.Tree {
	m.seq++
	names := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"a", "b", "sub/c", "sub/d/e"}), 1, 4, rapid.ID[string]).Draw(rt, "files")
	tree := storetest.Tree{}
	for _, n := range names {
		tree[n] = strings.Repeat(fmt.Sprintf("%d:%s;", m.seq, n), rapid.IntRange(0, 300).Draw(rt, "size"))
	}
	return tree
}

func (m *machine) commit(rt *rapid.T) {
	dest := m.drawDest(rt)
	tree := m.drawTree(rt)
	m.seq++
	stagedRel := path.Join(path.Dir(dest), StagingDirName, fmt.Sprintf("s%d", m.seq))
	staged := filepath.Join(m.root, filepath.FromSlash(stagedRel))
	if err := os.MkdirAll(staged, 0o755); err != nil {
		rt.Fatal(err)
	}
	if err := tree.Write(staged); err != nil {
		rt.Fatal(err)
	}
	err, crashed := m.run(rt, func() error { return m.s.Commit(context.Background(), staged, dest) })
	switch {
	case crashed:
		m.recover(rt, dest, tree, "")
	case m.model[dest] != nil:
		if !errors.Is(err, fs.ErrExist) {
			rt.Fatalf("Commit onto existing %s: %v", dest, err)
		}
		if err := m.s.Delete(context.Background(), stagedRel); err != nil {
			rt.Fatal(err)
		}
	case err != nil:
		rt.Fatalf("Commit(%s): %v", dest, err)
	default:
		m.model[dest] = tree
	}
}

func (m *machine) link(rt *rapid.T) {
	if len(m.model) == 0 {
		rt.Skip("nothing to link")
	}
	src := rapid.SampledFrom(m.committed()).Draw(rt, "src")
	dest := m.drawDest(rt)
	err, crashed := m.run(rt, func() error { return m.s.Link(context.Background(), src, dest) })
	switch {
	case crashed:
		m.recover(rt, dest, m.model[src], "")
	case m.model[dest] != nil:
		if !errors.Is(err, fs.ErrExist) {
			rt.Fatalf("Link onto existing %s: %v", dest, err)
		}
	case err != nil:
		rt.Fatalf("Link(%s, %s): %v", src, dest, err)
	default:
		m.model[dest] = m.model[src]
	}
}

func (m *machine) delete(rt *rapid.T) {
	target := m.drawDest(rt)
	if len(m.model) > 0 && rapid.Bool().Draw(rt, "existing") {
		target = rapid.SampledFrom(m.committed()).Draw(rt, "target")
	}
	err, crashed := m.run(rt, func() error { return m.s.Delete(context.Background(), target) })
	switch {
	case crashed:
		m.recover(rt, "", nil, target)
	case err != nil:
		rt.Fatalf("Delete(%s): %v", target, err)
	default:
		delete(m.model, target)
	}
}

func (m *machine) committed() []string {
	keys := make([]string, 0, len(m.model))
	for k := range m.model {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// recover does what a resumed experiment does after a crash: a fresh store
// over the same directory, List, Delete of every leftover. The checkpoint
// being created (dest, with content tree) may or may not exist, complete;
// the one being deleted may or may not still exist, complete.
func (m *machine) recover(rt *rapid.T, dest string, tree storetest.Tree, deleting string) {
	m.s = m.newStore(rt)
	m.calls, m.crashAt = 0, 0
	for _, trial := range append([]string{"."}, trials[:]...) {
		committed, leftovers, err := m.s.List(context.Background(), trial)
		if err != nil {
			rt.Fatal(err)
		}
		for _, c := range committed {
			switch {
			case m.model[c] != nil:
			case c == dest:
				m.model[c] = tree // the crash came after the commit point
			default:
				rt.Fatalf("unexpected committed checkpoint %s after crash", c)
			}
		}
		for p := range m.model {
			if path.Dir(p) == trial && !slices.Contains(committed, p) {
				if p != deleting {
					rt.Fatalf("checkpoint %s lost in crash", p)
				}
				delete(m.model, p)
			}
		}
		for _, l := range leftovers {
			if err := m.s.Delete(context.Background(), l); err != nil {
				rt.Fatalf("Delete(%s): %v", l, err)
			}
		}
	}
	m.check(rt)
}

// check verifies that List shows exactly the model, with exact content,
// and no leftovers.
func (m *machine) check(rt *rapid.T) {
	var all []string
	for _, trial := range append([]string{"."}, trials[:]...) {
		committed, leftovers, err := m.s.List(context.Background(), trial)
		if err != nil {
			rt.Fatal(err)
		}
		if len(leftovers) != 0 {
			rt.Fatalf("leftovers in %s: %q", trial, leftovers)
		}
		all = append(all, committed...)
	}
	slices.Sort(all)
	if want := m.committed(); !slices.Equal(all, want) {
		rt.Fatalf("committed = %q, want %q", all, want)
	}
	for _, c := range all {
		dir, err := m.s.LocalDir(context.Background(), c)
		if err != nil {
			rt.Fatal(err)
		}
		got, err := storetest.ReadTree(dir)
		if err != nil {
			rt.Fatal(err)
		}
		if !got.Equal(m.model[c]) {
			rt.Fatalf("checkpoint %s holds %v, want %v", c, got, m.model[c])
		}
	}
}

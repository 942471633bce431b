// Package local is the checkpoint store for a local (or locally mounted)
// directory. It implements hone.Store.
//
// # Layout and crash safety
//
// Paths given to the store are relative to the experiment directory and
// use forward slashes. Committed checkpoints are directories named
// hone.CheckpointDirName(i) ("checkpoint_000003") inside trial directories.
// Every change of a committed name is a single rename(2) of a complete,
// fsynced directory, so a crash at any instant leaves each checkpoint
// either absent or complete. What a crash can leave behind has a name that
// never looks committed, and List reports it as a leftover:
//
//	<trial>/.staging/<any>        staged by an executor, never committed
//	<dir>/.tmp-<name>-<random>    a Link or a cross-filesystem Commit cut short
//	<dir>/.trash-<name>-<random>  a Delete cut short
//
// Delete removes leftovers too.
//
// # Links
//
// Link clones a checkpoint with one hard link per file, so its cost does
// not depend on the size of the files. The clone shares storage with its
// source: checkpoint files must be treated as read-only by everyone (the
// store never modifies a file in place; it only creates, renames and
// removes).
package local

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/fsutil"
)

// StagingDirName is hone.StagingDirName, where executors stage
// checkpoints inside a trial directory.
const StagingDirName = hone.StagingDirName

// Name prefixes of the store's temporary and trash directories.
const (
	tmpPrefix   = ".tmp-"
	trashPrefix = ".trash-"
)

// ErrBadPath is returned (wrapped) for a path that is empty, absolute, or
// leaves the experiment directory.
var ErrBadPath = errors.New("path must be relative and inside the experiment directory")

// Store is a hone.Store over a local experiment directory. Its methods may
// be called from several goroutines as long as they work on distinct
// paths; the runner calls them from its one goroutine.
type Store struct {
	root    string
	durable bool
	// rename and link are os.Rename and os.Link, replaced in tests to
	// simulate crashes and filesystems without hard links; sync is
	// fsutil.SyncPaths, replaced in tests to see what Commit fsyncs and
	// when, and to make an fsync fail.
	rename func(oldpath, newpath string) error
	link   func(oldname, newname string) error
	sync   func(paths []string) error
}

// The store's optional abilities.
var (
	_ hone.Store         = (*Store)(nil)
	_ hone.FileCommitter = (*Store)(nil)
	_ hone.TopLister     = (*Store)(nil)
)

// Option configures a Store.
type Option func(*Store)

// NoSync makes the store skip every fsync. Commits stay atomic for readers
// but are not durable across a machine crash: use it for simulations and
// tests, never for real experiments.
func NoSync() Option { return func(s *Store) { s.durable = false } }

// New returns a store over experimentDir, creating the directory if it does
// not exist.
func New(experimentDir string, opts ...Option) (*Store, error) {
	root, err := filepath.Abs(experimentDir)
	if err != nil {
		return nil, fmt.Errorf("local store: %w", err)
	}
	s := &Store{root: root, durable: true, rename: os.Rename, link: os.Link, sync: fsutil.SyncPaths}
	for _, o := range opts {
		o(s)
	}
	if err := s.mkdirAll(root); err != nil {
		return nil, fmt.Errorf("local store: %w", err)
	}
	return s, nil
}

// Root returns the absolute experiment directory.
func (s *Store) Root() string { return s.root }

// abs maps a store path to an absolute local path.
func (s *Store) abs(p string) (string, error) {
	if p == "" || path.IsAbs(p) || filepath.IsAbs(p) {
		return "", fmt.Errorf("%q: %w", p, ErrBadPath)
	}
	c := path.Clean(p)
	if c == "." || !filepath.IsLocal(filepath.FromSlash(c)) {
		return "", fmt.Errorf("%q: %w", p, ErrBadPath)
	}
	return filepath.Join(s.root, filepath.FromSlash(c)), nil
}

// Commit makes the staged local directory the checkpoint dest. It fsyncs
// every file and directory in staged, then renames staged onto dest and
// fsyncs the two parent directories, creating dest's parents as needed.
// The fsyncs of each step are issued at once (fsutil.SyncPaths), so that
// the filesystem can serve them with one journal commit. If the parents'
// fsync fails, the rename is undone. When staged is on another filesystem
// it copies staged to a temporary name next to dest, fsyncs the copy,
// renames it onto dest and removes staged.
//
// Checkpoints are immutable: if dest exists the error wraps fs.ErrExist.
// On success the staged directory is gone; on error it is left in place.
func (s *Store) Commit(ctx context.Context, staged, dest string) error {
	dst, err := s.abs(dest)
	if err != nil {
		return fmt.Errorf("commit checkpoint: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	info, err := os.Lstat(staged)
	if err != nil {
		return fmt.Errorf("commit checkpoint %s: staged: %w", dest, err)
	}
	if !info.IsDir() {
		return fmt.Errorf("commit checkpoint %s: staged %s is not a directory", dest, staged)
	}
	if err := notExist(dst); err != nil {
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	parent := filepath.Dir(dst)
	if err := s.mkdirAll(parent); err != nil {
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	if s.durable {
		paths, err := fsutil.TreePaths(staged, true)
		if err == nil {
			err = s.sync(paths)
		}
		if err != nil {
			return fmt.Errorf("commit checkpoint %s: %w", dest, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	err = s.rename(staged, dst)
	if errors.Is(err, syscall.EXDEV) {
		return s.commitByCopy(ctx, staged, dst, dest)
	}
	if err != nil {
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	if !s.durable {
		return nil
	}
	parents := []string{parent}
	if from := filepath.Dir(staged); from != parent {
		parents = append(parents, from)
	}
	if err := s.sync(parents); err != nil {
		// The rename may not be durable: undo it rather than leave dest
		// committed after an error, which would also stop the same
		// checkpoint index from being committed again.
		if uerr := s.rename(dst, staged); uerr != nil {
			err = errors.Join(err, fmt.Errorf("undo the rename: %w", uerr))
		}
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	return nil
}

// commitByCopy commits staged onto dst when a rename cannot cross
// filesystems: copy to a temporary name next to dst, fsync the copy,
// rename it onto dst, remove staged.
func (s *Store) commitByCopy(ctx context.Context, staged, dst, dest string) error {
	tmp := tempName(dst, tmpPrefix)
	err := fsutil.CopyTree(staged, tmp)
	if err == nil && s.durable {
		err = fsutil.SyncTree(tmp)
	}
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = s.rename(tmp, dst)
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	if err := s.syncDir(filepath.Dir(dst)); err != nil {
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	// dest is committed; a staged directory that cannot be removed is a
	// leftover, not a failed commit.
	_ = os.RemoveAll(staged)
	return nil
}

// CommitFiles commits the checkpoint dest from a stream of files
// (hone.FileCommitter): it writes and fsyncs each file in a temporary
// directory next to dest, fsyncs the directories, then renames the
// temporary directory onto dest, so dest appears complete or not at all.
// A cancelled ctx or a failing reader stops it; the temporary directory is
// then removed (a crash leaves it as a leftover). If dest exists the error
// wraps fs.ErrExist.
func (s *Store) CommitFiles(ctx context.Context, dest string, files iter.Seq2[string, io.Reader]) error {
	dst, err := s.abs(dest)
	if err != nil {
		return fmt.Errorf("commit checkpoint: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	if err := notExist(dst); err != nil {
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	parent := filepath.Dir(dst)
	if err := s.mkdirAll(parent); err != nil {
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	tmp := tempName(dst, tmpPrefix)
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	err = s.writeFiles(ctx, tmp, files)
	if err == nil && s.durable {
		err = fsutil.SyncDirs(tmp)
	}
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = notExist(dst)
	}
	if err == nil {
		err = s.rename(tmp, dst)
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	if err := s.syncDir(parent); err != nil {
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	return nil
}

// writeFiles writes the stream of files under dir, fsyncing each unless
// NoSync.
func (s *Store) writeFiles(ctx context.Context, dir string, files iter.Seq2[string, io.Reader]) error {
	for name, r := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := hone.CheckFileName(name); err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return fmt.Errorf("file %s: %w", name, err)
		}
		_, err = io.Copy(f, ctxReader{ctx, r})
		if err == nil && s.durable {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("file %s: %w", name, err)
		}
	}
	return nil
}

// ctxReader is r that fails with ctx's error once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Link makes dest a clone of the committed checkpoint src: it hard-links
// every file of src into a temporary directory next to dest, fsyncs the new
// directories, and renames the temporary directory onto dest. Files that
// cannot be hard-linked (another filesystem, no link support) are copied
// and fsynced instead. If src is missing the error wraps fs.ErrNotExist; if
// dest exists it wraps fs.ErrExist.
func (s *Store) Link(ctx context.Context, src, dest string) error {
	from, err := s.abs(src)
	if err != nil {
		return fmt.Errorf("link checkpoint: %w", err)
	}
	to, err := s.abs(dest)
	if err != nil {
		return fmt.Errorf("link checkpoint: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("link checkpoint %s to %s: %w", src, dest, err)
	}
	info, err := os.Stat(from)
	if err != nil {
		return fmt.Errorf("link checkpoint %s: %w", src, err)
	}
	if !info.IsDir() {
		return fmt.Errorf("link checkpoint %s: not a directory", src)
	}
	if err := notExist(to); err != nil {
		return fmt.Errorf("link checkpoint %s to %s: %w", src, dest, err)
	}
	if err := s.mkdirAll(filepath.Dir(to)); err != nil {
		return fmt.Errorf("link checkpoint %s to %s: %w", src, dest, err)
	}
	tmp := tempName(to, tmpPrefix)
	err = s.linkTree(from, tmp)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("link checkpoint %s to %s: %w", src, dest, err)
	}
	if err := s.rename(tmp, to); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("link checkpoint %s to %s: %w", src, dest, err)
	}
	if err := s.syncDir(filepath.Dir(to)); err != nil {
		return fmt.Errorf("link checkpoint %s to %s: %w", src, dest, err)
	}
	return nil
}

// linkTree recreates the tree src at dst with hard links, falling back to
// copies after the first failed link. Unless NoSync, it fsyncs what it
// created that is not already durable: the directories and copied files.
func (s *Store) linkTree(src, dst string) error {
	var copied []string
	linkFailed := false
	err := fsutil.CloneTree(src, dst, func(from, to string) error {
		if !linkFailed {
			if s.link(from, to) == nil {
				return nil
			}
			linkFailed = true
		}
		copied = append(copied, to)
		return fsutil.CopyFile(from, to)
	})
	if err != nil || !s.durable {
		return err
	}
	for _, p := range copied {
		if err := fsutil.SyncFile(p); err != nil {
			return err
		}
	}
	return fsutil.SyncDirs(dst)
}

// Delete removes the checkpoint (or leftover) at p. A committed-looking
// directory is first renamed to a trash name, so a crash during the
// removal leaves a recognisable leftover rather than a half-deleted
// checkpoint. Deleting a missing path is not an error.
func (s *Store) Delete(ctx context.Context, p string) error {
	abs, err := s.abs(p)
	if err != nil {
		return fmt.Errorf("delete checkpoint: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete checkpoint %s: %w", p, err)
	}
	if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("delete checkpoint %s: %w", p, err)
	}
	if !isLeftover(path.Clean(p)) {
		trash := tempName(abs, trashPrefix)
		if err := s.rename(abs, trash); err != nil {
			return fmt.Errorf("delete checkpoint %s: %w", p, err)
		}
		if err := s.syncDir(filepath.Dir(abs)); err != nil {
			return fmt.Errorf("delete checkpoint %s: %w", p, err)
		}
		abs = trash
	}
	if err := os.RemoveAll(abs); err != nil {
		return fmt.Errorf("delete checkpoint %s: %w", p, err)
	}
	return nil
}

// LocalDir returns the absolute directory of the checkpoint p. If it does
// not exist the error wraps fs.ErrNotExist. The directory's files must not
// be modified: linked checkpoints share them.
func (s *Store) LocalDir(ctx context.Context, p string) (string, error) {
	abs, err := s.abs(p)
	if err != nil {
		return "", fmt.Errorf("checkpoint dir: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("checkpoint dir %s: %w", p, err)
	}
	info, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("checkpoint dir %s: %w", p, err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("checkpoint dir %s: not a directory", p)
	}
	return abs, nil
}

// List returns the committed checkpoints directly inside trialDir, sorted
// by index, and the leftovers there: the entries of its staging directory
// and any temporary or trash directory. Returned paths are store paths
// (trialDir joined with the name). trialDir "." lists the experiment
// directory itself (leftovers of deleted trial directories). A missing
// trialDir has neither.
func (s *Store) List(ctx context.Context, trialDir string) (committed, leftovers []string, err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("list checkpoints %s: %w", trialDir, err)
	}
	dir := s.root
	rel := path.Clean(trialDir)
	if rel != "." {
		if dir, err = s.abs(trialDir); err != nil {
			return nil, nil, fmt.Errorf("list checkpoints: %w", err)
		}
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list checkpoints %s: %w", trialDir, err)
	}
	type indexed struct {
		i int
		p string
	}
	var cps []indexed
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, tmpPrefix), strings.HasPrefix(name, trashPrefix):
			leftovers = append(leftovers, path.Join(rel, name))
		case name == StagingDirName && e.IsDir():
			staged, err := os.ReadDir(filepath.Join(dir, name))
			if err != nil {
				return nil, nil, fmt.Errorf("list checkpoints %s: %w", trialDir, err)
			}
			for _, st := range staged {
				leftovers = append(leftovers, path.Join(rel, name, st.Name()))
			}
		case e.IsDir():
			if i, ok := hone.CheckpointIndex(name); ok {
				cps = append(cps, indexed{i, path.Join(rel, name)})
			}
		}
	}
	slices.SortFunc(cps, func(a, b indexed) int { return cmp.Compare(a.i, b.i) })
	for _, c := range cps {
		committed = append(committed, c.p)
	}
	return committed, leftovers, nil
}

// isLeftover reports whether the clean store path p names a leftover.
func isLeftover(p string) bool {
	base := path.Base(p)
	return strings.HasPrefix(base, tmpPrefix) || strings.HasPrefix(base, trashPrefix) ||
		base == StagingDirName || path.Base(path.Dir(p)) == StagingDirName
}

// tempName returns a fresh name next to p: <dir>/<prefix><base>-<random>.
func tempName(p, prefix string) string {
	return filepath.Join(filepath.Dir(p), prefix+filepath.Base(p)+"-"+fsutil.RandomSuffix())
}

// notExist returns nil if p does not exist, an error wrapping fs.ErrExist
// if it does, or the error that prevented knowing.
func notExist(p string) error {
	_, err := os.Lstat(p)
	switch {
	case err == nil:
		return fmt.Errorf("%s: %w", p, fs.ErrExist)
	case errors.Is(err, fs.ErrNotExist):
		return nil
	}
	return err
}

// mkdirAll creates dir and its missing parents and, unless NoSync, fsyncs
// the parent of every directory it created.
func (s *Store) mkdirAll(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := s.syncDir(filepath.Dir(missing[i])); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) syncDir(dir string) error {
	if !s.durable {
		return nil
	}
	return fsutil.SyncDir(dir)
}

// ListTop returns the names of the entries at the top of the store's root
// (hone.TopLister).
func (s *Store) ListTop(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list %s: %w", s.root, err)
	}
	entries, err := os.ReadDir(s.root)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", s.root, err)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

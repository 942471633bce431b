// Package fsutil holds durable-write helpers for local files and directories:
// atomic file replacement (temp file → write → fsync → rename → fsync dir),
// fsyncs of directories and whole trees, tree copies, and a buffered
// append-only file for line-oriented logs.
//
// None of these helpers keeps state between calls; each is safe to call
// from several goroutines on distinct paths.
package fsutil

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// SyncDir fsyncs the directory dir, which makes the creation, removal and
// renaming of its entries durable.
func SyncDir(dir string) error {
	if err := syncPath(dir); err != nil {
		return fmt.Errorf("sync dir: %w", err)
	}
	return nil
}

// SyncFile fsyncs the file (or directory) p, opened read-only, which makes
// its content and metadata durable.
func SyncFile(p string) error {
	if err := syncPath(p); err != nil {
		return fmt.Errorf("sync file: %w", err)
	}
	return nil
}

func syncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// SyncTree fsyncs every regular file and every directory under root,
// root included, several at a time (SyncPaths). Symbolic links are not
// followed: their directory entries are made durable by the fsync of the
// directory holding them.
func SyncTree(root string) error { return syncWalk(root, true) }

// SyncDirs fsyncs every directory under root, root included, but no file:
// enough to make a tree of hard links to durable files durable.
func SyncDirs(root string) error { return syncWalk(root, false) }

func syncWalk(root string, files bool) error {
	paths, err := TreePaths(root, files)
	if err != nil {
		return fmt.Errorf("sync tree: %w", err)
	}
	if err := SyncPaths(paths); err != nil {
		return fmt.Errorf("sync tree: %w", err)
	}
	return nil
}

// TreePaths returns every directory under root, root included, and, if
// files, every regular file: what SyncTree (or SyncDirs) fsyncs. Symbolic
// links are not followed.
func TreePaths(root string, files bool) ([]string, error) {
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || (files && d.Type().IsRegular()) {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return paths, nil
}

// syncAtOnce is how many fsyncs SyncPaths has in flight at a time: enough
// for one journal commit of the filesystem to serve them all, few enough
// that a tree of many files does not hold a thread per file.
const syncAtOnce = 16

// SyncPaths fsyncs every file or directory in paths, up to syncAtOnce at a
// time, and returns once all are done. Fsyncs issued together share the
// filesystem's journal commits and the disk's cache flushes, where fsyncs
// issued one after another pay one commit each. The error joins every
// failure, each naming its path.
func SyncPaths(paths []string) error {
	if len(paths) == 1 {
		return syncPath(paths[0])
	}
	errs := make([]error, len(paths))
	sem := make(chan struct{}, syncAtOnce)
	var wg sync.WaitGroup
	for i, p := range paths {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = syncPath(p)
			<-sem
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// RandomSuffix returns 8 random hex characters, for temporary names that
// must not collide with names chosen by other processes.
func RandomSuffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// PendingFile is a file being written under a temporary name in the
// directory of its final path; Commit moves it into place atomically, so a
// reader (or a crash) sees either the old file or the complete new one.
// A PendingFile is not safe for concurrent use.
type PendingFile struct {
	f    *os.File
	path string
	done bool
}

// NewPendingFile creates a temporary file next to path (named
// ".<base>.tmp-<random>") that will replace path on Commit. The caller
// must call Commit, CommitNoSync or Cleanup.
func NewPendingFile(path string, perm fs.FileMode) (*PendingFile, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create temp file: %w", err)
	}
	if err := f.Chmod(perm); err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return nil, fmt.Errorf("create temp file: %w", err)
	}
	return &PendingFile{f: f, path: path}, nil
}

// Write appends p to the pending file.
func (p *PendingFile) Write(b []byte) (int, error) { return p.f.Write(b) }

// Commit fsyncs the pending file, renames it onto the final path and
// fsyncs the directory. After it returns nil the new content is durable.
// On error the temporary file is removed and the final path is untouched.
func (p *PendingFile) Commit() error { return p.commit(true) }

// CommitNoSync is Commit without the fsyncs: the replacement is atomic for
// readers but not durable across a machine crash.
func (p *PendingFile) CommitNoSync() error { return p.commit(false) }

func (p *PendingFile) commit(durable bool) error {
	if p.done {
		return errors.New("commit file: already committed or cleaned up")
	}
	p.done = true
	tmp := p.f.Name()
	var err error
	if durable {
		err = p.f.Sync()
	}
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p.path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("commit file %s: %w", p.path, err)
	}
	if durable {
		if err := SyncDir(filepath.Dir(p.path)); err != nil {
			return fmt.Errorf("commit file %s: %w", p.path, err)
		}
	}
	return nil
}

// Cleanup closes and removes the temporary file unless Commit already ran;
// it is safe to defer right after NewPendingFile.
func (p *PendingFile) Cleanup() {
	if p.done {
		return
	}
	p.done = true
	_ = p.f.Close()
	_ = os.Remove(p.f.Name())
}

// WriteFileAtomic replaces path with data durably: it writes a temporary
// file in the same directory, fsyncs it, renames it onto path and fsyncs
// the directory. A crash at any point leaves either the old content or the
// new one, plus possibly a ".<base>.tmp-*" file.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	return writeAtomic(path, data, perm, true)
}

// WriteFileAtomicNoSync is WriteFileAtomic without the fsyncs: atomic for
// readers, not durable across a machine crash.
func WriteFileAtomicNoSync(path string, data []byte, perm fs.FileMode) error {
	return writeAtomic(path, data, perm, false)
}

func writeAtomic(path string, data []byte, perm fs.FileMode, durable bool) error {
	p, err := NewPendingFile(path, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer p.Cleanup()
	if _, err := p.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return p.commit(durable)
}

// CopyTree copies the directory tree src to dst, which must not exist:
// directories, regular files (with their permission bits) and symbolic
// links (as links). Other file types are an error. Nothing is fsynced; use
// SyncTree on dst when durability matters. On error dst may be partly
// written.
func CopyTree(src, dst string) error { return CloneTree(src, dst, CopyFile) }

// CloneTree is CopyTree with file creating each regular file: it is called
// with the source and target paths, and may copy, hard-link or otherwise
// make target.
func CloneTree(src, dst string, file func(src, dst string) error) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("copy tree: %w", err)
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return fmt.Errorf("copy tree: %w", err)
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			info, err := d.Info()
			if err != nil {
				return fmt.Errorf("copy tree: %w", err)
			}
			if err := os.Mkdir(target, info.Mode().Perm()|0o700); err != nil {
				return fmt.Errorf("copy tree: %w", err)
			}
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return fmt.Errorf("copy tree: %w", err)
			}
			if err := os.Symlink(link, target); err != nil {
				return fmt.Errorf("copy tree: %w", err)
			}
		case d.Type().IsRegular():
			if err := file(p, target); err != nil {
				return fmt.Errorf("copy tree: %w", err)
			}
		default:
			return fmt.Errorf("copy tree: %s: unsupported file type %v", p, d.Type())
		}
		return nil
	})
}

// CopyFile copies the regular file src to dst, which must not exist,
// keeping src's permission bits. Nothing is fsynced.
func CopyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy file: %w", err)
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return fmt.Errorf("copy file: %w", err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return fmt.Errorf("copy file: %w", err)
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("copy file %s: %w", src, err)
	}
	return nil
}

package dashboard

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// errOutside is the error for a path that leaves the experiment directory.
var errOutside = errors.New("the path leaves the experiment directory")

// confine resolves rel, a slash-separated path relative to the experiment
// directory root, to a path on disk inside root. It refuses absolute
// paths, any ".." element, backslashes and NUL bytes before looking at the
// disk, and then a path whose symbolic links lead outside root. A path
// that does not exist is an error wrapping fs.ErrNotExist.
func confine(root, rel string) (string, error) {
	if strings.ContainsAny(rel, "\\\x00") {
		return "", fmt.Errorf("path %q: %w", rel, errOutside)
	}
	if strings.HasPrefix(rel, "/") || filepath.IsAbs(rel) {
		return "", fmt.Errorf("path %q: absolute paths are refused: %w", rel, errOutside)
	}
	if slices.Contains(strings.Split(rel, "/"), "..") {
		return "", fmt.Errorf("path %q: %w", rel, errOutside)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("experiment directory: %w", err)
	}
	p, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		// Not the error itself, which names where links led: a missing
		// file, or a path through one (ENOTDIR), is not there.
		return "", fmt.Errorf("path %q: %w", rel, fs.ErrNotExist)
	}
	in, err := filepath.Rel(realRoot, p)
	if err != nil || in == ".." || strings.HasPrefix(in, ".."+string(filepath.Separator)) || filepath.IsAbs(in) {
		return "", fmt.Errorf("path %q: a symbolic link leads out: %w", rel, errOutside)
	}
	return p, nil
}

// tailFile returns at most the last limit bytes of the regular file at p,
// starting after a newline when it had to cut, and the file's size.
func tailFile(p string, limit int64) ([]byte, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !info.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s: not a regular file", filepath.Base(p))
	}
	size := info.Size()
	from := max(0, size-limit)
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, 0, err
	}
	b, err := io.ReadAll(io.LimitReader(f, size-from))
	if err != nil {
		return nil, 0, err
	}
	if from > 0 {
		if i := strings.IndexByte(string(b), '\n'); i >= 0 && i+1 < len(b) {
			b = b[i+1:]
		}
	}
	return b, size, nil
}

// Entry is one entry of a directory listing.
type Entry struct {
	Name string `json:"name"`
	// Dir says it is a directory.
	Dir bool `json:"dir"`
	// Size is a file's size in bytes, 0 for a directory.
	Size int64 `json:"size"`
}

// listDir lists the directory at p, directories first, then by name.
func listDir(p string) ([]Entry, error) {
	des, err := os.ReadDir(p)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(des))
	for _, d := range des {
		e := Entry{Name: d.Name(), Dir: d.IsDir()}
		if info, err := d.Info(); err == nil && !d.IsDir() {
			e.Size = info.Size()
		}
		if d.Type()&fs.ModeSymlink != 0 {
			continue // not followed: it may lead anywhere
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int {
		if a.Dir != b.Dir {
			if a.Dir {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

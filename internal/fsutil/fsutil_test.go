package fsutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dirNames returns the sorted names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFileAtomic(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(string, []byte, fs.FileMode) error
	}{
		{"durable", WriteFileAtomic},
		{"nosync", WriteFileAtomicNoSync},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "params.json")
			if err := tc.write(p, []byte("one"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := tc.write(p, []byte("two"), 0o600); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, p); got != "two" {
				t.Fatalf("content = %q, want %q", got, "two")
			}
			info, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm() != 0o600 {
				t.Errorf("perm = %v, want 0600", info.Mode().Perm())
			}
			if names := dirNames(t, dir); len(names) != 1 {
				t.Errorf("directory holds %v, want only params.json", names)
			}
		})
	}
}

func TestWriteFileAtomicMissingDir(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nope", "f")
	err := WriteFileAtomic(p, []byte("x"), 0o644)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want ErrNotExist", err)
	}
}

func TestPendingFileCleanup(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	pf, err := NewPendingFile(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pf.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	pf.Cleanup()
	pf.Cleanup() // idempotent
	if got := readFile(t, p); got != "old" {
		t.Fatalf("content = %q after Cleanup, want old", got)
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Errorf("directory holds %v after Cleanup", names)
	}
	if err := pf.Commit(); err == nil {
		t.Error("Commit after Cleanup succeeded")
	}
}

func TestSyncTreeAndDir(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, filepath.Join(root, "a", "b", "c.bin"), "c")
	mustWrite(t, filepath.Join(root, "d.txt"), "d")
	if err := os.Symlink("d.txt", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := SyncTree(root); err != nil {
		t.Fatal(err)
	}
	if err := SyncDirs(root); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(root); err != nil {
		t.Fatal(err)
	}
	if err := SyncFile(filepath.Join(root, "d.txt")); err != nil {
		t.Fatal(err)
	}
	if err := SyncTree(filepath.Join(root, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("SyncTree(missing) = %v, want ErrNotExist", err)
	}
	if err := SyncDir(filepath.Join(root, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("SyncDir(missing) = %v, want ErrNotExist", err)
	}
}

// TestSyncPaths checks that SyncPaths fsyncs more paths than it has in
// flight at a time, and that its error names every path that failed.
func TestSyncPaths(t *testing.T) {
	root := t.TempDir()
	var paths []string
	for i := range 3 * syncAtOnce {
		p := filepath.Join(root, "d", strings.Repeat("f", i+1))
		mustWrite(t, p, p)
		paths = append(paths, p)
	}
	paths = append(paths, filepath.Join(root, "d"), root)
	if err := SyncPaths(paths); err != nil {
		t.Fatalf("SyncPaths(%d paths): %v", len(paths), err)
	}
	if err := SyncPaths(nil); err != nil {
		t.Errorf("SyncPaths(nil) = %v", err)
	}
	missing := []string{filepath.Join(root, "gone1"), filepath.Join(root, "gone2")}
	err := SyncPaths(append([]string{root}, append(missing, paths[0])...))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("SyncPaths with missing paths = %v, want ErrNotExist", err)
	}
	for _, m := range missing {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("error %q does not name %s", err, m)
		}
	}
	got, err := TreePaths(root, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(paths) {
		t.Errorf("TreePaths(files) = %d paths, want %d", len(got), len(paths))
	}
	if dirs, err := TreePaths(root, false); err != nil || len(dirs) != 2 {
		t.Errorf("TreePaths(dirs only) = %q, %v; want root and d", dirs, err)
	}
}

func mustWrite(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o640); err != nil {
		t.Fatal(err)
	}
}

func TestCopyTree(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	mustWrite(t, filepath.Join(src, "model", "weights.bin"), "0123456789")
	mustWrite(t, filepath.Join(src, "state.json"), `{"step":3}`)
	if err := os.Symlink("state.json", filepath.Join(src, "latest")); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "dst")
	if err := CopyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dst, "model", "weights.bin")); got != "0123456789" {
		t.Errorf("weights = %q", got)
	}
	if got := readFile(t, filepath.Join(dst, "latest")); got != `{"step":3}` {
		t.Errorf("through link = %q", got)
	}
	info, err := os.Stat(filepath.Join(dst, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o640 {
		t.Errorf("perm = %v, want 0640", info.Mode().Perm())
	}
	if err := CopyTree(src, dst); !errors.Is(err, fs.ErrExist) {
		t.Errorf("CopyTree onto existing = %v, want ErrExist", err)
	}
}

func TestCloneTreeWithLinks(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	mustWrite(t, filepath.Join(src, "a", "b"), "b")
	mustWrite(t, filepath.Join(src, "c"), "c")
	dst := filepath.Join(t.TempDir(), "dst")
	var files []string
	err := CloneTree(src, dst, func(from, to string) error {
		files = append(files, filepath.Base(to))
		return os.Link(from, to)
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(files, ",") != "b,c" {
		t.Errorf("file called for %v", files)
	}
	x, _ := os.Stat(filepath.Join(src, "a", "b"))
	y, _ := os.Stat(filepath.Join(dst, "a", "b"))
	if !os.SameFile(x, y) {
		t.Error("clone is not a hard link")
	}
	boom := errors.New("boom")
	if err := CloneTree(src, filepath.Join(t.TempDir(), "x"), func(string, string) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("CloneTree error = %v, want boom", err)
	}
}

func TestAppendFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "result.json")
	a, err := OpenAppend(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	a.WriteString("one\n")
	if got := readFile(t, p); got != "" {
		t.Fatalf("content before Flush = %q, want empty", got)
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); got != "one\n" {
		t.Fatalf("content after Flush = %q", got)
	}
	a.Write([]byte("two\n"))
	if err := a.Sync(); err != nil {
		t.Fatal(err)
	}
	a.WriteString("three\n")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); got != "one\ntwo\nthree\n" {
		t.Fatalf("content after Close = %q", got)
	}
}

func TestOpenAppendTrimsPartialLine(t *testing.T) {
	long := strings.Repeat("x", 10000)
	for _, tc := range []struct{ name, before, want string }{
		{"empty", "", "new\n"},
		{"complete", "a\nb\n", "a\nb\nnew\n"},
		{"partial", "a\nb\n{\"trunc", "a\nb\nnew\n"},
		{"only partial", "{\"trunc", "new\n"},
		{"long partial", "a\n" + long, "a\nnew\n"},
		{"long line then partial", long + "\n" + long, long + "\nnew\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "log")
			if err := os.WriteFile(p, []byte(tc.before), 0o644); err != nil {
				t.Fatal(err)
			}
			a, err := OpenAppend(p, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			a.WriteString("new\n")
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, p); got != tc.want {
				t.Errorf("content = %.40q…, want %.40q…", got, tc.want)
			}
		})
	}
}

func TestRandomSuffix(t *testing.T) {
	a, b := RandomSuffix(), RandomSuffix()
	if len(a) != 8 || a == b {
		t.Errorf("RandomSuffix() = %q, %q", a, b)
	}
}

// TestAppendFileFailedFlush: a write that fails after writing part of the
// buffer (a full disk) is undone, the buffer is kept, and the next Flush
// writes it whole, once.
func TestAppendFileFailedFlush(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	a, err := OpenAppend(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	a.WriteString("one\n")
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	full := errors.New("no space left on device")
	a.SetWriteFunc(func(f *os.File, b []byte) (int, error) {
		n, _ := f.Write(b[:len(b)/2])
		return n, full
	})
	a.WriteString("two\nthree\n")
	if err := a.Flush(); !errors.Is(err, full) {
		t.Fatalf("Flush = %v, want the write's error", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "one\n" {
		t.Fatalf("after the failed flush the file holds %q", b)
	}
	if a.Buffered() != len("two\nthree\n") {
		t.Fatalf("%d bytes buffered, want the lines that failed", a.Buffered())
	}
	a.SetWriteFunc(nil)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "one\ntwo\nthree\n" {
		t.Fatalf("after the retried flush the file holds %q", b)
	}
}

package callback

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hone-tune/hone"
)

// iterations returns the training iterations of result.json's rows and
// progress.csv's records.
func iterations(t *testing.T, trialDir string) (js, cs []any) {
	t.Helper()
	for _, row := range readResults(t, filepath.Join(trialDir, ResultFile)) {
		js = append(js, row[hone.FieldTrainingIteration])
	}
	recs := readCSV(t, filepath.Join(trialDir, ProgressFile))
	col := -1
	for i, h := range recs[0] {
		if h == hone.FieldTrainingIteration {
			col = i
		}
	}
	for _, r := range recs[1:] {
		cs = append(cs, r[col])
	}
	return js, cs
}

// TestFlushKeepsRowsWhenWriteFails injects a write that fails half way
// with ENOSPC: FlushResults returns the trial's error, the bytes the
// failed write left are cut off, the rows stay buffered, and the next
// FlushResults writes each of them exactly once.
func TestFlushKeepsRowsWhenWriteFails(t *testing.T) {
	dir := t.TempDir()
	f := NewTrialFiles(dir, NoSync())
	failing := true
	f.SetWriteFunc(func(file *os.File, p []byte) (int, error) {
		if failing && len(p) > 1 {
			n, _ := file.Write(p[:len(p)/2]) // what a full disk lets through
			return n, &fs.PathError{Op: "write", Path: file.Name(), Err: syscall.ENOSPC}
		}
		return file.Write(p)
	})
	tr := &hone.Trial{ID: "t1", Dir: "t1", Config: hone.Config{"a": 1}}
	f.OnTrialStart(tr)
	f.OnTrialResult(tr, result(1, map[string]any{"loss": 1.0}))
	failing = false
	if err := f.FlushResults(false); err != nil {
		t.Fatal(err)
	}
	failing = true
	f.OnTrialResult(tr, result(2, map[string]any{"loss": 0.5}))
	f.OnTrialResult(tr, result(3, map[string]any{"loss": 0.25}))
	err := f.FlushResults(true)
	var te *hone.TrialError
	if !errors.As(err, &te) || te.TrialID != "t1" || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "result.json: no space left on device") {
		t.Fatalf("FlushResults on a full disk = %v, want trial t1's ENOSPC naming result.json", err)
	}
	if js, cs := iterations(t, filepath.Join(dir, "t1")); len(js) != 1 || len(cs) != 1 {
		t.Fatalf("after the failed flush the files hold %v and %v, want only the first row (no partial one)", js, cs)
	}
	failing = false
	if err := f.FlushResults(true); err != nil {
		t.Fatalf("FlushResults once there is space: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	js, cs := iterations(t, filepath.Join(dir, "t1"))
	if want := []any{1.0, 2.0, 3.0}; !reflect.DeepEqual(js, want) {
		t.Errorf("result.json iterations %v, want %v", js, want)
	}
	if want := []any{"1", "2", "3"}; !reflect.DeepEqual(cs, want) {
		t.Errorf("progress.csv iterations %v, want %v", cs, want)
	}
}

// TestFlushOnFullFilesystem does the same on a real full file system: a
// 1 MiB tmpfs filled up by another file (root only).
func TestFlushOnFullFilesystem(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED: mounting a small tmpfs needs root; TestFlushKeepsRowsWhenWriteFails covers the same with an injected write")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("SKIPPED: cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	f := NewTrialFiles(mnt)
	tr := &hone.Trial{ID: "t1", Dir: "t1", Config: hone.Config{"a": 1}}
	f.OnTrialStart(tr)
	pad := strings.Repeat("x", 200)
	f.OnTrialResult(tr, result(1, map[string]any{"loss": 1.0, "pad": pad}))
	if err := f.FlushResults(true); err != nil {
		t.Fatal(err)
	}
	fill(t, filepath.Join(mnt, "filler"))
	n := 1
	var err error
	for err == nil && n < 10000 { // rows until the pages the files hold are full
		n++
		f.OnTrialResult(tr, result(n, map[string]any{"loss": 1 / float64(n), "pad": pad}))
		err = errors.Join(append(f.TakeErrors(), f.FlushResults(true))...)
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("FlushResults on a full tmpfs = %v after %d rows, want ENOSPC", err, n)
	}
	if err := os.Remove(filepath.Join(mnt, "filler")); err != nil {
		t.Fatal(err)
	}
	if err := f.FlushResults(true); err != nil {
		t.Fatalf("FlushResults once there is space: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	js, cs := iterations(t, filepath.Join(mnt, "t1"))
	if len(js) != n || len(cs) != n {
		t.Fatalf("%d rows reported; result.json holds %d, progress.csv %d", n, len(js), len(cs))
	}
	for i := range n {
		if js[i] != float64(i+1) || cs[i] != strconv.Itoa(i+1) {
			t.Fatalf("row %d: result.json iteration %v, progress.csv %v", i, js[i], cs[i])
		}
	}
}

// fill writes p until the file system is full.
func fill(t *testing.T, p string) {
	t.Helper()
	file, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for _, size := range []int{64 << 10, 4 << 10, 1} {
		buf := make([]byte, size)
		for {
			if _, err := file.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
	}
}

// TestKeepResults: rows beyond the first n are cut from both files (the
// journal they came from was cut short), a larger n changes nothing, and a
// trial without files is no error.
func TestKeepResults(t *testing.T) {
	dir := t.TempDir()
	f := NewTrialFiles(dir, NoSync())
	tr := &hone.Trial{ID: "t1", Dir: "t1", Config: hone.Config{"a": 1}}
	f.OnTrialStart(tr)
	for it := 1; it <= 5; it++ {
		m := map[string]any{"loss": 1 / float64(it)}
		if it == 4 {
			m["text"] = "two\nlines" // a quoted newline inside a CSV record
		}
		f.OnTrialResult(tr, result(it, m))
	}
	if err := f.FlushResults(false); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{10, 4, 2, 2, 0} {
		if err := f.KeepResults(tr, n); err != nil {
			t.Fatal(err)
		}
		js, cs := iterations(t, filepath.Join(dir, "t1"))
		want := min(n, 5)
		if len(js) != want || len(cs) != want {
			t.Fatalf("KeepResults(%d): result.json has %d rows, progress.csv %d; want %d", n, len(js), len(cs), want)
		}
		for i := range want {
			if js[i] != float64(i+1) || cs[i] != strconv.Itoa(i+1) {
				t.Fatalf("KeepResults(%d): row %d is iteration %v / %v", n, i, js[i], cs[i])
			}
		}
	}
	// The trial goes on after the cut: rows append after the kept ones.
	f.OnTrialResult(tr, result(1, map[string]any{"loss": 2.0}))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if js, cs := iterations(t, filepath.Join(dir, "t1")); len(js) != 1 || len(cs) != 1 {
		t.Fatalf("after the cut and one more result: %v, %v", js, cs)
	}
	if err := f.KeepResults(&hone.Trial{ID: "t2", Dir: "none"}, 3); err != nil {
		t.Fatalf("KeepResults of a trial without files: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("KeepResults created the directory of a trial without files: %v", err)
	}
}

// TestRowsLostStopTheTrialsFiles: when a trial's files close with rows
// that could not be written (they are dropped), no later row of that
// trial is written in this process, so the files stay a prefix of its
// results for resume to complete; other trials are not affected.
func TestRowsLostStopTheTrialsFiles(t *testing.T) {
	dir := t.TempDir()
	f := NewTrialFiles(dir, NoSync())
	failing := false
	f.SetWriteFunc(func(file *os.File, p []byte) (int, error) {
		if failing && strings.Contains(file.Name(), "bad") {
			return 0, &fs.PathError{Op: "write", Path: file.Name(), Err: syscall.EIO}
		}
		return file.Write(p)
	})
	bad := &hone.Trial{ID: "bad", Dir: "bad"}
	good := &hone.Trial{ID: "good", Dir: "good"}
	for _, tr := range []*hone.Trial{bad, good} {
		f.OnTrialStart(tr)
		f.OnTrialResult(tr, result(1, map[string]any{"loss": 1.0}))
	}
	if err := f.FlushResults(false); err != nil {
		t.Fatal(err)
	}
	failing = true
	f.OnTrialResult(bad, result(2, map[string]any{"loss": 0.5}))
	if err := f.FlushResults(false); !errors.Is(err, syscall.EIO) {
		t.Fatalf("FlushResults = %v, want EIO", err)
	}
	f.OnTrialError(bad, errors.New("failed")) // closes its files: row 2 is dropped
	failing = false
	if errs := f.TakeErrors(); len(errs) == 0 || !errors.Is(errors.Join(errs...), syscall.EIO) {
		t.Fatalf("closing with a dropped row: errors %v, want EIO", errs)
	}
	f.OnTrialStart(bad) // a retry in the same process
	f.OnTrialResult(bad, result(1, map[string]any{"loss": 0.9}))
	var te *hone.TrialError
	if errs := f.TakeErrors(); len(errs) == 0 || !errors.As(errs[0], &te) || te.TrialID != "bad" || !strings.Contains(errs[0].Error(), "before a resume") {
		t.Fatalf("writing after dropped rows: errors %v, want bad's error", errs)
	}
	f.OnTrialResult(good, result(2, map[string]any{"loss": 0.5}))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if js, _ := iterations(t, filepath.Join(dir, "bad")); !reflect.DeepEqual(js, []any{1.0}) {
		t.Errorf("bad trial's result.json: %v, want only row 1", js)
	}
	if js, _ := iterations(t, filepath.Join(dir, "good")); !reflect.DeepEqual(js, []any{1.0, 2.0}) {
		t.Errorf("good trial's result.json: %v", js)
	}
}

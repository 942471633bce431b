package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const testJournal = "experiment_state.jsonl"

func appendFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func newMirror(t *testing.T, s *Store, dir string) *Mirror {
	t.Helper()
	m, err := s.NewMirror(context.Background(), dir, MirrorOptions{Journal: testJournal})
	if err != nil {
		t.Fatalf("NewMirror: %v", err)
	}
	return m
}

// downloaded returns the journal the bucket holds.
func downloaded(t *testing.T, s *Store) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "j")
	if _, err := s.DownloadJournal(context.Background(), p); err != nil {
		t.Fatalf("DownloadJournal: %v", err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func objectText(t *testing.T, s *Store, k string) (string, bool) {
	t.Helper()
	b, err := s.bucket.ReadAll(context.Background(), k)
	if err != nil {
		return "", false
	}
	return string(b), true
}

func TestMirrorShipsCompleteLines(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s, dir := open(t, b.url(t))
			if ok, err := s.HasJournal(ctx); err != nil || ok {
				t.Fatalf("HasJournal of a fresh store = %v, %v", ok, err)
			}
			if _, err := s.DownloadJournal(ctx, filepath.Join(t.TempDir(), "j")); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("DownloadJournal of a fresh store: %v, want fs.ErrNotExist", err)
			}
			m := newMirror(t, s, dir)
			jp := filepath.Join(dir, testJournal)
			appendFile(t, jp, "{\"header\":1}\n{\"in\":1}\n{\"in\":2") // a line being written
			if err := m.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if got, want := string(downloaded(t, s)), "{\"header\":1}\n{\"in\":1}\n"; got != want {
				t.Fatalf("bucket's journal = %q, want the complete lines %q", got, want)
			}
			appendFile(t, jp, "}\n")
			if err := m.Close(ctx); err != nil {
				t.Fatal(err)
			}
			local, _ := os.ReadFile(jp)
			if got := downloaded(t, s); !bytes.Equal(got, local) {
				t.Fatalf("after Close the bucket's journal = %q, want the local %q", got, local)
			}
			if ok, err := s.HasJournal(ctx); err != nil || !ok {
				t.Fatalf("HasJournal = %v, %v after a sync", ok, err)
			}
		})
	}
}

func TestMirrorFiles(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s, dir := open(t, b.url(t))
			m := newMirror(t, s, dir)
			mirrored := []string{"spec.yaml", "trial_1/result.json", "trial_1/stdout.log", "trial_1/sub/x.txt"}
			skipped := []string{"hone.lock", ".hone/procs/1", "trial_1/.staging/checkpoint_000001/w", "trial_1/checkpoint_000000/w",
				"trial_1/.result.json.tmp-123", testJournal}
			for _, p := range append(append([]string{}, mirrored...), skipped...) {
				appendFile(t, filepath.Join(dir, filepath.FromSlash(p)), "v1\n")
			}
			if err := m.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			for _, p := range mirrored {
				if got, ok := objectText(t, s, p); !ok || got != "v1\n" {
					t.Errorf("object %s = %q, %v; want the local file", p, got, ok)
				}
			}
			for _, p := range skipped {
				if _, ok := objectText(t, s, p); ok {
					t.Errorf("%s was uploaded as an object; it must not be", p)
				}
			}
			appendFile(t, filepath.Join(dir, "trial_1", "result.json"), "v2\n")
			if err := m.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if got, _ := objectText(t, s, "trial_1/result.json"); got != "v1\nv2\n" {
				t.Errorf("a changed file is uploaded again: got %q", got)
			}
			// A file the mirror uploaded and that is removed goes from the
			// bucket; one it never uploaded stays.
			if err := s.bucket.WriteAll(ctx, "trial_0/result.json", []byte("old\n"), nil); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dir, "trial_1", "sub", "x.txt")); err != nil {
				t.Fatal(err)
			}
			if err := m.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if _, ok := objectText(t, s, "trial_1/sub/x.txt"); ok {
				t.Error("a file removed from the working copy is still in the bucket")
			}
			if _, ok := objectText(t, s, "trial_0/result.json"); !ok {
				t.Error("an object the mirror never uploaded was deleted")
			}
			appendFile(t, filepath.Join(dir, "trial_1", "sub", "x.txt"), "v1\n")
			if err := m.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			// Download into an empty directory: the mirrored files only,
			// filtered.
			dst := t.TempDir()
			n, err := s.DownloadFiles(ctx, dst, testJournal, []string{""})
			if err != nil || n != 1 {
				t.Fatalf("DownloadFiles of the top: %d, %v; want the spec only", n, err)
			}
			if _, err := os.Stat(filepath.Join(dst, "trial_1")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the top's download went into a trial directory: %v", err)
			}
			if n, err = s.DownloadFiles(ctx, dst, testJournal, []string{"trial_1"}); err != nil || n != 3 {
				t.Fatalf("DownloadFiles of trial_1: %d, %v; want its 3 mirrored files", n, err)
			}
			if got, _ := os.ReadFile(filepath.Join(dst, "trial_1", "result.json")); string(got) != "v1\nv2\n" {
				t.Errorf("downloaded result.json = %q", got)
			}
			if n, err = s.DownloadObjects(ctx, dst, []string{"trial_1/result.json", "trial_9/result.json"}); err != nil || n != 1 {
				t.Errorf("DownloadObjects of one present and one missing object: %d, %v", n, err)
			}
			if _, err := s.DownloadObjects(ctx, dst, []string{"../x"}); err == nil {
				t.Error("DownloadObjects of a key leaving the experiment: no error")
			}
		})
	}
}

// TestMirrorCompaction: many syncs keep the chain short and the journal
// whole, and a compaction cut short (merged segment written, old ones not
// yet deleted) still reads back exactly.
func TestMirrorCompaction(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, "mem://exp")
	m := newMirror(t, s, dir)
	jp := filepath.Join(dir, testJournal)
	longest := 0
	for i := range 300 {
		appendFile(t, jp, strings.Repeat(fmt.Sprintf("{\"in\":%d}\n", i), 1+i%7))
		if err := m.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		longest = max(longest, len(m.on))
	}
	if longest > 2*compactAbove {
		t.Fatalf("the segment chain reached %d segments, want at most %d", longest, 2*compactAbove)
	}
	local, _ := os.ReadFile(jp)
	if got := downloaded(t, s); !bytes.Equal(got, local) {
		t.Fatalf("compacted journal differs from the local one (%d vs %d bytes)", len(got), len(local))
	}
	// An extra, shorter segment beside the chain (a sync cut short before
	// its compaction deleted the old ones) changes nothing.
	g := m.on[len(m.on)-1]
	if g.end-g.start > 1 {
		short := segment{g.start, g.start + 1}
		if err := s.bucket.WriteAll(ctx, short.key(), local[short.start:short.end], nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := downloaded(t, s); !bytes.Equal(got, local) {
		t.Fatal("a stray shorter segment changed the journal read back")
	}
	// A new mirror over the same directory continues the chain and removes
	// the stray segment.
	m2 := newMirror(t, s, dir)
	appendFile(t, jp, "{\"in\":\"after\"}\n")
	if err := m2.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	local, _ = os.ReadFile(jp)
	if got := downloaded(t, s); !bytes.Equal(got, local) {
		t.Fatal("journal after a second mirror differs from the local one")
	}
	all, err := s.segments(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if on, off := chain(all); len(off) != 0 || len(on) > 2*compactAbove {
		t.Fatalf("after a new mirror: %d segments on the chain, %d off it; want no stray one", len(on), len(off))
	}
}

// TestMirrorTrimsToLocal: a new mirror over a local journal shorter than
// the bucket's (cut back on resume) removes the segments beyond it, so
// what is appended next is not hidden behind stale bytes.
func TestMirrorTrimsToLocal(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, "mem://exp")
	m := newMirror(t, s, dir)
	jp := filepath.Join(dir, testJournal)
	appendFile(t, jp, "{\"a\":1}\n")
	if err := m.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	appendFile(t, jp, "{\"b\":2}\n")
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(jp, int64(len("{\"a\":1}\n"))); err != nil {
		t.Fatal(err)
	}
	m2 := newMirror(t, s, dir)
	appendFile(t, jp, "{\"c\":3}\n")
	if err := m2.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := string(downloaded(t, s)), "{\"a\":1}\n{\"c\":3}\n"; got != want {
		t.Fatalf("journal = %q, want %q", got, want)
	}
}

// TestMirrorSyncShares: concurrent Syncs each see a sync that began after
// their call.
func TestMirrorSyncShares(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, "mem://exp")
	m := newMirror(t, s, dir)
	jp := filepath.Join(dir, testJournal)
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			line := fmt.Sprintf("{\"w\":%d}\n", i)
			appendFile(t, jp, line)
			if err := m.Sync(ctx); err != nil {
				errs <- err
				return
			}
			if !strings.Contains(string(downloaded(t, s)), line) {
				errs <- fmt.Errorf("line %q appended before Sync is not in the bucket after it", line)
				return
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestMirrorSettled: a directory Settled reports is left out of the
// background syncs (a change in it waits) but not out of Close's last
// one, and its objects are not taken for removed files; Shipped sees each
// segment's lines.
func TestMirrorSettled(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, "mem://exp")
	var shipped []string
	settled := false
	m, err := s.NewMirror(ctx, dir, MirrorOptions{
		Journal: testJournal,
		Every:   time.Hour,
		Settled: func(d string, pass uint64) bool { return settled && d == "trial_done" },
		Shipped: func(lines []byte, pass uint64) { shipped = append(shipped, string(lines)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, filepath.Join(dir, "trial_done", "result.json"), "1\n")
	appendFile(t, filepath.Join(dir, "trial_live", "result.json"), "1\n")
	appendFile(t, filepath.Join(dir, testJournal), "{\"a\":1}\n")
	if err := m.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	settled = true
	appendFile(t, filepath.Join(dir, "trial_done", "result.json"), "2\n")
	appendFile(t, filepath.Join(dir, "trial_live", "result.json"), "2\n")
	if err := m.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := objectText(t, s, "trial_live/result.json"); got != "1\n2\n" {
		t.Errorf("a live directory's change: %q", got)
	}
	if got, ok := objectText(t, s, "trial_done/result.json"); !ok || got != "1\n" {
		t.Errorf("a settled directory's object = %q, %v; want it kept as it was", got, ok)
	}
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := objectText(t, s, "trial_done/result.json"); got != "1\n2\n" {
		t.Errorf("after Close, a settled directory's change: %q; the last sync walks everything", got)
	}
	if len(shipped) != 1 || shipped[0] != "{\"a\":1}\n" {
		t.Errorf("Shipped saw %q", shipped)
	}
}

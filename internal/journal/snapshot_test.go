package journal

import (
	"github.com/hone-tune/hone"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// snapJournal writes a journal of n result inputs and returns its path and
// writer.
func snapJournal(t *testing.T, n int) (string, *Writer) {
	t.Helper()
	p := filepath.Join(t.TempDir(), FileName)
	w, err := Create(p, Header{Name: "s", Seed: 1, Created: 5})
	if err != nil {
		t.Fatal(err)
	}
	appendResults(t, w, 0, n)
	return p, w
}

func appendResults(t *testing.T, w *Writer, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		if err := w.AppendEvent(&hone.Event{Kind: hone.EventResult, TrialID: "t1", Time: int64(i), Metrics: map[string]any{"loss": float64(i)}}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	p, w := snapJournal(t, 100)
	defer w.Close()
	m, err := w.Mark()
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Size() != m.Offset || w.Offset() != m.Offset {
		t.Fatalf("mark at %d, journal of %d bytes, writer at %d", m.Offset, fi.Size(), w.Offset())
	}
	if _, err := WriteSnapshot(p, m, []byte("state one"), 2); err != nil {
		t.Fatal(err)
	}
	appendResults(t, w, 100, 7)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	offs, err := Snapshots(p)
	if err != nil || len(offs) != 1 || offs[0] != m.Offset {
		t.Fatalf("Snapshots = %v, %v; want [%d]", offs, err, m.Offset)
	}
	s, err := OpenSnapshot(p, m.Offset)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(); err != nil {
		t.Fatal(err)
	}
	if string(s.Body) != "state one" || s.Offset != m.Offset {
		t.Fatalf("read back %q at %d", s.Body, s.Offset)
	}
	tail, err := ReadFrom(p, s.Offset)
	if err != nil {
		t.Fatal(err)
	}
	if len(tail.Lines) != 7 || tail.Lines[0].Event.Time != 100 || tail.Header.Name != "s" || tail.From != m.Offset {
		t.Fatalf("tail: %d lines, first %+v, header %+v, from %d", len(tail.Lines), tail.Lines[0].Event, tail.Header, tail.From)
	}
	if fi, _ := os.Stat(p); tail.Size != fi.Size() {
		t.Fatalf("tail size %d, journal %d", tail.Size, fi.Size())
	}
	if got := tail.LineNumber(0); got != 102 {
		t.Fatalf("line number of the tail's first line = %d, want 102", got)
	}
	head, err := ReadHead(p, m.Offset-3)
	if err != nil {
		t.Fatal(err)
	}
	if len(head.Lines) != 99 || !head.Torn {
		t.Fatalf("head: %d lines, torn %v; want 99, torn", len(head.Lines), head.Torn)
	}
}

func TestSnapshotKeepsNewest(t *testing.T) {
	p, w := snapJournal(t, 3)
	defer w.Close()
	var marks []Mark
	for i := range 4 {
		appendResults(t, w, 10*i, 2)
		m, err := w.Mark()
		if err != nil {
			t.Fatal(err)
		}
		marks = append(marks, m)
		if _, err := WriteSnapshot(p, m, []byte{byte(i)}, 2); err != nil {
			t.Fatal(err)
		}
	}
	offs, err := Snapshots(p)
	if err != nil || len(offs) != 2 || offs[0] != marks[3].Offset || offs[1] != marks[2].Offset {
		t.Fatalf("Snapshots = %v, %v; want the last two of %v", offs, err, marks)
	}
}

func TestSnapshotRefusals(t *testing.T) {
	p, w := snapJournal(t, 50)
	m, err := w.Mark()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteSnapshot(p, m, []byte("body"), 2); err != nil {
		t.Fatal(err)
	}
	appendResults(t, w, 50, 5)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	sp := SnapshotPath(p, m.Offset)
	good, err := os.ReadFile(sp)
	if err != nil {
		t.Fatal(err)
	}
	jgood, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what, want string) {
		t.Helper()
		s, err := OpenSnapshot(p, m.Offset)
		if err == nil {
			err = s.Verify()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: OpenSnapshot and Verify = %v, want an error with %q", what, err, want)
		}
		if err := os.WriteFile(sp, good, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, jgood, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Every truncation of the file, and every flipped byte, is refused.
	for i := range good {
		if err := os.WriteFile(sp, good[:i], 0o644); err != nil {
			t.Fatal(err)
		}
		check("truncated", "snapshot")
		bad := append([]byte(nil), good...)
		bad[i] ^= 0x01
		if err := os.WriteFile(sp, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		check("flipped", "snapshot")
	}
	// The journal's bytes before the offset changed.
	j := append([]byte(nil), jgood...)
	j[m.Offset-5] ^= 0x01
	if err := os.WriteFile(p, j, 0o644); err != nil {
		t.Fatal(err)
	}
	check("journal changed", "not those it was taken over")
	// The journal's header changed.
	j = append([]byte(nil), jgood...)
	j[strings.Index(string(j), `"s"`)+1] = 'x'
	if err := os.WriteFile(p, j, 0o644); err != nil {
		t.Fatal(err)
	}
	check("header changed", "not those it was taken over")
	// The journal is shorter than the snapshot's offset.
	if err := os.WriteFile(p, jgood[:m.Offset-1], 0o644); err != nil {
		t.Fatal(err)
	}
	check("journal shorter", "a journal of")
	if s, err := OpenSnapshot(p, m.Offset); err != nil || s.Verify() != nil {
		t.Fatalf("the good snapshot: %v", err)
	}
}

// TestSnapshotsDroppedWithTheBytes: cutting the journal (Append after a
// torn tail, Cut) removes the snapshots of bytes it no longer holds, and
// a new journal of the same name removes every earlier one.
func TestSnapshotsDroppedWithTheBytes(t *testing.T) {
	p, w := snapJournal(t, 20)
	m1, err := w.Mark()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteSnapshot(p, m1, nil, 5); err != nil {
		t.Fatal(err)
	}
	appendResults(t, w, 20, 20)
	m2, err := w.Mark()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteSnapshot(p, m2, nil, 5); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w, err = Append(p, m2.Offset-1)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if offs, _ := Snapshots(p); len(offs) != 1 || offs[0] != m1.Offset {
		t.Fatalf("after Append cut below the second snapshot: %v, want [%d]", offs, m1.Offset)
	}
	if _, err := Cut(p, m1.Offset-10); err != nil {
		t.Fatal(err)
	}
	if offs, _ := Snapshots(p); len(offs) != 0 {
		t.Fatalf("after Cut below every snapshot: %v", offs)
	}
	if _, err := WriteSnapshot(p, m1, nil, 5); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	w, err = Create(p, Header{Name: "new"})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if offs, _ := Snapshots(p); len(offs) != 0 {
		t.Fatalf("a new journal kept the old one's snapshots: %v", offs)
	}
}

func TestSnapshotRemovesLeftovers(t *testing.T) {
	p, w := snapJournal(t, 5)
	defer w.Close()
	m, err := w.Mark()
	if err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(filepath.Dir(p), "."+filepath.Base(SnapshotPath(p, 77))+".tmp-123")
	if err := os.WriteFile(left, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteSnapshot(p, m, nil, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatalf("the leftover temporary file is still there: %v", err)
	}
	if _, err := OpenSnapshot(p, m.Offset); err != nil {
		t.Fatal(err)
	}
}

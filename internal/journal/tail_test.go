package journal

import (
	"errors"
	"github.com/hone-tune/hone"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/hone-tune/hone/controller"
)

// TestTail follows a journal as a writer appends to it, a line at a time
// and with a line written in two pieces, and as a resume cuts it back.
func TestTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), FileName)
	tail := NewTail(p)
	if _, err := tail.Next(); !errors.Is(err, ErrNoJournal) {
		t.Fatalf("no journal: %v", err)
	}
	w, err := Create(p, Header{Name: "x", Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	lines, err := tail.Next()
	if err != nil || len(lines) != 0 || tail.Header().Name != "x" || tail.Header().Seed != 3 {
		t.Fatalf("header only: %v, %v, %+v", lines, err, tail.Header())
	}
	in := &hone.Event{Kind: hone.EventResult, TrialID: "t1", Time: 7, Metrics: map[string]any{"loss": math.NaN()}}
	if err := w.AppendEvent(in); err != nil {
		t.Fatal(err)
	}
	if err := w.AppendRecord(&controller.Record{Op: "status", Trial: "t1", Status: "RUNNING"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines, err = tail.Next()
	if err != nil || len(lines) != 2 || lines[0].Event == nil || !math.IsNaN(lines[0].Event.Metrics["loss"].(float64)) || lines[1].Rec == nil {
		t.Fatalf("two lines: %+v, %v", lines, err)
	}
	// A line written in two pieces is returned once it is whole.
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	size, _ := f.Seek(0, 2)
	line := `{"rec":{"o":"status","t":"t1","st":"TERMINATED"}}` + "\n"
	if _, err := f.WriteString(line[:20]); err != nil {
		t.Fatal(err)
	}
	if lines, err = tail.Next(); err != nil || len(lines) != 0 {
		t.Fatalf("half a line: %+v, %v", lines, err)
	}
	if _, err := f.WriteString(line[20:]); err != nil {
		t.Fatal(err)
	}
	if lines, err = tail.Next(); err != nil || len(lines) != 1 || lines[0].Rec.Status != "TERMINATED" {
		t.Fatalf("the line completed: %+v, %v", lines, err)
	}
	if lines, err = tail.Next(); err != nil || len(lines) != 0 {
		t.Fatalf("nothing new: %+v, %v", lines, err)
	}
	// A corrupt line followed by another is an error, after the lines
	// before it.
	if _, err := f.WriteString(line + "{not json\n" + line); err != nil {
		t.Fatal(err)
	}
	lines, err = tail.Next()
	var corrupt *CorruptError
	if !errors.As(err, &corrupt) || corrupt.Line != 6 || len(lines) != 1 {
		t.Fatalf("corrupt line: %+v, %v", lines, err)
	}
	f.Close()
	// Cut back: the reader starts again.
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
	if _, err := tail.Next(); !errors.Is(err, ErrShrunk) {
		t.Fatalf("after a cut: %v", err)
	}
	if lines, err = NewTail(p).Next(); err != nil || len(lines) != 2 {
		t.Fatalf("read again: %+v, %v", lines, err)
	}
}

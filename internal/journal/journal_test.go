package journal

import (
	"bufio"
	"encoding/json"
	"errors"
	"github.com/hone-tune/hone"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone/controller"
)

func TestRoundTripAndTornTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), FileName)
	w, err := Create(p, Header{Name: "x", Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	in := &hone.Event{Kind: hone.EventResult, TrialID: "abcd0123", Time: 5,
		Metrics: map[string]any{"loss": math.NaN(), "up": math.Inf(1), "nested": map[string]any{"d": math.Inf(-1)}, "ok": 1.5}}
	if err := w.AppendEvent(in); err != nil {
		t.Fatal(err)
	}
	if err := w.AppendRecord(&controller.Record{Op: "status", Trial: "abcd0123", Status: "RUNNING"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(in.Metrics["loss"].(float64)) {
		t.Fatal("AppendEvent modified the caller's metrics")
	}
	// A crash in the middle of a write leaves a torn last line.
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"in":{"k":"result","t":"ab`)
	f.Close()

	c, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Torn || len(c.Lines) != 2 || c.Header.Name != "x" || c.Header.Seed != 9 || c.Header.Journal != Version {
		t.Fatalf("read back %+v", c)
	}
	m := c.Lines[0].Event.Metrics
	if !math.IsNaN(m["loss"].(float64)) || !math.IsInf(m["up"].(float64), 1) ||
		!math.IsInf(m["nested"].(map[string]any)["d"].(float64), -1) || m["ok"].(float64) != 1.5 {
		t.Fatalf("metrics read back as %v", m)
	}
	if c.Lines[1].Rec == nil || c.Lines[1].Rec.Status != "RUNNING" {
		t.Fatalf("record read back as %+v", c.Lines[1])
	}
	// Append cuts the torn tail before writing more.
	w, err = Append(p, c.Size)
	if err != nil {
		t.Fatal(err)
	}
	w.AppendEvent(&hone.Event{Kind: hone.EventTick, Time: 6})
	w.Close()
	c2, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if c2.Torn || len(c2.Lines) != 3 || c2.Lines[2].Event.Kind != hone.EventTick {
		t.Fatalf("after append: torn=%v lines=%d", c2.Torn, len(c2.Lines))
	}
}

func TestCorruptionAndMissing(t *testing.T) {
	dir := t.TempDir()
	if _, err := Read(filepath.Join(dir, FileName)); err == nil || !strings.Contains(err.Error(), "no experiment journal") {
		t.Fatalf("missing journal: %v", err)
	}
	p := filepath.Join(dir, "j")
	os.WriteFile(p, []byte("{\"hone_journal\":1}\nnot json\n{\"in\":{\"k\":\"tick\",\"ns\":1}}\n"), 0o644)
	if _, err := Read(p); err == nil || !strings.Contains(err.Error(), "line 2 is corrupt") {
		t.Fatalf("corrupt middle line: %v", err)
	}
	os.WriteFile(p, []byte("{\"hone_journal\":99}\n"), 0o644)
	if _, err := Read(p); err == nil || !strings.Contains(err.Error(), "newer than this hone") {
		t.Fatalf("future version: %v", err)
	}
	os.WriteFile(p, []byte("hello\n"), 0o644)
	if _, err := Read(p); err == nil || !strings.Contains(err.Error(), "not a hone journal header") {
		t.Fatalf("not a journal: %v", err)
	}
	if _, err := Create(p, Header{}); err == nil {
		t.Fatal("Create over an existing file succeeded")
	}
}

// TestGroupCommit: lines appended and never flushed by the caller reach the
// file on their own (what a SIGKILL would leave), in order, while appends
// go on concurrently with the writer's background flushes.
func TestGroupCommit(t *testing.T) {
	p := filepath.Join(t.TempDir(), FileName)
	w, err := Create(p, Header{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const n = 2000
	for i := range n {
		if err := w.AppendEvent(&hone.Event{Kind: hone.EventTick, Time: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// No Flush: wait (bounded generously, this is not a timing assertion)
	// for the background flush to hand every line to the OS.
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := Read(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Lines) == n {
			for i, l := range c.Lines {
				if l.Event == nil || l.Event.Time != int64(i) {
					t.Fatalf("line %d: %+v", i, l.Event)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d unflushed lines reached the file", len(c.Lines), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkAppendResult is the journal's cost per result input (encode and
// buffer; the group commit hands the bytes to the OS), beside a raw
// buffered write of the same bytes, pre-encoded, as the baseline.
func BenchmarkAppendResult(b *testing.B) {
	p := filepath.Join(b.TempDir(), FileName)
	w, err := Create(p, Header{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	in := &hone.Event{Kind: hone.EventResult, TrialID: "5f2a9c01", Time: 1767225600123456789,
		Metrics: map[string]any{"loss": 0.123456789, "accuracy": 0.875, "training_iteration": 17.0, "time_total_s": 3600.5}}
	line, _ := json.Marshal(Line{Event: in})
	raw, err := os.Create(filepath.Join(b.TempDir(), "raw"))
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	bw := bufio.NewWriterSize(raw, 64<<10)
	start := time.Now()
	for range b.N {
		bw.Write(line)
		bw.WriteByte('\n')
	}
	bw.Flush()
	base := time.Since(start)
	b.ResetTimer()
	for range b.N {
		if err := w.AppendEvent(in); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(base.Nanoseconds())/float64(b.N), "baseline-ns/op")
	b.ReportMetric(float64(len(line)+1), "bytes/op")
}

// TestReadPrefixAndCut: ReadPrefix stops at a corrupt middle line (Read
// refuses it), and Cut keeps the bytes from there on beside the journal,
// numbered so that a second cut does not overwrite the first, before it
// truncates the journal.
func TestReadPrefixAndCut(t *testing.T) {
	p := filepath.Join(t.TempDir(), FileName)
	head := "{\"hone_journal\":1}\n{\"in\":{\"k\":\"tick\",\"ns\":1}}\n"
	rest := "not json\n{\"in\":{\"k\":\"tick\",\"ns\":2}}\n"
	if err := os.WriteFile(p, []byte(head+rest), 0o644); err != nil {
		t.Fatal(err)
	}
	var ce *CorruptError
	if _, err := Read(p); !errors.As(err, &ce) || ce.Line != 3 || ce.Offset != int64(len(head)) {
		t.Fatalf("Read = %v, want a CorruptError for line 3 at %d", err, len(head))
	}
	c, err := ReadPrefix(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.Corrupt == nil || c.Corrupt.Line != 3 || len(c.Lines) != 1 || c.Size != int64(len(head)) {
		t.Fatalf("ReadPrefix = %+v (corrupt %+v)", c, c.Corrupt)
	}
	for n := 1; n <= 2; n++ {
		kept, err := Cut(p, c.Size)
		if err != nil {
			t.Fatal(err)
		}
		if want := p + CorruptSuffix + strconv.Itoa(n); kept != want {
			t.Fatalf("cut %d kept the bytes in %s, want %s", n, kept, want)
		}
		if b, _ := os.ReadFile(kept); string(b) != rest {
			t.Fatalf("%s holds %q, want %q", kept, b, rest)
		}
		if b, _ := os.ReadFile(p); string(b) != head {
			t.Fatalf("journal after the cut: %q", b)
		}
		os.WriteFile(p, []byte(head+rest), 0o644)
	}
	if kept, err := Cut(p, int64(len(head+rest))); err != nil || kept != "" {
		t.Fatalf("Cut at the end = %q, %v; want nothing cut", kept, err)
	}
}

// TestAppendCutsTornTailOnDisk: Append truncates a torn tail in the file
// itself before anything is written (a reader sees no torn bytes even if
// nothing is appended), and refuses a size longer than the file.
func TestAppendCutsTornTailOnDisk(t *testing.T) {
	p := filepath.Join(t.TempDir(), FileName)
	head := "{\"hone_journal\":1}\n{\"in\":{\"k\":\"tick\",\"ns\":1}}\n"
	if err := os.WriteFile(p, []byte(head+`{"in":{"k":"ti`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Read(p)
	if err != nil || !c.Torn {
		t.Fatalf("Read = %+v, %v", c, err)
	}
	w, err := Append(p, c.Size)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != head {
		t.Fatalf("after Append the file holds %q, want the complete lines only", b)
	}
	w.Close()
	if _, err := Append(p, int64(len(head))+1); err == nil {
		t.Fatal("Append with a size beyond the file succeeded")
	}
}

// TestStartsAnnouncedRoundTrip: whether each session's executor announced
// starts is read back from the header and from a resume's settings, and
// the started inputs it gave with it, so that a replay counts the
// per-trial limits as the run did.
func TestStartsAnnouncedRoundTrip(t *testing.T) {
	p := filepath.Join(t.TempDir(), FileName)
	w, err := Create(p, Header{Name: "x", Seed: 9, Settings: &hone.Settings{StartsAnnounced: true, TrialTimeout: 15 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	started := &hone.Event{Kind: hone.EventStarted, TrialID: "abcd0123", Time: 5, Hostname: "n2 (slurm job 41)"}
	resumed := &hone.Event{Kind: hone.EventResume, Time: 6, Resume: &hone.ResumeFlags{Unfinished: true,
		Settings: &hone.Settings{TrialTimeout: 15 * time.Second}}}
	for _, in := range []*hone.Event{started, resumed} {
		if err := w.AppendEvent(in); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if h := c.Header.Settings; h == nil || !h.StartsAnnounced || h.TrialTimeout != 15*time.Second {
		t.Fatalf("header settings %+v, want starts announced", h)
	}
	if len(c.Lines) != 2 || !reflect.DeepEqual(c.Lines[0].Event, started) {
		t.Fatalf("started input read back as %+v", c.Lines[0].Event)
	}
	if r := c.Lines[1].Event.Resume; r == nil || r.Settings == nil || r.Settings.StartsAnnounced {
		t.Fatalf("resume read back as %+v, want settings without announced starts", r)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "starts_announced"); n != 1 {
		t.Errorf("the journal names starts_announced %d times, want once (a false setting is left out):\n%s", n, b)
	}
}

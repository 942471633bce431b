package results_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/results"
)

// TestLiveFollowsGrowingFiles replays a finished experiment's journal and
// result files into a new directory a piece at a time and checks that
// Live reads each piece once and ends where Open does.
func TestLiveFollowsGrowingFiles(t *testing.T) {
	src, _ := fixture(t)
	want := openExp(t, src)
	dst := filepath.Join(t.TempDir(), "exp")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	jdata, err := os.ReadFile(filepath.Join(src, journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	jpath := filepath.Join(dst, journal.FileName)
	// The header and half of the journal, cut inside a line.
	half := len(jdata) / 2
	if err := os.WriteFile(jpath, jdata[:half], 0o644); err != nil {
		t.Fatal(err)
	}
	live, err := results.OpenLive(dst)
	if err != nil {
		t.Fatal(err)
	}
	early := len(live.Experiment().Trials)
	if early == 0 || early > len(want.Trials) {
		t.Fatalf("half the journal: %d trials, want 1..%d", early, len(want.Trials))
	}
	if err := os.WriteFile(jpath, jdata, 0o644); err != nil {
		t.Fatal(err)
	}
	// Result files appear, the first one in two pieces.
	for i, tr := range want.Trials {
		rel, err := filepath.Rel(src, tr.Dir)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(tr.Dir, "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		d := filepath.Join(dst, rel)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := os.WriteFile(filepath.Join(d, "result.json"), data[:len(data)/2], 0o644); err != nil {
				t.Fatal(err)
			}
			ch, err := live.Update()
			if err != nil {
				t.Fatal(err)
			}
			if ch.Journal == 0 || ch.Rows == 0 {
				t.Fatalf("update after the journal grew: %+v", ch)
			}
		}
		if err := os.WriteFile(filepath.Join(d, "result.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := live.Update(); err != nil {
		t.Fatal(err)
	}
	ch, err := live.Update()
	if err != nil {
		t.Fatal(err)
	}
	if ch.Any() {
		t.Fatalf("an update with nothing new reports %+v", ch)
	}
	got := live.Experiment()
	if len(got.Trials) != len(want.Trials) {
		t.Fatalf("%d trials, want %d", len(got.Trials), len(want.Trials))
	}
	for i, tr := range want.Trials {
		g := got.Trials[i]
		wr, err := tr.Results()
		if err != nil {
			t.Fatal(err)
		}
		gr, err := g.Results()
		if err != nil {
			t.Fatal(err)
		}
		if g.ID != tr.ID || g.Status != tr.Status || fmt.Sprint(gr) != fmt.Sprint(wr) || g.Reported != len(wr) {
			t.Fatalf("trial %d: got %s %s %d rows (%d reported), want %s %s %d rows", i, g.ID, g.Status, len(gr), g.Reported, tr.ID, tr.Status, len(wr))
		}
	}
	// A result file cut back and written on past where it was read (a
	// resume dropped rows and the trial reported again) is read again
	// from its start.
	tr := got.Trials[0]
	rows, _ := tr.Results()
	p := filepath.Join(tr.Dir, "result.json")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	first := bytes.SplitAfter(data, []byte("\n"))[0]
	again := append(append([]byte(nil), first...), bytes.Repeat([]byte(`{"loss": 7, "pad": "`+strings.Repeat("x", 500)+`"}`+"\n"), len(rows))...)
	if len(again) < len(data) {
		t.Fatalf("the rewritten file (%d bytes) is shorter than the original (%d); the test needs it longer", len(again), len(data))
	}
	if err := os.WriteFile(p, again, 0o644); err != nil {
		t.Fatal(err)
	}
	// (Live looks at a finished trial again only when the journal says
	// something of it, as a resume does of those whose rows it rewrites.)
	if _, err := tr.Update(); err != nil {
		t.Fatal(err)
	}
	rows2, _ := tr.Results()
	if len(rows2) != len(rows)+1 || fmt.Sprint(rows2[0]) != fmt.Sprint(rows[0]) || rows2[1]["loss"] != 7.0 {
		t.Fatalf("after a rewrite: %d rows (%v), want %d with loss 7 after the first", len(rows2), rows2, len(rows)+1)
	}

	// A journal cut shorter (a resume cut a torn tail) is read again.
	if err := os.WriteFile(jpath, jdata[:half], 0o644); err != nil {
		t.Fatal(err)
	}
	ch, err = live.Update()
	if err != nil {
		t.Fatal(err)
	}
	if !ch.Reset || len(live.Experiment().Trials) != early {
		t.Fatalf("after the journal shrank: %+v, %d trials, want a reset to %d", ch, len(live.Experiment().Trials), early)
	}
}

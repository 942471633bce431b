package chaos

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/spec"
)

func TestCompareRows(t *testing.T) {
	a := result{iter: 1, step: 1, run: "a"}
	b := result{iter: 2, step: 2, run: "a"}
	c := result{iter: 2, step: 2, run: "b"} // a restore re-reports iteration 2
	for _, tc := range []struct {
		name      string
		want, got []result
		says      string
	}{
		{"same", []result{a, b, c}, []result{a, b, c}, ""},
		{"duplicate", []result{a, b}, []result{a, b, b}, "repeats row 2"},
		{"missing", []result{a, b, c}, []result{a, b}, "1 of the journal's 3 results are missing"},
		{"extra", []result{a}, []result{a, c}, "1 rows the journal does not hold"},
		{"order", []result{a, b, c}, []result{a, c, b}, "row 2 is it 2 (step 2 of run b)"},
	} {
		got := compareRows(tc.want, tc.got)
		if tc.says == "" && got != "" || !strings.Contains(got, tc.says) {
			t.Errorf("%s: compareRows = %q, want it to say %q", tc.name, got, tc.says)
		}
	}
	if got := iters([]result{a, b, c, {iter: 3}}); got != "1-2,2-3" {
		t.Errorf("iters = %q", got)
	}
}

// counter is a simulated trainer reporting, like the chaos trainer, its
// own count ("step") and an id of its run.
type counter struct{ n int }

func (c *counter) Step() (sim.Step, error) {
	c.n++
	return sim.Step{Metrics: map[string]any{"score": float64(c.n), "step": c.n, "run": "sim"}, Duration: 1e9, Done: c.n >= epochs, Checkpoint: true}, nil
}
func (c *counter) Save() ([]byte, error) { return json.Marshal(c.n) }
func (c *counter) Load(b []byte) error   { return json.Unmarshal(b, &c.n) }

// TestStateOfARealExperiment runs an ASHA experiment built from a chaos
// spec on the sim executor and checks that the replayed journal matches
// the trials' files, and that a duplicated or a lost row is caught.
func TestStateOfARealExperiment(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "asha")
	text := specYAML(specParams{kind: KindASHA, name: "asha", storage: root, seed: 3, python: "/bin/sh", trainer: "unused",
		mark: "test", mode: "max", grace: "10s", maxConc: 2, setupSecs: 0, stepSecs: 0})
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "spec.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := storedSpec(dir)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := spec.Build(s, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan.Options.Executor = sim.New(func(hone.Config, string) (sim.Trainable, error) { return &counter{}, nil })
	plan.Options.Log = io.Discard
	if _, err := runner.Run(context.Background(), plan.Experiment, plan.Options); err != nil {
		t.Fatal(err)
	}
	if err := plan.Close(); err != nil {
		t.Fatal(err)
	}

	st, err := readState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.trials) != 6 {
		t.Fatalf("%d trials, want 6", len(st.trials))
	}
	var longest *trialState
	for _, tr := range st.trials {
		if tr.status != hone.StatusTerminated || tr.endedBy != "" || tr.replayStatus != tr.status || len(tr.unregistered) > 0 {
			t.Errorf("trial %s: %s, replayed %s (ended by %q), unregistered %v", tr.id, tr.status, tr.replayStatus, tr.endedBy, tr.unregistered)
		}
		got, err := readResultFile(filepath.Join(tr.dir, "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		if d := compareRows(tr.results, got); d != "" || len(got) == 0 {
			t.Errorf("trial %s: %d rows: %s", tr.id, len(got), d)
		}
		prog, err := readProgressFile(filepath.Join(tr.dir, "progress.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if d := compareRows(tr.results, prog); d != "" {
			t.Errorf("trial %s progress.csv: %s", tr.id, d)
		}
		if longest == nil || len(tr.results) > len(longest.results) {
			longest = tr
		}
	}
	if lo := leftovers(dir); len(lo) != 0 {
		t.Errorf("leftovers: %v", lo)
	}
	// Every trial reported in the journal's only session; after a resume
	// (which has nothing to run), none reported in the last one.
	for _, tr := range st.trials {
		if !tr.reportedLast {
			t.Errorf("trial %s: not seen reporting in the only session", tr.id)
		}
	}
	plan, err = spec.Build(s, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan.Options.Executor = sim.New(func(hone.Config, string) (sim.Trainable, error) { return &counter{}, nil })
	plan.Options.Log = io.Discard
	if _, err := runner.Resume(context.Background(), plan.Experiment, plan.Options, hone.ResumeFlags{Unfinished: true}); err != nil {
		t.Fatal(err)
	}
	if err := plan.Close(); err != nil {
		t.Fatal(err)
	}
	resumed, err := readState(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range resumed.trials {
		if tr.reportedLast {
			t.Errorf("trial %s: seen reporting in a session that ran nothing", tr.id)
		}
	}

	// A row written twice, then a row lost.
	p := filepath.Join(longest.dir, "result.json")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	dup := strings.Join(lines[:2], "") + lines[1] + strings.Join(lines[2:], "")
	if err := os.WriteFile(p, []byte(dup), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readResultFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if d := compareRows(longest.results, got); !strings.Contains(d, "repeats row 2") {
		t.Errorf("a duplicated row: compareRows says %q", d)
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines[:len(lines)-2], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = readResultFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if d := compareRows(longest.results, got); !strings.Contains(d, "missing") {
		t.Errorf("a lost row: compareRows says %q", d)
	}
	// A staged checkpoint left by a crash.
	if err := os.MkdirAll(filepath.Join(longest.dir, ".staging", "c1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if lo := leftovers(dir); len(lo) != 1 {
		t.Errorf("leftovers after staging one: %v", lo)
	}
}

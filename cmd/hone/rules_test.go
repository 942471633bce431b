package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/spec"
	"github.com/hone-tune/hone/trial"
)

// rulesSpec is an experiment whose scheduler: auto depends on the rules'
// version: for max_t 18, ASHA's first rung is 2 under version 2 (rungs 2,
// 6, 18) and 1 under version 1 (rungs 1, 3, 9).
const rulesSpec = `metric: score
mode: max
seed: 5
num_samples: 30
search_space:
  x: {uniform: [0, 1]}
searcher: random
scheduler: auto
stop: {training_iteration: 18}
max_concurrent_trials: 1
command: [unused]
`

// readOrigin and writeOrigin read and write an experiment's origin file
// as a JSON object.
func readOrigin(t *testing.T, dir string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, originFile))
	if err != nil {
		t.Fatal(err)
	}
	var o map[string]any
	if err := json.Unmarshal(data, &o); err != nil {
		t.Fatal(err)
	}
	return o
}

func writeOrigin(t *testing.T, dir string, o map[string]any) {
	t.Helper()
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, originFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// lastIterations returns the iteration each trial of the experiment in
// dir ended at.
func lastIterations(t *testing.T, dir string) []int {
	t.Helper()
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var its []int
	for _, tr := range e.Trials {
		last, err := tr.Last()
		if err != nil || last == nil {
			continue
		}
		it, _ := last.Value(hone.FieldTrainingIteration)
		its = append(its, int(it))
	}
	return its
}

// An experiment decides by the rules it was started with (spec.Rules): a
// new one records spec.RulesVersion in its origin, a resume builds the
// plugins by the version recorded, an origin without one (an experiment
// from before it was recorded) decides by version 1, and a resume that
// adopts another spec keeps the version.
func TestResumeByTheRulesItStartedWith(t *testing.T) {
	// A whole run by the current rules: trials stop at 2, 6 or 18.
	c := cli{t: t, exec: goTrainer(nil)}
	path, dir := writeSpec(t, "now", rulesSpec)
	if code, _, errOut := c.run("run", path); code != exitOK {
		t.Fatalf("run: %d\n%s", code, errOut)
	}
	if o := readOrigin(t, dir); o["rules"] != float64(spec.RulesVersion) {
		t.Fatalf("a new experiment's origin %v, want rules %d", o, spec.RulesVersion)
	}
	its := lastIterations(t, dir)
	if slices.Contains(its, 1) || !slices.Contains(its, 2) {
		t.Fatalf("by the current rules trials ended at iterations %v, want the first rung at 2", its)
	}

	// Runs interrupted at their first result, then resumed by version 1,
	// recorded or implied, with the stored spec or the spec given again:
	// the trials they run stop at 1, 3 or 9.
	for i, legacy := range []func(map[string]any){
		func(o map[string]any) { o["rules"] = 1 },
		func(o map[string]any) { delete(o, "rules") },
	} {
		ctx, cancel := context.WithCancel(context.Background())
		var reports atomic.Int32
		c := cli{t: t, ctx: ctx, exec: goTrainer(func(trial.Session, int) {
			if reports.Add(1) == 1 {
				cancel()
			}
		})}
		path, dir := writeSpec(t, "then", rulesSpec)
		if code, _, errOut := c.run("run", path); code != exitInterrupted {
			cancel()
			t.Fatalf("run: %d, want it interrupted\n%s", code, errOut)
		}
		cancel()
		o := readOrigin(t, dir)
		legacy(o)
		writeOrigin(t, dir, o)
		c.ctx = context.Background()
		args := []string{"resume", dir}
		if i == 1 { // the spec given again: the experiment's rules still hold
			args = append(args, "--spec", path)
		}
		if code, _, errOut := c.run(args...); code != exitOK {
			t.Fatalf("resume by version 1 (origin %v): %d\n%s", o, code, errOut)
		}
		its := lastIterations(t, dir)
		if !slices.Contains(its, 1) || slices.Contains(its, 2) {
			t.Fatalf("resumed by version 1 (origin %v), trials ended at iterations %v, want the first rung at 1", o, its)
		}
	}

	// Adopting another spec keeps the experiment's version.
	other := filepath.Join(t.TempDir(), "other.yaml")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, append(src, []byte("stop_grace: 20\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := c.run("resume", dir, "--spec", other); code != exitOK {
		t.Fatalf("resume --spec: %d\n%s", code, errOut)
	}
	if o := readOrigin(t, dir); o["rules"] != float64(spec.RulesVersion) || !strings.HasSuffix(o["spec_file"].(string), "other.yaml") {
		t.Fatalf("origin after adopting %s: %v, want rules %d", other, o, spec.RulesVersion)
	}
}

package main

import (
	"path/filepath"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/results"
)

// TestExample runs the example small and checks that every trial finished
// and the experiment directory answers for the best trial.
func TestExample(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "asha")
	if err := run(dir, 10, 9, 400); err != nil {
		t.Fatal(err)
	}
	res, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 10 {
		t.Fatalf("%d trials, want 10", len(res.Trials))
	}
	for _, tr := range res.Trials {
		if !tr.Status.Finished() {
			t.Errorf("trial %s ended %s", tr.ID, tr.Status)
		}
	}
	if _, _, err := res.Best(hone.Objective{Metric: "val_accuracy", Mode: "max"}, results.ScopeAll); err != nil {
		t.Fatal(err)
	}
}

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestSmoke runs the command with two seeds, a budget of 12 and random
// search as the baseline, and checks the target and mo-asha's row.
func TestSmoke(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-seeds", "2", "-budget", "12", "-baseline", "random"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "dtlz2-mf, 2 seeds: target ") {
		t.Errorf("no target in\n%s", out)
	}
	found := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		found = found || len(f) == 6 && f[0] == "mo-asha"
	}
	if !found {
		t.Errorf("no row for mo-asha in\n%s", out)
	}
	if err := run(context.Background(), []string{"-baseline", "nope"}, &stdout, &stderr); err == nil {
		t.Error("an unknown baseline is accepted")
	}
	if err := run(context.Background(), []string{"-problem", "nope"}, &stdout, &stderr); err == nil {
		t.Error("an unknown problem is accepted")
	}
}

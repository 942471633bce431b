package main

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hone-tune/hone/bench/searchbench"
)

// TestSmoke runs the command in smoke mode (2 seeds, a tiny budget, one
// function, plots into a temporary directory) and checks that its table
// has a row for every method with finite figures, the targets, and the
// plot.
func TestSmoke(t *testing.T) {
	out := t.TempDir()
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"-smoke", "-q", "-out", out}, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	report := stdout.String()
	rows := map[string][]string{}
	for _, line := range strings.Split(report, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| method") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		name := strings.TrimSuffix(cells[0], " (baseline)")
		rows[name] = cells
	}
	for _, m := range searchbench.Methods {
		cells, ok := rows[m]
		if !ok {
			t.Errorf("no row for %s in:\n%s", m, report)
			continue
		}
		// final regret "median [q25, q75]", baseline's final regret, trials,
		// full-fidelity evaluations
		final := strings.NewReplacer("[", " ", "]", " ", ",", " ").Replace(cells[1])
		figures := append(strings.Fields(final), cells[2], cells[7], cells[8])
		for _, f := range figures {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("%s: figure %q is not a finite number (row %q)", m, f, cells)
			}
		}
	}
	for _, want := range []string{"### hartmann6", "Baseline random", "### Targets", "speed-up"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	saved, err := os.ReadFile(filepath.Join(out, "results.md"))
	if err != nil || !bytes.Equal(saved, stdout.Bytes()) {
		t.Errorf("results.md differs from what was printed (err %v)", err)
	}
	if st, err := os.Stat(filepath.Join(out, "hartmann6.png")); err != nil || st.Size() == 0 {
		t.Errorf("no plot: %v", err)
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-functions", "nope"}, {"-methods", "nope", "-smoke"}, {"extra"}, {"-budget", "-1"}} {
		if err := run(context.Background(), append(args, "-out", t.TempDir(), "-q"), io.Discard, io.Discard); err == nil {
			t.Errorf("run(%q) succeeded", args)
		}
	}
}

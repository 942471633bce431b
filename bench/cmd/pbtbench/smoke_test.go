package main

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone/bench/pbtbench"
)

// figureLine matches an exploit figure as ExploitFigure.Lines prints it.
var figureLine = regexp.MustCompile(`^(.+?) (\S+) vs (.+) (\S+): ratio (\S+)$`)

// finite parses a table cell "median [q25, q75]" into its three numbers.
func finite(t *testing.T, what, cell string) []float64 {
	t.Helper()
	var out []float64
	for _, f := range strings.Fields(strings.NewReplacer("[", " ", "]", " ", ",", " ", "*", " ").Replace(cell)) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("%s: %q is not a finite number (cell %q)", what, f, cell)
			continue
		}
		out = append(out, v)
	}
	if len(out) != 3 {
		t.Errorf("%s: cell %q does not hold median [q25, q75]", what, cell)
	}
	return out
}

// TestSmoke runs the command in smoke mode (2 seeds, population 4, a few
// steps, 1 MB checkpoints) and checks its report: a row with finite
// figures for every method on both problems, PBT on the toy above the
// initial Q, the PB2-vs-PBT table, the plots, and exploit figures with
// positive durations and a printed ratio.
func TestSmoke(t *testing.T) {
	out := t.TempDir()
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"-smoke", "-q", "-out", out, "-dir", t.TempDir()}, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	report := stdout.String()

	// Quality tables: "### <problem>, population 4" then rows.
	rows := map[string]map[string][]string{}
	section := ""
	for _, line := range strings.Split(report, "\n") {
		if h, ok := strings.CutPrefix(line, "### "); ok {
			section = h
			continue
		}
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| method") || strings.HasPrefix(line, "| problem") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if rows[section] == nil {
			rows[section] = map[string][]string{}
		}
		rows[section][cells[0]] = cells
	}
	initialQ := pbtbench.ToyQ(pbtbench.ToyTheta0, pbtbench.ToyTheta0)
	for _, sec := range []string{"toy, population 4", "lr-schedule, population 4"} {
		for _, m := range pbtbench.Methods() {
			cells, ok := rows[sec][m]
			if !ok || len(cells) < 7 {
				t.Errorf("%s: no row for %s in:\n%s", sec, m, report)
				continue
			}
			// at 25%, 50%, 100% of the budget, and at the end of the run
			for _, i := range []int{1, 2, 3, 6} {
				v := finite(t, sec+" "+m, cells[i])
				if strings.HasPrefix(sec, "toy") && i == 3 && len(v) == 3 && !(v[0] > initialQ) {
					t.Errorf("toy %s: median final Q %v does not beat the initial %v", m, v[0], initialQ)
				}
			}
		}
	}
	if n := strings.Count(report, " | 4 | pb2"); n != 4 {
		t.Errorf("PB2-vs-PBT table has %d rows, want 4 (toy, lr-schedule; asynchronous, synchronous)", n)
	}
	for _, f := range []string{"pbt-toy-pop4.png", "pbt-lr-schedule-pop4.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("no plot %s: %v", f, err)
		}
	}

	// Exploit figures.
	figures := 0
	for _, line := range strings.Split(report, "\n") {
		m := figureLine.FindStringSubmatch(line)
		if m == nil || !strings.Contains(line, " MB") {
			continue
		}
		figures++
		for _, s := range []string{m[2], m[4]} {
			d, err := time.ParseDuration(s)
			if err != nil || d <= 0 {
				t.Errorf("%q: %q is not a positive duration", line, s)
			}
		}
		if r, err := strconv.ParseFloat(m[5], 64); err != nil || !(r > 0) || math.IsInf(r, 0) {
			t.Errorf("%q: ratio %q is not a finite positive number", line, m[5])
		}
	}
	if figures != 4 {
		t.Errorf("%d exploit figures for 1 MB, want 4:\n%s", figures, report)
	}
	if !strings.Contains(report, "checked: in a PBT run through runner.Run") {
		t.Errorf("no check that exploits restore in place:\n%s", report)
	}
	saved, err := os.ReadFile(filepath.Join(out, "pbtbench.md"))
	if err != nil || !bytes.Equal(saved, stdout.Bytes()) {
		t.Errorf("pbtbench.md differs from what was printed (err %v)", err)
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-what", "nope"}, {"-methods", "nope", "-what", "quality", "-smoke"}, {"extra"},
		{"-sizes", "1XB"}, {"-pops", "a"}, {"-reps", "-1"}} {
		if err := run(context.Background(), append(args, "-out", t.TempDir(), "-q"), io.Discard, io.Discard); err == nil {
			t.Errorf("run(%q) succeeded", args)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1MB": 1 << 20, "10 MB": 10 << 20, "1gb": 1 << 30, "512KB": 512 << 10, "4096": 4096} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0MB", "-1", "MB", "1.5GB"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) succeeded", in)
		}
	}
}

package plots_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hone-tune/hone/internal/spectest"
	"github.com/hone-tune/hone/plots"
	"github.com/hone-tune/hone/report"
)

// TestFront draws the Pareto front of a real run with two objectives
// and a constraint: a red mark per trial on the front, joined by one red
// line, a grey mark per feasible trial off it, an orange cross per
// infeasible one, each counted in the SVG (a legend entry adds one of
// each); axes named by metric and mode; the hypervolume in the title.
func TestFront(t *testing.T) {
	dir := spectest.Run(t, spectest.TradeOffSpec(8, 30, "constraints:\n  - {metric: memory_mb, below: 500}\n"), spectest.TradeOff(2))
	e, figs, skipped := figures(t, dir)
	got, left := names(figs, skipped)
	if !slices.Contains(got, plots.NameFront) || slices.Contains(left, plots.NameFront) {
		t.Fatalf("figures %v, skipped %v", got, left)
	}
	info, err := report.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := report.ParetoFront(e, info.Objectives, info.Constraints, nil)
	if err != nil {
		t.Fatal(err)
	}
	dominated, infeasible := 0, 0
	for _, p := range f.Points {
		switch {
		case p.OnFront:
		case !p.Feasible:
			infeasible++
		default:
			dominated++
		}
	}
	if f.Size < 2 || dominated == 0 || infeasible == 0 {
		t.Fatalf("front of %d, %d dominated, %d infeasible: the test needs each", f.Size, dominated, infeasible)
	}
	fig := figs[slices.Index(got, plots.NameFront)]
	if fig.Lines != 30 {
		t.Errorf("the front figure draws %d trials, want 30", fig.Lines)
	}
	out := t.TempDir()
	paths, err := plots.Write(out, figs, plots.Formats())
	if err != nil {
		t.Fatal(err)
	}
	svg := checkFiles(t, out, figs, paths)[plots.NameFront]
	for _, c := range []struct {
		what string
		n    int
	}{
		{`style="fill:#D62728"`, f.Size + 1},
		{`style="fill:#7E7E7E;`, dominated + 1},
		{`style="fill:none;stroke:#FF7F0E;`, 2 * (infeasible + 1)}, // a cross is two strokes
		{`style="fill:none;stroke:#D62728;stroke-width:1.2"`, 1},
	} {
		if got := strings.Count(svg, c.what); got != c.n {
			t.Errorf("%d paths %s, want %d", got, c.what, c.n)
		}
	}
	for _, want := range []string{"accuracy (max)", "latency_ms (min)", fmt.Sprintf("%d of 30 finished trials on the front", f.Size),
		"feasible under memory_mb ≤ 500", "derived from the front", "infeasible", "reference point"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the front figure lacks %q", want)
		}
	}

	// A given reference point is drawn and named so.
	info.Reference = []float64{0, 200}
	figs2, _, err := plots.Figures(e, info, plots.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(t.TempDir(), "given")
	if _, err := plots.Write(out2, figs2, []string{plots.SVG}); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, fg := range figs2 {
		if fg.Name == plots.NameFront {
			if err := fg.Encode(&b, plots.SVG); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !strings.Contains(b.String(), "against the reference point (0, 200), given") {
		t.Errorf("the front figure with a given reference point does not say so")
	}
}

// TestFrontThreeObjectives draws a panel per pair of three objectives.
func TestFrontThreeObjectives(t *testing.T) {
	body := strings.Replace(spectest.TradeOffSpec(9, 12, ""), "  - {metric: latency_ms, mode: min}\n",
		"  - {metric: latency_ms, mode: min}\n  - {metric: memory_mb, mode: min}\n", 1)
	dir := spectest.Run(t, body, spectest.TradeOff(2))
	_, figs, _ := figures(t, dir)
	var svg strings.Builder
	for _, f := range figs {
		if f.Name == plots.NameFront {
			if err := f.Encode(&svg, plots.SVG); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, pair := range []string{"accuracy (max) and latency_ms (min)", "accuracy (max) and memory_mb (min)", "latency_ms (min) and memory_mb (min)"} {
		if n := strings.Count(svg.String(), "Pareto front of 3 objectives: "+pair); n != 1 {
			t.Errorf("%d panels of %s, want 1", n, pair)
		}
	}
}

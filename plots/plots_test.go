package plots_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/spectest"
	"github.com/hone-tune/hone/plots"
	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/results"
)

// figures opens the experiment in dir and builds its figures.
func figures(t *testing.T, dir string) (*results.Experiment, []*plots.Figure, []plots.Skipped) {
	t.Helper()
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	info, err := report.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	figs, skipped, err := plots.Figures(e, info, plots.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e, figs, skipped
}

const fifoSpec = `metric: loss
mode: min
seed: 2
num_samples: 8
command: [unused]
search_space:
  x: {uniform: [0, 0.9]}
  lr: {loguniform: [0.0001, 0.1]}
  opt: {choice: [adam, sgd]}
  fixed: 3
points_to_evaluate:
  - {x: 0.5, lr: 0.01, opt: sgd}
failure: {max_failures: 0}
max_concurrent_trials: 2
stop: {training_iteration: 6}
`

// names returns the figures' names and the skipped ones'.
func names(figs []*plots.Figure, skipped []plots.Skipped) (got, left []string) {
	for _, f := range figs {
		got = append(got, f.Name)
	}
	for _, s := range skipped {
		if s.Reason == "" {
			left = append(left, s.Name+" (no reason)")
			continue
		}
		left = append(left, s.Name)
	}
	return got, left
}

// checkFiles checks that every figure was written in both formats, each
// file decodes and is not blank, and returns the SVGs by figure name.
func checkFiles(t *testing.T, dir string, figs []*plots.Figure, paths []string) map[string]string {
	t.Helper()
	if len(paths) != 2*len(figs) {
		t.Fatalf("%d files for %d figures: %v", len(paths), len(figs), paths)
	}
	svgs := map[string]string{}
	for _, f := range figs {
		for _, format := range plots.Formats() {
			path := filepath.Join(dir, f.Name+"."+format)
			if !slices.Contains(paths, path) {
				t.Errorf("%s was not reported written", path)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			switch format {
			case plots.PNG:
				spectest.CheckPNG(t, path, data)
			case plots.SVG:
				spectest.CheckSVG(t, path, data, 10)
				svgs[f.Name] = string(data)
			}
		}
	}
	return svgs
}

// strokes counts the SVG's paths of the line width w (points): each is
// one line the figure drew in that width.
func strokes(svg string, w string) int {
	return len(regexp.MustCompile(`<path [^>]*stroke-width:`+regexp.QuoteMeta(w)+`"`).FindAllString(svg, -1))
}

// withResults counts the trials with a result.
func withResults(t *testing.T, e *results.Experiment) int {
	t.Helper()
	n := 0
	for _, tr := range e.Trials {
		rows, err := tr.Results()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) > 0 {
			n++
		}
	}
	return n
}

// TestFIFO draws a real FIFO run of Go trials with a trial that fails
// before its first result: learning curves (a line per trial with results,
// the best thicker), best so far and parallel coordinates, in files that
// decode and are not blank; no PBT or rung figures, each with a reason.
func TestFIFO(t *testing.T) {
	dir := spectest.Run(t, fifoSpec, spectest.Curves(6))
	e, figs, skipped := figures(t, dir)
	got, left := names(figs, skipped)
	if !slices.Equal(got, []string{plots.NameCurves, plots.NameBestSoFar, plots.NameParallel}) ||
		!slices.Equal(left, []string{plots.NameLineage, plots.NameSchedules, plots.NameRungs, plots.NameFront}) {
		t.Fatalf("figures %v, skipped %v", got, left)
	}
	n := withResults(t, e)
	if n != 7 || figs[0].Lines != n || figs[2].Lines != n || figs[0].Note != "" {
		t.Errorf("%d trials with results; %d curves, %d parallel lines, note %q", n, figs[0].Lines, figs[2].Lines, figs[0].Note)
	}
	out := filepath.Join(t.TempDir(), "a", "plots") // made with its parent
	paths, err := plots.Write(out, figs, plots.Formats())
	if err != nil {
		t.Fatal(err)
	}
	svgs := checkFiles(t, out, figs, paths)
	// A line per trial: the others thin, the best thick.
	if thin, thick := strokes(svgs[plots.NameCurves], "1.2"), strokes(svgs[plots.NameCurves], "3"); thin != n-1 || thick != 1 {
		t.Errorf("learning curves: %d thin and %d thick lines for %d trials", thin, thick, n)
	}
	if thin, thick := strokes(svgs[plots.NameParallel], "1.2"), strokes(svgs[plots.NameParallel], "3"); thin != n-1 || thick != 1 {
		t.Errorf("parallel coordinates: %d thin and %d thick lines for %d trials", thin, thick, n)
	}
	best, _, err := e.Best(hone.Objective{Metric: "loss", Mode: hone.Min}, results.ScopeLast)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{plots.NameCurves, plots.NameParallel, plots.NameBestSoFar} {
		if !strings.Contains(svgs[name], best.ID) {
			t.Errorf("%s does not name the best trial %s", name, best.ID)
		}
	}
	for _, want := range []string{"training_iteration", "lr", "opt", "adam", "sgd", "(log)"} {
		if !strings.Contains(svgs[plots.NameCurves]+svgs[plots.NameParallel], want) {
			t.Errorf("no %q in the learning curves or the parallel coordinates", want)
		}
	}
}

// TestHyperBand draws the rungs of a real HyperBand run: a mark per trial
// and rung reached, shaped by its outcome, and every rung labelled.
func TestHyperBand(t *testing.T) {
	dir := spectest.Run(t, spectest.CurveSpec(4, 12, `scheduler: {name: hyperband, max_t: 9, reduction_factor: 3}
max_concurrent_trials: 4
`), sim.New(sim.Curve{MaxIterations: 9}.New))
	e, figs, skipped := figures(t, dir)
	got, left := names(figs, skipped)
	if !slices.Equal(got, []string{plots.NameCurves, plots.NameBestSoFar, plots.NameRungs, plots.NameParallel}) ||
		!slices.Equal(left, []string{plots.NameLineage, plots.NameSchedules, plots.NameFront}) {
		t.Fatalf("figures %v, skipped %v", got, left)
	}
	info, err := report.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Brackets, err = report.Brackets(dir); err != nil || info.Brackets == nil || info.Brackets.Note != "" {
		t.Fatalf("brackets: %+v, %v", info.Brackets, err)
	}
	rg, err := report.SuccessiveHalving(e, info, 0)
	if err != nil {
		t.Fatal(err)
	}
	reached, used := 0, 0
	for _, b := range rg.Brackets {
		for _, g := range b.Rungs {
			reached += g.Reached
		}
		if b.Trials > 0 {
			used++
		}
	}
	if figs[2].Lines != reached || reached <= 12 || used < 2 {
		t.Errorf("%d marks for %d trials at rungs of %d brackets", figs[2].Lines, reached, used)
	}
	out := t.TempDir()
	paths, err := plots.Write(out, figs, plots.Formats())
	if err != nil {
		t.Fatal(err)
	}
	svg := checkFiles(t, out, figs, paths)[plots.NameRungs]
	// A panel per bracket that took a trial, titled with it, with its
	// own rungs and legend.
	for _, b := range rg.Brackets {
		if b.Trials == 0 {
			continue
		}
		if want := fmt.Sprintf("%s: loss of its %d trials", b.Label, b.Trials); !strings.Contains(svg, want) {
			t.Errorf("no panel %q", want)
		}
		for _, o := range []string{report.OutcomePromoted, report.OutcomeStopped, report.OutcomeCompleted} {
			if n := countOutcome(b.Rungs, o); n > 0 && !strings.Contains(svg, fmt.Sprintf("%s (%d)", o, n)) {
				t.Errorf("%s: no legend entry for %s", b.Label, o)
			}
		}
	}
	if got := strings.Count(svg, "Rungs of hyperband, band "); got != used {
		t.Errorf("%d panels, %d brackets with trials", got, used)
	}
}

func countOutcome(rungs []report.Rung, o string) int {
	n := 0
	for _, g := range rungs {
		n += g.Counts[o]
	}
	return n
}

// TestPBT draws the lineage and the schedules of a real PBT run: a row
// per trial, a dashed line per exploit, and a schedule per trial; and
// checks that drawing the same experiment again gives the same bytes.
func TestPBT(t *testing.T) {
	dir := spectest.Run(t, pbtSpec, sim.New(sim.Curve{MaxIterations: 15}.New))
	e, figs, skipped := figures(t, dir)
	got, left := names(figs, skipped)
	if !slices.Equal(got, []string{plots.NameCurves, plots.NameBestSoFar, plots.NameLineage, plots.NameSchedules, plots.NameParallel}) ||
		!slices.Equal(left, []string{plots.NameRungs, plots.NameFront}) {
		t.Fatalf("figures %v, skipped %v", got, left)
	}
	lin, err := report.PBTLineage(e)
	if err != nil {
		t.Fatal(err)
	}
	if len(lin.Exploits) == 0 || figs[2].Lines != len(e.Trials) || figs[3].Lines != len(e.Trials) {
		t.Fatalf("%d exploits; lineage of %d trials, schedules of %d, for %d trials", len(lin.Exploits), figs[2].Lines, figs[3].Lines, len(e.Trials))
	}
	out := t.TempDir()
	paths, err := plots.Write(out, figs, plots.Formats())
	if err != nil {
		t.Fatal(err)
	}
	svgs := checkFiles(t, out, figs, paths)
	for _, tr := range e.Trials {
		if !strings.Contains(svgs[plots.NameLineage], tr.ID) || !strings.Contains(svgs[plots.NameSchedules], "trial "+tr.ID) {
			t.Errorf("trial %s is not named in the lineage and the schedules", tr.ID)
		}
	}
	// A dashed line per exploit, from the donor.
	if dashed := strings.Count(svgs[plots.NameLineage], "stroke-dasharray"); dashed != len(lin.Exploits) {
		t.Errorf("%d dashed lines for %d exploits", dashed, len(lin.Exploits))
	}
	if !strings.Contains(svgs[plots.NameSchedules], "PBT schedule of rate") {
		t.Error("no schedule of rate")
	}

	// The same experiment, read again, gives the same files byte for byte.
	_, again, _ := figures(t, dir)
	for _, f := range again {
		for _, format := range plots.Formats() {
			var b bytes.Buffer
			if err := f.Encode(&b, format); err != nil {
				t.Fatal(err)
			}
			written, err := os.ReadFile(filepath.Join(out, f.Name+"."+format))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b.Bytes(), written) {
				t.Errorf("%s.%s differs between two drawings of the same experiment", f.Name, format)
			}
		}
	}
}

// TestNothingToDraw checks the figures of an experiment without a metric
// and with a metric but no mode or time attribute, and that an output
// directory that cannot be made, or an unknown format, is an error that
// names it.
func TestNothingToDraw(t *testing.T) {
	dir := spectest.Run(t, fifoSpec, spectest.Curves(2))
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	figs, skipped, err := plots.Figures(e, report.Info{TimeAttr: hone.FieldTrainingIteration}, plots.Options{})
	if err != nil || len(figs) != 0 || len(skipped) != 7 || skipped[0].Reason != "no metric" {
		t.Errorf("without a metric: %v, skipped %v, %v", figs, skipped, err)
	}
	// A metric alone is enough: min, training_iteration.
	figs, _, err = plots.Figures(e, report.Info{Objective: hone.Objective{Metric: "loss"}}, plots.Options{})
	if err != nil || len(figs) != 3 || figs[0].Lines != 7 {
		t.Errorf("with a metric alone: %d figures, %v", len(figs), err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	paths, err := plots.Write(filepath.Join(file, "plots"), figs, plots.Formats())
	if err == nil || len(paths) != 0 || !strings.Contains(err.Error(), filepath.Join(file, "plots")) {
		t.Errorf("writing under a file: %v, %v", paths, err)
	}
	var b bytes.Buffer
	if err := figs[0].Encode(&b, "pdf"); err == nil || !strings.Contains(err.Error(), "pdf") {
		t.Errorf("encode as pdf: %v", err)
	}
}

const pbtSpec = `metric: loss
mode: min
seed: 6
num_samples: 4
command: [unused]
search_space:
  rate: {uniform: [0.05, 0.5]}
scheduler:
  name: pbt
  time_attr: training_iteration
  perturbation_interval: 3
  resample_probability: 1
  hyperparam_mutations:
    rate: {uniform: [0.05, 0.5]}
max_concurrent_trials: 4
stop: {training_iteration: 15}
`

// TestRungsPerBracket draws the rungs of an ASHA run with three brackets:
// a panel per bracket that took a trial, each with its own trials.
func TestRungsPerBracket(t *testing.T) {
	dir := spectest.Run(t, spectest.CurveSpec(7, 30, `scheduler: {name: asha, max_t: 27, grace_period: 1, reduction_factor: 3, brackets: 3}
max_concurrent_trials: 4
`), sim.New(sim.Curve{MaxIterations: 27}.New))
	e, figs, _ := figures(t, dir)
	a, err := report.Brackets(dir)
	if err != nil || a == nil || a.Note != "" {
		t.Fatalf("brackets: %+v, %v", a, err)
	}
	i := slices.IndexFunc(figs, func(f *plots.Figure) bool { return f.Name == plots.NameRungs })
	if i < 0 {
		t.Fatal("no rungs figure")
	}
	out := t.TempDir()
	paths, err := plots.Write(out, figs[i:i+1], plots.Formats())
	if err != nil {
		t.Fatal(err)
	}
	svg := checkFiles(t, out, figs[i:i+1], paths)[plots.NameRungs]
	used, total := 0, 0
	for _, b := range a.Brackets {
		total += len(b.Trials)
		if len(b.Trials) == 0 {
			continue
		}
		used++
		if want := fmt.Sprintf("Rungs of asha, %s: loss of its %d trials", b.Label, len(b.Trials)); !strings.Contains(svg, want) {
			t.Errorf("no panel %q", want)
		}
	}
	if used != 3 || total != len(e.Trials) {
		t.Errorf("%d brackets used, %d trials placed of %d", used, total, len(e.Trials))
	}
	if got := strings.Count(svg, "Rungs of asha, bracket "); got != used {
		t.Errorf("%d panels, %d brackets with trials", got, used)
	}
}

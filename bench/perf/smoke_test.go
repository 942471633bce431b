package perf

import (
	"bytes"
	"context"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSmoke runs every shape but process (which bench/process tests) at
// smoke sizes, the real code paths, and checks the figures and what each
// measurement counted: the results hone saw equal the results the
// trainables reported, and a resume brings back every trial (the
// measurements themselves fail when a trial ends in any other status, a
// restored trial lost progress, or the rewritten journal differs from the
// runner's). It checks that both plots are written and decode as PNG.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs whole experiments and writes checkpoints")
	}
	cfg := SmokeConfig()
	cfg.Dir = t.TempDir()
	cfg.PlotDir = filepath.Join(t.TempDir(), "plots")
	var out bytes.Buffer
	rows, err := Run(context.Background(), cfg, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, &out)
	}
	text := out.String()

	inproc := 0
	for _, n := range cfg.ScalingTrials {
		if n <= cfg.ScalingInprocMax {
			inproc++
		}
	}
	want := map[string]int{ShapeBookkeeping: 1, ShapeResults: 6, ShapeScaling: 2*len(cfg.ScalingTrials) + inproc,
		ShapeCheckpoint: 2 * len(cfg.CheckpointSizes),
		ShapeJournal:    2, ShapeMemory: 2, ShapePausing: 1, ShapeOverhead: 1}
	got := map[string]int{}
	for _, r := range rows {
		got[r.Shape]++
		finite := func(what string, v float64) {
			if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
				t.Errorf("%s: %s: %s = %v, want a finite positive number", r.Shape, r.Name, what, v)
			}
		}
		finite("figure", r.Value)
		finite("baseline", r.Base)
		finite("ratio", r.Ratio())
		for _, s := range append(append([]float64{}, r.Samples...), r.BaseSamples...) {
			finite("sample", s)
		}
		if len(r.Samples) == 0 || len(r.BaseSamples) == 0 {
			t.Errorf("%s: %s: no samples", r.Shape, r.Name)
		}
		if r.Observed != r.Expected {
			t.Errorf("%s: %s: observed %d, expected %d", r.Shape, r.Name, r.Observed, r.Expected)
		}
		switch {
		case r.Shape == ShapeResults, r.Shape == ShapeBookkeeping, r.Shape == ShapeScaling, r.Shape == ShapePausing:
			if r.Expected <= 0 {
				t.Errorf("%s: %s: counted %d results, want > 0", r.Shape, r.Name, r.Expected)
			}
		case r.Shape == ShapeOverhead:
			// Every trial ended TERMINATED with its one result (the
			// measurement checks each), and hone received one per trial.
			if r.Observed != int64(cfg.OverheadTrials) {
				t.Errorf("overhead: hone saw %d results, want one per trial (%d)", r.Observed, cfg.OverheadTrials)
			}
		case r.Shape == ShapeJournal && strings.HasPrefix(r.Name, "runner.Resume"):
			if r.Observed != int64(cfg.Trials) {
				t.Errorf("resume brought back %d trials, want %d", r.Observed, cfg.Trials)
			}
		}
		if !strings.Contains(text, "| "+r.Shape+": "+r.Name+" | ") {
			t.Errorf("no table row for %s: %s in:\n%s", r.Shape, r.Name, text)
		}
	}
	for shape, n := range want {
		if got[shape] != n {
			t.Errorf("%d rows of %s, want %d", got[shape], shape, n)
		}
	}
	// Every results variant with FIFO reports every result of every trial.
	for _, r := range rows {
		if r.Shape == ShapeResults && strings.Contains(r.Name, ", fifo,") && r.Expected != int64(cfg.ResultTrials*cfg.ResultsPerTrial) {
			t.Errorf("%s: %d results, want %d", r.Name, r.Expected, cfg.ResultTrials*cfg.ResultsPerTrial)
		}
	}
	for _, s := range []string{"| shape | figure | baseline | ratio | target | met? |", "scratch: ", "tmpfs", "load average ", "plots: "} {
		if !strings.Contains(text, s) {
			t.Errorf("output lacks %q:\n%s", s, text)
		}
	}
	if ents, err := os.ReadDir(cfg.Dir); err != nil || len(ents) != 0 {
		t.Errorf("scratch directory not cleaned up: %v, %d entries", err, len(ents))
	}
	for _, name := range []string{throughputPlot, checkpointPlot} {
		checkPNG(t, filepath.Join(cfg.PlotDir, name))
	}
}

// checkPNG checks that the file at p is a PNG image of a plausible size.
func checkPNG(t *testing.T, p string) {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Errorf("plot: %v", err)
		return
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Errorf("plot %s: %v", filepath.Base(p), err)
		return
	}
	if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 200 {
		t.Errorf("plot %s: %v, want at least 400 × 200 pixels", filepath.Base(p), b)
	}
}

// TestMainProfiles runs two cheap measurements through the command with
// profiling on and checks that each wrote its profiles.
func TestMainProfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs experiments")
	}
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu"), filepath.Join(dir, "mem")
	var stdout, stderr bytes.Buffer
	plots := filepath.Join(dir, "plots")
	args := []string{"-smoke", "-q", "-dir", dir, "-only", "results/sim-fifo,memory,scaling/sim-trials", "-cpuprofile", cpu, "-memprofile", mem,
		"-plots", plots, "-scaling-trials", "30"}
	if code := Main(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, &stdout, &stderr)
	}
	for _, p := range []string{cpu + "-results-sim-fifo.pprof", mem + "-results-sim-fifo.pprof",
		mem + "-memory-live.pprof", mem + "-memory-finished.pprof"} {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("profile %s: %v", filepath.Base(p), err)
		}
	}
	if strings.Contains(stdout.String(), "## bookkeeping") || strings.Contains(stdout.String(), "inproc executor, fifo, 30 trials") {
		t.Errorf("-only ran an unselected shape or variant:\n%s", &stdout)
	}
	if !strings.Contains(stdout.String(), "$ perfbench -smoke") {
		t.Errorf("no command line at the top of the output:\n%s", &stdout)
	}
	// Only the scaling shape ran of the two that are plotted.
	checkPNG(t, filepath.Join(plots, throughputPlot))
	if _, err := os.Stat(filepath.Join(plots, checkpointPlot)); err == nil {
		t.Errorf("%s written without the checkpoint shape", checkpointPlot)
	}
}

// TestMainFlags checks the command's answers to bad flags.
func TestMainFlags(t *testing.T) {
	for _, args := range [][]string{{"-only", "nosuch"}, {"-checkpoint-sizes", "1,x"}, {"-scaling-trials", "10,0"}, {"stray"}} {
		if code := Main(context.Background(), args, io.Discard, io.Discard); code == 0 {
			t.Errorf("Main(%q) = 0, want an error status", args)
		}
	}
}

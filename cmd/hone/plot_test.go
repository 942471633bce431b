package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hone-tune/hone/internal/spectest"
	"github.com/hone-tune/hone/trial"
)

// plotFiles are the files hone plot writes for a FIFO experiment.
var plotFiles = []string{
	"best_so_far.png", "best_so_far.svg", "learning_curves.png", "learning_curves.svg",
	"parallel_coordinates.png", "parallel_coordinates.svg",
}

// checkPlots checks that hone plot's stdout lists exactly the files of
// names in dir, and that each decodes: a PNG with more than one colour,
// an SVG that parses as XML and draws paths and text.
func checkPlots(t *testing.T, stdout, dir string, names []string) {
	t.Helper()
	var want []string
	for _, n := range names {
		want = append(want, filepath.Join(dir, n))
	}
	got := strings.Fields(stdout)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("hone plot wrote\n%s\nwant %v", stdout, want)
	}
	for _, p := range want {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(p, ".png") {
			spectest.CheckPNG(t, p, data)
			continue
		}
		spectest.CheckSVG(t, p, data, 5)
	}
}

// TestPlotCommand plots a finished run: by default into DIR/plots, with
// --out elsewhere, the same bytes both times; the charts it has no data
// for are named with the reason.
func TestPlotCommand(t *testing.T) {
	c := cli{t: t, exec: goTrainer(nil)}
	path, dir := writeSpec(t, "plotted", gridSpec)
	if code, _, errOut := c.run("run", path); code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	code, out, errOut := c.run("plot", dir)
	if code != exitOK {
		t.Fatalf("plot: exit %d\n%s", code, errOut)
	}
	checkPlots(t, out, filepath.Join(dir, plotsDir), plotFiles)
	for _, want := range []string{"hone: no pbt_lineage: no PBT exploits", "hone: no pbt_schedules:", "hone: no rungs: the scheduler has no rungs"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	}
	other := filepath.Join(t.TempDir(), "new", "dir")
	code, out, errOut = c.run("plot", dir, "--out", other, "--max-trials", "2")
	if code != exitOK {
		t.Fatalf("plot --out: exit %d\n%s", code, errOut)
	}
	checkPlots(t, out, other, plotFiles)
	if !strings.Contains(errOut, "hone: learning_curves: the best 2 of 3 trials") {
		t.Errorf("--max-trials 2: stderr %q", errOut)
	}
	code, out, errOut = c.run("plot", dir, "--out", other)
	if code != exitOK {
		t.Fatalf("plot again: exit %d\n%s", code, errOut)
	}
	for _, name := range plotFiles {
		a, err := os.ReadFile(filepath.Join(dir, plotsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(other, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two plots of the same experiment", name)
		}
	}

	// An experiment whose spec is gone (one run from Go) needs --metric.
	if err := os.Remove(filepath.Join(dir, specCopy)); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = c.run("plot", dir)
	if code != exitUsage || !strings.Contains(errOut, "names no metric; pass --metric") {
		t.Errorf("no spec: exit %d\n%s", code, errOut)
	}
	code, out, errOut = c.run("plot", dir, "--metric", "score", "--mode", "max", "--out", t.TempDir())
	if code != exitOK || len(strings.Fields(out)) != len(plotFiles) {
		t.Errorf("no spec, --metric score: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestPlotErrors checks hone plot's refusals: a missing directory, one
// without an experiment, an experiment without results, a metric no result
// has, an output directory that cannot be made, a bad flag.
func TestPlotErrors(t *testing.T) {
	c := cli{t: t, exec: goTrainer(nil)}
	missing := filepath.Join(t.TempDir(), "nothing")
	code, _, errOut := c.run("plot", missing)
	if code != exitUsage || errOut != "hone: "+missing+": no such directory\n" {
		t.Errorf("missing directory: exit %d %q", code, errOut)
	}
	empty := t.TempDir()
	code, _, errOut = c.run("plot", empty)
	if code != exitUsage || !strings.Contains(errOut, empty+" holds no experiment (no journal)") {
		t.Errorf("empty directory: exit %d %q", code, errOut)
	}

	// Every trial fails before its first result.
	path, failed := writeSpec(t, "failed", "metric: score\nsearch_space:\n  x: {grid: [-1, -2]}\ncommand: [unused]\n")
	if code, _, errOut := c.run("run", path); code != exitTrialErrors {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	code, _, errOut = c.run("plot", failed)
	if code != exitFailed || !strings.Contains(errOut, failed+" has no results yet (2 trials): nothing to plot") {
		t.Errorf("no results: exit %d %q", code, errOut)
	}

	path, dir := writeSpec(t, "ok", gridSpec)
	if code, _, errOut := c.run("run", path); code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	code, _, errOut = c.run("plot", dir, "--metric", "acc")
	if code != exitFailed || !strings.Contains(errOut, `has the metric "acc": nothing to plot (a result has `) ||
		!strings.Contains(errOut, "score, ") {
		t.Errorf("--metric acc: exit %d %q", code, errOut)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := c.run("plot", dir, "--out", filepath.Join(file, "plots"))
	if code != exitFailed || out != "" || !strings.Contains(errOut, "hone: write plots to "+filepath.Join(file, "plots")+": ") {
		t.Errorf("--out under a file: exit %d %q %q", code, out, errOut)
	}
	for _, args := range [][]string{{"--mode", "maximum"}, {"--max-trials", "0"}, {"--nope"}} {
		code, _, errOut = c.run(append([]string{"plot", dir}, args...)...)
		if code != exitUsage || errOut == "" {
			t.Errorf("%v: exit %d %q", args, code, errOut)
		}
	}
	if code, _, _ := c.run("plot"); code != exitUsage {
		t.Errorf("plot without a directory: exit %d", code)
	}
}

// TestS3Plot plots an experiment that lives in an object store from
// another machine's point of view (an empty cache): by default into
// NAME-plots in the current directory.
func TestS3Plot(t *testing.T) {
	storage := s3Storage(t)
	c := cli{t: t, exec: goTrainer(nil)}
	path, _ := writeSpec(t, "s3plot", gridSpec)
	if code, _, errOut := c.run("run", "--storage", storage, path); code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	t.Setenv("HONE_CACHE_DIR", t.TempDir())
	wd := t.TempDir()
	t.Chdir(wd)
	code, out, errOut := c.run("plot", expURL(storage, "s3plot"))
	if code != exitOK {
		t.Fatalf("plot: exit %d\n%s", code, errOut)
	}
	checkPlots(t, strings.ReplaceAll(out, "s3plot-plots/", filepath.Join(wd, "s3plot-plots")+"/"), filepath.Join(wd, "s3plot-plots"), plotFiles)
	if secret := os.Getenv("AWS_SECRET_ACCESS_KEY"); secret != "" && strings.Contains(out+errOut, secret) {
		t.Error("hone plot shows the secret key")
	}
	code, _, errOut = c.run("plot", expURL(storage, "nothing"))
	if code != exitUsage || !strings.Contains(errOut, "holds no experiment (no journal)") {
		t.Errorf("an empty prefix: exit %d %q", code, errOut)
	}
}

// TestPlotRunning plots an experiment while it runs: the charts of the
// results so far, and a note that it runs.
func TestPlotRunning(t *testing.T) {
	reached, gate := make(chan struct{}), make(chan struct{})
	var once sync.Once
	c := cli{t: t, exec: goTrainer(func(s trial.Session, it int) {
		if it == 3 {
			once.Do(func() { close(reached) })
			<-gate
		}
	})}
	path, dir := writeSpec(t, "running", gridSpec)
	errb, code := startCLI(context.Background(), c, "run", path)
	defer func() {
		close(gate)
		if c := <-code; c != exitOK {
			t.Errorf("run: exit %d\n%s", c, errb.String())
		}
	}()
	select {
	case <-reached:
	case c := <-code:
		t.Fatalf("run: exit %d before its third iteration\n%s", c, errb.String())
	}
	// Rows reach result.json within about 100 ms of their result.
	out := t.TempDir()
	for deadline := time.Now().Add(time.Minute); ; {
		n, stdout, stderr := c.run("plot", dir, "--out", out)
		if n == exitOK {
			// The parallel coordinates need two trials with a score.
			if !strings.Contains(stdout, "learning_curves.svg") || !strings.Contains(stdout, "best_so_far.png") ||
				!strings.Contains(stderr, "hone: "+dir+" is running: the plots show it as it is now") {
				t.Errorf("plot of a running experiment:\n%s\n%s", stdout, stderr)
			}
			break
		}
		if n != exitFailed || !strings.Contains(stderr, "has no results yet") || time.Now().After(deadline) {
			t.Fatalf("plot of a running experiment: exit %d\n%s", n, stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

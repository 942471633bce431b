// Package process is the subprocess benchmark of docs/BENCHMARKS.md §1: what
// running trials as processes costs in hone, beside the physical limits
// measured in the same run on the same machine.
//
// It measures, each as the median of a few repetitions:
//
//   - Trial launches per second: an experiment of many trials of a Go
//     trial program (cmd/proctrial, built with go build) that reports one
//     result and exits, run through hone's process executor and runner
//     (random search, FIFO, two trials at a time, the local store and the
//     per-trial files without fsync). Baselines: fork+exec of /bin/true one
//     at a time and two at a time, and the trial program run by hand
//     (without hone) two at a time.
//   - Results per second in aggregate: 2 and 16 trials at once, each
//     reporting as fast as hone answers, over the wall time of the whole
//     experiment. Baseline: as many child processes echoing a report line
//     over a pipe, each driven by its own goroutine that writes the line,
//     reads it back and decodes it with wire.Decode (hone's own decoder),
//     also over the wall time including the start of the children.
//   - The same for a Python trial using clients/python/hone.py, when
//     python3 (3.8 or newer) is installed, with two more baselines: the
//     script run by hand, and a Python child echoing the lines.
//
// Every figure is printed on one line with its baseline and the ratio
// hone/baseline:
//
//	go launches/s 430 vs fork+exec /bin/true, one at a time 1180/s: ratio 0.36
//
// Run it with cmd/procbench.
package process

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hone-tune/hone/bench/internal/benchutil"
)

// Config says how much to measure.
type Config struct {
	// Trials is the number of trials of each launch measurement (and of
	// fork+exec runs of each of its baselines).
	Trials int
	// PyTrials is Trials for the Python launch measurements, which take
	// far longer per trial.
	PyTrials int
	// Results is the number of results each trial reports in the results
	// measurements (and of round trips per child in their baselines).
	Results int
	// Concurrency lists how many trials report at once in the results
	// measurements.
	Concurrency []int
	// Reps is how many times everything is measured; figures are medians.
	Reps int
	// Python enables the Python figures when python3 is installed.
	Python bool
	// BenchDir is the bench module's source directory; "" finds it.
	BenchDir string
	// Log receives progress notes (nil: none).
	Log io.Writer
}

// DefaultConfig is the configuration of a full run.
func DefaultConfig() Config {
	return Config{Trials: 500, PyTrials: 100, Results: 2000, Concurrency: []int{2, 16}, Reps: 3, Python: true}
}

// SmokeConfig is a configuration that runs in a few seconds, to check that
// the benchmark works, not to measure anything.
func SmokeConfig() Config {
	return Config{Trials: 6, PyTrials: 6, Results: 20, Concurrency: []int{2, 16}, Reps: 1, Python: true}
}

// LaunchConcurrency is how many trials run at once in the launch
// measurement.
const LaunchConcurrency = 2

// Figure is one measured rate beside its baseline.
type Figure struct {
	What     string  // e.g. "go launches/s"
	Value    float64 // per second
	Baseline string  // e.g. "fork+exec /bin/true, one at a time"
	Base     float64 // per second
}

// Ratio is Value / Base.
func (f Figure) Ratio() float64 { return f.Value / f.Base }

// String renders the figure as one output line.
func (f Figure) String() string {
	return fmt.Sprintf("%s %s vs %s %s/s: ratio %s", f.What, formatRate(f.Value), f.Baseline, formatRate(f.Base), formatRatio(f.Ratio()))
}

// formatRate renders a rate with about three significant digits, without
// an exponent for the rates the benchmark meets.
func formatRate(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

// formatRatio renders a ratio with two significant digits.
func formatRatio(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

// Main is the procbench command: it parses args, runs the benchmark and
// prints the figures to stdout and progress to stderr. It returns the
// process's exit status.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("procbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	smoke := fs.Bool("smoke", false, "tiny sizes: check that everything runs (figures mean little)")
	trials := fs.Int("trials", 0, "trials per launch measurement (default 500, smoke 6)")
	pyTrials := fs.Int("py-trials", 0, "trials per Python launch measurement (default 100, smoke 6)")
	results := fs.Int("results", 0, "results per trial in the results measurements (default 2000, smoke 20)")
	reps := fs.Int("reps", 0, "repetitions; figures are medians (default 3, smoke 1)")
	conc := fs.String("concurrency", "", "comma-separated numbers of trials reporting at once (default 2,16)")
	noPython := fs.Bool("no-python", false, "skip the Python figures")
	src := fs.String("src", "", "the bench module's source directory (default: found from this program's source or the working directory)")
	quiet := fs.Bool("q", false, "no progress notes on stderr")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the whole run (hone's side; trials are other processes) to this file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: procbench [flags]\n\nMeasures trial launches/s and results/s of subprocess trials against fork+exec and pipe baselines.")
		fs.PrintDefaults()
	}
	if status, ok := benchutil.ParseFlags(fs, args, stderr); !ok {
		return status
	}
	cfg := DefaultConfig()
	if *smoke {
		cfg = SmokeConfig()
	}
	if *trials != 0 {
		cfg.Trials = *trials
	}
	if *pyTrials != 0 {
		cfg.PyTrials = *pyTrials
	}
	if *results != 0 {
		cfg.Results = *results
	}
	if *reps != 0 {
		cfg.Reps = *reps
	}
	if *conc != "" {
		cfg.Concurrency = nil
		for _, s := range strings.Split(*conc, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 1 {
				fmt.Fprintf(stderr, "procbench: -concurrency %q: want positive integers separated by commas\n", *conc)
				return 2
			}
			cfg.Concurrency = append(cfg.Concurrency, n)
		}
	}
	cfg.Python = !*noPython
	cfg.BenchDir = *src
	if !*quiet {
		cfg.Log = stderr
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(stderr, "procbench:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(stderr, "procbench:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	if err := Run(ctx, cfg, stdout); err != nil {
		fmt.Fprintln(stderr, "procbench:", err)
		return 1
	}
	return 0
}

// Run measures everything cfg asks for and prints a header, the figures
// and notes to w.
func Run(ctx context.Context, cfg Config, w io.Writer) error {
	if cfg.Trials < 1 || cfg.PyTrials < 1 || cfg.Results < 1 || cfg.Reps < 1 || len(cfg.Concurrency) == 0 {
		return fmt.Errorf("trials, py-trials, results, reps and concurrency must be positive (got %d, %d, %d, %d, %v)",
			cfg.Trials, cfg.PyTrials, cfg.Results, cfg.Reps, cfg.Concurrency)
	}
	if _, err := os.Stat(trueBin); err != nil {
		return fmt.Errorf("the fork+exec baseline needs %s: %w", trueBin, err)
	}
	tmp, err := os.MkdirTemp("", "procbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	b := &bench{cfg: cfg, tmp: tmp, samples: map[string][]float64{}}
	if err := b.setup(ctx); err != nil {
		return err
	}
	fmt.Fprintf(w, "procbench: %s/%s, %d CPUs, %s; %s per launch run (Python: %d), %s per trial; medians of %s\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), plural(cfg.Trials, "trial"), cfg.PyTrials,
		plural(cfg.Results, "result"), plural(cfg.Reps, "repetition"))
	for rep := range cfg.Reps {
		if err := b.measure(ctx, rep); err != nil {
			return err
		}
	}
	for _, f := range b.figures() {
		fmt.Fprintln(w, f)
	}
	for _, n := range b.notes {
		fmt.Fprintln(w, "note:", n)
	}
	return nil
}

// bench holds what a run has built and measured.
type bench struct {
	cfg     Config
	tmp     string
	goTrial string // the built proctrial
	python  *pythonTrial
	line    []byte               // the report line of the pipe baselines
	samples map[string][]float64 // rates by measurement key, one per repetition
	notes   []string
}

func (b *bench) logf(format string, args ...any) {
	if b.cfg.Log != nil {
		fmt.Fprintf(b.cfg.Log, "procbench: "+format+"\n", args...)
	}
}

func (b *bench) add(key string, rate float64) {
	b.samples[key] = append(b.samples[key], rate)
	b.logf("  %s: %s/s", key, formatRate(rate))
}

// setup builds the Go trial program and finds Python.
func (b *bench) setup(ctx context.Context) error {
	dir, err := benchDir(b.cfg.BenchDir)
	if err != nil {
		return err
	}
	b.logf("building the trial program from %s", dir)
	b.goTrial = filepath.Join(b.tmp, "proctrial")
	if err := buildTrial(ctx, dir, b.goTrial); err != nil {
		return err
	}
	if b.line, err = reportLine(); err != nil {
		return err
	}
	if !b.cfg.Python {
		b.notes = append(b.notes, "Python figures skipped (-no-python)")
		return nil
	}
	b.python, err = findPython(ctx, dir, b.tmp)
	if err != nil {
		b.notes = append(b.notes, "Python figures skipped: "+err.Error())
		b.python = nil
	}
	return nil
}

// Measurement keys.
const (
	keyTrueSeq   = "true/1"
	keyTruePar   = "true/2"
	keyGoAlone   = "go/alone"
	keyGoFiles   = "go/files"
	keyGoLaunch  = "go/launch"
	keyPyAlone   = "py/alone"
	keyPyLaunch  = "py/launch"
	keyGoEcho    = "go/echo/"    // + concurrency
	keyPyEcho    = "py/echo/"    // + concurrency
	keyGoResults = "go/results/" // + concurrency
	keyPyResults = "py/results/" // + concurrency
)

// step is one measurement of a repetition: its key and what measures it.
type step struct {
	key string
	fn  func() (float64, error)
}

// measure runs one repetition of every measurement, each baseline just
// before what it is compared with.
func (b *bench) measure(ctx context.Context, rep int) error {
	n := b.cfg.Trials
	b.logf("repetition %d of %d: launches", rep+1, b.cfg.Reps)
	steps := []step{
		{keyTrueSeq, func() (float64, error) { return forkExec(ctx, []string{trueBin}, n, 1) }},
		{keyTruePar, func() (float64, error) { return forkExec(ctx, []string{trueBin}, n, LaunchConcurrency) }},
		{keyGoAlone, func() (float64, error) {
			return forkExec(ctx, []string{b.goTrial, "report", "1"}, n, LaunchConcurrency)
		}},
		{keyGoFiles, func() (float64, error) {
			dir, err := os.MkdirTemp(b.tmp, "files-")
			if err != nil {
				return 0, err
			}
			defer os.RemoveAll(dir)
			return forkExecWithFiles(ctx, []string{b.goTrial, "report", "1"}, n, LaunchConcurrency, dir)
		}},
		{keyGoLaunch, func() (float64, error) {
			return honeLaunches(ctx, b.tmp, []string{b.goTrial, "report", "1"}, n)
		}},
	}
	if b.python != nil {
		steps = append(steps,
			step{keyPyAlone, func() (float64, error) {
				return forkExec(ctx, b.python.command("report", "1"), b.cfg.PyTrials, LaunchConcurrency)
			}},
			step{keyPyLaunch, func() (float64, error) {
				return honeLaunches(ctx, b.tmp, b.python.command("report", "1"), b.cfg.PyTrials)
			}},
		)
	}
	for _, s := range steps {
		r, err := s.fn()
		if err != nil {
			return fmt.Errorf("%s: %w", s.key, err)
		}
		b.add(s.key, r)
	}
	res := b.cfg.Results
	for _, k := range b.cfg.Concurrency {
		b.logf("repetition %d of %d: results, %d at a time", rep+1, b.cfg.Reps, k)
		suffix := strconv.Itoa(k)
		r, err := pipeRoundTrips(ctx, []string{b.goTrial, "echo"}, b.line, res, k)
		if err != nil {
			return fmt.Errorf("pipe round trips: %w", err)
		}
		b.add(keyGoEcho+suffix, r)
		r, err = honeResults(ctx, b.tmp, []string{b.goTrial, "report", strconv.Itoa(res)}, k, res)
		if err != nil {
			return fmt.Errorf("go results: %w", err)
		}
		b.add(keyGoResults+suffix, r)
		if b.python == nil {
			continue
		}
		r, err = pipeRoundTrips(ctx, b.python.command("echo"), b.line, res, k)
		if err != nil {
			return fmt.Errorf("python pipe round trips: %w", err)
		}
		b.add(keyPyEcho+suffix, r)
		r, err = honeResults(ctx, b.tmp, b.python.command("report", strconv.Itoa(res)), k, res)
		if err != nil {
			return fmt.Errorf("python results: %w", err)
		}
		b.add(keyPyResults+suffix, r)
	}
	return nil
}

// median returns the median of the samples of key.
func (b *bench) median(key string) float64 {
	s := slices.Clone(b.samples[key])
	if len(s) == 0 {
		return math.NaN()
	}
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// figures pairs the medians with their baselines.
func (b *bench) figures() []Figure {
	fig := func(what, key, baseline, baseKey string) Figure {
		return Figure{What: what, Value: b.median(key), Baseline: baseline, Base: b.median(baseKey)}
	}
	trueSeq := "fork+exec " + trueBin + ", one at a time"
	truePar := fmt.Sprintf("fork+exec %s, %d at a time", trueBin, LaunchConcurrency)
	var out []Figure
	out = append(out,
		fig("go launches/s", keyGoLaunch, trueSeq, keyTrueSeq),
		fig("go launches/s", keyGoLaunch, truePar, keyTruePar),
		fig("go launches/s", keyGoLaunch, fmt.Sprintf("the trial program run by hand, %d at a time", LaunchConcurrency), keyGoAlone),
		fig("go launches/s", keyGoLaunch, fmt.Sprintf("the trial program run by hand, %d at a time, after making one at a time "+
			"the directories, socket and files hone makes per trial", LaunchConcurrency), keyGoFiles),
	)
	for _, k := range b.cfg.Concurrency {
		s := strconv.Itoa(k)
		out = append(out, fig(fmt.Sprintf("go results/s, %d trials", k), keyGoResults+s,
			fmt.Sprintf("pipe round trip + JSON decode, %d at a time", k), keyGoEcho+s))
	}
	if b.python == nil {
		return out
	}
	out = append(out,
		fig("python launches/s", keyPyLaunch, trueSeq, keyTrueSeq),
		fig("python launches/s", keyPyLaunch, truePar, keyTruePar),
		fig("python launches/s", keyPyLaunch, fmt.Sprintf("the trial script run by hand, %d at a time", LaunchConcurrency), keyPyAlone),
	)
	for _, k := range b.cfg.Concurrency {
		s := strconv.Itoa(k)
		out = append(out,
			fig(fmt.Sprintf("python results/s, %d trials", k), keyPyResults+s,
				fmt.Sprintf("pipe round trip + JSON decode, %d at a time", k), keyGoEcho+s),
			fig(fmt.Sprintf("python results/s, %d trials", k), keyPyResults+s,
				fmt.Sprintf("pipe round trip via a Python echo + JSON decode, %d at a time", k), keyPyEcho+s),
		)
	}
	return out
}

// plural returns "1 trial", "2 trials".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// elapsedRate is count per second over the time since start.
func elapsedRate(count int, start time.Time) float64 {
	return float64(count) / time.Since(start).Seconds()
}

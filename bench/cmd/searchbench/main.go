// Command searchbench is the search-quality benchmark of BENCHMARKS.md §2:
// random search, HyperBand, ASHA, BOHB and TPE on hone's sim executor,
// beside Goptuna v0.9.0's TPE with and without its successive-halving
// pruner, on multi-fidelity Hartmann-6, Branin and counting ones, at equal
// total budget over several seeds. It prints a markdown table per function
// (final regret, budget to reach random search's final regret, ratios) and
// the published targets, and writes the same report and a regret-vs-budget
// PNG per function to the output directory.
//
// Usage, from the bench module:
//
//	go run ./cmd/searchbench            # full mode
//	go run ./cmd/searchbench -smoke     # 2 seeds, a tiny budget, one function
//
// See package searchbench for what is measured and how.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/hone-tune/hone/bench/functions"
	"github.com/hone-tune/hone/bench/internal/benchutil"
	"github.com/hone-tune/hone/bench/searchbench"
)

func main() { benchutil.Main("searchbench", run) }

// smokeBudget is the budget of a smoke run.
const smokeBudget = 12

// defaultOut returns the default output directory: out/ of the bench
// module, whether the command runs from the bench module or from the
// repository root.
func defaultOut() string {
	if data, err := os.ReadFile("go.mod"); err == nil && strings.Contains(string(data), "module github.com/hone-tune/hone/bench\n") {
		return "out"
	}
	if _, err := os.Stat(filepath.Join("bench", "go.mod")); err == nil {
		return filepath.Join("bench", "out")
	}
	return "out"
}

// run is the command: it parses args, runs the benchmark, and writes the
// report to stdout (progress to stderr) and to the output directory.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("searchbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		out      = fs.String("out", "", "output directory for results.md and the PNG plots (default bench/out/)")
		smoke    = fs.Bool("smoke", false, fmt.Sprintf("smoke mode: 2 seeds, budget %d, hartmann6 only", smokeBudget))
		seeds    = fs.Int("seeds", 10, "number of seeds per method")
		budget   = fs.Float64("budget", 0, "budget per run in full-fidelity evaluations, for every function (default: per function, see -help)")
		funcs    = fs.String("functions", "", "comma-separated functions (default all: hartmann6,branin,countingones-4+4,countingones-16+16)")
		methods  = fs.String("methods", "", "comma-separated methods (default all: "+searchbench.MethodNames()+"); random always runs")
		workers  = fs.Int("workers", 1, "trials a hone method runs at once")
		parallel = fs.Int("j", runtime.NumCPU(), "runs executed at once")
		plots    = fs.Bool("plots", true, "write a PNG plot per function")
		quiet    = fs.Bool("q", false, "no progress lines on stderr")
		tmpRoot  = fs.String("tmp", "", "directory for the hone experiment directories while they run (default /dev/shm if usable, else the system temporary directory)")
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: searchbench [flags]\n\nDefault budgets (full mode):")
		for _, p := range functions.Problems() {
			fmt.Fprintf(stderr, " %s=%g", p.Name, searchbench.DefaultBudgets[p.Name])
		}
		fmt.Fprintf(stderr, "\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *out == "" {
		*out = defaultOut()
	}
	cfg := searchbench.Config{Seeds: *seeds, Workers: *workers, Parallel: *parallel}
	names := *funcs
	if *smoke {
		cfg.Seeds = 2
		if names == "" {
			names = "hartmann6"
		}
		if *budget == 0 {
			*budget = smokeBudget
		}
	}
	if names != "" {
		for _, n := range strings.Split(names, ",") {
			p := functions.ByName(strings.TrimSpace(n))
			if p == nil {
				return fmt.Errorf("-functions: unknown function %q", n)
			}
			cfg.Problems = append(cfg.Problems, p)
		}
	}
	if *methods != "" {
		for _, m := range strings.Split(*methods, ",") {
			cfg.Methods = append(cfg.Methods, strings.TrimSpace(m))
		}
	}
	if *budget < 0 {
		return fmt.Errorf("-budget = %v: must be > 0", *budget)
	}
	if b := *budget; b > 0 {
		cfg.Budget = func(*functions.Problem) float64 { return b }
	}
	if !*quiet {
		cfg.Progress = func(done, total int, t *searchbench.Trace) {
			fmt.Fprintf(stderr, "[%d/%d] %s %s seed %d: final regret %.4g, %d trials, %v\n",
				done, total, t.Problem, t.Method, t.Seed, t.Final(), t.Trials, t.Wall.Round(time.Millisecond))
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	tmp, err := benchutil.TempDir(*tmpRoot, "searchbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cfg.TempDir = tmp

	start := time.Now()
	results, err := searchbench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)

	mdPath := filepath.Join(*out, "results.md")
	f, err := os.Create(mdPath)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(io.MultiWriter(stdout, f))
	mode := "full mode"
	if *smoke {
		mode = "smoke mode"
	}
	fmt.Fprintf(w, "## Search quality: `%s` (%s)\n\n", strings.TrimSpace("searchbench "+strings.Join(args, " ")), mode)
	fmt.Fprintf(w, "Run %s on %s/%s, %d CPUs, %s wall.\n\n", start.UTC().Format("2006-01-02 15:04 UTC"),
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), elapsed.Round(time.Second))
	searchbench.WriteReport(w, results, cfg.Workers)
	if *plots {
		for _, r := range results {
			path, err := r.Plot(*out)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "Plot: %s\n", path)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// Command pbtbench benchmarks hone's population-based schedulers.
//
// The quality part compares PBT, PB2 and random search at equal total
// budget on the PBT toy (Jaderberg et al. 2017, Fig. 2) and on a
// learning-rate-schedule task (a noisy quadratic model of SGD), for
// populations of 4 and 16, over several seeds, all through hone's runner
// on the sim executor; it prints a markdown table per (problem,
// population), the PB2-vs-PBT comparison, and writes a PNG plot per
// (problem, population). The exploit part measures the storage operations
// of a PBT exploit with a durable local store, for checkpoints of 1 MB to
// 1 GB, beside copying the same bytes with fsync, and checks in a real run
// that an exploit restores in place from the donor's checkpoint.
//
// Usage, from the bench module:
//
//	go run ./cmd/pbtbench                  # full mode: both parts, results in results/
//	go run ./cmd/pbtbench -what exploit    # one part
//	go run ./cmd/pbtbench -smoke           # 2 seeds, population 4, a few steps, 1 MB
//
// See package pbtbench for what is measured and how.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hone-tune/hone/bench/internal/benchutil"
	"github.com/hone-tune/hone/bench/pbtbench"
)

func main() { benchutil.Main("pbtbench", run) }

// Full-mode problem sizes.
const (
	toySteps    = 40
	toyInterval = 4
	lrSteps     = 200
	lrInterval  = 20
)

// Smoke-mode problem sizes.
const (
	smokeToySteps   = 12
	smokeLRSteps    = 20
	smokeLRInterval = 5
)

// benchDir returns dir inside the bench module, whether the command runs
// from the bench module or from the repository root.
func benchDir(dir string) string {
	if data, err := os.ReadFile("go.mod"); err == nil && strings.Contains(string(data), "module github.com/hone-tune/hone/bench\n") {
		return dir
	}
	if _, err := os.Stat(filepath.Join("bench", "go.mod")); err == nil {
		return filepath.Join("bench", dir)
	}
	return dir
}

// parseSize parses "1MB", "10 MB", "1GB", "512KB" or a byte count.
func parseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"B", 1}} {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = rest, u.m
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("size %q: want a positive count of B, KB, MB or GB", s)
	}
	return n * mult, nil
}

// parseInts parses a comma-separated list of integers.
func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%q: not an integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// loadAverage returns the first three fields of /proc/loadavg, or "".
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// run is the command: it parses args, runs the parts asked for, and
// writes the report to stdout (progress to stderr) and, with the plots, to
// the output directory.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pbtbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		what     = fs.String("what", "quality,exploit", "parts to run: quality, exploit or both")
		smoke    = fs.Bool("smoke", false, "smoke mode: 2 seeds, population 4, a few steps, 1 MB checkpoints")
		out      = fs.String("out", "", "output directory for pbtbench.md and the plots (default results/ of the bench module; out/smoke/ in smoke mode)")
		seeds    = fs.Int("seeds", 20, "seeds per (problem, population, method)")
		pops     = fs.String("pops", "4,16", "comma-separated population sizes")
		methods  = fs.String("methods", "", "comma-separated methods (default all: "+strings.Join(pbtbench.Methods(), ",")+"); random always runs")
		parallel = fs.Int("j", runtime.NumCPU(), "quality runs executed at once")
		tmpRoot  = fs.String("tmp", "", "directory for the quality runs' experiment directories (default /dev/shm if usable, else the system temporary directory)")
		dir      = fs.String("dir", "", "directory on the disk to measure for the exploit part (default the system temporary directory)")
		sizes    = fs.String("sizes", "", "comma-separated checkpoint sizes of the exploit part (default 1MB,10MB,100MB,1GB; 1MB in smoke mode)")
		reps     = fs.Int("reps", 0, "repetitions per checkpoint size (default 15 up to 1 MB, 9 up to 10 MB, 5 up to 100 MB, else 3; 3 in smoke mode)")
		quiet    = fs.Bool("q", false, "no progress lines on stderr")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	parts := strings.Split(*what, ",")
	for _, p := range parts {
		if p != "quality" && p != "exploit" {
			return fmt.Errorf("-what: unknown part %q (known: quality, exploit)", p)
		}
	}
	if *out == "" {
		*out = benchDir("results")
		if *smoke {
			*out = benchDir(filepath.Join("out", "smoke"))
		}
	}
	popList, err := parseInts(*pops)
	if err != nil {
		return fmt.Errorf("-pops: %w", err)
	}
	if *smoke {
		*seeds, popList = 2, []int{4}
	}
	var sizeList []int64
	spec := *sizes
	if spec == "" {
		spec = "1MB,10MB,100MB,1GB"
		if *smoke {
			spec = "1MB"
		}
	}
	for _, s := range strings.Split(spec, ",") {
		n, err := parseSize(s)
		if err != nil {
			return fmt.Errorf("-sizes: %w", err)
		}
		sizeList = append(sizeList, n)
	}
	if *reps < 0 {
		return fmt.Errorf("-reps = %d: must be >= 0", *reps)
	}
	var methodList []string
	if *methods != "" {
		for _, m := range strings.Split(*methods, ",") {
			methodList = append(methodList, strings.TrimSpace(m))
		}
	}
	progress := stderr
	if *quiet {
		progress = io.Discard
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("-out: %w", err)
	}

	var report bytes.Buffer
	w := io.MultiWriter(stdout, &report)
	mode := "full mode"
	if *smoke {
		mode = "smoke mode"
	}
	fmt.Fprintf(w, "## pbtbench: `%s` (%s)\n\n", strings.TrimSpace("pbtbench "+strings.Join(args, " ")), mode)
	fmt.Fprintf(w, "Run %s on %s/%s, %d CPUs, %s, load average at start %s.\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), loadAverage())

	if slices.Contains(parts, "quality") {
		var problems []*pbtbench.Problem
		if *smoke {
			problems = []*pbtbench.Problem{pbtbench.Toy(smokeToySteps, toyInterval), pbtbench.LRSchedule(pbtbench.DefaultNQM(), smokeLRSteps, smokeLRInterval)}
		} else {
			problems = []*pbtbench.Problem{pbtbench.Toy(toySteps, toyInterval), pbtbench.LRSchedule(pbtbench.DefaultNQM(), lrSteps, lrInterval)}
		}
		tmp, err := benchutil.TempDir(*tmpRoot, "pbtbench-")
		if err != nil {
			return fmt.Errorf("-tmp: %w", err)
		}
		defer os.RemoveAll(tmp)
		start := time.Now()
		results, err := pbtbench.Run(ctx, pbtbench.Config{Problems: problems, Pops: popList, Methods: methodList,
			Seeds: *seeds, Parallel: *parallel, TempDir: tmp,
			Progress: func(done, total int, t *pbtbench.Trace) {
				fmt.Fprintf(progress, "[%d/%d] %s pop %d %s seed %d: final %.6g, %d steps, %d exploits, %v\n",
					done, total, t.Problem, t.Pop, t.Method, t.Seed, t.Final(), t.Steps, t.Exploits, t.Wall.Round(time.Millisecond))
			}})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "### Search quality\n\n%d seeds, populations %v, %s wall for all runs (%d at a time; experiment directories in %s).\n\n",
			*seeds, popList, time.Since(start).Round(time.Second), *parallel, filepath.Dir(tmp))
		pbtbench.WriteReport(w, results)
		for _, r := range results {
			path, err := r.Plot(*out)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "Plot: %s\n\n", path)
		}
	}

	if slices.Contains(parts, "exploit") {
		root := *dir
		if root == "" {
			root = os.TempDir()
		}
		cfg := pbtbench.ExploitConfig{Sizes: sizeList, Dir: root, Log: progress}
		switch {
		case *reps > 0:
			n := *reps
			cfg.Reps = func(int64) int { return n }
		case *smoke:
			cfg.Reps = func(int64) int { return 3 }
		}
		chk, err := pbtbench.VerifyExploitInPlace(ctx, root)
		if err != nil {
			return err
		}
		figs, err := pbtbench.ExploitLatency(ctx, cfg)
		if err != nil {
			return err
		}
		var repList []string
		for _, f := range figs {
			repList = append(repList, fmt.Sprintf("%s ×%d", pbtbench.FormatSize(f.Size), f.Reps))
		}
		fmt.Fprintf(w, "### Exploit latency\n\n```\n")
		header := fmt.Sprintf("exploitbench: %s/%s, %d CPUs, %s; durable local store in %s; medians of repetitions (%s)",
			runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), root, strings.Join(repList, ", "))
		if err := pbtbench.WriteExploitReport(w, header, figs); err != nil {
			return err
		}
		fmt.Fprintf(w, "checked: in a PBT run through runner.Run (toy, population 4, durable local store), all %d exploits restarted the recipient from the donor's committed checkpoint directory in place (%d such restores; e.g. %s restored from %s)\n```\n\n",
			chk.Exploits, chk.CrossRestores, chk.Example[0], chk.Example[1])
	}

	mdPath := filepath.Join(*out, "pbtbench.md")
	if err := os.WriteFile(mdPath, report.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

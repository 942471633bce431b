// Command searchbench is the search-quality benchmark (docs/QUALITY.md):
// hone's methods on the sim executor beside random search, random search
// with successive halving, Goptuna v0.9.0's TPE with and without its
// successive-halving pruner and Optuna's TPE with its HyperBand and
// successive-halving pruners, on multi-fidelity problems from the
// literature in faithful and misleading fidelity settings, at 1, 4 and 16
// trials at once, at equal budget over several seeds. It writes
// docs/QUALITY.md (tables, verdicts, parallel efficiency, searcher CPU)
// and the plots in docs/quality/, keeping the hand-written notes (and the
// section of several objectives, which cmd/mobench writes) of the
// QUALITY.md it replaces.
//
// Usage, from the bench module:
//
//	go run ./cmd/searchbench            # default size: 20 seeds, 10 at 8,100 steps (about 100 minutes on 2 CPUs)
//	go run ./cmd/searchbench -long      # larger: every setting, larger budgets
//	go run ./cmd/searchbench -smoke     # tiny; writes to bench/out/, run by go test
//
// More seeds can be run apart and merged: for instance
//
//	go run ./cmd/searchbench -save a.json
//	go run ./cmd/searchbench -first-seed 21 -save b.json
//	go run ./cmd/searchbench -from a.json,b.json   # the report of seeds 1 to 40
//
// and methods run again after a change replace their earlier runs:
//
//	go run ./cmd/searchbench -methods auto -optuna=false -save c.json
//	go run ./cmd/searchbench -from a.json,c.json:auto
//
// The Optuna baselines need Debian's python3-optuna, which the command
// installs with apt-get when it runs as root and Optuna is missing
// (otherwise it says so and leaves them out). See package searchbench for
// what is measured and how.
package main

import (
	"bufio"
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

	"github.com/hone-tune/hone/bench/functions"
	"github.com/hone-tune/hone/bench/internal/benchutil"
	"github.com/hone-tune/hone/bench/searchbench"
)

func main() { benchutil.Main("searchbench", run) }

// mode is a size of the benchmark.
type mode struct {
	name     string
	problems []string
	seeds    int
	// scaleSeeds is the number of seeds of the part at
	// searchbench.ScaleSteps steps.
	scaleSeeds int
	conc       []int
	// budget scales the problems' default budgets; smoke sets a fixed one.
	budget func(p *functions.Problem) float64
	// scale is the budget of the part at searchbench.ScaleSteps steps
	// (smoke: a tiny one, to run the part's code).
	scale func(p *functions.Problem) float64
}

var modes = map[string]mode{
	"default": {name: "default", problems: searchbench.DefaultProblems, seeds: 20, scaleSeeds: 10, conc: []int{1, 4, 16},
		budget: func(p *functions.Problem) float64 { return searchbench.DefaultBudgets[p.Name] }, scale: searchbench.ScaleBudget},
	"long": {name: "long", problems: nil, seeds: 20, scaleSeeds: 20, conc: []int{1, 4, 16},
		budget: func(p *functions.Problem) float64 { return searchbench.LongBudgets[p.Name] }, scale: searchbench.ScaleBudget},
	"smoke": {name: "smoke", problems: searchbench.SmokeProblems, seeds: 2, scaleSeeds: 2, conc: []int{1, 4},
		budget: func(*functions.Problem) float64 { return searchbench.SmokeBudget },
		scale:  func(*functions.Problem) float64 { return searchbench.SmokeBudget }},
}

// repoRoot returns the repository's root: the directory above the bench
// module, whether the command runs from the bench module or from the root.
func repoRoot() (string, error) {
	if data, err := os.ReadFile("go.mod"); err == nil && strings.Contains(string(data), "module github.com/hone-tune/hone/bench\n") {
		return "..", nil
	}
	if data, err := os.ReadFile("go.mod"); err == nil && strings.Contains(string(data), "module github.com/hone-tune/hone\n") {
		return ".", nil
	}
	return "", fmt.Errorf("run from the repository or its bench module, or give -out")
}

// run is the command: it parses args, runs the benchmark, and writes the
// report (progress to stderr).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("searchbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		out      = fs.String("out", "", "directory for QUALITY.md and quality/*.png (default: the repository's docs/; with -smoke, bench/out/)")
		smoke    = fs.Bool("smoke", false, fmt.Sprintf("smoke mode: 2 seeds, budget %g, one problem per family, concurrency 1 and 4", searchbench.SmokeBudget))
		long     = fs.Bool("long", false, "long mode: every problem setting, 20 seeds, larger budgets")
		seeds    = fs.Int("seeds", 0, "number of seeds per method (default: the mode's)")
		scaleN   = fs.Int("scale-seeds", 0, fmt.Sprintf("number of seeds per method of the part at %d steps (default: the mode's)", searchbench.ScaleSteps))
		first    = fs.Int("first-seed", 1, "first seed (seeds first-seed to first-seed+seeds-1), to run more seeds apart and merge them")
		budget   = fs.Float64("budget", 0, "budget per run in full-fidelity evaluations, for every problem (default: the mode's, per problem)")
		funcs    = fs.String("functions", "", "comma-separated problems (default: the mode's; all: "+allProblems()+")")
		methods  = fs.String("methods", "", "comma-separated methods (default all: "+strings.Join(searchbench.Methods(), ",")+"); random always runs")
		conc     = fs.String("concurrency", "", "comma-separated numbers of trials at once (default: the mode's)")
		optuna   = fs.Bool("optuna", true, "run the Optuna baselines (installing python3-optuna if needed and possible)")
		parallel = fs.Int("j", runtime.NumCPU(), "runs executed at once")
		plots    = fs.Bool("plots", true, "draw the plots")
		quiet    = fs.Bool("q", false, "no progress lines on stderr")
		tmpRoot  = fs.String("tmp", "", "directory for the hone experiment directories while they run (default /dev/shm if usable, else the system temporary directory)")
		save     = fs.String("save", "", "file to save the runs' results in, to write the report again with -from (default: bench/out/searchbench-runs.json, or runs.json in -out)")
		from     = fs.String("from", "", "write the report (and plots) from the results saved by an earlier run instead of running; several files, comma-separated, are merged seed by seed (runs of other seeds with -first-seed, or of other methods); file:m1+m2 takes only methods m1 and m2 from file, in place of the earlier files' runs of them")
		scale    = fs.Bool("scale", true, fmt.Sprintf("also run hone's methods and random search at %d steps per run, at concurrency 1 and the highest (parallel efficiency and searcher CPU at that size)", searchbench.ScaleSteps))
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: searchbench [flags]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *smoke && *long {
		return fmt.Errorf("-smoke and -long exclude each other")
	}
	md := modes["default"]
	switch {
	case *smoke:
		md = modes["smoke"]
	case *long:
		md = modes["long"]
	}
	cfg := searchbench.Config{Seeds: md.seeds, Concurrency: md.conc, Parallel: *parallel, NoOptuna: !*optuna, Log: stderr, Budget: md.budget}
	if *first < 1 {
		return fmt.Errorf("-first-seed = %d: must be >= 1", *first)
	}
	cfg.FirstSeed = *first
	if *seeds > 0 {
		cfg.Seeds = *seeds
	} else if *seeds < 0 {
		return fmt.Errorf("-seeds = %d: must be > 0", *seeds)
	}
	scaleSeeds := md.scaleSeeds
	if *scaleN > 0 {
		scaleSeeds = *scaleN
	} else if *scaleN < 0 {
		return fmt.Errorf("-scale-seeds = %d: must be > 0", *scaleN)
	}
	names := md.problems
	if *funcs != "" {
		names = strings.Split(*funcs, ",")
	}
	for _, n := range names {
		p := functions.ByName(strings.TrimSpace(n))
		if p == nil {
			return fmt.Errorf("-functions: unknown problem %q", n)
		}
		cfg.Problems = append(cfg.Problems, p)
	}
	if *methods != "" {
		for _, m := range strings.Split(*methods, ",") {
			cfg.Methods = append(cfg.Methods, strings.TrimSpace(m))
		}
	}
	if *conc != "" {
		cfg.Concurrency = nil
		for _, s := range strings.Split(*conc, ",") {
			c, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || c < 1 {
				return fmt.Errorf("-concurrency: %q is not a number ≥ 1", s)
			}
			cfg.Concurrency = append(cfg.Concurrency, c)
		}
	}
	if *budget < 0 {
		return fmt.Errorf("-budget = %v: must be > 0", *budget)
	}
	if b := *budget; b > 0 {
		cfg.Budget = func(*functions.Problem) float64 { return b }
	}
	dir := *out
	if dir == "" {
		root, err := repoRoot()
		if err != nil {
			return err
		}
		dir = filepath.Join(root, "docs")
		if *smoke {
			dir = filepath.Join(root, "bench", "out")
		}
	}
	plotDir := filepath.Join(dir, "quality")
	if err := os.MkdirAll(plotDir, 0o755); err != nil {
		return err
	}
	if !*quiet {
		cfg.Progress = func(done, total int, t *searchbench.Trace) {
			fmt.Fprintf(stderr, "[%d/%d] %s c=%d %s seed %d: final regret %.4g, %d trials, searcher CPU %v, %v\n",
				done, total, t.Problem, t.Concurrency, t.Method, t.Seed, t.Final(), t.Trials,
				t.CPU.Round(time.Millisecond), t.Wall.Round(time.Millisecond))
		}
	}
	reportPath := filepath.Join(dir, "QUALITY.md")
	notes, several := kept(reportPath)
	var (
		res  *searchbench.Results
		info searchbench.RunInfo
	)
	if *from != "" {
		var err error
		if res, info, err = loadRuns(strings.Split(*from, ",")); err != nil {
			return err
		}
	} else {
		tmp, err := benchutil.TempDir(*tmpRoot, "searchbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		cfg.TempDir = tmp
		load0 := loadAverage()
		cpu0 := cpuUsed()
		start := time.Now()
		res, err = searchbench.Run(ctx, cfg)
		if err != nil {
			return err
		}
		if *scale {
			sc := cfg
			sc.Budget, sc.NoOptuna, sc.Methods, sc.Seeds = md.scale, true, nil, scaleSeeds
			sc.Concurrency = []int{1, slices.Max(cfg.Concurrency)}
			if sc.Concurrency[1] == 1 {
				sc.Concurrency = sc.Concurrency[:1]
			}
			for _, m := range searchbench.ScaleMethods() {
				if len(cfg.Methods) == 0 || slices.Contains(cfg.Methods, m) || m == searchbench.Baseline {
					sc.Methods = append(sc.Methods, m)
				}
			}
			more, err := searchbench.Run(ctx, sc)
			if err != nil {
				return err
			}
			res.Scale = more.Cells
		}
		info = searchbench.RunInfo{
			Command: commandLine(args), Mode: md.name, Start: start, Elapsed: time.Since(start), CPUs: runtime.NumCPU(),
			Parallel: cfg.Parallel, CPUTime: cpuUsed() - cpu0, TimerOverhead: benchutil.TimerOverhead(),
		}
		if l0, l1 := load0, loadAverage(); l0 != "" && l1 != "" {
			info.Load = l0 + " at the start, " + l1 + " at the end"
		}
		savePath := *save
		if savePath == "" {
			savePath = filepath.Join(dir, "runs.json")
			if *out == "" {
				root, _ := repoRoot()
				savePath = filepath.Join(root, "bench", "out", "searchbench-runs.json")
			}
		}
		if err := os.MkdirAll(filepath.Dir(savePath), 0o755); err != nil {
			return err
		}
		f, err := os.Create(savePath)
		if err != nil {
			return err
		}
		if err := searchbench.Save(f, res, info); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	info.Plots, info.Notes, info.SeveralObjectives = map[string]string{}, notes, several
	if *plots {
		seen := map[string]bool{}
		for _, c := range res.Cells {
			if seen[c.Problem.Name] {
				continue
			}
			seen[c.Problem.Name] = true
			name, err := searchbench.PlotProblem(plotDir, res.Cells, c.Problem)
			if err != nil {
				return err
			}
			info.Plots[c.Problem.Name] = "quality/" + name
		}
		name, err := searchbench.PlotParallel(plotDir, res.Cells)
		if err != nil {
			return err
		}
		if name != "" {
			info.ParallelPlot = "quality/" + name
		}
	}
	var buf bytes.Buffer
	searchbench.WriteReport(&buf, res, info)
	if err := os.WriteFile(reportPath, buf.Bytes(), 0o644); err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	w.Write(buf.Bytes())
	fmt.Fprintf(w, "\nWritten: %s\n", reportPath)
	return w.Flush()
}

// loadRuns reads the results saved in paths (Save), merging them when
// there are several (searchbench.Merge): the report's command block then
// lists the parts' commands, then the merge.
func loadRuns(paths []string) (*searchbench.Results, searchbench.RunInfo, error) {
	var parts []*searchbench.Results
	var infos []searchbench.RunInfo
	var only [][]string
	for _, arg := range paths {
		path, methods, _ := strings.Cut(arg, ":")
		var take []string
		if methods != "" {
			take = strings.Split(methods, "+")
			for _, m := range take {
				if !slices.Contains(searchbench.Methods(), m) {
					return nil, searchbench.RunInfo{}, fmt.Errorf("-from %s: unknown method %q (methods: %s)", arg, m, strings.Join(searchbench.Methods(), ", "))
				}
			}
		}
		only = append(only, take)
		f, err := os.Open(path)
		if err != nil {
			return nil, searchbench.RunInfo{}, err
		}
		res, info, err := searchbench.Load(f)
		f.Close()
		if err != nil {
			return nil, searchbench.RunInfo{}, fmt.Errorf("%s: %w", path, err)
		}
		parts, infos = append(parts, res), append(infos, info)
	}
	if len(parts) == 1 && only[0] == nil {
		return parts[0], infos[0], nil
	}
	res, info, err := searchbench.Merge(parts, infos, only)
	if err != nil {
		return nil, searchbench.RunInfo{}, fmt.Errorf("-from %s: %w", strings.Join(paths, ","), err)
	}
	names := make([]string, len(paths))
	for i := range paths {
		names[i] = fmt.Sprintf("part%d.json", i+1)
		if only[i] != nil {
			names[i] += ":" + strings.Join(only[i], "+")
		}
	}
	info.Command += "\n# each part saved with -save, then merged seed by seed:\ncd bench && go run ./cmd/searchbench -from " + strings.Join(names, ",")
	return res, info, nil
}

// commandLine returns the command that reproduces this run.
func commandLine(args []string) string {
	var kept []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-q" || a == "--q" {
			continue
		}
		skip := false
		for _, f := range []string{"out", "tmp", "save", "from"} {
			if a == "-"+f || a == "--"+f {
				i++
				skip = true
			} else if strings.HasPrefix(a, "-"+f+"=") || strings.HasPrefix(a, "--"+f+"=") {
				skip = true
			}
		}
		if skip {
			continue
		}
		kept = append(kept, a)
	}
	return strings.TrimSpace("cd bench && go run ./cmd/searchbench " + strings.Join(kept, " "))
}

// kept returns the parts of the report at path that the command keeps:
// the hand-written notes, and the section of several objectives that
// cmd/mobench writes; "" for either when the report lacks it.
func kept(path string) (notes, several string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", ""
	}
	s := string(data)
	notes = searchbench.Kept(s, searchbench.NotesBegin, searchbench.NotesEnd)
	if notes == "(none yet)" {
		notes = ""
	}
	several = searchbench.Kept(s, searchbench.SeveralBegin, searchbench.SeveralEnd)
	if strings.HasPrefix(several, "(not run yet") {
		several = ""
	}
	return notes, several
}

// loadAverage returns the 1-minute load average, or "".
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	if f := strings.Fields(string(data)); len(f) > 0 {
		return f[0]
	}
	return ""
}

func allProblems() string {
	var names []string
	for _, p := range functions.Problems() {
		names = append(names, p.Name)
	}
	return strings.Join(names, ",")
}

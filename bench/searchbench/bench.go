package searchbench

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sort"

	"github.com/hone-tune/hone/bench/functions"
	"github.com/hone-tune/hone/bench/internal/benchutil"
)

// Baseline is the method every other is compared with in a cell's table,
// and whose final regret the "budget to reach" figures aim at.
const Baseline = "random"

// ExternalMethod is a baseline run outside hone, by another library, with
// the same problems, step-by-step evaluation, budget accounting and
// simulated concurrency (simulate).
type ExternalMethod struct {
	Name string
	// Optuna marks the methods that need Optuna (Python).
	Optuna bool
	Run    func(ctx context.Context, r *benchRun, j job) (*Trace, error)
}

// ExternalMethods are the baselines run by other libraries, in report
// order.
var ExternalMethods = []ExternalMethod{
	{Name: "goptuna-tpe", Run: func(ctx context.Context, _ *benchRun, j job) (*Trace, error) {
		return runGoptuna(ctx, "goptuna-tpe", j.p, j.seed, j.budget, j.concurrency, false)
	}},
	{Name: "goptuna-tpe-sh", Run: func(ctx context.Context, _ *benchRun, j job) (*Trace, error) {
		return runGoptuna(ctx, "goptuna-tpe-sh", j.p, j.seed, j.budget, j.concurrency, true)
	}},
	{Name: "optuna-tpe-hb", Optuna: true, Run: func(ctx context.Context, r *benchRun, j job) (*Trace, error) {
		return runOptuna(ctx, r.optuna, "optuna-tpe-hb", "tpe-hyperband", j.p, j.seed, j.budget, j.concurrency)
	}},
	{Name: "optuna-tpe-sh", Optuna: true, Run: func(ctx context.Context, r *benchRun, j job) (*Trace, error) {
		return runOptuna(ctx, r.optuna, "optuna-tpe-sh", "tpe-sh", j.p, j.seed, j.budget, j.concurrency)
	}},
}

// Methods returns every method's name in report order: the baselines
// (hone's random and ASHA, then the external ones), then hone's own
// methods in table order.
func Methods() []string {
	var out []string
	for _, m := range HoneMethods {
		if m.Baseline {
			out = append(out, m.Name)
		}
	}
	for _, m := range ExternalMethods {
		out = append(out, m.Name)
	}
	for _, m := range HoneMethods {
		if !m.Baseline {
			out = append(out, m.Name)
		}
	}
	return out
}

// IsBaseline reports whether method is a baseline (not one of hone's own
// search methods).
func IsBaseline(method string) bool {
	if m := honeMethod(method); m != nil {
		return m.Baseline
	}
	return externalMethod(method) != nil
}

func externalMethod(name string) *ExternalMethod {
	for i := range ExternalMethods {
		if ExternalMethods[i].Name == name {
			return &ExternalMethods[i]
		}
	}
	return nil
}

// DefaultConcurrency is the concurrencies every method runs at.
var DefaultConcurrency = []int{1, 4, 16}

// Config says what to run.
type Config struct {
	// Problems to run (default: functions.Problems()).
	Problems []*functions.Problem
	// Methods to run, by name (default: Methods()). The baseline is
	// always run.
	Methods []string
	// Concurrency lists the numbers of trials run at once (default
	// DefaultConcurrency).
	Concurrency []int
	// Seeds is the number of seeds, FirstSeed..FirstSeed+Seeds-1 (default
	// 10).
	Seeds int
	// FirstSeed is the first seed (default 1): a run of seeds 11..20 can
	// be merged with one of 1..10.
	FirstSeed int
	// Budget returns a problem's budget in full-fidelity evaluations'
	// worth of cost (required).
	Budget func(p *functions.Problem) float64
	// Parallel is the number of runs executed at once (default the number
	// of CPUs).
	Parallel int
	// TempDir holds the hone experiment directories while they run
	// (default os.TempDir()).
	TempDir string
	// NoOptuna leaves the Optuna methods out; otherwise Run calls
	// EnsureOptuna and leaves them out, saying why in Optuna, when Optuna
	// cannot be had.
	NoOptuna bool
	// Log receives what EnsureOptuna does (default io.Discard).
	Log io.Writer
	// Progress, if set, is called after each run, from any goroutine but
	// one call at a time.
	Progress func(done, total int, t *Trace)
}

// Cell holds every trace of one problem at one concurrency.
type Cell struct {
	Problem     *functions.Problem
	Concurrency int
	Budget      float64
	Seeds       int
	// Methods in report order; the first is the baseline.
	Methods []string
	// Traces per method, one per seed.
	Traces map[string][]*Trace
}

// Results is what Run returns: the cells, problem by problem, each
// problem's concurrencies in increasing order.
type Results struct {
	Cells []*Cell
	// Scale holds the runs at ScaleSteps steps (ScaleBudget), if any:
	// hone's methods and random search at concurrency 1 and the highest
	// one, for parallel efficiency and searcher CPU at that size.
	Scale []*Cell
	// Optuna is Optuna's version, or why its methods did not run.
	Optuna string
	// OptunaRan reports whether the Optuna methods ran.
	OptunaRan bool
}

// job is one run.
type job struct {
	p           *functions.Problem
	method      string
	seed        uint64
	budget      float64
	concurrency int
	out         **Trace
}

// benchRun holds what the runs of one Run share.
type benchRun struct {
	tmp    string
	optuna *optunaPool
}

// Run runs every (problem, concurrency, method, seed).
func Run(ctx context.Context, cfg Config) (*Results, error) {
	if cfg.Problems == nil {
		cfg.Problems = functions.Problems()
	}
	all := Methods()
	if cfg.Methods == nil {
		cfg.Methods = all
	}
	for _, m := range cfg.Methods {
		if !slices.Contains(all, m) {
			return nil, fmt.Errorf("unknown method %q (known: %v)", m, all)
		}
	}
	if cfg.Concurrency == nil {
		cfg.Concurrency = DefaultConcurrency
	}
	for _, c := range cfg.Concurrency {
		if c < 1 {
			return nil, fmt.Errorf("concurrency %d: must be ≥ 1", c)
		}
	}
	conc := slices.Clone(cfg.Concurrency)
	slices.Sort(conc)
	conc = slices.Compact(conc)
	if cfg.Seeds <= 0 {
		cfg.Seeds = 10
	}
	if cfg.FirstSeed <= 0 {
		cfg.FirstSeed = 1
	}
	if cfg.Budget == nil {
		return nil, fmt.Errorf("no budget")
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = runtime.NumCPU()
	}
	if cfg.TempDir == "" {
		cfg.TempDir = os.TempDir()
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	res := &Results{}
	r := &benchRun{tmp: cfg.TempDir}
	wantOptuna := false
	for _, m := range cfg.Methods {
		if e := externalMethod(m); e != nil && e.Optuna {
			wantOptuna = true
		}
	}
	switch {
	case !wantOptuna:
		res.Optuna = "not asked for"
	case cfg.NoOptuna:
		res.Optuna = "left out (-optuna=false)"
	default:
		v, err := EnsureOptuna(cfg.Log)
		if err != nil {
			res.Optuna = "not available: " + err.Error()
			fmt.Fprintf(cfg.Log, "searchbench: OPTUNA NOT AVAILABLE, its methods are left out: %v\n", err)
			break
		}
		dir, err := os.MkdirTemp(cfg.TempDir, "optuna-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		pool, err := newOptunaPool(dir, cfg.Parallel)
		if err != nil {
			return nil, err
		}
		defer pool.close()
		r.optuna, res.Optuna, res.OptunaRan = pool, "Optuna "+v, true
	}
	methods := []string{Baseline}
	for _, m := range all {
		if m == Baseline || !slices.Contains(cfg.Methods, m) {
			continue
		}
		if e := externalMethod(m); e != nil && e.Optuna && r.optuna == nil {
			continue
		}
		methods = append(methods, m)
	}
	var jobs []job
	for _, p := range cfg.Problems {
		b := cfg.Budget(p)
		if !(b > 0) {
			return nil, fmt.Errorf("%s: budget %v: must be > 0", p.Name, b)
		}
		for _, c := range conc {
			cell := &Cell{Problem: p, Concurrency: c, Budget: b, Seeds: cfg.Seeds, Methods: methods, Traces: map[string][]*Trace{}}
			res.Cells = append(res.Cells, cell)
			for _, m := range methods {
				cell.Traces[m] = make([]*Trace, cfg.Seeds)
				for s := range cfg.Seeds {
					jobs = append(jobs, job{p: p, method: m, seed: uint64(cfg.FirstSeed + s), budget: b, concurrency: c, out: &cell.Traces[m][s]})
				}
			}
		}
	}
	// The longest runs first, so that the last ones to finish are short.
	sort.SliceStable(jobs, func(i, j int) bool { return jobWeight(jobs[i]) > jobWeight(jobs[j]) })
	err := benchutil.RunAll(ctx, cfg.Parallel, jobs,
		func(ctx context.Context, j job) (*Trace, error) { return r.runOne(ctx, j) },
		func(j job, tr *Trace, done int) {
			*j.out = tr
			if cfg.Progress != nil {
				cfg.Progress(done, len(jobs), tr)
			}
		})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// jobWeight is a rough guess of a run's duration, for ordering the runs.
func jobWeight(j job) float64 {
	w := 1.0
	switch {
	case externalMethod(j.method) != nil && j.method != "goptuna-tpe":
		w = 6
	case j.method != Baseline && j.method != "tpe":
		w = 3
	}
	return w * j.budget * float64(j.p.Steps)
}

// runOne runs one job.
func (r *benchRun) runOne(ctx context.Context, j job) (*Trace, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if m := honeMethod(j.method); m != nil {
		return runHone(ctx, m, j.p, j.seed, j.budget, j.concurrency, r.tmp)
	}
	return externalMethod(j.method).Run(ctx, r, j)
}

// The sizes of the benchmark's modes: the problems of the default mode
// and of the smoke mode (one per family; the long mode runs them all),
// and each problem's budget in full-fidelity evaluations' worth of cost
// (multiples of 16, so that random search at concurrency 16 ends with
// whole rounds).
var (
	DefaultProblems = []string{"hartmann6", "branin", "countingones-4+4",
		"hartmann3", "hartmann3-terrible", "currin", "currin-mislead", "park", "park-mislead",
		"borehole", "borehole-mislead", "bumps", "bumps-decoy"}
	SmokeProblems = []string{"hartmann6", "branin", "countingones-4+4", "hartmann3-terrible",
		"currin-mislead", "park", "borehole-mislead", "bumps-decoy"}
	DefaultBudgets = map[string]float64{
		"hartmann6": 64, "branin": 32, "countingones-4+4": 32,
		"hartmann3": 48, "hartmann3-terrible": 48, "currin": 32, "currin-mislead": 32,
		"park": 48, "park-mislead": 48, "borehole": 32, "borehole-mislead": 32, "bumps": 64, "bumps-decoy": 64,
	}
	LongBudgets = map[string]float64{
		"hartmann6": 128, "branin": 64, "countingones-4+4": 64, "countingones-16+16": 128,
		"hartmann3": 96, "hartmann3-good": 96, "hartmann3-moderate": 96, "hartmann3-bad": 96, "hartmann3-terrible": 96,
		"currin": 64, "currin-mislead": 64, "park": 96, "park-mislead": 96,
		"borehole": 64, "borehole-mislead": 64, "bumps": 128, "bumps-decoy": 128,
	}
)

// ScaleSteps is the number of steps of a run in the part of the benchmark
// that measures parallel efficiency and searcher CPU at a size where
// concurrency 16 is not held back by its first round: 16 trials at once
// spend a budget of about 16 before the first can finish at full
// fidelity, which the default budgets (32 to 64) leave little room past.
const ScaleSteps = 8100

// ScaleBudget is p's budget at ScaleSteps steps, in full-fidelity
// evaluations.
func ScaleBudget(p *functions.Problem) float64 { return float64(ScaleSteps) / float64(p.Steps) }

// ScaleMethods returns the methods of the ScaleSteps part: random search
// (the target) and every method of hone's own.
func ScaleMethods() []string {
	out := []string{Baseline}
	for _, m := range HoneMethods {
		if !m.Baseline {
			out = append(out, m.Name)
		}
	}
	return out
}

// SmokeBudget is every problem's budget in smoke mode.
const SmokeBudget = 5.0

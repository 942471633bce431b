package searchbench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"

	"github.com/hone-tune/hone/bench/functions"
	"github.com/hone-tune/hone/bench/internal/benchutil"
)

// The method names, as they appear in reports.
const (
	MethodRandom       = "random"
	MethodHyperBand    = "hyperband"
	MethodASHA         = "asha"
	MethodBOHB         = "bohb"
	MethodASHABOHB     = "asha-bohb"
	MethodDEHB         = "dehb"
	MethodTPE          = "tpe"
	MethodTPEParallel  = "tpe-parallel"
	MethodTPEASHA      = "tpe-asha"
	MethodAuto         = "auto"
	MethodGoptunaTPE   = "goptuna-tpe"
	MethodGoptunaTPESH = "goptuna-tpe-sh"
)

// Methods lists every method in report order; the first is the baseline.
var Methods = []string{MethodRandom, MethodHyperBand, MethodASHA, MethodBOHB, MethodASHABOHB, MethodDEHB, MethodTPE, MethodTPEParallel, MethodTPEASHA, MethodAuto, MethodGoptunaTPE, MethodGoptunaTPESH}

// Baseline is the method every other is compared with.
const Baseline = MethodRandom

// DefaultBudgets is the budget of each problem in full mode, in
// full-fidelity evaluations' worth of cost.
var DefaultBudgets = map[string]float64{
	"hartmann6":          300,
	"branin":             100,
	"countingones-4+4":   150,
	"countingones-16+16": 200,
}

// Config says what to run.
type Config struct {
	// Problems to run (default: functions.Problems()).
	Problems []*functions.Problem
	// Methods to run, by name (default: Methods). The baseline is always
	// run.
	Methods []string
	// Seeds is the number of seeds, 1..Seeds (default 10).
	Seeds int
	// Budget returns a problem's budget (default: DefaultBudgets).
	Budget func(p *functions.Problem) float64
	// Workers is the number of trials a hone method runs at once
	// (default 1: sequential, like the Goptuna runs).
	Workers int
	// Parallel is the number of runs executed at once (default the number
	// of CPUs).
	Parallel int
	// TempDir holds the hone experiment directories while they run
	// (default os.TempDir()).
	TempDir string
	// Progress, if set, is called after each run, from any goroutine but
	// one call at a time.
	Progress func(done, total int, t *Trace)
}

// Run runs every (problem, method, seed) and returns the traces grouped
// into results per problem, in the order of cfg.Problems.
func Run(ctx context.Context, cfg Config) ([]*ProblemResult, error) {
	if cfg.Problems == nil {
		cfg.Problems = functions.Problems()
	}
	if cfg.Methods == nil {
		cfg.Methods = Methods
	}
	for _, m := range cfg.Methods {
		if !slices.Contains(Methods, m) {
			return nil, fmt.Errorf("unknown method %q (known: %v)", m, Methods)
		}
	}
	methods := []string{Baseline}
	for _, m := range Methods {
		if m != Baseline && slices.Contains(cfg.Methods, m) {
			methods = append(methods, m)
		}
	}
	if cfg.Seeds <= 0 {
		cfg.Seeds = 10
	}
	if cfg.Budget == nil {
		cfg.Budget = func(p *functions.Problem) float64 { return DefaultBudgets[p.Name] }
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = runtime.NumCPU()
	}
	if cfg.TempDir == "" {
		cfg.TempDir = os.TempDir()
	}
	type job struct {
		p      *functions.Problem
		method string
		seed   uint64
		budget float64
		out    **Trace
	}
	results := make([]*ProblemResult, len(cfg.Problems))
	var jobs []job
	for i, p := range cfg.Problems {
		b := cfg.Budget(p)
		if !(b > 0) {
			return nil, fmt.Errorf("%s: budget %v: must be > 0", p.Name, b)
		}
		pr := &ProblemResult{Problem: p, Budget: b, Seeds: cfg.Seeds, Traces: map[string][]*Trace{}}
		results[i] = pr
		for _, m := range methods {
			pr.Methods = append(pr.Methods, m)
			pr.Traces[m] = make([]*Trace, cfg.Seeds)
			for s := range cfg.Seeds {
				jobs = append(jobs, job{p: p, method: m, seed: uint64(s + 1), budget: b, out: &pr.Traces[m][s]})
			}
		}
	}
	err := benchutil.RunAll(ctx, cfg.Parallel, jobs,
		func(ctx context.Context, j job) (*Trace, error) {
			return runOne(ctx, j.method, j.p, j.seed, j.budget, cfg.Workers, cfg.TempDir)
		},
		func(j job, tr *Trace, done int) {
			*j.out = tr
			if cfg.Progress != nil {
				cfg.Progress(done, len(jobs), tr)
			}
		})
	if err != nil {
		return nil, err
	}
	return results, nil
}

// runOne runs one method once.
func runOne(ctx context.Context, method string, p *functions.Problem, seed uint64, budget float64, workers int, tmp string) (*Trace, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch method {
	case MethodGoptunaTPE:
		return runGoptuna(ctx, method, p, seed, budget, false)
	case MethodGoptunaTPESH:
		return runGoptuna(ctx, method, p, seed, budget, true)
	}
	return runHone(ctx, method, p, seed, budget, workers, tmp)
}

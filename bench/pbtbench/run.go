package pbtbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/bench/internal/benchutil"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/pb2"
	"github.com/hone-tune/hone/scheduler/pbt"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/store/local"
)

// The method names, as they appear in reports.
const (
	MethodRandom = "random"
	// MethodPBT and MethodPB2 are asynchronous (Ray's default): a member
	// is judged against the others' latest scores when it reaches a
	// perturbation time.
	MethodPBT = "pbt"
	MethodPB2 = "pb2"
	// MethodPBTSynch and MethodPB2Synch are synchronous: every member
	// waits at each perturbation time, and all are judged together.
	MethodPBTSynch = "pbt-synch"
	MethodPB2Synch = "pb2-synch"
)

// Methods lists every method in report order; the first is the baseline.
func Methods() []string {
	return []string{MethodRandom, MethodPBT, MethodPB2, MethodPBTSynch, MethodPB2Synch}
}

// Point is the true metric of the incumbent once Budget steps had been
// reported.
type Point struct {
	Budget int
	Value  float64
}

// Trace is one run of one method on one problem, population size and
// seed.
type Trace struct {
	Problem string
	Pop     int
	Method  string
	Seed    uint64
	// Steps is the number of steps the population reported.
	Steps int
	// Points are the incumbent's true metric after each change of
	// incumbent, in budget order.
	Points []Point
	// Exploits is the number of exploits (PBT and PB2), Skipped the number
	// of exploits skipped because the donor had no checkpoint.
	Exploits, Skipped int
	// Wall is the wall-clock time of the run.
	Wall time.Duration
}

// ValueAt returns the incumbent's true metric once b steps had been
// reported, or NaN before the first result.
func (t *Trace) ValueAt(b int) float64 {
	i := sort.Search(len(t.Points), func(i int) bool { return t.Points[i].Budget > b })
	if i == 0 {
		return math.NaN()
	}
	return t.Points[i-1].Value
}

// Final returns the incumbent's true metric at the end of the run.
func (t *Trace) Final() float64 {
	if len(t.Points) == 0 {
		return math.NaN()
	}
	return t.Points[len(t.Points)-1].Value
}

// Result holds every trace of one (problem, population size).
type Result struct {
	Problem *Problem
	Pop     int
	Seeds   int
	// Methods that ran, in report order, and their traces by seed.
	Methods []string
	Traces  map[string][]*Trace
}

// Budget returns the nominal budget of r: population × steps per member.
func (r *Result) Budget() int { return r.Pop * r.Problem.Steps }

// Config says what to run.
type Config struct {
	// Problems to run (required).
	Problems []*Problem
	// Pops are the population sizes (default 4 and 16).
	Pops []int
	// Methods to run, by name (default all). The baseline always runs.
	Methods []string
	// Seeds is the number of seeds, 1..Seeds (default 10).
	Seeds int
	// Parallel is the number of runs executed at once (default the number
	// of CPUs).
	Parallel int
	// TempDir holds the experiment directories while they run (default
	// os.TempDir()).
	TempDir string
	// Progress, if set, is called after each run, one call at a time.
	Progress func(done, total int, t *Trace)
}

// Run runs every (problem, population, method, seed) and returns the
// results in the order of cfg.Problems, then cfg.Pops.
func Run(ctx context.Context, cfg Config) ([]*Result, error) {
	if len(cfg.Problems) == 0 {
		return nil, errors.New("no problems to run")
	}
	if cfg.Pops == nil {
		cfg.Pops = []int{4, 16}
	}
	for _, n := range cfg.Pops {
		if n < 2 {
			return nil, fmt.Errorf("population %d: must be >= 2", n)
		}
	}
	if cfg.Methods == nil {
		cfg.Methods = Methods()
	}
	for _, m := range cfg.Methods {
		if !slices.Contains(Methods(), m) {
			return nil, fmt.Errorf("unknown method %q (known: %v)", m, Methods())
		}
	}
	if cfg.Seeds <= 0 {
		cfg.Seeds = 10
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = runtime.NumCPU()
	}
	if cfg.TempDir == "" {
		cfg.TempDir = os.TempDir()
	}
	type job struct {
		p      *Problem
		pop    int
		method string
		seed   uint64
		out    **Trace
	}
	var (
		results []*Result
		jobs    []job
	)
	for _, p := range cfg.Problems {
		for _, pop := range cfg.Pops {
			r := &Result{Problem: p, Pop: pop, Seeds: cfg.Seeds, Traces: map[string][]*Trace{}}
			results = append(results, r)
			for _, m := range Methods() {
				if m != MethodRandom && !slices.Contains(cfg.Methods, m) {
					continue
				}
				if _, err := newScheduler(m, p); err != nil {
					return nil, fmt.Errorf("%s on %s: %w", m, p.Name, err)
				}
				r.Methods = append(r.Methods, m)
				r.Traces[m] = make([]*Trace, cfg.Seeds)
				for s := range cfg.Seeds {
					jobs = append(jobs, job{p: p, pop: pop, method: m, seed: uint64(s + 1), out: &r.Traces[m][s]})
				}
			}
		}
	}
	err := benchutil.RunAll(ctx, cfg.Parallel, jobs,
		func(ctx context.Context, j job) (*Trace, error) {
			return RunOne(ctx, j.method, j.p, j.pop, j.seed, cfg.TempDir)
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

// pbtConfig returns the PBT settings of PBT and PB2 on p: Ray's defaults
// (quantile 0.25, resample probability 0.25, factors 1.2 and 0.8),
// perturbing every p.Interval training iterations, synchronous or not,
// with every hyperparameter resampled from its domain and clamped to its
// bounds after an explore.
func pbtConfig(p *Problem, synch bool) pbt.Config {
	cfg := pbt.DefaultConfig()
	cfg.TimeAttr = hone.FieldTrainingIteration
	cfg.PerturbationInterval = float64(p.Interval)
	cfg.LogConfig = new(false)
	cfg.Synch = synch
	cfg.Mutations = map[string]any{}
	for _, q := range p.Params {
		cfg.Mutations[q.Name] = q.domain()
	}
	cfg.Explore = p.clampConfig
	return cfg
}

// pb2Config returns the PB2 settings on p: pb2.DefaultConfig with the PBT
// settings of pbtConfig but no mutations, and every hyperparameter's
// bounds, on a log scale (pb2.Config.LogScale) for a hyperparameter
// sampled on one, as PBT's multiplicative perturbations are.
func pb2Config(p *Problem, synch bool) pb2.Config {
	cfg := pb2.DefaultConfig()
	base := pbtConfig(p, synch)
	base.Mutations = nil
	base.ResampleProbability, base.PerturbationFactors = cfg.PBT.ResampleProbability, cfg.PBT.PerturbationFactors
	cfg.PBT = base
	cfg.Bounds = map[string][2]float64{}
	cfg.LogScale = map[string]bool{}
	for _, q := range p.Params {
		cfg.Bounds[q.Name] = [2]float64{q.Lo, q.Hi}
		if q.Log {
			cfg.LogScale[q.Name] = true
		}
	}
	return cfg
}

// clampConfig limits every hyperparameter of cfg to its bounds.
func (p *Problem) clampConfig(cfg hone.Config) hone.Config {
	for _, q := range p.Params {
		if v, ok := hone.Number(cfg[q.Name]); ok {
			cfg[q.Name] = q.clamp(v)
		}
	}
	return cfg
}

// newScheduler returns the scheduler of a method on p (nil for random
// search: FIFO). The schedulers draw from the experiment's seeded source.
func newScheduler(method string, p *Problem) (hone.Scheduler, error) {
	switch method {
	case MethodRandom:
		return nil, nil
	case MethodPBT, MethodPBTSynch:
		return pbt.New(pbtConfig(p, method == MethodPBTSynch))
	case MethodPB2, MethodPB2Synch:
		return pb2.New(pb2Config(p, method == MethodPB2Synch))
	}
	return nil, fmt.Errorf("unknown method %q", method)
}

// recorder is a hone.Callback that keeps a run's trace. It is called on
// the runner's goroutine.
type recorder struct {
	hone.NopCallback
	p       *Problem
	tr      *Trace
	bestObs float64
	has     bool
	err     error
}

func (r *recorder) OnTrialResult(t *hone.Trial, res *hone.Result) {
	v, ok1 := res.Value(r.p.Metric)
	tv, ok2 := res.Value(MetricTrue)
	if !ok1 || !ok2 {
		if r.err == nil {
			r.err = fmt.Errorf("trial %s: a result without %s or %s", t.ID, r.p.Metric, MetricTrue)
		}
		return
	}
	r.tr.Steps++
	if r.has && !r.p.Mode.Better(v, r.bestObs) {
		return
	}
	r.bestObs, r.has = v, true
	if n := len(r.tr.Points); n > 0 && r.tr.Points[n-1].Budget == r.tr.Steps {
		r.tr.Points[n-1].Value = tv
		return
	}
	r.tr.Points = append(r.tr.Points, Point{Budget: r.tr.Steps, Value: tv})
}

// statser is the Stats ability of PBT-like schedulers.
type statser interface{ Stats() pbt.Stats }

// RunOne runs method on p with a population of pop and the given seed,
// in a temporary experiment directory under tmp that it removes
// afterwards, and checks that every member trained p.Steps steps.
func RunOne(ctx context.Context, method string, p *Problem, pop int, seed uint64, tmp string) (*Trace, error) {
	fail := func(err error) (*Trace, error) {
		return nil, fmt.Errorf("%s on %s, population %d, seed %d: %w", method, p.Name, pop, seed, err)
	}
	sched, err := newScheduler(method, p)
	if err != nil {
		return fail(err)
	}
	searcher, err := random.New(p.Space(), pop, nil, seed)
	if err != nil {
		return fail(err)
	}
	rec := &recorder{p: p, tr: &Trace{Problem: p.Name, Pop: pop, Method: method, Seed: seed}}
	exp := &hone.Experiment{
		Name: method, Metric: p.Metric, Mode: p.Mode, Seed: seed,
		Searcher: searcher, Scheduler: sched,
		MaxConcurrentTrials: pop,
		Checkpoint:          hone.CheckpointConfig{NumToKeep: 1},
		Callbacks:           []hone.Callback{rec},
	}
	base, err := os.MkdirTemp(tmp, fmt.Sprintf("%s-%d-%s-%d-", p.Name, pop, method, seed))
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(base)
	dir := filepath.Join(base, "exp")
	st, err := local.New(dir, local.NoSync())
	if err != nil {
		return fail(err)
	}
	start := time.Now()
	out, err := runner.Run(ctx, exp, runner.Options{
		Dir: dir, Store: st, Log: io.Discard, Executor: sim.New(p.Model(seed)),
		Pool: hone.Resources{CPU: float64(pop)},
	})
	if err != nil {
		return fail(err)
	}
	rec.tr.Wall = time.Since(start)
	if rec.err != nil {
		return fail(rec.err)
	}
	if out.Interrupted {
		return fail(errors.New("interrupted"))
	}
	if len(out.Trials) != pop {
		return fail(fmt.Errorf("%d trials, want %d", len(out.Trials), pop))
	}
	for _, t := range out.Trials {
		if t.Status != hone.StatusTerminated {
			return fail(fmt.Errorf("trial %s ended %s: %s", t.ID, t.Status, t.Error))
		}
		if n, ok := t.LastResult.Value(MetricStep); !ok || int(n) != p.Steps {
			return fail(fmt.Errorf("trial %s ended at step %v, want %d", t.ID, n, p.Steps))
		}
	}
	if s, ok := sched.(statser); ok {
		rec.tr.Exploits = s.Stats().Perturbations
		rec.tr.Skipped = s.Stats().Skipped
	}
	return rec.tr, nil
}

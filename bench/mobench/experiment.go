package mobench

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/bench/internal/benchutil"
	"github.com/hone-tune/hone/bench/mofunctions"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/asha"
	"github.com/hone-tune/hone/scheduler/fifo"
	"github.com/hone-tune/hone/scheduler/hyperband"
	"github.com/hone-tune/hone/search/fidelity"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/search/tpe"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/spec"
	"github.com/hone-tune/hone/store/local"
)

// StepAttr is the result field of an experiment method's trials that
// measures progress: the problem's step (1..Steps), ASHA's time attribute.
const StepAttr = "step"

// ExperimentEta is the reduction factor of the experiment methods'
// schedulers, and ExperimentConcurrency the number of trials they run at
// once.
const (
	ExperimentEta         = 3
	ExperimentConcurrency = 4
)

// costUnit is the virtual time of one unit of cost (one full-fidelity
// evaluation).
const costUnit = time.Hour

// Env is what an experiment method builds its searcher and scheduler
// from.
type Env struct {
	// Space is the problem's search space and Objectives its objectives
	// (f1..fM, minimised); Seed is the run's seed.
	Space      space.Space
	Objectives hone.Objectives
	Seed       uint64
	// TimeAttr is the result field of the step (StepAttr) and MaxT the
	// problem's full fidelity (Steps); Eta is the reduction factor to use.
	TimeAttr string
	MaxT     float64
	Eta      float64
}

// Experiment is a method that runs a whole hone experiment: Build makes
// its searcher and scheduler (nil for FIFO), which the controller drives
// under the simulated executor.
type Experiment struct {
	Name  string
	Build func(Env) (hone.Searcher, hone.Scheduler, error)
	// Concurrency is the number of trials at once
	// (ExperimentConcurrency if 0).
	Concurrency int
}

// Arrival is a full-fidelity evaluation of an experiment's run and the
// budget spent when it arrived (its own cost included).
type Arrival struct {
	Spent  float64
	Values []float64
}

// HypervolumeAt returns the hypervolume of the arrivals of a run by the
// time it had spent budget (with respect to p's reference point): the
// hypervolume the same run would have reached with that budget, since a
// run with less budget is the prefix of one with more until it stops.
func HypervolumeAt(p *mofunctions.Problem, arrivals []Arrival, budget float64) float64 {
	var pts [][]float64
	for _, a := range arrivals {
		if a.Spent <= budget+budgetSlack*math.Max(1, budget) {
			pts = append(pts, a.Values)
		}
	}
	return p.Hypervolume(pts)
}

// Method returns e as a Method of the benchmark.
func (e Experiment) Method() Method {
	return Method{Name: e.Name, Run: func(ctx context.Context, p *mofunctions.Problem, seed uint64, budget float64) (*Trace, error) {
		tr, _, err := e.Run(ctx, p, seed, budget)
		return tr, err
	}}
}

// Run runs the experiment on p with seed until it has spent budget, on a
// virtual clock: every trial evaluates its configuration one step at a
// time (step u gives p.At(x, u) as f1..fM, with StepAttr u, and takes
// Cost(u) − Cost(u−1) of virtual time and budget, as a training run that
// goes on from where it was does), and the experiment stops at the first
// step that would exceed the budget, which is not counted. A trial that is
// paused and resumed goes on from its checkpoint's step. The trace holds
// one evaluation per trial, at the deepest step it reached (it cost
// Cost(step) in all); the arrivals are its full-fidelity evaluations in
// the order they arrived, with the budget spent by then. The trace's CPU
// is that of every call into the searcher and the scheduler (FIFO's too
// when Build gives none), which Run wraps after Build, once they are
// wired to each other (benchutil.TimeSearcher, benchutil.TimeScheduler).
func (e Experiment) Run(ctx context.Context, p *mofunctions.Problem, seed uint64, budget float64) (*Trace, []Arrival, error) {
	conc := e.Concurrency
	if conc <= 0 {
		conc = ExperimentConcurrency
	}
	env := Env{Space: SpaceOf(p), Objectives: Objectives(p), Seed: seed, TimeAttr: StepAttr, MaxT: float64(p.Steps), Eta: ExperimentEta}
	sr, sc, err := e.Build(env)
	if err != nil {
		return nil, nil, fmt.Errorf("building %s: %w", e.Name, err)
	}
	fifoOnly := sc == nil
	if fifoOnly {
		sc = fifo.New()
	}
	meter := &benchutil.CPUMeter{}
	rec := &recorder{p: p, tr: &Trace{Problem: p.Name, Method: e.Name, Seed: seed, Budget: budget}, at: map[string]int{}}
	exp := &hone.Experiment{
		Name: e.Name, Objectives: env.Objectives, Seed: seed,
		MaxConcurrentTrials: conc,
		Checkpoint:          hone.CheckpointConfig{NumToKeep: 1},
		Searcher:            benchutil.TimeSearcher(sr, meter),
		Scheduler:           benchutil.TimeScheduler(sc, meter),
		Stoppers:            []hone.Stopper{rec},
		Callbacks:           []hone.Callback{rec},
	}
	dir, err := os.MkdirTemp("", fmt.Sprintf("mobench-%s-%s-%d-", p.Name, e.Name, seed))
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	dir = filepath.Join(dir, "exp")
	st, err := local.New(dir, local.NoSync())
	if err != nil {
		return nil, nil, err
	}
	model := func(cfg hone.Config, _ string) (sim.Trainable, error) {
		x, err := configX(p, cfg)
		if err != nil {
			return nil, err
		}
		return &trainable{p: p, x: x, done: fifoOnly}, nil
	}
	out, err := runner.Run(ctx, exp, runner.Options{
		Dir: dir, Store: st, Log: io.Discard, Executor: sim.New(model),
		Pool: hone.Resources{CPU: float64(conc)},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s on %s, seed %d: %w", e.Name, p.Name, seed, err)
	}
	if rec.err != nil {
		return nil, nil, fmt.Errorf("%s on %s, seed %d: %w", e.Name, p.Name, seed, rec.err)
	}
	if out.Interrupted {
		return nil, nil, fmt.Errorf("%s on %s, seed %d: interrupted", e.Name, p.Name, seed)
	}
	for _, t := range out.Trials {
		if t.Status == hone.StatusError {
			return nil, nil, fmt.Errorf("%s on %s, seed %d: trial %s failed: %s", e.Name, p.Name, seed, t.ID, t.Error)
		}
	}
	rec.tr.CPU = meter.Total()
	return rec.tr, rec.arrivals, nil
}

// trainable is the simulated trial: it evaluates x one step at a time.
type trainable struct {
	p *mofunctions.Problem
	x []float64
	u int
	// done marks the full-fidelity result as the trial's last: under
	// FIFO only, since ASHA and HyperBand stop trials at max_t.
	done bool
}

func (t *trainable) Step() (sim.Step, error) {
	t.u++
	v := t.p.At(t.x, t.u)
	m := make(map[string]any, len(v)+1)
	for j, f := range v {
		m[MetricName(j)] = f
	}
	m[StepAttr] = t.u
	c := t.p.Cost(t.u) - t.p.Cost(t.u-1)
	return sim.Step{Metrics: m, Duration: time.Duration(c * float64(costUnit)), Done: t.done && t.u >= t.p.Steps}, nil
}

func (t *trainable) Save() ([]byte, error) { return binary.AppendUvarint(nil, uint64(t.u)), nil }

func (t *trainable) Load(state []byte) error {
	u, n := binary.Uvarint(state)
	if n <= 0 || n != len(state) || u > uint64(t.p.Steps) {
		return fmt.Errorf("bad trainable state of %d bytes", len(state))
	}
	t.u = int(u)
	return nil
}

// recorder counts the budget of every result (a hone.Callback) and stops
// the experiment once it is spent (a hone.Stopper).
type recorder struct {
	hone.NopCallback
	p        *mofunctions.Problem
	tr       *Trace
	at       map[string]int // trial id -> its evaluation in tr.Evals
	arrivals []Arrival
	over     bool
	err      error
}

func (r *recorder) OnTrialResult(t *hone.Trial, res *hone.Result) {
	if r.over || r.err != nil {
		return
	}
	uv, ok := res.Value(StepAttr)
	if !ok {
		r.err = fmt.Errorf("trial %s: a result without %s", t.ID, StepAttr)
		return
	}
	u := int(uv)
	i, seen := r.at[t.ID]
	prev := 0
	if seen {
		prev = r.tr.Evals[i].Step
	}
	if u <= prev {
		return // a step again after a restore: already paid for
	}
	c := r.p.Cost(u) - r.p.Cost(prev)
	if r.tr.Spent+c > r.tr.Budget+budgetSlack*math.Max(1, r.tr.Budget) {
		r.over = true
		return
	}
	x, err := configX(r.p, t.Config)
	if err != nil {
		r.err = fmt.Errorf("trial %s: %w", t.ID, err)
		return
	}
	v := make([]float64, r.p.Objectives)
	for j := range v {
		f, ok := res.Value(MetricName(j))
		if !ok {
			r.err = fmt.Errorf("trial %s: a result without %s", t.ID, MetricName(j))
			return
		}
		v[j] = f
	}
	r.tr.Spent += c
	ev := Eval{X: x, Step: u, Values: v}
	if seen {
		r.tr.Evals[i] = ev
	} else {
		r.at[t.ID] = len(r.tr.Evals)
		r.tr.Evals = append(r.tr.Evals, ev)
	}
	if u >= r.p.Steps {
		r.arrivals = append(r.arrivals, Arrival{Spent: r.tr.Spent, Values: v})
	}
}

func (r *recorder) ShouldStop(string, *hone.Result) bool { return false }

func (r *recorder) ShouldStopAll() bool {
	return r.over || r.err != nil || r.tr.Spent >= r.tr.Budget-budgetSlack*math.Max(1, r.tr.Budget)
}

// MOASHAConfig is the ASHA of the experiment methods: the one scheduler:
// auto chooses for max_t the problem's Steps (spec.AutoASHA: reduction
// factor 3, rungs anchored at max_t, one bracket, promotion top). Below 9
// steps, where auto would choose FIFO, it is one rung at grace period 1,
// which stops no trial of a single-fidelity problem.
func MOASHAConfig(env Env) asha.Config {
	if env.MaxT >= 9 {
		return spec.AutoASHA(env.TimeAttr, env.MaxT)
	}
	return asha.Config{TimeAttr: env.TimeAttr, MaxT: env.MaxT, GracePeriod: 1, ReductionFactor: env.Eta,
		Brackets: 1, StopLastTrials: true, Promotion: asha.PromoteTop}
}

// WithMOASHA returns the experiment of searcher (built by newSearcher from
// the run's environment) with MO-ASHA (MOASHAConfig): the hook by which a
// multi-objective searcher joins MO-ASHA in the benchmark. A searcher that
// models results at rungs (fidelity.RungUser, as TPE) gets ASHA's rungs,
// and ASHA follows it when it is a fidelity.Advisor, as the spec's builder
// wires them.
func WithMOASHA(name string, newSearcher func(Env) (hone.Searcher, error)) Experiment {
	return Experiment{Name: name, Build: func(env Env) (hone.Searcher, hone.Scheduler, error) {
		sr, err := newSearcher(env)
		if err != nil {
			return nil, nil, err
		}
		sc, err := asha.New(MOASHAConfig(env))
		if err != nil {
			return nil, nil, err
		}
		if u, ok := sr.(fidelity.RungUser); ok {
			u.SetRungs(sc.Rungs())
		}
		if a, ok := sr.(fidelity.Advisor); ok {
			sc.SetAdvisor(a)
		}
		return sr, sc, nil
	}}
}

// MOASHA is hone's random searcher with MO-ASHA, "mo-asha".
func MOASHA() Experiment {
	return WithMOASHA("mo-asha", func(env Env) (hone.Searcher, error) {
		return random.New(env.Space, -1, nil, env.Seed)
	})
}

// TPEMOASHA is hone's multi-objective TPE with MO-ASHA, "tpe-mo-asha":
// the searcher and scheduler a spec with several objectives and a budget
// gets from searcher: auto and scheduler: auto (tpe with the spec's
// defaults, fidelity_check off with several objectives; MOASHAConfig),
// observing the trials at ASHA's rungs.
func TPEMOASHA() Experiment {
	return WithMOASHA("tpe-mo-asha", func(env Env) (hone.Searcher, error) {
		return tpe.New(env.Space, tpe.Options{Objectives: env.Objectives, NumSamples: -1, Seed: env.Seed, Multivariate: true, ConstantLiar: true})
	})
}

// MOHyperBand is hone's random searcher with synchronous HyperBand
// ranking by every objective, "mo-hyperband": max_t the problem's Steps,
// reduction factor Eta.
func MOHyperBand() Experiment {
	return Experiment{Name: "mo-hyperband", Build: func(env Env) (hone.Searcher, hone.Scheduler, error) {
		sr, err := random.New(env.Space, -1, nil, env.Seed)
		if err != nil {
			return nil, nil, err
		}
		sc, err := hyperband.New(hyperband.Config{TimeAttr: env.TimeAttr, MaxT: env.MaxT, ReductionFactor: env.Eta, StopLastTrials: true})
		return sr, sc, err
	}}
}

// AllExperiments returns the experiment methods, in report order.
func AllExperiments() []Experiment { return []Experiment{MOASHA(), MOHyperBand(), TPEMOASHA()} }

// Experiments returns the experiment methods as methods of the benchmark.
func Experiments() []Method {
	var ms []Method
	for _, e := range AllExperiments() {
		ms = append(ms, e.Method())
	}
	return ms
}

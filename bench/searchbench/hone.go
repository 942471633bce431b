package searchbench

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/bench/functions"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/asha"
	"github.com/hone-tune/hone/scheduler/hyperband"
	"github.com/hone-tune/hone/search"
	"github.com/hone-tune/hone/search/bohb"
	"github.com/hone-tune/hone/search/dehb"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/search/tpe"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/spec"
	"github.com/hone-tune/hone/store/local"
)

// The metrics a benchmark trainable reports.
const (
	metricLoss   = "loss"
	metricBudget = "budget"
	metricCost   = "cost"
)

// costUnit is the virtual time of one unit of cost (one full-fidelity
// evaluation).
const costUnit = time.Hour

// eta is the reduction factor of every multi-fidelity method.
const eta = 3

// spaceOf returns the hone search space of p: a uniform float per
// continuous dimension and a choice of 0 or 1 per binary one.
func spaceOf(p *functions.Problem) space.Space {
	sp := space.Space{}
	for _, d := range p.Dims {
		if d.Binary {
			sp[d.Name] = space.Choice(0, 1)
		} else {
			sp[d.Name] = space.Uniform(d.Lo, d.Hi)
		}
	}
	return sp
}

// configX reads p's configuration vector from a hone configuration.
func configX(p *functions.Problem, cfg hone.Config) ([]float64, error) {
	x := make([]float64, len(p.Dims))
	for i, d := range p.Dims {
		v, ok := hone.Number(cfg[d.Name])
		if !ok {
			return nil, fmt.Errorf("config %s = %v: not a number", d.Name, cfg[d.Name])
		}
		x[i] = v
	}
	if err := p.Check(x); err != nil {
		return nil, err
	}
	return x, nil
}

// trainable is the sim trainable of one trial: it evaluates the trial's
// configuration one budget step at a time.
type trainable struct {
	p   *functions.Problem
	run *functions.Run
	// done marks the result at full fidelity as the trial's last. Only
	// FIFO methods set it: a done result goes to no scheduler, so
	// HyperBand and ASHA stop their trials at max_t themselves, and the
	// BOHB searcher sees the full-fidelity result of HyperBandForBOHB.
	done bool
}

func (t *trainable) Step() (sim.Step, error) {
	v := t.run.Step()
	u := t.run.At()
	c := t.p.StepCost(u)
	return sim.Step{
		Metrics:  map[string]any{metricLoss: v, metricBudget: u, metricCost: c},
		Duration: time.Duration(c * float64(costUnit)),
		Done:     t.done && u >= t.p.Steps,
	}, nil
}

func (t *trainable) Save() ([]byte, error) {
	return binary.AppendUvarint(nil, uint64(t.run.At())), nil
}

func (t *trainable) Load(state []byte) error {
	u, n := binary.Uvarint(state)
	if n <= 0 || n != len(state) || u > uint64(t.p.Steps) {
		return fmt.Errorf("bad trainable state of %d bytes", len(state))
	}
	t.run = t.run.Restart(int(u))
	return nil
}

// honeRecorder feeds every result to a recorder (a hone.Callback) and stops
// the experiment once the budget is used up (a hone.Stopper).
type honeRecorder struct {
	hone.NopCallback
	rec *recorder
	err error
}

func (h *honeRecorder) OnTrialResult(t *hone.Trial, r *hone.Result) {
	u, ok1 := r.Value(metricBudget)
	v, ok2 := r.Value(metricLoss)
	if !ok1 || !ok2 {
		if h.err == nil {
			h.err = fmt.Errorf("trial %s: a result without %s or %s", t.ID, metricBudget, metricLoss)
		}
		return
	}
	h.rec.add(int(u), v, func() []float64 {
		x, err := configX(h.rec.p, t.Config)
		if err != nil && h.err == nil {
			h.err = err
		}
		return x
	})
}

func (h *honeRecorder) ShouldStop(string, *hone.Result) bool { return false }

func (h *honeRecorder) ShouldStopAll() bool { return h.rec.done() }

// honeExperiment builds the experiment of a hone method.
func honeExperiment(method string, p *functions.Problem, seed uint64, workers int) (*hone.Experiment, error) {
	sp := spaceOf(p)
	// MaxPendingTrials stays 0: each searcher's own limit (for random
	// search max(16, ⌈1.1 × workers⌉), so HyperBand's brackets fill as
	// trials are added; 1 for BOHB and for TPE behind its concurrency
	// limit).
	exp := &hone.Experiment{
		Name: method, Metric: metricLoss, Mode: hone.Min, Seed: seed,
		MaxConcurrentTrials: workers,
		Checkpoint:          hone.CheckpointConfig{NumToKeep: 1},
	}
	randomSearch := func() (hone.Searcher, error) { return random.New(sp, -1, nil, seed) }
	var err error
	switch method {
	case MethodRandom:
		exp.Searcher, err = randomSearch()
	case MethodTPE:
		var s *tpe.Searcher
		s, err = tpe.New(sp, tpe.Options{Metric: metricLoss, Mode: hone.Min, NumSamples: -1, Seed: seed})
		if err == nil {
			exp.Searcher = search.Limit(s, workers)
		}
	case MethodTPEParallel:
		var s *tpe.Searcher
		s, err = tpe.New(sp, tpe.Options{Metric: metricLoss, Mode: hone.Min, NumSamples: -1, Seed: seed,
			Multivariate: true, ConstantLiar: true})
		if err == nil {
			exp.Searcher = search.Limit(s, workers)
		}
	case MethodTPEASHA:
		var s *tpe.Searcher
		s, err = tpe.New(sp, tpe.Options{Metric: metricLoss, Mode: hone.Min, NumSamples: -1, Seed: seed,
			Multivariate: true, ConstantLiar: true, FidelityCheck: true})
		if err == nil {
			var sched *asha.Scheduler
			sched, err = asha.New(asha.Config{TimeAttr: metricBudget, MaxT: float64(p.Steps), GracePeriod: 1,
				ReductionFactor: eta, Brackets: 1, StopLastTrials: true})
			if err == nil {
				s.SetRungs(sched.Rungs())
				sched.SetAdvisor(s)
				exp.Searcher, exp.Scheduler = search.Limit(s, workers), sched
			}
		}
	case MethodAuto:
		return autoExperiment(p, seed, workers)
	case MethodHyperBand:
		exp.Searcher, err = randomSearch()
		if err == nil {
			exp.Scheduler, err = hyperband.New(hyperband.Config{TimeAttr: metricBudget, MaxT: float64(p.Steps), ReductionFactor: eta, StopLastTrials: true})
		}
	case MethodASHA:
		exp.Searcher, err = randomSearch()
		if err == nil {
			exp.Scheduler, err = asha.New(asha.Config{TimeAttr: metricBudget, MaxT: float64(p.Steps), GracePeriod: 1,
				ReductionFactor: eta, Brackets: 1, StopLastTrials: true})
		}
	case MethodBOHB:
		var s *bohb.Searcher
		// MaxConcurrent stays 0 (no cap; the controller keeps one trial
		// pending). With a cap, a bracket whose trials have all finished
		// is still the one HyperBandForBOHB fills, because it counts only
		// live trials, and every later trial runs alone in it to full
		// fidelity (see RESULTS.md).
		s, err = bohb.New(sp, bohb.Options{Metric: metricLoss, Mode: hone.Min, NumSamples: -1, Seed: seed})
		if err == nil {
			exp.Searcher = s
			exp.Scheduler, err = hyperband.NewForBOHB(hyperband.Config{TimeAttr: metricBudget, MaxT: float64(p.Steps), ReductionFactor: eta, StopLastTrials: true}, s)
		}
	case MethodASHABOHB:
		var s *bohb.Searcher
		o := bohb.AsyncOptions()
		o.Metric, o.Mode, o.NumSamples, o.Seed = metricLoss, hone.Min, -1, seed
		s, err = bohb.New(sp, o)
		if err == nil {
			exp.Searcher = s
			exp.Scheduler, err = asha.New(asha.Config{TimeAttr: metricBudget, MaxT: float64(p.Steps), GracePeriod: 1,
				ReductionFactor: eta, Brackets: 1, StopLastTrials: true, BudgetInfo: true})
		}
	case MethodDEHB:
		var s *dehb.Searcher
		s, err = dehb.New(sp, dehb.Options{Metric: metricLoss, Mode: hone.Min, NumSamples: -1, Seed: seed})
		if err == nil {
			exp.Searcher = s
			exp.Scheduler, err = dehb.NewScheduler(dehb.Config{TimeAttr: metricBudget, MaxT: float64(p.Steps), GracePeriod: 1, ReductionFactor: eta}, s)
		}
	default:
		return nil, fmt.Errorf("unknown hone method %q", method)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	return exp, nil
}

// autoExperiment builds the experiment a spec with searcher: auto and
// scheduler: auto gives for p: stop.training_iteration is the number of
// steps (training_iteration counts steps as budget does), so auto chooses
// ASHA over it and TPE on its rungs.
func autoExperiment(p *functions.Problem, seed uint64, workers int) (*hone.Experiment, error) {
	sp := map[string]any{}
	for _, d := range p.Dims {
		if d.Binary {
			sp[d.Name] = map[string]any{"choice": []int{0, 1}}
		} else {
			sp[d.Name] = map[string]any{"uniform": []float64{d.Lo, d.Hi}}
		}
	}
	src, err := json.Marshal(map[string]any{
		"name": MethodAuto, "command": []string{"unused"}, "metric": metricLoss, "mode": "min",
		"seed": seed, "num_samples": -1, "max_concurrent_trials": workers, "search_space": sp,
		"searcher": "auto", "scheduler": "auto", "stop": map[string]any{hone.FieldTrainingIteration: p.Steps},
		"checkpoint": map[string]any{"num_to_keep": 1},
	})
	if err != nil {
		return nil, err
	}
	s, err := spec.Parse(src, "auto.yaml", os.TempDir())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", MethodAuto, err)
	}
	plan, err := spec.Build(s, os.TempDir(), nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", MethodAuto, err)
	}
	if err := plan.Close(); err != nil {
		return nil, err
	}
	return plan.Experiment, nil
}

// runHone runs a hone method on p with the given seed and budget, in a
// temporary experiment directory under tmp that it removes afterwards.
func runHone(ctx context.Context, method string, p *functions.Problem, seed uint64, budget float64, workers int, tmp string) (*Trace, error) {
	exp, err := honeExperiment(method, p, seed, workers)
	if err != nil {
		return nil, err
	}
	h := &honeRecorder{rec: newRecorder(p, method, seed, budget)}
	exp.Stoppers = []hone.Stopper{h}
	exp.Callbacks = []hone.Callback{h}

	dir, err := os.MkdirTemp(tmp, fmt.Sprintf("%s-%s-%d-", p.Name, method, seed))
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	dir = filepath.Join(dir, "exp")
	st, err := local.New(dir, local.NoSync())
	if err != nil {
		return nil, err
	}
	model := func(cfg hone.Config, trialID string) (sim.Trainable, error) {
		x, err := configX(p, cfg)
		if err != nil {
			return nil, err
		}
		return &trainable{p: p, run: p.NewRun(x, functions.Key(seed, trialID)), done: exp.Scheduler == nil}, nil
	}
	start := time.Now()
	out, err := runner.Run(ctx, exp, runner.Options{
		Dir: dir, Store: st, Log: io.Discard, Executor: sim.New(model),
		Pool: hone.Resources{CPU: float64(workers)},
	})
	if err != nil {
		return nil, fmt.Errorf("%s on %s, seed %d: %w", method, p.Name, seed, err)
	}
	if h.err != nil {
		return nil, fmt.Errorf("%s on %s, seed %d: %w", method, p.Name, seed, h.err)
	}
	if out.Interrupted {
		return nil, fmt.Errorf("%s on %s, seed %d: interrupted", method, p.Name, seed)
	}
	for _, t := range out.Trials {
		if t.Status == hone.StatusError {
			return nil, fmt.Errorf("%s on %s, seed %d: trial %s failed: %s", method, p.Name, seed, t.ID, t.Error)
		}
	}
	tr := h.rec.tr
	for _, t := range out.Trials {
		if t.LastResult != nil {
			tr.Trials++
		}
	}
	tr.Wall = time.Since(start)
	return tr, nil
}

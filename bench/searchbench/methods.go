package searchbench

import (
	"encoding/json"
	"os"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/scheduler/asha"
	"github.com/hone-tune/hone/scheduler/hyperband"
	"github.com/hone-tune/hone/search"
	"github.com/hone-tune/hone/search/bohb"
	"github.com/hone-tune/hone/search/dehb"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/search/tpe"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/spec"
)

// Env is what a hone method is built from for one run.
type Env struct {
	// Space is the problem's search space.
	Space space.Space
	// Seed is the run's seed (also the experiment's).
	Seed uint64
	// Concurrency is the number of trials that run at once (the
	// experiment's MaxConcurrentTrials).
	Concurrency int
	// Metric (minimised) and TimeAttr are the result fields of the loss
	// and of the budget step; MaxT is the full fidelity in TimeAttr's
	// unit (the problem's Steps) and Eta the reduction factor every
	// multi-fidelity method uses (3).
	Metric, TimeAttr string
	MaxT             float64
	Eta              float64
}

// HoneMethod is one of hone's methods: how its searcher and scheduler are
// built. Every hone method runs through runner.Run on the sim executor
// with MaxConcurrentTrials = Env.Concurrency.
type HoneMethod struct {
	Name string
	// Baseline marks the methods that stand for a baseline rather than
	// for hone's own search: random search, alone and with successive
	// halving (ASHA).
	Baseline bool
	// Build returns the method's searcher and scheduler. A nil scheduler
	// means FIFO with every trial run to full fidelity (the trainable
	// then reports its full-fidelity step as done); a scheduler must stop
	// its trials at Env.MaxT itself (hone's HyperBand and ASHA do with
	// StopLastTrials), since a done result never reaches it.
	Build func(e Env) (hone.Searcher, hone.Scheduler, error)
}

// HoneMethods is hone's method table, in report order. Adding a method
// is adding a line.
var HoneMethods = []HoneMethod{
	{Name: "random", Baseline: true, Build: func(e Env) (hone.Searcher, hone.Scheduler, error) { return randomSearch(e), nil, nil }},
	{Name: "asha", Baseline: true, Build: func(e Env) (hone.Searcher, hone.Scheduler, error) { return randomWith(e)(newASHA(e)) }},
	{Name: "hyperband", Build: func(e Env) (hone.Searcher, hone.Scheduler, error) { return randomWith(e)(newHyperBand(e)) }},
	{Name: "bohb", Build: newBOHB},
	{Name: "asha-bohb", Build: newASHABOHB},
	{Name: "dehb", Build: newDEHB},
	{Name: "tpe", Build: func(e Env) (hone.Searcher, hone.Scheduler, error) { return limited(e)(newTPE(e)) }},
	{Name: "tpe-parallel", Build: func(e Env) (hone.Searcher, hone.Scheduler, error) { return limited(e)(newParallelTPE(e, false)) }},
	{Name: "tpe-asha", Build: newTPEASHA},
	{Name: "tpe-asha-univariate", Build: func(e Env) (hone.Searcher, hone.Scheduler, error) { return tpeOnASHA(e, false) }},
	{Name: "auto", Build: newAuto},
}

// randomSearch is random search with hone's defaults (MaxPending
// hone.PendingAuto, so HyperBand's brackets fill as trials are added).
func randomSearch(e Env) hone.Searcher {
	s, err := random.New(e.Space, -1, nil, e.Seed)
	if err != nil {
		panic(err) // the problems' spaces are valid
	}
	return s
}

// randomWith returns a function that pairs random search with a
// scheduler that may have failed to build.
func randomWith(e Env) func(hone.Scheduler, error) (hone.Searcher, hone.Scheduler, error) {
	return func(sc hone.Scheduler, err error) (hone.Searcher, hone.Scheduler, error) {
		if err != nil {
			return nil, nil, err
		}
		return randomSearch(e), sc, nil
	}
}

// newASHA is ASHA with grace period 1 step, η, one bracket.
func newASHA(e Env) (hone.Scheduler, error) {
	return asha.New(asha.Config{TimeAttr: e.TimeAttr, MaxT: e.MaxT, GracePeriod: 1, ReductionFactor: e.Eta, Brackets: 1, StopLastTrials: true})
}

// hyperbandConfig is the configuration of hone's HyperBand schedulers.
func hyperbandConfig(e Env) hyperband.Config {
	return hyperband.Config{TimeAttr: e.TimeAttr, MaxT: e.MaxT, ReductionFactor: e.Eta, StopLastTrials: true}
}

// newHyperBand is synchronous HyperBand.
func newHyperBand(e Env) (hone.Scheduler, error) { return hyperband.New(hyperbandConfig(e)) }

// newBOHB is HyperBand for BOHB with the BOHB searcher (HpBandSter's
// defaults). MaxConcurrent stays 0 (no cap; the controller keeps one trial
// pending): with a cap, a bracket whose trials have all finished is still
// the one HyperBandForBOHB fills, because it counts only live trials, and
// every later trial runs alone in it to full fidelity (bench/RESULTS.md).
func newBOHB(e Env) (hone.Searcher, hone.Scheduler, error) {
	s, err := bohb.New(e.Space, bohb.Options{Metric: e.Metric, Mode: hone.Min, NumSamples: -1, Seed: e.Seed})
	if err != nil {
		return nil, nil, err
	}
	sc, err := hyperband.NewForBOHB(hyperbandConfig(e), s)
	if err != nil {
		return nil, nil, err
	}
	return s, sc, nil
}

// newASHABOHB is asynchronous BOHB: the BOHB searcher with its
// asynchronous options on ASHA's rungs (ASHA marks each rung's results
// with their budget and is advised by the searcher's fidelity check).
func newASHABOHB(e Env) (hone.Searcher, hone.Scheduler, error) {
	o := bohb.AsyncOptions()
	o.Metric, o.Mode, o.NumSamples, o.Seed, o.FidelityCheck = e.Metric, hone.Min, -1, e.Seed, true
	s, err := bohb.New(e.Space, o)
	if err != nil {
		return nil, nil, err
	}
	sc, err := asha.New(asha.Config{TimeAttr: e.TimeAttr, MaxT: e.MaxT, GracePeriod: 1, ReductionFactor: e.Eta, Brackets: 1, StopLastTrials: true, BudgetInfo: true})
	if err != nil {
		return nil, nil, err
	}
	sc.SetAdvisor(s)
	return s, sc, nil
}

// newDEHB is DEHB's searcher and scheduler, which work as a pair.
func newDEHB(e Env) (hone.Searcher, hone.Scheduler, error) {
	s, err := dehb.New(e.Space, dehb.Options{Metric: e.Metric, Mode: hone.Min, NumSamples: -1, Seed: e.Seed})
	if err != nil {
		return nil, nil, err
	}
	sc, err := dehb.NewScheduler(dehb.Config{TimeAttr: e.TimeAttr, MaxT: e.MaxT, GracePeriod: 1, ReductionFactor: e.Eta}, s)
	if err != nil {
		return nil, nil, err
	}
	return s, sc, nil
}

// newParallelTPE is TPE as a spec's searcher tpe builds it: multivariate,
// with the constant liar, and the fidelity check when check is set.
func newParallelTPE(e Env, check bool) (*tpe.Searcher, error) {
	return newTPEWith(e, true, check)
}

// newTPEWith is TPE with the constant liar, multivariate or not, with the
// fidelity check or not.
func newTPEWith(e Env, multivariate, check bool) (*tpe.Searcher, error) {
	return tpe.New(e.Space, tpe.Options{Metric: e.Metric, Mode: hone.Min, NumSamples: -1, Seed: e.Seed,
		Multivariate: multivariate, ConstantLiar: true, FidelityCheck: check})
}

// newTPEASHA is TPE on ASHA's rungs with the fidelity check, ASHA advised
// by it (a spec's searcher tpe with scheduler asha).
func newTPEASHA(e Env) (hone.Searcher, hone.Scheduler, error) { return tpeOnASHA(e, true) }

// tpeOnASHA is TPE, multivariate or not, on ASHA's rungs with the
// fidelity check, ASHA advised by it (tpe-asha-univariate: the spec's
// tpe with multivariate: false).
func tpeOnASHA(e Env, multivariate bool) (hone.Searcher, hone.Scheduler, error) {
	s, err := newTPEWith(e, multivariate, true)
	if err != nil {
		return nil, nil, err
	}
	sc, err := newASHA(e)
	if err != nil {
		return nil, nil, err
	}
	a := sc.(*asha.Scheduler)
	s.SetRungs(a.Rungs())
	a.SetAdvisor(s)
	return search.Limit(s, e.Concurrency), a, nil
}

// newAuto is what a spec with searcher: auto and scheduler: auto and
// stop.training_iteration = MaxT builds (spec.Build).
func newAuto(e Env) (hone.Searcher, hone.Scheduler, error) {
	src, err := json.Marshal(map[string]any{
		"name": "auto", "command": []string{"unused"}, "metric": e.Metric, "mode": "min",
		"seed": e.Seed, "num_samples": -1, "max_concurrent_trials": e.Concurrency, "search_space": e.Space,
		"searcher": "auto", "scheduler": map[string]any{"name": "auto", "time_attr": e.TimeAttr, "max_t": e.MaxT},
		"stop": map[string]any{e.TimeAttr: e.MaxT},
	})
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "searchbench-auto-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	s, err := spec.Parse(src, "auto.yaml", dir)
	if err != nil {
		return nil, nil, err
	}
	plan, err := spec.Build(s, dir, nil)
	if err != nil {
		return nil, nil, err
	}
	if err := plan.Close(); err != nil {
		return nil, nil, err
	}
	return plan.Experiment.Searcher, plan.Experiment.Scheduler, nil
}

// newTPE is hone's TPE with its defaults.
func newTPE(e Env) (hone.Searcher, error) {
	return tpe.New(e.Space, tpe.Options{Metric: e.Metric, Mode: hone.Min, NumSamples: -1, Seed: e.Seed})
}

// limited returns a function that puts a searcher that may have failed
// to build behind search.Limit at the run's concurrency, under FIFO.
func limited(e Env) func(hone.Searcher, error) (hone.Searcher, hone.Scheduler, error) {
	return func(s hone.Searcher, err error) (hone.Searcher, hone.Scheduler, error) {
		if err != nil {
			return nil, nil, err
		}
		return search.Limit(s, e.Concurrency), nil, nil
	}
}

// honeMethod returns the entry of HoneMethods named name, or nil.
func honeMethod(name string) *HoneMethod {
	for i := range HoneMethods {
		if HoneMethods[i].Name == name {
			return &HoneMethods[i]
		}
	}
	return nil
}

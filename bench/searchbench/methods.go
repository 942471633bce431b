package searchbench

import (
	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/scheduler/asha"
	"github.com/hone-tune/hone/scheduler/hyperband"
	"github.com/hone-tune/hone/search"
	"github.com/hone-tune/hone/search/bohb"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/search/tpe"
	"github.com/hone-tune/hone/space"
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
	{Name: "tpe", Build: func(e Env) (hone.Searcher, hone.Scheduler, error) { return limited(e)(newTPE(e)) }},
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

package mobench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/bench/internal/benchutil"
	"github.com/hone-tune/hone/bench/mofunctions"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
)

// SpaceOf returns the hone search space of p: a uniform float per
// dimension.
func SpaceOf(p *mofunctions.Problem) space.Space {
	sp := space.Space{}
	for _, d := range p.Dims {
		sp[d.Name] = space.Uniform(d.Lo, d.Hi)
	}
	return sp
}

// MetricName returns the result metric of objective j (0-based): "f1",
// "f2", and so on, each minimised.
func MetricName(j int) string { return "f" + strconv.Itoa(j+1) }

// Objectives returns the objectives of p as hone sees them: f1..fM, all
// minimised.
func Objectives(p *mofunctions.Problem) hone.Objectives {
	os := make(hone.Objectives, p.Objectives)
	for j := range os {
		os[j] = hone.Objective{Metric: MetricName(j), Mode: hone.Min}
	}
	return os
}

// SearcherMethod returns a method that runs a hone searcher at full
// fidelity, one trial at a time: it asks for a configuration (trial ids
// "t0", "t1", …), evaluates it, and reports a done result whose metrics
// are f1..fM (OnResult, then OnTrialComplete), until the budget is spent
// or the searcher is done. build gets the problem's space, its objectives
// and the seed. The trace's CPU is that of every call into the searcher
// (benchutil.TimeSearcher).
func SearcherMethod(name string, build func(sp space.Space, objectives hone.Objectives, seed uint64) (hone.Searcher, error)) Method {
	return Method{Name: name, Run: func(ctx context.Context, p *mofunctions.Problem, seed uint64, budget float64) (*Trace, error) {
		plain, err := build(SpaceOf(p), Objectives(p), seed)
		if err != nil {
			return nil, fmt.Errorf("building %s: %w", name, err)
		}
		meter := &benchutil.CPUMeter{}
		s := benchutil.TimeSearcher(plain, meter)
		tr := &Trace{Problem: p.Name, Method: name, Seed: seed, Budget: budget}
		cost := p.Cost(p.Steps)
		for n := 0; tr.Spent+cost <= budget+budgetSlack; n++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			id := "t" + strconv.Itoa(n)
			cfg, err := s.Suggest(id)
			if errors.Is(err, hone.ErrSearchDone) {
				break
			}
			if errors.Is(err, hone.ErrNotNow) {
				return nil, fmt.Errorf("trial %s: the searcher waits, but no trial is pending", id)
			}
			if err != nil {
				return nil, fmt.Errorf("trial %s: %w", id, err)
			}
			x, err := configX(p, cfg)
			if err != nil {
				return nil, fmt.Errorf("trial %s: %w", id, err)
			}
			v := p.Evaluate(x)
			metrics := make(map[string]any, len(v))
			for j, f := range v {
				metrics[MetricName(j)] = f
			}
			res := &hone.Result{TrialID: id, Metrics: metrics, TrainingIteration: p.Steps, Done: true}
			s.OnResult(id, res)
			s.OnTrialComplete(id, res, false)
			tr.Evals = append(tr.Evals, Eval{X: x, Step: p.Steps, Values: v})
			tr.Spent += cost
		}
		tr.CPU = meter.Total()
		return tr, nil
	}}
}

// configX reads p's configuration vector from a hone configuration.
func configX(p *mofunctions.Problem, cfg hone.Config) ([]float64, error) {
	x := make([]float64, len(p.Dims))
	for i, d := range p.Dims {
		v, ok := hone.Number(cfg[d.Name])
		if !ok || math.IsNaN(v) {
			return nil, fmt.Errorf("config %s = %v: not a number", d.Name, cfg[d.Name])
		}
		x[i] = v
	}
	if err := p.Check(x); err != nil {
		return nil, err
	}
	return x, nil
}

// Random is hone's random searcher (search/random, without end, seeded
// with the run's seed) as a method.
func Random() Method {
	return SearcherMethod("random", func(sp space.Space, _ hone.Objectives, seed uint64) (hone.Searcher, error) {
		return random.New(sp, -1, nil, seed)
	})
}

package searchbench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/c-bata/goptuna"
	"github.com/c-bata/goptuna/successivehalving"
	gtpe "github.com/c-bata/goptuna/tpe"

	"github.com/hone-tune/hone/bench/functions"
)

// errBudgetUsed ends a Goptuna trial whose next step would exceed the
// budget.
var errBudgetUsed = errors.New("budget used up")

// runGoptuna runs Goptuna's TPE sampler on p, with its successive-halving
// pruner (min resource 1 step, reduction factor η, min early-stopping
// rate 0) when prune is set. Trials run one at a time, each evaluated
// step by step like a hone trial, until the budget is used up or ctx is
// done; with the pruner every step is reported and the pruner decides at
// its rungs (steps 1, η, η², ...). Goptuna v0.9.0's TPE is not
// reproducible: it picks mixture components with math/rand's global
// source, so the seed fixes only part of its randomness.
func runGoptuna(ctx context.Context, method string, p *functions.Problem, seed uint64, budget float64, prune bool) (*Trace, error) {
	rec := newRecorder(p, method, seed, budget)
	opts := []goptuna.StudyOption{
		goptuna.StudyOptionDirection(goptuna.StudyDirectionMinimize),
		goptuna.StudyOptionSampler(gtpe.NewSampler(gtpe.SamplerOptionSeed(int64(seed)))),
		goptuna.StudyOptionLogger(nil),
	}
	if prune {
		pr, err := successivehalving.NewPruner(
			successivehalving.OptionMinResource(1),
			successivehalving.OptionReductionFactor(eta),
			successivehalving.OptionMinEarlyStoppingRate(0))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		opts = append(opts, goptuna.StudyOptionPruner(pr))
	}
	study, err := goptuna.CreateStudy(fmt.Sprintf("%s-%s-%d", p.Name, method, seed), opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	objective := func(trial goptuna.Trial) (float64, error) {
		x := make([]float64, len(p.Dims))
		for i, d := range p.Dims {
			if d.Binary {
				s, err := trial.SuggestCategorical(d.Name, []string{"0", "1"})
				if err != nil {
					return 0, err
				}
				x[i], _ = strconv.ParseFloat(s, 64)
				continue
			}
			v, err := trial.SuggestFloat(d.Name, d.Lo, d.Hi)
			if err != nil {
				return 0, err
			}
			x[i] = v
		}
		if err := p.Check(x); err != nil {
			return 0, err
		}
		n, err := trial.Number()
		if err != nil {
			return 0, err
		}
		run := p.NewRun(x, functions.Key(seed, "goptuna-"+strconv.Itoa(n)))
		var v float64
		for run.At() < p.Steps {
			v = run.Step()
			if !rec.add(run.At(), v, func() []float64 { return x }) {
				return v, errBudgetUsed
			}
			if prune {
				if err := trial.ShouldPrune(run.At(), v); err != nil {
					return v, err // goptuna.ErrTrialPruned ends the trial as pruned
				}
			}
		}
		return v, nil
	}
	start := time.Now()
	trials := 0
	for !rec.done() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		err := study.Optimize(objective, 1)
		trials++
		if err != nil {
			if errors.Is(err, errBudgetUsed) {
				break
			}
			return nil, fmt.Errorf("%s on %s, seed %d: %w", method, p.Name, seed, err)
		}
	}
	tr := rec.tr
	tr.Trials = trials
	tr.Wall = time.Since(start)
	return tr, nil
}

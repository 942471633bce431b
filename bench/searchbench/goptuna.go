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
	"github.com/hone-tune/hone/bench/internal/benchutil"
)

// goptunaStudy drives a Goptuna v0.9.0 study trial by trial (askTell),
// timing every call into Goptuna with meter. It does by hand what
// Study.Optimize does around an objective: create the trial, call the
// relative sampler, suggest each parameter, report intermediate values
// through ShouldPrune, and on the end set the trial's value (a pruned
// trial's last intermediate value, as Optimize does) and state.
type goptunaStudy struct {
	p      *functions.Problem
	study  *goptuna.Study
	meter  *benchutil.CPUMeter
	trials map[int]goptuna.Trial
}

func (g *goptunaStudy) ask() (int, []float64, error) {
	var id int
	var x []float64
	var err error
	g.meter.Time(func() {
		id, err = g.study.Storage.CreateNewTrial(g.study.ID)
		if err != nil {
			return
		}
		t := goptuna.Trial{Study: g.study, ID: id}
		if err = t.CallRelativeSampler(); err != nil {
			return
		}
		x, err = goptunaSuggest(g.p, t)
		g.trials[id] = t
	})
	return id, x, err
}

// goptunaSuggest suggests every parameter of p: SuggestFloat for floats,
// SuggestInt for integers, SuggestCategorical over "0", "1", ... for
// categories.
func goptunaSuggest(p *functions.Problem, t goptuna.Trial) ([]float64, error) {
	x := make([]float64, len(p.Dims))
	for i, d := range p.Dims {
		switch {
		case d.Categorical():
			choices := make([]string, d.Cats)
			for c := range choices {
				choices[c] = strconv.Itoa(c)
			}
			s, err := t.SuggestCategorical(d.Name, choices)
			if err != nil {
				return nil, err
			}
			x[i], _ = strconv.ParseFloat(s, 64)
		case d.Int:
			v, err := t.SuggestInt(d.Name, int(d.Lo), int(d.Hi))
			if err != nil {
				return nil, err
			}
			x[i] = float64(v)
		default:
			v, err := t.SuggestFloat(d.Name, d.Lo, d.Hi)
			if err != nil {
				return nil, err
			}
			x[i] = v
		}
	}
	return x, nil
}

func (g *goptunaStudy) report(id, u int, v float64) (prune bool, err error) {
	g.meter.Time(func() {
		t := g.trials[id]
		err = t.ShouldPrune(u, v)
	})
	if errors.Is(err, goptuna.ErrTrialPruned) {
		return true, nil
	}
	return false, err
}

func (g *goptunaStudy) tell(id int, v float64, pruned bool) (err error) {
	g.meter.Time(func() {
		delete(g.trials, id)
		state := goptuna.TrialStateComplete
		if pruned {
			state = goptuna.TrialStatePruned
		}
		if err = g.study.Storage.SetTrialValue(id, v); err != nil {
			return
		}
		err = g.study.Storage.SetTrialState(id, state)
	})
	return err
}

// runGoptuna runs Goptuna's TPE sampler on p, with its successive-halving
// pruner (min resource 1 step, reduction factor η, min early-stopping
// rate 0) when prune is set, concurrency trials at once on simulate's
// virtual clock, until the budget is used up or ctx is done; with the
// pruner every step is reported and the pruner decides at its rungs
// (steps 1, η, η², ...). Goptuna's TPE ignores running trials (no constant
// liar). Goptuna v0.9.0's TPE is not reproducible: it picks mixture
// components with math/rand's global source, so the seed fixes only part
// of its randomness.
func runGoptuna(ctx context.Context, method string, p *functions.Problem, seed uint64, budget float64, concurrency int, prune bool) (*Trace, error) {
	rec := newRecorder(p, method, seed, budget)
	meter := &benchutil.CPUMeter{}
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
	start := time.Now()
	g := &goptunaStudy{p: p, study: study, meter: meter, trials: map[int]goptuna.Trial{}}
	trials, err := simulate(ctx, p, seed, concurrency, prune, "goptuna-", g, rec)
	if err != nil {
		return nil, fmt.Errorf("%s on %s, seed %d: %w", method, p.Name, seed, err)
	}
	tr := rec.tr
	tr.Trials = trials
	tr.Concurrency = concurrency
	tr.CPU = meter.Total()
	tr.Wall = time.Since(start)
	return tr, nil
}

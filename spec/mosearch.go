package spec

import (
	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/search/nsga2"
)

// readNSGA2 reads NSGA-II's parameters (Optuna's names): population_size,
// mutation_prob (default 1/number of parameters), crossover_prob and
// swapping_prob. It optimises the spec's objectives, one or several,
// under its constraints.
func readNSGA2(p *Params) func(s *Spec) (hone.Searcher, error) {
	def := nsga2.DefaultOptions()
	o := nsga2.Options{
		PopulationSize: p.Int("population_size", def.PopulationSize),
		MutationProb:   def.MutationProb,
		CrossoverProb:  p.Float("crossover_prob", def.CrossoverProb),
		SwappingProb:   p.Float("swapping_prob", def.SwappingProb),
	}
	if p.Has("mutation_prob") {
		o.MutationProb = p.Float("mutation_prob", 0)
		if !(o.MutationProb >= 0 && o.MutationProb <= 1) {
			p.Errorf("mutation_prob", "must be in [0, 1], got %s (leave it out for 1/number of parameters)", formatNum(o.MutationProb))
			return nil
		}
	}
	ok := true
	check := func(bad bool, key, format string, args ...any) {
		if bad {
			p.Errorf(key, format, args...)
			ok = false
		}
	}
	check(o.PopulationSize < 2, "population_size", "must be >= 2, got %d", o.PopulationSize)
	check(!(o.CrossoverProb >= 0 && o.CrossoverProb <= 1), "crossover_prob", "must be in [0, 1], got %s", formatNum(o.CrossoverProb))
	check(!(o.SwappingProb >= 0 && o.SwappingProb <= 1), "swapping_prob", "must be in [0, 1], got %s", formatNum(o.SwappingProb))
	if !ok {
		return nil
	}
	return func(s *Spec) (hone.Searcher, error) {
		if _, err := objective(s, hone.Objective{}); err != nil {
			return nil, err
		}
		o := o
		o.Objectives, o.Constraints = s.ResolvedObjectives(), s.Constraints
		o.NumSamples, o.Seed, o.Points = s.NumSamples, s.Seed, s.PointsToEvaluate
		return nsga2.New(s.SearchSpace, o)
	}
}

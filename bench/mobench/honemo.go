package mobench

import (
	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/search/nsga2"
	"github.com/hone-tune/hone/search/tpe"
	"github.com/hone-tune/hone/space"
)

// NSGA2 is hone's NSGA-II searcher (search/nsga2, without end, seeded with
// the run's seed) with its defaults, Optuna's: population 50, crossover
// probability 0.9, swapping probability 0.5, mutation probability
// 1/number of parameters.
func NSGA2() Method {
	return SearcherMethod("nsga2", func(sp space.Space, objs hone.Objectives, seed uint64) (hone.Searcher, error) {
		o := nsga2.DefaultOptions()
		o.Objectives, o.Seed = objs, seed
		return nsga2.New(sp, o)
	})
}

// MOTPE is hone's TPE searcher with the problem's objectives
// (multi-objective TPE, search/tpe) and the spec's defaults of its
// switches (multivariate, constant liar), without end, seeded with the
// run's seed.
func MOTPE() Method {
	return SearcherMethod("tpe", func(sp space.Space, objs hone.Objectives, seed uint64) (hone.Searcher, error) {
		return tpe.New(sp, tpe.Options{Objectives: objs, NumSamples: -1, Seed: seed, Multivariate: true, ConstantLiar: true})
	})
}

// HoneMethods returns hone's multi-objective methods: random, nsga2 and
// tpe.
func HoneMethods() []Method { return []Method{Random(), NSGA2(), MOTPE()} }

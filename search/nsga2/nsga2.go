// Package nsga2 is the NSGA-II searcher (Deb, Pratap, Agarwal and
// Meyarivan, "A fast and elitist multiobjective genetic algorithm:
// NSGA-II", 2002), with Optuna's NSGAIISampler as reference for its
// parameters and their defaults: a population of PopulationSize (50),
// uniform crossover with probability CrossoverProb (0.9) that takes each
// parameter from the second parent with probability SwappingProb (0.5),
// and mutation that resamples each parameter from its domain with
// probability MutationProb (1/number of parameters).
//
// # Suggestions
//
// The first suggestions are Options.Points (Ray's points_to_evaluate),
// each completed by sampling the parameters it leaves unset; then, in the
// first generation, configurations sampled at random from the space, as
// the random searcher does. From the second generation on every
// suggestion is a child of two parents of the current parent population,
// each chosen by a binary tournament: two members are drawn at random
// (with replacement) and the one that ranks first wins, by the crowded
// comparison of Deb et al.: lower non-dominated rank, then larger
// crowding distance, then the first drawn. (Optuna's tournament compares
// the two by domination only, which ignores crowding; hone follows the
// paper.) The second parent is drawn from the population without the
// first. With probability CrossoverProb the child takes each parameter
// from one parent or the other (uniform crossover), else it copies the
// first parent; then each parameter is resampled from its domain with
// probability MutationProb. A parameter a parent lacks, or holds a value
// its domain cannot produce (a point's), is sampled too. Func domains are
// evaluated after, seeing the child's values.
//
// # Generations
//
// Every suggestion belongs to the generation being filled when it is
// made, and a child is bred from the parents known then. Generation g+1
// begins when PopulationSize trials of generation g have completed with a
// value for every objective (a failed trial, or one that never reported
// every objective, is dropped and does not count): then the next parent
// population is selected, elitist, from the current parents and every
// trial completed since the last selection, generation g's and any older
// trial that completed late. With several trials running at once, a
// generation thus holds more than PopulationSize trials (those suggested
// while its last ones ran), as in Optuna; unlike Optuna, a trial that
// completes after its generation closed is not lost, nor does it change a
// selection already made: it joins the next one.
//
// Selection sorts the candidates into non-dominated fronts
// (pareto.SortConstrained with the trials' constraint violations, which is
// Deb's constrained domination: feasible before infeasible, infeasible by
// their total violation) and takes whole fronts while they fit in
// PopulationSize; the front that does not fit gives its members of
// largest crowding distance (pareto.Crowding), earlier trials first on
// ties. With one objective the fronts are the distinct values and this is
// a plain elitist genetic algorithm.
//
// A trial's objectives are those of the last result passed to
// OnTrialComplete or, if it lacks one of them (or holds NaN), of the
// latest result passed to OnResult that had them all; its constraint
// violation (hone.Constraints.Violation) is that result's.
package nsga2

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/pareto"
	"github.com/hone-tune/hone/search"
	"github.com/hone-tune/hone/space"
)

// stream is the second PCG word; the first is the user's seed.
const stream = 0x686f6e652d6e7367 // "hone-nsg"

// Options configures a Searcher. Start from DefaultOptions, which holds
// Optuna's defaults.
type Options struct {
	// Objectives are the objectives to optimise, one or more. Required.
	Objectives hone.Objectives
	// Constraints are honoured by constrained domination.
	Constraints hone.Constraints
	// NumSamples is the total number of trials to suggest, points
	// included, or -1 to suggest until the experiment stops. 0 is an
	// error.
	NumSamples int
	// Seed seeds every random choice.
	Seed uint64
	// PopulationSize is the number of parents, and of completed trials
	// that close a generation; at least 2.
	PopulationSize int
	// MutationProb is the probability that a child's parameter is
	// resampled from its domain, in [0, 1]; a negative value means
	// 1/number of parameters.
	MutationProb float64
	// CrossoverProb is the probability that a child is bred by uniform
	// crossover rather than copied from its first parent, in [0, 1].
	CrossoverProb float64
	// SwappingProb is the probability that uniform crossover takes a
	// parameter from the second parent, in [0, 1].
	SwappingProb float64
	// Points are configurations to suggest first, in order; each may set
	// only some parameters and the rest are sampled. Every key must exist
	// in the space. They count toward NumSamples. New copies them.
	Points []map[string]any
}

// DefaultOptions returns Optuna's defaults: a population of 50, mutation
// probability 1/number of parameters, crossover probability 0.9 and
// swapping probability 0.5, and NumSamples -1.
func DefaultOptions() Options {
	return Options{NumSamples: -1, PopulationSize: 50, MutationProb: -1, CrossoverProb: 0.9, SwappingProb: 0.5}
}

// Searcher is the NSGA-II searcher described in the package
// documentation. It is deterministic: the same space, options and
// sequence of calls give the same suggestions, and a searcher restored
// with UnmarshalState continues exactly where the saved one was. Like
// every hone.Searcher it is called from one goroutine only.
type Searcher struct {
	space    space.Space
	opts     Options
	mutation float64 // the probability in effect
	dims     []dim
	points   []map[string]any

	pcg *rand.PCG
	rng *rand.Rand
	n   int // suggestions made

	pending map[string]*trial // suggested, not yet complete
	gen     int               // the generation being filled
	filled  int               // its completed trials
	pool    []*member         // completed since the last selection
	parents []*member         // the parent population, with rank and crowding
}

// dim is one parameter the genes hold: a category index for choice and
// grid domains, the value itself for numeric ones.
type dim struct {
	p    space.Param
	cats []any
}

// trial is a suggested trial not yet complete.
type trial struct {
	id   string
	seq  int
	gen  int
	x    []float64 // genes, NaN where the config has no usable value
	seen bool      // losses and viol hold the latest complete result's
	loss []float64
	viol float64
}

// member is a completed trial: a candidate for selection, or a parent.
type member struct {
	id   string
	seq  int
	x    []float64
	loss []float64
	viol float64
	// rank and crowd are its non-dominated rank and crowding distance
	// within the parent population (parents only; derived, not saved).
	rank  int
	crowd float64
}

var (
	_ hone.Searcher       = (*Searcher)(nil)
	_ hone.Stateful       = (*Searcher)(nil)
	_ hone.MultiObjective = (*Searcher)(nil)
	_ hone.PendingLimit   = (*Searcher)(nil)
)

// New returns an NSGA-II searcher over sp. It validates sp and the
// options; an error is a *hone.ParamError naming the first invalid
// field. The points are copied.
func New(sp space.Space, opts Options) (*Searcher, error) {
	if err := sp.Validate(); err != nil {
		return nil, &hone.ParamError{Plugin: "nsga2", Err: err}
	}
	if len(opts.Objectives) == 0 {
		return nil, invalid("metric", "needs at least one objective")
	}
	if err := opts.Objectives.Validate(); err != nil {
		return nil, invalid("objectives", "%w", err)
	}
	if err := opts.Constraints.Validate(); err != nil {
		return nil, invalid("constraints", "%w", err)
	}
	if opts.NumSamples == 0 || opts.NumSamples < -1 {
		return nil, invalid("num_samples", "num_samples = %d: must be -1 (until stopped) or >= 1", opts.NumSamples)
	}
	if opts.PopulationSize < 2 {
		return nil, invalid("population_size", "population_size = %d: must be >= 2", opts.PopulationSize)
	}
	if p := opts.MutationProb; math.IsNaN(p) || p > 1 {
		return nil, invalid("mutation_prob", "mutation_prob = %v: must be in [0, 1]", p)
	}
	if p := opts.CrossoverProb; !(p >= 0 && p <= 1) {
		return nil, invalid("crossover_prob", "crossover_prob = %v: must be in [0, 1]", p)
	}
	if p := opts.SwappingProb; !(p >= 0 && p <= 1) {
		return nil, invalid("swapping_prob", "swapping_prob = %v: must be in [0, 1]", p)
	}
	s := &Searcher{space: sp, opts: opts, pending: map[string]*trial{}}
	s.opts.Objectives = opts.Objectives.WithDefaults()
	s.opts.Constraints = slices.Clone(opts.Constraints)
	s.opts.Points = nil
	for i, p := range opts.Points {
		if err := sp.CheckPoint(p); err != nil {
			return nil, invalid("points_to_evaluate", "points_to_evaluate[%d]: %w", i, err)
		}
		s.points = append(s.points, map[string]any(hone.Config(p).Clone()))
	}
	for _, p := range sp.Params() {
		if p.Kind == space.KindFunc {
			continue
		}
		d := dim{p: p}
		if p.Kind == space.KindChoice || p.Kind == space.KindGrid {
			d.cats = p.Categories
		}
		s.dims = append(s.dims, d)
	}
	s.mutation = opts.MutationProb
	if s.mutation < 0 {
		s.mutation = 1 / float64(max(1, len(s.dims)))
	}
	s.pcg = rand.NewPCG(opts.Seed, stream)
	s.rng = rand.New(s.pcg)
	return s, nil
}

// invalid is the error of New for param: a *hone.ParamError.
func invalid(param, format string, args ...any) error {
	return &hone.ParamError{Plugin: "nsga2", Param: param, Err: fmt.Errorf(format, args...)}
}

// CheckObjectives implements hone.MultiObjective: the experiment's
// objectives and constraints must be those the searcher was built with.
func (s *Searcher) CheckObjectives(objs hone.Objectives, cs hone.Constraints) error {
	return search.CheckObjectives("nsga2", s.opts.Objectives, s.opts.Constraints, objs, cs)
}

// MaxPending implements hone.PendingLimit: the trials of a generation are
// bred from the same parents, whatever the results that arrive meanwhile,
// so it returns hone.PendingAuto.
func (s *Searcher) MaxPending() int { return hone.PendingAuto }

// Total returns the number of trials the searcher will suggest, or -1 if
// it never stops.
func (s *Searcher) Total() int { return s.opts.NumSamples }

// Suggested returns the number of configurations suggested so far.
func (s *Searcher) Suggested() int { return s.n }

// Generation returns the generation being filled (0 is the random one)
// and how many of its trials have completed.
func (s *Searcher) Generation() (gen, completed int) { return s.gen, s.filled }

// Parents returns the ids of the current parent population, in the order
// of their trials' suggestions.
func (s *Searcher) Parents() []string {
	ids := make([]string, len(s.parents))
	for i, m := range s.parents {
		ids[i] = m.id
	}
	return ids
}

// Suggest returns the configuration of trial trialID: the next point, a
// random configuration in the first generation, else a child of the
// current parents (see the package documentation). After NumSamples
// suggestions it returns hone.ErrSearchDone. The returned config is the
// caller's.
func (s *Searcher) Suggest(trialID string) (hone.Config, error) {
	if s.opts.NumSamples >= 0 && s.n >= s.opts.NumSamples {
		return nil, hone.ErrSearchDone
	}
	var cfg map[string]any
	switch {
	case s.n < len(s.points):
		cfg = s.space.Resolve(s.points[s.n], s.rng)
	case len(s.parents) == 0:
		cfg = s.space.Resolve(nil, s.rng)
	default:
		cfg = s.space.Resolve(s.breed(), s.rng)
	}
	s.pending[trialID] = &trial{id: trialID, seq: s.n, gen: s.gen, x: s.encode(cfg)}
	s.n++
	return hone.Config(cfg), nil
}

// breed returns the genes of a child of two parents (tournament,
// crossover, mutation) as a point: the parameters it leaves out are
// sampled by Resolve.
func (s *Searcher) breed() map[string]any {
	p0 := s.tournament(-1)
	p1 := s.tournament(p0)
	a, b := s.parents[p0].x, s.parents[p1].x
	child := slices.Clone(a)
	if s.rng.Float64() < s.opts.CrossoverProb {
		for i := range child {
			if s.rng.Float64() < s.opts.SwappingProb {
				child[i] = b[i]
			}
		}
	}
	for i := range child {
		if s.rng.Float64() < s.mutation {
			child[i] = math.NaN()
		}
	}
	return s.decode(child)
}

// tournament returns the index of the winner of a binary tournament among
// the parents other than the one at skip (-1: none): two drawn at random,
// with replacement, compared by rank, then crowding distance; the first
// drawn wins ties.
func (s *Searcher) tournament(skip int) int {
	n := len(s.parents)
	draw := func() int {
		if skip < 0 {
			return s.rng.IntN(n)
		}
		i := s.rng.IntN(n - 1)
		if i >= skip {
			i++
		}
		return i
	}
	i, j := draw(), draw()
	if crowdedBetter(s.parents[j], s.parents[i]) {
		return j
	}
	return i
}

// crowdedBetter is Deb et al.'s crowded comparison: a ranks lower, or as
// low with a larger crowding distance.
func crowdedBetter(a, b *member) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.crowd > b.crowd
}

// encode returns the genes of cfg: per dim, the category index or the
// numeric value, NaN where cfg lacks it or holds a value the domain
// cannot produce.
func (s *Searcher) encode(cfg map[string]any) []float64 {
	x := make([]float64, len(s.dims))
	for i, d := range s.dims {
		x[i] = math.NaN()
		v, ok := hone.Config(cfg).Lookup(d.p.Path...)
		if !ok {
			continue
		}
		if d.cats != nil {
			for k, c := range d.cats {
				if space.Choice(c).Contains(v) {
					x[i] = float64(k)
					break
				}
			}
			continue
		}
		if _, isBool := v.(bool); isBool || !d.p.Domain.Contains(v) {
			continue
		}
		if f, ok := hone.Number(v); ok {
			x[i] = f
		}
	}
	return x
}

// decode returns the point that sets the genes of x that are not NaN.
func (s *Searcher) decode(x []float64) map[string]any {
	point := map[string]any{}
	for i, d := range s.dims {
		if math.IsNaN(x[i]) {
			continue
		}
		var v any = x[i]
		switch {
		case d.cats != nil:
			v = d.cats[int(x[i])]
		case d.p.Integer:
			v = int(x[i])
		}
		space.SetPath(point, d.p.Path, v)
	}
	return point
}

// OnResult remembers the trial's objectives and constraint violation if
// r has every objective, in case the result OnTrialComplete gets lacks
// them.
func (s *Searcher) OnResult(trialID string, r *hone.Result) {
	t := s.pending[trialID]
	if t == nil || r == nil {
		return
	}
	if loss, all := s.opts.Objectives.Losses(nil, r); all {
		t.seen, t.loss, t.viol = true, loss, s.opts.Constraints.Violation(r)
	}
}

// OnTrialComplete makes the trial a candidate for the next selection,
// unless it failed or has no value for some objective; a trial of the
// generation being filled counts towards closing it (see the package
// documentation).
func (s *Searcher) OnTrialComplete(trialID string, last *hone.Result, failed bool) {
	t := s.pending[trialID]
	if t == nil {
		return
	}
	if !failed && last != nil {
		s.OnResult(trialID, last)
	}
	delete(s.pending, trialID)
	if failed || !t.seen {
		return
	}
	s.pool = append(s.pool, &member{id: t.id, seq: t.seq, x: t.x, loss: t.loss, viol: t.viol})
	if t.gen != s.gen {
		return
	}
	if s.filled++; s.filled >= s.opts.PopulationSize {
		s.parents = s.selectElite(append(slices.Clip(s.parents), s.pool...))
		s.pool = nil
		s.gen++
		s.filled = 0
	}
}

// selectElite returns the next parent population from the candidates:
// whole fronts while they fit in PopulationSize, then the members of the
// next front of largest crowding distance (earlier trials first on ties),
// in suggestion order, with their ranks and crowding distances within
// the population.
func (s *Searcher) selectElite(cand []*member) []*member {
	slices.SortFunc(cand, func(a, b *member) int { return a.seq - b.seq })
	ranks := sortFronts(cand)
	byRank := pareto.Fronts(ranks)
	var out []*member
	for _, f := range byRank {
		if len(out)+len(f) <= s.opts.PopulationSize {
			for _, i := range f {
				out = append(out, cand[i])
			}
			continue
		}
		need := s.opts.PopulationSize - len(out)
		dist := pareto.Crowding(losses(cand), f)
		order := make([]int, len(f))
		for k := range order {
			order[k] = k
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmpDesc(dist[a], dist[b]) })
		for _, k := range order[:need] {
			out = append(out, cand[f[k]])
		}
		break
	}
	slices.SortFunc(out, func(a, b *member) int { return a.seq - b.seq })
	rankPopulation(out)
	return out
}

// cmpDesc orders a before b when a is larger.
func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// rankPopulation sets every member's rank and crowding distance within
// pop.
func rankPopulation(pop []*member) {
	ranks := sortFronts(pop)
	pts := losses(pop)
	for _, f := range pareto.Fronts(ranks) {
		for k, d := range pareto.Crowding(pts, f) {
			pop[f[k]].rank, pop[f[k]].crowd = ranks[f[k]], d
		}
	}
}

// sortFronts returns the members' ranks under constrained domination.
func sortFronts(ms []*member) []int {
	viol := make([]float64, len(ms))
	for i, m := range ms {
		viol[i] = m.viol
	}
	return pareto.SortConstrained(losses(ms), viol)
}

// losses returns the members' loss vectors.
func losses(ms []*member) [][]float64 {
	pts := make([][]float64, len(ms))
	for i, m := range ms {
		pts[i] = m.loss
	}
	return pts
}

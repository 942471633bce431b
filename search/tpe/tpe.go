// Package tpe is a Tree-structured Parzen Estimator searcher (Bergstra et
// al., "Algorithms for Hyper-Parameter Optimization", 2011) with one
// independent estimator per parameter, as in Optuna's default (univariate)
// TPESampler. It proposes configurations by itself; run it under any
// scheduler (FIFO, ASHA, ...) and wrap it with search.Limit to cap the
// number of trials in flight.
//
// # Suggestions
//
// The first suggestions are Options.Points (Ray's points_to_evaluate), each
// completed by sampling the parameters it leaves unset. Then, while fewer
// than Options.NStartupTrials observations have arrived, configurations are
// sampled at random from the space, as the random searcher does. After
// that every suggestion comes from the model:
//
//   - The observations are sorted by loss (the metric for mode "min", minus
//     the metric for "max"; ties keep suggestion order) and split into the
//     best Gamma(n) ("good") and the rest ("bad").
//   - For each parameter separately, a density l(x) is fitted to the good
//     observations' values and g(x) to the bad ones'. Observations whose
//     configuration lacks the parameter, or holds a value it cannot encode,
//     are left out of that parameter's fit.
//   - NEICandidates values are drawn from l, and the one maximising
//     log l(x) − log g(x) is taken. Each parameter is chosen on its own,
//     so the configuration maximises the product of the per-parameter
//     ratios over every combination of the candidates.
//
// Numeric parameters are modelled by a mixture of normal kernels truncated
// to the parameter's range, in log space for log kinds and in the space of
// the normal CDF for normal kinds (there the prior is uniform on [0, 1]).
// Each observation has a kernel, weighted 1 for the 25 most recent
// observations of the group and linearly less for older ones; a prior
// kernel with weight PriorWeight sits in the middle of the range with the
// whole range as its width. A kernel's width is its larger distance to the
// neighbouring kernel centres or range ends (with ConsiderEndpoints false,
// the outermost kernels look inwards only), clipped to [range/min(100,
// n+2), range] for n observations. Integer and quantized parameters are
// sampled as continuous ones over the range widened by q/2 at each end and
// rounded to the nearest allowed value; candidates are then scored by the
// probability each density gives to the values that round to them.
// Categorical parameters (choice and grid domains; grid domains are not
// enumerated) are modelled by a smoothed categorical distribution: each
// observation adds weight to its category, and PriorWeight is spread over
// all categories. Constants are copied and Func domains are evaluated after
// the modelled parameters are fixed, so a conditional Func sees them.
//
// # Observations
//
// A trial becomes an observation when OnTrialComplete reports it without
// failure. Its value is the metric of the last result passed to
// OnTrialComplete or, if that result does not have the metric, of the last
// result that had it among those passed to OnResult. So under ASHA, which
// stops trials early, a trial counts with its last reported value, whatever
// budget it had reached. Failed trials, trials that never reported the
// metric, and trials whose value is NaN are ignored; an infinite value is
// kept (the worst or best possible). Trials the searcher did not suggest
// are ignored.
package tpe

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/space"
)

// stream is the second PCG word; the first is the user's seed.
const stream = 0x686f6e652d747065 // "hone-tpe"

// Options configures a Searcher. Zero values of the optional fields select
// the defaults given in each field's comment.
type Options struct {
	// Metric is the result field to optimise. Required.
	Metric string
	// Mode is hone.Min or hone.Max; "" means hone.Min.
	Mode hone.Mode
	// NumSamples is the total number of trials to suggest, points
	// included, or -1 to suggest until the experiment stops. Required:
	// 0 is an error.
	NumSamples int
	// Seed seeds every random choice.
	Seed uint64
	// NStartupTrials is how many observations must have arrived before the
	// model is used; until then configurations are random. Default 10.
	NStartupTrials int
	// NEICandidates is the number of candidates drawn from l(x) for each
	// parameter. Default 24.
	NEICandidates int
	// Gamma returns the number of good observations out of n; results are
	// clamped to [0, n]. Default: min(⌈0.1·n⌉, 25), as in Optuna.
	Gamma func(n int) int
	// PriorWeight is the weight of the prior kernel of every estimator
	// (an observation weighs at most 1). Default 1.
	PriorWeight float64
	// ConsiderEndpoints lets the range ends bound the widths of the
	// outermost kernels, as in Optuna.
	ConsiderEndpoints bool
	// Points are configurations to suggest first (Ray's
	// points_to_evaluate), in order; each may set only some parameters and
	// the rest are sampled. Values are used as given, even outside their
	// domains. Every key must exist in the space. They count toward
	// NumSamples: if there are more points than NumSamples, the extra ones
	// are not suggested. New copies them.
	Points []map[string]any
}

// Searcher is the TPE searcher described in the package documentation.
// It is deterministic: the same space, options and sequence of calls give
// the same suggestions, and a searcher restored with UnmarshalState
// continues exactly where the saved one was. Like every hone.Searcher it is
// called from one goroutine only.
type Searcher struct {
	space       space.Space
	metric      string
	mode        hone.Mode
	total       int
	startup     int
	nEI         int
	gamma       func(int) int
	priorWeight float64
	endpoints   bool
	points      []map[string]any
	dims        []*dim

	pcg     *rand.PCG
	rng     *rand.Rand
	n       int                 // suggestions made
	obs     []observation       // in completion order
	pending map[string]*pending // suggested trials not yet complete
}

// observation is a completed trial: its coordinates (one per dim, NaN where
// missing) and its loss (lower is better).
type observation struct {
	seq  int // suggestion number, from 0
	loss float64
	x    []float64
}

// pending is a suggested trial that has not completed.
type pending struct {
	seq  int
	x    []float64
	last float64 // the metric of the latest result that had it
	seen bool    // last is set
}

var (
	_ hone.Searcher = (*Searcher)(nil)
	_ hone.Stateful = (*Searcher)(nil)
)

// New returns a TPE searcher over sp. It validates sp and the options; an
// error names the first invalid field. The points are copied.
func New(sp space.Space, opts Options) (*Searcher, error) {
	if err := sp.Validate(); err != nil {
		return nil, fmt.Errorf("tpe: %w", err)
	}
	if opts.Metric == "" {
		return nil, fmt.Errorf("tpe: metric is required")
	}
	mode := opts.Mode
	if mode == "" {
		mode = hone.Min
	}
	if !mode.Valid() {
		return nil, fmt.Errorf("tpe: mode = %q: allowed values are \"min\" and \"max\"", opts.Mode)
	}
	if opts.NumSamples == 0 || opts.NumSamples < -1 {
		return nil, fmt.Errorf("tpe: num_samples = %d: must be -1 (until stopped) or >= 1", opts.NumSamples)
	}
	if opts.NStartupTrials < 0 {
		return nil, fmt.Errorf("tpe: n_startup_trials = %d: must be >= 0 (0 = default 10)", opts.NStartupTrials)
	}
	if opts.NEICandidates < 0 {
		return nil, fmt.Errorf("tpe: n_ei_candidates = %d: must be >= 0 (0 = default 24)", opts.NEICandidates)
	}
	if pw := opts.PriorWeight; pw < 0 || math.IsNaN(pw) || math.IsInf(pw, 0) {
		return nil, fmt.Errorf("tpe: prior_weight = %v: must be a finite number > 0 (0 = default 1)", pw)
	}
	s := &Searcher{
		space:       sp,
		metric:      opts.Metric,
		mode:        mode,
		total:       opts.NumSamples,
		startup:     orDefault(opts.NStartupTrials, 10),
		nEI:         orDefault(opts.NEICandidates, 24),
		gamma:       opts.Gamma,
		priorWeight: opts.PriorWeight,
		endpoints:   opts.ConsiderEndpoints,
		pending:     map[string]*pending{},
	}
	if s.gamma == nil {
		s.gamma = defaultGamma
	}
	if s.priorWeight == 0 {
		s.priorWeight = 1
	}
	for i, p := range opts.Points {
		if err := space.Space(sp).CheckPoint(p); err != nil {
			return nil, fmt.Errorf("tpe: points_to_evaluate[%d]: %w", i, err)
		}
		s.points = append(s.points, map[string]any(hone.Config(p).Clone()))
	}
	for _, p := range sp.Params() {
		if p.Kind != space.KindFunc {
			s.dims = append(s.dims, newDim(p))
		}
	}
	s.pcg = rand.NewPCG(opts.Seed, stream)
	s.rng = rand.New(s.pcg)
	return s, nil
}

// orDefault returns v, or def if v is 0.
func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Total returns the number of trials the searcher will suggest, or -1 if it
// never stops.
func (s *Searcher) Total() int { return s.total }

// Suggested returns the number of configurations suggested so far.
func (s *Searcher) Suggested() int { return s.n }

// Observed returns the number of observations the model has: trials that
// completed without failure with a non-NaN value of the metric.
func (s *Searcher) Observed() int { return len(s.obs) }

// Suggest returns the configuration of trial trialID: the next point, a
// random configuration, or one proposed by the model (see the package
// documentation). After NumSamples suggestions it returns
// hone.ErrSearchDone. The returned config is the caller's.
func (s *Searcher) Suggest(trialID string) (hone.Config, error) {
	if s.total >= 0 && s.n >= s.total {
		return nil, hone.ErrSearchDone
	}
	var cfg map[string]any
	switch {
	case s.n < len(s.points):
		cfg = s.space.Resolve(s.points[s.n], s.rng)
	case len(s.obs) < s.startup:
		cfg = s.space.Resolve(nil, s.rng)
	default:
		cfg = s.space.Resolve(s.propose(), s.rng)
	}
	x := make([]float64, len(s.dims))
	for i, d := range s.dims {
		x[i] = math.NaN()
		if v, ok := hone.Config(cfg).Lookup(d.path...); ok {
			x[i] = d.encode(v)
		}
	}
	s.pending[trialID] = &pending{seq: s.n, x: x, last: math.NaN()}
	s.n++
	return hone.Config(cfg), nil
}

// OnResult remembers the trial's latest value of the metric, in case the
// result OnTrialComplete gets lacks it.
func (s *Searcher) OnResult(trialID string, r *hone.Result) {
	p := s.pending[trialID]
	if p == nil {
		return
	}
	if v, ok := r.Value(s.metric); ok {
		p.last, p.seen = v, true
	}
}

// OnTrialComplete turns the trial into an observation, unless it failed or
// has no usable value (see the package documentation).
func (s *Searcher) OnTrialComplete(trialID string, last *hone.Result, failed bool) {
	p := s.pending[trialID]
	if p == nil {
		return
	}
	delete(s.pending, trialID)
	if failed {
		return
	}
	v, ok := last.Value(s.metric)
	if !ok {
		v, ok = p.last, p.seen
	}
	if !ok || math.IsNaN(v) {
		return
	}
	s.obs = append(s.obs, observation{seq: p.seq, loss: -s.mode.Score(v), x: p.x})
}

// propose returns a point holding a model-chosen value for every dim.
func (s *Searcher) propose() map[string]any {
	n := len(s.obs)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool {
		a, b := s.obs[order[i]], s.obs[order[j]]
		if a.loss != b.loss {
			return a.loss < b.loss
		}
		return a.seq < b.seq
	})
	nGood := min(max(s.gamma(n), 0), n)
	good, bad := order[:nGood], order[nGood:]
	bySeq := func(idx []int) {
		sort.Slice(idx, func(i, j int) bool { return s.obs[idx[i]].seq < s.obs[idx[j]].seq })
	}
	bySeq(good)
	bySeq(bad)

	point := map[string]any{}
	for i, d := range s.dims {
		setPath(point, d.path, s.choose(d, s.column(good, i), s.column(bad, i)))
	}
	return point
}

// column returns dim i's coordinates of the observations idx, skipping
// missing ones.
func (s *Searcher) column(idx []int, i int) []float64 {
	var xs []float64
	for _, j := range idx {
		if x := s.obs[j].x[i]; !math.IsNaN(x) {
			xs = append(xs, x)
		}
	}
	return xs
}

// choose draws NEICandidates values of d from the good density and returns
// the one with the best log ratio of good to bad density (the first one on
// ties), as a configuration value.
func (s *Searcher) choose(d *dim, good, bad []float64) any {
	best, bestScore := 0.0, math.Inf(-1)
	better := func(i int, x, score float64) {
		if math.IsNaN(score) {
			score = math.Inf(-1)
		}
		if i == 0 || score > bestScore {
			best, bestScore = x, score
		}
	}
	if d.categorical() {
		l := newCategorical(good, recencyWeights(len(good)), len(d.cats), s.priorWeight)
		g := newCategorical(bad, recencyWeights(len(bad)), len(d.cats), s.priorWeight)
		for i := range s.nEI {
			c := l.sample(s.rng)
			better(i, float64(c), l.logp[c]-g.logp[c])
		}
		return d.cats[int(best)]
	}
	l := newParzen(good, recencyWeights(len(good)), d.lo, d.hi, s.priorWeight, s.endpoints)
	g := newParzen(bad, recencyWeights(len(bad)), d.lo, d.hi, s.priorWeight, s.endpoints)
	for i := range s.nEI {
		z := l.sample(s.rng)
		x := d.snap(d.inv(z))
		var score float64
		if d.quantized() {
			if z1, z2 := d.cell(x); z2 > z1 {
				score = l.logMass(z1, z2) - g.logMass(z1, z2)
			} else {
				zc := clamp(d.fwd(x), d.lo, d.hi)
				score = l.logPDF(zc) - g.logPDF(zc)
			}
		} else {
			score = l.logPDF(z) - g.logPDF(z)
		}
		better(i, x, score)
	}
	return d.output(best)
}

// setPath stores v at path in m, creating intermediate maps.
func setPath(m map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

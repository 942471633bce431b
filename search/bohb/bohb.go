// Package bohb is the searcher half of BOHB (Falkner et al. 2018): the
// kernel-density model of HpBandSter's BOHB config generator, with Ray
// Tune's TuneBOHB interface. It is meant to run with the HyperBandForBOHB
// scheduler (docs/SEMANTICS.md §4), which pauses trials at milestones and marks the
// milestone result with hyperband_info.budget. With the ASHA scheduler
// marking its rungs the same way (asha.Config.BudgetInfo), it is
// asynchronous BOHB, as Syne Tune's BOHB: ASHA promotes trials as soon as
// a rung allows, and the model learns from every rung result as it
// arrives; AsyncOptions gives its defaults.
//
// # Observations
//
// A result whose metrics hold "hyperband_info": {"budget": b} (a map with a
// numeric budget) is one observation (the trial's configuration, b, loss),
// where loss is the metric for mode min and −metric for mode max; a
// non-finite loss counts as +Inf. Each trial is observed at most once per
// budget, whether the result comes through OnResult or OnTrialComplete.
// Results without hyperband_info, or without the metric, are ignored.
//
// # Model
//
// Configurations are modelled in the unit-cube encoding of the space
// (space.Space.ToUnit): continuous, integer and quantized parameters keep
// their coordinate in [0, 1] (FromUnit rounds them back), and choice and
// grid parameters are replaced by their category index (HpBandSter's 'c'
// and 'u' variable types). Observations are kept per budget. When a budget
// has at least MinPointsInModel observations, they are ranked by loss; the
// best n_good = max(MinPointsInModel, TopNPercent·N/100) form the good set
// and the next n_bad = max(MinPointsInModel, (100−TopNPercent)·N/100) the
// bad set (integer division; the bad set is cut short if there are fewer
// observations). If both sets have more rows than the space has
// dimensions, two product-kernel densities are fit, l(x) on the good set
// and g(x) on the bad set, with per-dimension bandwidth 1.06·σ·n^(−1/(4+d))
// clipped to at least MinBandwidth (statsmodels' "normal reference" rule
// as HpBandSter uses it). Continuous kernels are plain Gaussians, as in
// statsmodels (not truncated to [0, 1]); categorical kernels are
// Aitchison-Aitken kernels over the parameter's c categories, with the
// bandwidth λ capped at (c−1)/c, where the kernel is uniform (statsmodels
// counts the categories present in the data and does not cap λ, which can
// make its density infinite or negative). The model is refit with every new
// observation of its budget. Once a budget has a model, observations of
// smaller budgets are no longer kept (HpBandSter ignores new ones too), so
// the model in use is always the one of the largest budget whose data fits
// one.
//
// # Suggestions
//
// Points (Ray's points_to_evaluate) come first, missing keys sampled. Then,
// with probability RandomFraction, or whenever there is no model, a
// configuration is sampled from the space. Otherwise NumCandidates
// candidates are drawn around random members of the good set: a continuous
// coordinate from a normal distribution truncated to [0, 1], centred on the
// member's value, with standard deviation BandwidthFactor times the good
// density's bandwidth; a categorical coordinate keeps the member's category
// with probability 1 − bandwidth and is otherwise drawn uniformly. The
// candidate minimising max(1e-32, g(x)) / max(l(x), 1e-32) is decoded with
// space.Space.FromUnit (Func domains evaluated on the result).
//
// # Misleading budgets
//
// With FidelityCheck, the searcher also keeps every trial's loss at each
// budget and applies the rank-correlation rule of package fidelity
// (docs/SEMANTICS.md §5): when a budget ranks the trials seen at both it
// and the next budget otherwise than the next one does (Spearman
// correlation below 0.2 over at least 6 trials), that budget and every
// lower one are distrusted. The model in use is then the one of the
// largest budget at or above the floor whose data fits one (2·(dim+1)
// observations at least, as without the check), and while no such budget
// fits, suggestions are sampled at random rather than drawn from a model
// of misleading budgets. The searcher is a fidelity.Advisor: given it,
// HyperBand opens no new bracket below the floor.
// # Pending trials
//
// With ConstantLiar (hone's rule for trials running at once, after
// Optuna's constant_liar), the trials this searcher suggested that are
// live, not paused, and not yet observed at the model's budget or above
// are pending, and a suggestion from the model takes them into account
// twice. Each counts as one more bad observation when candidates are
// scored, g(x) becoming (n_bad·g(x) + Σ_p K(x, p)) / (n_bad + n_p), where
// the kernel K of a pending configuration p has the good density's
// bandwidths. And a candidate that decodes to the configuration of a
// pending trial is passed over for the next best; if every candidate
// does, the suggestion is a sample of the space (drawn again, up to 10
// times, while it repeats a pending trial too). So trials running at once
// are never the same configuration, as long as the space has others.
// Without it (HpBandSter's behaviour), every suggestion from one model
// draws from the same distribution.
//
// The searcher draws every random number from one PCG seeded with Seed, so
// it is deterministic given its options and the sequence of calls, and
// MarshalState saves that generator exactly along with every observation.
package bohb

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/search/fidelity"
	"github.com/hone-tune/hone/space"
)

// stream is the second PCG word; the first is the user's seed.
const stream = 0x686f6e652d62686d // "hone-bhm"

// InfoKey is the metrics key under which the HyperBandForBOHB scheduler puts
// a map holding the milestone reached; BudgetKey is the milestone's key in
// that map.
const (
	InfoKey   = "hyperband_info"
	BudgetKey = "budget"
)

// Options configures a Searcher. Zero numeric fields (other than NumSamples,
// MaxConcurrent and Seed) take the defaults of DefaultOptions.
type Options struct {
	// Metric is the result field to optimise and Mode whether it is
	// minimised or maximised; both are required.
	Metric string
	Mode   hone.Mode
	// NumSamples is the number of configurations to suggest, Points
	// included; -1 means no end. 0 suggests nothing.
	NumSamples int
	// Seed seeds the searcher's random-number generator.
	Seed uint64
	// MaxConcurrent caps the number of live trials that are not paused:
	// at the cap Suggest returns hone.ErrNotNow. 0 means no cap.
	MaxConcurrent int
	// Points are suggested first, in order (Ray's points_to_evaluate);
	// keys a point leaves out are sampled. They count toward NumSamples.
	// Every key a point sets must exist in the space. A point value the
	// space cannot encode (one that is not among a choice's values, say)
	// is suggested as given, but its trial is not learnt from.
	Points []map[string]any
	// MinPointsInModel is the number of observations a budget needs before
	// a model is fit; default (and minimum, as in HpBandSter) dim+1, where
	// dim is the number of non-Func domains of the space.
	MinPointsInModel int
	// TopNPercent is the percentage of observations in the good set, in
	// (0, 100); default 15.
	TopNPercent int
	// NumCandidates is the number of candidates drawn from the model for
	// one suggestion (HpBandSter's num_samples); default 64.
	NumCandidates int
	// RandomFraction is the probability that a suggestion is sampled from
	// the space even though a model exists, in [0, 1]; default 1/3. Set it
	// negative for 0.
	RandomFraction float64
	// BandwidthFactor widens the good density's bandwidth when drawing
	// continuous coordinates of candidates; default 3.
	BandwidthFactor float64
	// MinBandwidth is the smallest kernel bandwidth, > 0; default 1e-3.
	MinBandwidth float64
	// FidelityCheck applies the rank-correlation rule of package fidelity
	// (see "Misleading budgets" in the package documentation).
	FidelityCheck bool
	// FidelityNeighbours applies the rule's earlier form, each budget
	// judged against the next one only (fidelity.Rule.Neighbours), for
	// experiments started with it.
	FidelityNeighbours bool
	// ConstantLiar makes the pending trials (live, not paused, and not yet
	// observed at the model's budget or above) count as bad observations
	// at the model's budget when candidates are scored, with the good
	// density's bandwidths, so that trials running at once are not drawn
	// from the same spot. AsyncOptions sets it.
	ConstantLiar bool
}

// DefaultOptions returns HpBandSter's defaults (Metric, Mode and
// NumSamples are left for the caller): top 15 percent, 64 candidates, a
// random fraction of 1/3, bandwidth factor 3, minimum bandwidth 1e-3, and
// MinPointsInModel 0, meaning dim+1.
func DefaultOptions() Options {
	return Options{TopNPercent: 15, NumCandidates: 64, RandomFraction: 1.0 / 3, BandwidthFactor: 3, MinBandwidth: 1e-3}
}

// AsyncOptions returns the defaults for asynchronous BOHB, the searcher
// fed by ASHA's rungs: DefaultOptions with the constant liar and a
// minimum bandwidth of 0.02. Under ASHA the model's own suggestions pass
// the rungs and fill the good set, and with HpBandSter's 1e-3 its
// kernels shrink onto one spot that later suggestions never leave.
func AsyncOptions() Options {
	o := DefaultOptions()
	o.ConstantLiar = true
	o.MinBandwidth = 0.02
	return o
}

// objective is the objective Metric and Mode name.
func (o Options) objective() hone.Objective { return hone.Objective{Metric: o.Metric, Mode: o.Mode} }

// withDefaults fills zero fields and validates the rest.
func (o Options) withDefaults(dim int) (Options, error) {
	def := DefaultOptions()
	if o.TopNPercent == 0 {
		o.TopNPercent = def.TopNPercent
	}
	if o.NumCandidates == 0 {
		o.NumCandidates = def.NumCandidates
	}
	switch {
	case o.RandomFraction == 0:
		o.RandomFraction = def.RandomFraction
	case o.RandomFraction < 0:
		o.RandomFraction = 0
	}
	if o.BandwidthFactor == 0 {
		o.BandwidthFactor = def.BandwidthFactor
	}
	if o.MinBandwidth == 0 {
		o.MinBandwidth = def.MinBandwidth
	}
	switch {
	case o.Metric == "":
		return o, invalid("metric", "metric is required")
	case !o.Mode.Valid():
		return o, invalid("mode", "%w", o.Mode.Validate())
	case o.NumSamples < -1:
		return o, invalid("num_samples", "num_samples = %d: must be -1 (until stopped) or >= 0", o.NumSamples)
	case o.MaxConcurrent < 0:
		return o, invalid("max_concurrent", "max_concurrent = %d: must be >= 0 (0: no limit)", o.MaxConcurrent)
	case o.MinPointsInModel < 0:
		return o, invalid("min_points_in_model", "min_points_in_model = %d: must be >= 0 (0: dim+1)", o.MinPointsInModel)
	case o.TopNPercent < 1 || o.TopNPercent > 99:
		return o, invalid("top_n_percent", "top_n_percent = %d: must be in [1, 99]", o.TopNPercent)
	case o.NumCandidates < 1:
		return o, invalid("num_samples", "num_samples (candidates) = %d: must be >= 1", o.NumCandidates)
	case !(o.RandomFraction <= 1):
		return o, invalid("random_fraction", "random_fraction = %v: must be in [0, 1]", o.RandomFraction)
	case !(o.BandwidthFactor > 0) || math.IsInf(o.BandwidthFactor, 0):
		return o, invalid("bandwidth_factor", "bandwidth_factor = %v: must be a finite number > 0", o.BandwidthFactor)
	case !(o.MinBandwidth > 0) || math.IsInf(o.MinBandwidth, 0):
		return o, invalid("min_bandwidth", "min_bandwidth = %v: must be a finite number > 0", o.MinBandwidth)
	}
	o.MinPointsInModel = max(o.MinPointsInModel, dim+1)
	return o, nil
}

// Pauser is implemented by searchers that want to know when the scheduler
// pauses and resumes their trials (Ray's on_pause / on_unpause). The
// HyperBandForBOHB scheduler type-asserts its searcher for it and calls it
// on the controller's goroutine.
type Pauser interface {
	// OnPause is told that a trial was paused.
	OnPause(trialID string)
	// OnUnpause is told that a paused trial runs again.
	OnUnpause(trialID string)
}

// Searcher is the BOHB searcher described in the package documentation. It
// implements hone.Searcher, hone.Stateful and Pauser, and, like every
// searcher, is called from one goroutine only.
type Searcher struct {
	space  space.Space
	opts   Options // with defaults filled in
	points []map[string]any
	dim    int
	cats   []int // per dimension: number of categories, 0 if continuous

	pcg    *rand.PCG
	rng    *rand.Rand
	n      int               // suggestions made
	trials map[string]*trial // live trials this searcher suggested
	paused int               // how many of them are paused
	data   map[float64]*observations
	model  *model           // of the largest budget with one; nil if none
	mon    fidelity.Monitor // with FidelityCheck: every trial's loss per budget

	lastFromModel bool // the last suggestion came from the model
}

var (
	_ hone.Searcher    = (*Searcher)(nil)
	_ hone.Stateful    = (*Searcher)(nil)
	_ fidelity.Advisor = (*Searcher)(nil)
)

// trial is what the searcher remembers of a live trial.
type trial struct {
	seq    int       // its suggestion's number, 0 for the first
	x      []float64 // model encoding of its configuration; nil if it has none
	paused bool
	fed    []float64 // budgets already observed
}

// observations are one budget's data, in the order observed.
type observations struct {
	rows   [][]float64
	losses []float64
}

// New returns a BOHB searcher over sp. It validates sp and opts (filling
// defaults), and checks that every key a point sets exists in sp. The
// points are copied. Grid domains are treated like choices.
func New(sp space.Space, opts Options) (*Searcher, error) {
	if err := sp.Validate(); err != nil {
		return nil, &hone.ParamError{Plugin: "bohb", Err: err}
	}
	var cats []int
	for _, p := range sp.Params() {
		if p.Dim < 0 {
			continue
		}
		c := 0
		if p.Kind == space.KindChoice || p.Kind == space.KindGrid {
			c = len(p.Categories)
		}
		cats = append(cats, c)
	}
	opts, err := opts.withDefaults(len(cats))
	if err != nil {
		return nil, err
	}
	s := &Searcher{
		space:  sp,
		dim:    len(cats),
		cats:   cats,
		trials: map[string]*trial{},
		data:   map[float64]*observations{},
	}
	for i, p := range opts.Points {
		if err := space.Space(sp).CheckPoint(p); err != nil {
			return nil, invalid("points_to_evaluate", "points_to_evaluate[%d]: %w", i, err)
		}
		s.points = append(s.points, map[string]any(hone.Config(p).Clone()))
	}
	opts.Points = nil
	s.opts = opts
	s.pcg = rand.NewPCG(opts.Seed, stream)
	s.rng = rand.New(s.pcg)
	return s, nil
}

// Suggest returns the next configuration (see the package documentation).
// It returns hone.ErrSearchDone once NumSamples configurations have been
// suggested, and hone.ErrNotNow while MaxConcurrent suggested trials are
// live and not paused. The returned config is the caller's.
func (s *Searcher) Suggest(trialID string) (hone.Config, error) {
	if s.opts.NumSamples >= 0 && s.n >= s.opts.NumSamples {
		return nil, hone.ErrSearchDone
	}
	if s.opts.MaxConcurrent > 0 && s.Live() >= s.opts.MaxConcurrent {
		return nil, hone.ErrNotNow
	}
	var cfg map[string]any
	fromModel := false
	switch {
	case s.n < len(s.points):
		cfg = s.space.Resolve(s.points[s.n], s.rng)
	case s.model == nil || s.rng.Float64() < s.opts.RandomFraction:
		cfg = s.space.Sample(s.rng)
	default:
		var err error
		cfg, fromModel, err = s.propose()
		if err != nil {
			return nil, err
		}
	}
	if old := s.trials[trialID]; old != nil && old.paused {
		s.paused--
	}
	s.trials[trialID] = &trial{seq: s.n, x: s.encode(cfg)}
	s.n++
	s.lastFromModel = fromModel
	return hone.Config(cfg), nil
}

// propose draws the candidates from the model and decodes the best one. If
// no candidate has a finite score (possible only if the densities
// overflow), it samples from the space instead, as HpBandSter does when its
// optimisation fails; fromModel says which happened. With ConstantLiar,
// pending trials join the bad density, a candidate that decodes to a
// pending trial's configuration is passed over for the next best, and if
// all do, the space is sampled (up to 10 times, for one that does not).
func (s *Searcher) propose() (cfg map[string]any, fromModel bool, err error) {
	m := s.model
	var lies *kde
	var pending [][]float64
	if s.opts.ConstantLiar {
		if pending = s.pending(m.budget); len(pending) > 0 {
			lies = &kde{rows: pending, bw: m.good.bw}
		}
	}
	nb, nl := float64(len(m.bad.rows)), float64(len(pending))
	type scored struct {
		x   []float64
		val float64
	}
	var cands []scored
	x := make([]float64, s.dim)
	var best []float64
	bestVal := math.Inf(1)
	for range s.opts.NumCandidates {
		datum := m.good.rows[s.rng.IntN(len(m.good.rows))]
		for j := range x {
			bw := m.good.bw[j]
			if c := s.cats[j]; c == 0 {
				x[j] = truncNormal(s.rng, datum[j], s.opts.BandwidthFactor*bw)
			} else if s.rng.Float64() < 1-bw {
				x[j] = datum[j]
			} else {
				x[j] = float64(s.rng.IntN(c))
			}
		}
		g := m.bad.pdf(x, s.cats)
		if lies != nil {
			g = (nb*g + nl*lies.pdf(x, s.cats)) / (nb + nl)
		}
		val := max(1e-32, g) / max(m.good.pdf(x, s.cats), 1e-32)
		if lies != nil && val < math.Inf(1) {
			cands = append(cands, scored{slices.Clone(x), val})
		}
		if val < bestVal {
			bestVal = val
			best = append(best[:0], x...)
		}
	}
	if best == nil {
		return s.space.Sample(s.rng), false, nil
	}
	if lies != nil {
		// Best first; ties in the order drawn, as the plain argmin.
		slices.SortStableFunc(cands, func(a, b scored) int { return cmp.Compare(a.val, b.val) })
		repeats := func(cfg map[string]any) bool {
			e := s.encode(cfg)
			return e != nil && slices.ContainsFunc(pending, func(p []float64) bool { return slices.Equal(p, e) })
		}
		for _, c := range cands {
			cfg, err := s.space.FromUnit(s.decode(c.x), s.rng)
			if err != nil {
				return nil, false, fmt.Errorf("bohb: decode candidate: %w", err)
			}
			if !repeats(cfg) {
				return cfg, true, nil
			}
		}
		// Every candidate repeats a pending trial (a small discrete
		// space, or a model sure of itself): sample the space instead,
		// up to 10 times for a configuration that does not.
		cfg := s.space.Sample(s.rng)
		for i := 1; i < 10 && repeats(cfg); i++ {
			cfg = s.space.Sample(s.rng)
		}
		return cfg, false, nil
	}
	cfg, err = s.space.FromUnit(s.decode(best), s.rng)
	if err != nil {
		return nil, false, fmt.Errorf("bohb: decode candidate: %w", err)
	}
	return cfg, true, nil
}

// pending returns the encodings of the live trials that are not paused and
// have no observation at budget or above, in the order they were
// suggested: the constant liar's bad observations.
func (s *Searcher) pending(budget float64) [][]float64 {
	type entry struct {
		id string
		t  *trial
	}
	var es []entry
	for id, t := range s.trials {
		if t.x == nil || t.paused || slices.ContainsFunc(t.fed, func(b float64) bool { return b >= budget }) {
			continue
		}
		es = append(es, entry{id, t})
	}
	// By suggestion, then id (a state saved before suggestions were
	// numbered has them all 0).
	slices.SortFunc(es, func(a, b entry) int {
		if c := cmp.Compare(a.t.seq, b.t.seq); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	rows := make([][]float64, len(es))
	for i, e := range es {
		rows[i] = e.t.x
	}
	return rows
}

// encode returns cfg's model encoding, or nil if the space cannot encode
// it (a point with a value that is not among a choice's values, say).
func (s *Searcher) encode(cfg map[string]any) []float64 {
	u, err := s.space.ToUnit(cfg)
	if err != nil || len(u) != s.dim {
		return nil
	}
	for j, c := range s.cats {
		if c > 0 {
			u[j] = min(math.Floor(u[j]*float64(c)), float64(c-1))
		}
	}
	return u
}

// decode maps a model encoding to the unit cube: a category index to the
// middle of its cell.
func (s *Searcher) decode(x []float64) []float64 {
	u := slices.Clone(x)
	for j, c := range s.cats {
		if c > 0 {
			u[j] = (x[j] + 0.5) / float64(c)
		}
	}
	return u
}

// OnResult observes r if it carries hyperband_info.budget and the trial
// has not been observed at that budget yet. Results of trials this
// searcher did not suggest, or that have completed, are ignored.
func (s *Searcher) OnResult(trialID string, r *hone.Result) {
	if t := s.trials[trialID]; t != nil {
		s.feed(trialID, t, r)
	}
}

// OnTrialComplete observes last like OnResult (once per budget: usually
// OnResult has seen it already), whether or not the trial failed, and
// forgets the trial, which no longer counts toward MaxConcurrent.
func (s *Searcher) OnTrialComplete(trialID string, last *hone.Result, failed bool) {
	t := s.trials[trialID]
	if t == nil {
		return
	}
	s.feed(trialID, t, last)
	if t.paused {
		s.paused--
	}
	delete(s.trials, trialID)
}

// OnPause marks a live trial paused: it no longer counts toward
// MaxConcurrent. Unknown trials are ignored.
func (s *Searcher) OnPause(trialID string) {
	if t := s.trials[trialID]; t != nil && !t.paused {
		t.paused = true
		s.paused++
	}
}

// OnUnpause marks a paused trial live again. Unknown trials are ignored.
func (s *Searcher) OnUnpause(trialID string) {
	if t := s.trials[trialID]; t != nil && t.paused {
		t.paused = false
		s.paused--
	}
}

// budgetOf returns the budget r carries in hyperband_info, if any.
func budgetOf(r *hone.Result) (float64, bool) {
	if r == nil {
		return 0, false
	}
	info, ok := mapOf(r.Metrics[InfoKey])
	if !ok {
		return 0, false
	}
	b, ok := hone.Number(info[BudgetKey])
	if !ok || math.IsNaN(b) || math.IsInf(b, 0) {
		return 0, false
	}
	return b, true
}

// feed adds r as an observation of trial id, if it carries a budget the
// trial has not been observed at and the metric.
func (s *Searcher) feed(id string, t *trial, r *hone.Result) {
	b, ok := budgetOf(r)
	if !ok || slices.Contains(t.fed, b) {
		return
	}
	obj := s.opts.objective()
	v, ok := obj.Value(r)
	if !ok {
		return
	}
	t.fed = append(t.fed, b)
	loss := obj.Loss(v)
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		loss = math.Inf(1)
	}
	if s.opts.FidelityCheck {
		s.mon.Observe(id, b, loss)
	}
	if t.x == nil {
		if s.opts.FidelityCheck {
			s.selectModel()
		}
		return
	}
	s.observe(b, t.x, loss)
}

// observe records one observation and refits the budget's model.
// Observations of budgets smaller than the model's are dropped. With
// FidelityCheck the model is chosen again (selectModel).
func (s *Searcher) observe(budget float64, x []float64, loss float64) {
	if s.model != nil && budget < s.model.budget {
		if s.opts.FidelityCheck {
			s.selectModel() // the floor may have moved
		}
		return
	}
	o := s.data[budget]
	if o == nil {
		o = &observations{}
		s.data[budget] = o
	}
	o.rows = append(o.rows, x)
	o.losses = append(o.losses, loss)
	if s.opts.FidelityCheck {
		s.selectModel()
		return
	}
	if len(o.rows) < s.opts.MinPointsInModel {
		return
	}
	if m := s.fit(budget); m != nil {
		s.setModel(m)
	}
}

// rule is the fidelity rule the searcher applies.
func (s *Searcher) rule() fidelity.Rule {
	return fidelity.Rule{Neighbours: s.opts.FidelityNeighbours}
}

// Floor implements fidelity.Advisor: with FidelityCheck, the lowest budget
// whose ranking the searcher trusts; otherwise 0, every budget trusted.
func (s *Searcher) Floor() float64 {
	if !s.opts.FidelityCheck {
		return 0
	}
	return s.mon.Floor(s.rule())
}

// Links returns the fidelity rule's judgement of each budget but the
// highest (fidelity.Monitor.Links; nil without FidelityCheck), for reports
// and tests.
func (s *Searcher) Links() []fidelity.Link {
	if !s.opts.FidelityCheck {
		return nil
	}
	return slices.Clone(s.mon.Links(s.rule()))
}

// selectModel makes the model in use the one of the largest budget at or
// above the floor whose data fits one, or none (FidelityCheck).
func (s *Searcher) selectModel() {
	m := bestModel(s.data, s.mon.Floor(s.rule()), s.opts, s.dim)
	if m == nil {
		s.model = nil
		return
	}
	s.setModel(m)
}

// bestModel fits the model of the largest budget at or above floor with
// at least MinPointsInModel observations whose data fits one; nil if none.
func bestModel(data map[float64]*observations, floor float64, o Options, dim int) *model {
	budgets := make([]float64, 0, len(data))
	for b := range data {
		if b >= floor {
			budgets = append(budgets, b)
		}
	}
	slices.Sort(budgets)
	for i := len(budgets) - 1; i >= 0; i-- {
		b := budgets[i]
		if d := data[b]; len(d.rows) >= o.MinPointsInModel {
			if m := fit(b, d.rows, d.losses, dim, o.MinPointsInModel, o.TopNPercent, o.MinBandwidth); m != nil {
				return m
			}
		}
	}
	return nil
}

func (s *Searcher) fit(budget float64) *model {
	o := s.data[budget]
	return fit(budget, o.rows, o.losses, s.dim, s.opts.MinPointsInModel, s.opts.TopNPercent, s.opts.MinBandwidth)
}

// setModel makes m the model in use and drops the data of smaller budgets.
func (s *Searcher) setModel(m *model) {
	s.model = m
	for b := range s.data {
		if b < m.budget {
			delete(s.data, b)
		}
	}
}

// Live returns the number of trials this searcher suggested that have not
// completed and are not paused: the count MaxConcurrent caps.
func (s *Searcher) Live() int { return len(s.trials) - s.paused }

// Options returns the searcher's options, defaults filled in (Points
// left out).
func (s *Searcher) Options() Options { return s.opts }

// Suggested returns the number of configurations suggested so far.
func (s *Searcher) Suggested() int { return s.n }

// ModelBudget returns the budget of the model in use, and false if there
// is none yet.
func (s *Searcher) ModelBudget() (float64, bool) {
	if s.model == nil {
		return 0, false
	}
	return s.model.budget, true
}

// Observations returns the number of observations kept for budget.
func (s *Searcher) Observations(budget float64) int {
	if o := s.data[budget]; o != nil {
		return len(o.rows)
	}
	return 0
}

func mapOf(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return x, true
	case hone.Config:
		return x, true
	case space.Space:
		return x, true
	}
	return nil, false
}

// invalid is the error of New for param: a *hone.ParamError.
func invalid(param, format string, args ...any) error {
	return &hone.ParamError{Plugin: "bohb", Param: param, Err: fmt.Errorf(format, args...)}
}

// Package tpe is a Tree-structured Parzen Estimator searcher (Bergstra et
// al., "Algorithms for Hyper-Parameter Optimization", 2011), with Optuna's
// TPESampler as reference: one independent estimator per parameter
// (Optuna's default), or one joint estimator over all parameters
// (Options.Multivariate, Optuna's multivariate=True); pending trials in the
// model as bad observations (Options.ConstantLiar, Optuna's
// constant_liar=True); and, under a scheduler with rungs (ASHA, HyperBand),
// observations taken at the rungs and ranked by the rung reached, as
// Optuna ranks pruned trials, so that TPE with ASHA is a model-based
// multi-fidelity method (Options.Rungs), with the rank-correlation check of
// package fidelity (Options.FidelityCheck). Run it under any scheduler and
// wrap it with search.Limit to cap the number of trials in flight.
//
// # Suggestions
//
// The first suggestions are Options.Points (Ray's points_to_evaluate), each
// completed by sampling the parameters it leaves unset. Then, until the
// model has enough observations (below), configurations are sampled at
// random from the space, as the random searcher does. After that every
// suggestion comes from the model:
//
//   - The observations are ranked by loss (the metric for mode "min",
//     minus the metric for "max"; ties keep suggestion order; with rungs,
//     see below) and split into the best Gamma(n) ("good") and the rest
//     ("bad"). With ConstantLiar, every pending trial (suggested, not yet
//     complete, and, with rungs, not yet observed) joins the bad ones as if
//     it had the worst loss, so that trials suggested while others run do
//     not repeat them. hone: a liar's kernel in a numeric parameter has the
//     smallest width (below), so it keeps suggestions off its own point
//     rather than off its whole neighbourhood, which Optuna's liars do and
//     which cost final regret on bench/searchbench. Only the newest 200 bad ones
//     are kept (the recency weights below already favour them), so that a
//     suggestion's cost does not grow with the number of trials.
//   - A density l(x) is fitted to the good observations and g(x) to the
//     bad ones: for each parameter separately (univariate), or jointly
//     (Multivariate). Observations whose configuration lacks a parameter,
//     or holds a value it cannot encode, are left out of that parameter's
//     fit (univariate), or of the fit of that parameter's group
//     (multivariate, below).
//   - NEICandidates candidates are drawn from l, and the one maximising
//     log l(x) − log g(x) is taken. Univariate, each parameter is chosen on
//     its own, so the configuration maximises the product of the
//     per-parameter ratios over every combination of the candidates;
//     multivariate, each candidate is a whole configuration.
//
// Numeric parameters are modelled by mixtures of normal kernels truncated
// to the parameter's range, in log space for log kinds and in the space of
// the normal CDF for normal kinds (there the prior is uniform on [0, 1]).
// Each observation has a kernel, weighted 1 for the 25 most recent
// observations of the set and linearly less for older ones; a prior
// kernel with weight PriorWeight sits in the middle of the range with the
// whole range as its width. Univariate, a kernel's width is its larger
// distance to the neighbouring kernel centres or range ends (with
// ConsiderEndpoints false, the outermost kernels look inwards only);
// multivariate, every kernel of a parameter has the width 0.2 ·
// n^(−1/(d+4)) · range, for n observations and d parameters in the group
// (Optuna's rule), or, where smaller, 0.2 · √12 · s · m^(−1/(d+4)) for the
// standard deviation s of the parameter's m observed values (hone: the
// same rule on the observations' spread instead of the range, equal to it
// for values spread evenly over the range; as the good trials gather round
// an optimum their kernels narrow with them, so that late suggestions
// refine it; see docs/QUALITY.md). Either way widths are clipped to
// [range/min(100, n+2), range], and a liar's kernel has the smallest,
// range/min(100, n+2). Integer and quantized parameters are sampled as
// continuous ones over the range widened by q/2 at each end and rounded to the nearest
// allowed value; candidates are then scored by the probability each
// density gives to the values that round to them. Categorical parameters
// (choice and grid domains; grid domains are not enumerated) are modelled
// by a smoothed categorical kernel per observation, which puts weight 1 on
// the observed category and PriorWeight/(n+1) on each, and a uniform prior
// kernel. Multivariate, a kernel is the product of one such component per
// parameter, and the mixture weights are shared. Constants are copied and
// Func domains are evaluated after the modelled parameters are fixed, so a
// conditional Func sees them.
//
// Multivariate groups: the parameters are split into the coarsest groups
// such that every observation either has a value for all of a group's
// parameters or for none (Optuna's group decomposition); each group gets
// its own joint densities, fitted on the observations that have it. In a
// hone space every suggested configuration sets every parameter, so there
// is one group unless points set values the space cannot encode.
//
// # Several objectives and constraints
//
// With several objectives (Options.Objectives), the searcher is the
// multi-objective TPE of Ozaki et al. ("Multiobjective tree-structured
// Parzen estimator for computationally expensive optimization problems",
// 2020), as Optuna's TPESampler with several directions: an observation
// holds one loss per objective, and the Gamma(n) good ones are found by
// non-dominated sorting, front by front; of the front that does not fit,
// those chosen by greedy hypervolume subset selection (each step takes
// the observation that adds most to the hypervolume of those taken, with
// the front's reference point, pareto.Reference). The good observations'
// kernels are weighted by their exclusive contributions to the good set's
// hypervolume (plus 1e-12, divided by the largest), in place of the
// recency weights; the bad ones keep theirs. Everything else (kernels,
// liars, multivariate groups, candidates) is as with one objective, but
// for one thing (hone): multivariate, the spread rule of the kernel widths
// takes the good observations' weighted standard deviation and effective
// number, so that dominated ones, of almost no weight, do not widen the
// front's kernels (see docs/SEMANTICS.md §5).
//
// Constraints (Options.Constraints) rank the observations by Deb's
// constrained domination, as Optuna's constrained TPE does: feasible ones
// first (by their Pareto ranks, or by loss with one objective), then the
// infeasible ones by their total violation (hone.Constraints.Violation),
// so that an infeasible observation is good only while fewer than
// Gamma(n) are feasible. With several objectives such an observation
// weighs 1e-12 beside feasible good ones (Optuna's rule), and 1 when no
// good observation is feasible (hone: the model then follows the least
// violating ones; Optuna's would follow only its prior).
//
// A trial's objectives are those of the last result passed to
// OnTrialComplete or, if it lacks one of them (or holds NaN there), of the
// latest result passed to OnResult that had them all; its violation is
// that result's. Trials without every objective are ignored.
//
// At rungs (see Observations at rungs), a trial is observed at each rung
// it reaches with the losses (NaN as +Inf) and the violation of the first
// result at or past the rung that has every objective. The trials rank by
// the highest budget reached, then, within one budget, by constrained
// non-dominated sorting of their losses there: the good set is filled
// from the highest budget down, all of a budget's trials while they fit,
// then front by front, the last front that does not fit cut by greedy
// hypervolume subset selection, as above. With several objectives the
// good kernels are weighted by their hypervolume contributions among the
// good trials of the same budget only (the reference point from their
// losses, pareto.Reference; each budget's largest weighs 1), so that
// trials of different budgets are never compared by hypervolume
// (TestMultiObjectiveRungRanking). FidelityCheck, which compares one loss
// per trial between budgets, is refused with several objectives or
// constraints.
//
// # Observations without rungs
//
// A trial becomes an observation when OnTrialComplete reports it without
// failure. Its value is the metric of the last result passed to
// OnTrialComplete or, if that result does not have the metric, of the last
// result that had it among those passed to OnResult. Failed trials, trials
// that never reported the metric, and trials whose value is NaN are
// ignored; an infinite value is kept (the worst or best possible). Trials
// the searcher did not suggest are ignored. The model is used once
// NStartupTrials observations have arrived.
//
// # Observations at rungs
//
// With Options.Rungs (or SetRungs, which the spec's builder calls with the
// rungs of an ASHA or HyperBand scheduler), a trial is observed at each
// rung it reaches: a result whose time attribute is at or past a budget
// higher than the highest already recorded for the trial is its
// observation at the highest such budget, with loss as above (NaN counts as
// +Inf), whether the result comes through OnResult or as the last result
// of OnTrialComplete, and whether or not the trial then fails. Every trial
// observed, complete or still running, is ranked by the highest budget it
// reached, then by its loss there (Optuna's ranking of pruned trials; the
// scheduler's promotions are thus part of the model): the good trials are
// those that went furthest and did best there, the highest rung with
// trials filling the good set first. The bad ones are the other trials
// that are complete (stopped by the scheduler, or done): a trial still
// running has not been judged, since the scheduler let it go on past its
// last rung, and it would otherwise count as bad at a budget it is about
// to pass, next to the configurations that do best (hone: Optuna leaves
// running trials out of the model; one trial at a time nothing is
// running when the model is used, so this changes only concurrent runs,
// where it lowered final regret on bench/searchbench, docs/SEMANTICS.md
// §5). With ConstantLiar, running trials not yet observed at the floor
// (below) are the liars. The model is used once NStartupTrials trials have
// been observed.
//
// With FidelityCheck each budget's losses are compared with those of the
// highest budget that shares at least 6 trials with it, else of the next
// (the rule of package fidelity, docs/SEMANTICS.md §5): when a budget
// ranks the trials seen at both otherwise (Spearman correlation below 0.2
// over at least 6 trials), that budget and every lower one are
// distrusted. Only trials observed at the floor (the lowest trusted
// budget) or above are ranked, pending trials below it are liars (with
// ConstantLiar), and
// fidelity.MinTrusted(NStartupTrials) of them suffice for the model
// (⌈NStartupTrials/3⌉, at least 3), counting, each time the floor rises
// above the highest it has been, only trials suggested after it rose
// (those before were chosen by the budgets now distrusted); until then
// suggestions are random. The
// searcher is a fidelity.Advisor: ASHA and HyperBand, given it
// (SetAdvisor), stop trusting those budgets too.
package tpe

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/search"
	"github.com/hone-tune/hone/search/fidelity"
	"github.com/hone-tune/hone/space"
)

// stream is the second PCG word; the first is the user's seed.
const stream = 0x686f6e652d747065 // "hone-tpe"

// Options configures a Searcher. Zero values of the optional fields select
// the defaults given in each field's comment; the zero value of each
// switch is Optuna's default (off).
type Options struct {
	// Metric is the result field to optimise. Required unless Objectives
	// is set.
	Metric string
	// Mode is hone.Min or hone.Max; "" means hone.Min.
	Mode hone.Mode
	// Objectives, when set, replace Metric and Mode: one objective, or
	// several (multi-objective TPE, see the package documentation).
	Objectives hone.Objectives
	// Constraints are honoured as the package documentation says.
	Constraints hone.Constraints
	// NumSamples is the total number of trials to suggest, points
	// included, or -1 to suggest until the experiment stops. Required:
	// 0 is an error.
	NumSamples int
	// Seed seeds every random choice.
	Seed uint64
	// NStartupTrials is how many observations must have arrived before the
	// model is used (at one budget, with rungs); until then configurations
	// are random. Default 10.
	NStartupTrials int
	// NEICandidates is the number of candidates drawn from l(x) (for each
	// parameter, univariate). Default 24.
	NEICandidates int
	// Gamma returns the number of good observations out of n; results are
	// clamped to [0, n]. Default: min(⌈0.1·n⌉, 25), as in Optuna.
	Gamma func(n int) int
	// PriorWeight is the weight of the prior kernel of every estimator
	// (an observation weighs at most 1). Default 1.
	PriorWeight float64
	// ConsiderEndpoints lets the range ends bound the widths of the
	// outermost kernels, as in Optuna (univariate only).
	ConsiderEndpoints bool
	// Multivariate models all parameters with one joint density per group
	// (Optuna's multivariate=True, group=True).
	Multivariate bool
	// ConstantLiar counts pending trials as bad observations (Optuna's
	// constant_liar=True, with narrow kernels: see the package
	// documentation), so that concurrent suggestions do not repeat them.
	ConstantLiar bool
	// Rungs, when set, makes the searcher observe trials at these budgets
	// of the time attribute (see the package documentation).
	Rungs *Rungs
	// FidelityCheck applies the rank-correlation rule of package fidelity
	// to the rungs (no effect without rungs).
	FidelityCheck bool
	// FidelityNeighbours applies the rule's earlier form, each budget
	// judged against the next one only (fidelity.Rule.Neighbours), for
	// experiments started with it.
	FidelityNeighbours bool
	// RunningBad keeps the earlier rule at rungs, by which a trial still
	// running counts among the bad observations at the highest budget it
	// has reached (unless it ranks among the good ones), for experiments
	// started with it (spec.Rules 1 and 2).
	RunningBad bool
	// Points are configurations to suggest first (Ray's
	// points_to_evaluate), in order; each may set only some parameters and
	// the rest are sampled. Values are used as given, even outside their
	// domains. Every key must exist in the space. They count toward
	// NumSamples: if there are more points than NumSamples, the extra ones
	// are not suggested. New copies them.
	Points []map[string]any
}

// Rungs are the budgets at which trials are observed: values of the
// result field TimeAttr, such as a scheduler's milestones and max_t.
type Rungs struct {
	TimeAttr string
	Budgets  []float64 // positive and finite; New sorts them and drops repeats
}

// Searcher is the TPE searcher described in the package documentation.
// It is deterministic: the same space, options and sequence of calls give
// the same suggestions, and a searcher restored with UnmarshalState
// continues exactly where the saved one was. Like every hone.Searcher it is
// called from one goroutine only.
type Searcher struct {
	space        space.Space
	obj          hone.Objective // the primary objective
	objs         hone.Objectives
	cs           hone.Constraints
	total        int
	startup      int
	nEI          int
	gamma        func(int) int
	priorWeight  float64
	endpoints    bool
	multivariate bool
	liar         bool
	check        bool
	neighbours   bool // fidelity.Rule.Neighbours
	runningBad   bool // Options.RunningBad
	points       []map[string]any
	dims         []*dim

	// With rungs: the time attribute and the budgets, ascending.
	timeAttr string
	budgets  []float64

	pcg     *rand.PCG
	rng     *rand.Rand
	n       int               // suggestions made
	obs     []observation     // without rungs: in completion order
	pending map[string]*trial // suggested trials not yet complete
	past    map[string]*trial // with rungs: completed trials
	all     []*trial          // with rungs: every trial, in suggestion order
	mon     fidelity.Monitor  // with rungs: the losses at each budget
	// With rungs: every observed trial in model order (highest budget,
	// then loss, then suggestion), and how many are at each budget.
	ranked   []*trial
	perLevel []int
	// With rungs and FidelityCheck: the highest floor index the model
	// has used, the suggestion number from which trials were suggested
	// with the floor there, and whether enough of them have reached it
	// (freshEnough; a cache of a count that only grows, not saved).
	maxFloor  int
	freshFrom int
	freshOK   bool

	// masses remembers kernel masses across fits; it changes no result.
	masses massMemo
	// fits are the univariate good and bad densities of each dim,
	// refitted in place at each suggestion, so that their slices are
	// reused and their centres sorted from the last order (see
	// parzen.sortCentres); they change no result.
	fits [][2]parzen
}

// observation is a completed trial: its coordinates (one per dim, NaN where
// missing) and its loss (lower is better); with several objectives or
// constraints (general), its losses, one per objective, and its
// constraint violation.
type observation struct {
	seq    int // suggestion number, from 0
	loss   float64
	x      []float64
	losses []float64
	viol   float64
}

// trial is a suggested trial.
type trial struct {
	id   string
	seq  int
	x    []float64
	last float64 // the metric of the latest result that had it
	seen bool    // last is set
	// general: the losses and the violation of the latest result that
	// had every objective, if any (seenAll).
	losses  []float64
	viol    float64
	seenAll bool
	// With rungs: the index of the highest budget it was observed at, -1
	// if none; whether it is complete, and whether it failed.
	top     int
	topLoss float64 // the loss at budget top
	// general, with rungs: the losses and the violation at budget top.
	topLosses    []float64
	topViol      float64
	done, failed bool
}

var (
	_ hone.Searcher     = (*Searcher)(nil)
	_ hone.Stateful     = (*Searcher)(nil)
	_ fidelity.Advisor  = (*Searcher)(nil)
	_ fidelity.RungUser = (*Searcher)(nil)

	_ hone.MultiObjective = (*Searcher)(nil)
)

// New returns a TPE searcher over sp. It validates sp and the options; an
// error names the first invalid field. The points are copied.
func New(sp space.Space, opts Options) (*Searcher, error) {
	if err := sp.Validate(); err != nil {
		return nil, &hone.ParamError{Plugin: "tpe", Err: err}
	}
	objs := opts.Objectives.WithDefaults()
	if len(objs) == 0 {
		if opts.Metric == "" {
			return nil, invalid("metric", "metric is required")
		}
		obj := hone.Objective{Metric: opts.Metric, Mode: opts.Mode}
		if err := obj.Validate(); err != nil {
			return nil, invalid("mode", "%w", err)
		}
		objs = obj.AsList()
	} else if err := objs.Validate(); err != nil {
		return nil, invalid("objectives", "%w", err)
	}
	if err := opts.Constraints.Validate(); err != nil {
		return nil, invalid("constraints", "%w", err)
	}
	obj := objs.Primary()
	if opts.NumSamples == 0 || opts.NumSamples < -1 {
		return nil, invalid("num_samples", "num_samples = %d: must be -1 (until stopped) or >= 1", opts.NumSamples)
	}
	if opts.NStartupTrials < 0 {
		return nil, invalid("n_startup_trials", "n_startup_trials = %d: must be >= 0 (0 = default 10)", opts.NStartupTrials)
	}
	if opts.NEICandidates < 0 {
		return nil, invalid("n_ei_candidates", "n_ei_candidates = %d: must be >= 0 (0 = default 24)", opts.NEICandidates)
	}
	if pw := opts.PriorWeight; pw < 0 || math.IsNaN(pw) || math.IsInf(pw, 0) {
		return nil, invalid("prior_weight", "prior_weight = %v: must be a finite number > 0 (0 = default 1)", pw)
	}
	s := &Searcher{
		space:        sp,
		obj:          obj.WithDefaults(),
		total:        opts.NumSamples,
		startup:      orDefault(opts.NStartupTrials, 10),
		nEI:          orDefault(opts.NEICandidates, 24),
		gamma:        opts.Gamma,
		priorWeight:  opts.PriorWeight,
		endpoints:    opts.ConsiderEndpoints,
		multivariate: opts.Multivariate,
		liar:         opts.ConstantLiar,
		check:        opts.FidelityCheck,
		neighbours:   opts.FidelityNeighbours,
		runningBad:   opts.RunningBad,
		pending:      map[string]*trial{},
		objs:         objs,
		cs:           slices.Clone(opts.Constraints),
	}
	if s.gamma == nil {
		s.gamma = defaultGamma
	}
	if s.priorWeight == 0 {
		s.priorWeight = 1
	}
	if s.check && s.general() {
		return nil, invalid("fidelity_check", "fidelity_check with %s: not supported; the rank-correlation rule compares one loss per trial between budgets", s.objectivesText())
	}
	if r := opts.Rungs; r != nil {
		if err := s.setRungs(r.TimeAttr, r.Budgets); err != nil {
			return nil, err
		}
	}
	for i, p := range opts.Points {
		if err := space.Space(sp).CheckPoint(p); err != nil {
			return nil, invalid("points_to_evaluate", "points_to_evaluate[%d]: %w", i, err)
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

// SetRungs makes the searcher observe trials at budgets of timeAttr (see
// the package documentation); the spec's builder calls it with the rungs of
// the scheduler. Call it before the first suggestion. Invalid rungs (an
// empty attribute, no budget, a budget that is not positive and finite)
// are ignored.
func (s *Searcher) SetRungs(timeAttr string, budgets []float64) {
	if s.n > 0 {
		return
	}
	_ = s.setRungs(timeAttr, budgets)
}

func (s *Searcher) setRungs(timeAttr string, budgets []float64) error {
	if timeAttr == "" {
		return fmt.Errorf("tpe: rungs: time attribute is empty")
	}
	if len(budgets) == 0 {
		return fmt.Errorf("tpe: rungs: no budget")
	}
	bs := slices.Clone(budgets)
	for _, b := range bs {
		if !(b > 0) || math.IsInf(b, 0) {
			return fmt.Errorf("tpe: rungs: budget %v: must be positive and finite", b)
		}
	}
	slices.Sort(bs)
	s.timeAttr, s.budgets = timeAttr, slices.Compact(bs)
	s.past = map[string]*trial{}
	s.ranked, s.perLevel = nil, make([]int, len(s.budgets))
	return nil
}

// Rungs returns the time attribute and budgets the searcher observes
// trials at, or "" and nil without rungs.
func (s *Searcher) Rungs() (timeAttr string, budgets []float64) {
	return s.timeAttr, slices.Clone(s.budgets)
}

// Total returns the number of trials the searcher will suggest, or -1 if it
// never stops.
func (s *Searcher) Total() int { return s.total }

// Suggested returns the number of configurations suggested so far.
func (s *Searcher) Suggested() int { return s.n }

// Observed returns the number of observations the model may use: without
// rungs, the trials that completed without failure with a non-NaN value of
// the metric; with rungs, the trials observed at some budget.
func (s *Searcher) Observed() int {
	if s.budgets == nil {
		return len(s.obs)
	}
	n := 0
	for _, t := range s.pending {
		if t.top >= 0 {
			n++
		}
	}
	for _, t := range s.past {
		if t.top >= 0 {
			n++
		}
	}
	return n
}

// Suggest returns the configuration of trial trialID: the next point, a
// random configuration, or one proposed by the model (see the package
// documentation). After NumSamples suggestions it returns
// hone.ErrSearchDone. The returned config is the caller's.
func (s *Searcher) Suggest(trialID string) (hone.Config, error) {
	if s.total >= 0 && s.n >= s.total {
		return nil, hone.ErrSearchDone
	}
	var cfg map[string]any
	if s.n < len(s.points) {
		cfg = s.space.Resolve(s.points[s.n], s.rng)
	} else if good, bad, ok := s.training(); ok {
		cfg = s.space.Resolve(s.propose(good, bad), s.rng)
	} else {
		cfg = s.space.Resolve(nil, s.rng)
	}
	x := make([]float64, len(s.dims))
	for i, d := range s.dims {
		x[i] = math.NaN()
		if v, ok := hone.Config(cfg).Lookup(d.path...); ok {
			x[i] = d.encode(v)
		}
	}
	t := &trial{id: trialID, seq: s.n, x: x, last: math.NaN(), top: -1}
	s.pending[trialID] = t
	if s.budgets != nil {
		s.all = append(s.all, t)
	}
	s.n++
	return hone.Config(cfg), nil
}

// OnResult remembers the trial's latest value of the metric, in case the
// result OnTrialComplete gets lacks it; with rungs, it observes the trial
// at the rung the result reached.
func (s *Searcher) OnResult(trialID string, r *hone.Result) {
	p := s.pending[trialID]
	if p == nil {
		return
	}
	if v, ok := s.obj.Value(r); ok {
		p.last, p.seen = v, true
	}
	if s.general() {
		if l, all := s.objs.Losses(nil, r); all {
			p.losses, p.viol, p.seenAll = l, s.cs.Violation(r), true
		}
	}
	s.feed(trialID, p, r)
}

// OnTrialComplete turns the trial into an observation, unless it failed or
// has no usable value (see the package documentation); with rungs, last is
// observed at its rung, failed or not.
func (s *Searcher) OnTrialComplete(trialID string, last *hone.Result, failed bool) {
	p := s.pending[trialID]
	if p == nil {
		return
	}
	delete(s.pending, trialID)
	if s.budgets != nil {
		s.feed(trialID, p, last)
		p.done, p.failed = true, failed
		s.past[trialID] = p
		return
	}
	if failed {
		return
	}
	if s.general() {
		if last != nil {
			if l, all := s.objs.Losses(nil, last); all {
				p.losses, p.viol, p.seenAll = l, s.cs.Violation(last), true
			}
		}
		if p.seenAll {
			s.obs = append(s.obs, observation{seq: p.seq, loss: p.losses[0], x: p.x, losses: p.losses, viol: p.viol})
		}
		return
	}
	v, ok := s.obj.Value(last)
	if !ok {
		v, ok = p.last, p.seen
	}
	if !ok || math.IsNaN(v) {
		return
	}
	s.obs = append(s.obs, observation{seq: p.seq, loss: s.obj.Loss(v), x: p.x})
}

// feed observes trial id at the highest budget r reached, if that is
// higher than the budgets it was observed at (rungs only).
func (s *Searcher) feed(id string, t *trial, r *hone.Result) {
	if s.budgets == nil || r == nil {
		return
	}
	tv, ok1 := r.Value(s.timeAttr)
	v, ok2 := s.obj.Value(r)
	if !ok1 || !ok2 || math.IsNaN(tv) {
		return
	}
	var losses []float64
	if s.general() {
		for _, o := range s.objs {
			if _, ok := o.Value(r); !ok {
				return // an observation at a rung has every objective
			}
		}
		losses, _ = s.objs.Losses(nil, r) // NaN made +Inf
	}
	k, found := slices.BinarySearch(s.budgets, tv)
	if !found {
		k-- // the highest budget below tv
	}
	if k < 0 || k <= t.top {
		return
	}
	if t.top >= 0 {
		s.unrank(t)
	}
	t.top = k
	s.mon.Observe(id, s.budgets[k], s.obj.Loss(v))
	t.topLoss, _ = s.mon.Loss(id, s.budgets[k]) // NaN made +Inf
	if losses != nil {
		t.topLosses, t.topViol = losses, s.cs.Violation(r)
	}
	s.rank(t)
}

// general reports whether the searcher has several objectives or a
// constraint: its observations then carry losses and a violation, and
// the good ones are chosen by splitGeneral.
func (s *Searcher) general() bool { return len(s.objs) > 1 || len(s.cs) > 0 }

// objectivesText names the objectives and constraints, for messages.
func (s *Searcher) objectivesText() string {
	t := fmt.Sprintf("%d objectives", len(s.objs))
	if len(s.objs) == 1 {
		t = "one objective"
	}
	if len(s.cs) > 0 {
		t += fmt.Sprintf(" under %d constraints", len(s.cs))
	}
	return t
}

// CheckObjectives implements hone.MultiObjective: the experiment's
// objectives and constraints must be those the searcher was built with
// (Options.Objectives and Constraints).
func (s *Searcher) CheckObjectives(objs hone.Objectives, cs hone.Constraints) error {
	return search.CheckObjectives("tpe", s.objs, s.cs, objs, cs)
}

// rule is the fidelity rule the searcher applies to its rungs.
func (s *Searcher) rule() fidelity.Rule {
	return fidelity.Rule{Off: !s.check, Neighbours: s.neighbours}
}

// Floor implements fidelity.Advisor: with rungs and FidelityCheck, the
// lowest budget the searcher trusts (see package fidelity); otherwise 0,
// every budget trusted.
func (s *Searcher) Floor() float64 {
	if s.budgets == nil || !s.check {
		return 0
	}
	return s.mon.Floor(s.rule())
}

// Links returns the fidelity rule's judgement of each budget observed but
// the highest (fidelity.Monitor.Links; nil without rungs), for reports and
// tests.
func (s *Searcher) Links() []fidelity.Link {
	if s.budgets == nil {
		return nil
	}
	return slices.Clone(s.mon.Links(s.rule()))
}

// floorIndex returns the index of the lowest budget whose observations
// the model uses: that of the floor with FidelityCheck, else 0.
func (s *Searcher) floorIndex() int {
	if !s.check {
		return 0
	}
	i, _ := slices.BinarySearch(s.budgets, s.mon.Floor(s.rule()))
	return i
}

// invalid is the error of New for param: a *hone.ParamError.
func invalid(param, format string, args ...any) error {
	return &hone.ParamError{Plugin: "tpe", Param: param, Err: fmt.Errorf(format, args...)}
}

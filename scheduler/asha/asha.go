// Package asha is the asynchronous successive-halving scheduler (ASHA, Li
// et al. 2018), with Ray Tune's semantics (docs/SEMANTICS.md §4): trials are
// assigned a bracket at random, weighted by a softmax of each bracket's
// number of rungs, and stopped at a rung when their score is below the
// (1 − 1/η) percentile of the scores recorded there. It never pauses.
//
// hone: given a fidelity.Advisor (SetAdvisor; the spec's builder passes
// the searcher when it is one, as TPE and BOHB are), ASHA does not stop
// trials at rungs below the advisor's floor, the lowest budget the
// advisor trusts to rank configurations as the highest does: the grace
// period moves up to the floor while lower rungs mislead
// (docs/SEMANTICS.md §5). Scores are still recorded there.
//
// hone: with several objectives, or any constraint (Control.Objectives and
// Constraints), ASHA is MO-ASHA (Schmucker et al. 2021, "Multi-objective
// multi-fidelity hyperparameter optimization with application to
// fairness"): the trials recorded at a rung are ordered by non-dominated
// rank under Deb's constrained domination (pareto.SortConstrained, with
// hone.Constraints.Violation of the result recorded there), ties within a
// rank broken by NSGA-II's crowding distance within it, larger first
// (pareto.Ranking); a trial tied with others on both keys counts as ahead
// of them. The promotion rules take the trial's place in that order where
// one objective takes its score (Promotion). See docs/SEMANTICS.md §4.
package asha

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/pyfloat"
	"github.com/hone-tune/hone/scheduler/fifo"
	"github.com/hone-tune/hone/search/fidelity"
)

// Config holds ASHA's parameters. Start from DefaultConfig.
type Config struct {
	// Metric and Mode default to the experiment's. With several objectives
	// both must be empty: ASHA then ranks trials by all the experiment's
	// objectives (MO-ASHA).
	Metric string
	Mode   hone.Mode
	// TimeAttr is the result field that measures progress (default
	// training_iteration).
	TimeAttr string
	// MaxT is the time at which a trial stops (with StopLastTrials).
	MaxT float64
	// GracePeriod is the first rung: no trial stops before it.
	GracePeriod float64
	// ReductionFactor η: rungs are η apart and 1/η of trials pass each.
	ReductionFactor float64
	// Brackets is the number of brackets, each starting one rung later.
	Brackets int
	// StopLastTrials stops trials that reach MaxT.
	StopLastTrials bool
	// Promotion is the rule that decides, at a rung, whether a trial goes
	// on: PromotePercentile (the default, also for "") or PromoteTop.
	Promotion Promotion
	// BudgetInfo marks every result ASHA records at a rung with
	// hyperband_info: {budget: <milestone>}, and a result that stops a
	// trial at MaxT with budget MaxT, as HyperBand for BOHB marks its
	// milestones: the BOHB searcher learns from such results, which makes
	// ASHA with it asynchronous BOHB. Off by default (Ray's ASHA adds
	// nothing to results); a spec turns it on when the searcher is bohb.
	BudgetInfo bool
}

// Promotion names the rule by which a trial that reaches a rung goes on.
//
// With several objectives or a constraint (MO-ASHA) a rung holds no
// scores but an order (see the package's doc), and both rules read a
// trial's place in it: ahead is the number of trials recorded at the rung
// before it that the order puts strictly ahead of it. PromoteTop is then
// unchanged: the trial stops when ahead ≥ max(1, ⌊n/η⌋), n counting its
// own. PromotePercentile, which has no values to interpolate, stops it
// when ahead > (m − 1)/η, m being the number recorded before it (none:
// it goes on): with one objective that is the percentile rule with the
// cutoff at the next higher recorded score instead of between two, and it
// differs from PromoteTop by at most one trial ahead.
type Promotion string

const (
	// PromotePercentile, Ray Tune's rule, stops a trial whose score is
	// below the (1 − 1/η) percentile, linearly interpolated, of the scores
	// recorded at the rung before it: the first trial at a rung always
	// goes on, and early on about two in three do.
	PromotePercentile Promotion = "percentile"
	// PromoteTop, the rule of Optuna's successive-halving pruner, lets a
	// trial go on only if fewer than max(1, ⌊n/η⌋) of the n scores at the
	// rung, its own included, are better than its score: until a rung has
	// 2η scores only a trial better than every earlier one goes on, and
	// then the top 1/η. It stops more trials early on than the percentile
	// rule, so more configurations are tried with the same budget.
	PromoteTop Promotion = "top"
)

// Promotions lists the rules, the default first.
func Promotions() []Promotion { return []Promotion{PromotePercentile, PromoteTop} }

// stops reports whether a trial with score (higher is better) stops at a
// rung whose earlier scores are sorted (ascending, without NaN).
func (p Promotion) stops(sorted []float64, score, rf float64) bool {
	if p == PromoteTop {
		n := len(sorted) + 1
		k := max(1, int(math.Floor(float64(n)/rf)))
		// sorted is ascending: the scores better than score are its tail.
		better := len(sorted) - sort.Search(len(sorted), func(i int) bool { return sorted[i] > score })
		return better >= k
	}
	cut, ok := cutoff(sorted, rf)
	return ok && score < cut
}

// stopsAhead reports whether a trial with ahead trials strictly ahead of
// it, among the n at a rung its own included, stops (the rules for
// several objectives).
func (p Promotion) stopsAhead(ahead, n int, rf float64) bool {
	if p == PromoteTop {
		return ahead >= max(1, int(math.Floor(float64(n)/rf)))
	}
	m := n - 1
	return m > 0 && float64(ahead) > float64(m-1)/rf
}

// InfoKey is the result field BudgetInfo sets, a map holding the budget
// under BudgetKey (the keys HyperBand for BOHB uses).
const (
	InfoKey   = "hyperband_info"
	BudgetKey = "budget"
)

// DefaultConfig returns Ray's defaults: max_t 100, grace period 1,
// reduction factor 4, one bracket, stop_last_trials.
func DefaultConfig() Config {
	return Config{TimeAttr: hone.FieldTrainingIteration, MaxT: 100, GracePeriod: 1, ReductionFactor: 4, Brackets: 1, StopLastTrials: true}
}

// Validate names the first invalid parameter.
func (c Config) Validate() error {
	switch {
	case c.Mode.Validate() != nil:
		return &hone.ParamError{Plugin: "asha", Param: "mode", Err: c.Mode.Validate()}
	case !(c.GracePeriod > 0):
		return invalid("grace_period", "grace_period = %v: must be > 0", c.GracePeriod)
	case !(c.MaxT >= c.GracePeriod):
		return invalid("max_t", "max_t = %v: must be >= grace_period (%v)", c.MaxT, c.GracePeriod)
	case !(c.ReductionFactor > 1):
		return invalid("reduction_factor", "reduction_factor = %v: must be > 1", c.ReductionFactor)
	case c.Brackets < 1:
		return invalid("brackets", "brackets = %d: must be >= 1", c.Brackets)
	case c.Promotion != "" && !slices.Contains(Promotions(), c.Promotion):
		return invalid("promotion", "promotion = %q: allowed values are %q and %q", c.Promotion, PromotePercentile, PromoteTop)
	}
	return nil
}

// Scheduler is ASHA. It is used on the controller's goroutine only.
type Scheduler struct {
	fifo.Base // ChooseTrialToRun: oldest PENDING, then PAUSED

	cfg      Config
	brackets []*bracket
	trialOf  map[string]*bracket
	warned   bool
	advisor  fidelity.Advisor
	// own is the scheduler's one objective as a list, for MO-ASHA with
	// one objective and constraints, made on first use (not state).
	own hone.Objectives
}

var (
	_ fidelity.RungSource  = (*Scheduler)(nil)
	_ fidelity.AdvisorUser = (*Scheduler)(nil)
)

// SetAdvisor makes ASHA follow a's floor: no trial stops at a rung below
// it. nil restores Ray's ASHA.
func (s *Scheduler) SetAdvisor(a fidelity.Advisor) { s.advisor = a }

// Advisor returns the advisor SetAdvisor gave, or nil.
func (s *Scheduler) Advisor() fidelity.Advisor { return s.advisor }

// Rungs returns the time attribute and every milestone of every bracket,
// with max_t, ascending: the budgets at which ASHA compares trials.
func (s *Scheduler) Rungs() (string, []float64) {
	out := []float64{s.cfg.MaxT}
	for _, b := range s.brackets {
		for _, g := range b.rungs {
			out = append(out, g.milestone)
		}
	}
	slices.Sort(out)
	return s.cfg.TimeAttr, slices.Compact(out)
}

// floor returns the advisor's floor, or 0 without an advisor.
func (s *Scheduler) floor() float64 {
	if s.advisor == nil {
		return 0
	}
	return s.advisor.Floor()
}

// bracket is one bracket's rungs, highest milestone first.
type bracket struct {
	rungs []*rung
}

type rung struct {
	milestone float64
	recorded  map[string]float64 // trial id -> score (higher is better)
	sorted    []float64          // the recorded scores but NaN, ascending
	// points are the results recorded with several objectives, in the
	// order they were recorded, and index their positions by trial id
	// (see rank.go).
	points []point
	index  map[string]int
}

// point is a trial's result at a rung with several objectives: one loss
// per objective (hone.Objectives.Losses) and the sum of its constraints'
// violations.
type point struct {
	id        string
	losses    []float64
	violation float64
	// rank is the point's non-dominated rank among the rung's feasible
	// points (unused for an infeasible one), kept up to date as points
	// are added.
	rank int
}

// value is what a result gives a rung: a score with one objective, a
// point with several (multi).
type value struct {
	score float64
	point point
	multi bool
}

// has reports whether trial id is recorded at the rung.
func (g *rung) has(id string) bool {
	if _, ok := g.recorded[id]; ok {
		return true
	}
	_, ok := g.index[id]
	return ok
}

// add records v for trial id.
func (g *rung) add(id string, v value) {
	if !v.multi {
		g.record(id, v.score)
		return
	}
	g.addPoint(id, v.point)
}

// stops reports whether a trial with v stops at the rung, by the rule p
// and reduction factor rf.
func (g *rung) stops(v value, p Promotion, rf float64) bool {
	if !v.multi {
		return p.stops(g.sorted, v.score, rf)
	}
	return p.stopsAhead(g.ahead(v.point), len(g.points)+1, rf)
}

// record adds a trial's score to the rung.
func (g *rung) record(id string, score float64) {
	g.recorded[id] = score
	if !math.IsNaN(score) {
		i := sort.SearchFloat64s(g.sorted, score)
		g.sorted = slices.Insert(g.sorted, i, score)
	}
}

// New returns an ASHA scheduler. Zero numeric fields take the defaults of
// DefaultConfig; StopLastTrials is taken as given.
func New(cfg Config) (*Scheduler, error) {
	def := DefaultConfig()
	if cfg.TimeAttr == "" {
		cfg.TimeAttr = def.TimeAttr
	}
	if cfg.MaxT == 0 {
		cfg.MaxT = def.MaxT
	}
	if cfg.GracePeriod == 0 {
		cfg.GracePeriod = def.GracePeriod
	}
	if cfg.ReductionFactor == 0 {
		cfg.ReductionFactor = def.ReductionFactor
	}
	if cfg.Brackets == 0 {
		cfg.Brackets = def.Brackets
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Scheduler{cfg: cfg, trialOf: map[string]*bracket{}}
	for b := 0; b < cfg.Brackets; b++ {
		s.brackets = append(s.brackets, newBracket(cfg, b))
	}
	return s, nil
}

// newBracket makes bracket s: milestones grace·η^(k+s) for
// k < int(log(max_t/grace)/log(η) − s + 1), highest first, computed in
// float64 as Ray Tune computes them (truncation, a correctly rounded log
// and power, no epsilon): with max_t 1000, grace 1 and η 10 the count is
// int(2.9999999999999996 + 1) = 3, milestones 1, 10 and 100.
func newBracket(cfg Config, s int) *bracket {
	n := RungCount(cfg.MaxT, cfg.GracePeriod, cfg.ReductionFactor, s)
	b := &bracket{}
	for k := n - 1; k >= 0; k-- {
		b.rungs = append(b.rungs, &rung{milestone: cfg.GracePeriod * pyfloat.Pow(cfg.ReductionFactor, k+s), recorded: map[string]float64{}})
	}
	return b
}

// RungCount returns the number of rungs of bracket s of ASHA with max_t,
// grace period and reduction factor rf: int(log(max_t/grace)/log(rf) − s
// + 1), truncated toward zero, and 0 when that is negative.
func RungCount(maxT, grace, rf float64, s int) int {
	return max(0, int(pyfloat.Int(pyfloat.Log(maxT/grace)/pyfloat.Log(rf)-float64(s)+1)))
}

// Config returns the scheduler's parameters, defaults filled in.
func (s *Scheduler) Config() Config { return s.cfg }

// Milestones returns bracket b's milestones, lowest first (for tests and
// reports).
func (s *Scheduler) Milestones(b int) []float64 {
	var out []float64
	for i := len(s.brackets[b].rungs) - 1; i >= 0; i-- {
		out = append(out, s.brackets[b].rungs[i].milestone)
	}
	return out
}

// Bracket returns the index of the bracket trial id was assigned, or -1.
func (s *Scheduler) Bracket(id string) int {
	for i, b := range s.brackets {
		if s.trialOf[id] == b {
			return i
		}
	}
	return -1
}

// OnTrialAdd assigns t a bracket at random, weighted by softmax of the
// brackets' rung counts. A re-added trial (retry) keeps its bracket.
func (s *Scheduler) OnTrialAdd(c hone.Control, t *hone.Trial) {
	if _, ok := s.trialOf[t.ID]; ok {
		return
	}
	maxRungs := 0
	for _, b := range s.brackets {
		maxRungs = max(maxRungs, len(b.rungs))
	}
	weights := make([]float64, len(s.brackets))
	total := 0.0
	for i, b := range s.brackets {
		weights[i] = math.Exp(float64(len(b.rungs) - maxRungs))
		total += weights[i]
	}
	x := c.Rand().Float64() * total
	pick := len(s.brackets) - 1
	for i, w := range weights {
		if x < w {
			pick = i
			break
		}
		x -= w
	}
	s.trialOf[t.ID] = s.brackets[pick]
}

// objective is the scheduler's own metric and mode, each defaulting to the
// experiment's primary objective's.
func (s *Scheduler) objective(c hone.Control) hone.Objective {
	return hone.Objective{Metric: s.cfg.Metric, Mode: s.cfg.Mode}.Or(c.Objectives().Primary())
}

// CheckObjectives implements hone.MultiObjective: ASHA ranks trials by
// every objective and honours the constraints (MO-ASHA, see the
// package's doc). With several objectives its own metric and mode must be
// empty. Its errors are *hone.ParamError.
func (s *Scheduler) CheckObjectives(objs hone.Objectives, _ hone.Constraints) error {
	return hone.CheckSorted("asha", "ASHA", hone.Objective{Metric: s.cfg.Metric, Mode: s.cfg.Mode}, objs)
}

// multi returns the objectives and constraints ASHA ranks trials by, and
// whether there are several objectives or a constraint (MO-ASHA); with
// one objective, the scheduler's own.
func (s *Scheduler) multi(c hone.Control) (hone.Objectives, hone.Constraints, bool) {
	objs, cs := c.Objectives(), c.Constraints()
	if len(objs) < 2 && len(cs) == 0 {
		return nil, nil, false
	}
	if len(objs) < 2 {
		if s.own == nil {
			s.own = hone.Objectives{s.objective(c)}
		}
		objs = s.own
	}
	return objs, cs, true
}

// values returns the time and value of r: its score (higher is better)
// with one objective, its losses and violation with several. ok is false
// (with one warning per experiment) when the time or an objective is
// missing.
func (s *Scheduler) values(c hone.Control, r *hone.Result) (float64, value, bool) {
	tv, okT := r.Value(s.cfg.TimeAttr)
	objs, cs, multi := s.multi(c)
	if !multi {
		obj := s.objective(c)
		mv, ok := obj.Value(r)
		if !okT || !ok {
			s.warn(c, r, obj.Metric)
			return 0, value{}, false
		}
		return tv, value{score: obj.Score(mv)}, true
	}
	for _, o := range objs {
		if _, ok := o.Value(r); !ok || !okT {
			s.warn(c, r, o.Metric)
			return 0, value{}, false
		}
	}
	losses, _ := objs.Losses(nil, r) // NaN is +Inf, the worst
	return tv, value{point: point{losses: losses, violation: cs.Violation(r)}, multi: true}, true
}

// warn logs, once per experiment, that a result lacks the time attribute
// or metric.
func (s *Scheduler) warn(c hone.Control, r *hone.Result, metric string) {
	if !s.warned {
		s.warned = true
		c.Logf("asha: a result of trial %s has no %q or no %q; such results continue", r.TrialID, s.cfg.TimeAttr, metric)
	}
}

// OnResult stops a trial at max_t (with StopLastTrials) or below the cutoff
// of the highest rung it reached and had not yet recorded; else CONTINUE.
func (s *Scheduler) OnResult(c hone.Control, t *hone.Trial, r *hone.Result) hone.Decision {
	tv, v, ok := s.values(c, r)
	if !ok {
		return hone.Continue
	}
	if tv >= s.cfg.MaxT && s.cfg.StopLastTrials {
		s.mark(r, s.cfg.MaxT)
		return hone.Stop
	}
	b := s.trialOf[t.ID]
	if b == nil {
		return hone.Continue
	}
	dec, at, ok := b.onResult(t.ID, tv, v, s.cfg, s.floor())
	if ok {
		s.mark(r, at)
	}
	return dec
}

// mark puts the budget a result was recorded at in its metrics, with
// BudgetInfo.
func (s *Scheduler) mark(r *hone.Result, budget float64) {
	if !s.cfg.BudgetInfo {
		return
	}
	if r.Metrics == nil {
		r.Metrics = map[string]any{}
	}
	r.Metrics[InfoKey] = map[string]any{BudgetKey: budget}
}

// onResult records the score at the highest milestone the trial reached
// and had not recorded, and returns the decision and that milestone (ok
// false when nothing was recorded). A trial below the cutoff is not
// stopped at a rung below floor.
func (b *bracket) onResult(id string, tv float64, v value, cfg Config, floor float64) (dec hone.Decision, at float64, ok bool) {
	stopLast := cfg.StopLastTrials
	for _, g := range b.rungs {
		done := g.has(id)
		if tv >= g.milestone && done && !stopLast {
			break
		}
		if tv < g.milestone || done {
			continue
		}
		dec := hone.Continue
		if g.milestone >= floor && g.stops(v, cfg.Promotion, cfg.ReductionFactor) {
			dec = hone.Stop
		}
		g.add(id, v)
		return dec, g.milestone, true
	}
	return hone.Continue, 0, false
}

// cutoff is the (1 − 1/rf) percentile, linearly interpolated, of the
// recorded scores, given sorted without NaN.
func cutoff(vals []float64, rf float64) (float64, bool) {
	if len(vals) == 0 {
		return 0, false
	}
	pos := (1 - 1/rf) * float64(len(vals)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return vals[lo] + (vals[hi]-vals[lo])*(pos-float64(lo)), true
}

// OnTrialComplete records the trial's last result at its rung (marking
// it, with BudgetInfo, for the searcher, which hears of the trial's end
// next), then forgets the trial.
func (s *Scheduler) OnTrialComplete(c hone.Control, t *hone.Trial, r *hone.Result) {
	if b := s.trialOf[t.ID]; b != nil && r != nil {
		if tv, v, ok := s.values(c, r); ok {
			_, at, ok := b.onResult(t.ID, tv, v, s.cfg, s.floor())
			switch {
			case tv >= s.cfg.MaxT && s.cfg.StopLastTrials:
				s.mark(r, s.cfg.MaxT) // a full run, whatever rung it fills
			case ok:
				s.mark(r, at)
			}
		}
	}
	delete(s.trialOf, t.ID)
}

// OnTrialError keeps a failed trial's bracket and the scores it recorded:
// a retry is re-added to the same bracket (OnTrialAdd), and the scores of
// a trial that is not retried still count at the rungs it reached, as
// those of a trial stopped there do.
func (s *Scheduler) OnTrialError(c hone.Control, t *hone.Trial) {}

// OnTrialRemove forgets t.
func (s *Scheduler) OnTrialRemove(c hone.Control, t *hone.Trial) { delete(s.trialOf, t.ID) }

// invalid is the error of Validate for param: a *hone.ParamError.
func invalid(param, format string, args ...any) error {
	return &hone.ParamError{Plugin: "asha", Param: param, Err: fmt.Errorf(format, args...)}
}

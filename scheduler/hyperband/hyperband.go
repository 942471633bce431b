// Package hyperband is synchronous HyperBand (Li et al. 2017) and its
// variant for BOHB, with Ray Tune's post-refactor semantics (docs/SEMANTICS.md §4):
// trials fill brackets of bands; at a bracket's milestone a trial is
// PAUSED; when every live trial of the bracket reached it, the bracket keeps
// the best ceil(n/η) and stops the rest; kept paused trials go to the
// bracket's ready-to-unpause set and come back through ChooseTrialToRun.
// The scheduler never sets a status.
//
// hone: given a fidelity.Advisor (SetAdvisor; the spec's builder passes
// the searcher when it is one, as TPE and BOHB are), a new bracket whose
// first milestone is below the advisor's floor is skipped, as one whose
// first milestone is 0 is: while low budgets mislead, the band's budget
// goes to the brackets that start at trusted budgets (docs/SEMANTICS.md
// §5). Brackets already open keep their schedule.
//
// hone: with several objectives, or any constraint (Control.Objectives and
// Constraints), HyperBand keeps at each halving the first ceil(n/η) of its
// live trials in the order of MO-ASHA (Schmucker et al. 2021; see package
// asha): non-dominated rank under Deb's constrained domination
// (pareto.SortConstrained, with hone.Constraints.Violation of each
// trial's latest result), then NSGA-II's crowding distance within the
// rank, larger first, then the bracket's order of arrival, as with one
// objective (pareto.Order). HyperBand for BOHB optimises one objective:
// its CheckObjectives refuses several, and any constraint, with an error
// wrapping hone.ErrOneObjective. See docs/SEMANTICS.md §4.
package hyperband

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/pyfloat"
	"github.com/hone-tune/hone/pareto"
	"github.com/hone-tune/hone/search/fidelity"
)

// BudgetKey is the result field HyperBand for BOHB sets when a trial
// reaches a milestone: {"budget": <milestone>}.
const BudgetKey = "hyperband_info"

// Config holds HyperBand's parameters. Start from DefaultConfig.
type Config struct {
	// Metric and Mode default to the experiment's. With several objectives
	// both must be empty: HyperBand then ranks trials by all the
	// experiment's objectives.
	Metric string
	Mode   hone.Mode
	// TimeAttr measures training progress (default training_iteration).
	TimeAttr string
	// MaxT is the most time a trial gets (default 81).
	MaxT float64
	// ReductionFactor η (default 3).
	ReductionFactor float64
	// StopLastTrials stops a bracket's trials once its last milestone is
	// reached (default true).
	StopLastTrials bool
}

// DefaultConfig returns Ray's defaults: max_t 81, η 3, stop_last_trials.
func DefaultConfig() Config {
	return Config{TimeAttr: hone.FieldTrainingIteration, MaxT: 81, ReductionFactor: 3, StopLastTrials: true}
}

// Validate names the first invalid parameter.
func (c Config) Validate() error {
	switch {
	case c.Mode.Validate() != nil:
		return &hone.ParamError{Plugin: "hyperband", Param: "mode", Err: c.Mode.Validate()}
	case !(c.MaxT >= 1):
		return invalid("max_t", "max_t = %v: must be >= 1", c.MaxT)
	case !(c.ReductionFactor > 1):
		return invalid("reduction_factor", "reduction_factor = %v: must be > 1", c.ReductionFactor)
	}
	return nil
}

// Pauser is what HyperBand for BOHB tells its searcher: which trials are
// paused at a milestone and which are unpaused (the BOHB searcher does not
// count paused trials against its concurrency limit).
type Pauser interface {
	OnPause(trialID string)
	OnUnpause(trialID string)
}

// Scheduler is synchronous HyperBand, or HyperBand for BOHB (NewForBOHB).
// It is used on the controller's goroutine only.
type Scheduler struct {
	cfg    Config
	bohb   bool
	pauser Pauser

	sMax1   int          // brackets per band
	bands   [][]*bracket // nil entries: brackets skipped because r0 = 0
	current *bracket     // the bracket being filled
	of      map[string]*bracket
	// pausing holds the trials told to PAUSE that may still be RUNNING
	// (their save in flight): they count as paused, not running, for the
	// fallback of ChooseTrialToRun. A mark goes when the trial reports
	// again, ends, or is chosen to run (it is PAUSED then).
	pausing map[string]bool
	warned  bool
	busy    bool // inside processBracket: removals only clean up
	advisor fidelity.Advisor
}

var (
	_ fidelity.RungSource  = (*Scheduler)(nil)
	_ fidelity.AdvisorUser = (*Scheduler)(nil)
)

// SetAdvisor makes HyperBand skip new brackets whose first milestone is
// below a's floor. nil restores Ray's schedule.
func (s *Scheduler) SetAdvisor(a fidelity.Advisor) { s.advisor = a }

// Rungs returns the time attribute and every milestone of every bracket
// of a band (the last one of each is max_t, or its truncation),
// ascending.
func (s *Scheduler) Rungs() (string, []float64) {
	var out []float64
	for b := range s.sMax1 {
		if s.r0(b) <= 0 {
			continue
		}
		for _, r := range s.newBracket(b).plan {
			out = append(out, r.R)
		}
	}
	slices.Sort(out)
	return s.cfg.TimeAttr, slices.Compact(out)
}

// bracket is one bracket: its live trials in arrival order, the current
// milestone, and the ready-to-unpause set.
type bracket struct {
	s         int
	n         int     // trials kept at the next halving (starts at n0)
	n0        int     // capacity
	added     int     // trials ever added: a bracket takes n0, even once some have ended
	r, cumulR float64 // rung length and current milestone
	halves    int     // halvings left
	live      []*member
	byID      map[string]*member
	ready     map[string]bool
	totalWork float64
	progress  float64
	plan      []Rung   // n and milestone at each halving level
	members   []string // every trial ever added, in order
}

// Rung is one level of a bracket's successive halving: N trials are kept
// to run to milestone R.
type Rung struct {
	N int
	R float64
}

type member struct {
	id    string
	time  float64
	score float64 // higher is better; NaN when unknown
	// losses (one per objective, hone.Objectives.Losses) and violation
	// (the constraints') are those of the latest result with several
	// objectives or a constraint; nil losses when unknown.
	losses    []float64
	violation float64
}

// New returns synchronous HyperBand. Zero numeric fields take the defaults
// of DefaultConfig; StopLastTrials is taken as given.
func New(cfg Config) (*Scheduler, error) { return newScheduler(cfg, false, nil) }

// NewForBOHB returns HyperBand for BOHB: the most aggressive bracket fills
// first, a trial at a milestone pauses until its whole bracket is there,
// results at a milestone carry hyperband_info.budget for the searcher, and
// pauser (the BOHB searcher, or nil) hears of pauses and unpauses.
func NewForBOHB(cfg Config, pauser Pauser) (*Scheduler, error) {
	return newScheduler(cfg, true, pauser)
}

func newScheduler(cfg Config, bohb bool, p Pauser) (*Scheduler, error) {
	def := DefaultConfig()
	if cfg.TimeAttr == "" {
		cfg.TimeAttr = def.TimeAttr
	}
	if cfg.MaxT == 0 {
		cfg.MaxT = def.MaxT
	}
	if cfg.ReductionFactor == 0 {
		cfg.ReductionFactor = def.ReductionFactor
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Scheduler{cfg: cfg, bohb: bohb, pauser: p, of: map[string]*bracket{}, pausing: map[string]bool{}, bands: [][]*bracket{nil}}
	s.sMax1 = BracketCount(cfg.MaxT, cfg.ReductionFactor)
	return s, nil
}

// The schedule is Ray Tune's, computed as Ray computes it in float64:
// round half to even (NumPy's round), truncation (Python's int()), a
// correctly rounded log and power, and no epsilon. So (max_t 32, η 4) has
// round(2.5) + 1 = 3 brackets, and (max_t 729, η 3) skips bracket s = 6,
// whose first milestone int(729 · 3^-6) = int(0.9999999999999999) is 0.

// BracketCount returns the number of brackets per band of HyperBand with
// max_t and reduction factor eta: round(log(max_t)/log(η)) + 1, rounding
// half to even.
func BracketCount(maxT, eta float64) int {
	return int(pyfloat.RoundHalfEven(pyfloat.Log(maxT)/pyfloat.Log(eta))) + 1
}

// n0 is bracket s's capacity: ceil((s_max+1)/(s+1) · η^s).
func (s *Scheduler) n0(b int) int {
	return int(math.Ceil(float64(s.sMax1) / float64(b+1) * pyfloat.Pow(s.cfg.ReductionFactor, b)))
}

// r0 is bracket s's first milestone: int(max_t · η^-s), truncated.
func (s *Scheduler) r0(b int) float64 {
	return pyfloat.Int(s.cfg.MaxT * pyfloat.Pow(s.cfg.ReductionFactor, -b))
}

// nextN is the number of trials a bracket keeps at a halving: ceil(n/η).
func (s *Scheduler) nextN(n int) int { return int(math.Ceil(float64(n) / s.cfg.ReductionFactor)) }

// nextR is the milestone after r: int(min(r·η, max_t)), truncated.
func (s *Scheduler) nextR(r float64) float64 {
	return pyfloat.Int(math.Min(r*s.cfg.ReductionFactor, s.cfg.MaxT))
}

func (s *Scheduler) newBracket(b int) *bracket {
	br := &bracket{s: b, n: s.n0(b), n0: s.n0(b), r: s.r0(b), cumulR: s.r0(b), halves: b,
		byID: map[string]*member{}, ready: map[string]bool{}}
	// total work, for ChooseTrialToRun's completion order
	n, r := br.n0, br.r
	for i := 0; i <= b; i++ {
		br.plan = append(br.plan, Rung{N: n, R: r})
		br.totalWork += float64(n) * r
		n, r = s.nextN(n), s.nextR(r)
	}
	return br
}

// OnTrialAdd puts t in the current bracket; a full bracket opens the next
// one of the band (skipping brackets whose first milestone is 0), and a
// full band opens a new band.
func (s *Scheduler) OnTrialAdd(c hone.Control, t *hone.Trial) {
	if _, ok := s.of[t.ID]; ok {
		return
	}
	if s.current == nil || s.current.added >= s.current.n0 {
		for {
			band := s.bands[len(s.bands)-1]
			if len(band) == s.sMax1 {
				s.bands = append(s.bands, nil)
				band = nil
			}
			k := len(band)
			b := k // Ray fills the no-halving bracket (s=0) first
			if s.bohb {
				b = s.sMax1 - 1 - k // BOHB fills the most aggressive first
			}
			var br *bracket
			// The bracket without halving (b = 0) is never skipped for the
			// advisor, so a band always has a bracket.
			if r0 := s.r0(b); r0 > 0 && (s.advisor == nil || b == 0 || r0 >= s.advisor.Floor()) {
				br = s.newBracket(b)
			}
			s.bands[len(s.bands)-1] = append(band, br)
			if br != nil {
				s.current = br
				break
			}
		}
	}
	m := &member{id: t.ID, score: math.NaN()}
	s.current.added++
	s.current.members = append(s.current.members, t.ID)
	s.current.live = append(s.current.live, m)
	s.current.byID[t.ID] = m
	s.of[t.ID] = s.current
}

// filling reports whether b may still take new trials: it has not yet
// been given its capacity (trials that ended count, see OnTrialAdd).
func (b *bracket) filling() bool { return b.added < b.n0 }

// iterDone reports whether every live trial reached the milestone.
func (b *bracket) iterDone() bool {
	for _, m := range b.live {
		if m.time < b.cumulR {
			return false
		}
	}
	return true
}

func (b *bracket) finished(stopLast bool) bool { return stopLast && b.halves == 0 && b.iterDone() }

func (b *bracket) continueTrial(m *member, stopLast bool) bool {
	if !stopLast && b.halves == 0 {
		return true
	}
	return m.time < b.cumulR
}

func (b *bracket) remove(id string) {
	if _, ok := b.byID[id]; !ok {
		return
	}
	delete(b.byID, id)
	delete(b.ready, id)
	for i, m := range b.live {
		if m.id == id {
			b.live = append(b.live[:i], b.live[i+1:]...)
			break
		}
	}
}

func (b *bracket) completion(stopLast bool) float64 {
	if b.finished(stopLast) {
		return 1
	}
	if b.totalWork <= 0 {
		return 0
	}
	return math.Min(b.progress/b.totalWork, 1)
}

// objective is the scheduler's own metric and mode, each defaulting to the
// experiment's primary objective's.
func (s *Scheduler) objective(c hone.Control) hone.Objective {
	return hone.Objective{Metric: s.cfg.Metric, Mode: s.cfg.Mode}.Or(c.Objectives().Primary())
}

// CheckObjectives implements hone.MultiObjective: HyperBand ranks trials
// by every objective and honours the constraints (see the package's
// doc); its own metric and mode must then be empty (a *hone.ParamError).
// HyperBand for BOHB refuses several objectives and any constraint with
// an error wrapping hone.ErrOneObjective: its searcher learns one.
func (s *Scheduler) CheckObjectives(objs hone.Objectives, cs hone.Constraints) error {
	if s.bohb {
		return fmt.Errorf("hyperband_for_bohb: %d objectives (%s) and %d constraints: %w", len(objs), strings.Join(objs.Metrics(), ", "), len(cs), hone.ErrOneObjective)
	}
	return hone.CheckSorted("hyperband", "HyperBand", hone.Objective{Metric: s.cfg.Metric, Mode: s.cfg.Mode}, objs)
}

// multi returns the objectives and constraints HyperBand ranks trials by,
// and whether there are several objectives or a constraint; with one
// objective and constraints, the scheduler's own objective.
func (s *Scheduler) multi(c hone.Control) (hone.Objectives, hone.Constraints, bool) {
	objs, cs := c.Objectives(), c.Constraints()
	if s.bohb || len(objs) < 2 && len(cs) == 0 {
		return nil, nil, false
	}
	if len(objs) < 2 {
		objs = hone.Objectives{s.objective(c)}
	}
	return objs, cs, true
}

// OnResult updates t's time and score; below the milestone it continues;
// at the milestone it pauses, or processes the bracket when t is the last
// live trial to get there, whatever the others' status (HyperBand for
// BOHB: once the bracket has taken all its trials). Every PAUSE it returns
// for HyperBand for BOHB is told to the pauser.
func (s *Scheduler) OnResult(c hone.Control, t *hone.Trial, r *hone.Result) hone.Decision {
	b := s.of[t.ID]
	if b == nil {
		return hone.Continue
	}
	m := b.byID[t.ID]
	delete(b.ready, t.ID) // it runs again
	delete(s.pausing, t.ID)
	obj := s.objective(c)
	objs, cs, multi := s.multi(c)
	tv, ok1 := r.Value(s.cfg.TimeAttr)
	mv, ok2 := obj.Value(r)
	missing := obj.Metric
	if multi {
		for _, o := range objs {
			if _, ok2 = o.Value(r); !ok2 {
				missing = o.Metric
				break
			}
		}
	}
	if !ok1 || !ok2 {
		if !s.warned {
			s.warned = true
			c.Logf("hyperband: a result of trial %s has no %q or no %q; such results continue", t.ID, s.cfg.TimeAttr, missing)
		}
		return hone.Continue
	}
	if d := tv - m.time; d > 0 {
		b.progress += d
	}
	m.time = tv
	if multi {
		m.losses, _ = objs.Losses(m.losses, r) // NaN is +Inf, the worst
		m.violation = cs.Violation(r)
	} else {
		m.score = obj.Score(mv)
	}
	if b.continueTrial(m, s.cfg.StopLastTrials) {
		return hone.Continue
	}
	dec := hone.Pause
	if s.bohb {
		if r.Metrics == nil {
			r.Metrics = map[string]any{}
		}
		r.Metrics[BudgetKey] = map[string]any{"budget": b.cumulR}
	}
	// HyperBand for BOHB waits while the bracket may still take trials.
	// Once it has taken them all, the bracket is processed as soon as every
	// live trial has reached the milestone, whatever their status: a trial
	// told to pause whose save is still in flight is still RUNNING, but it
	// is at the milestone and counts as paused (Ray processes the bracket
	// only when every other trial is PAUSED, and falls back to processing
	// it when no trial at all is running, which never happens while new
	// trials keep coming).
	if !s.bohb || !b.filling() {
		dec = s.processBracket(c, b, t)
	}
	if dec == hone.Pause {
		s.pausing[t.ID] = true
		if s.bohb && s.pauser != nil {
			s.pauser.OnPause(t.ID)
		}
	}
	return dec
}

// processBracket halves b while every live trial has reached its milestone
// (several times when the kept trials are already past the next one), and
// returns the decision for cur (nil when called on a removal): PAUSE while
// others have not reached the milestone, STOP if cur is cut or the bracket
// finished, CONTINUE if cur is kept and has further to go.
func (s *Scheduler) processBracket(c hone.Control, b *bracket, cur *hone.Trial) hone.Decision {
	s.busy = true
	defer func() { s.busy = false }()
	action := hone.Pause
	for len(b.live) > 0 && b.iterDone() {
		if b.finished(s.cfg.StopLastTrials) {
			// Every other live trial is at the last milestone: paused, or
			// still RUNNING while its pause waits for a save. Stop them all.
			for _, m := range append([]*member(nil), b.live...) {
				if cur != nil && m.id == cur.ID {
					continue
				}
				s.forget(b, m.id)
				if t := c.Trial(m.id); t != nil {
					c.StopTrial(t)
				}
			}
			return hone.Stop
		}
		good, bad := s.halve(b)
		for _, m := range bad {
			s.forget(b, m.id)
			if cur != nil && m.id == cur.ID {
				action = hone.Stop
				continue
			}
			if t := c.Trial(m.id); t != nil {
				c.StopTrial(t)
			}
		}
		for _, m := range good {
			if !b.continueTrial(m, s.cfg.StopLastTrials) {
				continue // already past the new milestone: the next round decides
			}
			if cur != nil && m.id == cur.ID {
				action = hone.Continue
				continue
			}
			// Mark it ready whether it is PAUSED already or still RUNNING
			// with its pause waiting for a save. A trial that keeps running
			// drops the mark at its next result.
			b.ready[m.id] = true
			if s.pauser != nil {
				s.pauser.OnUnpause(m.id)
			}
		}
		if !s.cfg.StopLastTrials && b.halves == 0 {
			break // nothing more to decide: everyone continues
		}
	}
	return action
}

// forget removes trial id from bracket b and from the scheduler.
func (s *Scheduler) forget(b *bracket, id string) {
	b.remove(id)
	delete(s.of, id)
	delete(s.pausing, id)
}

// halve moves b to its next milestone and splits its live trials into the
// best ceil(n/η) and the rest. With stop_last_trials off, a bracket past
// its last halving keeps everyone.
func (s *Scheduler) halve(b *bracket) (good, bad []*member) {
	if b.halves == 0 {
		return b.live, nil
	}
	b.halves--
	b.n = s.nextN(b.n)
	b.r = s.nextR(b.r)
	b.cumulR = b.r
	sorted := append([]*member(nil), b.live...)
	if b.multi() {
		sorted = orderMulti(b.live)
	} else {
		sort.SliceStable(sorted, func(i, j int) bool { return better(sorted[i].score, sorted[j].score) })
	}
	if b.n >= len(sorted) {
		return sorted, nil
	}
	return sorted[:b.n], sorted[b.n:]
}

// multi reports whether b's trials were ranked by several objectives or
// constraints: whether a live trial has losses.
func (b *bracket) multi() bool {
	for _, m := range b.live {
		if m.losses != nil {
			return true
		}
	}
	return false
}

// orderMulti returns live best first by pareto.Order of their losses and
// violations, ties in arrival order. A trial without losses ranks as
// +Inf in every objective, infeasible beyond any violation.
func orderMulti(live []*member) []*member {
	dims := 0
	for _, m := range live {
		dims = max(dims, len(m.losses))
	}
	points := make([][]float64, len(live))
	viol := make([]float64, len(live))
	for i, m := range live {
		points[i], viol[i] = m.losses, m.violation
		if len(m.losses) != dims {
			points[i] = slices.Repeat([]float64{math.Inf(1)}, dims)
			viol[i] = math.Inf(1)
		}
	}
	out := make([]*member, len(live))
	for k, i := range pareto.Order(points, viol) {
		out[k] = live[i]
	}
	return out
}

// better orders scores best first; NaN ranks lowest.
func better(a, b float64) bool {
	if math.IsNaN(b) {
		return !math.IsNaN(a)
	}
	return a > b
}

// OnTrialComplete removes t from its bracket and re-evaluates the bracket.
func (s *Scheduler) OnTrialComplete(c hone.Control, t *hone.Trial, _ *hone.Result) {
	s.OnTrialRemove(c, t)
}

// OnTrialError removes t from its bracket and re-evaluates the bracket; a
// retried trial is added again (to the bracket being filled).
func (s *Scheduler) OnTrialError(c hone.Control, t *hone.Trial) { s.OnTrialRemove(c, t) }

// OnTrialRemove removes t from its bracket and re-evaluates the bracket, so
// a bracket never waits for a dead trial.
func (s *Scheduler) OnTrialRemove(c hone.Control, t *hone.Trial) {
	b := s.of[t.ID]
	if b == nil {
		return
	}
	s.forget(b, t.ID)
	if s.busy || len(b.live) == 0 {
		return
	}
	// Also when the removal finishes the bracket: its paused trials must
	// then be stopped (Ray skips finished brackets here, and their paused
	// trials wait forever).
	s.processBracket(c, b, nil)
}

// ChooseTrialToRun returns, bands in order and brackets by least progress
// first, a PENDING trial or a PAUSED trial in its bracket's ready set. For
// BOHB, when nothing is runnable and nothing is running (a trial told to
// pause counts as paused), it processes every bracket with paused trials
// and tries once more: a bracket the searcher never filled is processed
// with the trials it has.
func (s *Scheduler) ChooseTrialToRun(c hone.Control) *hone.Trial {
	if t := s.choose(c); t != nil {
		return t
	}
	if !s.bohb {
		return nil
	}
	for _, t := range c.Trials() {
		if t.Status == hone.StatusRunning && !s.pausing[t.ID] {
			return nil
		}
	}
	for _, band := range s.bands {
		for _, b := range band {
			if b != nil && s.hasPaused(c, b) {
				s.processBracket(c, b, nil)
			}
		}
	}
	return s.choose(c)
}

func (s *Scheduler) hasPaused(c hone.Control, b *bracket) bool {
	for _, m := range b.live {
		if t := c.Trial(m.id); t != nil && (t.Status == hone.StatusPaused || s.pausing[m.id]) {
			return true
		}
	}
	return false
}

func (s *Scheduler) choose(c hone.Control) *hone.Trial {
	for _, band := range s.bands {
		var bs []*bracket
		for _, b := range band {
			if b != nil {
				bs = append(bs, b)
			}
		}
		sort.SliceStable(bs, func(i, j int) bool {
			return bs[i].completion(s.cfg.StopLastTrials) < bs[j].completion(s.cfg.StopLastTrials)
		})
		for _, b := range bs {
			for _, m := range b.live {
				t := c.Trial(m.id)
				if t == nil {
					continue
				}
				// The ready mark stays until the trial reports again: the
				// controller may not start a chosen trial at once (e.g. no
				// resources free yet) and will ask again.
				if t.Status == hone.StatusPending || (t.Status == hone.StatusPaused && b.ready[m.id]) {
					delete(s.pausing, m.id) // PAUSED now: the status says it
					return t
				}
			}
		}
	}
	return nil
}

// SetPauser sets the searcher HyperBand for BOHB tells of pauses and
// unpauses (for wiring by name, where the searcher is built separately).
func (s *Scheduler) SetPauser(p Pauser) { s.pauser = p }

// Brackets describes the brackets of every band, for tests and reports:
// per bracket its s, capacity, live trials and current milestone.
func (s *Scheduler) Brackets() [][]BracketInfo {
	out := make([][]BracketInfo, len(s.bands))
	for i, band := range s.bands {
		for _, b := range band {
			if b == nil {
				out[i] = append(out[i], BracketInfo{Skipped: true})
				continue
			}
			info := BracketInfo{S: b.s, Capacity: b.n0, Milestone: b.cumulR, Complete: !b.filling(),
				Rungs: append([]Rung(nil), b.plan...), Members: append([]string(nil), b.members...)}
			for _, m := range b.live {
				info.Live = append(info.Live, m.id)
				if m.time >= b.cumulR {
					info.Reached++
				}
			}
			out[i] = append(out[i], info)
		}
	}
	return out
}

// BracketInfo describes one bracket (see Brackets).
type BracketInfo struct {
	Skipped   bool // its first milestone would be 0, or is below the advisor's floor
	S         int
	Capacity  int     // n0, the trials it takes
	Milestone float64 // the current milestone
	Live      []string
	// Reached counts the live trials at or past the current milestone.
	Reached int
	// Complete reports whether it has taken all its trials.
	Complete bool
	// Rungs is its successive halving: Rungs[k].N trials run to
	// Rungs[k].R, for k = 0 … S.
	Rungs []Rung
	// Members are the trials it ever took, in order.
	Members []string
}

// invalid is the error of Validate for param: a *hone.ParamError.
func invalid(param, format string, args ...any) error {
	return &hone.ParamError{Plugin: "hyperband", Param: param, Err: fmt.Errorf(format, args...)}
}

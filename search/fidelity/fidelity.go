// Package fidelity judges whether low budgets (fidelities) of a
// multi-fidelity search predict high ones, for the searchers and schedulers
// that use several budgets: the rule of docs/SEMANTICS.md §5.
//
// A Monitor records the loss (lower is better) each trial had at each
// budget, or rung, it reached. For each pair of consecutive budgets it
// measures the Spearman rank correlation of the losses of the trials seen at
// both. A pair whose correlation, over at least Rule.MinPairs trials, is
// below Rule.Threshold is misleading: the lower budget ranks
// configurations otherwise than the higher one does. Every budget up to the
// highest misleading pair's lower budget is then distrusted, and the
// lowest budget above them is the floor (Monitor.Floor). With no
// misleading pair the floor is the lowest budget.
//
// What the users of the rule do with the floor:
//
//   - a model-based searcher models the highest budget at or above the
//     floor with enough observations (Monitor.Choose), accepting fewer
//     observations there than it would otherwise (Rule.MinTrusted), and
//     falls back to random sampling rather than fit a model on a budget
//     below the floor;
//   - a scheduler told of the floor by its searcher (an Advisor) stops
//     cutting trials at rungs below it (ASHA: the grace period moves up to
//     the floor) and opens no new bracket that starts below it (HyperBand).
//
// Everything here is a function of the observations, so a searcher or
// scheduler using it stays deterministic.
package fidelity

import (
	"math"
	"slices"
	"sort"
)

// Rule holds the thresholds of the rule. Zero fields take the defaults of
// DefaultRule.
type Rule struct {
	// MinPairs is the number of trials seen at both budgets of a pair
	// before the pair's correlation is judged. Default 6.
	MinPairs int
	// Threshold: a pair whose Spearman correlation is below it is
	// misleading. Default 0.2.
	Threshold float64
	// MinPoints is the number of observations a budget needs to be
	// modelled. Required by Choose (searchers set it).
	MinPoints int
	// MinTrusted is the number of observations that suffice at a budget
	// above a misleading pair, when no budget at or above the floor has
	// MinPoints. Default max(3, ⌈MinPoints/3⌉), at most MinPoints.
	MinTrusted int
	// Off turns the check off: no pair misleads, the floor is the lowest
	// budget, and Choose is BOHB's rule.
	Off bool
}

// DefaultRule returns the default thresholds: 6 pairs, correlation 0.2.
func DefaultRule() Rule { return Rule{MinPairs: 6, Threshold: 0.2} }

// withDefaults fills r's zero fields.
func (r Rule) withDefaults() Rule {
	def := DefaultRule()
	if r.MinPairs <= 0 {
		r.MinPairs = def.MinPairs
	}
	if r.Threshold == 0 || math.IsNaN(r.Threshold) {
		r.Threshold = def.Threshold
	}
	if r.MinTrusted <= 0 {
		r.MinTrusted = max(3, (r.MinPoints+2)/3)
	}
	r.MinTrusted = max(1, min(r.MinTrusted, r.MinPoints))
	return r
}

// Advisor is implemented by searchers that apply the rule; a scheduler
// given one (SetAdvisor) asks it for the floor before it cuts trials at a
// rung or opens a bracket.
type Advisor interface {
	// Floor returns the lowest budget whose results the advisor trusts to
	// rank configurations as the highest budget does; results at lower
	// budgets mislead. It returns 0 while nothing is known.
	Floor() float64
}

// RungSource is implemented by schedulers with rungs (ASHA, HyperBand):
// the result field that measures a trial's budget and every budget at which
// the scheduler compares trials, max_t included, ascending.
type RungSource interface {
	Rungs() (timeAttr string, budgets []float64)
}

// RungUser is implemented by searchers that model results at rungs; the
// plan's builder hands them the scheduler's rungs.
type RungUser interface {
	SetRungs(timeAttr string, budgets []float64)
}

// AdvisorUser is implemented by schedulers that follow an Advisor.
type AdvisorUser interface {
	SetAdvisor(a Advisor)
}

// Link is the judgement of one pair of consecutive budgets.
type Link struct {
	Lo, Hi float64 // the budgets
	Pairs  int     // trials observed at both
	Rho    float64 // Spearman correlation of their losses; NaN if undefined
	// Misleading is true when Pairs >= MinPairs and Rho < Threshold (an
	// undefined correlation, all losses tied at one budget, counts as 0).
	Misleading bool
}

// Monitor records losses per trial and budget. The zero value is ready to
// use. It is not safe for concurrent use.
type Monitor struct {
	budgets []float64                      // ascending
	loss    map[float64]map[string]float64 // budget -> trial -> loss

	// The links of the last call to Links, for cachedRule, until the next
	// Observe.
	cached     []Link
	cachedRule Rule
	valid      bool
}

// Observe records that trial had loss at budget. A NaN loss counts as +Inf
// (the worst); a NaN or infinite budget is ignored. A second observation
// of the same trial and budget replaces the first.
func (m *Monitor) Observe(trial string, budget, loss float64) {
	if math.IsNaN(budget) || math.IsInf(budget, 0) {
		return
	}
	if math.IsNaN(loss) {
		loss = math.Inf(1)
	}
	if m.loss == nil {
		m.loss = map[float64]map[string]float64{}
	}
	row := m.loss[budget]
	if row == nil {
		row = map[string]float64{}
		m.loss[budget] = row
		i, _ := slices.BinarySearch(m.budgets, budget)
		m.budgets = slices.Insert(m.budgets, i, budget)
	}
	row[trial] = loss
	m.valid = false
}

// Budgets returns the budgets observed, ascending. The slice is the
// caller's.
func (m *Monitor) Budgets() []float64 { return slices.Clone(m.budgets) }

// Count returns the number of trials observed at budget.
func (m *Monitor) Count(budget float64) int { return len(m.loss[budget]) }

// Loss returns trial's loss at budget.
func (m *Monitor) Loss(trial string, budget float64) (float64, bool) {
	v, ok := m.loss[budget][trial]
	return v, ok
}

// Entry is one observation, for saving a Monitor.
type Entry struct {
	Trial  string
	Budget float64
	Loss   float64
}

// Entries returns every observation, by budget then trial id.
func (m *Monitor) Entries() []Entry {
	var out []Entry
	for _, b := range m.budgets {
		row := m.loss[b]
		ids := make([]string, 0, len(row))
		for id := range row {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			out = append(out, Entry{Trial: id, Budget: b, Loss: row[id]})
		}
	}
	return out
}

// Links judges every pair of consecutive budgets under rule r. The slice
// is shared: do not modify it.
func (m *Monitor) Links(r Rule) []Link {
	r = r.withDefaults()
	if m.valid && m.cachedRule == r {
		return m.cached
	}
	var out []Link
	for i := 0; i+1 < len(m.budgets); i++ {
		lo, hi := m.budgets[i], m.budgets[i+1]
		a, b := m.pairs(lo, hi)
		l := Link{Lo: lo, Hi: hi, Pairs: len(a), Rho: Spearman(a, b)}
		rho := l.Rho
		if math.IsNaN(rho) {
			rho = 0
		}
		l.Misleading = !r.Off && l.Pairs >= r.MinPairs && rho < r.Threshold
		out = append(out, l)
	}
	m.cached, m.cachedRule, m.valid = out, r, true
	return out
}

// pairs returns the losses at lo and at hi of the trials observed at both,
// in trial-id order.
func (m *Monitor) pairs(lo, hi float64) (a, b []float64) {
	rl, rh := m.loss[lo], m.loss[hi]
	ids := make([]string, 0, min(len(rl), len(rh)))
	for id := range rh {
		if _, ok := rl[id]; ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		a = append(a, rl[id])
		b = append(b, rh[id])
	}
	return a, b
}

// Floor returns the lowest trusted budget under rule r: the budget above
// the highest misleading pair, or the lowest budget if no pair misleads;
// 0 if nothing was observed.
func (m *Monitor) Floor(r Rule) float64 {
	if len(m.budgets) == 0 {
		return 0
	}
	floor := m.budgets[0]
	for _, l := range m.Links(r) {
		if l.Misleading {
			floor = l.Hi
		}
	}
	return floor
}

// Choose returns the budget a model-based searcher should model under rule
// r: the highest budget at or above the floor with at least r.MinPoints
// observations; failing that, if some pair misleads, the highest budget at
// or above the floor with at least r.MinTrusted; ok is false if there is
// none (the searcher then samples at random). Without a misleading pair
// this is BOHB's rule: the highest budget with MinPoints observations.
func (m *Monitor) Choose(r Rule) (budget float64, ok bool) {
	r = r.withDefaults()
	floor := m.Floor(r)
	need := max(r.MinPoints, 1)
	for pass := 0; pass < 2; pass++ {
		for i := len(m.budgets) - 1; i >= 0 && m.budgets[i] >= floor; i-- {
			if b := m.budgets[i]; m.Count(b) >= need {
				return b, true
			}
		}
		if len(m.budgets) == 0 || floor == m.budgets[0] {
			break // nothing misleads: no second chance
		}
		need = r.MinTrusted
	}
	return 0, false
}

// Spearman returns the Spearman rank correlation of the paired samples a
// and b (the Pearson correlation of their ranks, tied values sharing their
// average rank). It returns NaN for fewer than two pairs, for samples of
// different lengths, or when either sample's values are all tied. Infinite
// values rank as the largest (or smallest); NaN ranks as +Inf.
func Spearman(a, b []float64) float64 {
	n := len(a)
	if n < 2 || len(b) != n {
		return math.NaN()
	}
	ra, rb := ranks(a), ranks(b)
	mean := float64(n+1) / 2
	var sab, saa, sbb float64
	for i := range n {
		da, db := ra[i]-mean, rb[i]-mean
		sab += da * db
		saa += da * da
		sbb += db * db
	}
	if saa == 0 || sbb == 0 {
		return math.NaN()
	}
	return max(-1, min(1, sab/math.Sqrt(saa*sbb)))
}

// ranks returns the ranks (1-based) of xs, ties given their average rank.
func ranks(xs []float64) []float64 {
	n := len(xs)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	key := func(x float64) float64 {
		if math.IsNaN(x) {
			return math.Inf(1)
		}
		return x
	}
	sort.SliceStable(idx, func(i, j int) bool { return key(xs[idx[i]]) < key(xs[idx[j]]) })
	r := make([]float64, n)
	for i := 0; i < n; {
		j := i + 1
		for j < n && key(xs[idx[j]]) == key(xs[idx[i]]) {
			j++
		}
		avg := float64(i+j+1) / 2 // ranks i+1..j
		for k := i; k < j; k++ {
			r[idx[k]] = avg
		}
		i = j
	}
	return r
}

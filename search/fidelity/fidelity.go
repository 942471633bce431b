// Package fidelity judges whether low budgets (fidelities) of a
// multi-fidelity search predict high ones, for the searchers and schedulers
// that use several budgets: the rule of docs/SEMANTICS.md §5.
//
// A Monitor records the loss (lower is better) each trial had at each
// budget, or rung, it reached. Each budget but the highest is linked to
// the highest budget above it that shares at least Rule.MinPairs trials
// with it (to the next budget while none does), and the link measures the
// Spearman rank correlation of the losses of the trials seen at both. A
// link whose correlation, over at least Rule.MinPairs trials, is below
// Rule.Threshold is misleading: its budget ranks configurations otherwise
// than the higher one does. Every budget up to the highest misleading
// one is then distrusted, and the lowest budget above them is the floor
// (Monitor.Floor). With no misleading link the floor is the lowest budget.
// Links reach as high as the evidence allows because correlations
// between neighbours do not compose: budgets that each agree fairly with
// the next can, from the lowest, rank configurations in reverse of the
// highest.
//
// What the users of the rule do with the floor:
//
//   - a model-based searcher learns only from observations at or above the
//     floor, accepting fewer of them before it uses its model than it
//     would otherwise (MinTrusted), and samples at random rather than fit a
//     model on budgets below the floor;
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
	// Off turns the check off: no pair misleads, and the floor is the
	// lowest budget.
	Off bool
	// Neighbours judges each budget against the next one only, as hone's
	// rule did before it linked budgets to the highest one they share
	// trials with (spec.Rules 1): experiments started under that rule
	// resume under it, so that their replay decides as they did.
	Neighbours bool
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
	return r
}

// MinTrusted returns how many observations at or above the floor a
// searcher that needs minPoints observations for its model accepts while
// some pair misleads: max(3, ⌈minPoints/3⌉), at most minPoints. Fewer
// observations of a budget that ranks configurations as the highest does
// are worth more than many of one that misleads.
func MinTrusted(minPoints int) int {
	return max(1, min(max(3, (minPoints+2)/3), minPoints))
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

// Link is the judgement of one budget, Lo, against a higher one, Hi.
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
	budgets []float64 // ascending
	rows    map[float64]*budgetRow

	// The links of the last call to Links, for cachedRule; dirty[i] marks
	// link i (budgets i and i+1) as changed since, all of them when valid
	// is false.
	cached     []Link
	cachedRule Rule
	valid      bool
	dirty      []bool
}

// budgetRow holds one budget's losses, and the trials in the order they
// were first observed there (so that pairs come in a fixed order).
type budgetRow struct {
	ids  []string
	loss map[string]float64
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
	if m.rows == nil {
		m.rows = map[float64]*budgetRow{}
	}
	row := m.rows[budget]
	i, _ := slices.BinarySearch(m.budgets, budget)
	if row == nil {
		row = &budgetRow{loss: map[string]float64{}}
		m.rows[budget] = row
		m.budgets = slices.Insert(m.budgets, i, budget)
		m.valid = false // new links
	}
	if _, seen := row.loss[trial]; !seen {
		row.ids = append(row.ids, trial)
	}
	row.loss[trial] = loss
	// Only a trial also observed at another budget changes a pair; which
	// budget a link compares with depends on the pairs' counts, so every
	// link is judged again (there are a handful).
	if !m.valid {
		return
	}
	for j, b := range m.budgets {
		if _, ok := m.rows[b].loss[trial]; ok && j != i {
			for k := range m.dirty {
				m.dirty[k] = true
			}
			return
		}
	}
}

// Budgets returns the budgets observed, ascending. The slice is the
// caller's.
func (m *Monitor) Budgets() []float64 { return slices.Clone(m.budgets) }

// Count returns the number of trials observed at budget.
func (m *Monitor) Count(budget float64) int {
	if r := m.rows[budget]; r != nil {
		return len(r.ids)
	}
	return 0
}

// Loss returns trial's loss at budget.
func (m *Monitor) Loss(trial string, budget float64) (float64, bool) {
	if r := m.rows[budget]; r != nil {
		v, ok := r.loss[trial]
		return v, ok
	}
	return 0, false
}

// Entry is one observation, for saving a Monitor.
type Entry struct {
	Trial  string
	Budget float64
	Loss   float64
}

// Entries returns every observation, by budget, then in the order the
// trials were first observed at that budget: observing them in this
// order rebuilds an equal Monitor.
func (m *Monitor) Entries() []Entry {
	var out []Entry
	for _, b := range m.budgets {
		r := m.rows[b]
		for _, id := range r.ids {
			out = append(out, Entry{Trial: id, Budget: b, Loss: r.loss[id]})
		}
	}
	return out
}

// Links judges every budget but the highest under rule r, lowest first:
// link i compares budget i with the highest budget above it that has at
// least MinPairs trials observed at both, or with the next budget when
// none has (a link that cannot be judged yet). Comparing with the highest
// budget that can be judged asks whether budget i predicts the budgets
// that count, not only its neighbour: correlations between neighbours do
// not compose, and budgets that each agree fairly with the next (ρ 0.7,
// 0.3, 0.2) can rank configurations in reverse of the highest from the
// lowest. The slice is shared: do not modify it.
func (m *Monitor) Links(r Rule) []Link {
	r = r.withDefaults()
	if !m.valid || m.cachedRule != r {
		m.cached = make([]Link, max(0, len(m.budgets)-1))
		m.dirty = make([]bool, len(m.cached))
		for i := range m.dirty {
			m.dirty[i] = true
		}
		m.cachedRule, m.valid = r, true
	}
	for i, d := range m.dirty {
		if !d {
			continue
		}
		lo, hi := m.budgets[i], m.budgets[i+1]
		for j := len(m.budgets) - 1; !r.Neighbours && j > i+1; j-- {
			if m.count(lo, m.budgets[j]) >= r.MinPairs {
				hi = m.budgets[j]
				break
			}
		}
		a, b := m.pairs(lo, hi)
		l := Link{Lo: lo, Hi: hi, Pairs: len(a), Rho: Spearman(a, b)}
		rho := l.Rho
		if math.IsNaN(rho) {
			rho = 0
		}
		l.Misleading = !r.Off && l.Pairs >= r.MinPairs && rho < r.Threshold
		m.cached[i], m.dirty[i] = l, false
	}
	return m.cached
}

// count returns the number of trials observed at both lo and hi.
func (m *Monitor) count(lo, hi float64) int {
	rl, rh := m.rows[lo], m.rows[hi]
	if len(rh.ids) > len(rl.ids) {
		rl, rh = rh, rl
	}
	n := 0
	for _, id := range rh.ids {
		if _, ok := rl.loss[id]; ok {
			n++
		}
	}
	return n
}

// pairs returns the losses at lo and at hi of the trials observed at both,
// in the order they were first observed at hi.
func (m *Monitor) pairs(lo, hi float64) (a, b []float64) {
	rl, rh := m.rows[lo], m.rows[hi]
	for _, id := range rh.ids {
		if v, ok := rl.loss[id]; ok {
			a = append(a, v)
			b = append(b, rh.loss[id])
		}
	}
	return a, b
}

// Floor returns the lowest trusted budget under rule r: the budget next
// above the highest budget whose link misleads, or the lowest budget if
// none does; 0 if nothing was observed.
func (m *Monitor) Floor(r Rule) float64 {
	if len(m.budgets) == 0 {
		return 0
	}
	floor := m.budgets[0]
	for i, l := range m.Links(r) {
		if l.Misleading {
			floor = m.budgets[i+1]
		}
	}
	return floor
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
	keys := make([]float64, n)
	for i, x := range xs {
		keys[i] = key(x)
	}
	slices.SortFunc(idx, func(i, j int) int {
		switch {
		case keys[i] < keys[j]:
			return -1
		case keys[i] > keys[j]:
			return 1
		}
		return i - j
	})
	r := make([]float64, n)
	for i := 0; i < n; {
		j := i + 1
		for j < n && keys[idx[j]] == keys[idx[i]] {
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

package tpe

import (
	"math"
	"slices"
	"sort"
)

// row is one observation the densities are fitted to: a trial's
// coordinates, its suggestion number (for the recency weights) and its
// loss (+Inf for a liar).
type row struct {
	seq  int
	loss float64
	x    []float64
}

// training returns the good and bad rows of the model, each in suggestion
// order, or ok = false while the model has too few observations (see the
// package documentation).
func (s *Searcher) training() (good, bad []row, ok bool) {
	var obs []row
	observed := map[int]bool{} // by seq, with rungs: pending trials observed at the budget
	if s.budgets == nil {
		if len(s.obs) < s.startup {
			return nil, nil, false
		}
		obs = make([]row, len(s.obs))
		for i, o := range s.obs {
			obs[i] = row(o)
		}
	} else {
		b, ok := s.mon.Choose(s.rule())
		if !ok {
			return nil, nil, false
		}
		add := func(id string, t *trial) {
			if loss, ok := s.mon.Loss(id, b); ok {
				obs = append(obs, row{seq: t.seq, loss: loss, x: t.x})
				observed[t.seq] = true
			}
		}
		for id, t := range s.pending {
			add(id, t)
		}
		for id, t := range s.past {
			add(id, t)
		}
	}
	sort.Slice(obs, func(i, j int) bool {
		if obs[i].loss != obs[j].loss {
			return obs[i].loss < obs[j].loss
		}
		return obs[i].seq < obs[j].seq
	})
	nGood := min(max(s.gamma(len(obs)), 0), len(obs))
	good, bad = obs[:nGood:nGood], obs[nGood:]
	if s.liar {
		for _, t := range s.pending {
			if !observed[t.seq] {
				bad = append(bad, row{seq: t.seq, loss: math.Inf(1), x: t.x})
			}
		}
	}
	bySeq := func(rs []row) {
		slices.SortFunc(rs, func(a, b row) int { return a.seq - b.seq })
	}
	bySeq(good)
	bySeq(bad)
	return good, bad, true
}

// propose returns a point holding a model-chosen value for every dim.
func (s *Searcher) propose(good, bad []row) map[string]any {
	point := map[string]any{}
	if s.multivariate {
		for _, g := range groups(len(s.dims), good, bad) {
			for i, v := range s.chooseJoint(g, good, bad) {
				setPath(point, s.dims[g[i]].path, v)
			}
		}
		return point
	}
	for i, d := range s.dims {
		setPath(point, d.path, s.choose(d, column(good, i), column(bad, i)))
	}
	return point
}

// column returns dim i's coordinates of rows, skipping missing ones.
func column(rows []row, i int) []float64 {
	var xs []float64
	for _, r := range rows {
		if x := r.x[i]; !math.IsNaN(x) {
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

// groups splits dims 0..n-1 into the coarsest groups such that each row
// has a coordinate for every dim of a group or for none (Optuna's group
// decomposition). Groups are ordered by their first dim, dims ascending
// within each. Dims no row has form groups too, so every dim is chosen.
func groups(n int, sets ...[]row) [][]int {
	// A dim's signature is the set of rows that have it; dims with equal
	// signatures are in one group.
	label := make([]int, n) // group label per dim; refined row by row
	for _, rows := range sets {
		for _, r := range rows {
			next := map[[2]int]int{}
			for i := range n {
				key := [2]int{label[i], 0}
				if !math.IsNaN(r.x[i]) {
					key[1] = 1
				}
				l, ok := next[key]
				if !ok {
					l = len(next)
					next[key] = l
				}
				label[i] = l
			}
		}
	}
	var out [][]int
	index := map[int]int{}
	for i, l := range label {
		g, ok := index[l]
		if !ok {
			g = len(out)
			index[l] = g
			out = append(out, nil)
		}
		out[g] = append(out[g], i)
	}
	return out
}

// chooseJoint draws NEICandidates configurations of the dims of group g
// from the joint good density and returns the values of the one with the
// best log ratio of good to bad density (the first one on ties), in the
// order of g.
func (s *Searcher) chooseJoint(g []int, good, bad []row) []any {
	dims := make([]*dim, len(g))
	for i, k := range g {
		dims[i] = s.dims[k]
	}
	l := newJoint(dims, g, good, s.priorWeight)
	b := newJoint(dims, g, bad, s.priorWeight)
	cand := make([]float64, len(g))
	var best []float64
	bestScore := math.Inf(-1)
	for i := range s.nEI {
		l.sample(s.rng, cand)
		score := l.logPDF(cand) - b.logPDF(cand)
		if math.IsNaN(score) {
			score = math.Inf(-1)
		}
		if i == 0 || score > bestScore {
			best, bestScore = append(best[:0], cand...), score
		}
	}
	out := make([]any, len(g))
	for i, d := range dims {
		if d.categorical() {
			out[i] = d.cats[int(best[i])]
		} else {
			out[i] = d.output(best[i])
		}
	}
	return out
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

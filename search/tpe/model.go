package tpe

import (
	"math"
	"slices"

	"github.com/hone-tune/hone/search/fidelity"
	"github.com/hone-tune/hone/space"
)

// row is one observation the densities are fitted to: a trial's
// coordinates, its suggestion number (for the recency weights) and its
// loss (+Inf for a liar).
type row struct {
	seq   int
	loss  float64
	x     []float64
	level int  // with rungs: the index of the highest budget reached
	liar  bool // a pending trial counted as the worst
	// general (several objectives or constraints): the losses and the
	// violation; w, when positive, is the row's kernel weight in the
	// good density instead of the recency weights (splitGeneral).
	losses []float64
	viol   float64
	w      float64
}

// training returns the good and bad rows of the model, each in suggestion
// order, or ok = false while the model has too few observations (see the
// package documentation).
func (s *Searcher) training() (good, bad []row, ok bool) {
	if s.budgets != nil {
		return s.rungTraining()
	}
	if len(s.obs) < s.startup {
		return nil, nil, false
	}
	rows := make([]row, 0, len(s.obs)+len(s.pending))
	for _, o := range s.obs {
		rows = append(rows, row{seq: o.seq, loss: o.loss, x: o.x, losses: o.losses, viol: o.viol})
	}
	if s.liar {
		for _, t := range s.pending {
			rows = append(rows, row{seq: t.seq, loss: math.Inf(1), x: t.x, liar: true})
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return a.seq - b.seq })
	if s.general() {
		good, bad = splitGeneral(rows, s.gamma(len(s.obs)), len(s.objs) > 1)
		return good, bad, true
	}
	good, bad = split(rows, s.gamma(len(s.obs)))
	return good, bad, true
}

// rungTraining is training with rungs: every trial observed at the floor
// or above ranks by the highest budget it reached, then by its loss there;
// pending trials not observed there are the liars. The good rows are the
// first gamma(n) of the ranking s.ranked keeps, and the bad ones the
// newest maxBad of the other rows but the running trials (unless
// runningBad), found from the newest trial back: a
// suggestion costs O(maxBad + the trials skipped), not O(every trial), so
// that it stays cheap under ASHA's thousands of trials. The result is
// split's over every row (rowsAt).
func (s *Searcher) rungTraining() (good, bad []row, ok bool) {
	floor := s.floorIndex()
	n := 0
	for _, c := range s.perLevel[floor:] {
		n += c
	}
	need := s.startup
	if floor > 0 {
		need = fidelity.MinTrusted(s.startup) // above a misleading budget
	}
	if !s.freshEnough(floor, n, need) || n < need {
		return nil, nil, false
	}
	if s.general() {
		good, bad = s.rungSplitGeneral(n)
		return good, bad, true
	}
	k := min(max(s.gamma(n), 0), n) // the ranking's first n trials are those at the floor or above
	isGood := make(map[int]bool, k)
	good = make([]row, 0, k)
	for _, t := range s.ranked[:k] {
		isGood[t.seq] = true
		good = append(good, row{seq: t.seq, loss: t.topLoss, x: t.x, level: t.top})
	}
	slices.SortFunc(good, func(a, b row) int { return a.seq - b.seq })
	bad = make([]row, 0, min(maxBad, len(s.all)))
	for i := len(s.all) - 1; i >= 0 && len(bad) < maxBad; i-- {
		t := s.all[i]
		switch {
		case t.top >= floor && isGood[t.seq]:
		case t.top >= floor && !t.done && !s.runningBad: // not judged yet
		case t.top >= floor:
			bad = append(bad, row{seq: t.seq, loss: t.topLoss, x: t.x, level: t.top})
		case s.liar && !t.done:
			bad = append(bad, row{seq: t.seq, loss: math.Inf(1), x: t.x, liar: true})
		}
	}
	slices.Reverse(bad)
	return good, bad, true
}

// rowsAt returns the rows of rung training at floor index floor, in
// suggestion order, and how many are observations: with split, and
// without the running trials among the bad rows (unless runningBad), the
// definition that rungTraining computes faster (tests compare the two).
func (s *Searcher) rowsAt(floor int) (rows []row, n int) {
	for _, t := range s.all {
		switch {
		case t.top >= 0 && t.top >= floor:
			rows = append(rows, row{seq: t.seq, loss: t.topLoss, x: t.x, level: t.top})
			n++
		case s.liar && !t.done:
			rows = append(rows, row{seq: t.seq, loss: math.Inf(1), x: t.x, liar: true})
		}
	}
	return rows, n
}

// unrank takes t, observed, out of s.ranked before its highest budget or
// its loss there changes.
func (s *Searcher) unrank(t *trial) {
	i, found := slices.BinarySearchFunc(s.ranked, row{seq: t.seq, loss: t.topLoss, level: t.top}, rankCmp)
	if !found {
		panic("tpe: an observed trial is missing from the ranking")
	}
	s.ranked = slices.Delete(s.ranked, i, i+1)
	s.perLevel[t.top]--
}

// rank puts t, observed, at its place in s.ranked.
func (s *Searcher) rank(t *trial) {
	i, _ := slices.BinarySearchFunc(s.ranked, row{seq: t.seq, loss: t.topLoss, level: t.top}, rankCmp)
	s.ranked = slices.Insert(s.ranked, i, t)
	s.perLevel[t.top]++
}

// rankCmp orders ranked trials as ranks orders rows.
func rankCmp(t *trial, r row) int {
	a := row{seq: t.seq, loss: t.topLoss, level: t.top}
	switch {
	case ranks(a, r):
		return -1
	case ranks(r, a):
		return 1
	}
	return 0
}

// split returns the k observations of rows (in suggestion order) that
// rank first (see ranks), and the others with the liars, capped to the
// newest maxBad; both in suggestion order. k is clamped to the number of
// observations.
func split(rows []row, k int) (good, bad []row) {
	top := make([]int, 0, max(k, 0)) // indices into rows, best first
	for i, r := range rows {
		if r.liar || k <= 0 {
			continue
		}
		if len(top) == k && !ranks(r, rows[top[k-1]]) {
			continue
		}
		if len(top) < k {
			top = append(top, i)
		} else {
			top[k-1] = i
		}
		for j := len(top) - 1; j > 0 && ranks(rows[top[j]], rows[top[j-1]]); j-- {
			top[j], top[j-1] = top[j-1], top[j]
		}
	}
	slices.Sort(top)
	good = make([]row, 0, len(top))
	bad = make([]row, 0, len(rows)-len(top))
	t := 0
	for i, r := range rows {
		if t < len(top) && top[t] == i {
			good = append(good, r)
			t++
			continue
		}
		bad = append(bad, r)
	}
	if n := len(bad) - maxBad; n > 0 {
		bad = bad[n:] // the newest maxBad
	}
	return good, bad
}

// maxBad bounds the bad observations a density is fitted to: the newest
// ones are kept. The recency weights already give older ones less weight,
// and the bound keeps a suggestion's cost from growing with the number of
// trials, which under ASHA runs into thousands.
const maxBad = 200

// ranks reports whether a ranks before b: higher level first, then lower
// loss, then earlier suggestion.
func ranks(a, b row) bool {
	switch {
	case a.level != b.level:
		return a.level > b.level
	case a.loss != b.loss:
		return a.loss < b.loss
	}
	return a.seq < b.seq
}

// propose returns a point holding a model-chosen value for every dim.
func (s *Searcher) propose(good, bad []row) map[string]any {
	point := map[string]any{}
	if s.multivariate {
		for _, g := range groups(len(s.dims), good, bad) {
			for i, v := range s.chooseJoint(g, good, bad) {
				space.SetPath(point, s.dims[g[i]].path, v)
			}
		}
		return point
	}
	for i, d := range s.dims {
		space.SetPath(point, d.path, s.choose(i, d, column(good, i), column(bad, i)))
	}
	return point
}

// col is one dim's coordinates of some rows, with their suggestion
// numbers and liar marks.
type col struct {
	xs   []float64
	seqs []int
	liar []bool
	ws   []float64 // the rows' own weights (row.w)
}

// weights returns the kernel weights of the column's observations: their
// own when the rows carry them, else the recency weights.
func (c col) weights() []float64 {
	if len(c.ws) > 0 && c.ws[0] > 0 {
		return c.ws
	}
	return recencyWeights(len(c.xs))
}

// column returns dim i's coordinates of rows, skipping missing ones.
func column(rows []row, i int) col {
	c := col{xs: make([]float64, 0, len(rows)), seqs: make([]int, 0, len(rows)), liar: make([]bool, 0, len(rows))}
	for _, r := range rows {
		if x := r.x[i]; !math.IsNaN(x) {
			c.xs = append(c.xs, x)
			c.seqs = append(c.seqs, r.seq)
			c.liar = append(c.liar, r.liar)
			c.ws = append(c.ws, r.w)
		}
	}
	return c
}

// choose draws NEICandidates values of d from the good density and returns
// the one with the best log ratio of good to bad density (the first one on
// ties), as a configuration value.
func (s *Searcher) choose(di int, d *dim, good, bad col) any {
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
		l := newCategorical(good.xs, good.weights(), len(d.cats), s.priorWeight)
		g := newCategorical(bad.xs, bad.weights(), len(d.cats), s.priorWeight)
		for i := range s.nEI {
			c := l.sample(s.rng)
			better(i, float64(c), l.logp[c]-g.logp[c])
		}
		return d.cats[int(best)]
	}
	// The densities are refitted in the searcher's ones for the dim.
	if len(s.fits) != len(s.dims) {
		s.fits = make([][2]parzen, len(s.dims))
	}
	l, g := &s.fits[di][0], &s.fits[di][1]
	l.fit(good.xs, good.weights(), d.lo, d.hi, s.priorWeight, s.endpoints, nil, &s.masses, di, good.seqs)
	g.fit(bad.xs, bad.weights(), d.lo, d.hi, s.priorWeight, s.endpoints, bad.liar, &s.masses, di, bad.seqs)
	// The candidates of a quantized dim fall in few cells, and a cell's
	// masses cost two erfc per kernel: each cell is scored once.
	var cells map[[2]float64]float64
	for i := range s.nEI {
		z := l.sample(s.rng)
		x := d.snap(d.inv(z))
		var score float64
		if d.quantized() {
			if z1, z2 := d.cell(x); z2 > z1 {
				var ok bool
				if score, ok = cells[[2]float64{z1, z2}]; !ok {
					score = l.logMass(z1, z2) - g.logMass(z1, z2)
					if cells == nil {
						cells = map[[2]float64]float64{}
					}
					cells[[2]float64{z1, z2}] = score
				}
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
	if n > 0 && complete(sets...) {
		// Every row has every dim: one group, as the refinement below
		// would find, without its map per row.
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		return [][]int{all}
	}
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

// complete reports whether every row of sets has a coordinate for every
// dim.
func complete(sets ...[]row) bool {
	for _, rows := range sets {
		for _, r := range rows {
			for _, x := range r.x {
				if math.IsNaN(x) {
					return false
				}
			}
		}
	}
	return true
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
	l := newJoint(dims, g, good, s.priorWeight, &s.masses)
	b := newJoint(dims, g, bad, s.priorWeight, &s.masses)
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

// freshEnough reports whether, with the floor at index floor and the first
// n trials of the ranking observed there or above, enough of those were
// suggested after the floor first rose to its highest level so far: need
// of them, the same number the model asks of observations above a
// misleading budget. The trials that reached the floor before it rose
// were chosen by the budgets below it, which it now distrusts (ASHA
// promoted them, and the model suggested them, by their ranks there);
// where those budgets mislead, they are gathered where the low budgets do
// well and the high ones badly, and a model fitted to them alone keeps
// sampling there. Until need trials suggested since the rise, at random,
// have reached the floor, the suggestions stay random. A floor that comes
// down and rises again to a level it had reached asks for nothing new:
// the trials suggested after its first rise there are still observed. It
// records the highest floor, the suggestion number from which trials
// count, and whether enough of them have reached that floor.
func (s *Searcher) freshEnough(floor, n, need int) bool {
	if floor > s.maxFloor {
		s.maxFloor, s.freshFrom, s.freshOK = floor, s.n, false
	}
	if floor == 0 || s.freshOK {
		return true
	}
	fresh := 0
	for _, t := range s.ranked[:n] {
		if t.seq >= s.freshFrom {
			if fresh++; fresh >= need {
				// Trials keep the highest budget they reached, so at the
				// highest floor the count only grows.
				s.freshOK = floor == s.maxFloor
				return true
			}
		}
	}
	return false
}

package tpe

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"sort"
)

// logSqrt2Pi is log(√(2π)), the normal density's normalising constant.
var logSqrt2Pi = 0.5 * math.Log(2*math.Pi)

// stdCDF is the standard normal CDF Φ.
func stdCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// stdInvCDF is Φ⁻¹; it returns ±Inf for p = 0 and p = 1.
func stdInvCDF(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// logStdPDF is log φ(x).
func logStdPDF(x float64) float64 { return -0.5*x*x - logSqrt2Pi }

// massCut is where the standard normal's tail mass, Φ(−massCut) ≈ 9.5e-18,
// is below 2⁻⁵⁴, so that 1 − Φ(−massCut) rounds to exactly 1.
const massCut = 8.5

// logNormMass returns log(Φ(b) − Φ(a)) for a <= b, accurately in both tails
// and for narrow intervals, and finite (an approximation) where the exact
// difference underflows.
func logNormMass(a, b float64) float64 {
	w := b - a
	if w <= 0 {
		return math.Inf(-1)
	}
	if w < 1e-5 {
		// φ is nearly constant over the interval; the CDF difference would
		// cancel.
		return logStdPDF(a+w/2) + math.Log(w)
	}
	if a <= -massCut && b >= massCut {
		// Both tails hold less than half the spacing of floats below 1:
		// the difference below is exactly 1.
		return 0
	}
	var m float64
	switch {
	case a > 0: // both in the upper tail: use the complementary CDF
		m = 0.5 * (math.Erfc(a/math.Sqrt2) - math.Erfc(b/math.Sqrt2))
	case b < 0: // both in the lower tail
		m = 0.5 * (math.Erfc(-b/math.Sqrt2) - math.Erfc(-a/math.Sqrt2))
	default:
		m = 1 - 0.5*math.Erfc(b/math.Sqrt2) - 0.5*math.Erfc(-a/math.Sqrt2)
	}
	if m > 0 {
		return math.Log(m)
	}
	// Far in a tail: Mills' ratio at the end nearer the mean.
	t := math.Min(math.Abs(a), math.Abs(b))
	return logStdPDF(t) - math.Log(t)
}

// expCut is the exponent below which logSumExp leaves a term out: each
// such term is below 4.3e-18 of the largest, so a sum of thousands moves by
// less than 1e-14 relative, and it saves most calls to math.Exp where the
// kernels are narrow.
const expCut = -40

// logSumExp returns log Σ exp(xs[i]), -Inf for an empty or all -Inf list.
func logSumExp(xs []float64) float64 {
	// The largest term, by comparison rather than math.Max, which costs a
	// call per term here; a NaN term makes the sum NaN as math.Max would.
	m := math.Inf(-1)
	for _, x := range xs {
		if x > m {
			m = x
		} else if x != x {
			return x
		}
	}
	return logSumExpMax(xs, m)
}

// logSumExpMax is logSumExp for callers that found the largest term m
// themselves (NaN if any term is NaN).
func logSumExpMax(xs []float64, m float64) float64 {
	if math.IsInf(m, 0) || m != m {
		return m
	}
	s := 0.0
	for _, x := range xs {
		if d := x - m; d >= expCut {
			s += math.Exp(d)
		}
	}
	return m + math.Log(s)
}

// defaultGamma is Optuna's default split: the best ⌈0.1·n⌉ observations,
// at most 25, are the good ones.
func defaultGamma(n int) int { return min((n+9)/10, 25) }

// recencyWeights returns the weights of n observations in the order they
// were suggested: 1 for the newest 25, and for older ones a ramp rising
// linearly from 1/n (oldest) to 1, as Optuna's default weights do.
func recencyWeights(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	if ramp := n - 25; ramp > 0 {
		lo := 1 / float64(n)
		for i := range ramp {
			if ramp == 1 {
				w[i] = lo
				continue
			}
			w[i] = lo + (1-lo)*float64(i)/float64(ramp-1)
		}
	}
	return w
}

// parzen is a Parzen estimator of one numeric parameter: a weighted mixture
// of normal kernels truncated to [lo, hi], one per observation plus a prior
// kernel centred on the range with the whole range as its width.
type parzen struct {
	lo, hi float64
	mu     []float64
	sigma  []float64
	// logc[k] is log(weight_k / (σ_k · Z_k)), Z_k being the kernel's mass
	// inside [lo, hi]; logm[k] is log(weight_k / Z_k).
	logc, logm []float64
	cum        []float64 // cumulative normalised weights, for sampling
	buf        []float64
	grid       kernelGrid
	// For logPDF's direct sums (see setDirect): whether they are used,
	// and per kernel e^logc/√(2π) and 1/(σ√2).
	direct      bool
	coef, scale []float64
	// The fit's scratch, kept for the next fit.
	keyed, kept, fresh []centre
	order              []int
	slots              []int32
	ends               []float64
	// The observations' suggestion numbers at the last fit that had them
	// (ascending), and the place of each one's kernel in centre order
	// among them: see sortCentres.
	lastSeqs []int
	lastRank []int32
}

// centre is a kernel's centre and index, for sorting.
type centre struct {
	mu float64
	k  int
}

// newParzen fits an estimator to observations xs (internal coordinates in
// [lo, hi]) with weights ws (same length, positive): see fit.
func newParzen(xs, ws []float64, lo, hi, priorWeight float64, considerEndpoints bool, narrow []bool, mass *massMemo, dim int, seqs []int) *parzen {
	p := &parzen{}
	p.fit(xs, ws, lo, hi, priorWeight, considerEndpoints, narrow, mass, dim, seqs)
	return p
}

// fit fits p, reusing its slices, to observations xs (internal
// coordinates in [lo, hi]) with weights ws (same length, positive).
// Bandwidths follow Optuna's univariate rule: each kernel's σ is the larger
// distance to its neighbours among the sorted centres (prior centre
// included) and the range ends; without considerEndpoints the outermost
// kernels use their inner neighbour only. σ is then clipped to
// [range/min(100, n+2), range], n being the number of observations. The
// kernels of observations marked narrow (nil: none) take the smallest
// width, range/min(100, n+2). mass (nil: none) remembers kernel masses of
// dim by the observations' suggestion numbers seqs (nil: none).
func (p *parzen) fit(xs, ws []float64, lo, hi, priorWeight float64, considerEndpoints bool, narrow []bool, mass *massMemo, dim int, seqs []int) {
	n := len(xs)
	span := hi - lo
	prior := (lo + hi) / 2
	m := n + 1
	p.lo, p.hi = lo, hi
	p.mu = append(append(p.mu[:0], xs...), prior)
	mu := p.mu

	// Neighbour distances over the sorted centres, prior included.
	order := p.sortCentres(seqs)
	ends := resize(p.ends, m+2)
	p.ends = ends
	ends[0], ends[m+1] = lo, hi
	for i, k := range order {
		ends[i+1] = mu[k]
	}
	sigma := resize(p.sigma, m)
	p.sigma = sigma
	for i, k := range order {
		sigma[k] = math.Max(ends[i+1]-ends[i], ends[i+2]-ends[i+1])
	}
	if !considerEndpoints && m >= 2 {
		sigma[order[0]] = ends[2] - ends[1]
		sigma[order[m-1]] = ends[m] - ends[m-1]
	}
	minSigma := span / math.Min(100, float64(n+2))
	for i := range n {
		sigma[i] = clamp(sigma[i], minSigma, span)
		if narrow != nil && narrow[i] {
			sigma[i] = minSigma
		}
	}
	sigma[n] = span

	p.logc, p.logm = resize(p.logc, m), resize(p.logm, m)
	p.cum, p.buf = resize(p.cum, m), resize(p.buf, m)
	total := priorWeight
	for _, w := range ws {
		total += w
	}
	acc := 0.0
	// Most kernels share their weight and many their width: each
	// logarithm is computed once per run of equal values.
	var lw, ls logMemo
	for k := range m {
		w := priorWeight
		if k < n {
			w = ws[k]
		}
		w /= total
		acc += w
		p.cum[k] = acc
		seq := -1 // the prior
		if k < n && seqs != nil {
			seq = seqs[k]
		}
		logZ := mass.of(dim, seq, (lo-mu[k])/sigma[k], (hi-mu[k])/sigma[k])
		p.logm[k] = lw.log(w) - logZ
		p.logc[k] = p.logm[k] - ls.log(sigma[k])
	}
	p.setDirect()
	p.grid.build(p)
}

// resize returns s with length n, reusing its array when it is large
// enough; the values are left as they were.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// sortCentres returns the kernels' indices ordered by centre, ties in
// index order (what a stable sort gives). With the observations'
// suggestion numbers seqs, ascending, it starts from the order of the
// last fit that had them: a searcher refits each dim's densities mostly to
// the same trials, whose kernels keep their order, so that only the
// others (and the prior) are sorted and merged in.
func (p *parzen) sortCentres(seqs []int) []int {
	m := len(p.mu)
	keyed := resize(p.keyed, m)
	p.keyed = keyed
	if len(seqs) != m-1 || !ascending(seqs) {
		seqs = nil
	}
	if seqs == nil || !p.sortFrom(seqs, keyed) {
		for k, v := range p.mu {
			keyed[k] = centre{v, k}
		}
		sortCentres(keyed)
	}
	order := resize(p.order, m)
	p.order = order
	for i, c := range keyed {
		order[i] = c.k
	}
	// Remember the order of the observations' kernels, by suggestion
	// number, for the next fit.
	p.lastSeqs, p.lastRank = p.lastSeqs[:0], resize(p.lastRank, m-1)
	if seqs == nil {
		return order
	}
	p.lastSeqs = append(p.lastSeqs, seqs...)
	rank := int32(0)
	for _, c := range keyed {
		if c.k < m-1 {
			p.lastRank[c.k] = rank
			rank++
		}
	}
	return order
}

// ascending reports whether xs is strictly ascending.
func ascending(xs []int) bool {
	for i := 1; i < len(xs); i++ {
		if xs[i] <= xs[i-1] {
			return false
		}
	}
	return true
}

// sortFrom writes into keyed the kernels ordered by centre, starting from
// the last fit's order (see sortCentres), given the observations'
// suggestion numbers seqs (ascending), and reports whether it could: the
// last fit had suggestion numbers, and the kernels of the trials both
// fits have are still in order.
func (p *parzen) sortFrom(seqs []int, keyed []centre) bool {
	last := p.lastSeqs
	if len(last) == 0 {
		return false
	}
	// Each kernel of a trial the last fit had goes to its place then;
	// the others are fresh.
	slots := resize(p.slots, len(last))
	p.slots = slots
	for i := range slots {
		slots[i] = -1
	}
	fresh := p.fresh[:0]
	i := 0
	for k, seq := range seqs {
		for i < len(last) && last[i] < seq {
			i++
		}
		if i < len(last) && last[i] == seq {
			slots[p.lastRank[i]] = int32(k)
			i++
			continue
		}
		fresh = append(fresh, centre{p.mu[k], k})
	}
	prior := len(p.mu) - 1
	fresh = append(fresh, centre{p.mu[prior], prior})
	p.fresh = fresh
	kept := p.kept[:0]
	for _, k := range slots {
		if k < 0 {
			continue
		}
		c := centre{p.mu[k], int(k)}
		if len(kept) > 0 && !kept[len(kept)-1].before(c) {
			return false // not the same centres: sort them all
		}
		kept = append(kept, c)
	}
	p.kept = kept
	sortCentres(fresh)
	// Merge the two ordered lists.
	a, b := 0, 0
	for j := range keyed {
		if b == len(fresh) || (a < len(kept) && kept[a].before(fresh[b])) {
			keyed[j] = kept[a]
			a++
		} else {
			keyed[j] = fresh[b]
			b++
		}
	}
	return true
}

// before orders centres by value, then by index (centres are never NaN:
// column leaves NaN coordinates out).
func (a centre) before(b centre) bool {
	return a.mu < b.mu || (!(a.mu > b.mu) && a.k < b.k)
}

// sortCentres sorts cs by before: a quicksort, with insertion sort for
// short runs, that is several times faster than slices.SortFunc here,
// where it compares through a function value, and a parzen sorts its up
// to maxBad+1 centres at every fit.
func sortCentres(cs []centre) {
	for len(cs) > 12 {
		// Median of three as the pivot, at cs[mid].
		mid, last := len(cs)/2, len(cs)-1
		if cs[mid].before(cs[0]) {
			cs[mid], cs[0] = cs[0], cs[mid]
		}
		if cs[last].before(cs[0]) {
			cs[last], cs[0] = cs[0], cs[last]
		}
		if cs[last].before(cs[mid]) {
			cs[last], cs[mid] = cs[mid], cs[last]
		}
		pivot := cs[mid]
		i, j := 0, last
		for i <= j {
			for cs[i].before(pivot) {
				i++
			}
			for pivot.before(cs[j]) {
				j--
			}
			if i <= j {
				cs[i], cs[j] = cs[j], cs[i]
				i++
				j--
			}
		}
		// Recurse into the shorter part, loop on the longer.
		if j+1 < len(cs)-i {
			sortCentres(cs[:j+1])
			cs = cs[i:]
		} else {
			sortCentres(cs[i:])
			cs = cs[:j+1]
		}
	}
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].before(cs[j-1]); j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

// massMemo remembers logNormMass's values per dim and trial. A searcher
// refits its densities at every suggestion, mostly over the same trials
// with the same widths, so most kernels' masses inside the range were
// computed before. A value is reused only for the same arguments. The nil
// *massMemo computes every value.
type massMemo struct {
	byDim [][]massEntry // [dim][trial's suggestion number]
}

// massEntry is one remembered value: logNormMass(a, b) = v.
type massEntry struct{ a, b, v float64 }

// of returns logNormMass(a, b) for the kernel of trial seq (negative: the
// prior) in dim.
func (mm *massMemo) of(dim, seq int, a, b float64) float64 {
	if mm == nil || seq < 0 {
		return logNormMass(a, b)
	}
	for len(mm.byDim) <= dim {
		mm.byDim = append(mm.byDim, nil)
	}
	es := mm.byDim[dim]
	if seq < len(es) {
		if e := es[seq]; e.a == a && e.b == b {
			return e.v
		}
	}
	for len(es) <= seq {
		es = append(es, massEntry{a: math.NaN()}) // matches no arguments
	}
	mm.byDim[dim] = es
	v := logNormMass(a, b)
	es[seq] = massEntry{a, b, v}
	return v
}

// logMemo returns math.Log of its last argument again without computing
// it.
type logMemo struct {
	x, log0 float64
	ok      bool
}

func (l *logMemo) log(x float64) float64 {
	if !l.ok || x != l.x {
		l.x, l.log0, l.ok = x, math.Log(x), true
	}
	return l.log0
}

// sample draws one point: a kernel by weight, then a value from it by
// inverting its truncated CDF. It uses exactly two draws from r.
func (p *parzen) sample(r *rand.Rand) float64 {
	u := r.Float64() * p.cum[len(p.cum)-1]
	k := sort.Search(len(p.cum), func(i int) bool { return p.cum[i] > u })
	k = min(k, len(p.cum)-1)
	mu, s := p.mu[k], p.sigma[k]
	pa, pb := stdCDF((p.lo-mu)/s), stdCDF((p.hi-mu)/s)
	x := mu + s*stdInvCDF(pa+r.Float64()*(pb-pa))
	if math.IsNaN(x) {
		x = mu
	}
	return clamp(x, p.lo, p.hi)
}

// logPDF returns the log density at z. Within [lo, hi], for a fit whose
// terms are all representable (see setDirect), it adds the kernels'
// densities directly, each e^(−u²/2) by expNeg (u² above 700 taken as
// 700), over the kernels the grid lists for z (every kernel without a
// grid): a result within about 1e-13 of logPDFExact's (each term within a
// few units in the last place, each kernel left out below
// e^(expCut−gridSlack) of the largest term), at a fraction of its cost,
// math.Exp being most of that.
func (p *parzen) logPDF(z float64) float64 {
	if !p.direct || !(z >= p.lo && z <= p.hi) {
		return p.logPDFExact(z)
	}
	sum := 0.0
	if g := &p.grid; g.words > 0 {
		for w, word := range g.bits[g.cell(z-p.lo)*g.words:][:g.words] {
			for word != 0 {
				k := w<<6 | bits.TrailingZeros64(word)
				word &= word - 1
				u := (z - p.mu[k]) * p.scale[k]
				sum += p.coef[k] * expNeg(min(u*u, 700))
			}
		}
	} else {
		for k, mu := range p.mu {
			u := (z - mu) * p.scale[k]
			sum += p.coef[k] * expNeg(min(u*u, 700))
		}
	}
	return math.Log(sum)
}

// logPDFExact returns the log density at z from the log terms of every
// kernel, with logSumExp's cut.
func (p *parzen) logPDFExact(z float64) float64 {
	m := math.Inf(-1)
	for k := range p.mu {
		x := p.logc[k] + logStdPDF((z-p.mu[k])/p.sigma[k])
		p.buf[k] = x
		if x > m || x != x {
			m = x
		}
	}
	return logSumExpMax(p.buf, m)
}

// directLogc bounds the log coefficients logPDF adds directly, so that no
// term overflows, the prior's term (at least e^(−directLogc)·φ(1/2) within
// the range) keeps the sum positive, and a term whose u² logPDF takes as
// 700 is below e^(−299) of the sum.
const directLogc = 200

// setDirect prepares logPDF's direct sums: each kernel's coefficient
// e^logc/√(2π) and the inverse of σ√2, if every centre is finite, every
// width positive and finite, every logc at most directLogc and the
// prior's at least −directLogc; otherwise logPDF uses logPDFExact.
func (p *parzen) setDirect() {
	m := len(p.mu)
	p.direct = false
	span := p.hi - p.lo
	if !(span > 0) || math.IsInf(span, 1) || !(p.logc[m-1] >= -directLogc) {
		return
	}
	for k := range m {
		mu, s, c := p.mu[k], p.sigma[k], p.logc[k]
		if math.IsInf(mu, 0) || mu != mu || !(s > 0) || math.IsInf(s, 1) || !(c <= directLogc) {
			return
		}
	}
	p.coef, p.scale = resize(p.coef, m), resize(p.scale, m)
	for k := range m {
		p.coef[k] = math.Exp(p.logc[k] - logSqrt2Pi)
		p.scale[k] = 1 / (p.sigma[k] * math.Sqrt2)
	}
	p.direct = true
}

// expNegBits holds the bits of 2^(−i/256) for i in [0, 256); it is read
// only.
var expNegBits = func() (t [256]uint64) {
	for i := range t {
		t[i] = math.Float64bits(math.Exp2(-float64(i) / 256))
	}
	return t
}()

// expNeg returns e^(−v) for v in [0, 700], within a few units in the last
// place: v = (256q + i)·ln2/256 + r with |r| ≤ ln2/512, and e^(−v) =
// 2^(−q)·2^(−i/256)·e^(−r), the last by its Taylor polynomial of degree 4
// (whose error, r⁵/5!, is below 4e-17). Inlined in logPDF's loop it costs
// a fraction of math.Exp.
func expNeg(v float64) float64 {
	const (
		shift  = 0x1.8p52 // adding it rounds to an integer, kept in the low bits
		invLn2 = 256 / math.Ln2
		ln2Hi  = 6.93147180369123816490e-01 / 256 // math.Exp's split of ln 2, /256:
		ln2Lo  = 1.90821492927058770002e-10 / 256 // n·ln2Hi is exact for n < 2^20
	)
	t := v*invLn2 + shift
	n := math.Float64bits(t) // round(v·256/ln2) in the low bits
	t -= shift
	r := v - t*ln2Hi - t*ln2Lo
	return math.Float64frombits(expNegBits[n&255]-n>>8<<52) * (1 - r*(1-r*(1./2-r*(1./6-r*(1./24)))))
}

// gridCells is the number of equal cells a kernelGrid divides the range
// into, and gridMin the fewest kernels a parzen indexes with one: with
// fewer, the kernels are wide and the grid saves little.
const (
	gridCells = 64
	gridMin   = 32
)

// gridSlack is how far, in log terms, below the cut a kernel's term may be
// and the kernel still be listed: it covers the rounding of the terms and
// of the bounds below many times over.
const gridSlack = 0.5

// kernelGrid lists, for each of gridCells equal cells of a parzen's
// range, the kernels whose term may be within e^(expCut−gridSlack) of the
// largest term at some point of the cell, as a set of kernel indices.
//
// At z in [lo, hi] the prior kernel's term, logc_p + log φ((z − mid)/range),
// is at least logc_p + log φ(1/2), since z is within half the range of the
// middle. The largest term is at least that, so a kernel k matters at z
// only if logc_k + log φ(u) ≥ floor = logc_p + log φ(1/2) + expCut −
// gridSlack, u = (z − μ_k)/σ_k, that is if |z − μ_k| ≤ σ_k·√(2(logc_k −
// log √(2π) − floor)): its reach. A cell lists every kernel whose reach
// meets it (the prior, whose reach is the whole range, included). Cell
// indices are monotone in the offset from lo, so z's cell is between those
// of a reach's ends whenever z is within the reach by more than rounding,
// which gridSlack ensures for every kernel whose term can matter.
type kernelGrid struct {
	width      float64  // of a cell
	words      int      // per cell; 0: no grid, logPDF computes every term
	bits       []uint64 // cell c's set is bits[c·words : (c+1)·words]
	start, end []uint64 // scratch: the kernels whose reach starts, ends in a cell
}

// cell returns the index of the cell at offset d from the range's low
// end, clamped to the cells; it is monotone in d.
func (g *kernelGrid) cell(d float64) int {
	switch v := d / g.width; {
	case v <= 0:
		return 0
	case v >= gridCells-1:
		return gridCells - 1
	default:
		return int(v)
	}
}

// build indexes p's kernels, or leaves p without a grid when it has few
// kernels or a value the bound above does not hold for (a range that is
// empty or not finite, a centre or width that is not finite, a width that
// is not positive, a NaN or +Inf logc).
func (g *kernelGrid) build(p *parzen) {
	g.words = 0
	m := len(p.mu)
	span := p.hi - p.lo
	if m < gridMin || !(span > 0) || math.IsInf(span, 1) {
		return
	}
	for k := range m {
		mu, s, c := p.mu[k], p.sigma[k], p.logc[k]
		if math.IsInf(mu, 0) || mu != mu || !(s > 0) || math.IsInf(s, 1) || c != c || math.IsInf(c, 1) {
			return
		}
	}
	prior := m - 1
	floor := p.logc[prior] + logStdPDF(0.5) + expCut - gridSlack
	words := (m + 63) / 64
	g.width = span / gridCells
	g.bits = resize(g.bits, gridCells*words)
	g.start, g.end = resize(g.start, gridCells*words), resize(g.end, gridCells*words)
	clear(g.start)
	clear(g.end)
	for k := range m {
		a, b := 0, gridCells-1 // the prior's reach covers the range
		if k != prior {
			r2 := 2 * (p.logc[k] - logSqrt2Pi - floor)
			if !(r2 >= 0) {
				continue // below the floor everywhere
			}
			r := p.sigma[k] * math.Sqrt(r2)
			a, b = g.cell(p.mu[k]-r-p.lo), g.cell(p.mu[k]+r-p.lo)
		}
		bit := uint64(1) << (k & 63)
		g.start[a*words+k>>6] |= bit
		g.end[b*words+k>>6] |= bit
	}
	for w := range words {
		var cur uint64
		for c := range gridCells {
			i := c*words + w
			cur |= g.start[i]
			g.bits[i] = cur
			cur &^= g.end[i]
		}
	}
	g.words = words
}

// logMass returns the log of the probability of [z1, z2].
func (p *parzen) logMass(z1, z2 float64) float64 {
	for k := range p.mu {
		s := p.sigma[k]
		p.buf[k] = p.logm[k] + logNormMass((z1-p.mu[k])/s, (z2-p.mu[k])/s)
	}
	return logSumExp(p.buf)
}

// categorical is the Parzen estimator of a categorical parameter: a mixture
// with one kernel per observation, which puts weight 1 on the observed
// category and priorWeight/(n+1) on every category (then normalised), and a
// prior kernel that is uniform; kernel weights as for numeric parameters.
type categorical struct {
	logp []float64
	cum  []float64
}

// newCategorical fits an estimator over nc categories to observed indices
// xs with weights ws.
func newCategorical(xs, ws []float64, nc int, priorWeight float64) *categorical {
	n := len(xs)
	total := priorWeight
	for _, w := range ws {
		total += w
	}
	fill := priorWeight / float64(n+1)
	row := fill*float64(nc) + 1 // an observation kernel's unnormalised mass
	p := make([]float64, nc)
	for c := range p {
		p[c] = priorWeight / total / float64(nc) // the prior kernel
	}
	for i, x := range xs {
		w := ws[i] / total
		for c := range p {
			p[c] += w * fill / row
		}
		p[int(x)] += w / row
	}
	cat := &categorical{logp: make([]float64, nc), cum: make([]float64, nc)}
	acc := 0.0
	for c, v := range p {
		cat.logp[c] = math.Log(v)
		acc += v
		cat.cum[c] = acc
	}
	return cat
}

// sample draws a category index with one draw from r.
func (c *categorical) sample(r *rand.Rand) int {
	u := r.Float64() * c.cum[len(c.cum)-1]
	k := sort.Search(len(c.cum), func(i int) bool { return c.cum[i] > u })
	return min(k, len(c.cum)-1)
}

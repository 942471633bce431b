package tpe

import (
	"math"
	"math/rand/v2"
	"slices"
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
}

// centre is a kernel's centre and index, for sorting.
type centre struct {
	mu float64
	k  int
}

// newParzen fits an estimator to observations xs (internal coordinates in
// [lo, hi]) with weights ws (same length, positive). Bandwidths follow
// Optuna's univariate rule: each kernel's σ is the larger distance to its
// neighbours among the sorted centres (prior centre included) and the
// range ends; without considerEndpoints the outermost kernels use their
// inner neighbour only. σ is then clipped to [range/min(100, n+2), range],
// n being the number of observations. The kernels of observations marked
// narrow (nil: none) take the smallest width, range/min(100, n+2). mass
// (nil: none) remembers kernel masses of dim by the observations'
// suggestion numbers seqs (nil: none).
func newParzen(xs, ws []float64, lo, hi, priorWeight float64, considerEndpoints bool, narrow []bool, mass *massMemo, dim int, seqs []int) *parzen {
	n := len(xs)
	span := hi - lo
	prior := (lo + hi) / 2
	mu := append(slices.Clone(xs), prior)

	// Neighbour distances over the sorted centres, prior included.
	m := len(mu)
	// By centre, ties in index order (what a stable sort gives, done as a
	// faster unstable sort of distinct (centre, index) keys).
	keyed := make([]centre, m)
	for k, v := range mu {
		keyed[k] = centre{v, k}
	}
	slices.SortFunc(keyed, func(a, b centre) int {
		switch {
		case a.mu < b.mu:
			return -1
		case a.mu > b.mu:
			return 1
		}
		return a.k - b.k
	})
	order := make([]int, m)
	for i, c := range keyed {
		order[i] = c.k
	}
	ends := make([]float64, m+2)
	ends[0], ends[m+1] = lo, hi
	for i, k := range order {
		ends[i+1] = mu[k]
	}
	sigma := make([]float64, m)
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

	p := &parzen{lo: lo, hi: hi, mu: mu, sigma: sigma,
		logc: make([]float64, m), logm: make([]float64, m), cum: make([]float64, m), buf: make([]float64, m)}
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
	return p
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

// logPDF returns the log density at z.
func (p *parzen) logPDF(z float64) float64 {
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

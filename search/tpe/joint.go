package tpe

import (
	"math"
	"math/rand/v2"
	"sort"
)

// joint is the multivariate Parzen estimator of a group of dims: a mixture
// of product kernels, one per observation plus a prior kernel, with shared
// mixture weights (Optuna's multivariate TPE). A numeric dim's component of
// kernel k is a normal truncated to the dim's range, centred on the
// observation with the width jointWidth gives (the prior's: the middle of
// the range, the whole range); a categorical dim's component is the
// smoothed categorical distribution of the univariate estimator.
type joint struct {
	dims []*dim
	cum  []float64 // cumulative normalised kernel weights, for sampling
	logw []float64 // log normalised kernel weights
	// Per dim d, per kernel k: numeric dims have mu, sigma, logZ (the log
	// of the kernel's mass inside the range) and logc = −log σ − logZ;
	// categorical ones a catKernels.
	mu, sigma, logZ, logc [][]float64
	cats                  []*catKernels
	buf, cbuf             []float64
	// cells caches, per quantized dim, each kernel's log mass of a cell
	// (keyed by the cell's lower end) less its logZ: the candidates of one
	// suggestion fall in few cells, and the masses cost two erfc each.
	cells []map[float64][]float64
	// uniq holds, per quantized dim, the distinct (mu, sigma) of its
	// kernels and each kernel's index among them: observations of a
	// quantized dim take few values, so its masses are computed once per
	// distinct kernel.
	uniq []*uniqKernels
}

// uniqKernels are the distinct (mu, sigma) pairs of a dim's kernels.
type uniqKernels struct {
	mu, sigma []float64
	of        []int // kernel k's pair is (mu[of[k]], sigma[of[k]])
}

// newUniqKernels groups the kernels (mu[k], sg[k]) by pair, in the order
// each pair first appears.
func newUniqKernels(mu, sg []float64) *uniqKernels {
	u := &uniqKernels{of: make([]int, len(mu))}
	seen := map[[2]float64]int{}
	for k := range mu {
		key := [2]float64{mu[k], sg[k]}
		i, ok := seen[key]
		if !ok {
			i = len(u.mu)
			seen[key] = i
			u.mu, u.sigma = append(u.mu, mu[k]), append(u.sigma, sg[k])
		}
		u.of[k] = i
	}
	return u
}

// sqrt12 is √12, the ratio of a uniform distribution's range to its
// standard deviation.
const sqrt12 = 3.4641016151377544

// jointWidth returns the width of the observation kernels of dim di (of d
// dims in the group) fitted to xs, liar marking the pending trials: the
// smaller of Optuna's multivariate rule, 0.2·n^(−1/(d+4))·range for n
// observations, and the same rule with the observations' spread in place
// of the range, 0.2·√12·s·m^(−1/(d+4)) for the standard deviation s of the
// m ≥ 2 observed (not liar) coordinates, rounded by onGrid; clipped to
// [minSigma, range].
// The two agree on points spread uniformly over the range (s = range/√12);
// as the good trials gather round an optimum, the second narrows with
// them, as a kernel density estimate with Scott's rule does (BOHB's), so
// that late suggestions refine rather than keep sampling a fixed fraction
// of the range. When the observations carry weights of their own (own,
// not nil: the good ones with several objectives, weighted by hypervolume
// contribution), s is their weighted standard deviation and m their
// effective number, (Σw)²/Σw² (a weighted kernel density estimate's
// Scott rule), so that observations of almost no weight, the dominated
// ones, do not widen the kernels of the front.
func jointWidth(xs [][]float64, liar []bool, own []float64, di, d int, span, minSigma float64) float64 {
	exp := -1 / float64(d+4)
	w := 0.2 * math.Pow(float64(max(len(xs), 1)), exp) * span
	var sum, wsum, w2, cnt float64
	wt := func(k int) float64 {
		if own != nil {
			return own[k]
		}
		return 1
	}
	for k, x := range xs {
		if !liar[k] {
			sum += wt(k) * x[di]
			wsum += wt(k)
			w2 += wt(k) * wt(k)
			cnt++
		}
	}
	if cnt >= 2 {
		mean, ss := sum/wsum, 0.0
		for k, x := range xs {
			if !liar[k] {
				ss += wt(k) * (x[di] - mean) * (x[di] - mean)
			}
		}
		m := wsum * wsum / w2 // the effective number of observations
		if a := 0.2 * sqrt12 * math.Sqrt(ss/wsum) * math.Pow(m, exp); a < w {
			w = onGrid(a)
		}
	}
	return clamp(w, minSigma, span)
}

// onGrid rounds a positive width to the nearest of the widths 2^(k/8),
// k an integer (steps of 9%): a spread that drifts by a little from one
// fit to the next keeps its width, and with it the kernels' masses that
// the searcher remembers across fits (massMemo).
func onGrid(w float64) float64 {
	if !(w > 0) || math.IsInf(w, 1) {
		return w
	}
	return math.Exp2(math.Round(8*math.Log2(w)) / 8)
}

// newJoint fits the estimator of dims (the dims at indices idx of each
// row's coordinates) to the rows that have a coordinate for each of them;
// mass (nil: none) remembers the kernels' masses by dim index and the
// rows' suggestion numbers.
func newJoint(dims []*dim, idx []int, rows []row, priorWeight float64, mass *massMemo) *joint {
	var xs [][]float64
	var liar []bool
	var seqs []int
	var own []float64 // the rows' own weights, if they carry them
	for _, r := range rows {
		x := make([]float64, len(idx))
		ok := true
		for j, k := range idx {
			if x[j] = r.x[k]; math.IsNaN(x[j]) {
				ok = false
				break
			}
		}
		if ok {
			xs = append(xs, x)
			liar = append(liar, r.liar)
			seqs = append(seqs, r.seq)
			own = append(own, r.w)
		}
	}
	n := len(xs)
	m := n + 1 // kernels, the prior last
	w := append(recencyWeights(n), priorWeight)
	if n > 0 && own[0] > 0 {
		w = append(own, priorWeight)
	}
	if n == 0 {
		w[0] = 1
	}
	total := 0.0
	for _, v := range w {
		total += v
	}
	j := &joint{dims: dims, cum: make([]float64, m), logw: make([]float64, m), buf: make([]float64, m),
		mu: make([][]float64, len(dims)), sigma: make([][]float64, len(dims)), logZ: make([][]float64, len(dims)), logc: make([][]float64, len(dims)),
		cats: make([]*catKernels, len(dims)), uniq: make([]*uniqKernels, len(dims))}
	acc := 0.0
	for k, v := range w {
		acc += v / total
		j.cum[k] = acc
		j.logw[k] = math.Log(v / total)
	}
	for di, d := range dims {
		if d.categorical() {
			nc := len(d.cats)
			fill := priorWeight / float64(m)
			rowMass := fill*float64(nc) + 1
			ck := &catKernels{n: nc, obs: make([]int, m), pFill: fill / rowMass, pPrior: 1 / float64(nc)}
			ck.pHit = ck.pFill + 1/rowMass
			ck.lpFill, ck.lpHit, ck.lpPrior = math.Log(ck.pFill), math.Log(ck.pHit), math.Log(ck.pPrior)
			for k := range m {
				ck.obs[k] = -1 // the prior: uniform
				if k < n {
					ck.obs[k] = int(xs[k][di])
				}
			}
			j.cats[di] = ck
			if len(j.cbuf) < nc {
				j.cbuf = make([]float64, nc)
			}
			continue
		}
		span := d.hi - d.lo
		minSigma := span / math.Min(100, float64(n+2))
		var ownW []float64
		if n > 0 && own[0] > 0 {
			ownW = own
		}
		sigma := jointWidth(xs, liar, ownW, di, len(dims), span, minSigma)
		mu, sg, lz, lc := make([]float64, m), make([]float64, m), make([]float64, m), make([]float64, m)
		for k := range m {
			if k == n {
				mu[k], sg[k] = (d.lo+d.hi)/2, span
			} else {
				mu[k], sg[k] = xs[k][di], sigma
				if liar[k] {
					sg[k] = minSigma // a liar marks its own point only
				}
			}
			if !(sg[k] > 0) {
				sg[k] = 1 // a one-point range: any width samples that point
			}
		}
		if d.quantized() {
			u := newUniqKernels(mu, sg)
			ulz := make([]float64, len(u.mu))
			for i := range ulz {
				ulz[i] = logNormMass((d.lo-u.mu[i])/u.sigma[i], (d.hi-u.mu[i])/u.sigma[i])
			}
			for k := range m {
				lz[k] = ulz[u.of[k]]
			}
			j.uniq[di] = u
		} else {
			for k := range m {
				seq := -1 // the prior
				if k < n {
					seq = seqs[k]
				}
				lz[k] = mass.of(idx[di], seq, (d.lo-mu[k])/sg[k], (d.hi-mu[k])/sg[k])
			}
		}
		var ls logMemo // most kernels share one width
		for k := range m {
			lc[k] = -ls.log(sg[k]) - lz[k]
		}
		j.mu[di], j.sigma[di], j.logZ[di], j.logc[di] = mu, sg, lz, lc
	}
	return j
}

// catKernels are the components of a categorical dim's kernels: kernel k
// puts pHit on its observation's category obs[k] and pFill on each other
// one; the prior kernel (obs −1) puts pPrior on each.
type catKernels struct {
	n                      int // categories
	obs                    []int
	pFill, pHit, pPrior    float64
	lpFill, lpHit, lpPrior float64
}

// logp returns kernel k's log probability of category c.
func (ck *catKernels) logp(k, c int) float64 {
	switch ck.obs[k] {
	case -1:
		return ck.lpPrior
	case c:
		return ck.lpHit
	}
	return ck.lpFill
}

// cum writes kernel k's cumulative probabilities into buf and returns
// them.
func (ck *catKernels) cum(k int, buf []float64) []float64 {
	buf = buf[:ck.n]
	a := 0.0
	for c := range buf {
		v := ck.pFill
		switch ck.obs[k] {
		case -1:
			v = ck.pPrior
		case c:
			v = ck.pHit
		}
		a += v
		buf[c] = a
	}
	return buf
}

// cellMass returns, per kernel, the log mass of the cell [z1, z2] of
// quantized dim di less the kernel's logZ, computed once per cell.
func (j *joint) cellMass(di int, z1, z2 float64) []float64 {
	if j.cells == nil {
		j.cells = make([]map[float64][]float64, len(j.dims))
	}
	if j.cells[di] == nil {
		j.cells[di] = map[float64][]float64{}
	}
	if v, ok := j.cells[di][z1]; ok {
		return v
	}
	u, lz := j.uniq[di], j.logZ[di]
	mass := make([]float64, len(u.mu))
	for i := range mass {
		mass[i] = logNormMass((z1-u.mu[i])/u.sigma[i], (z2-u.mu[i])/u.sigma[i])
	}
	v := make([]float64, len(lz))
	for k := range v {
		v[k] = mass[u.of[k]] - lz[k]
	}
	j.cells[di][z1] = v
	return v
}

// sample draws a kernel, then each dim's coordinate from that kernel's
// component, into x: a category index for categorical dims, the snapped
// value's coordinate for numeric ones (see value). It uses one draw from r
// for the kernel and one per dim.
func (j *joint) sample(r *rand.Rand, x []float64) {
	k := pick(j.cum, r.Float64())
	for di, d := range j.dims {
		u := r.Float64()
		if d.categorical() {
			x[di] = float64(pick(j.cats[di].cum(k, j.cbuf), u))
			continue
		}
		mu, s := j.mu[di][k], j.sigma[di][k]
		pa, pb := stdCDF((d.lo-mu)/s), stdCDF((d.hi-mu)/s)
		z := mu + s*stdInvCDF(pa+u*(pb-pa))
		if math.IsNaN(z) {
			z = mu
		}
		x[di] = d.snap(d.inv(clamp(z, d.lo, d.hi)))
	}
}

// pick returns the first index whose cumulative weight exceeds u times the
// total.
func pick(cum []float64, u float64) int {
	u *= cum[len(cum)-1]
	k := sort.Search(len(cum), func(i int) bool { return cum[i] > u })
	return min(k, len(cum)-1)
}

// logPDF returns the log density (with probability masses for quantized
// and categorical dims) of a sampled x.
func (j *joint) logPDF(x []float64) float64 {
	cont := 0 // dims scored by their density
	for k := range j.buf {
		j.buf[k] = j.logw[k]
	}
	for di, d := range j.dims {
		if d.categorical() {
			c := int(x[di])
			for k := range j.buf {
				j.buf[k] += j.cats[di].logp(k, c)
			}
			continue
		}
		mu, sg := j.mu[di], j.sigma[di]
		if d.quantized() {
			if z1, z2 := d.cell(x[di]); z2 > z1 {
				for k, v := range j.cellMass(di, z1, z2) {
					j.buf[k] += v
				}
				continue
			}
		}
		cont++
		z, lc := clamp(d.fwd(x[di]), d.lo, d.hi), j.logc[di]
		for k := range j.buf {
			u := (z - mu[k]) / sg[k]
			j.buf[k] += lc[k] - 0.5*u*u
		}
	}
	// Each density factor's −log √(2π), left out of the sum above.
	return logSumExp(j.buf) - logSqrt2Pi*float64(cont)
}

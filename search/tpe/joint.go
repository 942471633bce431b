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
// observation with the width 0.2·n^(−1/(d+4))·range clipped to
// [range/min(100, n+2), range] (the prior's: the middle of the range, the
// whole range); a categorical dim's component is the smoothed categorical
// distribution of the univariate estimator.
type joint struct {
	dims []*dim
	cum  []float64 // cumulative normalised kernel weights, for sampling
	logw []float64 // log normalised kernel weights
	// Per dim d, per kernel k: numeric dims have mu, sigma, logZ (the log
	// of the kernel's mass inside the range) and logc = −log σ − logZ;
	// categorical ones logp (log probability per category) and cumc
	// (cumulative probabilities).
	mu, sigma, logZ, logc [][]float64
	logp, cumc            [][][]float64
	buf                   []float64
}

// newJoint fits the estimator of dims (the dims at indices idx of each
// row's coordinates) to the rows that have a coordinate for each of them.
func newJoint(dims []*dim, idx []int, rows []row, priorWeight float64) *joint {
	var xs [][]float64
	var liar []bool
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
		}
	}
	n := len(xs)
	m := n + 1 // kernels, the prior last
	w := append(recencyWeights(n), priorWeight)
	if n == 0 {
		w[0] = 1
	}
	total := 0.0
	for _, v := range w {
		total += v
	}
	j := &joint{dims: dims, cum: make([]float64, m), logw: make([]float64, m), buf: make([]float64, m),
		mu: make([][]float64, len(dims)), sigma: make([][]float64, len(dims)), logZ: make([][]float64, len(dims)), logc: make([][]float64, len(dims)),
		logp: make([][][]float64, len(dims)), cumc: make([][][]float64, len(dims))}
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
			j.logp[di] = make([][]float64, m)
			j.cumc[di] = make([][]float64, m)
			for k := range m {
				p := make([]float64, nc)
				if k == n { // the prior: uniform
					for c := range p {
						p[c] = 1 / float64(nc)
					}
				} else {
					rowMass := fill*float64(nc) + 1
					for c := range p {
						p[c] = fill / rowMass
					}
					p[int(xs[k][di])] += 1 / rowMass
				}
				lp, cp := make([]float64, nc), make([]float64, nc)
				a := 0.0
				for c, v := range p {
					lp[c] = math.Log(v)
					a += v
					cp[c] = a
				}
				j.logp[di][k], j.cumc[di][k] = lp, cp
			}
			continue
		}
		span := d.hi - d.lo
		minSigma := span / math.Min(100, float64(n+2))
		sigma := clamp(0.2*math.Pow(float64(max(n, 1)), -1/float64(len(dims)+4))*span, minSigma, span)
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
			lz[k] = logNormMass((d.lo-mu[k])/sg[k], (d.hi-mu[k])/sg[k])
			lc[k] = -math.Log(sg[k]) - lz[k]
		}
		j.mu[di], j.sigma[di], j.logZ[di], j.logc[di] = mu, sg, lz, lc
	}
	return j
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
			x[di] = float64(pick(j.cumc[di][k], u))
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
				j.buf[k] += j.logp[di][k][c]
			}
			continue
		}
		mu, sg, lz := j.mu[di], j.sigma[di], j.logZ[di]
		if d.quantized() {
			if z1, z2 := d.cell(x[di]); z2 > z1 {
				for k := range j.buf {
					j.buf[k] += logNormMass((z1-mu[k])/sg[k], (z2-mu[k])/sg[k]) - lz[k]
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

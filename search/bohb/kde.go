package bohb

import (
	"math"
	"math/rand/v2"
	"slices"
)

// The model works on rows of the "model encoding" of a configuration: one
// coordinate per dimension of the space's unit-cube encoding, where a
// continuous (or integer, or quantized) dimension keeps its unit-cube value
// in [0, 1] and a categorical dimension holds the index of its category, 0
// to c-1, as a float64 (HpBandSter's vartypes 'c' and 'u').

// kde is a product-kernel density estimate over model-encoded rows, as
// statsmodels' KDEMultivariate computes it: pdf(x) = (1/n) Σ_i Π_j K_j(x_j,
// X_ij), with a plain (not truncated) Gaussian kernel of bandwidth bw_j for
// continuous dimensions and an Aitchison-Aitken kernel for categorical
// ones.
type kde struct {
	rows [][]float64 // shared with the budget's data; never modified
	bw   []float64   // per dimension, already clipped to >= the minimum bandwidth
	// inv, logHit, logMiss and logC are pdf's factors, computed from bw at
	// its first call (see constants).
	inv, logHit, logMiss []float64
	logC                 float64
}

// bandwidths returns statsmodels' "normal reference" rule of thumb for
// rows (n rows of d coordinates): 1.06 · σ_j · n^(−1/(4+d)) per dimension,
// σ_j the population standard deviation of column j, clipped to at least
// minBW. Categorical columns get the same formula over their index codes,
// as in statsmodels and HpBandSter.
func bandwidths(rows [][]float64, minBW float64) []float64 {
	n := len(rows)
	if n == 0 {
		return nil
	}
	d := len(rows[0])
	factor := 1.06 * math.Pow(float64(n), -1/float64(4+d))
	bw := make([]float64, d)
	for j := range bw {
		var mean float64
		for _, r := range rows {
			mean += r[j]
		}
		mean /= float64(n)
		var ss float64
		for _, r := range rows {
			dv := r[j] - mean
			ss += dv * dv
		}
		bw[j] = max(factor*math.Sqrt(ss/float64(n)), minBW)
	}
	return bw
}

// pdf evaluates the density at x. cats[j] is the number of categories of
// dimension j, 0 for a continuous one.
//
// The Aitchison-Aitken kernel with bandwidth λ gives 1−λ to the row's own
// category and λ/(c−1) to each other one. statsmodels uses λ as is and
// takes c as the number of distinct values in the data; here c is the
// parameter's number of categories and λ is capped at (c−1)/c, where the
// kernel is uniform, so that the density stays a density when the rule of
// thumb gives a large bandwidth (it is computed from index codes, whose
// spread grows with c). A one-category dimension contributes a factor 1.
func (k *kde) pdf(x []float64, cats []int) float64 {
	if len(k.rows) == 0 {
		return 0
	}
	if k.inv == nil {
		k.constants(cats)
	}
	// Each row's product of kernels is computed as one exponential of the
	// sum of their logarithms, the normalising constants folded into logC.
	var sum float64
	for _, r := range k.rows {
		e := k.logC
		for j, xj := range x {
			switch c := cats[j]; c {
			case 0:
				z := (xj - r[j]) * k.inv[j]
				e -= 0.5 * z * z
			case 1:
			default:
				if xj == r[j] {
					e += k.logHit[j]
				} else {
					e += k.logMiss[j]
				}
			}
		}
		sum += math.Exp(e)
	}
	return sum / float64(len(k.rows))
}

// constants computes pdf's per-dimension factors once: 1/bw for a
// continuous dimension, whose normalising constant 1/(√(2π)·bw) joins
// logC, and for a categorical one the logarithms of the probabilities of
// the row's own category (1−λ) and of each other one (λ/(c−1)).
func (k *kde) constants(cats []int) {
	d := len(k.bw)
	k.inv, k.logHit, k.logMiss = make([]float64, d), make([]float64, d), make([]float64, d)
	k.logC = 0
	for j, c := range cats[:d] {
		switch {
		case c == 0:
			k.inv[j] = 1 / k.bw[j]
			k.logC -= math.Log(math.Sqrt(2*math.Pi) * k.bw[j])
		case c > 1:
			lam := min(k.bw[j], float64(c-1)/float64(c))
			k.logHit[j], k.logMiss[j] = math.Log(1-lam), math.Log(lam/float64(c-1))
		}
	}
}

// model is the pair of densities fit on one budget's observations.
type model struct {
	budget    float64
	good, bad kde
}

// splitSizes returns HpBandSter's sizes of the good and bad sets for n
// observations: n_good = max(minPoints, topN·n/100) and n_bad =
// max(minPoints, (100−topN)·n/100), both with integer division.
func splitSizes(n, minPoints, topN int) (nGood, nBad int) {
	return max(minPoints, topN*n/100), max(minPoints, (100-topN)*n/100)
}

// fit builds the model of one budget's observations (rows and their
// losses, in the order they were observed), or returns nil if the good or
// the bad set would have no more rows than dimensions. Observations are
// ranked by loss, ties in observation order; the good set is the best
// n_good, the bad set the next n_bad (fewer if there are not that many).
func fit(budget float64, rows [][]float64, losses []float64, dim, minPoints, topN int, minBW float64) *model {
	n := len(rows)
	if n == 0 || dim == 0 {
		return nil
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case losses[a] < losses[b]:
			return -1
		case losses[a] > losses[b]:
			return 1
		}
		return 0
	})
	nGood, nBad := splitSizes(n, minPoints, topN)
	nGood = min(nGood, n)
	nBad = min(nBad, n-nGood)
	if nGood <= dim || nBad <= dim {
		return nil
	}
	pick := func(ids []int) [][]float64 {
		out := make([][]float64, len(ids))
		for i, id := range ids {
			out[i] = rows[id]
		}
		return out
	}
	good, bad := pick(idx[:nGood]), pick(idx[nGood:nGood+nBad])
	return &model{
		budget: budget,
		good:   kde{rows: good, bw: bandwidths(good, minBW)},
		bad:    kde{rows: bad, bw: bandwidths(bad, minBW)},
	}
}

// truncNormal draws from the normal distribution with mean m and standard
// deviation sd truncated to [0, 1], by inverting the CDF. m is in [0, 1],
// so the interval always holds the mean and the inversion is well
// conditioned.
func truncNormal(r *rand.Rand, m, sd float64) float64 {
	pa, pb := normCDF(-m/sd), normCDF((1-m)/sd)
	p := pa + r.Float64()*(pb-pa)
	return min(max(m+sd*normQuantile(p), 0), 1)
}

// normCDF is the standard normal CDF.
func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// normQuantile is the standard normal quantile function (±Inf at 0 and 1).
func normQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }

package functions

import (
	"math"
	"sort"
)

// The sample the rank statistics of a problem are measured on: RankSize
// configurations drawn uniformly from the search space (RandomConfig with
// keys derived from RankSeed).
const (
	RankSize = 1000
	RankSeed = 16
)

// RandomConfig returns a configuration drawn uniformly from p's space with
// randomness derived from key alone: a float uniform in [Lo, Hi], an
// integer or a category uniform among its values.
func (p *Problem) RandomConfig(key uint64) []float64 {
	x := make([]float64, len(p.Dims))
	for j, d := range p.Dims {
		s := stream(key, uint64(j))
		u := uniform(&s)
		switch {
		case d.Categorical():
			x[j] = math.Floor(u * float64(d.Cats))
		case d.Int:
			x[j] = d.Lo + math.Floor(u*(d.Hi-d.Lo+1))
		default:
			x[j] = d.Lo + u*(d.Hi-d.Lo)
		}
	}
	return x
}

// RankStats says how well a problem's lowest fidelity ranks
// configurations, measured on the RankSize configurations of the rank
// sample: the value each reports at step 1 (one run per configuration,
// noise included) against its true full-fidelity value (True).
type RankStats struct {
	// Spearman is Spearman's rank correlation ρ (ties get their mean
	// rank).
	Spearman float64
	// Crossing is the fraction of pairs of configurations ordered one way
	// at step 1 and the other way at full fidelity: pairs whose learning
	// curves cross at least once between the two.
	Crossing float64
}

// RankStats measures p's rank statistics on the rank sample.
func (p *Problem) RankStats() RankStats {
	low := make([]float64, RankSize)
	high := make([]float64, RankSize)
	for i := range RankSize {
		key := stream(RankSeed, uint64(i))
		x := p.RandomConfig(key)
		low[i] = p.NewRun(x, key).Step()
		high[i] = p.True(x)
	}
	var st RankStats
	st.Spearman = Spearman(low, high)
	crossed := 0
	for i := range RankSize {
		for j := i + 1; j < RankSize; j++ {
			if (low[i]-low[j])*(high[i]-high[j]) < 0 {
				crossed++
			}
		}
	}
	st.Crossing = float64(crossed) / float64(RankSize*(RankSize-1)/2)
	return st
}

// Spearman returns Spearman's rank correlation of a and b (of the same
// length): the Pearson correlation of their ranks, tied values getting
// the mean of their ranks. It is NaN when either is constant.
func Spearman(a, b []float64) float64 {
	ra, rb := ranks(a), ranks(b)
	n := float64(len(a))
	mean := (n + 1) / 2
	var sab, saa, sbb float64
	for i := range ra {
		da, db := ra[i]-mean, rb[i]-mean
		sab += da * db
		saa += da * da
		sbb += db * db
	}
	return sab / math.Sqrt(saa*sbb)
}

// ranks returns the ranks (1-based) of v, ties averaged.
func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return v[idx[i]] < v[idx[j]] })
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		avg := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = avg
		}
		i = j + 1
	}
	return r
}

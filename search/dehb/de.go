package dehb

import (
	"math/rand/v2"
)

// The differential-evolution operators of DEHB's rand1_bin strategy, on
// vectors of the unit cube (one coordinate per dimension of the space's
// unit-cube encoding).

// pick3 draws three distinct indices below n (n >= 3), uniformly, as
// NumPy's choice(n, 3, replace=False) does.
func pick3(r *rand.Rand, n int) (int, int, int) {
	a := r.IntN(n)
	b := r.IntN(n - 1)
	if b >= a {
		b++
	}
	lo, hi := min(a, b), max(a, b)
	c := r.IntN(n - 2)
	if c >= lo {
		c++
	}
	if c >= hi {
		c++
	}
	return a, b, c
}

// mutateRand1 returns the rand/1 mutant r1 + F·(r2 − r3) of three distinct
// members drawn from pool (at least three vectors).
func mutateRand1(r *rand.Rand, pool [][]float64, f float64) []float64 {
	i, j, k := pick3(r, len(pool))
	a, b, c := pool[i], pool[j], pool[k]
	out := make([]float64, len(a))
	for d := range out {
		out[d] = a[d] + f*(b[d]-c[d])
	}
	return out
}

// crossoverBin is binomial crossover: each coordinate comes from the
// mutant with probability cr, else from the target, and at least one
// coordinate (drawn uniformly when none was) comes from the mutant.
func crossoverBin(r *rand.Rand, target, mutant []float64, cr float64) []float64 {
	d := len(target)
	cross := make([]bool, d)
	any := false
	for i := range cross {
		cross[i] = r.Float64() < cr
		any = any || cross[i]
	}
	if !any {
		cross[r.IntN(d)] = true
	}
	out := make([]float64, d)
	for i := range out {
		if cross[i] {
			out[i] = mutant[i]
		} else {
			out[i] = target[i]
		}
	}
	return out
}

// fixBounds replaces every coordinate outside [0, 1] (or NaN) by a uniform
// draw, DEHB's default boundary fix ("random"), in place.
func fixBounds(r *rand.Rand, x []float64) []float64 {
	for i, v := range x {
		if !(v >= 0 && v <= 1) {
			x[i] = r.Float64()
		}
	}
	return x
}

// uniform returns a uniform point of the unit cube of dimension d.
func uniform(r *rand.Rand, d int) []float64 {
	x := make([]float64, d)
	for i := range x {
		x[i] = r.Float64()
	}
	return x
}

package benchutil

import "math"

// Quantile returns the p-quantile of sorted values with linear
// interpolation between order statistics; NaN for no values. +Inf values
// are allowed: a quantile that interpolates towards +Inf is +Inf.
func Quantile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := p * float64(len(sorted)-1)
	lo := int(math.Floor(h))
	hi := min(lo+1, len(sorted)-1)
	a, b := sorted[lo], sorted[hi]
	if a == b || h == float64(lo) {
		return a
	}
	if math.IsInf(b, 1) {
		return math.Inf(1)
	}
	return a + (h-float64(lo))*(b-a)
}

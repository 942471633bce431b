package mofunctions

import "math"

// The hypervolumes of the true fronts with respect to the problems'
// reference points. Where the area or volume has a closed form it is
// used: 1.1² − ∫₀¹ (1 − √t) dt for ZDT1, 1.1² − ∫₀¹ (1 − t²) dt for ZDT2,
// and for DTLZ2 the cube 1.1³ less the unit ball's octant, π/6. ZDT3's is
// the hypervolume of 2·10⁷ points evenly spaced in f₁ on its curve,
// computed with package pareto (converged to about 10⁻⁷).
//
// TrueFront's samples of about 10,000 points come a little below: by
// 5·10⁻⁵ for ZDT1 and ZDT2, 9·10⁻⁵ for ZDT3 and 0.0057 for DTLZ2 (a
// surface needs many more points than a curve); the tests pin these gaps.
const (
	ZDT1FrontHV  = 1.1*1.1 - 1.0/3
	ZDT2FrontHV  = 1.1*1.1 - 2.0/3
	ZDT3FrontHV  = 1.3317628643
	DTLZ2FrontHV = 1.1*1.1*1.1 - math.Pi/6
)

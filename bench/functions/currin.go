package functions

import "math"

// Currin is the Currin et al. (1988) exponential function on [0, 1]²
// (Virtual Library of Simulation Experiments, "curretal88exp"):
//
//	f(x) = [1 − exp(−1/(2 x₂))] · (2300x₁³ + 1900x₁² + 2092x₁ + 60) / (100x₁³ + 500x₁² + 4x₁ + 20)
//
// where the first factor is 1 at x₂ = 0 (its limit). The benchmark
// maximises it: its maximum, CurrinMax, is on the edge x₂ = 0.
func Currin(x1, x2 float64) float64 {
	e := 1.0
	if x2 != 0 {
		e = 1 - math.Exp(-1/(2*x2))
	}
	return e * (((2300*x1+1900)*x1+2092)*x1 + 60) / (((100*x1+500)*x1+4)*x1 + 20)
}

// CurrinLow is the low-fidelity Currin function of Xiong, Qian and Wu
// (2013), the mean of f at four points around x:
//
//	f_L(x) = ¼[f(x₁+0.05, x₂+0.05) + f(x₁+0.05, max(0, x₂−0.05))]
//	       + ¼[f(x₁−0.05, x₂+0.05) + f(x₁−0.05, max(0, x₂−0.05))]
func CurrinLow(x1, x2 float64) float64 {
	lo := math.Max(0, x2-0.05)
	return 0.25*(Currin(x1+0.05, x2+0.05)+Currin(x1+0.05, lo)) +
		0.25*(Currin(x1-0.05, x2+0.05)+Currin(x1-0.05, lo))
}

// The maximum of Currin on [0, 1]² and where it is reached (x₂ = 0; x₁
// maximises the rational factor, found by golden-section search and
// checked by the tests).
const (
	CurrinMax    = 13.798722044728434
	CurrinArgmax = 0.21666666670028595
)

package functions

import "math"

// Park is the first function of Park (1991) on [0, 1]⁴ (Virtual Library
// of Simulation Experiments, "park91a"):
//
//	f(x) = (x₁/2)[√(1 + (x₂ + x₃²)·x₄/x₁²) − 1] + (x₁ + 3x₄)·exp(1 + sin x₃)
//
// computed in the equal form ½[√(x₁² + (x₂ + x₃²)·x₄) − x₁] for the first
// term, which is also defined at x₁ = 0 (its limit there). Every partial
// derivative is positive on the box, so the benchmark, which maximises it,
// has its optimum at the corner (1, 1, 1, 1): ParkMax.
func Park(x1, x2, x3, x4 float64) float64 {
	return 0.5*(math.Sqrt(x1*x1+(x2+x3*x3)*x4)-x1) + (x1+3*x4)*math.Exp(1+math.Sin(x3))
}

// ParkLow is the low-fidelity Park function of Xiong, Qian and Wu (2013):
//
//	f_L(x) = [1 + sin(x₁)/10]·f(x) − 2x₁ + x₂² + x₃² + 0.5
func ParkLow(x1, x2, x3, x4 float64) float64 {
	return (1+math.Sin(x1)/10)*Park(x1, x2, x3, x4) - 2*x1 + x2*x2 + x3*x3 + 0.5
}

// ParkMax is Park's maximum on [0, 1]⁴, at (1, 1, 1, 1): (√3 − 1)/2 +
// 4·exp(1 + sin 1).
var ParkMax = (math.Sqrt(3)-1)/2 + 4*math.Exp(1+math.Sin(1))

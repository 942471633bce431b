package functions

import "math"

// BraninMin is the global minimum of Branin (at full fidelity), reached at
// (−π, 12.275), (π, 2.275) and (9.42478, 2.475).
const BraninMin = 0.397887

// The Branin domain.
const (
	BraninX1Min, BraninX1Max = -5.0, 10.0
	BraninX2Min, BraninX2Max = 0.0, 15.0
)

// Branin is multi-fidelity Branin (Kandasamy et al.) with the scalar
// fidelity s in [0, 1] used for all three fidelity coordinates:
//
//	f = (x₂ − b x₁² + c x₁ − 6)² + 10(1 − t) cos x₁ + 10
//
// with b = 5.1/(4π²) − 0.01(1 − s), c = 5/π − 0.1(1 − s) and
// t = 1/(8π) + 0.005(1 − s). At s = 1 it is plain Branin.
func Branin(x1, x2, s float64) float64 {
	b := 5.1/(4*math.Pi*math.Pi) - 0.01*(1-s)
	c := 5/math.Pi - 0.1*(1-s)
	t := 1/(8*math.Pi) + 0.005*(1-s)
	d := x2 - b*x1*x1 + c*x1 - 6
	return d*d + 10*(1-t)*math.Cos(x1) + 10
}

// BraninCost returns the cost of one evaluation at fidelity s:
// 0.05 + 0.95·s^1.5, so 1 at full fidelity.
func BraninCost(s float64) float64 { return 0.05 + 0.95*math.Pow(s, 1.5) }

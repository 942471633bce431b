package functions

import "math"

// Hartmann6Min is the global minimum of Hartmann-6 (at full fidelity).
const Hartmann6Min = -3.32237

// Hartmann6Argmin is the minimiser of Hartmann-6 in [0, 1]^6.
var Hartmann6Argmin = [6]float64{0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573}

// Hartmann3Min is the global minimum of Hartmann-3 (at full fidelity).
const Hartmann3Min = -3.86278

// Hartmann3Argmin is the minimiser of Hartmann-3 in [0, 1]^3.
var Hartmann3Argmin = [3]float64{0.114614, 0.555649, 0.852547}

// The Hartmann constants (Dixon and Szegö 1978; as in the Virtual Library
// of Simulation Experiments of Surjanovic and Bingham).
var (
	hartmannAlpha = [4]float64{1.0, 1.2, 3.0, 3.2}
	hartmannA     = [4][6]float64{
		{10, 3, 17, 3.5, 1.7, 8},
		{0.05, 10, 17, 0.1, 8, 14},
		{3, 3.5, 1.7, 10, 17, 8},
		{17, 8, 0.05, 10, 0.1, 14},
	}
	hartmannP = [4][6]float64{
		{1312, 1696, 5569, 124, 8283, 5886},
		{2329, 4135, 8307, 3736, 1004, 9991},
		{2348, 1451, 3522, 2883, 3047, 6650},
		{4047, 8828, 8732, 5743, 1091, 381},
	}
	hartmann3A = [4][3]float64{
		{3.0, 10, 30},
		{0.1, 10, 35},
		{3.0, 10, 30},
		{0.1, 10, 35},
	}
	hartmann3P = [4][3]float64{
		{3689, 1170, 2673},
		{4699, 4387, 7470},
		{1091, 8732, 5547},
		{381, 5743, 8828},
	}
)

// Hartmann6 is multi-fidelity Hartmann-6 as in mf-prior-bench: fidelity z
// in [ZMin, ZMax] (3 and 100), s(z) = ln z / ln ZMax,
// α′ = α − Bias·(1 − s), and
//
//	H(x, z) = −Σᵢ α′ᵢ exp(−Σⱼ Aᵢⱼ (xⱼ − Pᵢⱼ·10⁻⁴)²) + |ε|·Noise·(1 − s)
//
// for a standard normal ε. At z = ZMax it is plain Hartmann-6.
type Hartmann6 struct {
	Bias, Noise float64
}

// Fidelity range of the Hartmann functions.
const (
	Hartmann6ZMin = 3.0
	Hartmann6ZMax = 100.0
)

// DefaultHartmann6 returns the benchmark's setting: bias 0.5, noise 0.1.
func DefaultHartmann6() Hartmann6 { return Hartmann6{Bias: 0.5, Noise: 0.1} }

// Value returns H(x, z) for x in [0, 1]^6 with the given standard normal
// draw eps (only |eps| matters).
func (h Hartmann6) Value(x [6]float64, z, eps float64) float64 {
	s := math.Log(z) / math.Log(Hartmann6ZMax)
	var sum float64
	for i := range 4 {
		var inner float64
		for j := range 6 {
			d := x[j] - hartmannP[i][j]*1e-4
			inner += hartmannA[i][j] * d * d
		}
		sum += (hartmannAlpha[i] - h.Bias*(1-s)) * math.Exp(-inner)
	}
	return -sum + math.Abs(eps)*h.Noise*(1-s)
}

// Cost returns the cost of one evaluation at fidelity z:
// 0.05 + 0.95·(z/100)², so 1 at full fidelity.
func (Hartmann6) Cost(z float64) float64 { return hartmannCost(z) }

func hartmannCost(z float64) float64 {
	r := z / Hartmann6ZMax
	return 0.05 + 0.95*r*r
}

// Hartmann3 is multi-fidelity Hartmann-3 as in mf-prior-bench (its
// MFHartmann3 generator): the same construction as Hartmann6 on the
// three-dimensional Hartmann function,
//
//	H(x, z) = −Σᵢ α′ᵢ exp(−Σⱼ Aᵢⱼ (xⱼ − Pᵢⱼ·10⁻⁴)²) + |ε|·Noise·(1 − s)
//
// with s(z) = ln z / ln 100 and α′ = α − Bias·(1 − s); the same fidelity
// range and cost. mf-prior-bench names four (Bias, Noise) presets, found
// empirically by its authors to make the fidelities more or less useful:
// good (2.5, 2), moderate (3, 3), bad (3.5, 4) and terrible (4, 5); its
// default is (0.5, 0.1).
type Hartmann3 struct {
	Bias, Noise float64
}

// The mf-prior-bench presets of Hartmann-3.
var (
	Hartmann3Default  = Hartmann3{Bias: 0.5, Noise: 0.1}
	Hartmann3Good     = Hartmann3{Bias: 2.5, Noise: 2}
	Hartmann3Moderate = Hartmann3{Bias: 3, Noise: 3}
	Hartmann3Bad      = Hartmann3{Bias: 3.5, Noise: 4}
	Hartmann3Terrible = Hartmann3{Bias: 4, Noise: 5}
)

// Value returns H(x, z) for x in [0, 1]^3 with the given standard normal
// draw eps (only |eps| matters).
func (h Hartmann3) Value(x [3]float64, z, eps float64) float64 {
	s := math.Log(z) / math.Log(Hartmann6ZMax)
	var sum float64
	for i := range 4 {
		var inner float64
		for j := range 3 {
			d := x[j] - hartmann3P[i][j]*1e-4
			inner += hartmann3A[i][j] * d * d
		}
		sum += (hartmannAlpha[i] - h.Bias*(1-s)) * math.Exp(-inner)
	}
	return -sum + math.Abs(eps)*h.Noise*(1-s)
}

// Cost returns the cost of one evaluation at fidelity z, as Hartmann6's.
func (Hartmann3) Cost(z float64) float64 { return hartmannCost(z) }

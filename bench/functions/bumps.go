package functions

import "math"

// The sum of bumps is a test function defined here (it comes from no
// publication): ten parameters of three kinds, a landscape of Gaussian
// bumps of different depths, and categorical parameters that scale each
// bump. Its parameters are, in order:
//
//	x0 … x5   floats in [0, 1]
//	k0, k1    integers in 0 … 8
//	a         categorical, 4 categories (0 … 3)
//	b         categorical, 3 categories (0 … 2)
//
// The numerical parameters form z = (x0, …, x5, k0/8, k1/8) in [0, 1]⁸.
// Bump i has a centre μᵢ in [0, 1]⁸ (its last two coordinates multiples
// of 1/8, so that its centre is a configuration), a width σᵢ, a depth wᵢ
// and preferred categories (aᵢ, bᵢ); at full fidelity
//
//	f(x) = −Σᵢ wᵢ · exp(−‖z − μᵢ‖² / (2σᵢ²)) · κ(a, aᵢ) · κ(b, bᵢ)
//
// with κ(c, cᵢ) = 1 if c = cᵢ and 1/2 otherwise, minimised. The centres
// were drawn once from a seeded generator and written down (bumpCentres);
// the deepest bump, 0, holds the minimum, BumpsMin at BumpsArgmin, which
// the other bumps' tails move a little away from μ₀.
//
// Two fidelity-zero functions go with it (see BumpsLow):
//
//   - faithful ("lf"): the same bumps, each 1.5 times as wide: a blurred
//     view of the same landscape;
//   - misleading ("decoy"): the full-fidelity bumps plus a decoy, a broad
//     basin twice as deep as bump 0 (width 0.6) centred at μ₀ reflected
//     through the centre of the cube (1 − μ₀), preferring other
//     categories ((a₀+2) mod 4, (b₀+1) mod 3). The decoy is gone at full
//     fidelity: at low fidelity the best-looking configurations are the
//     farthest from the optimum.
type bump struct {
	mu    [8]float64
	sigma float64
	w     float64
	a, b  int
}

var bumpCentres = []bump{
	{mu: [8]float64{0.625, 0.897, 0.776, 0.225, 0.3, 0.874, 0 / 8.0, 7 / 8.0}, sigma: 0.35, w: 1.0, a: 2, b: 1},
	{mu: [8]float64{0.797, 0.468, 0.303, 0.278, 0.255, 0.445, 4 / 8.0, 4 / 8.0}, sigma: 0.3, w: 0.8, a: 0, b: 2},
	{mu: [8]float64{0.996, 0.793, 0.622, 0.989, 0.215, 0.16, 5 / 8.0, 0 / 8.0}, sigma: 0.3, w: 0.7, a: 3, b: 0},
	{mu: [8]float64{0.036, 0.515, 0.466, 0.917, 0.629, 0.514, 4 / 8.0, 2 / 8.0}, sigma: 0.3, w: 0.6, a: 1, b: 0},
	{mu: [8]float64{0.012, 0.192, 0.692, 0.201, 0.37, 0.004, 7 / 8.0, 1 / 8.0}, sigma: 0.3, w: 0.5, a: 2, b: 1},
	{mu: [8]float64{0.268, 0.88, 0.51, 0.847, 0.64, 0.742, 1 / 8.0, 4 / 8.0}, sigma: 0.3, w: 0.4, a: 1, b: 2},
}

// The decoy of the misleading setting.
const (
	bumpsDecoyDepth = 2.0
	bumpsDecoyWidth = 0.6
	// bumpsLowWiden is the factor the faithful low fidelity widens the
	// bumps by.
	bumpsLowWiden = 1.5
)

// BumpsDims is the sum of bumps' search space.
var BumpsDims = []Dim{
	{Name: "x0", Lo: 0, Hi: 1}, {Name: "x1", Lo: 0, Hi: 1}, {Name: "x2", Lo: 0, Hi: 1},
	{Name: "x3", Lo: 0, Hi: 1}, {Name: "x4", Lo: 0, Hi: 1}, {Name: "x5", Lo: 0, Hi: 1},
	{Name: "k0", Lo: 0, Hi: 8, Int: true}, {Name: "k1", Lo: 0, Hi: 8, Int: true},
	cat("a", 4), cat("b", 3),
}

// bumpsZ returns z, a and b of a configuration.
func bumpsZ(x []float64) (z [8]float64, a, b int) {
	copy(z[:6], x[:6])
	z[6], z[7] = x[6]/8, x[7]/8
	return z, int(x[8]), int(x[9])
}

// bumpTerm returns w · exp(−‖z − μ‖²/(2σ²)) · κ(a, ca) · κ(b, cb).
func bumpTerm(z *[8]float64, mu *[8]float64, sigma, w float64, a, b, ca, cb int) float64 {
	var d2 float64
	for j := range 8 {
		d := z[j] - mu[j]
		d2 += d * d
	}
	v := w * math.Exp(-d2/(2*sigma*sigma))
	if a != ca {
		v *= 0.5
	}
	if b != cb {
		v *= 0.5
	}
	return v
}

// bumpsSum returns −Σᵢ of the bumps' terms with widths scaled by widen.
func bumpsSum(x []float64, widen float64) float64 {
	z, a, b := bumpsZ(x)
	var sum float64
	for i := range bumpCentres {
		c := &bumpCentres[i]
		sum += bumpTerm(&z, &c.mu, c.sigma*widen, c.w, a, b, c.a, c.b)
	}
	return -sum
}

// Bumps returns the sum of bumps at full fidelity for a configuration in
// the order of BumpsDims.
func Bumps(x []float64) float64 { return bumpsSum(x, 1) }

// BumpsLow returns the fidelity-zero function of the sum of bumps: with
// decoy false the faithful one (every bump 1.5 times as wide), with decoy
// true the misleading one (the full-fidelity bumps plus the decoy).
func BumpsLow(x []float64, decoy bool) float64 {
	if !decoy {
		return bumpsSum(x, bumpsLowWiden)
	}
	z, a, b := bumpsZ(x)
	c := &bumpCentres[0]
	var mu [8]float64
	for j := range mu {
		mu[j] = 1 - c.mu[j]
	}
	return bumpsSum(x, 1) - bumpTerm(&z, &mu, bumpsDecoyWidth, bumpsDecoyDepth, a, b, (c.a+2)%4, (c.b+1)%3)
}

// BumpsMin is the minimum of the sum of bumps, at BumpsArgmin (found by
// coordinate-wise golden-section search from μ₀ for every setting of the
// integers and categories; the tests check that no nearby or sampled
// configuration is lower).
const BumpsMin = -1.0014899764439775

// BumpsArgmin is where the sum of bumps is lowest.
var BumpsArgmin = []float64{0.62478356543896818, 0.89656648595257304, 0.77525933735034402,
	0.2257162741725558, 0.30031982356567033, 0.8734439657671409, 0, 7, 2, 1}

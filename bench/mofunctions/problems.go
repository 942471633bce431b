package mofunctions

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/hone-tune/hone/bench/functions"
	"github.com/hone-tune/hone/pareto"
)

// Sources of the problems, cited in reports.
const (
	sourceZDT = "Zitzler, Deb and Thiele (2000), Comparison of multiobjective evolutionary algorithms: " +
		"empirical results, Evolutionary Computation 8(2)"
	sourceDTLZ = "Deb, Thiele, Laumanns and Zitzler (2002), Scalable multi-objective optimization test problems, " +
		"CEC 2002; and (2005) in Evolutionary Multiobjective Optimization, Springer"
	sourceMF = "; the fidelity (the distance function on a prefix of its variables, rescaled) is defined " +
		"in this package (bench/mofunctions), no publication"
)

// ZDTVars is the number of variables of the ZDT problems of Problems (see
// the package comment for why not the literature's 30).
const ZDTVars = 6

// DTLZ2K is k, the number of distance variables of DTLZ2 (the
// literature's choice for DTLZ2), and DTLZ2Objectives its M; the problem
// has M + k − 1 = 12 variables.
const (
	DTLZ2K          = 10
	DTLZ2Objectives = 3
)

// FrontSamples is the number of points TrueFront samples on the analytic
// front (before the non-dominated filter for ZDT3).
const FrontSamples = 10000

// Problem is a multi-objective test problem prepared for a benchmark: a
// box search space of floats, objectives to minimise, a budget scale of
// whole steps 1..Steps (Steps is full fidelity; 1 for a single-fidelity
// problem), the true front and a reference point. A Problem is immutable
// and safe for concurrent use.
type Problem struct {
	// Name identifies the problem in reports, e.g. "zdt1" or "dtlz2-mf";
	// Family is the function it is a setting of, e.g. "dtlz2".
	Name, Family string
	// About says in a sentence or two what the problem is, and Source
	// where it comes from.
	About, Source string
	// Dims is the search space (floats in [0, 1]); configurations are
	// []float64 in this order.
	Dims []functions.Dim
	// Objectives is the number of objectives, all minimised.
	Objectives int
	// Steps is the largest budget in steps; 1 for a single-fidelity
	// problem.
	Steps int
	// Ref is the reference point of the hypervolume.
	Ref []float64
	// FrontHV is the hypervolume of TrueFront with respect to Ref (the
	// tests recompute it): the best hypervolume a set of points can reach,
	// up to the sampling of the front.
	FrontHV float64

	eval  func(x []float64, u int) []float64
	cost  func(u int) float64
	front func() [][]float64
}

// Evaluate returns the objective vector of x at full fidelity. x must pass
// Check.
func (p *Problem) Evaluate(x []float64) []float64 { return p.eval(x, p.Steps) }

// At returns the objective vector of x at step u (1 ≤ u ≤ Steps; u above
// Steps is full fidelity).
func (p *Problem) At(x []float64, u int) []float64 { return p.eval(x, min(max(u, 1), p.Steps)) }

// Cost returns the cost of evaluating a configuration at step u from
// scratch, normalised so that Cost(Steps) = 1; Cost(0) = 0.
func (p *Problem) Cost(u int) float64 {
	if u <= 0 {
		return 0
	}
	return p.cost(min(u, p.Steps))
}

// TrueFront returns points sampled on the problem's Pareto front: about
// FrontSamples of them, evenly spread, or for ZDT3 the non-dominated ones
// among FrontSamples on the curve its optima lie on.
func (p *Problem) TrueFront() [][]float64 { return p.front() }

// Hypervolume returns the hypervolume of points with respect to Ref.
func (p *Problem) Hypervolume(points [][]float64) float64 { return pareto.Hypervolume(points, p.Ref) }

// Check reports a configuration of the wrong length or outside the space.
func (p *Problem) Check(x []float64) error {
	if len(x) != len(p.Dims) {
		return fmt.Errorf("%s: configuration has %d values, want %d", p.Name, len(x), len(p.Dims))
	}
	for i, d := range p.Dims {
		if v := x[i]; !(v >= d.Lo && v <= d.Hi) {
			return fmt.Errorf("%s: %s = %v is outside [%v, %v]", p.Name, d.Name, v, d.Lo, d.Hi)
		}
	}
	return nil
}

// RandomConfig returns a uniform configuration drawn from r.
func (p *Problem) RandomConfig(r *rand.Rand) []float64 {
	x := make([]float64, len(p.Dims))
	for i, d := range p.Dims {
		x[i] = d.Lo + r.Float64()*(d.Hi-d.Lo)
	}
	return x
}

// unitDims returns n floats in [0, 1] named x1..xn.
func unitDims(n int) []functions.Dim {
	dims := make([]functions.Dim, n)
	for i := range dims {
		dims[i] = functions.Dim{Name: fmt.Sprintf("x%d", i+1), Lo: 0, Hi: 1}
	}
	return dims
}

// ZDT1 returns ZDT1's objectives at x (n = len(x) ≥ 2, xᵢ in [0, 1]):
//
//	f₁ = x₁, g = 1 + 9·Σᵢ₌₂ⁿ xᵢ/(n − 1), f₂ = g·(1 − √(f₁/g)).
//
// Its front is f₂ = 1 − √f₁, f₁ in [0, 1], reached with x₂..xₙ = 0.
func ZDT1(x []float64) [2]float64 {
	f1, g := x[0], zdtG(x)
	return [2]float64{f1, g * (1 - math.Sqrt(f1/g))}
}

// ZDT2 returns ZDT2's objectives at x: as ZDT1 with h = 1 − (f₁/g)². Its
// front is f₂ = 1 − f₁², non-convex.
func ZDT2(x []float64) [2]float64 {
	f1, g := x[0], zdtG(x)
	r := f1 / g
	return [2]float64{f1, g * (1 - r*r)}
}

// ZDT3 returns ZDT3's objectives at x: as ZDT1 with
// h = 1 − √(f₁/g) − (f₁/g)·sin(10π f₁). Its front is the non-dominated
// part of the curve f₂ = 1 − √f₁ − f₁·sin(10π f₁), five disconnected
// pieces (ZDT3FrontPieces).
func ZDT3(x []float64) [2]float64 {
	f1, g := x[0], zdtG(x)
	r := f1 / g
	return [2]float64{f1, g * (1 - math.Sqrt(r) - r*math.Sin(10*math.Pi*f1))}
}

// ZDT3FrontPieces returns the five intervals of f₁ that ZDT3's Pareto
// front covers, as tabulated in the literature (e.g. pymoo's ZDT3 and
// Deb's Multi-objective optimization using evolutionary algorithms, 2001).
func ZDT3FrontPieces() [5][2]float64 {
	return [5][2]float64{
		{0, 0.0830015349},
		{0.1822287280, 0.2577623634},
		{0.4093136748, 0.4538821041},
		{0.6183967944, 0.6525117038},
		{0.8233317983, 0.8518328654},
	}
}

// zdtG is the ZDT distance function 1 + 9·Σᵢ₌₂ⁿ xᵢ/(n − 1).
func zdtG(x []float64) float64 {
	var s float64
	for _, v := range x[1:] {
		s += v
	}
	return 1 + 9*s/float64(len(x)-1)
}

// DTLZ2 returns DTLZ2's m objectives at x (len(x) ≥ m; the last
// k = len(x) − m + 1 are the distance variables):
//
//	g = Σ (xᵢ − ½)² over the distance variables,
//	fⱼ = (1 + g)·cos(x₁π/2)···cos(x_{m−j}π/2)·sin(x_{m−j+1}π/2)
//
// (no sine for f₁). Its front is the unit sphere's positive orthant,
// Σ fⱼ² = 1, reached with every distance variable at ½.
func DTLZ2(x []float64, m int) []float64 {
	var g float64
	for _, v := range x[m-1:] {
		g += (v - 0.5) * (v - 0.5)
	}
	return dtlz2With(x, m, g)
}

// dtlz2With returns DTLZ2's objectives at x given its distance g.
func dtlz2With(x []float64, m int, g float64) []float64 {
	f := make([]float64, m)
	for j := range m {
		v := 1 + g
		for i := range m - 1 - j {
			v *= math.Cos(x[i] * math.Pi / 2)
		}
		if j > 0 {
			v *= math.Sin(x[m-1-j] * math.Pi / 2)
		}
		f[j] = v
	}
	return f
}

// DTLZ2Prefix is DTLZ2 at the fidelity that evaluates the distance
// function on the first u of its k distance variables only, rescaled by
// k/u so that on uniform configurations it estimates the full sum without
// bias:
//
//	g_u = (k/u)·Σ (xᵢ − ½)² over the first u distance variables.
//
// At u = k it is DTLZ2.
func DTLZ2Prefix(x []float64, m, u int) []float64 {
	dist := x[m-1:]
	k := len(dist)
	var g float64
	for _, v := range dist[:u] {
		g += (v - 0.5) * (v - 0.5)
	}
	if u < k {
		g *= float64(k) / float64(u)
	}
	return dtlz2With(x, m, g)
}

// twoObjectives adapts a ZDT function to the eval signature.
func twoObjectives(f func([]float64) [2]float64) func(x []float64, u int) []float64 {
	return func(x []float64, _ int) []float64 {
		v := f(x)
		return v[:]
	}
}

// single is the cost of a single-fidelity problem.
func single(int) float64 { return 1 }

// curve returns n points (t, h(t)) for t evenly spaced in [0, 1].
func curve(n int, h func(t float64) float64) [][]float64 {
	pts := make([][]float64, n)
	for i := range pts {
		t := float64(i) / float64(n-1)
		pts[i] = []float64{t, h(t)}
	}
	return pts
}

// ZDT1Problem is ZDT1 with n = ZDTVars, reference point (1.1, 1.1).
func ZDT1Problem() *Problem {
	return &Problem{Name: "zdt1", Family: "zdt1", Dims: unitDims(ZDTVars), Objectives: 2, Steps: 1,
		Ref: []float64{1.1, 1.1}, FrontHV: ZDT1FrontHV,
		About:  fmt.Sprintf("ZDT1 (%d floats, 2 objectives), convex front f₂ = 1 − √f₁; reference (1.1, 1.1).", ZDTVars),
		Source: sourceZDT,
		eval:   twoObjectives(ZDT1), cost: single,
		front: func() [][]float64 {
			return curve(FrontSamples, func(t float64) float64 { return 1 - math.Sqrt(t) })
		}}
}

// ZDT2Problem is ZDT2 with n = ZDTVars, reference point (1.1, 1.1).
func ZDT2Problem() *Problem {
	return &Problem{Name: "zdt2", Family: "zdt2", Dims: unitDims(ZDTVars), Objectives: 2, Steps: 1,
		Ref: []float64{1.1, 1.1}, FrontHV: ZDT2FrontHV,
		About:  fmt.Sprintf("ZDT2 (%d floats, 2 objectives), non-convex front f₂ = 1 − f₁²; reference (1.1, 1.1).", ZDTVars),
		Source: sourceZDT,
		eval:   twoObjectives(ZDT2), cost: single,
		front: func() [][]float64 {
			return curve(FrontSamples, func(t float64) float64 { return 1 - t*t })
		}}
}

// ZDT3Problem is ZDT3 with n = ZDTVars, reference point (1.1, 1.1).
func ZDT3Problem() *Problem {
	return &Problem{Name: "zdt3", Family: "zdt3", Dims: unitDims(ZDTVars), Objectives: 2, Steps: 1,
		Ref: []float64{1.1, 1.1}, FrontHV: ZDT3FrontHV,
		About:  fmt.Sprintf("ZDT3 (%d floats, 2 objectives), front in five disconnected pieces; reference (1.1, 1.1).", ZDTVars),
		Source: sourceZDT,
		eval:   twoObjectives(ZDT3), cost: single,
		front: func() [][]float64 {
			pts := curve(FrontSamples, func(t float64) float64 { return 1 - math.Sqrt(t) - t*math.Sin(10*math.Pi*t) })
			var front [][]float64
			for _, i := range pareto.Front(pts) {
				front = append(front, pts[i])
			}
			return front
		}}
}

// dtlz2Front returns about FrontSamples points of the unit sphere's
// positive octant, (cos a cos b, cos a sin b, sin a), spread evenly: rows
// of evenly spaced latitude a, each with a number of points proportional
// to its length cos a, evenly spaced in b.
func dtlz2Front() [][]float64 {
	const rows = 126 // about FrontSamples points in all
	pts := make([][]float64, 0, FrontSamples+rows)
	for i := range rows {
		a := float64(i) / (rows - 1) * math.Pi / 2
		n := max(1, int(math.Round(math.Cos(a)*(rows-1)))+1)
		if i == rows-1 {
			n = 1 // the pole
		}
		for j := range n {
			b := 0.0
			if n > 1 {
				b = float64(j) / float64(n-1) * math.Pi / 2
			}
			pts = append(pts, []float64{math.Cos(a) * math.Cos(b), math.Cos(a) * math.Sin(b), math.Sin(a)})
		}
	}
	return pts
}

// DTLZ2Problem is DTLZ2 with M = 3 objectives and k = 10 distance
// variables (12 floats), reference point (1.1, 1.1, 1.1).
func DTLZ2Problem() *Problem {
	n := DTLZ2Objectives + DTLZ2K - 1
	return &Problem{Name: "dtlz2", Family: "dtlz2", Dims: unitDims(n), Objectives: DTLZ2Objectives, Steps: 1,
		Ref: []float64{1.1, 1.1, 1.1}, FrontHV: DTLZ2FrontHV,
		About:  fmt.Sprintf("DTLZ2 (%d floats, 3 objectives, k = %d), front the unit sphere's octant; reference (1.1, 1.1, 1.1).", n, DTLZ2K),
		Source: sourceDTLZ,
		eval:   func(x []float64, _ int) []float64 { return DTLZ2(x, DTLZ2Objectives) },
		cost:   single, front: dtlz2Front}
}

// DTLZ2MFSteps is the budget scale of the multi-fidelity DTLZ2: step u
// evaluates the distance function on the first u of its k = 10 variables.
const DTLZ2MFSteps = DTLZ2K

// DTLZ2MFProblem is DTLZ2 (M = 3, k = 10) with a fidelity: step u
// (1..10) evaluates it with the distance g on the first u distance
// variables, rescaled by 10/u (DTLZ2Prefix), and costs u/10, the share of
// the distance function computed. Low fidelity is a cheap, biased model
// of the same kind as a partially converged simulation: it sees the
// position variables exactly but misses the distance of the variables
// not yet evaluated, so a configuration whose first distance variables
// are right looks Pareto-optimal. Its front, reference point and
// hypervolume are DTLZ2's.
func DTLZ2MFProblem() *Problem {
	p := DTLZ2Problem()
	p.Name, p.Steps = "dtlz2-mf", DTLZ2MFSteps
	p.About = fmt.Sprintf("Multi-fidelity DTLZ2 (%d floats, 3 objectives, k = %d): step u = 1..%d evaluates g on the first u distance "+
		"variables, rescaled by %d/u; cost u/%d; reference (1.1, 1.1, 1.1).", len(p.Dims), DTLZ2K, DTLZ2MFSteps, DTLZ2K, DTLZ2K)
	p.Source = sourceDTLZ + sourceMF
	p.eval = func(x []float64, u int) []float64 { return DTLZ2Prefix(x, DTLZ2Objectives, u) }
	p.cost = func(u int) float64 { return float64(u) / DTLZ2MFSteps }
	return p
}

// Problems returns every multi-objective problem, in report order.
func Problems() []*Problem {
	return []*Problem{ZDT1Problem(), ZDT2Problem(), ZDT3Problem(), DTLZ2Problem(), DTLZ2MFProblem()}
}

// ByName returns the problem of Problems with the given name, or nil.
func ByName(name string) *Problem {
	for _, p := range Problems() {
		if p.Name == name {
			return p
		}
	}
	return nil
}

package pb2

import (
	"math"
	"math/rand/v2"
)

// minLengthscale and maxLengthscale clip the mean model's lengthscale after
// the fit, as Ray clips its (squared) lengthscale to [1e-5, 1].
var (
	minLengthscale = math.Sqrt(1e-5)
	maxLengthscale = 1.0
)

// maxAscentSteps bounds each local maximisation of the acquisition.
const maxAscentSteps = 100

// bandit fits the GP to rows x (time, reward before, then hyperparameters,
// all scaled to [0, 1]) and standardised targets y, and returns the
// hyperparameters in [0, 1]^d that maximise UCB at the time and reward
// fixed. The mean comes from the GP on the data, whose kernel is fit on the
// last fitRows rows; the variance from a GP that also holds the pending
// rows (hyperparameters chosen this round, at fixed) with y = 0 and its
// own fit, so a second choice in a round avoids the first (Ray's
// penalisation, after Desautels et al. 2014). ok is false if a GP cannot
// be fit.
func bandit(r *rand.Rand, x [][]float64, y, fixed []float64, pending [][]float64, fitRows, starts int) (z []float64, ok bool) {
	k := min(len(x), fitRows)
	h := fitHyper(x[len(x)-k:], y[len(y)-k:])
	h.lengthscale = math.Min(math.Max(h.lengthscale, minLengthscale), maxLengthscale)
	m, err := newGP(x, y, h)
	if err != nil {
		return nil, false
	}
	m1 := m
	if len(pending) > 0 {
		xp := append(append([][]float64(nil), x...), pending...)
		yp := append(append([]float64(nil), y...), make([]float64, len(pending))...)
		k := min(len(xp), fitRows+len(pending))
		if m1, err = newGP(xp, yp, fitHyper(xp[len(xp)-k:], yp[len(yp)-k:])); err != nil {
			return nil, false
		}
	}
	d := len(x[0]) - len(fixed)
	return maximize(r, d, starts, ucb(m, m1, fixed, len(x))), true
}

// ucb returns the UCB acquisition of Ray's PB2 as a function of the
// hyperparameters u (and its gradient, when grad is not nil): the mean of
// m plus κ times the variance of m1 at (fixed, u), with
// κ = √(0.2 + max(0, log(0.4·n))) for n rows of data.
func ucb(m, m1 *gp, fixed []float64, n int) func(u, grad []float64) float64 {
	kappa := math.Sqrt(0.2 + math.Max(0, math.Log(0.4*float64(n))))
	z := make([]float64, len(m.x[0]))
	copy(z, fixed)
	d := len(z) - len(fixed)
	gm, gv := make([]float64, d), make([]float64, d)
	return func(u, grad []float64) float64 {
		copy(z[len(fixed):], u)
		if grad == nil {
			return m.mean(z, nil) + kappa*m1.variance(z, nil)
		}
		v := m.mean(z, gm) + kappa*m1.variance(z, gv)
		for j := range grad {
			grad[j] = gm[j] + kappa*gv[j]
		}
		return v
	}
}

// maximize returns the best point of f over [0, 1]^d found by projected
// gradient ascent from starts uniform random points.
func maximize(r *rand.Rand, d, starts int, f func(u, grad []float64) float64) []float64 {
	var best []float64
	bestV := math.Inf(-1)
	u := make([]float64, d)
	for s := 0; s < starts; s++ {
		for j := range u {
			u[j] = r.Float64()
		}
		v := ascend(u, f)
		if math.IsNaN(v) {
			v = math.Inf(-1)
		}
		if best == nil || v > bestV {
			best, bestV = append([]float64(nil), u...), v
		}
	}
	return best
}

// ascend climbs f from u (updated in place) inside the unit box: each step
// moves along the gradient scaled to a largest component of step, then
// projects onto the box; the step doubles after a gain and shrinks
// fourfold after a loss. It returns f at the final u.
func ascend(u []float64, f func(u, grad []float64) float64) float64 {
	d := len(u)
	g, cand, cg := make([]float64, d), make([]float64, d), make([]float64, d)
	v := f(u, g)
	step := 0.1
	for it := 0; it < maxAscentSteps && step >= 1e-7; it++ {
		gmax := 0.0
		for _, e := range g {
			gmax = math.Max(gmax, math.Abs(e))
		}
		if !(gmax > 0) || math.IsInf(gmax, 0) {
			break
		}
		moved := false
		for j := range u {
			cand[j] = math.Min(math.Max(u[j]+step*g[j]/gmax, 0), 1)
			moved = moved || cand[j] != u[j]
		}
		if !moved {
			break // a corner whose gradient points out of the box
		}
		if cv := f(cand, cg); cv > v {
			copy(u, cand)
			copy(g, cg)
			v = cv
			step = math.Min(2*step, 1)
		} else {
			step /= 4
		}
	}
	return v
}

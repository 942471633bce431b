package pb2

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/optimize"
)

// kernel is the time-varying squared-exponential kernel of Bogunovic et al.
// (2016) on inputs whose column 0 is time:
//
//	k(a, b) = variance · exp(−Σ_{j≥1} (a_j − b_j)² / lengthscale²) · (1 − epsilon)^(|a_0 − b_0| / 2)
//
// It is positive semi-definite: a squared-exponential kernel times an
// exponential (Ornstein–Uhlenbeck) kernel in time, exp(−λ|Δt|) with
// λ = −log(1 − epsilon)/2 ≥ 0.
type kernel struct {
	variance, lengthscale, epsilon float64
}

// eval returns k(a, b).
func (k kernel) eval(a, b []float64) float64 {
	return k.variance * math.Exp(-sqDist(a, b)/(k.lengthscale*k.lengthscale)) * math.Pow(1-k.epsilon, math.Abs(a[0]-b[0])/2)
}

// sqDist is the squared distance of a and b without column 0.
func sqDist(a, b []float64) float64 {
	s := 0.0
	for j := 1; j < len(a); j++ {
		d := a[j] - b[j]
		s += d * d
	}
	return s
}

// hyper are a GP's hyperparameters: its kernel and the variance of the
// observation noise.
type hyper struct {
	kernel
	noise float64
}

// initialHyper is where the marginal-likelihood fit starts (Ray's, with
// GPy's default noise variance).
var initialHyper = hyper{kernel: kernel{variance: 1, lengthscale: 1, epsilon: 0.1}, noise: 1}

// The ranges of the fitted hyperparameters (log scale for the positive
// ones).
var (
	varianceRange    = [2]float64{math.Log(1e-4), math.Log(1e3)}
	lengthscaleRange = [2]float64{math.Log(1e-3), math.Log(1e3)}
	noiseRange       = [2]float64{math.Log(1e-6), math.Log(1e2)}
	maxEpsilon       = 0.5
)

// gp is a Gaussian process regression (zero prior mean) conditioned on
// rows x with targets y.
type gp struct {
	h     hyper
	x     [][]float64
	alpha []float64         // (K + noise·I)⁻¹ y
	l     blas64.Triangular // the lower Cholesky factor of K + noise·I
	buf   []float64         // scratch: L⁻¹k
	wbuf  []float64         // scratch: K⁻¹k
	kbuf  []float64         // scratch: k(z, x_i)
}

var errNotPD = errors.New("pb2: the GP's covariance matrix is not positive definite")

// covariance returns the lower triangle of K(x, x) + noise·I, row-major.
func covariance(x [][]float64, h hyper) []float64 {
	n := len(x)
	k := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			k[i*n+j] = h.eval(x[i], x[j])
		}
		k[i*n+i] += h.noise
	}
	return k
}

// cholesky factors the symmetric positive definite n×n matrix whose lower
// triangle a holds (row-major), in place.
func cholesky(a []float64, n int) (blas64.Triangular, bool) {
	return lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: n, Data: a})
}

// factorize returns the lower Cholesky factor of the matrix whose lower
// triangle k holds, adding a growing jitter to the diagonal while the
// factorisation fails. k is not modified.
func factorize(k []float64, n int) (blas64.Triangular, error) {
	work := append([]float64(nil), k...)
	if l, ok := cholesky(work, n); ok {
		return l, nil
	}
	scale := 0.0
	for i := 0; i < n; i++ {
		scale += k[i*n+i]
	}
	scale /= float64(max(n, 1))
	if !(scale > 0) || math.IsInf(scale, 0) {
		return blas64.Triangular{}, errNotPD
	}
	for jitter := 1e-10 * scale; jitter <= 1e-2*scale; jitter *= 10 {
		copy(work, k)
		for i := 0; i < n; i++ {
			work[i*n+i] += jitter
		}
		if l, ok := cholesky(work, n); ok {
			return l, nil
		}
	}
	return blas64.Triangular{}, errNotPD
}

// solve returns (L·Lᵀ)⁻¹ y.
func solve(l blas64.Triangular, y []float64) []float64 {
	out := append([]float64(nil), y...)
	lapack64.Potrs(l, blas64.General{Rows: l.N, Cols: 1, Stride: 1, Data: out})
	return out
}

// logDet returns log det(L·Lᵀ).
func logDet(l blas64.Triangular) float64 {
	s := 0.0
	for i := 0; i < l.N; i++ {
		s += math.Log(l.Data[i*l.Stride+i])
	}
	return 2 * s
}

// newGP conditions a GP with hyperparameters h on x and y.
func newGP(x [][]float64, y []float64, h hyper) (*gp, error) {
	n := len(x)
	if n == 0 || len(y) != n {
		return nil, errors.New("pb2: a GP needs as many targets as rows, and at least one")
	}
	l, err := factorize(covariance(x, h), n)
	if err != nil {
		return nil, err
	}
	return &gp{h: h, x: x, l: l, alpha: solve(l, y),
		buf: make([]float64, n), wbuf: make([]float64, n), kbuf: make([]float64, n)}, nil
}

// kvec fills g.kbuf with k(z, x_i).
func (g *gp) kvec(z []float64) []float64 {
	for i, xi := range g.x {
		g.kbuf[i] = g.h.eval(z, xi)
	}
	return g.kbuf
}

// mean returns the posterior mean at z and, if grad is not nil, its
// gradient with respect to z[len(z)-len(grad):].
func (g *gp) mean(z, grad []float64) float64 {
	k := g.kvec(z)
	m := 0.0
	for i, a := range g.alpha {
		m += a * k[i]
	}
	if grad != nil {
		g.dk(z, k, g.alpha, grad)
	}
	return m
}

// variance returns the posterior variance of the latent function at z
// and, if grad is not nil, its gradient with respect to
// z[len(z)-len(grad):].
func (g *gp) variance(z, grad []float64) float64 {
	k := g.kvec(z)
	v := g.buf
	copy(v, k)
	blas64.Trsv(blas.NoTrans, g.l, blas64.Vector{N: len(v), Inc: 1, Data: v}) // v = L⁻¹k
	s := g.h.variance
	for _, e := range v {
		s -= e * e
	}
	if grad != nil {
		w := g.wbuf
		copy(w, v)
		blas64.Trsv(blas.Trans, g.l, blas64.Vector{N: len(w), Inc: 1, Data: w}) // w = K⁻¹k
		g.dk(z, k, w, grad)
		for j := range grad {
			grad[j] *= -2
		}
	}
	return math.Max(s, 0)
}

// dk sets grad to Σ_i c_i ∂k(z, x_i)/∂z_j for the last len(grad)
// coordinates j of z, given k_i = k(z, x_i).
func (g *gp) dk(z, k, c, grad []float64) {
	off := len(z) - len(grad)
	l2 := g.h.lengthscale * g.h.lengthscale
	for j := range grad {
		grad[j] = 0
	}
	for i, xi := range g.x {
		f := c[i] * k[i] * -2 / l2
		if f == 0 {
			continue
		}
		for j := range grad {
			grad[j] += f * (z[off+j] - xi[off+j])
		}
	}
}

// logLikelihood is the log marginal likelihood of y under the GP.
func (g *gp) logLikelihood(y []float64) float64 {
	fit := 0.0
	for i, a := range g.alpha {
		fit += a * y[i]
	}
	return -0.5*fit - 0.5*logDet(g.l) - 0.5*float64(len(y))*math.Log(2*math.Pi)
}

// likelihood is the negative log marginal likelihood of a GP on fixed data
// as a function of its transformed hyperparameters θ (see fromTheta), with
// its gradient. It caches the last evaluation, since the optimiser asks
// for the value and the gradient at the same point separately.
type likelihood struct {
	x     [][]float64
	y     []float64
	d2    []float64 // squared distances without time, n×n lower triangle
	tau   []float64 // |Δt|, n×n lower triangle
	sig   []float64 // the signal part of K
	work  []float64 // K, then its factor, then its inverse
	lastX []float64
	lastF float64
	lastG []float64
}

func newLikelihood(x [][]float64, y []float64) *likelihood {
	n := len(x)
	f := &likelihood{x: x, y: y, d2: make([]float64, n*n), tau: make([]float64, n*n),
		sig: make([]float64, n*n), work: make([]float64, n*n), lastG: make([]float64, 4)}
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			f.d2[i*n+j] = sqDist(x[i], x[j])
			f.tau[i*n+j] = math.Abs(x[i][0] - x[j][0])
		}
	}
	return f
}

// Each transformed hyperparameter θ is mapped into its range through a
// logistic function, so an unconstrained optimiser stays within bounds.
func logistic(t float64) float64 { return 1 / (1 + math.Exp(-t)) }

func logit(p float64) float64 { return math.Log(p / (1 - p)) }

// fromTheta maps θ = (variance, lengthscale, epsilon, noise) to
// hyperparameters; d holds each one's derivative with respect to its θ.
func fromTheta(theta []float64) (h hyper, d [4]float64) {
	ranged := func(t float64, r [2]float64) (float64, float64) {
		s := logistic(t)
		v := math.Exp(r[0] + (r[1]-r[0])*s)
		return v, v * (r[1] - r[0]) * s * (1 - s)
	}
	h.variance, d[0] = ranged(theta[0], varianceRange)
	h.lengthscale, d[1] = ranged(theta[1], lengthscaleRange)
	s := logistic(theta[2])
	h.epsilon, d[2] = maxEpsilon*s, maxEpsilon*s*(1-s)
	h.noise, d[3] = ranged(theta[3], noiseRange)
	return h, d
}

// toTheta is fromTheta's inverse.
func toTheta(h hyper) []float64 {
	unranged := func(v float64, r [2]float64) float64 { return logit((math.Log(v) - r[0]) / (r[1] - r[0])) }
	return []float64{unranged(h.variance, varianceRange), unranged(h.lengthscale, lengthscaleRange),
		logit(h.epsilon / maxEpsilon), unranged(h.noise, noiseRange)}
}

// eval computes the negative log likelihood at theta and its gradient.
func (f *likelihood) eval(theta []float64) {
	if f.lastX != nil && equal(f.lastX, theta) {
		return
	}
	f.lastX = append(f.lastX[:0], theta...)
	h, dh := fromTheta(theta)
	n := len(f.x)
	l2 := h.lengthscale * h.lengthscale
	logDecay := math.Log(1 - h.epsilon)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			f.sig[i*n+j] = h.variance * math.Exp(-f.d2[i*n+j]/l2+logDecay*f.tau[i*n+j]/2)
		}
	}
	copy(f.work, f.sig)
	for i := 0; i < n; i++ {
		f.work[i*n+i] += h.noise
	}
	l, ok := cholesky(f.work, n)
	if !ok {
		f.lastF = math.Inf(1)
		clear(f.lastG)
		return
	}
	alpha := solve(l, f.y)
	fit := 0.0
	for i, a := range alpha {
		fit += a * f.y[i]
	}
	f.lastF = 0.5*fit + 0.5*logDet(l) + 0.5*float64(n)*math.Log(2*math.Pi)
	inv, ok := lapack64.Potri(l) // the lower triangle of K⁻¹, in f.work
	if !ok {
		clear(f.lastG)
		return
	}
	// dL/dp = ½ Σ_ij (α_i α_j − K⁻¹_ij) ∂K_ij/∂p; the signal part S of K
	// gives ∂S/∂variance = S/variance, ∂S/∂lengthscale = S·2d²/ℓ³ and
	// ∂S/∂ε = −S·(τ/2)/(1−ε); ∂K/∂noise = I. The sums run over the lower
	// triangle, off-diagonal terms counted twice.
	var gv, gl, ge, gn float64
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			w := alpha[i]*alpha[j] - inv.Data[i*n+j]
			if i == j {
				gn += w
			} else {
				w *= 2
			}
			ws := w * f.sig[i*n+j]
			gv += ws
			gl += ws * f.d2[i*n+j]
			ge += ws * f.tau[i*n+j]
		}
	}
	gv /= h.variance
	gl *= 2 / (l2 * h.lengthscale)
	ge *= -0.5 / (1 - h.epsilon)
	// The negative log likelihood's gradient, by the chain rule through θ.
	f.lastG[0] = -0.5 * gv * dh[0]
	f.lastG[1] = -0.5 * gl * dh[1]
	f.lastG[2] = -0.5 * ge * dh[2]
	f.lastG[3] = -0.5 * gn * dh[3]
}

func equal(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// fitHyper returns the hyperparameters that maximise the marginal
// likelihood of y at x, searched by L-BFGS from initialHyper within the
// hyperparameter ranges; initialHyper if nothing better is found.
func fitHyper(x [][]float64, y []float64) hyper {
	f := newLikelihood(x, y)
	init := toTheta(initialHyper)
	p := optimize.Problem{
		Func: func(theta []float64) float64 { f.eval(theta); return f.lastF },
		Grad: func(grad, theta []float64) { f.eval(theta); copy(grad, f.lastG) },
	}
	settings := &optimize.Settings{
		GradientThreshold: 1e-6,
		MajorIterations:   200,
		FuncEvaluations:   400,
		Converger:         &optimize.FunctionConverge{Absolute: 1e-9, Relative: 1e-9, Iterations: 20},
	}
	f.eval(init)
	best, bestF := init, f.lastF
	res, _ := optimize.Minimize(p, init, settings, &optimize.LBFGS{})
	// An error (a failed line search, say) still leaves the best point.
	if res != nil && res.F < bestF && !math.IsNaN(res.F) {
		best = res.X
	}
	h, _ := fromTheta(best)
	return h
}

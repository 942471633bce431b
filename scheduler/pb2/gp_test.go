package pb2

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"pgregory.net/rapid"
)

// randomRows returns n rows of dimension dim in [0, 1).
func randomRows(r *rand.Rand, n, dim int) [][]float64 {
	x := make([][]float64, n)
	for i := range x {
		x[i] = make([]float64, dim)
		for j := range x[i] {
			x[i][j] = r.Float64()
		}
	}
	return x
}

// TestKernelPSD: the time-varying kernel's matrix on any points, for any
// hyperparameters in range, has no negative eigenvalue (beyond rounding).
func TestKernelPSD(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 25).Draw(t, "n")
		dim := rapid.IntRange(1, 4).Draw(t, "dim")
		k := kernel{
			variance:    rapid.Float64Range(1e-3, 10).Draw(t, "variance"),
			lengthscale: rapid.Float64Range(1e-2, 10).Draw(t, "lengthscale"),
			epsilon:     rapid.Float64Range(0, 0.5).Draw(t, "epsilon"),
		}
		r := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 1))
		x := randomRows(r, n, dim)
		if rapid.Bool().Draw(t, "duplicate") && n > 1 {
			x[1] = append([]float64(nil), x[0]...) // a repeated point keeps it singular, not negative
		}
		lower := covariance(x, hyper{kernel: k})
		cov := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				cov.SetSym(i, j, lower[i*n+j])
			}
		}
		var eig mat.EigenSym
		if !eig.Factorize(cov, false) {
			t.Fatal("eigendecomposition failed")
		}
		for _, v := range eig.Values(nil) {
			if v < -1e-9*k.variance*float64(n) {
				t.Fatalf("eigenvalue %g < 0 for %+v", v, k)
			}
		}
	})
}

// TestKernelTimeDecay: at equal hyperparameters the kernel is
// variance·(1−ε)^(|Δt|/2), decreasing in |Δt| and symmetric in time; at
// equal time it is the squared exponential.
func TestKernelTimeDecay(t *testing.T) {
	k := kernel{variance: 2, lengthscale: 0.5, epsilon: 0.1}
	prev := math.Inf(1)
	for _, dt := range []float64{0, 0.1, 0.5, 1, 2} {
		a, b := []float64{0.3, 0.2, 0.7}, []float64{0.3 + dt, 0.2, 0.7}
		got := k.eval(a, b)
		want := 2 * math.Pow(0.9, dt/2)
		if math.Abs(got-want) > 1e-12 || math.Abs(k.eval(b, a)-got) > 1e-15 {
			t.Fatalf("dt=%v: k=%v, want %v", dt, got, want)
		}
		if dt > 0 && !(got < prev) {
			t.Fatalf("dt=%v: k=%v does not decay from %v", dt, got, prev)
		}
		prev = got
	}
	if got, want := k.eval([]float64{1, 0, 0}, []float64{1, 0.3, 0.4}), 2*math.Exp(-0.25/0.25); math.Abs(got-want) > 1e-12 {
		t.Fatalf("squared exponential: %v, want %v", got, want)
	}
	if k0 := (kernel{variance: 1, lengthscale: 1}); k0.eval([]float64{0, 0}, []float64{100, 0}) != 1 {
		t.Fatal("ε = 0 must not decay with time")
	}
}

// TestLikelihoodGradient checks the analytic gradient of the negative log
// marginal likelihood against central differences.
func TestLikelihoodGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x := randomRows(r, 15, 3)
	y := make([]float64, len(x))
	for i, xi := range x {
		y[i] = math.Sin(4*xi[1]) + xi[0] - xi[2] + 0.1*r.NormFloat64()
	}
	f := newLikelihood(x, y)
	for _, h := range []hyper{initialHyper, {kernel: kernel{variance: 0.3, lengthscale: 0.4, epsilon: 0.3}, noise: 0.05}} {
		theta := toTheta(h)
		if back, _ := fromTheta(theta); math.Abs(back.lengthscale-h.lengthscale) > 1e-9 || math.Abs(back.epsilon-h.epsilon) > 1e-9 {
			t.Fatalf("fromTheta(toTheta(%+v)) = %+v", h, back)
		}
		f.eval(theta)
		grad := append([]float64(nil), f.lastG...)
		for i := range theta {
			const e = 1e-6
			p := append([]float64(nil), theta...)
			p[i] += e
			f.eval(p)
			up := f.lastF
			p[i] -= 2 * e
			f.eval(p)
			down := f.lastF
			num := (up - down) / (2 * e)
			if math.Abs(num-grad[i]) > 1e-4*math.Max(1, math.Abs(num)) {
				t.Errorf("%+v: ∂/∂θ%d = %v, numerically %v", h, i, grad[i], num)
			}
		}
	}
}

// TestPredictionGradient checks the gradients of the posterior mean and
// variance with respect to the free coordinates against central
// differences.
func TestPredictionGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	x := randomRows(r, 12, 4)
	y := make([]float64, len(x))
	for i, xi := range x {
		y[i] = xi[2] - xi[3]*xi[3]
	}
	g, err := newGP(x, y, hyper{kernel: kernel{variance: 1.3, lengthscale: 0.6, epsilon: 0.2}, noise: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	for trial := 0; trial < 5; trial++ {
		z := randomRows(r, 1, 4)[0]
		gm, gv := make([]float64, 2), make([]float64, 2)
		g.mean(z, gm)
		g.variance(z, gv)
		for j := 0; j < 2; j++ {
			const e = 1e-6
			zp, zm := append([]float64(nil), z...), append([]float64(nil), z...)
			zp[2+j] += e
			zm[2+j] -= e
			nm := (g.mean(zp, nil) - g.mean(zm, nil)) / (2 * e)
			nv := (g.variance(zp, nil) - g.variance(zm, nil)) / (2 * e)
			if math.Abs(nm-gm[j]) > 1e-5 || math.Abs(nv-gv[j]) > 1e-5 {
				t.Fatalf("z=%v j=%d: mean' %v (num %v), variance' %v (num %v)", z, j, gm[j], nm, gv[j], nv)
			}
		}
	}
}

// TestPosterior fits the GP to a known function of one hyperparameter
// (time and reward fixed): the mean is close to the truth at the training
// points, the variance there is far below the prior's, it grows away from
// the data, and it shrinks as data are added.
func TestPosterior(t *testing.T) {
	truth := func(u float64) float64 { return math.Sin(2 * math.Pi * u) }
	data := func(n int) ([][]float64, []float64) {
		var x [][]float64
		var y []float64
		for i := 0; i < n; i++ {
			u := 0.6 * float64(i) / float64(n-1) // data in [0, 0.6] only
			x = append(x, []float64{0.5, 0.5, u})
			y = append(y, truth(u))
		}
		return x, y
	}
	x, y := data(20)
	h := fitHyper(x, y)
	g, err := newGP(x, y, h)
	if err != nil {
		t.Fatal(err)
	}
	if h.noise > 0.05 {
		t.Errorf("noise variance %v on noiseless data", h.noise)
	}
	for i, xi := range x {
		m, v := g.mean(xi, nil), g.variance(xi, nil)
		if math.Abs(m-y[i]) > 0.05 {
			t.Errorf("mean at u=%.3f: %.4f, truth %.4f", xi[2], m, y[i])
		}
		if v > 0.05*h.variance {
			t.Errorf("variance at training point u=%.3f: %.4g (prior %.4g)", xi[2], v, h.variance)
		}
	}
	// Away from the data the variance grows.
	inside, outside := g.variance([]float64{0.5, 0.5, 0.3}, nil), g.variance([]float64{0.5, 0.5, 1}, nil)
	if !(outside > 10*inside) {
		t.Errorf("variance at u=1 (no data) %.4g, at u=0.3 %.4g", outside, inside)
	}
	// With the same hyperparameters, more data shrinks the variance
	// between training points.
	x5, y5 := data(5)
	g5, err := newGP(x5, y5, h)
	if err != nil {
		t.Fatal(err)
	}
	probe := []float64{0.5, 0.5, 0.07}
	if v5, v20 := g5.variance(probe, nil), g.variance(probe, nil); !(v20 < v5) {
		t.Errorf("variance at u=0.07: %.4g with 20 points, %.4g with 5", v20, v5)
	}
	if ll := g.logLikelihood(y); math.IsNaN(ll) || math.IsInf(ll, 0) {
		t.Errorf("log likelihood %v", ll)
	}
}

// TestFitHyperImproves: the fitted hyperparameters have a higher marginal
// likelihood than the starting ones and stay within their ranges.
func TestFitHyperImproves(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	x := randomRows(r, 40, 3)
	y := make([]float64, len(x))
	for i, xi := range x {
		y[i] = 3*math.Exp(-20*(xi[2]-0.5)*(xi[2]-0.5)) + 0.05*r.NormFloat64()
	}
	h := fitHyper(x, y)
	g0, _ := newGP(x, y, initialHyper)
	g1, err := newGP(x, y, h)
	if err != nil {
		t.Fatal(err)
	}
	if !(g1.logLikelihood(y) > g0.logLikelihood(y)) {
		t.Fatalf("fit %+v: log likelihood %v, start %v", h, g1.logLikelihood(y), g0.logLikelihood(y))
	}
	if h.epsilon < 0 || h.epsilon > maxEpsilon || h.noise < 1e-6 || h.variance < 1e-4 || h.lengthscale < 1e-3 {
		t.Fatalf("out of range: %+v", h)
	}
}

package tpe

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestDefaultGamma(t *testing.T) {
	for _, tc := range []struct{ n, want int }{
		{0, 0}, {1, 1}, {9, 1}, {10, 1}, {11, 2}, {60, 6}, {61, 7}, {249, 25}, {250, 25}, {10000, 25},
	} {
		if got := defaultGamma(tc.n); got != tc.want {
			t.Errorf("defaultGamma(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

func TestRecencyWeights(t *testing.T) {
	ones := func(n int) []float64 {
		w := make([]float64, n)
		for i := range w {
			w[i] = 1
		}
		return w
	}
	for _, tc := range []struct {
		n    int
		want []float64
	}{
		{0, []float64{}},
		{3, ones(3)},
		{25, ones(25)},
		{26, append([]float64{1.0 / 26}, ones(25)...)},
		// linspace(1/30, 1, 5) then 25 ones.
		{30, append([]float64{1.0 / 30, 1.0/30 + 0.25*29/30, 1.0/30 + 0.5*29/30, 1.0/30 + 0.75*29/30, 1}, ones(25)...)},
	} {
		got := recencyWeights(tc.n)
		if len(got) != len(tc.want) {
			t.Fatalf("recencyWeights(%d) has %d weights", tc.n, len(got))
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-12 {
				t.Errorf("recencyWeights(%d)[%d] = %v, want %v", tc.n, i, got[i], tc.want[i])
			}
		}
	}
}

func TestLogNormMass(t *testing.T) {
	for _, tc := range []struct {
		a, b float64
		want float64 // log(Φ(b) − Φ(a))
	}{
		{math.Inf(-1), math.Inf(1), 0},
		{-1, 1, math.Log(0.6826894921370859)},
		{0, math.Inf(1), math.Log(0.5)},
		{-3, -2, math.Log(0.02140023345085857)},
		{2, 3, math.Log(0.02140023345085857)},
		// Upper tail, where 1 − Φ would lose everything: Φc(10) ≈ 7.62e-24.
		{10, math.Inf(1), math.Log(7.619853024160527e-24)},
		{math.Inf(-1), -10, math.Log(7.619853024160527e-24)},
		// A narrow interval: ≈ φ(0.3)·1e-9.
		{0.3 - 5e-10, 0.3 + 5e-10, logStdPDF(0.3) + math.Log(1e-9)},
	} {
		got := logNormMass(tc.a, tc.b)
		if math.Abs(got-tc.want) > 1e-6*math.Max(1, math.Abs(tc.want)) {
			t.Errorf("logNormMass(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	if got := logNormMass(1, 1); !math.IsInf(got, -1) {
		t.Errorf("empty interval: %v, want -Inf", got)
	}
	// Far beyond underflow the value stays finite and decreasing.
	a, b := logNormMass(40, 41), logNormMass(50, 51)
	if math.IsInf(a, 0) || math.IsNaN(a) || !(b < a) {
		t.Errorf("far tail: %v, %v", a, b)
	}
}

func TestBandwidths(t *testing.T) {
	pw := 1.0
	for _, tc := range []struct {
		name      string
		xs        []float64
		endpoints bool
		want      []float64 // σ per observation, then the prior's
	}{
		// Sorted centres 0.2, 0.5, 0.5 (prior): 0.2 has neighbours at
		// distances 0.2 and 0.3.
		{"two", []float64{0.2, 0.5}, false, []float64{0.3, 0.3, 1}},
		// 0.45 next to the prior at 0.5: looking inwards only gives 0.05,
		// clipped to 1/3; with the endpoint, 0.45.
		{"inwards", []float64{0.45}, false, []float64{1.0 / 3, 1}},
		{"endpoints", []float64{0.45}, true, []float64{0.45, 1}},
		{"none", nil, false, []float64{1}},
		// Duplicates get the minimum width 1/min(100, 5).
		{"duplicates", []float64{0.5, 0.5, 0.5}, false, []float64{0.2, 0.2, 0.2, 1}},
	} {
		p := newParzen(tc.xs, recencyWeights(len(tc.xs)), 0, 1, pw, tc.endpoints, nil, nil, 0, nil)
		if !slices.EqualFunc(p.sigma, tc.want, func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }) {
			t.Errorf("%s: σ = %v, want %v", tc.name, p.sigma, tc.want)
		}
	}
	// The minimum width stops shrinking at range/100.
	xs := make([]float64, 300)
	for i := range xs {
		xs[i] = 0.5
	}
	p := newParzen(xs, recencyWeights(len(xs)), -1, 3, pw, false, nil, nil, 0, nil)
	if p.sigma[0] != 4.0/100 {
		t.Errorf("σ with 300 duplicates = %v, want 0.04", p.sigma[0])
	}
}

// The density integrates to 1 over its range, logMass agrees with it, and
// sample draws from it.
func TestParzenConsistent(t *testing.T) {
	xs := []float64{-0.9, -0.2, 0.1, 0.15, 0.8}
	p := newParzen(xs, []float64{1, 0.5, 1, 1, 2}, -1, 1, 1, false, nil, nil, 0, nil)
	const bins = 20
	total := 0.0
	mass := make([]float64, bins)
	for b := range bins {
		lo, hi := -1+2*float64(b)/bins, -1+2*float64(b+1)/bins
		mass[b] = math.Exp(p.logMass(lo, hi))
		// Midpoint rule on the density.
		const steps = 200
		integral := 0.0
		for i := range steps {
			z := lo + (hi-lo)*(float64(i)+0.5)/steps
			integral += math.Exp(p.logPDF(z)) * (hi - lo) / steps
		}
		if math.Abs(integral-mass[b]) > 1e-4 {
			t.Errorf("bin %d: ∫pdf = %v, mass = %v", b, integral, mass[b])
		}
		total += mass[b]
	}
	if math.Abs(total-1) > 1e-9 {
		t.Errorf("total mass %v, want 1", total)
	}
	r := rand.New(rand.NewPCG(1, 2))
	const n = 200000
	counts := make([]float64, bins)
	for range n {
		z := p.sample(r)
		if z < -1 || z > 1 {
			t.Fatalf("sample %v out of [-1, 1]", z)
		}
		counts[min(int((z+1)/2*bins), bins-1)]++
	}
	for b := range bins {
		if got := counts[b] / n; math.Abs(got-mass[b]) > 0.005 {
			t.Errorf("bin %d: sampled frequency %.4f, mass %.4f", b, got, mass[b])
		}
	}
}

func TestCategoricalEstimator(t *testing.T) {
	// One observation of category 0 with weight 1, prior weight 1, three
	// categories: kernel weights 1/2 each; the observation's kernel is
	// (1/2 + [c = 0]) / 2.5, the prior's is uniform.
	c := newCategorical([]float64{0}, []float64{1}, 3, 1)
	want := []float64{0.5/3 + 0.5*1.5/2.5, 0.5/3 + 0.5*0.5/2.5, 0.5/3 + 0.5*0.5/2.5}
	for i, lp := range c.logp {
		if math.Abs(math.Exp(lp)-want[i]) > 1e-12 {
			t.Errorf("p[%d] = %v, want %v", i, math.Exp(lp), want[i])
		}
	}
	// No observations: uniform.
	c = newCategorical(nil, nil, 4, 1)
	for i, lp := range c.logp {
		if math.Abs(math.Exp(lp)-0.25) > 1e-12 {
			t.Errorf("empty: p[%d] = %v", i, math.Exp(lp))
		}
	}
	// Sampling follows the probabilities.
	c = newCategorical([]float64{2, 2, 2, 1}, []float64{1, 1, 1, 1}, 3, 1)
	r := rand.New(rand.NewPCG(3, 4))
	counts := make([]float64, 3)
	const n = 100000
	for range n {
		counts[c.sample(r)]++
	}
	for i := range counts {
		if p := math.Exp(c.logp[i]); math.Abs(counts[i]/n-p) > 0.01 {
			t.Errorf("category %d: frequency %v, p %v", i, counts[i]/n, p)
		}
	}
}

// TestLogNormMassCut checks that the shortcut for intervals reaching past
// ±massCut returns what the general formula does.
func TestLogNormMassCut(t *testing.T) {
	for _, a := range []float64{-massCut, -8.6, -9, -12, -40, -1e3} {
		for _, b := range []float64{massCut, 8.6, 9, 12, 40, 1e3} {
			full := math.Log(1 - 0.5*math.Erfc(b/math.Sqrt2) - 0.5*math.Erfc(-a/math.Sqrt2))
			if got := logNormMass(a, b); got != full || got != 0 {
				t.Errorf("logNormMass(%v, %v) = %v, want %v", a, b, got, full)
			}
		}
	}
}

// TestParzenGrid checks that logPDF, which adds the terms of the kernels
// its grid lists directly, is within 1e-13 of logPDFExact, and that
// refitting one estimator in place fits what a new one does, with
// centres ordered as a stable sort orders them, over fits of many shapes:
// clustered and spread centres, ties, liars, both endpoint rules, ranges of
// several scales, and windows sliding over a pool of trials as a
// searcher's refits do, whose coordinates now and then change.
func TestParzenGrid(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var reused parzen
	skipped := 0
	var pool []float64 // coordinates by suggestion number, in [0, 1]
	start := 0
	for fit := range 400 {
		block := fit / 20
		lo := []float64{0, -1, -30, 1e-3}[block%4]
		span := []float64{1, 2, 60, 1e-2}[block/4%4]
		hi := lo + span
		if fit%20 == 0 || r.IntN(30) == 0 {
			// New coordinates for every suggestion number: the last order
			// may no longer hold.
			pool = pool[:0]
			for range 600 {
				switch r.IntN(4) {
				case 0: // a cluster
					pool = append(pool, clamp(0.3+0.01*r.NormFloat64(), 0, 1))
				case 1: // a tie
					pool = append(pool, float64(r.IntN(5))/4)
				default:
					pool = append(pool, r.Float64())
				}
			}
			start = 0
		}
		start = min(start+r.IntN(4), 300)
		n := r.IntN(260)
		var xs []float64
		var seqs []int
		for seq := start; len(xs) < n; seq++ {
			if r.IntN(8) == 0 {
				continue // not in this fit
			}
			xs, seqs = append(xs, lo+span*pool[seq]), append(seqs, seq)
		}
		if r.IntN(10) == 0 {
			seqs = nil
		}
		narrow := make([]bool, n)
		for i := range narrow {
			narrow[i] = r.IntN(6) == 0
		}
		ws := recencyWeights(n)
		endpoints := fit%3 == 0
		reused.fit(xs, ws, lo, hi, 1, endpoints, narrow, nil, 0, seqs)
		fresh := newParzen(xs, ws, lo, hi, 1, endpoints, narrow, nil, 0, nil)
		if !slices.Equal(reused.sigma, fresh.sigma) || !slices.Equal(reused.logc, fresh.logc) || !slices.Equal(reused.cum, fresh.cum) {
			t.Fatalf("fit %d: refitting in place differs from a new fit", fit)
		}
		want := make([]int, n+1)
		for i := range want {
			want[i] = i
		}
		mu := append(slices.Clone(xs), (lo+hi)/2)
		slices.SortStableFunc(want, func(a, b int) int {
			switch {
			case mu[a] < mu[b]:
				return -1
			case mu[a] > mu[b]:
				return 1
			}
			return 0
		})
		if !slices.Equal(reused.order, want) {
			t.Fatalf("fit %d: centres ordered %v, want %v", fit, reused.order, want)
		}
		if !reused.direct {
			t.Fatalf("fit %d: no direct sums", fit)
		}
		if n+1 >= gridMin && reused.grid.words == 0 {
			t.Fatalf("fit %d: %d kernels and no grid", fit, n+1)
		}
		zs := []float64{lo, hi, (lo + hi) / 2, math.Nextafter(hi, lo)}
		for c := range gridCells + 1 {
			zs = append(zs, lo+span*float64(c)/gridCells)
		}
		for range 200 {
			zs = append(zs, lo+span*r.Float64())
		}
		for _, x := range xs[:min(n, 20)] {
			zs = append(zs, x)
		}
		for _, z := range zs {
			z = clamp(z, lo, hi)
			got, exact := reused.logPDF(z), reused.logPDFExact(z)
			if !(math.Abs(got-exact) <= 1e-13*math.Max(1, math.Abs(exact))) {
				t.Fatalf("fit %d (%d kernels): logPDF(%v) = %v, logPDFExact %v", fit, n+1, z, got, exact)
			}
		}
		if g := &reused.grid; g.words > 0 {
			for c := range gridCells {
				listed := 0
				for _, w := range g.bits[c*g.words : (c+1)*g.words] {
					listed += bits.OnesCount64(w)
				}
				skipped += n + 1 - listed
			}
		}
	}
	if skipped == 0 {
		t.Error("the grids never left a kernel out")
	}
}

// TestSortCentres checks sortCentres against a stable sort of the values,
// on random, sorted, reversed and constant inputs with many ties.
func TestSortCentres(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 2000 {
		n := r.IntN(300)
		cs := make([]centre, n)
		for k := range cs {
			cs[k] = centre{float64(r.IntN(1 + trial%50)), k}
		}
		switch trial % 4 {
		case 1:
			slices.SortFunc(cs, func(a, b centre) int { return int(a.mu - b.mu) })
		case 2:
			slices.SortFunc(cs, func(a, b centre) int { return int(b.mu - a.mu) })
		}
		for k := range cs {
			cs[k].k = k
		}
		want := slices.Clone(cs)
		slices.SortStableFunc(want, func(a, b centre) int { return int(a.mu - b.mu) })
		sortCentres(cs)
		if !slices.Equal(cs, want) {
			t.Fatalf("trial %d: sorted %v, want %v", trial, cs, want)
		}
	}
}

// TestExpNeg checks expNeg against math.Exp over its domain: within 4
// units in the last place.
func TestExpNeg(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	vs := []float64{0, 1e-300, 1e-9, math.Ln2 / 512, math.Ln2 / 256, math.Ln2, 1, 40, 700}
	for range 200000 {
		vs = append(vs, r.Float64()*[]float64{1e-3, 1, 45, 700}[r.IntN(4)])
	}
	for _, v := range vs {
		got, want := expNeg(v), math.Exp(-v)
		if ulp := math.Nextafter(want, 1) - want; !(math.Abs(got-want) <= 4*ulp) {
			t.Fatalf("expNeg(%v) = %v, math.Exp gives %v (%.1f ulp apart)", v, got, want, math.Abs(got-want)/ulp)
		}
	}
}

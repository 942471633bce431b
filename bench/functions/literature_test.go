package functions

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randomIn returns a uniform configuration of p from r.
func randomIn(p *Problem, r *rand.Rand) []float64 {
	x := make([]float64, len(p.Dims))
	for i, d := range p.Dims {
		if d.Categorical() || d.Int {
			x[i] = d.Lo + float64(r.IntN(int(d.Hi-d.Lo)+1))
		} else {
			x[i] = d.Lo + r.Float64()*(d.Hi-d.Lo)
		}
	}
	return x
}

func relNear(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

func TestHartmann3KnownMinimum(t *testing.T) {
	for _, h := range []Hartmann3{Hartmann3Default, Hartmann3Good, Hartmann3Moderate, Hartmann3Bad, Hartmann3Terrible} {
		for _, eps := range []float64{0, 1, -2.5} {
			if v := h.Value(Hartmann3Argmin, Hartmann6ZMax, eps); !near(v, Hartmann3Min, 1e-5) {
				t.Errorf("%+v: H(argmin, z=100, eps=%v) = %.6f, want %.5f", h, eps, v, Hartmann3Min)
			}
		}
	}
	r := rand.New(rand.NewPCG(21, 22))
	for range 20000 {
		x := [3]float64{r.Float64(), r.Float64(), r.Float64()}
		if v := Hartmann3Default.Value(x, Hartmann6ZMax, 0); v < Hartmann3Min-1e-5 {
			t.Fatalf("H3(%v) = %v is below the minimum", x, v)
		}
	}
	// Below full fidelity the bias lowers α, so the minimiser's value
	// rises: by Bias·(1−s)·Σ exp(−inner) with the noise off.
	h := Hartmann3Terrible
	z := hartmannZ(1)
	s := math.Log(z) / math.Log(100)
	var w float64
	for i := range 4 {
		var inner float64
		for j := range 3 {
			d := Hartmann3Argmin[j] - hartmann3P[i][j]*1e-4
			inner += hartmann3A[i][j] * d * d
		}
		w += math.Exp(-inner)
	}
	plain := Hartmann3{}.Value(Hartmann3Argmin, z, 0)
	if got, want := h.Value(Hartmann3Argmin, z, 0), plain+h.Bias*(1-s)*w; !near(got, want, 1e-12) {
		t.Errorf("terrible at z=%v: %v, want %v", z, got, want)
	}
	if got, want := h.Value(Hartmann3Argmin, z, -2)-h.Value(Hartmann3Argmin, z, 0), 2*h.Noise*(1-s); !near(got, want, 1e-12) {
		t.Errorf("noise term %v, want %v", got, want)
	}
}

// The published formulas, written out literally once more.
func currinLiteral(x1, x2 float64) float64 {
	return (1 - math.Exp(-1/(2*x2))) * (2300*math.Pow(x1, 3) + 1900*x1*x1 + 2092*x1 + 60) /
		(100*math.Pow(x1, 3) + 500*x1*x1 + 4*x1 + 20)
}

func parkLiteral(x1, x2, x3, x4 float64) float64 {
	return x1/2*(math.Sqrt(1+(x2+x3*x3)*x4/(x1*x1))-1) + (x1+3*x4)*math.Exp(1+math.Sin(x3))
}

func TestCurrin(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for range 2000 {
		x1, x2 := r.Float64(), 1e-3+r.Float64()*(1-1e-3)
		if a, b := Currin(x1, x2), currinLiteral(x1, x2); !relNear(a, b, 1e-13) {
			t.Fatalf("Currin(%v, %v) = %v, formula %v", x1, x2, a, b)
		}
		lo := math.Max(0, x2-0.05)
		want := (Currin(x1+0.05, x2+0.05) + Currin(x1+0.05, lo) + Currin(x1-0.05, x2+0.05) + Currin(x1-0.05, lo)) / 4
		if got := CurrinLow(x1, x2); !relNear(got, want, 1e-13) {
			t.Fatalf("CurrinLow(%v, %v) = %v, want %v", x1, x2, got, want)
		}
	}
	// At x₂ = 0 the first factor is its limit, 1; near 0 it tends to it.
	if a, b := Currin(0.3, 0), currinLiteral(0.3, 1e-9); !relNear(a, b, 1e-12) {
		t.Errorf("Currin(0.3, 0) = %v, limit %v", a, b)
	}
	if v := Currin(CurrinArgmax, 0); !relNear(v, CurrinMax, 1e-15) {
		t.Errorf("Currin at its argmax = %.17g, want %.17g", v, CurrinMax)
	}
	for _, d := range []float64{-1e-3, 1e-3} {
		if Currin(CurrinArgmax+d, 0) > CurrinMax {
			t.Errorf("Currin(argmax%+g, 0) exceeds the maximum", d)
		}
	}
	for range 20000 {
		if x1, x2 := r.Float64(), r.Float64(); Currin(x1, x2) > CurrinMax {
			t.Fatalf("Currin(%v, %v) = %v exceeds the maximum", x1, x2, Currin(x1, x2))
		}
	}
	// A value worked by hand: at (0.5, 0.5), (1 − e⁻¹)·1868.5/159.5.
	if v, want := Currin(0.5, 0.5), (1-math.Exp(-1))*1868.5/159.5; !relNear(v, want, 1e-14) {
		t.Errorf("Currin(0.5, 0.5) = %v, want %v", v, want)
	}
}

func TestPark(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for range 2000 {
		x := [4]float64{1e-3 + r.Float64()*(1-1e-3), r.Float64(), r.Float64(), r.Float64()}
		if a, b := Park(x[0], x[1], x[2], x[3]), parkLiteral(x[0], x[1], x[2], x[3]); !relNear(a, b, 1e-11) {
			t.Fatalf("Park(%v) = %v, formula %v", x, a, b)
		}
		want := (1+math.Sin(x[0])/10)*parkLiteral(x[0], x[1], x[2], x[3]) - 2*x[0] + x[1]*x[1] + x[2]*x[2] + 0.5
		if got := ParkLow(x[0], x[1], x[2], x[3]); !relNear(got, want, 1e-11) {
			t.Fatalf("ParkLow(%v) = %v, want %v", x, got, want)
		}
	}
	// At x₁ = 0 the first term is its limit ½√((x₂ + x₃²)·x₄).
	if a, b := Park(0, 0.5, 0.5, 0.5), 0.5*math.Sqrt(0.75*0.5)+1.5*math.Exp(1+math.Sin(0.5)); !relNear(a, b, 1e-14) {
		t.Errorf("Park(0, ½, ½, ½) = %v, want %v", a, b)
	}
	if v := Park(1, 1, 1, 1); !relNear(v, ParkMax, 1e-15) || !near(ParkMax, 25.589254158606547, 1e-12) {
		t.Errorf("Park(1, 1, 1, 1) = %.17g, ParkMax %.17g", v, ParkMax)
	}
	for range 20000 {
		x := [4]float64{r.Float64(), r.Float64(), r.Float64(), r.Float64()}
		if v := Park(x[0], x[1], x[2], x[3]); v > ParkMax {
			t.Fatalf("Park(%v) = %v exceeds the maximum", x, v)
		}
	}
}

func TestBorehole(t *testing.T) {
	literal := func(x []float64) float64 {
		rw, r, tu, hu, tl, hl, l, kw := x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
		return 2 * math.Pi * tu * (hu - hl) / (math.Log(r/rw) * (1 + 2*l*tu/(math.Log(r/rw)*rw*rw*kw) + tu/tl))
	}
	p := BoreholeProblem("")
	r := rand.New(rand.NewPCG(27, 28))
	for range 2000 {
		x := randomIn(p, r)
		if a, b := Borehole(x), literal(x); !relNear(a, b, 1e-13) {
			t.Fatalf("Borehole(%v) = %v, formula %v", x, a, b)
		}
		lr := math.Log(x[1] / x[0])
		want := 5 * x[2] * (x[3] - x[5]) / (lr * (1.5 + 2*x[6]*x[2]/(lr*x[0]*x[0]*x[7]) + x[2]/x[4]))
		if got := BoreholeLow(x); !relNear(got, want, 1e-13) {
			t.Fatalf("BoreholeLow(%v) = %v, want %v", x, got, want)
		}
		if Borehole(x) > Borehole(BoreholeArgmax) {
			t.Fatalf("Borehole(%v) exceeds the maximum", x)
		}
	}
	// The argmax is the best of the 256 corners.
	best := math.Inf(-1)
	for c := range 256 {
		x := make([]float64, 8)
		for j, d := range BoreholeDims {
			x[j] = d.Lo
			if c>>j&1 == 1 {
				x[j] = d.Hi
			}
		}
		best = math.Max(best, Borehole(x))
	}
	if v := Borehole(BoreholeArgmax); v != best || !near(v, 309.5755876604079, 1e-9) {
		t.Errorf("Borehole(argmax) = %.17g, best corner %.17g", v, best)
	}
}

func TestBumps(t *testing.T) {
	if v := Bumps(BumpsArgmin); v != BumpsMin {
		t.Errorf("Bumps(argmin) = %.17g, want %.17g", v, BumpsMin)
	}
	p := BumpsProblem("")
	if err := p.Check(BumpsArgmin); err != nil {
		t.Fatal(err)
	}
	// No nearby configuration is lower: every float moved by ±1e-4, every
	// other integer and category.
	for j := range 6 {
		for _, d := range []float64{-1e-4, 1e-4} {
			x := append([]float64(nil), BumpsArgmin...)
			x[j] += d
			if v := Bumps(x); v < BumpsMin {
				t.Errorf("x%d%+g: %.17g is below the minimum", j, d, v)
			}
		}
	}
	for j := 6; j < 10; j++ {
		d := BumpsDims[j]
		for v := d.Lo; v <= d.Hi; v++ {
			x := append([]float64(nil), BumpsArgmin...)
			x[j] = v
			if f := Bumps(x); f < BumpsMin {
				t.Errorf("%s = %v: %.17g is below the minimum", d.Name, v, f)
			}
		}
	}
	r := rand.New(rand.NewPCG(29, 30))
	for range 20000 {
		if x := randomIn(p, r); Bumps(x) < BumpsMin {
			t.Fatalf("Bumps(%v) = %v is below the minimum", x, Bumps(x))
		}
	}
	// At a centre with its categories a bump gives its full depth, and
	// one category off halves it.
	c := bumpCentres[3]
	x := append(append([]float64(nil), c.mu[:6]...), c.mu[6]*8, c.mu[7]*8, float64(c.a), float64(c.b))
	var others float64
	z, _, _ := bumpsZ(x)
	for i, o := range bumpCentres {
		if i != 3 {
			others += bumpTerm(&z, &o.mu, o.sigma, o.w, c.a, c.b, o.a, o.b)
		}
	}
	if v := Bumps(x); !near(v, -(c.w + others), 1e-15) {
		t.Errorf("at bump 3's centre: %v, want %v", v, -(c.w + others))
	}
	// The decoy is at μ₀ mirrored, with its own categories, twice as deep.
	m := Mirror(BumpsDims, BumpsArgmin)
	m[8], m[9] = float64((bumpCentres[0].a+2)%4), float64((bumpCentres[0].b+1)%3)
	m0 := Mirror(BumpsDims, append(append([]float64(nil), bumpCentres[0].mu[:6]...), 0, 7, 0, 0))
	m0[8], m0[9] = m[8], m[9]
	if d := BumpsLow(m0, true) - Bumps(m0); !near(d, -bumpsDecoyDepth, 1e-12) {
		t.Errorf("decoy depth at its centre: %v", d)
	}
	if !(BumpsLow(m0, true) < BumpsLow(BumpsArgmin, true)) {
		t.Error("at fidelity 0 of the decoy setting the optimum is not beaten by the decoy's centre")
	}
}

func TestTwoFidelityInterpolation(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, name := range []string{"currin", "currin-mislead", "park", "park-mislead", "borehole", "borehole-mislead", "bumps", "bumps-decoy"} {
		p := ByName(name)
		if p == nil || p.Steps != TwoFidelitySteps {
			t.Fatalf("%s: missing or not two-fidelity", name)
		}
		var high, low func([]float64) float64
		switch p.Family {
		case "currin":
			high = func(x []float64) float64 { return -Currin(x[0], x[1]) }
			low = func(x []float64) float64 { return -CurrinLow(x[0], x[1]) }
		case "park":
			high = func(x []float64) float64 { return -Park(x[0], x[1], x[2], x[3]) }
			low = func(x []float64) float64 { return -ParkLow(x[0], x[1], x[2], x[3]) }
		case "borehole":
			high = func(x []float64) float64 { return -Borehole(x) }
			low = func(x []float64) float64 { return -BoreholeLow(x) }
		case "bumps":
			high = Bumps
			low = func(x []float64) float64 { return BumpsLow(x, p.Setting == SettingDecoy) }
		}
		for range 50 {
			x := randomIn(p, r)
			zero := low(x)
			if p.Setting == SettingMislead {
				zero = low(Mirror(p.Dims, x))
			}
			run := p.NewRun(x, 1)
			for u := 1; u <= p.Steps; u++ {
				s := float64(u) / 27
				want := s*high(x) + (1-s)*zero
				if u == p.Steps {
					want = high(x)
				}
				if v := run.Step(); !relNear(v, want, 1e-12) {
					t.Fatalf("%s step %d: %v, want %v", name, u, v, want)
				}
			}
			if p.True(x) != high(x) {
				t.Fatalf("%s: True %v, f %v", name, p.True(x), high(x))
			}
		}
		var argmin []float64
		switch p.Family {
		case "currin":
			argmin = []float64{CurrinArgmax, 0}
		case "park":
			argmin = []float64{1, 1, 1, 1}
		case "borehole":
			argmin = BoreholeArgmax
		case "bumps":
			argmin = BumpsArgmin
		}
		if v := p.True(argmin); v != p.Optimum {
			t.Errorf("%s: value at the argmin %.17g, optimum %.17g", name, v, p.Optimum)
		}
	}
	if got := Mirror(BumpsDims, BumpsArgmin)[6:]; got[0] != 8 || got[1] != 1 || got[2] != 1 || got[3] != 1 {
		t.Errorf("mirrored integers and categories: %v", got)
	}
}

func TestSpearman(t *testing.T) {
	if got := Spearman([]float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}); !near(got, 1, 1e-15) {
		t.Errorf("monotone: %v", got)
	}
	if got := Spearman([]float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}); !near(got, -1, 1e-15) {
		t.Errorf("reversed: %v", got)
	}
	// Ties share their mean rank: ranks (1.5, 1.5, 3, 4) against (1, 2, 3, 4).
	if got, want := Spearman([]float64{5, 5, 6, 7}, []float64{1, 2, 3, 4}), 4.5/math.Sqrt(4.5*5); !near(got, want, 1e-15) {
		t.Errorf("ties: %v, want %v", got, want)
	}
}

// TestRankStats pins every problem's rank statistics on the rank sample:
// the misleading settings really rank below ρ = 0.5 at step 1 and their
// curves cross, the others rank well.
func TestRankStats(t *testing.T) {
	want := map[string][2]float64{ // Spearman, crossing fraction
		"hartmann6":          {0.9229, 0.1088},
		"branin":             {0.9985, 0.0153},
		"countingones-4+4":   {0.9719, 0.0651},
		"countingones-16+16": {0.9678, 0.0746},
		"hartmann3":          {0.9811, 0.0541},
		"hartmann3-good":     {0.3189, 0.3975},
		"hartmann3-moderate": {0.1428, 0.4545},
		"hartmann3-bad":      {0.0402, 0.4875},
		"hartmann3-terrible": {-0.0242, 0.5081},
		"currin":             {0.9973, 0.0165},
		"currin-mislead":     {-0.7144, 0.8043},
		"park":               {0.9936, 0.0343},
		"park-mislead":       {-0.9540, 0.9102},
		"borehole":           {1.0000, 0.0000},
		"borehole-mislead":   {-0.9876, 0.9537},
		"bumps":              {0.9539, 0.0899},
		"bumps-decoy":        {0.3406, 0.3850},
	}
	for _, p := range Problems() {
		st := p.RankStats()
		w, ok := want[p.Name]
		if !ok {
			t.Errorf("%s: no expected rank statistics (measured ρ %.4f, crossing %.4f)", p.Name, st.Spearman, st.Crossing)
			continue
		}
		if !near(st.Spearman, w[0], 5e-5) || !near(st.Crossing, w[1], 5e-5) {
			t.Errorf("%s: ρ %.4f, crossing %.4f; want %.4f, %.4f", p.Name, st.Spearman, st.Crossing, w[0], w[1])
		}
		if p.Misleading != (st.Spearman < 0.5) {
			t.Errorf("%s: misleading %v but ρ = %.4f", p.Name, p.Misleading, st.Spearman)
		}
		if p.Misleading && st.Crossing < 0.25 {
			t.Errorf("%s: only %.4f of the pairs' curves cross", p.Name, st.Crossing)
		}
	}
}

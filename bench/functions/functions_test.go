package functions

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestHartmann6KnownMinimum(t *testing.T) {
	h := DefaultHartmann6()
	for _, eps := range []float64{0, 1, -2.5} {
		if v := h.Value(Hartmann6Argmin, Hartmann6ZMax, eps); !near(v, Hartmann6Min, 1e-5) {
			t.Errorf("H(argmin, z=100, eps=%v) = %.6f, want %.5f", eps, v, Hartmann6Min)
		}
	}
	// No sampled point does better than the minimum.
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var x [6]float64
		for j := range x {
			x[j] = r.Float64()
		}
		if v := h.Value(x, Hartmann6ZMax, 0); v < Hartmann6Min-1e-5 {
			t.Fatalf("H(%v) = %v is below the minimum", x, v)
		}
	}
}

func TestHartmann6BiasAndNoiseVanishAtFullFidelity(t *testing.T) {
	plain := Hartmann6{}
	h := DefaultHartmann6()
	r := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		var x [6]float64
		for j := range x {
			x[j] = r.Float64()
		}
		eps := r.NormFloat64()
		if a, b := h.Value(x, Hartmann6ZMax, eps), plain.Value(x, Hartmann6ZMax, 0); a != b {
			t.Fatalf("at z=100: %v with bias and noise, %v without", a, b)
		}
	}
	// Below full fidelity, bias raises the value and noise adds |eps|.
	x := Hartmann6Argmin
	low := h.Value(x, Hartmann6ZMin, 0)
	if !(low > Hartmann6Min+0.1) {
		t.Errorf("H(argmin, z=3) = %v: the bias should raise it well above %v", low, Hartmann6Min)
	}
	s := math.Log(3) / math.Log(100)
	if d := h.Value(x, 3, 2) - low; !near(d, 2*0.1*(1-s), 1e-12) {
		t.Errorf("noise term at z=3, eps=2: %v, want %v", d, 2*0.1*(1-s))
	}
	if d := h.Value(x, 3, -2) - low; !near(d, 2*0.1*(1-s), 1e-12) {
		t.Errorf("noise term uses |eps|: got %v", d)
	}
}

func TestHartmann6Cost(t *testing.T) {
	var h Hartmann6
	for _, c := range []struct{ z, want float64 }{{100, 1}, {3, 0.05 + 0.95*0.0009}, {50, 0.05 + 0.95*0.25}} {
		if got := h.Cost(c.z); !near(got, c.want, 1e-12) {
			t.Errorf("cost(%v) = %v, want %v", c.z, got, c.want)
		}
	}
}

func TestBraninKnownMinima(t *testing.T) {
	for _, x := range [][2]float64{{-math.Pi, 12.275}, {math.Pi, 2.275}, {9.42478, 2.475}} {
		if v := Branin(x[0], x[1], 1); !near(v, BraninMin, 1e-5) {
			t.Errorf("Branin(%v, s=1) = %.7f, want %v", x, v, BraninMin)
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		x1 := BraninX1Min + r.Float64()*(BraninX1Max-BraninX1Min)
		x2 := BraninX2Min + r.Float64()*(BraninX2Max-BraninX2Min)
		if v := Branin(x1, x2, 1); v < BraninMin-1e-6 {
			t.Fatalf("Branin(%v, %v) = %v is below the minimum", x1, x2, v)
		}
	}
}

func TestBraninFullFidelityIsPlainBranin(t *testing.T) {
	plain := func(x1, x2 float64) float64 {
		b, c, t := 5.1/(4*math.Pi*math.Pi), 5/math.Pi, 1/(8*math.Pi)
		d := x2 - b*x1*x1 + c*x1 - 6
		return d*d + 10*(1-t)*math.Cos(x1) + 10
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 1000 {
		x1, x2 := -5+15*r.Float64(), 15*r.Float64()
		if a, b := Branin(x1, x2, 1), plain(x1, x2); !near(a, b, 1e-9*math.Max(1, math.Abs(b))) {
			t.Fatalf("Branin(%v, %v, 1) = %v, plain Branin %v", x1, x2, a, b)
		}
	}
	// Lower fidelity changes the function (the bias the optimiser faces).
	if Branin(math.Pi, 2.275, 0) == Branin(math.Pi, 2.275, 1) {
		t.Error("Branin at s=0 equals s=1 at the minimiser")
	}
}

func TestBraninCost(t *testing.T) {
	for _, c := range []struct{ s, want float64 }{{1, 1}, {0, 0.05}, {0.25, 0.05 + 0.95*0.125}} {
		if got := BraninCost(c.s); !near(got, c.want, 1e-12) {
			t.Errorf("cost(%v) = %v, want %v", c.s, got, c.want)
		}
	}
}

func TestCountingOnes(t *testing.T) {
	c := CountingOnes{Cat: 4, Cont: 4}
	if c.Min() != -8 {
		t.Errorf("min = %v, want -8", c.Min())
	}
	if v := c.Value([]int{1, 1, 1, 1}, []int{729, 729, 729, 729}, 729); v != -8 {
		t.Errorf("all ones: %v, want -8", v)
	}
	if v := c.Value([]int{1, 0, 1, 0}, []int{9, 0, 3, 6}, 9); !near(v, -(2 + 1 + 0 + 1.0/3 + 2.0/3), 1e-12) {
		t.Errorf("value = %v", v)
	}
	if v := c.Expected([]int{1, 0, 0, 0}, []float64{0.5, 0.25, 0, 1}); v != -2.75 {
		t.Errorf("expected = %v, want -2.75", v)
	}
	if got := c.Cost(729); got != 1 {
		t.Errorf("cost(729) = %v, want 1", got)
	}
	if got := c.Cost(9); !near(got, 9.0/729, 1e-15) {
		t.Errorf("cost(9) = %v", got)
	}
}

func TestProblemsCostAndFidelity(t *testing.T) {
	for _, p := range Problems() {
		if got := p.Cost(p.Steps); !near(got, 1, 1e-12) {
			t.Errorf("%s: Cost(Steps) = %v, want 1", p.Name, got)
		}
		var sum float64
		for u := 1; u <= p.Steps; u++ {
			if p.StepCost(u) <= 0 {
				t.Errorf("%s: StepCost(%d) = %v, want > 0", p.Name, u, p.StepCost(u))
			}
			sum += p.StepCost(u)
		}
		if !near(sum, 1, 1e-12) {
			t.Errorf("%s: step costs sum to %v, want 1", p.Name, sum)
		}
	}
	h := ByName("hartmann6")
	if f := h.Fidelity(1); !(f >= Hartmann6ZMin && f <= 4) || h.Fidelity(h.Steps) != 100 {
		t.Errorf("hartmann6 fidelities %v .. %v", f, h.Fidelity(h.Steps))
	}
	if !near(h.Cost(1), 0.05+0.95*math.Pow(1.0/27, 2), 1e-12) {
		t.Errorf("hartmann6 Cost(1) = %v", h.Cost(1))
	}
	c := ByName("countingones-16+16")
	if c.Fidelity(1) != 9 || c.Fidelity(c.Steps) != 729 || c.Steps != 81 || c.Optimum != -32 || len(c.Dims) != 32 {
		t.Errorf("countingones-16+16: b %v..%v, %d steps, optimum %v, %d dims", c.Fidelity(1), c.Fidelity(c.Steps), c.Steps, c.Optimum, len(c.Dims))
	}
	if b := ByName("branin"); b.Fidelity(b.Steps) != 1 || b.Optimum != BraninMin {
		t.Errorf("branin: s(Steps) = %v", b.Fidelity(b.Steps))
	}
	if ByName("nope") != nil {
		t.Error("ByName of an unknown name")
	}
}

func TestRunsAtFullFidelity(t *testing.T) {
	h := ByName("hartmann6")
	run := h.NewRun(Hartmann6Argmin[:], 42)
	var v float64
	for run.At() < h.Steps {
		v = run.Step()
	}
	if !near(v, Hartmann6Min, 1e-5) || !near(h.True(Hartmann6Argmin[:]), Hartmann6Min, 1e-5) {
		t.Errorf("hartmann6 run at full fidelity: %v, true %v", v, h.True(Hartmann6Argmin[:]))
	}
	b := ByName("branin")
	run = b.NewRun([]float64{math.Pi, 2.275}, 1)
	for run.At() < b.Steps {
		v = run.Step()
	}
	if !near(v, BraninMin, 1e-5) {
		t.Errorf("branin run at full fidelity: %v", v)
	}
	c := ByName("countingones-4+4")
	ones := []float64{1, 1, 1, 1, 1, 1, 1, 1}
	run = c.NewRun(ones, 9)
	for run.At() < c.Steps {
		v = run.Step()
	}
	if v != -8 || c.True(ones) != -8 {
		t.Errorf("countingones all ones: %v, true %v", v, c.True(ones))
	}
	// Half-probability parameters: the full-budget mean is near 0.5 each.
	x := []float64{0, 1, 0, 1, 0.5, 0.5, 0.5, 0.5}
	run = c.NewRun(x, 10)
	for run.At() < c.Steps {
		v = run.Step()
	}
	if want := c.True(x); !near(v, want, 0.2) || want != -4 {
		t.Errorf("countingones at b=729: %v, expected %v", v, want)
	}
}

func TestRunsAreReproducible(t *testing.T) {
	for _, p := range Problems() {
		r := rand.New(rand.NewPCG(11, 12))
		x := make([]float64, len(p.Dims))
		for i, d := range p.Dims {
			if d.Categorical() || d.Int {
				x[i] = d.Lo + float64(r.IntN(int(d.Hi-d.Lo)+1))
			} else {
				x[i] = d.Lo + r.Float64()*(d.Hi-d.Lo)
			}
		}
		if err := p.Check(x); err != nil {
			t.Fatal(err)
		}
		a, b := p.NewRun(x, 7), p.NewRun(x, 7)
		var vals []float64
		for u := 1; u <= p.Steps; u++ {
			va, vb := a.Step(), b.Step()
			if va != vb {
				t.Fatalf("%s step %d: %v and %v from the same key", p.Name, u, va, vb)
			}
			vals = append(vals, va)
		}
		for _, u := range []int{0, 1, 5, p.Steps - 1} {
			re := a.Restart(u)
			if re.At() != u {
				t.Fatalf("%s: restarted at %d, want %d", p.Name, re.At(), u)
			}
			for k := u; k < p.Steps; k++ {
				if v := re.Step(); v != vals[k] {
					t.Fatalf("%s: restarted at %d, step %d = %v, original %v", p.Name, u, k+1, v, vals[k])
				}
			}
		}
		if p.Name == "hartmann6" {
			c := p.NewRun(x, 8)
			if c.Step() == vals[0] {
				t.Errorf("hartmann6: another key gave the same noisy value")
			}
		}
	}
}

func TestCheck(t *testing.T) {
	p := ByName("countingones-4+4")
	if p.Check([]float64{1, 0, 1, 0, 0.1, 0.2, 0.3, 0.4}) != nil {
		t.Error("a valid configuration was rejected")
	}
	for _, x := range [][]float64{{1, 0, 1}, {0.5, 0, 1, 0, 0.1, 0.2, 0.3, 0.4}, {1, 0, 1, 0, 0.1, 0.2, 0.3, 1.4}, {1, 0, 1, 0, 0.1, 0.2, 0.3, math.NaN()}} {
		if p.Check(x) == nil {
			t.Errorf("Check(%v) = nil", x)
		}
	}
}

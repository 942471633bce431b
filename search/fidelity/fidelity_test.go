package fidelity

import (
	"fmt"
	"math"
	"testing"

	"pgregory.net/rapid"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestSpearman(t *testing.T) {
	cases := []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}, 1},
		{[]float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		{[]float64{1, 2, 3, 4, 5}, []float64{5, 6, 7, 8, 7}, 0.8207826816681233},
		// Ranks with ties: a = 1, 2.5, 2.5, 4; b = 1, 2, 3, 4.
		{[]float64{0, 5, 5, 9}, []float64{1, 2, 3, 4}, 0.9486832980505138},
		{[]float64{1, math.Inf(1), 2}, []float64{1, 3, 2}, 1},
		{[]float64{1, math.NaN(), 2}, []float64{1, math.Inf(1), 2}, 1},
	}
	for i, c := range cases {
		if got := Spearman(c.a, c.b); !near(got, c.want) {
			t.Errorf("case %d: Spearman(%v, %v) = %v, want %v", i, c.a, c.b, got, c.want)
		}
	}
	for _, c := range [][2][]float64{{nil, nil}, {{1}, {2}}, {{1, 2}, {1}}, {{1, 1, 1}, {1, 2, 3}}, {{1, 2, 3}, {7, 7, 7}}} {
		if got := Spearman(c[0], c[1]); !math.IsNaN(got) {
			t.Errorf("Spearman(%v, %v) = %v, want NaN", c[0], c[1], got)
		}
	}
}

// Spearman depends on ranks only: it is symmetric, unchanged by strictly
// increasing maps of either sample, negated by a decreasing one, and in
// [-1, 1]; a sample with itself gives 1.
func TestSpearmanProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(2, 30).Draw(t, "n")
		vals := rapid.SliceOfN(rapid.IntRange(-5, 5), n, n)
		a := toFloat(vals.Draw(t, "a"))
		b := toFloat(vals.Draw(t, "b"))
		r := Spearman(a, b)
		if math.IsNaN(r) {
			if !allTied(a) && !allTied(b) {
				t.Fatalf("NaN for %v, %v", a, b)
			}
			return
		}
		if r < -1 || r > 1 {
			t.Fatalf("rho %v out of range", r)
		}
		if s := Spearman(b, a); !near(r, s) {
			t.Fatalf("not symmetric: %v vs %v", r, s)
		}
		mono := make([]float64, n)
		dec := make([]float64, n)
		for i, x := range a {
			mono[i] = math.Exp(x/3) + 7
			dec[i] = -x * x * x
		}
		if s := Spearman(mono, b); !near(r, s) {
			t.Fatalf("an increasing map changed rho: %v vs %v", r, s)
		}
		if s := Spearman(dec, b); !near(-r, s) {
			t.Fatalf("a decreasing map gave %v, want %v", s, -r)
		}
		if s := Spearman(a, a); !near(s, 1) {
			t.Fatalf("rho(a, a) = %v", s)
		}
	})
}

func toFloat(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

func allTied(xs []float64) bool {
	for _, x := range xs {
		if x != xs[0] {
			return false
		}
	}
	return true
}

// monitor returns a Monitor with n trials at budgets 1, 3 and 9, whose
// losses are f(i, budget).
func monitor(n int, f func(i int, b float64) float64, budgets ...float64) *Monitor {
	m := &Monitor{}
	for _, b := range budgets {
		for i := range n {
			m.Observe(fmt.Sprint("t", i), b, f(i, b))
		}
	}
	return m
}

func TestFloorAndChoose(t *testing.T) {
	r := Rule{MinPoints: 10}
	// Consistent budgets: the floor is the lowest budget and the model
	// takes the highest budget with 10 observations, as BOHB's does.
	m := monitor(12, func(i int, b float64) float64 { return float64(i) + b }, 1, 3)
	m.Observe("t0", 9, 1)
	if f := m.Floor(r); f != 1 {
		t.Fatalf("floor %v, want 1", f)
	}
	if b, ok := m.Choose(r); !ok || b != 3 {
		t.Fatalf("Choose = %v, %v; want 3", b, ok)
	}
	// Budget 3 reverses budget 1's order: budget 1 is distrusted, and
	// budget 3 is modelled.
	m = monitor(12, func(i int, b float64) float64 {
		if b == 1 {
			return -float64(i)
		}
		return float64(i)
	}, 1, 3)
	links := m.Links(r)
	if len(links) != 1 || !links[0].Misleading || !near(links[0].Rho, -1) || links[0].Pairs != 12 {
		t.Fatalf("links %+v", links)
	}
	if f := m.Floor(r); f != 3 {
		t.Fatalf("floor %v, want 3", f)
	}
	// With few points above the misleading pair, MinTrusted (4 = ⌈10/3⌉)
	// suffices there; with fewer, there is no model at all.
	m = monitor(12, func(i int, b float64) float64 { return float64(i) }, 1)
	for i := range 6 {
		m.Observe(fmt.Sprint("t", i), 3, -float64(i))
	}
	if f := m.Floor(r); f != 3 {
		t.Fatalf("floor %v, want 3", f)
	}
	if b, ok := m.Choose(r); !ok || b != 3 {
		t.Fatalf("Choose = %v, %v; want 3 with 6 points", b, ok)
	}
	m = monitor(12, func(i int, b float64) float64 { return float64(i) }, 1)
	for i := range 3 {
		m.Observe(fmt.Sprint("t", i), 3, -float64(i))
	}
	if f := m.Floor(r); f != 1 {
		t.Fatalf("3 pairs cannot be judged: floor %v, want 1", f)
	}
	if b, ok := m.Choose(r); !ok || b != 1 {
		t.Fatalf("Choose = %v, %v; want 1", b, ok)
	}
	// The same six reversed points, but MinTrusted 8: no budget at or
	// above the floor has enough, so there is no model.
	m = monitor(12, func(i int, b float64) float64 { return float64(i) }, 1)
	for i := range 6 {
		m.Observe(fmt.Sprint("t", i), 3, -float64(i))
	}
	if _, ok := m.Choose(Rule{MinPoints: 10, MinTrusted: 8}); ok {
		t.Fatal("Choose found a budget with too few trusted points")
	}
	// The highest misleading pair sets the floor.
	m = monitor(8, func(i int, b float64) float64 {
		switch b {
		case 3:
			return -float64(i)
		}
		return float64(i)
	}, 1, 3, 9, 27)
	if f := m.Floor(r); f != 9 {
		t.Fatalf("floor %v, want 9 (1→3 and 3→9 mislead, 9→27 does not)", f)
	}
	var empty Monitor
	if f := empty.Floor(r); f != 0 {
		t.Fatalf("empty floor %v", f)
	}
	if _, ok := empty.Choose(r); ok {
		t.Fatal("empty Choose ok")
	}
}

func TestRuleDefaults(t *testing.T) {
	r := Rule{MinPoints: 10}.withDefaults()
	if r.MinPairs != 6 || r.Threshold != 0.2 || r.MinTrusted != 4 {
		t.Fatalf("%+v", r)
	}
	if r := (Rule{MinPoints: 2}).withDefaults(); r.MinTrusted != 2 {
		t.Fatalf("MinTrusted %d, want at most MinPoints", r.MinTrusted)
	}
}

func TestObserveAndEntries(t *testing.T) {
	var m Monitor
	m.Observe("b", 3, 2)
	m.Observe("a", 3, math.NaN())
	m.Observe("a", 1, 5)
	m.Observe("a", math.Inf(1), 5)
	m.Observe("a", 1, 4) // replaces
	got := fmt.Sprint(m.Entries())
	want := "[{a 1 4} {a 3 +Inf} {b 3 2}]"
	if got != want {
		t.Fatalf("entries %s, want %s", got, want)
	}
	if fmt.Sprint(m.Budgets()) != "[1 3]" || m.Count(3) != 2 {
		t.Fatalf("budgets %v count %d", m.Budgets(), m.Count(3))
	}
}

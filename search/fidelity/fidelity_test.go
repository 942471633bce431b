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

func TestFloor(t *testing.T) {
	var r Rule
	// Consistent budgets: the floor is the lowest budget.
	m := monitor(12, func(i int, b float64) float64 { return float64(i) + b }, 1, 3)
	m.Observe("t0", 9, 1)
	if f := m.Floor(r); f != 1 {
		t.Fatalf("floor %v, want 1", f)
	}
	// Budget 3 reverses budget 1's order: budget 1 is distrusted.
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
	if f := m.Floor(Rule{Off: true}); f != 1 {
		t.Fatalf("floor with the check off %v, want 1", f)
	}
	// Five pairs cannot be judged; six can.
	m = monitor(12, func(i int, b float64) float64 { return float64(i) }, 1)
	for i := range 5 {
		m.Observe(fmt.Sprint("t", i), 3, -float64(i))
	}
	if f := m.Floor(r); f != 1 {
		t.Fatalf("5 pairs: floor %v, want 1", f)
	}
	m.Observe("t5", 3, -5)
	if f := m.Floor(r); f != 3 {
		t.Fatalf("6 pairs: floor %v, want 3", f)
	}
	// A correlation at the threshold does not mislead; one below does.
	a := []float64{1, 2, 3, 4, 5, 6}
	for _, tc := range []struct {
		b    []float64
		want float64
	}{
		{[]float64{6, 5, 4, 3, 2, 1}, 3},
		{[]float64{1, 2, 3, 4, 5, 6}, 1},
		{[]float64{3, 1, 2, 6, 5, 4}, 1}, // rho 0.6
		{[]float64{4, 1, 6, 2, 5, 3}, 3}, // rho 0.0857
	} {
		m = &Monitor{}
		for i := range a {
			m.Observe(fmt.Sprint(i), 1, a[i])
			m.Observe(fmt.Sprint(i), 3, tc.b[i])
		}
		if f := m.Floor(r); f != tc.want {
			t.Errorf("%v: floor %v, want %v (rho %v)", tc.b, f, tc.want, m.Links(r)[0].Rho)
		}
	}
	// The highest misleading pair sets the floor.
	m = monitor(8, func(i int, b float64) float64 {
		if b == 3 {
			return -float64(i)
		}
		return float64(i)
	}, 1, 3, 9, 27)
	if f := m.Floor(r); f != 9 {
		t.Fatalf("floor %v, want 9 (3 ranks in reverse of 27; 1 and 9 agree with 27)", f)
	}
	var empty Monitor
	if f := empty.Floor(r); f != 0 {
		t.Fatalf("empty floor %v", f)
	}
}

// Correlations between neighbours do not compose: budgets 1, 3, 9 and 27
// each agree with the next (ρ about 0.5: each budget's losses turn a
// third of the way from one ranking, reversed, to the highest budget's
// ranking), yet budget 1 ranks the trials in reverse of 27 and budget 3
// nearly so. Each budget is judged against 27, the highest budget it
// shares six trials with, so 1 and 3 are distrusted and the floor is 9.
func TestLinksReachTheHighestBudget(t *testing.T) {
	perm := []float64{5, 10, 2, 7, 0, 11, 3, 8, 1, 6, 9, 4} // about uncorrelated with the index
	budgets := []float64{1, 3, 9, 27}
	loss := func(i, k int) float64 {
		th := math.Pi * float64(k) / 3 // 0 at budget 1, π at 27
		return -math.Cos(th)*(float64(i)-5.5) + math.Sin(th)*(perm[i]-5.5)
	}
	var m Monitor
	for k, b := range budgets {
		for i := range perm {
			m.Observe(fmt.Sprint("t", i), b, loss(i, k))
		}
	}
	col := func(k int) []float64 {
		out := make([]float64, len(perm))
		for i := range out {
			out[i] = loss(i, k)
		}
		return out
	}
	for k := 0; k+1 < len(budgets); k++ {
		if rho := Spearman(col(k), col(k+1)); rho < 0.2 {
			t.Fatalf("budgets %v and %v: ρ %v, want them to agree (≥ 0.2)", budgets[k], budgets[k+1], rho)
		}
	}
	links := m.Links(Rule{})
	if len(links) != 3 {
		t.Fatalf("links %+v", links)
	}
	for k, l := range links {
		if l.Lo != budgets[k] || l.Hi != 27 || l.Pairs != len(perm) || l.Misleading != (k < 2) {
			t.Errorf("link %d: %+v, want %v against 27 over %d trials, misleading %v", k, l, budgets[k], len(perm), k < 2)
		}
	}
	if !(links[0].Rho < -0.9) {
		t.Errorf("budget 1 against 27: ρ %v, want about −1", links[0].Rho)
	}
	if f := m.Floor(Rule{}); f != 9 {
		t.Fatalf("floor %v, want 9", f)
	}
	// The rule's earlier form judged neighbours only, and trusted them all.
	for k, l := range m.Links(Rule{Neighbours: true}) {
		if l.Lo != budgets[k] || l.Hi != budgets[k+1] || l.Misleading {
			t.Errorf("neighbours: link %d: %+v, want %v against %v, not misleading", k, l, budgets[k], budgets[k+1])
		}
	}
	if f := m.Floor(Rule{Neighbours: true}); f != 1 {
		t.Fatalf("neighbours: floor %v, want 1", f)
	}
	// Until budgets 1 and 27 share six trials, budget 1 is judged against
	// the highest budget that does.
	var early Monitor
	for k, b := range budgets[:3] {
		for i := range perm {
			early.Observe(fmt.Sprint("t", i), b, loss(i, k))
		}
	}
	for i := range 5 {
		early.Observe(fmt.Sprint("t", i), 27, loss(i, 3))
	}
	if l := early.Links(Rule{})[0]; l.Hi != 9 || l.Pairs != len(perm) {
		t.Fatalf("with 5 trials at 27, budget 1's link %+v, want against 9", l)
	}
	early.Observe("t5", 27, loss(5, 3))
	if l := early.Links(Rule{})[0]; l.Hi != 27 || l.Pairs != 6 {
		t.Fatalf("with 6 trials at 27, budget 1's link %+v, want against 27 over 6", l)
	}
}

func TestRuleDefaults(t *testing.T) {
	if r := (Rule{}).withDefaults(); r.MinPairs != 6 || r.Threshold != 0.2 {
		t.Fatalf("%+v", r)
	}
	for _, tc := range [][2]int{{10, 4}, {6, 3}, {30, 10}, {2, 2}, {1, 1}} {
		if got := MinTrusted(tc[0]); got != tc[1] {
			t.Errorf("MinTrusted(%d) = %d, want %d", tc[0], got, tc[1])
		}
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
	want := "[{a 1 4} {b 3 2} {a 3 +Inf}]" // by budget, then first observed
	if got != want {
		t.Fatalf("entries %s, want %s", got, want)
	}
	if fmt.Sprint(m.Budgets()) != "[1 3]" || m.Count(3) != 2 {
		t.Fatalf("budgets %v count %d", m.Budgets(), m.Count(3))
	}
}

// The links of a Monitor kept up to date observation by observation, with
// its cache, equal those of a Monitor rebuilt from its entries.
func TestLinksCache(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var m Monitor
		r := Rule{MinPairs: 3}
		budgets := []float64{1, 3, 9}
		n := rapid.IntRange(1, 80).Draw(t, "n")
		for i := range n {
			id := fmt.Sprint("t", rapid.IntRange(0, 12).Draw(t, fmt.Sprint("id", i)))
			b := budgets[rapid.IntRange(0, 2).Draw(t, fmt.Sprint("b", i))]
			m.Observe(id, b, float64(rapid.IntRange(-3, 3).Draw(t, fmt.Sprint("l", i))))
			if rapid.Bool().Draw(t, fmt.Sprint("ask", i)) {
				m.Links(r)
			}
		}
		var fresh Monitor
		for _, e := range m.Entries() {
			fresh.Observe(e.Trial, e.Budget, e.Loss)
		}
		got, want := fmt.Sprint(m.Links(r)), fmt.Sprint(fresh.Links(r))
		if got != want {
			t.Fatalf("cached links %s, fresh %s", got, want)
		}
		if fmt.Sprint(fresh.Entries()) != fmt.Sprint(m.Entries()) {
			t.Fatal("entries do not rebuild the monitor")
		}
	})
}

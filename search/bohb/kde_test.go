package bohb

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestBandwidths(t *testing.T) {
	// Two columns over n = 4 rows, d = 2: σ = (sqrt(1.25)·0.1, 0) → the
	// second is clipped.
	rows := [][]float64{{0.1, 0.5}, {0.2, 0.5}, {0.3, 0.5}, {0.4, 0.5}}
	bw := bandwidths(rows, 1e-3)
	factor := 1.06 * math.Pow(4, -1.0/6)
	want0 := factor * math.Sqrt(0.0125)
	if !near(bw[0], want0, 1e-12) {
		t.Errorf("bw[0] = %v, want %v", bw[0], want0)
	}
	if bw[1] != 1e-3 {
		t.Errorf("bw[1] = %v, want the minimum 1e-3", bw[1])
	}

	// One column of 0 and 1 (population σ = 0.5), n = 2, d = 1.
	bw = bandwidths([][]float64{{0}, {1}}, 1e-3)
	if want := 1.06 * 0.5 * math.Pow(2, -0.2); !near(bw[0], want, 1e-12) {
		t.Errorf("bw = %v, want %v", bw[0], want)
	}
	// A larger minimum wins over the rule of thumb.
	bw = bandwidths([][]float64{{0}, {1}}, 0.9)
	if bw[0] != 0.9 {
		t.Errorf("bw = %v, want 0.9", bw[0])
	}
	// Category codes use the same formula: codes 0, 0, 2, 2 → σ = 1.
	bw = bandwidths([][]float64{{0}, {0}, {2}, {2}}, 1e-3)
	if want := 1.06 * math.Pow(4, -0.2); !near(bw[0], want, 1e-12) {
		t.Errorf("categorical bw = %v, want %v", bw[0], want)
	}
}

func TestPDF(t *testing.T) {
	// Continuous: one row at 0.5, bw 0.1 → N(0.5, 0.01) density.
	k := kde{rows: [][]float64{{0.5}}, bw: []float64{0.1}}
	want := 1 / (math.Sqrt(2*math.Pi) * 0.1) * math.Exp(-0.5)
	if got := k.pdf([]float64{0.6}, []int{0}); !near(got, want, 1e-12) {
		t.Errorf("continuous pdf = %v, want %v", got, want)
	}
	// Categorical with 3 categories, λ = 0.3: 0.7 on its own, 0.15 elsewhere;
	// averaged over two rows.
	k = kde{rows: [][]float64{{0}, {1}}, bw: []float64{0.3}}
	cats := []int{3}
	for _, c := range []struct{ x, want float64 }{{0, (0.7 + 0.15) / 2}, {1, (0.15 + 0.7) / 2}, {2, 0.15}} {
		if got := k.pdf([]float64{c.x}, cats); !near(got, c.want, 1e-12) {
			t.Errorf("categorical pdf(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	// λ is capped at (c−1)/c: the kernel is uniform, 1/3 everywhere, and the
	// densities sum to 1.
	k = kde{rows: [][]float64{{0}}, bw: []float64{5}}
	sum := 0.0
	for x := range 3 {
		p := k.pdf([]float64{float64(x)}, cats)
		if !near(p, 1.0/3, 1e-12) {
			t.Errorf("capped pdf(%d) = %v, want 1/3", x, p)
		}
		sum += p
	}
	if !near(sum, 1, 1e-12) {
		t.Errorf("sum = %v", sum)
	}
	// Product over dimensions; a one-category dimension contributes 1.
	k = kde{rows: [][]float64{{0.5, 0, 0}}, bw: []float64{0.1, 0.3, 0.2}}
	got := k.pdf([]float64{0.5, 1, 0}, []int{0, 3, 1})
	if want := 1 / (math.Sqrt(2*math.Pi) * 0.1) * 0.15; !near(got, want, 1e-12) {
		t.Errorf("product pdf = %v, want %v", got, want)
	}
}

func TestSplitSizes(t *testing.T) {
	for _, c := range []struct{ n, minPoints, topN, good, bad int }{
		{3, 3, 15, 3, 3},
		{6, 3, 15, 3, 5},
		{10, 3, 15, 3, 8},
		{20, 3, 15, 3, 17},
		{40, 3, 15, 6, 34},
		{60, 3, 15, 9, 51},
		{99, 3, 15, 14, 84},
		{100, 3, 15, 15, 85},
		{100, 20, 15, 20, 85},
		{10, 2, 50, 5, 5},
	} {
		g, b := splitSizes(c.n, c.minPoints, c.topN)
		if g != c.good || b != c.bad {
			t.Errorf("splitSizes(%d, %d, %d) = %d, %d; want %d, %d", c.n, c.minPoints, c.topN, g, b, c.good, c.bad)
		}
	}
}

func TestFitSplit(t *testing.T) {
	// 40 one-dimensional rows, loss = index, given in reverse order: the
	// good set is the 6 lowest losses, the bad set the next 34.
	var rows [][]float64
	var losses []float64
	for i := 39; i >= 0; i-- {
		rows = append(rows, []float64{float64(i) / 40})
		losses = append(losses, float64(i))
	}
	m := fit(1, rows, losses, 1, 2, 15, 1e-3)
	if m == nil {
		t.Fatal("no model")
	}
	if len(m.good.rows) != 6 || len(m.bad.rows) != 34 {
		t.Fatalf("good %d, bad %d; want 6, 34", len(m.good.rows), len(m.bad.rows))
	}
	for i, r := range m.good.rows {
		if r[0] != float64(i)/40 {
			t.Errorf("good[%d] = %v", i, r)
		}
	}
	for i, r := range m.bad.rows {
		if r[0] != float64(i+6)/40 {
			t.Errorf("bad[%d] = %v", i, r)
		}
	}

	// Too few rows for the bad set: with dim 2 and minPoints 3, 5 rows
	// leave 2 bad rows, 6 rows leave 3.
	rows, losses = nil, nil
	for i := range 6 {
		rows = append(rows, []float64{float64(i) / 6, 0.5})
		losses = append(losses, float64(i))
	}
	if m := fit(1, rows[:5], losses[:5], 2, 3, 15, 1e-3); m != nil {
		t.Error("fit with 5 rows in 2 dimensions")
	}
	if m := fit(1, rows, losses, 2, 3, 15, 1e-3); m == nil || len(m.good.rows) != 3 || len(m.bad.rows) != 3 {
		t.Errorf("fit with 6 rows = %+v", m)
	}
	// Ties keep observation order; +Inf losses rank last.
	m = fit(1, [][]float64{{0.1}, {0.2}, {0.3}, {0.4}}, []float64{math.Inf(1), 1, 1, 0}, 1, 2, 15, 1e-3)
	if m == nil || m.good.rows[0][0] != 0.4 || m.good.rows[1][0] != 0.2 || m.bad.rows[0][0] != 0.3 || m.bad.rows[1][0] != 0.1 {
		t.Errorf("tie order: %+v", m)
	}
}

func TestTruncNormal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ m, sd float64 }{{0, 0.1}, {1, 0.1}, {0.5, 0.003}, {0.3, 3}, {0, 1e-9}} {
		var sum float64
		const n = 4000
		for range n {
			x := truncNormal(r, c.m, c.sd)
			if !(x >= 0 && x <= 1) {
				t.Fatalf("truncNormal(%v, %v) = %v", c.m, c.sd, x)
			}
			sum += x
		}
		mean := sum / n
		// Expected mean of the truncated normal.
		a, b := -c.m/c.sd, (1-c.m)/c.sd
		phi := func(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }
		want := c.m + c.sd*(phi(a)-phi(b))/(normCDF(b)-normCDF(a))
		if !near(mean, want, 0.02) {
			t.Errorf("truncNormal(%v, %v): mean %v, want %v", c.m, c.sd, mean, want)
		}
	}
}

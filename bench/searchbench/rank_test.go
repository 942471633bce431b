package searchbench

import (
	"strings"

	"github.com/hone-tune/hone/bench/functions"
	"math"
	"testing"
)

func TestRanks(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-4 }
	// Complete separation, 3 against 3: U = 9 of 9, σ² = 9·7/12, z = 4.5/σ.
	z := 4.5 / math.Sqrt(9.0*7/12)
	lo := 0.5 * math.Erfc(z/math.Sqrt2)
	cases := []struct {
		name    string
		a, b    []float64
		better  float64
		p       float64
		pApprox bool
	}{
		{"a lower", []float64{1, 2, 3}, []float64{4, 5, 6}, 1, 1 - lo, false},
		{"b lower", []float64{4, 5, 6}, []float64{1, 2, 3}, 0, lo, false},
		{"same samples", []float64{1, 2, 3}, []float64{1, 2, 3}, 0.5, 0.5, false},
		// One tie between the samples: U = 8.5 (3 > every b but 3.5 vs
		// 3.5 counts half); tie correction Σ(t³−t) = 6.
		{"a tie", []float64{1, 2, 3.5}, []float64{3.5, 5, 6}, 8.5 / 9, 0.5 * math.Erfc(-(8.5-4.5)/math.Sqrt(9.0/12*(7-6.0/30))/math.Sqrt2), false},
		// Runs that reached nothing (+Inf) rank last and tie each other.
		{"inf", []float64{1, math.Inf(1)}, []float64{math.Inf(1), math.Inf(1)}, 0.75, 0, true},
		{"empty", nil, []float64{1}, 0.5, 0.5, false},
	}
	for _, c := range cases {
		r := Ranks(c.a, c.b)
		if !near(r.Better, c.better) {
			t.Errorf("%s: Better = %v, want %v", c.name, r.Better, c.better)
		}
		if !c.pApprox && !near(r.P, c.p) {
			t.Errorf("%s: P = %v, want %v", c.name, r.P, c.p)
		}
		if c.pApprox && !(r.P > 0.5 && r.P < 1) {
			t.Errorf("%s: P = %v, want in (0.5, 1): a is better", c.name, r.P)
		}
	}
	// Symmetry: swapping the samples mirrors both figures.
	a, b := []float64{0.3, 0.1, 0.7, 0.7, 2}, []float64{0.2, 0.7, 1.5, 3, 0.05, 0.9}
	r, s := Ranks(a, b), Ranks(b, a)
	if !near(r.Better+s.Better, 1) || !near(r.P+s.P, 1) {
		t.Errorf("Ranks(a, b) = %+v and Ranks(b, a) = %+v do not mirror", r, s)
	}
}

func TestAutoCells(t *testing.T) {
	p := functions.ByName("currin")
	runs := func(m string, vs ...float64) []*Trace {
		var out []*Trace
		for _, v := range vs {
			out = append(out, &Trace{Method: m, Points: []Point{{1, v}}})
		}
		return out
	}
	cell := func(c int, auto, base []float64) *Cell {
		return &Cell{Problem: p, Concurrency: c, Budget: 10, Seeds: len(auto), Methods: []string{"random", "asha", "auto"},
			Traces: map[string][]*Trace{"random": runs("random", 9, 9, 9, 9, 9, 9), "asha": runs("asha", base...), "auto": runs("auto", auto...)}}
	}
	cells := []*Cell{
		// Within 1.25×.
		cell(1, []float64{1, 2, 3, 4, 5, 6}, []float64{1, 2, 3, 4, 5, 6}),
		// Medians 2× apart, runs interleaved: a miss, not a sure one.
		cell(4, []float64{1, 6, 7, 8, 9, 10}, []float64{2, 3, 3.5, 3.5, 11, 12}),
		// Every baseline run lower: a sure miss.
		cell(16, []float64{7, 8, 9, 10, 11, 12}, []float64{1, 2, 3, 4, 5, 6}),
	}
	var b strings.Builder
	writeAutoCells(&b, cells)
	got := b.String()
	for _, want := range []string{
		"Of the 2 cells where `auto` is not within 1.25×, the baseline is surely better (p < 0.05) in 1;",
		"| currin | 1 | 3.5 | asha | 3.5 | 1× | **yes** | 0.50 | 0.500 |",
		"| currin | 4 | 7.5 | asha | 3.5 | 2.14× | no |",
		"| currin | 16 | 9.5 | asha | 3.5 | 2.71× | no (surely) | 0.00 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in\n%s", want, got)
		}
	}
}

package asha

import (
	"testing"

	"github.com/hone-tune/hone/pareto"
	"pgregory.net/rapid"
)

// TestRankMatchesPareto: the rung's incremental order is pareto's. As
// points are added one by one, the number ahead of each new point is
// pareto.Ahead's over the rung and the point, the point last, and every
// feasible point's kept rank is pareto.Sort's among the feasible points.
// Coordinates are small integers, so that ties, duplicates and equal
// violations are frequent.
func TestRankMatchesPareto(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.IntRange(1, 3).Draw(t, "objectives")
		n := rapid.IntRange(1, 25).Draw(t, "points")
		constrained := rapid.Bool().Draw(t, "constrained")
		g := &rung{recorded: map[string]float64{}}
		var losses [][]float64
		var viol []float64
		for i := range n {
			p := point{losses: make([]float64, d)}
			for j := range d {
				p.losses[j] = float64(rapid.IntRange(0, 4).Draw(t, "loss"))
			}
			if constrained {
				p.violation = rapid.SampledFrom([]float64{0, 0, 0.5, 2}).Draw(t, "violation")
			}
			all := append(append([][]float64(nil), losses...), p.losses)
			allViol := append(append([]float64(nil), viol...), p.violation)
			if got, want := g.ahead(p), pareto.Ahead(all, allViol, i); got != want {
				t.Fatalf("point %d %v (violation %v): %d ahead, pareto.Ahead says %d", i, p.losses, p.violation, got, want)
			}
			g.addPoint(string(rune('a'+i)), p)
			losses, viol = all, allViol
			var feas [][]float64
			var at []int
			for k, v := range viol {
				if v <= 0 {
					feas = append(feas, losses[k])
					at = append(at, k)
				}
			}
			for k, r := range pareto.Sort(feas) {
				if got := g.points[at[k]].rank; got != r {
					t.Fatalf("after point %d: point %d has rank %d, pareto.Sort says %d", i, at[k], got, r)
				}
			}
		}
	})
}

package pareto

import (
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

func TestOrderByHand(t *testing.T) {
	pts := [][]float64{{0, 4}, {1, 3}, {3, 1}, {4, 0}, {2, 4}, {9, 9}}
	// Front 0, 1, 2, 3 (crowding ∞, 1.5, 1.5, ∞), then 4, then 5.
	rank, crowd := Ranking(pts, nil)
	if want := []int{0, 0, 0, 0, 1, 2}; !slices.Equal(rank, want) {
		t.Errorf("ranks %v, want %v", rank, want)
	}
	if inf := math.Inf(1); !slices.Equal(crowd, []float64{inf, 1.5, 1.5, inf, inf, inf}) {
		t.Errorf("crowding %v", crowd)
	}
	if got, want := Order(pts, nil), []int{0, 3, 1, 2, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("Order = %v, want %v", got, want)
	}
	for i, want := range []int{0, 2, 2, 0, 4, 5} {
		if got := Ahead(pts, nil, i); got != want {
			t.Errorf("Ahead(%d) = %d, want %d", i, got, want)
		}
	}
	// Point 0 infeasible by 1 and point 5 by 0.5: the feasible front is 1,
	// 2, 3 (crowding ∞, 2, ∞), then 4; then 5 and 0 by violation.
	viol := []float64{1, 0, 0, 0, 0, 0.5}
	if got, want := Order(pts, viol), []int{1, 3, 2, 4, 5, 0}; !slices.Equal(got, want) {
		t.Errorf("Order with violations = %v, want %v", got, want)
	}
	if got := Ahead(pts, viol, 2); got != 2 {
		t.Errorf("Ahead(2) with violations = %d, want 2", got)
	}
	if got := Order(nil, nil); len(got) != 0 {
		t.Errorf("Order of nothing = %v", got)
	}
}

// TestOrderProperties: Order is a permutation sorted by rank, then by
// crowding distance descending, ties by index; a rank's points are
// together; Ahead(i) counts exactly the points before i's first tie.
func TestOrderProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.IntRange(1, 3).Draw(t, "d")
		pts := pointsGen(d, 0, 12).Draw(t, "points")
		var viol []float64
		if rapid.Bool().Draw(t, "constrained") {
			viol = rapid.SliceOfN(rapid.SampledFrom([]float64{0, 0, 1, 2}), len(pts), len(pts)).Draw(t, "violation")
		}
		rank, crowd := Ranking(pts, viol)
		order := Order(pts, viol)
		seen := make([]bool, len(pts))
		for k, i := range order {
			if seen[i] {
				t.Fatalf("index %d twice in %v", i, order)
			}
			seen[i] = true
			if k == 0 {
				continue
			}
			p := order[k-1]
			switch {
			case rank[p] > rank[i]:
				t.Fatalf("rank %d before rank %d", rank[p], rank[i])
			case rank[p] == rank[i] && crowd[p] < crowd[i]:
				t.Fatalf("crowding %v before %v in rank %d", crowd[p], crowd[i], rank[i])
			case rank[p] == rank[i] && crowd[p] == crowd[i] && p > i:
				t.Fatalf("tie: index %d before %d", p, i)
			}
		}
		for k, i := range order {
			first := k
			for first > 0 && rank[order[first-1]] == rank[i] && crowd[order[first-1]] == crowd[i] {
				first--
			}
			if got := Ahead(pts, viol, i); got != first {
				t.Fatalf("Ahead(%d) = %d, want %d (order %v)", i, got, first, order)
			}
		}
	})
}

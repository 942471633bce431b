package mobench

import (
	"math"
	"slices"

	"github.com/hone-tune/hone/bench/mofunctions"
)

// Curve is the median over seeds of the hypervolume that runs of a method
// reached by each budget: Median[i] holds from Budget[i] until the next
// budget (before the first, no point arrived: 0). The budgets are those
// at which some seed's hypervolume changed, ascending.
type Curve struct {
	Budget, Median []float64
}

// MedianCurve returns the curve of runs (one per seed, each its arrivals
// in order) on p.
func MedianCurve(p *mofunctions.Problem, runs [][]Arrival) Curve {
	var budgets []float64
	for _, arr := range runs {
		for _, a := range arr {
			budgets = append(budgets, a.Spent)
		}
	}
	slices.Sort(budgets)
	budgets = slices.Compact(budgets)
	c := Curve{Budget: budgets, Median: make([]float64, len(budgets))}
	// Each seed's hypervolume only changes at its own arrivals: keep its
	// points so far and recompute at those.
	hv := make([]float64, len(runs))
	next := make([]int, len(runs))
	pts := make([][][]float64, len(runs))
	for i, b := range budgets {
		for s, arr := range runs {
			changed := false
			for next[s] < len(arr) && arr[next[s]].Spent <= b {
				pts[s] = append(pts[s], arr[next[s]].Values)
				next[s]++
				changed = true
			}
			if changed {
				hv[s] = p.Hypervolume(pts[s])
			}
		}
		c.Median[i] = median(hv)
	}
	return c
}

// At returns the curve's median hypervolume at budget b.
func (c Curve) At(b float64) float64 {
	i, found := slices.BinarySearch(c.Budget, b)
	if !found {
		i--
	}
	if i < 0 {
		return 0
	}
	return c.Median[i]
}

// Reach returns the first budget at which the curve's median reaches
// target (is at least it), or NaN if it never does.
func (c Curve) Reach(target float64) float64 {
	for i, m := range c.Median {
		if m >= target {
			return c.Budget[i]
		}
	}
	return math.NaN()
}

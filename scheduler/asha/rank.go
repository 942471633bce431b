package asha

import (
	"math"

	"github.com/hone-tune/hone/pareto"
)

// The order of a rung with several objectives is pareto.Ranking's over
// the points recorded there and the trial being decided (the package's
// doc): constrained non-dominated rank, then crowding distance within the
// rank. Sorting the rung afresh for every result would take O(M·n²) per
// result; the rung instead keeps each feasible point's rank, the length of
// the longest chain of feasible points each dominating the next that ends
// at it (pareto.Sort's rank), and updates it as points are added, which
// gives the same order (TestRankMatchesPareto).

// feasible reports whether a violation is none (pareto.SortConstrained's
// rule).
func feasible(v float64) bool { return v <= 0 }

// violationLoss is a violation in the order of pareto.SortConstrained:
// NaN as +Inf.
func violationLoss(v float64) float64 {
	if math.IsNaN(v) {
		return math.Inf(1)
	}
	return v
}

// rankOf returns the rank a feasible point with losses would have among
// the rung's feasible points: one more than the highest rank of the
// points that dominate it, 0 when none does.
func (g *rung) rankOf(losses []float64) int {
	r := 0
	for _, q := range g.points {
		if feasible(q.violation) && q.rank >= r && pareto.Dominates(q.losses, losses) {
			r = q.rank + 1
		}
	}
	return r
}

// ahead returns the number of the rung's points that the order puts
// strictly ahead of p, were p added: for a feasible p, the feasible
// points of a lower rank and those of its rank with a larger crowding
// distance (a point p dominates is of a higher rank once p is added, and
// the points of lower rank keep theirs); for an infeasible one, every
// feasible point, the infeasible ones of smaller violation, and those of
// its violation with a larger crowding distance. The crowding distance is
// computed over p's rank or violation, in the order points were recorded,
// p last.
func (g *rung) ahead(p point) int {
	n := 0
	var group []int // indices into pts of p's rank, p last
	var pts [][]float64
	if feasible(p.violation) {
		r := g.rankOf(p.losses)
		for _, q := range g.points {
			switch {
			case !feasible(q.violation):
			case q.rank < r:
				n++
			case q.rank == r && !pareto.Dominates(p.losses, q.losses):
				group = append(group, len(pts))
				pts = append(pts, q.losses)
			}
		}
	} else {
		pv := violationLoss(p.violation)
		for _, q := range g.points {
			qv := violationLoss(q.violation)
			switch {
			case feasible(q.violation) || qv < pv:
				n++
			case qv == pv:
				group = append(group, len(pts))
				pts = append(pts, q.losses)
			}
		}
	}
	group = append(group, len(pts))
	pts = append(pts, p.losses)
	crowd := pareto.Crowding(pts, group)
	mine := crowd[len(crowd)-1]
	for _, d := range crowd[:len(crowd)-1] {
		if d > mine {
			n++
		}
	}
	return n
}

// addPoint records p for trial id: it takes its rank, and every feasible
// point that it dominates, directly or through a chain, has its rank
// raised to the chain's length.
func (g *rung) addPoint(id string, p point) {
	if g.index == nil {
		g.index = map[string]int{}
	}
	p.id = id
	if feasible(p.violation) {
		p.rank = g.rankOf(p.losses)
	}
	g.index[id] = len(g.points)
	g.points = append(g.points, p)
	if !feasible(p.violation) {
		return
	}
	queue := []int{len(g.points) - 1}
	for len(queue) > 0 {
		x := g.points[queue[0]]
		queue = queue[1:]
		for i := range g.points {
			q := &g.points[i]
			if feasible(q.violation) && q.rank <= x.rank && pareto.Dominates(x.losses, q.losses) {
				q.rank = x.rank + 1
				queue = append(queue, i)
			}
		}
	}
}

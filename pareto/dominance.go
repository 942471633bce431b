package pareto

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// loss returns v, or +Inf when v is NaN: the order of the package.
func loss(v float64) float64 {
	if math.IsNaN(v) {
		return math.Inf(1)
	}
	return v
}

// checkLen panics unless a and b have the same length.
func checkLen(a, b []float64) {
	if len(a) != len(b) {
		panic(fmt.Sprintf("pareto: points of %d and %d objectives", len(a), len(b)))
	}
}

// Dominates reports whether a dominates b: a is no worse than b in every
// coordinate (a[j] ≤ b[j]) and better in at least one (a[j] < b[j]). NaN
// counts as +Inf. A point does not dominate itself or an equal point. It
// panics when a and b differ in length.
func Dominates(a, b []float64) bool {
	checkLen(a, b)
	better := false
	for j := range a {
		x, y := loss(a[j]), loss(b[j])
		if x > y {
			return false
		}
		if x < y {
			better = true
		}
	}
	return better
}

// equalLoss reports whether a and b are equal, NaN equal to +Inf.
func equalLoss(a, b []float64) bool {
	for j := range a {
		if loss(a[j]) != loss(b[j]) {
			return false
		}
	}
	return true
}

// lexOrder returns the indices of points in lexicographic order of their
// coordinates (NaN as +Inf), ties kept in input order. A point can only be
// dominated by points before it in this order.
func lexOrder(points [][]float64) []int {
	idx := make([]int, len(points))
	for i := range idx {
		idx[i] = i
		if i > 0 {
			checkLen(points[0], points[i])
		}
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		a, b := points[i], points[j]
		for k := range a {
			if c := cmp.Compare(loss(a[k]), loss(b[k])); c != 0 {
				return c
			}
		}
		return 0
	})
	return idx
}

// Front returns the indices of the non-dominated points (those no other
// point dominates), in increasing order. Equal points do not dominate each
// other, so every copy of a front point is on the front. It takes
// O(n log n) for two objectives, O(n log n) comparisons and O(n·f) copying
// for three, and O(M·n·f) comparisons in general, where f is the size of
// the front. It panics when the points differ in length.
func Front(points [][]float64) []int {
	order := lexOrder(points)
	var front []int
	switch {
	case len(points) > 0 && len(points[0]) == 2:
		// In lexicographic order a point is non-dominated iff its second
		// coordinate is below that of the last front point, or it equals
		// that point.
		for _, i := range order {
			p := points[i]
			if len(front) == 0 {
				front = append(front, i)
				continue
			}
			q := points[front[len(front)-1]]
			y, qy := loss(p[1]), loss(q[1])
			if y < qy || y == qy && loss(p[0]) == loss(q[0]) {
				front = append(front, i)
			}
		}
	case len(points) > 0 && len(points[0]) == 3:
		// Every point before p in lexicographic order has a first
		// coordinate no larger, so p is dominated iff one of them, not
		// equal to p, is no worse in the other two: a query of the
		// two-dimensional staircase of the points before it. Equal
		// points are adjacent and share their verdict.
		var st staircase
		onFront := false
		for n, i := range order {
			p := points[i]
			y, z := loss(p[1]), loss(p[2])
			if n > 0 && equalLoss(p, points[order[n-1]]) {
				if onFront {
					front = append(front, i)
				}
				continue
			}
			k, covered := st.find(y, z)
			onFront = !covered
			if onFront {
				st.place(k, y, z)
				front = append(front, i)
			}
		}
	default:
		for _, i := range order {
			dominated := false
			for _, f := range front {
				if Dominates(points[f], points[i]) {
					dominated = true
					break
				}
			}
			if !dominated {
				front = append(front, i)
			}
		}
	}
	slices.Sort(front)
	return front
}

// Sort returns the non-dominated rank of every point: 0 for the front, 1
// for the front of the rest, and so on (the fronts of Deb et al.'s fast
// non-dominated sort, NSGA-II, 2002). Equivalently a point's rank is the
// length of the longest chain of points each dominating the next that ends
// at it. Equal points get equal ranks. It takes O(M·n²) time and O(n)
// memory, and panics when the points differ in length.
func Sort(points [][]float64) []int {
	ranks := make([]int, len(points))
	order := lexOrder(points)
	// byRank[r] holds the points of rank r seen so far; every point that
	// dominates p comes before p in lexicographic order.
	var byRank [][]int
	for _, i := range order {
		r := 0
		for k := len(byRank) - 1; k >= 0 && r == 0; k-- {
			for _, q := range byRank[k] {
				if Dominates(points[q], points[i]) {
					r = k + 1
					break
				}
			}
		}
		if r == len(byRank) {
			byRank = append(byRank, nil)
		}
		byRank[r] = append(byRank[r], i)
		ranks[i] = r
	}
	return ranks
}

// Violation returns the constraint violation of a point from its
// constraint values, feasible when c ≤ 0 (Optuna's convention): the sum of
// the positive parts, max(0, c). It is 0 for a feasible point, and +Inf
// when a value is NaN.
func Violation(constraints []float64) float64 {
	var v float64
	for _, c := range constraints {
		if math.IsNaN(c) {
			return math.Inf(1)
		}
		if c > 0 {
			v += c
		}
	}
	return v
}

// SortConstrained returns the ranks of non-dominated sorting under Deb's
// constrained domination (NSGA-II's constraint handling, Deb et al.
// 2002): a feasible point (violation ≤ 0) beats an infeasible one, of two
// infeasible points the one of smaller violation wins, and two feasible
// points compare by Dominates. So the feasible points get their ranks from Sort among
// themselves, and the infeasible points come after the last feasible rank,
// one rank per distinct violation, smallest first. NaN violations count as
// +Inf. It panics when violation and points differ in length.
func SortConstrained(points [][]float64, violation []float64) []int {
	if len(violation) != len(points) {
		panic(fmt.Sprintf("pareto: %d violations for %d points", len(violation), len(points)))
	}
	feasible, infeasible := splitFeasible(violation)
	ranks := make([]int, len(points))
	sub := make([][]float64, len(feasible))
	for k, i := range feasible {
		sub[k] = points[i]
	}
	next := 0
	for k, r := range Sort(sub) {
		ranks[feasible[k]] = r
		next = max(next, r+1)
	}
	byViolation(infeasible, violation)
	for k, i := range infeasible {
		if k > 0 && loss(violation[i]) > loss(violation[infeasible[k-1]]) {
			next++
		}
		ranks[i] = next
	}
	return ranks
}

// splitFeasible returns the indices of the feasible violations (≤ 0) and
// of the infeasible ones, each in increasing order.
func splitFeasible(violation []float64) (feasible, infeasible []int) {
	for i, v := range violation {
		if v <= 0 {
			feasible = append(feasible, i)
		} else {
			infeasible = append(infeasible, i)
		}
	}
	return feasible, infeasible
}

// byViolation sorts the indices idx by their violation, smallest first
// (NaN as +Inf), keeping the order of equal ones.
func byViolation(idx []int, violation []float64) {
	slices.SortStableFunc(idx, func(i, j int) int {
		return cmp.Compare(loss(violation[i]), loss(violation[j]))
	})
}

// TopFronts returns the first fronts of the points under Deb's
// constrained domination, as Fronts(SortConstrained(points, violation))
// groups them, but only as many as hold k points or more (all of them
// when there are fewer than k points). It peels the feasible fronts one
// at a time with Front, so it costs O(F·n log n) for two or three
// objectives, F the number of fronts returned, where SortConstrained
// costs O(M·n²): what a caller that wants the best k points (a TPE good
// set) needs, without ranking the rest. It panics when violation and
// points differ in length.
func TopFronts(points [][]float64, violation []float64, k int) [][]int {
	if len(violation) != len(points) {
		panic(fmt.Sprintf("pareto: %d violations for %d points", len(violation), len(points)))
	}
	left, infeasible := splitFeasible(violation)
	var out [][]int
	n := 0
	sub := make([][]float64, 0, len(left))
	for len(left) > 0 && n < k {
		sub = sub[:0]
		for _, i := range left {
			sub = append(sub, points[i])
		}
		on := Front(sub) // ascending indices into left
		front := make([]int, len(on))
		rest := left[:0:0]
		j := 0
		for q, i := range left {
			if j < len(on) && on[j] == q {
				front[j] = i
				j++
			} else {
				rest = append(rest, i)
			}
		}
		out = append(out, front)
		n += len(front)
		left = rest
	}
	if n >= k || len(infeasible) == 0 {
		return out
	}
	byViolation(infeasible, violation)
	for q := 0; q < len(infeasible) && n < k; {
		end := q + 1
		for end < len(infeasible) && loss(violation[infeasible[end]]) == loss(violation[infeasible[q]]) {
			end++
		}
		group := slices.Clone(infeasible[q:end])
		slices.Sort(group)
		out = append(out, group)
		n += len(group)
		q = end
	}
	return out
}

// Crowding returns the crowding distance of NSGA-II (Deb et al. 2002) of
// the points points[idx[k]], usually one front, in the order of idx: for
// each objective the points are sorted by it, the first and last get +Inf,
// and each other point adds the gap between its two neighbours divided by
// the objective's range. An objective whose values are all equal adds
// nothing (its boundary points included); one whose range is infinite
// (NaN counts as +Inf) adds only its boundary points' +Inf. With two points
// or fewer all get +Inf. Ties are broken by position in idx, so the result
// is deterministic.
func Crowding(points [][]float64, idx []int) []float64 {
	n := len(idx)
	dist := make([]float64, n)
	if n <= 2 {
		for k := range dist {
			dist[k] = math.Inf(1)
		}
		return dist
	}
	m := len(points[idx[0]])
	order := make([]int, n)
	for j := range m {
		for k := range order {
			order[k] = k
			checkLen(points[idx[0]], points[idx[k]])
		}
		val := func(k int) float64 { return loss(points[idx[k]][j]) }
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(val(a), val(b)) })
		lo, hi := val(order[0]), val(order[n-1])
		if lo == hi {
			continue
		}
		span := hi - lo
		dist[order[0]], dist[order[n-1]] = math.Inf(1), math.Inf(1)
		if math.IsInf(span, 0) {
			continue
		}
		for k := 1; k < n-1; k++ {
			dist[order[k]] += (val(order[k+1]) - val(order[k-1])) / span
		}
	}
	return dist
}

// Fronts groups the indices of points by their rank (as Sort and
// SortConstrained give), best rank first, each group in index order:
// Fronts(ranks)[r] holds the points of rank r.
func Fronts(ranks []int) [][]int {
	var out [][]int
	for i, r := range ranks {
		for len(out) <= r {
			out = append(out, nil)
		}
		out[r] = append(out[r], i)
	}
	return out
}

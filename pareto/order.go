package pareto

import (
	"cmp"
	"slices"
)

// Ranking returns every point's non-dominated rank under Deb's
// constrained domination (SortConstrained; a nil violation means every
// point is feasible, and the ranks are Sort's) and its crowding distance
// within its rank: Crowding over the points of that rank, in index
// order, so that points equal in an objective are ordered by index. These
// are the two keys of NSGA-II's crowded-comparison operator (Deb et al.
// 2002, §III-B), which MO-ASHA uses to rank the trials at a rung
// (Schmucker et al. 2021): a lower rank goes first, and within a rank a
// larger crowding distance, that is a point in a less crowded part of its
// front. It panics when the points, or violation and points, differ in
// length.
func Ranking(points [][]float64, violation []float64) (rank []int, crowding []float64) {
	if violation == nil {
		rank = Sort(points)
	} else {
		rank = SortConstrained(points, violation)
	}
	crowding = make([]float64, len(points))
	byRank := map[int][]int{}
	for i, r := range rank {
		byRank[r] = append(byRank[r], i)
	}
	for _, idx := range byRank {
		for k, d := range Crowding(points, idx) {
			crowding[idx[k]] = d
		}
	}
	return rank, crowding
}

// Order returns the indices of the points best first by Ranking: lower
// rank first, then larger crowding distance, then lower index. Its first
// k are NSGA-II's survival selection of k points: the whole fronts that
// fit, then the least crowded points of the next one. It panics as
// Ranking does.
func Order(points [][]float64, violation []float64) []int {
	rank, crowd := Ranking(points, violation)
	idx := make([]int, len(points))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := cmp.Compare(rank[a], rank[b]); c != 0 {
			return c
		}
		return cmp.Compare(crowd[b], crowd[a])
	})
	return idx
}

// Ahead returns how many points go strictly before point i by Ranking:
// those of a lower rank, and those of its rank with a larger crowding
// distance. Points tied with i on both keys are not counted, whatever
// their index: i's position in Order if it were the first of its ties.
// It panics as Ranking does, or when i is out of range.
func Ahead(points [][]float64, violation []float64, i int) int {
	rank, crowd := Ranking(points, violation)
	n := 0
	for j := range points {
		if rank[j] < rank[i] || rank[j] == rank[i] && crowd[j] > crowd[i] {
			n++
		}
	}
	return n
}

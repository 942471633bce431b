package pareto

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Hypervolume returns the volume of the region dominated by the points and
// bounded by the reference point ref: the union over the points p of the
// boxes [p, ref]. Points not strictly below ref in every coordinate (NaN
// counts as +Inf) add nothing. The result is exact up to floating-point
// rounding: a sweep in O(n log n) for two objectives, a sweep over the
// third coordinate keeping the two-dimensional front and its area for
// three,
// and for more the same slicing down to three dimensions (HSO, While et
// al. 2006), reusing a slice's volume when its new point adds nothing;
// a few hundred points in four dimensions take milliseconds. It panics
// when a point's length differs from ref's.
func Hypervolume(points [][]float64, ref []float64) float64 {
	pts := below(points, ref)
	if len(pts) == 0 {
		return 0
	}
	return hv(pts, ref)
}

// below returns the points strictly below ref in every coordinate.
func below(points [][]float64, ref []float64) [][]float64 {
	var pts [][]float64
	for _, p := range points {
		if len(p) != len(ref) {
			panic(fmt.Sprintf("pareto: a point of %d objectives for a reference point of %d", len(p), len(ref)))
		}
		in := true
		for j, r := range ref {
			if !(p[j] < r) {
				in = false
				break
			}
		}
		if in {
			pts = append(pts, p)
		}
	}
	return pts
}

// hv is the hypervolume of points all strictly below ref, none empty.
func hv(pts [][]float64, ref []float64) float64 {
	switch len(ref) {
	case 0:
		return 0
	case 1:
		lo := pts[0][0]
		for _, p := range pts[1:] {
			lo = min(lo, p[0])
		}
		return ref[0] - lo
	case 2:
		return hv2(slices.Clone(pts), ref)
	case 3:
		return hv3(pts, ref)
	}
	return hvSlices(pts, ref)
}

// hv2 is the area dominated by pts (strictly below ref): pts sorted by the
// first coordinate, each adds the strip between it and the lowest second
// coordinate so far. It sorts pts in place.
func hv2(pts [][]float64, ref []float64) float64 {
	slices.SortFunc(pts, func(a, b []float64) int {
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return cmp.Compare(a[1], b[1])
	})
	var area float64
	top := ref[1]
	for _, p := range pts {
		if p[1] < top {
			area += (ref[0] - p[0]) * (top - p[1])
			top = p[1]
		}
	}
	return area
}

// staircase is a two-dimensional front, its points in increasing order of
// x and so in decreasing order of y.
type staircase [][2]float64

// find returns the index where (x, y) goes in the staircase, the first
// point with a larger x or an equal x and a y ≥ y, and whether a point
// already there is no worse than (x, y) in both coordinates.
func (s staircase) find(x, y float64) (k int, covered bool) {
	k, _ = slices.BinarySearchFunc(s, [2]float64{x, y}, func(e, t [2]float64) int {
		if c := cmp.Compare(e[0], t[0]); c != 0 {
			return c
		}
		return cmp.Compare(e[1], t[1])
	})
	covered = k > 0 && s[k-1][1] <= y || k < len(s) && s[k][0] == x && s[k][1] == y
	return k, covered
}

// insert adds (x, y) to the staircase and returns the area it adds to
// the region the staircase dominates up to (rx, ry), which contains
// (x, y); 0 when a point already there is no worse in both coordinates.
// It removes the points (x, y) dominates.
func (s *staircase) insert(x, y, rx, ry float64) float64 {
	st := *s
	k, covered := st.find(x, y)
	if covered {
		return 0
	}
	// Between x and the first point the new one leaves (or rx), the
	// region's old upper edge was the left neighbour's y (or ry), then
	// each removed point's y in turn; the new edge is y throughout.
	level := ry
	if k > 0 {
		level = st[k-1][1]
	}
	var added float64
	from := x
	end := k
	for end < len(st) && st[end][1] >= y {
		added += (st[end][0] - from) * (level - y)
		from, level = st[end][0], st[end][1]
		end++
	}
	to := rx
	if end < len(st) {
		to = st[end][0]
	}
	added += (to - from) * (level - y)
	*s = slices.Replace(st, k, end, [2]float64{x, y})
	return added
}

// place puts (x, y), which no point of the staircase covers, at index k
// (from find), removing the points it dominates.
func (s *staircase) place(k int, x, y float64) {
	st := *s
	end := k
	for end < len(st) && st[end][1] >= y {
		end++
	}
	*s = slices.Replace(st, k, end, [2]float64{x, y})
}

// hv3 sweeps the points in increasing order of the third coordinate,
// adding each to the staircase of the first two and its area: between two
// consecutive third coordinates the volume is a prism over the
// staircase's area. Each insertion costs O(log n) comparisons and a copy
// of the staircase, so the whole sweep is O(n²) in the worst case and
// fast in practice.
func hv3(pts [][]float64, ref []float64) float64 {
	order := slices.Clone(pts)
	slices.SortStableFunc(order, func(a, b []float64) int { return cmp.Compare(a[2], b[2]) })
	var s staircase
	var vol, area float64
	for k, p := range order {
		area += s.insert(p[0], p[1], ref[0], ref[1])
		top := ref[2]
		if k+1 < len(order) {
			top = order[k+1][2]
		}
		vol += area * (top - p[2])
	}
	return vol
}

// hvSlices cuts the region into slices along the last coordinate: between
// two consecutive last coordinates it is a prism over the hypervolume, one
// dimension lower, of the points below. The projected points are kept
// mutually non-dominated, and a slice whose new point is dominated by them
// reuses the last volume.
func hvSlices(pts [][]float64, ref []float64) float64 {
	d := len(ref)
	order := slices.Clone(pts)
	slices.SortStableFunc(order, func(a, b []float64) int { return cmp.Compare(a[d-1], b[d-1]) })
	var proj [][]float64
	var vol, base float64
	for k, p := range order {
		q := p[:d-1]
		dominated := false
		for _, r := range proj {
			if weaklyDominates(r, q) {
				dominated = true
				break
			}
		}
		if !dominated {
			proj = slices.DeleteFunc(proj, func(r []float64) bool { return weaklyDominates(q, r) })
			proj = append(proj, q)
			base = hv(proj, ref[:d-1])
		}
		top := ref[d-1]
		if k+1 < len(order) {
			top = order[k+1][d-1]
		}
		vol += base * (top - p[d-1])
	}
	return vol
}

// weaklyDominates reports whether a ≤ b in every coordinate.
func weaklyDominates(a, b []float64) bool {
	for j := range a {
		if a[j] > b[j] {
			return false
		}
	}
	return true
}

// HypervolumeContributions returns each point's exclusive contribution to
// the hypervolume of points with reference ref: Hypervolume(points, ref)
// minus the hypervolume of the other points, the volume only that point
// dominates. It is exactly 0 for a point another point weakly dominates (a
// dominated point, or one of two equal points) and for a point not
// strictly below ref; the others' differences are clamped at 0 against
// rounding. It computes one hypervolume per front point. It panics when a
// point's length differs from ref's.
func HypervolumeContributions(points [][]float64, ref []float64) []float64 {
	out := make([]float64, len(points))
	var idx []int
	var pts [][]float64
	for i, p := range points {
		if len(below([][]float64{p}, ref)) == 1 {
			idx = append(idx, i)
			pts = append(pts, p)
		}
	}
	if len(pts) == 0 {
		return out
	}
	total := hv(pts, ref)
	onFront := Front(pts)
	rest := make([][]float64, 0, len(pts))
	for _, k := range onFront {
		twin := false
		for _, l := range onFront {
			if l != k && slices.Equal(pts[l], pts[k]) {
				twin = true
				break
			}
		}
		if twin {
			continue
		}
		rest = append(rest[:0], pts[:k]...)
		rest = append(rest, pts[k+1:]...)
		if len(rest) == 0 {
			out[idx[k]] = total
			continue
		}
		out[idx[k]] = math.Max(0, total-hv(rest, ref))
	}
	return out
}

// Reference returns a reference point for Hypervolume derived from the
// points, for when the user gives none: for each coordinate, the worst
// value on the Pareto front (the front's nadir) plus 10% of the front's
// range there (nadir − ideal), or plus 1 where that range is 0. Every
// front point is then strictly below it and adds to the hypervolume,
// extreme ones included, and dominated outliers do not move it. This is
// pymoo's and BoTorch's habit of offsetting the nadir by a fraction of
// the range; Optuna's multi-objective TPE uses max(1.1·w, 0.9·w) of the
// worst value w instead, which depends on where zero is. Coordinates that
// are not finite (NaN, ±Inf) are left out of the nadir and the ideal; a
// coordinate with no finite value on the front gets 1. It returns nil for
// no points.
func Reference(points [][]float64) []float64 {
	if len(points) == 0 {
		return nil
	}
	front := Front(points)
	m := len(points[0])
	ref := make([]float64, m)
	for j := range m {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, i := range front {
			if v := points[i][j]; !math.IsInf(v, 0) && !math.IsNaN(v) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		switch {
		case lo > hi:
			ref[j] = 1
		case lo == hi:
			ref[j] = hi + 1
		default:
			ref[j] = hi + 0.1*(hi-lo)
		}
		if lo <= hi && ref[j] <= hi { // the offset was lost to rounding
			ref[j] = math.Nextafter(hi, math.Inf(1))
		}
	}
	return ref
}

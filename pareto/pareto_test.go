package pareto

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// pointsGen draws n points of d coordinates, small integers in [0, 5], so
// that ties and duplicates are frequent and sums are exact.
func pointsGen(d int, minN, maxN int) *rapid.Generator[[][]float64] {
	coord := rapid.Map(rapid.IntRange(0, 5), func(v int) float64 { return float64(v) })
	return rapid.SliceOfN(rapid.SliceOfN(coord, d, d), minN, maxN)
}

// bruteHypervolume is the union volume over the grid the distinct
// coordinates of the points and ref cut the box into: a cell is in the
// union when some point is no worse than its lower corner. It is exact
// (up to the rounding of the sum) and independent of the algorithms.
func bruteHypervolume(points [][]float64, ref []float64) float64 {
	d := len(ref)
	grid := make([][]float64, d)
	for j := range d {
		vals := []float64{ref[j]}
		for _, p := range points {
			if p[j] < ref[j] {
				vals = append(vals, p[j])
			}
		}
		slices.Sort(vals)
		grid[j] = slices.Compact(vals)
	}
	var vol float64
	cell := make([]int, d)
	corner := make([]float64, d)
	for {
		size := 1.0
		ok := true
		for j := range d {
			if cell[j]+1 >= len(grid[j]) {
				ok = false
				break
			}
			corner[j] = grid[j][cell[j]]
			size *= grid[j][cell[j]+1] - grid[j][cell[j]]
		}
		if ok {
			for _, p := range points {
				in := true
				for j := range d {
					if !(p[j] <= corner[j]) {
						in = false
						break
					}
				}
				if in {
					vol += size
					break
				}
			}
		}
		// Next cell, odometer style.
		j := 0
		for ; j < d; j++ {
			cell[j]++
			if cell[j] < len(grid[j])-1 {
				break
			}
			cell[j] = 0
		}
		if j == d {
			return vol
		}
	}
}

func TestDominates(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		a, b []float64
		want bool
	}{
		{[]float64{1, 2}, []float64{2, 3}, true},
		{[]float64{1, 3}, []float64{2, 3}, true},
		{[]float64{1, 3}, []float64{1, 3}, false},
		{[]float64{1, 4}, []float64{2, 3}, false},
		{[]float64{2, 3}, []float64{1, 2}, false},
		{[]float64{1, 2}, []float64{1, nan}, true},
		{[]float64{1, nan}, []float64{1, 2}, false},
		{[]float64{1, nan}, []float64{1, inf}, false},
		{[]float64{1, inf}, []float64{1, nan}, false},
		{[]float64{0, nan}, []float64{1, nan}, true},
		{[]float64{}, []float64{}, false},
	} {
		if got := Dominates(c.a, c.b); got != c.want {
			t.Errorf("Dominates(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic for points of different lengths")
		}
	}()
	Dominates([]float64{1}, []float64{1, 2})
}

func TestFrontAndSortByHand(t *testing.T) {
	pts := [][]float64{
		{3, 1},          // 0: front
		{1, 3},          // 1: front
		{2, 2},          // 2: front
		{3, 3},          // 3: rank 1
		{2, 2},          // 4: duplicate of 2, front
		{4, 4},          // 5: rank 2
		{1, math.NaN()}, // 6: dominated by 1 → rank 1
		{3, 2},          // 7: dominated by 2 (and 0): rank 1
	}
	if got, want := Front(pts), []int{0, 1, 2, 4}; !slices.Equal(got, want) {
		t.Errorf("Front = %v, want %v", got, want)
	}
	if got, want := Sort(pts), []int{0, 0, 0, 2, 0, 3, 1, 1}; !slices.Equal(got, want) {
		// 3 = (3,3) is dominated by 7 = (3,2), itself rank 1, so rank 2;
		// 5 = (4,4) by 3, so rank 3.
		t.Errorf("Sort = %v, want %v", got, want)
	}
	three := [][]float64{{1, 2, 3}, {3, 2, 1}, {2, 2, 2}, {2, 3, 3}, {1, 2, 3}}
	if got, want := Front(three), []int{0, 1, 2, 4}; !slices.Equal(got, want) {
		t.Errorf("Front in 3-D = %v, want %v", got, want)
	}
	if got := Front(nil); len(got) != 0 {
		t.Errorf("Front(nil) = %v", got)
	}
}

func TestSortConstrained(t *testing.T) {
	pts := [][]float64{{1, 1}, {2, 2}, {0, 0}, {5, 5}, {3, 0}, {9, 9}}
	viol := []float64{0, 0, 2, 0.5, 0, 2}
	// Feasible: 0 (front), 4 (front), 1 (rank 1, dominated by 0). Then
	// violation 0.5 (point 3) rank 2, violation 2 (points 2 and 5) rank 3,
	// even though point 2 dominates everything.
	if got, want := SortConstrained(pts, viol), []int{0, 1, 3, 2, 0, 3}; !slices.Equal(got, want) {
		t.Errorf("SortConstrained = %v, want %v", got, want)
	}
	if got, want := SortConstrained(pts, make([]float64, len(pts))), Sort(pts); !slices.Equal(got, want) {
		t.Errorf("all feasible: %v, Sort %v", got, want)
	}
	if got, want := SortConstrained([][]float64{{1}, {2}}, []float64{math.NaN(), 1}), []int{1, 0}; !slices.Equal(got, want) {
		t.Errorf("NaN violation: %v, want %v", got, want)
	}
	if v := Violation([]float64{-1, 0.5, 2, 0}); v != 2.5 {
		t.Errorf("Violation = %v, want 2.5", v)
	}
	if v := Violation([]float64{-1, math.NaN()}); !math.IsInf(v, 1) {
		t.Errorf("Violation with NaN = %v, want +Inf", v)
	}
}

func TestCrowdingByHand(t *testing.T) {
	pts := [][]float64{{0, 4}, {1, 3}, {3, 1}, {4, 0}, {9, 9}}
	got := Crowding(pts, []int{2, 0, 1, 3})
	// Objective 0, range 4: point 1 gets (3−0)/4, point 2 (4−1)/4; the
	// same in objective 1.
	want := []float64{1.5, math.Inf(1), 1.5, math.Inf(1)}
	if !slices.Equal(got, want) {
		t.Errorf("Crowding = %v, want %v", got, want)
	}
	if got := Crowding(pts, []int{4, 0}); !math.IsInf(got[0], 1) || !math.IsInf(got[1], 1) {
		t.Errorf("two points: %v", got)
	}
	same := [][]float64{{1, 1}, {1, 1}, {1, 1}}
	if got := Crowding(same, []int{0, 1, 2}); !slices.Equal(got, []float64{0, 0, 0}) {
		t.Errorf("equal points: %v, want zeros", got)
	}
}

func TestHypervolumeByHand(t *testing.T) {
	for _, c := range []struct {
		name string
		pts  [][]float64
		ref  []float64
		want float64
	}{
		{"staircase", [][]float64{{1, 3}, {2, 2}, {3, 1}}, []float64{4, 4}, 6},
		{"one point", [][]float64{{0, 0, 0}}, []float64{1, 2, 3}, 6},
		{"dominated adds nothing", [][]float64{{0, 0, 0}, {0.5, 1, 1}}, []float64{1, 2, 3}, 6},
		{"on the reference", [][]float64{{1, 0}, {0, 2}, {2, 5}}, []float64{1, 2}, 0},
		{"NaN", [][]float64{{math.NaN(), 0}, {0.5, 0.5}}, []float64{1, 1}, 0.25},
		{"1-D", [][]float64{{3}, {1}, {2}}, []float64{5}, 4},
		// Boxes of 2·2·2 and 1·1·3 overlapping in 1·1·2.
		{"overlap 3-D", [][]float64{{0, 0, 1}, {1, 1, 0}}, []float64{2, 2, 3}, 8 + 3 - 2},
		// Four points each best in one of 4 coordinates: boxes of
		// 2·1·1·1 = 2 each, pairwise overlap 1·1·1·1 = 1 — exclusion
		// inclusion: 4·2 − 6·1 + 4·1 − 1 = 5.
		{"4-D", [][]float64{{0, 1, 1, 1}, {1, 0, 1, 1}, {1, 1, 0, 1}, {1, 1, 1, 0}}, []float64{2, 2, 2, 2}, 5},
		{"empty", nil, []float64{1, 1}, 0},
	} {
		if got := Hypervolume(c.pts, c.ref); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: Hypervolume = %v, want %v", c.name, got, c.want)
		}
		if got := bruteHypervolume(c.pts, c.ref); math.Abs(got-c.want) > 1e-12 && c.name != "NaN" {
			t.Errorf("%s: brute force %v, want %v", c.name, got, c.want)
		}
	}
}

func TestContributionsByHand(t *testing.T) {
	pts := [][]float64{{1, 3}, {2, 2}, {3, 1}, {2, 2}, {3, 3}, {0, 5}}
	got := HypervolumeContributions(pts, []float64{4, 4})
	// (1,3) alone covers [1,2)×[3,4), (3,1) alone [3,4)×[1,2); (2,2) has a
	// twin, (3,3) is dominated and (0,5) is outside.
	want := []float64{1, 0, 1, 0, 0, 0}
	if !slices.Equal(got, want) {
		t.Errorf("contributions = %v, want %v", got, want)
	}
	pts3 := [][]float64{{0, 1, 1}, {1, 0, 1}, {1, 1, 0}, {1, 1, 1}}
	got = HypervolumeContributions(pts3, []float64{2, 2, 2})
	// (0,1,1) alone covers [0,1)×[1,2)×[1,2), and so on by symmetry;
	// (1,1,1) is weakly dominated.
	if want := []float64{1, 1, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("3-D contributions = %v, want %v", got, want)
	}
}

func TestReference(t *testing.T) {
	pts := [][]float64{{0, 10}, {10, 0}, {5, 5}, {100, 100}, {3, 3}}
	// Front: (0,10), (10,0), (3,3); nadir (10, 10), range 10 each.
	if got, want := Reference(pts), []float64{11, 11}; !slices.Equal(got, want) {
		t.Errorf("Reference = %v, want %v", got, want)
	}
	if got, want := Reference([][]float64{{2, 3}}), []float64{3, 4}; !slices.Equal(got, want) {
		t.Errorf("one point: %v, want %v", got, want)
	}
	if got := Reference(nil); got != nil {
		t.Errorf("no points: %v", got)
	}
	if got, want := Reference([][]float64{{math.NaN(), 1}, {math.NaN(), 2}}), []float64{1, 2}; !slices.Equal(got, want) {
		t.Errorf("NaN coordinate: %v, want %v", got, want)
	}
}

// nanPointsGen is pointsGen with NaN among the coordinates.
func nanPointsGen(d int, minN, maxN int) *rapid.Generator[[][]float64] {
	coord := rapid.Map(rapid.IntRange(0, 6), func(v int) float64 {
		if v == 6 {
			return math.NaN()
		}
		return float64(v)
	})
	return rapid.SliceOfN(rapid.SliceOfN(coord, d, d), minN, maxN)
}

func TestFrontProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.IntRange(1, 4).Draw(t, "d")
		pts := nanPointsGen(d, 0, 30).Draw(t, "points")
		front := Front(pts)
		on := make([]bool, len(pts))
		for _, i := range front {
			on[i] = true
		}
		for _, i := range front {
			for _, j := range front {
				if Dominates(pts[i], pts[j]) {
					t.Fatalf("front points %v dominates %v", pts[i], pts[j])
				}
			}
		}
		for i := range pts {
			if on[i] {
				continue
			}
			found := false
			for _, f := range front {
				found = found || Dominates(pts[f], pts[i])
			}
			if !found {
				t.Fatalf("%v is off the front and no front point dominates it", pts[i])
			}
		}
		ranks := Sort(pts)
		for i := range pts {
			if (ranks[i] == 0) != on[i] {
				t.Fatalf("rank of %v is %d, on the front %v", pts[i], ranks[i], on[i])
			}
			hasParent := false
			for j := range pts {
				if Dominates(pts[j], pts[i]) {
					if ranks[j] >= ranks[i] {
						t.Fatalf("%v (rank %d) dominates %v (rank %d)", pts[j], ranks[j], pts[i], ranks[i])
					}
					hasParent = hasParent || ranks[j] == ranks[i]-1
				}
			}
			if ranks[i] > 0 && !hasParent {
				t.Fatalf("%v has rank %d and no dominating point of rank %d", pts[i], ranks[i], ranks[i]-1)
			}
		}
		// Peeling fronts gives the same ranks.
		rest := make([]int, len(pts))
		for i := range rest {
			rest[i] = i
		}
		for r := 0; len(rest) > 0; r++ {
			sub := make([][]float64, len(rest))
			for k, i := range rest {
				sub[k] = pts[i]
			}
			var next []int
			f := Front(sub)
			for k, i := range rest {
				if _, ok := slices.BinarySearch(f, k); ok {
					if ranks[i] != r {
						t.Fatalf("%v peeled at %d, ranked %d", pts[i], r, ranks[i])
					}
				} else {
					next = append(next, i)
				}
			}
			rest = next
		}
		cd := Crowding(pts, front)
		for k, c := range cd {
			if !(c >= 0) {
				t.Fatalf("crowding %v of %v", c, pts[front[k]])
			}
		}
	})
}

func TestHypervolumeProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.IntRange(1, 4).Draw(t, "d")
		pts := pointsGen(d, 0, 12).Draw(t, "points")
		ref := make([]float64, d)
		for j := range ref {
			ref[j] = float64(rapid.IntRange(1, 6).Draw(t, "ref"))
		}
		hv := Hypervolume(pts, ref)
		if want := bruteHypervolume(pts, ref); hv != want {
			t.Fatalf("Hypervolume = %v, brute force %v", hv, want)
		}
		perm := rapid.Permutation(pts).Draw(t, "order")
		if got := Hypervolume(perm, ref); got != hv {
			t.Fatalf("reordered: %v, was %v", got, hv)
		}
		extra := pointsGen(d, 1, 1).Draw(t, "extra")
		if got := Hypervolume(append(slices.Clone(pts), extra...), ref); got < hv {
			t.Fatalf("adding %v lowered the hypervolume from %v to %v", extra[0], hv, got)
		}
		contrib := HypervolumeContributions(pts, ref)
		for i, c := range contrib {
			rest := slices.Delete(slices.Clone(pts), i, i+1)
			if want := hv - Hypervolume(rest, ref); c != want {
				t.Fatalf("contribution of %v = %v, want %v", pts[i], c, want)
			}
			if c < 0 {
				t.Fatalf("negative contribution %v", c)
			}
			for j := range pts {
				if Dominates(pts[j], pts[i]) && c != 0 {
					t.Fatalf("%v is dominated by %v and contributes %v", pts[i], pts[j], c)
				}
			}
		}
		if len(pts) > 0 {
			r := Reference(pts)
			for _, i := range Front(pts) {
				for j := range r {
					if !(pts[i][j] < r[j]) {
						t.Fatalf("front point %v not below the reference %v", pts[i], r)
					}
				}
			}
			var front [][]float64
			for _, i := range Front(pts) {
				front = append(front, pts[i])
			}
			if fr := Reference(front); !slices.Equal(fr, r) {
				t.Fatalf("reference of the front %v, of all %v", fr, r)
			}
		}
	})
}

// TestHypervolumeFloats checks the algorithms against the brute force on
// continuous coordinates, to a relative 1e-9.
func TestHypervolumeFloats(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		d := 2 + trial%3
		n := 1 + r.IntN(15)
		pts := make([][]float64, n)
		for i := range pts {
			pts[i] = make([]float64, d)
			for j := range pts[i] {
				pts[i][j] = r.Float64()
			}
		}
		ref := make([]float64, d)
		for j := range ref {
			ref[j] = 0.8 + 0.4*r.Float64()
		}
		got, want := Hypervolume(pts, ref), bruteHypervolume(pts, ref)
		if math.Abs(got-want) > 1e-9*math.Max(1, want) {
			t.Fatalf("d=%d n=%d: Hypervolume = %v, brute force %v", d, n, got, want)
		}
	}
}

// TestHypervolumeLarge checks the known volume of a front on the sphere:
// the set x ≥ 0, ‖x‖ ≥ 1 … ref. With ref (1, 1, 1) and many points on
// the unit sphere's positive octant, the hypervolume tends to
// 1 − π/6 (the cube less the ball's octant).
func TestHypervolumeLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var pts [][]float64
	for range 3000 {
		a, b := r.NormFloat64(), r.NormFloat64()
		c := r.NormFloat64()
		n := math.Sqrt(a*a + b*b + c*c)
		pts = append(pts, []float64{math.Abs(a) / n, math.Abs(b) / n, math.Abs(c) / n})
	}
	got := Hypervolume(pts, []float64{1, 1, 1})
	if want := 1 - math.Pi/6; got > want || got < want-0.02 {
		t.Errorf("3-D sphere front: %v, want just below %v", got, want)
	}
	four := make([][]float64, 0, 300)
	for _, p := range pts[:300] {
		four = append(four, []float64{p[0], p[1], p[2], 1 - p[0]})
	}
	if hv := Hypervolume(four, []float64{2, 2, 2, 2}); !(hv > 0) {
		t.Errorf("4-D: %v", hv)
	}
}

func benchPoints(n, d int) [][]float64 {
	r := rand.New(rand.NewPCG(5, 6))
	pts := make([][]float64, n)
	for i := range pts {
		// On the simplex, so that every point is on the front.
		p := make([]float64, d)
		var s float64
		for j := range p {
			p[j] = -math.Log(1 - r.Float64())
			s += p[j]
		}
		for j := range p {
			p[j] /= s
		}
		pts[i] = p
	}
	return pts
}

func BenchmarkHypervolume(b *testing.B) {
	for _, d := range []int{2, 3, 4} {
		pts := benchPoints(200, d)
		ref := slices.Repeat([]float64{1.1}, d)
		b.Run(map[int]string{2: "2d-200", 3: "3d-200", 4: "4d-200"}[d], func(b *testing.B) {
			for b.Loop() {
				Hypervolume(pts, ref)
			}
		})
	}
}

func BenchmarkSort(b *testing.B) {
	pts := benchPoints(200, 3)
	r := rand.New(rand.NewPCG(7, 8))
	for i := range pts {
		for j := range pts[i] {
			pts[i][j] += r.Float64()
		}
	}
	for b.Loop() {
		Sort(pts)
	}
}

func TestSortConstrainedProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.IntRange(1, 3).Draw(t, "d")
		pts := pointsGen(d, 0, 20).Draw(t, "points")
		viol := make([]float64, len(pts))
		for i := range viol {
			viol[i] = float64(rapid.IntRange(-1, 3).Draw(t, "violation")) // ≤ 0 is feasible
		}
		ranks := SortConstrained(pts, viol)
		var feasible [][]float64
		var fi []int
		for i := range pts {
			if viol[i] <= 0 {
				feasible = append(feasible, pts[i])
				fi = append(fi, i)
			}
		}
		for k, r := range Sort(feasible) {
			if ranks[fi[k]] != r {
				t.Fatalf("feasible %v ranked %d, Sort among the feasible says %d", pts[fi[k]], ranks[fi[k]], r)
			}
		}
		for i := range pts {
			for j := range pts {
				switch {
				case viol[i] <= 0 && viol[j] > 0 && ranks[i] >= ranks[j]:
					t.Fatalf("feasible %d ranked %d, infeasible %d ranked %d", i, ranks[i], j, ranks[j])
				case viol[i] > 0 && viol[j] > 0 && (viol[i] < viol[j]) != (ranks[i] < ranks[j]):
					t.Fatalf("violations %v and %v ranked %d and %d", viol[i], viol[j], ranks[i], ranks[j])
				}
			}
		}
		// The ranks have no gaps.
		seen := map[int]bool{}
		top := -1
		for _, r := range ranks {
			seen[r] = true
			top = max(top, r)
		}
		for r := 0; r <= top; r++ {
			if !seen[r] {
				t.Fatalf("ranks %v skip %d", ranks, r)
			}
		}
	})
}

// TopFronts is the prefix of Fronts(SortConstrained(...)) that first
// holds k points, or all of it when there are fewer.
func TestTopFrontsProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.IntRange(1, 4).Draw(t, "d")
		pts := pointsGen(d, 0, 30).Draw(t, "points")
		viol := make([]float64, len(pts))
		for i := range viol {
			viol[i] = float64(rapid.IntRange(-2, 3).Draw(t, "violation")) // ≤ 0 is feasible
		}
		k := rapid.IntRange(0, 35).Draw(t, "k")
		all := Fronts(SortConstrained(pts, viol))
		want, n := [][]int{}, 0
		for _, f := range all {
			if n >= k {
				break
			}
			want = append(want, f)
			n += len(f)
		}
		got := TopFronts(pts, viol, k)
		if len(got) != len(want) {
			t.Fatalf("TopFronts(k=%d) = %v, want %v (all fronts %v)", k, got, want, all)
		}
		for r := range want {
			if !slices.Equal(got[r], want[r]) {
				t.Fatalf("TopFronts(k=%d) = %v, want %v", k, got, want)
			}
		}
	})
}

// TestFronts: the groups of Fronts hold every index once, by rank, in
// index order.
func TestFronts(t *testing.T) {
	got := Fronts([]int{1, 0, 2, 0, 1})
	want := [][]int{{1, 3}, {0, 4}, {2}}
	if len(got) != len(want) {
		t.Fatalf("Fronts = %v, want %v", got, want)
	}
	for r := range want {
		if !slices.Equal(got[r], want[r]) {
			t.Errorf("Fronts = %v, want %v", got, want)
		}
	}
	if got := Fronts(nil); got != nil {
		t.Errorf("Fronts(nil) = %v", got)
	}
}

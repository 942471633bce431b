package tpe

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/space"
)

// jointDims returns the dims of a space with a continuous, an integer and
// a categorical parameter, in that order.
func jointDims(t *testing.T) []*dim {
	t.Helper()
	sp := space.Space{"a": space.Uniform(0, 2), "b": space.RandInt(0, 5), "c": space.Choice("x", "y", "z")}
	s := mustNew(t, sp, Options{Metric: "loss", NumSamples: 1})
	return s.dims
}

// The joint density is a density: it sums (over the integer and the
// categorical values) and integrates (over the continuous one) to 1, and
// sample draws from it.
func TestJointNormalised(t *testing.T) {
	dims := jointDims(t)
	rows := []row{
		{seq: 0, x: []float64{0.3, 1, 0}},
		{seq: 1, x: []float64{1.7, 4, 2}},
		{seq: 2, x: []float64{0.35, 1, 0}},
	}
	j := newJoint(dims, []int{0, 1, 2}, rows, 1, nil)
	const steps = 400
	total := 0.0
	cell := map[[2]int]float64{} // (b, c) -> mass
	for b := range 5 {
		for c := range 3 {
			m := 0.0
			for i := range steps {
				a := 2 * (float64(i) + 0.5) / steps
				m += math.Exp(j.logPDF([]float64{a, float64(b), float64(c)})) * 2 / steps
			}
			cell[[2]int{b, c}] = m
			total += m
		}
	}
	if math.Abs(total-1) > 1e-4 {
		t.Fatalf("total mass %v, want 1", total)
	}
	r := rand.New(rand.NewPCG(5, 6))
	const n = 200000
	counts := map[[2]int]float64{}
	x := make([]float64, 3)
	for range n {
		j.sample(r, x)
		if x[0] < 0 || x[0] > 2 || x[1] != math.Trunc(x[1]) || x[1] < 0 || x[1] > 4 || x[2] != math.Trunc(x[2]) || x[2] < 0 || x[2] > 2 {
			t.Fatalf("sample %v out of the space", x)
		}
		counts[[2]int{int(x[1]), int(x[2])}]++
	}
	for k, m := range cell {
		if got := counts[k] / n; math.Abs(got-m) > 0.005 {
			t.Errorf("cell %v: sampled frequency %.4f, mass %.4f", k, got, m)
		}
	}
	// The mass concentrates where the observations are: (b=1, c=x) holds
	// two of three.
	for k, m := range cell {
		if m > cell[[2]int{1, 0}] {
			t.Errorf("cell %v has mass %v, more than the twice observed (1, 0): %v", k, m, cell[[2]int{1, 0}])
		}
	}
}

// Widths follow jointWidth: the smaller of Optuna's multivariate rule and
// the same rule on the observations' spread, clipped to [range/min(100,
// n+2), range]; the prior kernel spans the range.
func TestJointBandwidth(t *testing.T) {
	dims := jointDims(t)
	for _, n := range []int{1, 3, 40, 2000} {
		rows := make([]row, n)
		for i := range rows {
			rows[i] = row{seq: i, x: []float64{float64(i%20) / 10, float64(i % 5), float64(i % 3)}}
		}
		j := newJoint(dims, []int{0, 1, 2}, rows, 1, nil)
		for di, d := range dims[:2] {
			span := d.hi - d.lo
			want := 0.2 * math.Pow(float64(n), -1.0/7) * span
			if n >= 2 {
				var xs []float64
				for _, r := range rows {
					xs = append(xs, r.x[di])
				}
				if a := 0.2 * math.Sqrt(12) * stat.PopStdDev(xs, nil) * math.Pow(float64(n), -1.0/7); a < want {
					want = onGrid(a)
				}
			}
			want = clamp(want, span/math.Min(100, float64(n+2)), span)
			if got := j.sigma[di][0]; math.Abs(got-want) > 1e-12 {
				t.Errorf("n %d, dim %s: σ %v, want %v", n, d.name, got, want)
			}
			if got := j.sigma[di][n]; got != span {
				t.Errorf("n %d, dim %s: prior σ %v, want %v", n, d.name, got, span)
			}
		}
	}
}

// Observations gathered in a small part of the range get kernels as narrow
// as their spread: 0.2·√12·s·n^(−1/(d+4)) (on the grid of onGrid), not
// 0.2·n^(−1/(d+4))·range; spread evenly over the range, the two rules
// agree; pending trials (liars) do not count in the spread.
func TestJointWidthFollowsSpread(t *testing.T) {
	const d, span = 2, 1.0
	f := math.Pow(10, -1.0/(d+4))
	cluster := make([][]float64, 10)
	even := make([][]float64, 10)
	for i := range cluster {
		cluster[i] = []float64{0.5 + 0.01*float64(i-5)}
		even[i] = []float64{(float64(i) + 0.5) / 10}
	}
	none := make([]bool, 10)
	s := stat.PopStdDev([]float64{0.45, 0.46, 0.47, 0.48, 0.49, 0.5, 0.51, 0.52, 0.53, 0.54}, nil)
	if got, want := jointWidth(cluster, none, nil, 0, d, span, 0.001), onGrid(0.2*math.Sqrt(12)*s*f); math.Abs(got-want) > 1e-12 {
		t.Errorf("clustered: width %v, want %v", got, want)
	}
	if got, want := jointWidth(cluster, none, nil, 0, d, span, 0.05), 0.05; got != want {
		t.Errorf("clustered, minimum 0.05: width %v, want %v", got, want)
	}
	optuna := 0.2 * f * span
	if got := jointWidth(even, none, nil, 0, d, span, 0.001); math.Abs(got-optuna)/optuna > 0.05 {
		t.Errorf("evenly spread: width %v, want about Optuna's %v", got, optuna)
	}
	// Two far liars among the cluster leave its width as it was.
	withLiars := append(append([][]float64{}, cluster...), []float64{0}, []float64{1})
	liar := append(make([]bool, 10), true, true)
	if got, want := jointWidth(withLiars, liar, nil, 0, d, span, 0.001), onGrid(0.2*math.Sqrt(12)*s*f); math.Abs(got-want) > 1e-12 {
		t.Errorf("clustered with two far liars: width %v, want %v", got, want)
	}
}

func TestGroups(t *testing.T) {
	nan := math.NaN()
	r := func(x ...float64) row { return row{x: x} }
	for _, tc := range []struct {
		rows []row
		want [][]int
	}{
		{nil, [][]int{{0, 1, 2, 3}}},
		{[]row{r(1, 2, 3, 4), r(1, 2, 3, 4)}, [][]int{{0, 1, 2, 3}}},
		{[]row{r(1, nan, 3, nan), r(1, 2, 3, 4)}, [][]int{{0, 2}, {1, 3}}},
		{[]row{r(1, nan, 3, nan), r(nan, 2, 3, nan)}, [][]int{{0}, {1}, {2}, {3}}},
		{[]row{r(nan, nan, 3, 4), r(1, 2, 3, 4), r(1, 2, nan, nan)}, [][]int{{0, 1}, {2, 3}}},
	} {
		if got := groups(4, tc.rows); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("groups(%v) = %v, want %v", tc.rows, got, tc.want)
		}
	}
}

// Good trials in two blobs on the diagonal, (0.2, 0.2) and (0.8, 0.8), bad
// ones everywhere: univariate densities are bimodal along each axis, and
// their product is as high on the off-diagonal corners, where no good trial
// is (univariate proposals pick each coordinate's mode on its own); the
// joint density is not.
func TestMultivariateLearnsInteractions(t *testing.T) {
	sp := space.Space{"x": space.Uniform(0, 1), "y": space.Uniform(0, 1)}
	r := rand.New(rand.NewPCG(1, 1))
	var good, bad []row
	for i := range 20 {
		c := 0.2 + 0.6*float64(i%2)
		good = append(good, row{seq: i, x: []float64{c + 0.05*r.NormFloat64(), c + 0.05*r.NormFloat64()}})
	}
	for i := range 100 {
		bad = append(bad, row{seq: 20 + i, loss: 1, x: []float64{r.Float64(), r.Float64()}})
	}
	offDiagonal := func(multi bool) int {
		s := mustNew(t, sp, Options{Metric: "loss", NumSamples: -1, Seed: 3, Multivariate: multi})
		n := 0
		for range 400 {
			p := s.propose(good, bad)
			if (p["x"].(float64) < 0.5) != (p["y"].(float64) < 0.5) {
				n++
			}
		}
		return n
	}
	uni, multi := offDiagonal(false), offDiagonal(true)
	t.Logf("off-diagonal proposals out of 400: univariate %d, multivariate %d", uni, multi)
	if uni < 20 || multi > uni/4 {
		t.Errorf("off-diagonal proposals out of 400: univariate %d (want >= 20), multivariate %d (want at most a quarter of that)", uni, multi)
	}
}

// Multivariate TPE finds the optimum of a smooth function as univariate
// TPE does, and keeps every kind of parameter in its domain.
func TestMultivariateBoundsAndRegion(t *testing.T) {
	for seed := range uint64(5) {
		sp := space.Space{"x": space.Uniform(0, 1), "y": space.Uniform(0, 1)}
		s := mustNew(t, sp, Options{Metric: "loss", NumSamples: 100, Seed: seed, Multivariate: true})
		dist := func(c hone.Config) float64 { return math.Hypot(c["x"].(float64)-0.7, c["y"].(float64)-0.2) }
		cfgs := run(t, s, 100, func(c hone.Config) float64 { d := dist(c); return d * d })
		var ds []float64
		for _, c := range cfgs[60:] {
			ds = append(ds, dist(c))
		}
		if m := median(ds); m > 0.15 {
			t.Errorf("seed %d: median distance to the optimum %.3f in the last 40 suggestions", seed, m)
		}
	}
	sp := allKinds()
	s := mustNew(t, sp, Options{Metric: "loss", NumSamples: 80, Seed: 3, NStartupTrials: 8, Multivariate: true})
	cfgs := run(t, s, 80, func(c hone.Config) float64 {
		v := math.Abs(c["u"].(float64)-1) + float64(c["ri"].(int))/10
		if c["c"] == "a" {
			v--
		}
		return v
	})
	for i, c := range cfgs {
		if err := sp.Check(c); err != nil {
			t.Fatalf("suggestion %d %v: %v", i, c, err)
		}
		for _, k := range []string{"ri", "qri", "lri", "qlri"} {
			if _, ok := c[k].(int); !ok {
				t.Fatalf("suggestion %d: %s = %#v, want an int", i, k, c[k])
			}
		}
	}
	as := 0
	for _, c := range cfgs[50:] {
		if c["c"] == "a" {
			as++
		}
	}
	if as < 15 {
		t.Errorf("the best category came %d times in the last 30 suggestions", as)
	}
}

// A point with a value the space cannot encode splits the parameters into
// groups; suggestions still set every parameter.
func TestMultivariateGroups(t *testing.T) {
	sp := space.Space{"x": space.Uniform(0, 1), "c": space.Choice("a", "b")}
	pts := []map[string]any{{"c": "zzz"}, {"c": "zzz", "x": 0.5}}
	s := mustNew(t, sp, Options{Metric: "loss", NumSamples: 40, NStartupTrials: 3, Multivariate: true, Points: pts})
	cfgs := run(t, s, 40, func(c hone.Config) float64 { return c["x"].(float64) })
	for i, c := range cfgs[2:] {
		if err := sp.Check(c); err != nil {
			t.Fatalf("suggestion %d: %v", i+2, err)
		}
	}
	good, bad, ok := s.training()
	if !ok {
		t.Fatal("no model")
	}
	if g := groups(len(s.dims), good, bad); len(g) != 2 {
		t.Fatalf("groups %v, want two", g)
	}
}

// spread suggests 16 configurations at once after 20 completed trials of
// a 2-d problem and returns the median distance from each of them to its
// nearest other one.
func spread(t *testing.T, liar, multi bool, seed uint64) (float64, []hone.Config) {
	sp := space.Space{"x": space.Uniform(0, 1), "y": space.Uniform(0, 1)}
	s := mustNew(t, sp, Options{Metric: "loss", NumSamples: 100, Seed: seed, ConstantLiar: liar, Multivariate: multi})
	run(t, s, 20, func(c hone.Config) float64 { return math.Hypot(c["x"].(float64)-0.3, c["y"].(float64)-0.6) })
	var cfgs []hone.Config
	for i := range 16 {
		cfg, err := s.Suggest(fmt.Sprint("c", i))
		if err != nil {
			t.Fatal(err)
		}
		cfgs = append(cfgs, cfg)
	}
	var ds []float64
	for i := range cfgs {
		nearest := math.Inf(1)
		for j := range cfgs {
			if j != i {
				nearest = math.Min(nearest, math.Hypot(cfgs[i]["x"].(float64)-cfgs[j]["x"].(float64), cfgs[i]["y"].(float64)-cfgs[j]["y"].(float64)))
			}
		}
		ds = append(ds, nearest)
	}
	return median(ds), cfgs
}

// Sixteen suggestions made at once, none complete: with the constant liar
// each pending one pushes the next away, so they spread out further than
// without it; they are all distinct either way.
func TestConstantLiarSpreads(t *testing.T) {
	for _, multi := range []bool{false, true} {
		var with, without []float64
		for seed := range uint64(7) {
			a, cfgs := spread(t, true, multi, seed)
			b, _ := spread(t, false, multi, seed)
			with, without = append(with, a), append(without, b)
			seen := map[string]bool{}
			for _, c := range cfgs {
				k := fmt.Sprint(c)
				if seen[k] {
					t.Fatalf("multivariate %v, seed %d: %s suggested twice", multi, seed, k)
				}
				seen[k] = true
			}
		}
		t.Logf("multivariate %v: median distance to the nearest other suggestion with the liar %.3f, without %.3f", multi, median(with), median(without))
		if !(median(with) > 1.5*median(without)) {
			t.Errorf("multivariate %v: median distance to the nearest other suggestion with the liar %.3f, without %.3f: want 1.5 times more", multi, median(with), median(without))
		}
	}
}

// The liar changes nothing when no trial is pending at a suggestion.
func TestConstantLiarSequential(t *testing.T) {
	sp := space.Space{"x": space.Uniform(0, 1), "c": space.Choice(1, 2, 3)}
	f := func(c hone.Config) float64 { return c["x"].(float64) * float64(c["c"].(int)) }
	a := run(t, mustNew(t, sp, Options{Metric: "loss", NumSamples: 40, Seed: 4}), 40, f)
	b := run(t, mustNew(t, sp, Options{Metric: "loss", NumSamples: 40, Seed: 4, ConstantLiar: true}), 40, f)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatal("sequential suggestions differ with the liar")
	}
}

// In a small discrete space, sixteen suggestions made at once without the
// liar mostly repeat the model's favourite; with it, far fewer do.
func TestConstantLiarAvoidsDuplicates(t *testing.T) {
	sp := space.Space{"a": space.Choice(0, 1, 2, 3), "b": space.Choice(0, 1, 2, 3), "c": space.RandInt(0, 4)}
	f := func(c hone.Config) float64 {
		a, b := c["a"].(int), c["b"].(int)
		return float64((a-1)*(a-1) + (b-2)*(b-2) + c["c"].(int))
	}
	for _, multi := range []bool{false, true} {
		var dups [2]int
		for k, liar := range []bool{false, true} {
			for seed := range uint64(4) {
				s := mustNew(t, sp, Options{Metric: "loss", NumSamples: -1, Seed: seed, ConstantLiar: liar, Multivariate: multi})
				for batch := range 5 {
					seen := map[string]bool{}
					ids, cfgs := []string{}, []hone.Config{}
					for i := range 16 {
						id := fmt.Sprint(batch, "-", i)
						cfg, err := s.Suggest(id)
						if err != nil {
							t.Fatal(err)
						}
						if seen[fmt.Sprint(cfg)] {
							dups[k]++
						}
						seen[fmt.Sprint(cfg)] = true
						ids, cfgs = append(ids, id), append(cfgs, cfg)
					}
					for i, id := range ids {
						s.OnTrialComplete(id, result("loss", f(cfgs[i])), false)
					}
				}
			}
		}
		t.Logf("multivariate %v: repeated configurations within batches of 16 (of 320): without the liar %d, with %d", multi, dups[0], dups[1])
		if float64(dups[1]) > 0.75*float64(dups[0]) {
			t.Errorf("multivariate %v: %d repeats with the liar, %d without: want at most three quarters", multi, dups[1], dups[0])
		}
	}
}

// TestMassMemo checks that fits sharing a massMemo compute what fits
// without one do, over a sequence of growing and sliding row sets whose
// widths change with their size, as a searcher's refits are.
func TestMassMemo(t *testing.T) {
	dims := jointDims(t)
	r := rand.New(rand.NewPCG(3, 4))
	var rows []row
	var mm massMemo
	for seq := range 120 {
		rows = append(rows, row{seq: seq, x: []float64{r.Float64() * 2, float64(r.IntN(5)), float64(r.IntN(3))}, liar: r.IntN(5) == 0})
		window := rows[max(0, len(rows)-40):]
		with, without := newJoint(dims, []int{0, 1, 2}, window, 1, &mm), newJoint(dims, []int{0, 1, 2}, window, 1, nil)
		if !reflect.DeepEqual(with.logZ, without.logZ) || !reflect.DeepEqual(with.logc, without.logc) {
			t.Fatalf("joint fit %d: the memo changed the kernels' masses", seq)
		}
		c := column(window, 0)
		pw := newParzen(c.xs, recencyWeights(len(c.xs)), 0, 2, 1, false, c.liar, &mm, 0, c.seqs)
		pn := newParzen(c.xs, recencyWeights(len(c.xs)), 0, 2, 1, false, c.liar, nil, 0, nil)
		if !reflect.DeepEqual(pw.logc, pn.logc) || !reflect.DeepEqual(pw.logm, pn.logm) {
			t.Fatalf("parzen fit %d: the memo changed the kernels' masses", seq)
		}
	}
}

// onGrid rounds to the nearest power of 2^(1/8), within 4.5%, and keeps
// what is not a positive finite width.
func TestOnGrid(t *testing.T) {
	for _, w := range []float64{1e-9, 0.003, 0.07, 0.2, 1, 3.7, 1e6} {
		g := onGrid(w)
		k := 8 * math.Log2(g)
		if math.Abs(k-math.Round(k)) > 1e-9 || math.Abs(g-w)/w > 0.045 {
			t.Errorf("onGrid(%v) = %v: want 2^(k/8) within 4.5%%", w, g)
		}
		if onGrid(w*1.01) != g && onGrid(w*0.99) != g {
			t.Errorf("onGrid(%v) = %v changes both 1%% above and below", w, g)
		}
	}
	for _, w := range []float64{0, -1, math.Inf(1)} {
		if g := onGrid(w); g != w {
			t.Errorf("onGrid(%v) = %v, want it unchanged", w, g)
		}
	}
	if g := onGrid(math.NaN()); !math.IsNaN(g) {
		t.Errorf("onGrid(NaN) = %v", g)
	}
}

package pb2

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"pgregory.net/rapid"
)

func testExplorer(bounds map[string][2]float64) *explorer {
	cfg := DefaultConfig()
	cfg.Bounds = bounds
	return newExplorer(cfg.withDefaults())
}

func trial(id string) *hone.Trial { return &hone.Trial{ID: id} }

// TestDataset pins Ray's data frame: rows sorted by time, y = Δreward/Δtime
// between consecutive records of one trial with one configuration, the
// reward before, Δtime ≤ 0 and undefined y dropped.
func TestDataset(t *testing.T) {
	e := testExplorer(map[string][2]float64{"x": {0, 1}})
	obs := func(id string, time, score, x float64) {
		e.Observe(trial(id), time, score, hone.Config{"x": x})
	}
	obs("a", 1, 1, 0.1)
	obs("b", 1, 0, 0.5)
	obs("a", 2, 3, 0.1)
	obs("a", 2, 5, 0.1)                                // Δtime 0: no row, but the next row follows it
	obs("b", 3, 1, 0.6)                                // a new configuration: a new group
	obs("a", 4, 9, 0.1)                                // y = (9 − 5)/2
	obs("b", 5, 2, 0.6)                                // y = (2 − 1)/2
	obs("c", 6, math.NaN(), 0.3)                       // alone
	obs("c", 7, 1, 0.3)                                // y undefined: dropped
	e.Observe(trial("d"), 8, 1, hone.Config{"y": 1.0}) // no bound key: not recorded
	e.Observe(trial("d"), 9, 1, hone.Config{"x": "high"})
	got := e.dataset()
	want := []sample{
		{trial: "a", time: 2, before: 1, reward: 3, y: 2},
		{trial: "a", time: 4, before: 5, reward: 9, y: 2},
		{trial: "b", time: 5, before: 1, reward: 2, y: 0.5},
	}
	if len(got) != len(want) {
		t.Fatalf("dataset %+v", got)
	}
	for i, w := range want {
		g := got[i]
		if g.trial != w.trial || g.time != w.time || g.before != w.before || g.reward != w.reward || g.y != w.y {
			t.Errorf("row %d: %+v, want %+v", i, g, w)
		}
	}
	if len(e.rows) != 9 || e.maxTime != 7 {
		t.Errorf("%d records, latest time %v", len(e.rows), e.maxTime)
	}
}

// TestDatasetKeepsLast1000Rows: of more rows, the 1000 latest by time are
// kept, whatever the order of the records.
func TestDatasetKeepsLast1000Rows(t *testing.T) {
	e := testExplorer(map[string][2]float64{"x": {0, 1}})
	r := rand.New(rand.NewPCG(1, 2))
	const trials, checks = 30, 51 // 30·50 = 1500 rows
	order := r.Perm(trials * checks)
	for _, k := range order {
		i, j := k/checks, k%checks
		e.Observe(trial(fmt.Sprint(i)), float64(j*trials+i), float64(j), hone.Config{"x": float64(i) / trials})
	}
	data := e.dataset()
	if len(data) != 1000 {
		t.Fatalf("%d rows, want 1000", len(data))
	}
	// 1500 rows at times checks·trials−1 down to trials: the 1000 latest
	// start at time 1530 − 1000 = 530.
	for i, s := range data {
		if s.time != float64(530+i) {
			t.Fatalf("row %d at time %v, want %v", i, s.time, 530+i)
		}
	}
	if !testing.Short() {
		// The GP on the whole window: a choice within the bounds.
		out := e.Explore(r, trial("0"), trial("29"), hone.Config{"x": 29.0 / trials})
		if x, ok := out["x"].(float64); !ok || x < 0 || x > 1 {
			t.Fatalf("explored %v", out)
		}
	}
	small := testExplorer(map[string][2]float64{"x": {0, 1}})
	small.maxRows = 7
	small.rows = e.rows
	if d := small.dataset(); len(d) != 7 || d[0].time != 1523 {
		t.Fatalf("max rows 7: %d rows from %v", len(d), d[0].time)
	}
}

// population records checks of n trials with hyperparameter x = i/(n−1)
// whose reward grows at rate rate(x), at times 1..checks.
func population(e *explorer, n, checks int, rate func(x float64) float64) {
	for c := 1; c <= checks; c++ {
		for i := 0; i < n; i++ {
			x := float64(i) / float64(n-1)
			e.Observe(trial(fmt.Sprint("t", i)), float64(c), rate(x)*float64(c), hone.Config{"x": x})
		}
	}
}

// TestExploreFollowsTheImprovement: with the reward improving fastest at
// x = 0.8, PB2 chooses x near 0.8, and records the clone at the donor's
// time and score with its new x.
func TestExploreFollowsTheImprovement(t *testing.T) {
	e := testExplorer(map[string][2]float64{"x": {0, 1}})
	population(e, 11, 4, func(x float64) float64 { return 1 - 4*(x-0.8)*(x-0.8) })
	r := rand.New(rand.NewPCG(9, 9))
	out := e.Explore(r, trial("t0"), trial("t8"), hone.Config{"x": 0.8, "other": "kept"})
	x := out["x"].(float64)
	if math.Abs(x-0.8) > 0.1 || out["other"] != "kept" {
		t.Fatalf("new config %v, want x near 0.8", out)
	}
	last := e.rows[len(e.rows)-1]
	if last.trial != "t0" || last.time != 4 || last.reward != (1-4*0.0*0.0)*4 || last.vals[0] != x {
		t.Fatalf("clone record %+v", last)
	}
	// The clone's next check measures the improvement from the donor's score.
	e.Observe(trial("t0"), 5, 3.5, out)
	data := e.dataset()
	if s := data[len(data)-1]; s.trial != "t0" || s.before != 4 || s.y != -0.5 {
		t.Fatalf("clone row %+v", s)
	}
}

// TestUCBPicksHighMeanOrVariance: with the kernel fixed, UCB goes to the
// peak of the mean where data are dense, and to the unexplored region when
// the data are flat and low there.
func TestUCBPicksHighMeanOrVariance(t *testing.T) {
	h := hyper{kernel: kernel{variance: 1, lengthscale: 0.2, epsilon: 0.1}, noise: 1e-4}
	fixed := []float64{1, 0.5}
	var x [][]float64
	var yPeak, yFlat []float64
	for i := 0; i <= 20; i++ {
		u := float64(i) / 20
		x = append(x, []float64{1, 0.5, u})
		yPeak = append(yPeak, 2*math.Exp(-50*(u-0.3)*(u-0.3))-1)
	}
	r := rand.New(rand.NewPCG(1, 1))
	m, err := newGP(x, yPeak, h)
	if err != nil {
		t.Fatal(err)
	}
	if z := maximize(r, 1, 10, ucb(m, m, fixed, len(x))); math.Abs(z[0]-0.3) > 0.03 {
		t.Fatalf("dense data peaked at 0.3: UCB picks %v", z)
	}
	// Data only in [0, 0.4], all low: the mean is low there and reverts to
	// the prior, with the prior variance, beyond.
	var xl [][]float64
	for i := 0; i <= 8; i++ {
		xl = append(xl, []float64{1, 0.5, 0.05 * float64(i)})
		yFlat = append(yFlat, -1)
	}
	m, err = newGP(xl, yFlat, h)
	if err != nil {
		t.Fatal(err)
	}
	if z := maximize(r, 1, 10, ucb(m, m, fixed, len(xl))); z[0] < 0.8 {
		t.Fatalf("unexplored region [0.4, 1]: UCB picks %v", z)
	}
}

// TestBanditFindsTheMaximum fits the kernel and maximises UCB over two
// hyperparameters.
func TestBanditFindsTheMaximum(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 3))
	var x [][]float64
	var ys []float64
	for i := 0; i < 60; i++ {
		u, v := r.Float64(), r.Float64()
		x = append(x, []float64{float64(i%6) / 5, r.Float64(), u, v})
		ys = append(ys, -((u-0.7)*(u-0.7) + (v-0.2)*(v-0.2)))
	}
	z, ok := bandit(r, x, standardize(ys), []float64{1, 0.5}, nil, 200, 10)
	if !ok || math.Hypot(z[0]-0.7, z[1]-0.2) > 0.15 {
		t.Fatalf("bandit picks %v (ok %v), want near (0.7, 0.2)", z, ok)
	}
}

// TestPenaltyInOneRound: a second choice in the same round (no later
// record in between) avoids the first, which is remembered as current; a
// later record starts a new round that forgets it.
func TestPenaltyInOneRound(t *testing.T) {
	e := testExplorer(map[string][2]float64{"x": {0, 1}, "y": {0, 1}})
	// Few, noisy records: the variance matters.
	r := rand.New(rand.NewPCG(4, 4))
	for c := 1; c <= 3; c++ {
		for i := 0; i < 4; i++ {
			x, y := 0.1+0.1*float64(i), 0.2
			e.Observe(trial(fmt.Sprint("t", i)), float64(c), float64(c)*(1+x)+0.05*r.NormFloat64(), hone.Config{"x": x, "y": y})
		}
	}
	donor := hone.Config{"x": 0.4, "y": 0.2}
	first := e.Explore(r, trial("t0"), trial("t3"), donor)
	if len(e.current) != 1 || e.lastExploration != 3 {
		t.Fatalf("after the first choice: current %v, last exploration %v", e.current, e.lastExploration)
	}
	second := e.Explore(r, trial("t1"), trial("t3"), donor)
	if len(e.current) != 2 {
		t.Fatalf("after the second choice: current %v", e.current)
	}
	dist := math.Hypot(first["x"].(float64)-second["x"].(float64), first["y"].(float64)-second["y"].(float64))
	if dist < 0.1 {
		t.Fatalf("the second choice %v repeats the first %v", second, first)
	}
	// Without the penalty the second choice would repeat the first: the
	// explorer is deterministic given the random source.
	again := testExplorer(map[string][2]float64{"x": {0, 1}, "y": {0, 1}})
	again.rows = append([]record(nil), e.rows[:12]...)
	again.maxTime = 3
	r2 := rand.New(rand.NewPCG(4, 4))
	for i := 0; i < 12; i++ {
		r2.NormFloat64()
	}
	if a := again.Explore(r2, trial("t0"), trial("t3"), donor); a["x"] != first["x"] || a["y"] != first["y"] {
		t.Fatalf("not deterministic: %v then %v", first, a)
	}
	// A record later than the round's start begins a new round.
	e.Observe(trial("t2"), 4, 4.8, hone.Config{"x": 0.3, "y": 0.2})
	e.Explore(r, trial("t2"), trial("t3"), donor)
	if len(e.current) != 1 || e.lastExploration != 4 {
		t.Fatalf("new round: current %v, last exploration %v", e.current, e.lastExploration)
	}
}

// TestDonorWithoutRows: a donor with no improvement on record passes its
// configuration on, which still counts as chosen in the round.
func TestDonorWithoutRows(t *testing.T) {
	e := testExplorer(map[string][2]float64{"x": {0, 1}})
	e.Observe(trial("a"), 1, 1, hone.Config{"x": 0.3})
	e.Observe(trial("b"), 1, 2, hone.Config{"x": 0.6})
	out := e.Explore(rand.New(rand.NewPCG(1, 1)), trial("a"), trial("b"), hone.Config{"x": 0.6})
	if out["x"] != 0.6 || len(e.current) != 1 || e.current[0][0] != 0.6 || len(e.rows) != 2 {
		t.Fatalf("got %v, current %v, %d records", out, e.current, len(e.rows))
	}
}

// TestExploreRespectsBounds: whatever the records, every explored value is
// within its bounds (on a log scale too); ints stay ints when the bounds hold one; nested keys
// are set in nested maps; the donor's configuration is not modified.
func TestExploreRespectsBounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		keys := []string{"a", "m/b", "m/c"}[:rapid.IntRange(1, 3).Draw(t, "dims")]
		bounds, logScale := map[string][2]float64{}, map[string]bool{}
		for _, k := range keys {
			lo := rapid.Float64Range(-100, 100).Draw(t, "lo_"+k)
			w := rapid.SampledFrom([]float64{0, 1e-6, 0.5, 3, 1000}).Draw(t, "width_"+k)
			if lo > 0 && rapid.Bool().Draw(t, "log_"+k) {
				lo /= 1e4 // decades above it to the high bound
				logScale[k] = true
			}
			bounds[k] = [2]float64{lo, lo + w}
		}
		cfg := DefaultConfig()
		cfg.Bounds, cfg.LogScale = bounds, logScale
		if err := cfg.Validate(); err != nil {
			t.Fatalf("config: %v", err)
		}
		e := newExplorer(cfg.withDefaults())
		seed := rapid.Uint64().Draw(t, "seed")
		r := rand.New(rand.NewPCG(seed, seed))
		ints := rapid.Bool().Draw(t, "ints")
		cfgOf := func(vals []float64) hone.Config {
			cfg := hone.Config{"m": map[string]any{}}
			for i, k := range keys {
				var v any = vals[i]
				if ints {
					v = int(vals[i])
				}
				set(cfg, strings.Split(k, "/"), v)
			}
			return cfg
		}
		n := rapid.IntRange(2, 6).Draw(t, "trials")
		checks := rapid.IntRange(1, 5).Draw(t, "checks")
		cfgs := map[string]hone.Config{}
		for c := 1; c <= checks; c++ {
			for i := 0; i < n; i++ {
				id := fmt.Sprint("t", i)
				if cfgs[id] == nil {
					vals := make([]float64, len(keys))
					for j, k := range keys {
						// initial values may lie outside the bounds
						vals[j] = bounds[k][0] + (r.Float64()*1.4-0.2)*(bounds[k][1]-bounds[k][0])
					}
					cfgs[id] = cfgOf(vals)
				}
				e.Observe(trial(id), float64(c)+r.Float64(), r.NormFloat64()*float64(c), cfgs[id])
			}
			for k := 0; k < rapid.IntRange(0, 2).Draw(t, "explores"); k++ {
				target, donor := fmt.Sprint("t", r.IntN(n)), fmt.Sprint("t", r.IntN(n))
				before, explored := fmt.Sprint(cfgs[donor]), dataHas(e, donor)
				out := e.Explore(r, trial(target), trial(donor), cfgs[donor])
				if fmt.Sprint(cfgs[donor]) != before {
					t.Fatalf("the donor's config changed: %s -> %v", before, cfgs[donor])
				}
				if explored {
					for i, k := range keys {
						v, _ := out.Lookup(e.paths[i]...)
						x, ok := hone.Number(v)
						lo, hi := bounds[k][0], bounds[k][1]
						if !ok || x < lo || x > hi {
							t.Fatalf("%s = %v outside [%v, %v]", k, v, lo, hi)
						}
						if _, isInt := v.(int); ints && math.Ceil(lo) <= math.Floor(hi) && !isInt {
							t.Fatalf("%s = %v (%T): an int became a float", k, v, v)
						}
					}
				}
				cfgs[target] = out
			}
		}
	})
}

func dataHas(e *explorer, id string) bool {
	for _, s := range e.dataset() {
		if s.trial == id {
			return true
		}
	}
	return false
}

// TestCast: a value keeps the type of the one it replaces when that was an
// int and the bounds hold an integer (truncated, then clamped to them);
// otherwise it is a float64.
func TestCast(t *testing.T) {
	e := testExplorer(map[string][2]float64{"a": {0.5, 3.7}, "b": {0.2, 0.8}})
	for _, c := range []struct {
		prev any
		x    float64
		key  int
		want any
	}{
		{2, 3.6, 0, 3},
		{2, 0.6, 0, 1}, // int(0.6) = 0 is below the bounds
		{int64(2), 2.9, 0, int64(2)},
		{int32(2), 1.1, 0, int32(1)},
		{2, 0.5, 1, 0.5}, // no integer in [0.2, 0.8]
		{2.5, 3.6, 0, 3.6},
		{nil, 1.25, 0, 1.25},
		{"s", 1.25, 0, 1.25},
	} {
		if got := e.cast(c.prev, c.x, c.key); got != c.want {
			t.Errorf("cast(%v (%T), %v) = %v (%T), want %v (%T)", c.prev, c.prev, c.x, got, got, c.want, c.want)
		}
	}
}

// TestLogScaleCoordinates: a LogScale key's GP coordinate is the place of
// its logarithm within the logarithms of the bounds (a value below the
// low bound counts as it), and the chosen coordinate maps back the same
// way, within the bounds; other keys are linear.
func TestLogScaleCoordinates(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Bounds = map[string][2]float64{"lr": {1e-4, 1e-1}, "x": {1e-4, 1e-1}}
	cfg.LogScale = map[string]bool{"lr": true}
	e := newExplorer(cfg.withDefaults())
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }
	for _, c := range []struct{ v, lr, x float64 }{
		{1e-4, 0, 0},
		{1e-3, 1.0 / 3, (1e-3 - 1e-4) / (1e-1 - 1e-4)},
		{1e-2, 2.0 / 3, (1e-2 - 1e-4) / (1e-1 - 1e-4)},
		{1e-1, 1, 1},
		{1e-6, 0, (1e-6 - 1e-4) / (1e-1 - 1e-4)}, // below the bounds
	} {
		if got := e.unit(0, c.v); !near(got, c.lr) {
			t.Errorf("lr %v: coordinate %v, want %v", c.v, got, c.lr)
		}
		if got := e.unit(1, c.v); !near(got, c.x) {
			t.Errorf("x %v: coordinate %v, want %v", c.v, got, c.x)
		}
	}
	for _, c := range []struct{ z, lr, x float64 }{
		{0, 1e-4, 1e-4}, {1.0 / 3, 1e-3, 1e-4 + (1e-1-1e-4)/3}, {1, 1e-1, 1e-1}, {1.5, 1e-1, 1e-1}, {-1, 1e-4, 1e-4},
	} {
		if got := e.fromUnit(0, c.z); !near(got, c.lr) || got < 1e-4 || got > 1e-1 {
			t.Errorf("lr at %v: %v, want %v", c.z, got, c.lr)
		}
		if got := e.fromUnit(1, c.z); !near(got, c.x) {
			t.Errorf("x at %v: %v, want %v", c.z, got, c.x)
		}
	}
}

// TestExploreLogScale: eleven trials at learning rates log-spaced over
// [1e-5, 1e-1], each with one row from the same score at the same time,
// whose improvement peaks at 1e-3 (symmetric in log lr). With lr on a log
// scale PB2 chooses within a factor of 2 of 1e-3; with linear bounds,
// where all but the two highest rates lie in the lowest sixth of the
// range, it does not.
func TestExploreLogScale(t *testing.T) {
	choose := func(log bool, seed uint64) float64 {
		cfg := DefaultConfig()
		cfg.Bounds = map[string][2]float64{"lr": {1e-5, 1e-1}}
		cfg.LogScale = map[string]bool{"lr": log}
		e := newExplorer(cfg.withDefaults())
		for i := 0; i <= 10; i++ {
			lr := math.Pow(10, -5+0.4*float64(i))
			d := math.Log10(lr) + 3
			e.Observe(trial(fmt.Sprint("t", i)), 1, 0, hone.Config{"lr": lr})
			e.Observe(trial(fmt.Sprint("t", i)), 2, 1-d*d/4, hone.Config{"lr": lr})
		}
		out := e.Explore(rand.New(rand.NewPCG(seed, 7)), trial("t0"), trial("t5"), hone.Config{"lr": 1e-3})
		return out["lr"].(float64)
	}
	for seed := uint64(1); seed <= 5; seed++ {
		if lr := choose(true, seed); lr < 1e-3/2 || lr > 2e-3 {
			t.Errorf("seed %d, log scale: PB2 chose lr %v, want within a factor of 2 of 1e-3", seed, lr)
		}
		if lr := choose(false, seed); lr >= 1e-3/2 && lr <= 2e-3 {
			t.Errorf("seed %d, linear bounds: PB2 chose lr %v, near 1e-3: the problem does not tell the scales apart", seed, lr)
		}
	}
}

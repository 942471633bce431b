package dehb

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/space"
	"pgregory.net/rapid"
)

// TestSchedule pins the budget levels, DEHB's bracket sizes and the
// population sizes.
func TestSchedule(t *testing.T) {
	for _, c := range []struct {
		cfg    Config
		levels []float64
		rungs  [][]int // per s = 0 … K
		pop    []int
	}{
		{Config{MaxT: 81, GracePeriod: 1, ReductionFactor: 3}, []float64{1, 3, 9, 27, 81},
			[][]int{{5}, {6, 2}, {9, 3, 1}, {27, 9, 3, 1}, {81, 27, 9, 3, 1}}, []int{81, 27, 9, 6, 5}},
		{Config{MaxT: 27, GracePeriod: 1, ReductionFactor: 3}, []float64{1, 3, 9, 27},
			[][]int{{4}, {6, 2}, {9, 3, 1}, {27, 9, 3, 1}}, []int{27, 9, 6, 4}},
		// 1 to 100: the lowest level is 100/81 (DEHB: MaxT/η^k >= min).
		{Config{MaxT: 100, GracePeriod: 1, ReductionFactor: 3}, []float64{100.0 / 81, 100.0 / 27, 100.0 / 9, 100.0 / 3, 100},
			[][]int{{5}, {6, 2}, {9, 3, 1}, {27, 9, 3, 1}, {81, 27, 9, 3, 1}}, []int{81, 27, 9, 6, 5}},
		// An exact power keeps its lowest level (DEHB's float arithmetic
		// drops one for 1000/1 at η 10 and 729/1 at η 3).
		{Config{MaxT: 1000, GracePeriod: 1, ReductionFactor: 10}, []float64{1, 10, 100, 1000},
			[][]int{{4}, {20, 2}, {100, 10, 1}, {1000, 100, 10, 1}}, []int{1000, 100, 20, 4}},
		{Config{MaxT: 8, GracePeriod: 2, ReductionFactor: 2}, []float64{2, 4, 8},
			[][]int{{3}, {2, 1}, {4, 2, 1}}, []int{4, 2, 3}},
	} {
		cfg, err := c.cfg.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		sc := newSchedule(cfg)
		if len(sc.levels) != len(c.levels) {
			t.Fatalf("%+v: levels %v, want %v", c.cfg, sc.levels, c.levels)
		}
		for i := range c.levels {
			if math.Abs(sc.levels[i]-c.levels[i]) > 1e-12*c.levels[i] {
				t.Errorf("%+v: levels %v, want %v", c.cfg, sc.levels, c.levels)
			}
		}
		for s, want := range c.rungs {
			if got := sc.rungs(s); !slices.Equal(got, want) {
				t.Errorf("%+v: s=%d rungs %v, want %v", c.cfg, s, got, want)
			}
		}
		if !slices.Equal(sc.pop, c.pop) {
			t.Errorf("%+v: populations %v, want %v", c.cfg, sc.pop, c.pop)
		}
	}
}

// TestBracketOrder: bracket j halves K − (j mod K+1) times, most
// aggressive first, and starts at level j mod K+1.
func TestBracketOrder(t *testing.T) {
	sc := newSchedule(Config{TimeAttr: "t", MaxT: 27, GracePeriod: 1, ReductionFactor: 3})
	for j, want := range []int{0, 1, 2, 3, 0, 1} {
		b := newBracket(sc, j)
		if b.first != want || len(b.n) != 4-want {
			t.Errorf("bracket %d: first level %d, %d rungs; want %d, %d", j, b.first, len(b.n), want, 4-want)
		}
	}
}

// TestBracketSynchronousRungs: a rung's jobs are given out only once every
// job of the rung before it is answered; a cut rung lets the next one go.
func TestBracketSynchronousRungs(t *testing.T) {
	b := &bracket{n: []int{3, 1}, issued: make([]int, 2), done: make([]int, 2)}
	for range 3 {
		if !b.eligible() || b.next() != 0 {
			t.Fatalf("rung 0 should give out jobs: %+v", b)
		}
		b.register(0)
	}
	if b.eligible() {
		t.Fatal("rung 1 given out before rung 0 was answered")
	}
	b.done[0] = 2
	if b.eligible() {
		t.Fatal("rung 1 given out with a rung 0 job in flight")
	}
	b.done[0] = 3
	if !b.eligible() || b.next() != 1 {
		t.Fatal("rung 1 not given out once rung 0 was answered")
	}
	b.register(1)
	b.done[1] = 1
	if !b.finished() || b.eligible() {
		t.Fatal("bracket not finished")
	}
	c := &bracket{n: []int{3, 1}, issued: make([]int, 2), done: make([]int, 2)}
	c.register(0)
	c.cut(0)
	if c.n[0] != 1 || c.eligible() {
		t.Fatalf("cut rung: %+v", c)
	}
	c.done[0] = 1
	if !c.eligible() || c.next() != 1 {
		t.Fatalf("after a cut, rung 1 should go: %+v", c)
	}
}

// TestPick3 draws distinct indices, every triple equally often.
func TestPick3(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	counts := map[[3]int]int{}
	const n, draws = 4, 48000
	for range draws {
		a, b, c := pick3(r, n)
		if a == b || b == c || a == c || min(a, b, c) < 0 || max(a, b, c) >= n {
			t.Fatalf("pick3 = %d %d %d", a, b, c)
		}
		counts[[3]int{a, b, c}]++
	}
	if len(counts) != n*(n-1)*(n-2) {
		t.Fatalf("%d ordered triples seen, want %d", len(counts), n*(n-1)*(n-2))
	}
	want := float64(draws) / float64(len(counts))
	for k, c := range counts {
		if math.Abs(float64(c)-want) > 6*math.Sqrt(want) {
			t.Errorf("triple %v drawn %d times, want about %.0f", k, c, want)
		}
	}
}

// TestOperators: rand/1 mutants are r1 + F(r2 − r3) of distinct pool
// members; binomial crossover takes each coordinate from the target or
// the mutant, at least one from the mutant, and with CR = 1 all of them;
// after the boundary fix every coordinate is in [0, 1], and those already
// inside are unchanged.
func TestOperators(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.IntRange(1, 8).Draw(t, "d")
		n := rapid.IntRange(3, 10).Draw(t, "n")
		f := rapid.Float64Range(0.01, 2).Draw(t, "F")
		cr := rapid.Float64Range(0, 1).Draw(t, "CR")
		r := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 1))
		pool := make([][]float64, n)
		for i := range pool {
			pool[i] = uniform(r, d)
		}
		m := mutateRand1(r, pool, f)
		found := false
		for i := range pool {
			for j := range pool {
				for k := range pool {
					if i == j || j == k || i == k {
						continue
					}
					ok := true
					for c := range m {
						if m[c] != pool[i][c]+f*(pool[j][c]-pool[k][c]) {
							ok = false
						}
					}
					found = found || ok
				}
			}
		}
		if !found {
			t.Fatalf("mutant %v is no r1 + F(r2 − r3) of the pool", m)
		}
		target := uniform(r, d)
		child := crossoverBin(r, target, m, cr)
		fromMutant := 0
		for c := range child {
			switch {
			case child[c] == m[c]:
				fromMutant++
			case child[c] != target[c]:
				t.Fatalf("coordinate %d = %v from neither parent", c, child[c])
			}
		}
		if fromMutant == 0 {
			t.Fatal("no coordinate from the mutant")
		}
		if all := crossoverBin(r, target, m, 1); !slices.Equal(all, m) {
			t.Fatalf("CR 1: %v, want the mutant %v", all, m)
		}
		before := slices.Clone(child)
		fixBounds(r, child)
		for c, v := range child {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("coordinate %d = %v after the boundary fix", c, v)
			}
			if before[c] >= 0 && before[c] <= 1 && v != before[c] {
				t.Fatalf("coordinate %d inside the cube changed: %v -> %v", c, before[c], v)
			}
		}
	})
}

// mixed is a space of every kind DEHB encodes.
func mixed() space.Space {
	return space.Space{
		"lr":    space.LogUniform(1e-4, 1),
		"m":     space.Uniform(0, 0.9),
		"units": space.RandInt(16, 64),
		"act":   space.Choice("relu", "tanh", "gelu"),
		"drop":  space.QUniform(0, 0.5, 0.1),
		"fixed": 3,
	}
}

// TestEncoding: any point of the unit cube decodes to a valid
// configuration; a categorical coordinate is its cell (rounded down); and
// encoding a decoded configuration lands in the same cells, so decoding
// again gives it back (floats up to rounding).
func TestEncoding(t *testing.T) {
	sp := mixed()
	s, err := New(sp, Options{Metric: "loss", Mode: hone.Min})
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, func(t *rapid.T) {
		x := make([]float64, s.dim)
		for i := range x {
			x[i] = rapid.Float64Range(0, 1).Draw(t, "x")
		}
		cfg, err := sp.FromUnit(x, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := sp.Check(cfg); err != nil {
			t.Fatalf("decoded %v: %v", cfg, err)
		}
		if cfg["fixed"] != 3 {
			t.Fatalf("constant lost: %v", cfg)
		}
		u, err := sp.ToUnit(cfg)
		if err != nil {
			t.Fatal(err)
		}
		again, err := sp.FromUnit(u, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range cfg {
			w := again[k]
			if f, ok := v.(float64); ok {
				if g, ok := w.(float64); !ok || math.Abs(f-g) > 1e-12*math.Max(1, math.Abs(f)) {
					t.Fatalf("decode(encode(%v)) = %v", cfg, again)
				}
			} else if !reflect.DeepEqual(v, w) {
				t.Fatalf("decode(encode(%v)) = %v", cfg, again)
			}
		}
	})
	// The act coordinate (dimension 0: keys in order act, drop, lr, m,
	// units) is rounded down to a third of the range.
	for _, c := range []struct {
		u    float64
		want string
	}{{0, "relu"}, {0.33, "relu"}, {0.34, "tanh"}, {0.66, "tanh"}, {0.67, "gelu"}, {1, "gelu"}} {
		x := []float64{c.u, 0.5, 0.5, 0.5, 0.5}
		cfg, err := sp.FromUnit(x, nil)
		if err != nil {
			t.Fatal(err)
		}
		if cfg["act"] != c.want {
			t.Errorf("act coordinate %v decodes to %v, want %v", c.u, cfg["act"], c.want)
		}
	}
}

func TestOptionsAndConfig(t *testing.T) {
	sp := mixed()
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Mode: hone.Min}, "metric is required"},
		{Options{Metric: "l", Mode: "up"}, `mode = "up"`},
		{Options{Metric: "l", Mode: hone.Min, MutationFactor: 3}, "mutation_factor = 3: must be in (0, 2]"},
		{Options{Metric: "l", Mode: hone.Min, CrossoverProb: 1.5}, "crossover_prob = 1.5: must be in [0, 1]"},
		{Options{Metric: "l", Mode: hone.Min, NumSamples: -2}, "num_samples = -2"},
		{Options{Metric: "l", Mode: hone.Min, Points: []map[string]any{{"nope": 1}}}, "points_to_evaluate[0]"},
		{Options{Metric: "l", Mode: hone.Min, Points: []map[string]any{{"act": "sigmoid"}}}, "points_to_evaluate[0]"},
	} {
		if _, err := New(sp, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.o, err, c.want)
		}
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{MaxT: 10, GracePeriod: 10}, "max_t = 10: must be a finite number > grace_period (10)"},
		{Config{GracePeriod: -1}, "grace_period = -1"},
		{Config{ReductionFactor: 1}, "reduction_factor = 1: must be a finite number > 1"},
		{Config{MaxT: 1e9, GracePeriod: 1, ReductionFactor: 2}, "more than 12 budget levels"},
		{Config{MaxT: 2, GracePeriod: 1, ReductionFactor: 3}, "max_t = 2: must be at least grace_period × reduction_factor (3)"},
	} {
		if _, err := NewScheduler(c.cfg, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.cfg, err, c.want)
		}
	}
	s, _ := New(sp, Options{Metric: "l", Mode: hone.Min})
	if _, err := s.Suggest("a"); err == nil || !strings.Contains(err.Error(), "needs the dehb scheduler") {
		t.Errorf("unbound Suggest: %v", err)
	}
	many := make([]map[string]any, 28)
	for i := range many {
		many[i] = map[string]any{"m": 0.1}
	}
	s, _ = New(sp, Options{Metric: "l", Mode: hone.Min, Points: many})
	if _, err := NewScheduler(Config{MaxT: 27}, s); err == nil || !strings.Contains(err.Error(), "28 points, but the lowest budget's population holds 27") {
		t.Errorf("too many points: %v", err)
	}
}

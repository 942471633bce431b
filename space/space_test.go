package space

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
)

func TestSampleShape(t *testing.T) {
	s := Space{
		"lr":    LogUniform(1e-4, 1e-1),
		"name":  "resnet",
		"tags":  []any{"a", "b"},
		"empty": map[string]any{},
		"model": Space{"width": Choice(64, 128), "opt": map[string]any{"beta": Uniform(0.9, 0.99)}},
		"raw":   Const(map[string]any{"choice": []any{1, 2}}),
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg := s.Sample(newRand(1))
	if err := s.Check(cfg); err != nil {
		t.Fatal(err)
	}
	if cfg["name"] != "resnet" || !reflect.DeepEqual(cfg["tags"], []any{"a", "b"}) {
		t.Errorf("constants not copied: %v", cfg)
	}
	if !reflect.DeepEqual(cfg["empty"], map[string]any{}) {
		t.Errorf("empty = %#v, want an empty map", cfg["empty"])
	}
	if !reflect.DeepEqual(cfg["raw"], map[string]any{"choice": []any{1, 2}}) {
		t.Errorf("raw = %#v", cfg["raw"])
	}
	model, ok := cfg["model"].(map[string]any)
	if !ok {
		t.Fatalf("model = %T, want map[string]any", cfg["model"])
	}
	if _, ok := model["opt"].(map[string]any)["beta"].(float64); !ok {
		t.Errorf("model.opt.beta not sampled: %v", model)
	}
	// The result is the caller's: changing it leaves the space alone.
	cfg["tags"].([]any)[0] = "changed"
	if s["tags"].([]any)[0] != "a" {
		t.Error("Sample shared a constant slice with the space")
	}
}

func TestGridOrderIsRays(t *testing.T) {
	s := Space{
		"b": GridSearch("x", "y"),
		"a": GridSearch(1, 2),
		"n": Space{"c": GridSearch(true, false)},
		"u": Uniform(0, 1),
	}
	got := s.GridPoints()
	// Paths sorted: a, b, n.c; the first varies fastest.
	var want []map[string]any
	for _, c := range []bool{true, false} {
		for _, b := range []string{"x", "y"} {
			for _, a := range []int{1, 2} {
				want = append(want, map[string]any{"a": a, "b": b, "n": map[string]any{"c": c}})
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("GridPoints =\n%v\nwant\n%v", got, want)
	}
	if n := s.Grid(nil).Len(); n != 8 {
		t.Fatalf("Len = %d, want 8", n)
	}
	// Resolving a grid point keeps its values and samples the rest.
	r := newRand(1)
	for _, p := range got {
		cfg := s.Resolve(p, r)
		if cfg["a"] != p["a"] || cfg["b"] != p["b"] || !reflect.DeepEqual(cfg["n"], p["n"]) {
			t.Fatalf("Resolve(%v) = %v", p, cfg)
		}
		if err := s.Check(cfg); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGridWithoutGridDomains(t *testing.T) {
	s := Space{"x": Uniform(0, 1)}
	if got := s.GridPoints(); !reflect.DeepEqual(got, []map[string]any{{}}) {
		t.Fatalf("GridPoints = %v, want one empty point", got)
	}
}

func TestGridFixed(t *testing.T) {
	s := Space{"a": GridSearch(1, 2), "b": GridSearch(3, 4, 5), "m": Space{"c": GridSearch("p", "q")}}
	fixed := map[string]any{"a": 7, "m": map[string]any{"extra": 1}}
	g := s.Grid(fixed)
	if g.Len() != 6 {
		t.Fatalf("Len = %d, want 6 (a is fixed)", g.Len())
	}
	first := g.At(0)
	want := map[string]any{"a": 7, "b": 3, "m": map[string]any{"c": "p", "extra": 1}}
	if !reflect.DeepEqual(first, want) {
		t.Fatalf("At(0) = %v, want %v", first, want)
	}
	if fixed["m"].(map[string]any)["c"] != nil {
		t.Fatal("At modified the fixed point")
	}
	// A fixed non-map value over a sub-space removes its grid keys.
	if n := s.Grid(map[string]any{"m": "none"}).Len(); n != 6 {
		t.Fatalf("Len = %d, want 6 (m.c is decided by m)", n)
	}
}

func TestFuncSeesResolvedValues(t *testing.T) {
	var seen []hone.Config
	s := Space{
		"a":     Uniform(0, 1),
		"const": 10,
		"m":     Space{"b": RandInt(0, 100)},
		// Funcs run after every other value, in path order: "f" before "g".
		"g": Func(func(c hone.Config) any { return c["f"].(float64) * 2 }),
		"f": Func(func(c hone.Config) any {
			seen = append(seen, c.Clone())
			if _, done := c["g"].(float64); done {
				t.Error("g evaluated before f")
			}
			return c["a"].(float64) + float64(c["const"].(int)) + float64(c["m"].(map[string]any)["b"].(int))
		}),
		"h": FuncRand(func(c hone.Config, r *rand.Rand) any { return r.IntN(1000) }),
	}
	cfg := s.Sample(newRand(9))
	if len(seen) != 1 {
		t.Fatalf("f called %d times", len(seen))
	}
	want := cfg["a"].(float64) + 10 + float64(cfg["m"].(map[string]any)["b"].(int))
	if cfg["f"] != want || cfg["g"] != 2*want {
		t.Fatalf("f = %v, g = %v, want %v and %v", cfg["f"], cfg["g"], want, 2*want)
	}
	if cfg2 := s.Sample(newRand(9)); !reflect.DeepEqual(cfg, cfg2) {
		t.Fatalf("not deterministic: %v vs %v", cfg, cfg2)
	}
	// Funcs see a point's values and lose to a point's own value.
	cfg = s.Resolve(map[string]any{"a": 0.5, "m": map[string]any{"b": 3}, "g": "set"}, newRand(1))
	if cfg["f"] != 13.5 || cfg["g"] != "set" {
		t.Fatalf("f = %v, g = %v, want 13.5 and set", cfg["f"], cfg["g"])
	}
}

func TestResolve(t *testing.T) {
	s := Space{
		"a": Uniform(0, 1),
		"m": Space{"x": RandInt(0, 10), "y": Choice("p", "q")},
		"n": Space{"z": Uniform(5, 6)},
	}
	point := map[string]any{
		"a":     2.5, // out of the domain: kept, as Ray keeps it
		"m":     map[string]any{"x": 99},
		"n":     "flat", // replaces the sub-space
		"extra": []any{1},
	}
	cfg := s.Resolve(point, newRand(3))
	if cfg["a"] != 2.5 || cfg["n"] != "flat" || !reflect.DeepEqual(cfg["extra"], []any{1}) {
		t.Fatalf("point values lost: %v", cfg)
	}
	m := cfg["m"].(map[string]any)
	if m["x"] != 99 {
		t.Fatalf("m.x = %v, want 99", m["x"])
	}
	if y := m["y"]; y != "p" && y != "q" {
		t.Fatalf("m.y = %v, want sampled", y)
	}
	// The point is copied, not aliased.
	cfg["extra"].([]any)[0] = 2
	if point["extra"].([]any)[0] != 1 {
		t.Fatal("Resolve aliased the point")
	}
	// Preset keys draw nothing: the rest is what a fresh source gives
	// the remaining keys.
	s2 := Space{"a": Uniform(0, 1), "b": Uniform(0, 1)}
	r1, r2 := newRand(4), newRand(4)
	got := s2.Resolve(map[string]any{"a": 0.0}, r1)["b"]
	want := Space{"b": Uniform(0, 1)}.Sample(r2)["b"]
	if got != want {
		t.Fatalf("b = %v, want %v", got, want)
	}
}

func TestValidateSpace(t *testing.T) {
	s := Space{"z": Uniform(0, 1), "m": Space{"lr": LogUniform(0, 1)}, "a": RandInt(2, 1)}
	err := s.Validate()
	want := "space: a.randint: want integers [low, high] with low < high (high exclusive), got [2, 1]"
	if err == nil || err.Error() != want {
		t.Fatalf("Validate = %v, want %q (first in path order)", err, want)
	}
	big := Space{}
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		vals := make([]any, 1000)
		big[k] = GridSearch(vals...)
	}
	err = big.Validate()
	want = "space: e.grid: the grid has more than 1099511627776 points"
	if err == nil || err.Error() != want {
		t.Fatalf("Validate = %v, want %q", err, want)
	}
}

func TestParams(t *testing.T) {
	s := Space{
		"a": RandInt(1, 10),
		"b": QUniform(0, 1, 0.3),
		"c": Choice("x", "y"),
		"d": Func(func(hone.Config) any { return 1 }),
		"e": Normal(1, 2),
		"f": LogRandInt(1, 100),
		"k": "constant",
		"m": Space{"g": GridSearch(1, 2), "h": Const(3)},
	}
	ps := s.Params()
	var names []string
	for _, p := range ps {
		names = append(names, p.Name())
	}
	if got := strings.Join(names, " "); got != "a b c d e f m.g" {
		t.Fatalf("Params = %s", got)
	}
	check := func(p Param, want Param) {
		t.Helper()
		want.Path, p.Domain = p.Path, Domain{}
		if !reflect.DeepEqual(p, want) {
			t.Errorf("%s = %+v, want %+v", p.Name(), p, want)
		}
	}
	check(ps[0], Param{Kind: KindRandInt, Low: 1, High: 9, Integer: true, Dim: 0})
	check(ps[1], Param{Kind: KindQUniform, Low: 0, High: 0.9, Q: 0.3, Dim: 1})
	check(ps[2], Param{Kind: KindChoice, Categories: []any{"x", "y"}, Dim: 2})
	check(ps[3], Param{Kind: KindFunc, Dim: -1})
	check(ps[4], Param{Kind: KindNormal, Low: math.Inf(-1), High: math.Inf(1), Mean: 1, SD: 2, Dim: 3})
	check(ps[5], Param{Kind: KindLogRandInt, Low: 1, High: 99, Log: true, Integer: true, Dim: 4})
	check(ps[6], Param{Kind: KindGrid, Categories: []any{1, 2}, Dim: 5})
}

func TestUnitRoundTrip(t *testing.T) {
	s := Space{
		"u":  Uniform(-1, 1),
		"qu": QUniform(0, 1, 0.1),
		"lu": LogUniform(1e-4, 1),
		"ql": QLogUniform(0.5, 8, 0.5),
		"ri": RandInt(-5, 5),
		"qi": QRandInt(0, 100, 10),
		"li": LogRandInt(1, 1000),
		"qL": QLogRandInt(4, 256, 4),
		"c":  Choice("a", map[string]any{"x": 1}, 3),
		"n":  Normal(0, 1),
		"qn": QNormal(10, 3, 1),
		"g":  GridSearch(1, 2, 3),
		"k":  "const",
		"f":  Func(func(c hone.Config) any { return c["ri"] }),
	}
	r := newRand(11)
	for range 500 {
		cfg := s.Sample(r)
		u, err := s.ToUnit(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(u) != 12 {
			t.Fatalf("len(u) = %d, want 12", len(u))
		}
		for i, x := range u {
			if x < 0 || x > 1 {
				t.Fatalf("u[%d] = %v outside [0, 1]", i, x)
			}
		}
		back, err := s.FromUnit(u, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"qu", "ql", "ri", "qi", "li", "qL", "c", "g", "k", "f", "qn"} {
			if !equalValues(back[k], cfg[k]) {
				t.Fatalf("%s: %v -> %v", k, cfg[k], back[k])
			}
		}
		for _, k := range []string{"u", "lu", "n"} {
			if a, b := cfg[k].(float64), back[k].(float64); math.Abs(a-b) > 1e-9*math.Max(1, math.Abs(a)) {
				t.Fatalf("%s: %v -> %v", k, a, b)
			}
		}
	}
	// Corners decode inside the space.
	for _, x := range []float64{0, 1, -3, 7} {
		u := make([]float64, 12)
		for i := range u {
			u[i] = x
		}
		cfg, err := s.FromUnit(u, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Check(cfg); err != nil {
			t.Fatalf("FromUnit(%v...): %v", x, err)
		}
	}
	if _, err := s.FromUnit(make([]float64, 3), nil); err == nil || err.Error() != "space: from unit: want 12 coordinates, got 3" {
		t.Fatalf("short vector: %v", err)
	}
	nan := make([]float64, 12)
	nan[0] = math.NaN()
	if _, err := s.FromUnit(nan, nil); err == nil || err.Error() != "space: from unit: c: coordinate 0 is NaN" {
		t.Fatalf("NaN: %v", err)
	}
	cfg := s.Sample(r)
	cfg["c"] = "zzz"
	if _, err := s.ToUnit(cfg); err == nil || err.Error() != `space: to unit: c: "zzz" is not one of ["a", {x: 1}, 3]` {
		t.Fatalf("bad category: %v", err)
	}
	delete(cfg, "n")
	cfg["c"] = "a"
	if _, err := s.ToUnit(cfg); err == nil || err.Error() != "space: to unit: n: missing" {
		t.Fatalf("missing: %v", err)
	}
}

func TestUniformUnitIsSampling(t *testing.T) {
	// FromUnit of a uniform point is a sample: the fraction of randint
	// values equal to each integer is even.
	s := Space{"n": RandInt(0, 4)}
	r := newRand(8)
	counts := map[int]int{}
	for range 8000 {
		cfg, err := s.FromUnit([]float64{r.Float64()}, nil)
		if err != nil {
			t.Fatal(err)
		}
		counts[cfg["n"].(int)]++
	}
	for v := range 4 {
		if c := counts[v]; c < 1800 || c > 2200 {
			t.Fatalf("counts = %v, want about 2000 each", counts)
		}
	}
}

func TestCheck(t *testing.T) {
	s := Space{"a": RandInt(0, 3), "m": Space{"b": Choice("x")}}
	for _, tt := range []struct {
		cfg  map[string]any
		want string
	}{
		{map[string]any{"a": 1, "m": map[string]any{"b": "x"}}, ""},
		{map[string]any{"a": 3, "m": map[string]any{"b": "x"}}, "space: a: 3 is not in {randint: [0, 3]}"},
		{map[string]any{"a": 1}, "space: m.b: missing"},
		{map[string]any{"a": 1, "m": map[string]any{"b": "y"}}, `space: m.b: "y" is not in {choice: ["x"]}`},
	} {
		err := s.Check(tt.cfg)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("Check(%v) = %q, want %q", tt.cfg, got, tt.want)
		}
	}
}

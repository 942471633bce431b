package space

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"pgregory.net/rapid"
)

// TestDomainsInListsAreSampled: a list holding domains — directly, in a
// map element or in a nested list — is sampled element by element; a
// list without domains stays a constant.
func TestDomainsInListsAreSampled(t *testing.T) {
	s, err := ParseYAML([]byte(`
layers: [{choice: [16, 32]}, 3, {units: {randint: [1, 5]}, act: relu}, [{uniform: [0, 1]}, x]]
plain: [1, {a: 2}]
`))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[any]bool{}
	for seed := range uint64(40) {
		cfg := s.Sample(newRand(seed))
		if err := s.Check(cfg); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		layers, ok := cfg["layers"].([]any)
		if !ok || len(layers) != 4 {
			t.Fatalf("layers = %#v", cfg["layers"])
		}
		if v := layers[0]; v != 16 && v != 32 {
			t.Fatalf("layers.0 = %#v, want 16 or 32", v)
		}
		seen[layers[0]] = true
		if layers[1] != 3 {
			t.Fatalf("layers.1 = %#v", layers[1])
		}
		m, ok := layers[2].(map[string]any)
		if u, isInt := m["units"].(int); !ok || !isInt || u < 1 || u > 4 || m["act"] != "relu" {
			t.Fatalf("layers.2 = %#v", layers[2])
		}
		inner, ok := layers[3].([]any)
		if x, isF := inner[0].(float64); !ok || !isF || x < 0 || x > 1 || inner[1] != "x" {
			t.Fatalf("layers.3 = %#v", layers[3])
		}
		if !reflect.DeepEqual(cfg["plain"], []any{1, map[string]any{"a": 2}}) {
			t.Fatalf("plain = %#v", cfg["plain"])
		}
	}
	if len(seen) != 2 {
		t.Fatalf("layers.0 took %v, want both choices", seen)
	}
	// Built in Go, too: the config holds values, never a Domain.
	g := Space{"l": []any{Uniform(2, 3), Space{"w": Choice("a")}}}
	cfg := g.Sample(newRand(1))
	l := cfg["l"].([]any)
	if x, ok := l[0].(float64); !ok || x < 2 || x > 3 || !reflect.DeepEqual(l[1], map[string]any{"w": "a"}) {
		t.Fatalf("Go list: %#v", cfg)
	}
	// Check looks inside lists; errors name the element.
	bad := s.Sample(newRand(1))
	bad["layers"].([]any)[0] = 17
	if err := s.Check(bad); err == nil || !strings.Contains(err.Error(), "space: layers.0: 17 is not in {choice: [16, 32]}") {
		t.Fatalf("Check: %v", err)
	}
	if _, err := ParseYAML([]byte("l: [1, {uniform: [1, 0]}]")); err == nil ||
		!strings.Contains(err.Error(), "space: l.1.uniform: want [low, high] with low < high, got [1, 0]") {
		t.Fatalf("bad domain in a list: %v", err)
	}
	// Model-based searchers get no coordinate for them; FromUnit draws them.
	for _, p := range s.Params() {
		if p.Path[0] == "layers" {
			t.Fatalf("Params lists %s", p.Name())
		}
	}
	if _, err := s.FromUnit(nil, nil); err == nil || !strings.Contains(err.Error(), "layers.0: a domain inside a list needs a random source") {
		t.Fatalf("FromUnit without a source: %v", err)
	}
	cfg, err = s.FromUnit(nil, newRand(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(cfg); err != nil {
		t.Fatalf("FromUnit: %v", err)
	}
}

// TestGridInLists: grid domains inside lists join the grid (in path order,
// the first varying fastest), set by index so the list's other elements
// are still sampled; a point giving the whole list takes it as it is.
func TestGridInLists(t *testing.T) {
	s, err := ParseYAML([]byte("layers: [{grid: [16, 32]}, {uniform: [0, 1]}, {grid: [a, b]}]\nlr: {grid: [1, 2]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	g := s.Grid(nil)
	if g.Len() != 8 {
		t.Fatalf("%d grid points, want 8", g.Len())
	}
	var got []string
	for i := range g.Len() {
		cfg := s.Resolve(g.At(i), newRand(uint64(i)))
		if err := s.Check(cfg); err != nil {
			t.Fatalf("point %d: %v", i, err)
		}
		l := cfg["layers"].([]any)
		if _, ok := l[1].(float64); !ok {
			t.Fatalf("point %d: layers.1 = %#v, want a sample", i, l[1])
		}
		got = append(got, formatValue([]any{l[0], l[2], cfg["lr"]}))
	}
	want := []string{`[16, "a", 1]`, `[32, "a", 1]`, `[16, "b", 1]`, `[32, "b", 1]`, `[16, "a", 2]`, `[32, "a", 2]`, `[16, "b", 2]`, `[32, "b", 2]`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("grid order:\n got %v\nwant %v", got, want)
	}
	if p := g.At(1); !reflect.DeepEqual(p, map[string]any{"layers": map[string]any{"0": 32, "2": "a"}, "lr": 1}) {
		t.Fatalf("point 1 = %#v", p)
	}
	// A list whose every element the grid sets is still a list.
	only := Space{"l": []any{GridSearch(1, 2), Space{"w": GridSearch("x")}}}
	if cfg := only.Resolve(only.Grid(nil).At(1), nil); !reflect.DeepEqual(cfg["l"], []any{2, map[string]any{"w": "x"}}) {
		t.Fatalf("all-grid list: %#v", cfg["l"])
	}
	// A preset point with the whole list: no grid over its elements.
	fixed := map[string]any{"layers": []any{8, 0.5, "c"}}
	if n := s.Grid(fixed).Len(); n != 2 {
		t.Fatalf("grid under a whole-list point: %d points, want 2", n)
	}
	cfg := s.Resolve(s.Grid(fixed).At(0), newRand(1))
	if !reflect.DeepEqual(cfg["layers"], []any{8, 0.5, "c"}) {
		t.Fatalf("whole-list point: %#v", cfg["layers"])
	}
}

// TestFuncNeedsOrder: a Func that declares what it reads runs after the
// Funcs it needs, wherever they sort; Funcs without needs keep path order.
func TestFuncNeedsOrder(t *testing.T) {
	num := func(v any) float64 { f, _ := hone.Number(v); return f }
	s := Space{
		"x": Uniform(1, 2),
		// "a" sorts first but needs "b", which needs "m.c", which needs "x".
		"a": Func(func(c hone.Config) any { return num(c["b"]) + 1 }).Needs("b"),
		"b": Func(func(c hone.Config) any { return 2 * num(c["m"].(map[string]any)["c"]) }).Needs("m.c"),
		"m": Space{"c": Func(func(c hone.Config) any { return 10 * num(c["x"]) }).Needs("x")},
		// "d" needs a value inside the map a Func produces, and an element of a list.
		"d": Func(func(c hone.Config) any {
			return num(c["p"].(map[string]any)["q"]) + num(c["l"].([]any)[1])
		}).Needs("p.q", "l.1"),
		"p": Func(func(hone.Config) any { return map[string]any{"q": 5} }),
		"l": []any{0, Func(func(c hone.Config) any { return num(c["x"]) })},
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg := s.Sample(newRand(3))
	x := cfg["x"].(float64)
	if c := cfg["m"].(map[string]any)["c"]; c != 10*x || cfg["b"] != 20*x || cfg["a"] != 20*x+1 {
		t.Fatalf("x %v: m.c %v, b %v, a %v", x, c, cfg["b"], cfg["a"])
	}
	if cfg["d"] != 5+x {
		t.Fatalf("d = %v, want %v", cfg["d"], 5+x)
	}
	// FromUnit evaluates them in the same order.
	u, err := s.ToUnit(cfg)
	if err != nil {
		t.Fatal(err)
	}
	back, err := s.FromUnit(u, newRand(4))
	if err != nil {
		t.Fatal(err)
	}
	if back["a"] != 20*back["x"].(float64)+1 {
		t.Fatalf("FromUnit: %v", back)
	}
	// Resolve with a point: a point's value for a needed Func is what the
	// needing one sees.
	if cfg := s.Resolve(map[string]any{"b": 7.0}, newRand(5)); cfg["a"] != 8.0 {
		t.Fatalf("a = %v with b set by the point", cfg["a"])
	}
}

// TestFuncNeedsErrors: cycles, needs that name nothing, and needs on a
// domain that is not a Func are errors naming the keys.
func TestFuncNeedsErrors(t *testing.T) {
	f := func(hone.Config) any { return 1 }
	for _, c := range []struct {
		s    Space
		want string
	}{
		{Space{"a": Func(f).Needs("b"), "b": Func(f).Needs("a")},
			"space: func domains need each other in a cycle: a needs b, b needs a"},
		{Space{"a": Func(f).Needs("b"), "b": Func(f).Needs("c"), "c": Func(f).Needs("a"), "z": Func(f)},
			"space: func domains need each other in a cycle: a needs b, b needs c, c needs a"},
		{Space{"a": Func(f).Needs("a")}, "space: func domains need each other in a cycle: a needs a"},
		{Space{"m": Space{"a": Func(f).Needs("m")}}, "cycle: m.a needs m.a"},
		{Space{"a": Func(f).Needs("nope")}, `space: a: needs "nope", which is not a parameter of the space`},
		{Space{"a": Uniform(0, 1).Needs("b"), "b": 1}, "space: a.uniform: needs: only func domains read other parameters"},
		{Space{"a": Func(f).Needs("b..c"), "b": 1}, `space: a.func: needs "b..c": want a dotted key path`},
	} {
		if err := c.s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	// Sampling an invalid space does not hang or panic: the cycle runs in
	// path order.
	s := Space{"a": Func(f).Needs("b"), "b": Func(f).Needs("a")}
	if cfg := s.Sample(newRand(1)); cfg["a"] != 1 || cfg["b"] != 1 {
		t.Fatalf("cyclic space sampled to %v", cfg)
	}
}

// genValue draws a space value: a constant, a domain, or (depth allowing)
// a list or sub-space of such values. grids counts the grid points.
func genValue(t *rapid.T, depth int, label string, grids *int) any {
	kinds := 5
	if depth >= 3 {
		kinds = 3
	}
	switch rapid.IntRange(0, kinds-1).Draw(t, label) {
	case 0:
		return rapid.IntRange(-5, 5).Draw(t, label+"c")
	case 1:
		return Uniform(0, 1)
	case 2:
		if rapid.Bool().Draw(t, label+"g") {
			*grids *= 2
			return GridSearch("p", "q")
		}
		return Choice(1, 2, 3)
	case 3:
		n := rapid.IntRange(0, 3).Draw(t, label+"n")
		out := make([]any, n)
		for i := range out {
			out[i] = genValue(t, depth+1, label+"l", grids)
		}
		return out
	}
	n := rapid.IntRange(1, 3).Draw(t, label+"m")
	out := Space{}
	for i := range n {
		out[string(rune('a'+i))] = genValue(t, depth+1, label+"s", grids)
	}
	return out
}

// sameShape reports whether cfg has the space's shape with every domain
// replaced by a value: no Domain left, lists of the same lengths.
func sameShape(sv, cv any) bool {
	switch x := sv.(type) {
	case Domain:
		_, isD := cv.(Domain)
		return !isD && cv != nil
	case []any:
		y, ok := cv.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameShape(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if sub, ok := subspace(sv); ok && len(sub) > 0 {
		m, ok := cv.(map[string]any)
		if !ok || len(m) != len(sub) {
			return false
		}
		for k, e := range sub {
			if !sameShape(e, m[k]) {
				return false
			}
		}
		return true
	}
	return equalValues(sv, cv)
}

// TestListsProperty: for random nestings of lists and sub-spaces, every
// sample has the space's shape with each domain sampled and passes Check,
// sampling is deterministic, and the grid has one point per combination of
// its grid domains' values, each resolving to a configuration that holds
// the point's values.
func TestListsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		grids := 1
		s := Space{"root": genValue(t, 0, "v", &grids), "k": Uniform(0, 1)}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		seed := rapid.Uint64().Draw(t, "seed")
		cfg := s.Sample(newRand(seed))
		if !sameShape(map[string]any(s), cfg) {
			t.Fatalf("shape: space %v, config %#v", formatValue(map[string]any(s)), cfg)
		}
		if err := s.Check(cfg); err != nil {
			t.Fatal(err)
		}
		if again := s.Sample(newRand(seed)); !reflect.DeepEqual(cfg, again) {
			t.Fatalf("not deterministic: %v vs %v", cfg, again)
		}
		g := s.Grid(nil)
		if g.Len() != grids {
			t.Fatalf("%d grid points, want %d", g.Len(), grids)
		}
		var gridLeaves []leaf
		for _, l := range s.leaves() {
			if l.isD && l.dom.kind == KindGrid {
				gridLeaves = append(gridLeaves, l)
			}
		}
		seen := map[string]bool{}
		for i := range g.Len() {
			c := s.Resolve(g.At(i), newRand(seed))
			if err := s.Check(c); err != nil || !sameShape(map[string]any(s), c) {
				t.Fatalf("grid point %d: %v, %#v", i, err, c)
			}
			var key []any
			for _, l := range gridLeaves {
				v, _ := l.lookup(c)
				key = append(key, v)
			}
			seen[formatValue(key)] = true
		}
		if len(seen) != grids {
			t.Fatalf("%d distinct grid combinations, want %d", len(seen), grids)
		}
	})
}

// TestFuncNeedsProperty: for random acyclic needs among Funcs whose key
// order differs from their dependency order, every Func sees the values
// of the Funcs it needs; adding a need that closes a loop is a Validate
// error that names a cycle.
func TestFuncNeedsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 8).Draw(t, "funcs")
		names := rapid.Permutation([]string{"a", "b", "c", "d", "e", "f", "g", "h"}).Draw(t, "names")[:n]
		// Func i may need Funcs j < i: acyclic by construction.
		needs := make([][]int, n)
		for i := range n {
			for j := range i {
				if rapid.Bool().Draw(t, "need") {
					needs[i] = append(needs[i], j)
				}
			}
		}
		build := func(extra map[int]int) Space {
			s := Space{}
			for i := range n {
				deps := needs[i]
				var paths []string
				for _, j := range deps {
					paths = append(paths, names[j])
				}
				if j, ok := extra[i]; ok {
					paths = append(paths, names[j])
				}
				s[names[i]] = Func(func(c hone.Config) any {
					depth := 0
					for _, p := range paths {
						v, ok := c[p].(int)
						if !ok {
							return -1 // a needed Func has not run
						}
						depth = max(depth, v+1)
					}
					return depth
				}).Needs(paths...)
			}
			return s
		}
		s := build(nil)
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		cfg := s.Sample(newRand(1))
		for i := range n {
			if v := cfg[names[i]]; v == -1 {
				t.Fatalf("%s ran before a Func it needs: %v (needs %v)", names[i], cfg, needs)
			}
		}
		if n < 2 {
			return
		}
		// Close a loop: the first Func needs the last, which reaches it only
		// if the last needs it through a chain; make sure it does.
		needs[n-1] = append(needs[n-1], 0)
		bad := build(map[int]int{0: n - 1})
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "in a cycle: ") {
			t.Fatalf("cycle not reported: %v", err)
		}
	})
}

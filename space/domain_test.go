package space

import (
	"fmt"
	"github.com/hone-tune/hone/internal/textdist"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }

func TestDomainSamples(t *testing.T) {
	type check func(v any) error
	floatIn := func(lo, hi float64) check {
		return func(v any) error {
			x, ok := v.(float64)
			if !ok {
				return fmt.Errorf("got %T, want float64", v)
			}
			if x < lo || x > hi {
				return fmt.Errorf("%v outside [%v, %v]", x, lo, hi)
			}
			return nil
		}
	}
	intIn := func(lo, hi int) check { // inclusive
		return func(v any) error {
			x, ok := v.(int)
			if !ok {
				return fmt.Errorf("got %T, want int", v)
			}
			if x < lo || x > hi {
				return fmt.Errorf("%v outside [%v, %v]", x, lo, hi)
			}
			return nil
		}
	}
	multipleOf := func(q float64, c check) check {
		return func(v any) error {
			if err := c(v); err != nil {
				return err
			}
			x, _ := number(v)
			if k := x / q; math.Abs(k-math.Round(k)) > 1e-9 {
				return fmt.Errorf("%v is not a multiple of %v", x, q)
			}
			return nil
		}
	}
	tests := []struct {
		name string
		d    Domain
		ok   check
		// every, when set, lists values that must all appear in 5000
		// samples (and, with exhaustive, nothing else may).
		every      []any
		exhaustive bool
	}{
		{name: "uniform", d: Uniform(-2, 3), ok: floatIn(-2, 3)},
		{name: "uniform wide", d: Uniform(-math.MaxFloat64, math.MaxFloat64), ok: floatIn(-math.MaxFloat64, math.MaxFloat64)},
		{name: "quniform", d: QUniform(0, 1, 0.1), ok: multipleOf(0.1, floatIn(0, 1)),
			every: []any{0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0}, exhaustive: true},
		{name: "quniform unaligned bounds", d: QUniform(0.05, 0.95, 0.25), ok: multipleOf(0.25, floatIn(0.25, 0.75)),
			every: []any{0.25, 0.5, 0.75}, exhaustive: true},
		{name: "loguniform", d: LogUniform(1e-4, 1e-1), ok: floatIn(1e-4, 1e-1)},
		{name: "loguniform base", d: LogUniformBase(1, 1000, 10), ok: floatIn(1, 1000)},
		{name: "qloguniform", d: QLogUniform(0.1, 10, 0.1), ok: multipleOf(0.1, floatIn(0.1, 10))},
		{name: "randint", d: RandInt(1, 4), ok: intIn(1, 3), every: []any{1, 2, 3}, exhaustive: true},
		{name: "randint negative", d: RandInt(-3, -1), ok: intIn(-3, -2), every: []any{-3, -2}, exhaustive: true},
		{name: "qrandint", d: QRandInt(0, 10, 5), ok: intIn(0, 10), every: []any{0, 5, 10}, exhaustive: true},
		{name: "qrandint q=1 upper inclusive", d: QRandInt(1, 3, 1), ok: intIn(1, 3), every: []any{1, 2, 3}, exhaustive: true},
		{name: "qrandint unaligned", d: QRandInt(1, 11, 5), ok: intIn(5, 10), every: []any{5, 10}, exhaustive: true},
		{name: "lograndint", d: LogRandInt(1, 5), ok: intIn(1, 4), every: []any{1, 2, 3, 4}, exhaustive: true},
		{name: "qlograndint", d: QLogRandInt(8, 64, 8), ok: multipleOf(8, intIn(8, 64))},
		{name: "choice", d: Choice(1, "a", map[string]any{"k": []any{1.5}}), ok: func(v any) error { return nil },
			every: []any{1, "a", map[string]any{"k": []any{1.5}}}, exhaustive: true},
		{name: "grid sampled like a choice", d: GridSearch(true, false), ok: func(v any) error { return nil },
			every: []any{true, false}, exhaustive: true},
		{name: "normal", d: Normal(10, 2), ok: floatIn(-math.MaxFloat64, math.MaxFloat64)},
		{name: "qnormal", d: QNormal(0, 3, 0.5), ok: multipleOf(0.5, floatIn(-math.MaxFloat64, math.MaxFloat64))},
		{name: "const", d: Const(map[string]any{"uniform": []any{0, 1}}), ok: func(v any) error { return nil },
			every: []any{map[string]any{"uniform": []any{0, 1}}}, exhaustive: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.d.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			r := newRand(7)
			seen := map[string]bool{}
			for range 5000 {
				v := tt.d.Sample(r)
				if err := tt.ok(v); err != nil {
					t.Fatalf("sample %v: %v", v, err)
				}
				if !tt.d.Contains(v) {
					t.Fatalf("sample %#v: Contains = false", v)
				}
				seen[fmt.Sprintf("%T %v", v, v)] = true
			}
			for _, want := range tt.every {
				if !seen[fmt.Sprintf("%T %v", want, want)] {
					t.Errorf("never sampled %v; saw %v", want, seen)
				}
			}
			if tt.exhaustive && len(seen) != len(tt.every) {
				t.Errorf("sampled %d distinct values, want %d: %v", len(seen), len(tt.every), seen)
			}
		})
	}
}

func TestSampleCopiesLiterals(t *testing.T) {
	inner := map[string]any{"k": []any{1}}
	d := Choice(inner)
	v := d.Sample(newRand(1)).(map[string]any)
	v["k"].([]any)[0] = 99
	if inner["k"].([]any)[0] != 1 {
		t.Fatal("sampling a choice returned the domain's own map")
	}
}

func TestNormalMoments(t *testing.T) {
	d := Normal(5, 2)
	r := newRand(3)
	const n = 20000
	var sum, sq float64
	for range n {
		x := d.Sample(r).(float64)
		sum += x
		sq += x * x
	}
	mean := sum / n
	sd := math.Sqrt(sq/n - mean*mean)
	if math.Abs(mean-5) > 0.1 || math.Abs(sd-2) > 0.1 {
		t.Fatalf("mean %v sd %v, want about 5 and 2", mean, sd)
	}
}

func TestLogUniformIsLogScale(t *testing.T) {
	// Half the mass of loguniform(1e-4, 1) lies below 1e-2.
	d := LogUniform(1e-4, 1)
	r := newRand(5)
	below := 0
	const n = 20000
	for range n {
		if d.Sample(r).(float64) < 1e-2 {
			below++
		}
	}
	if f := float64(below) / n; math.Abs(f-0.5) > 0.02 {
		t.Fatalf("fraction below 1e-2 = %v, want about 0.5", f)
	}
}

func TestQuantizedFloatsAreClean(t *testing.T) {
	d := QUniform(0, 1, 0.1)
	r := newRand(2)
	for range 1000 {
		x := d.Sample(r).(float64)
		if x != math.Round(x*10)/10 {
			t.Fatalf("%v is not the float nearest to a tenth", x)
		}
	}
}

func TestDomainValidate(t *testing.T) {
	tests := []struct {
		d    Domain
		want string
	}{
		{Uniform(1, 1), "want [low, high] with low < high, got [1, 1]"},
		{Uniform(0, math.Inf(1)), "want [low, high] with low < high, got [0, +Inf]"},
		{Uniform(math.NaN(), 1), "want [low, high] with low < high, got [NaN, 1]"},
		{QUniform(0, 1, 0), "want [low, high, q] with low < high, q > 0 and a multiple of q in [low, high], got [0, 1, 0]"},
		{QUniform(0.1, 0.2, 0.3), "want [low, high, q] with low < high, q > 0 and a multiple of q in [low, high], got [0.1, 0.2, 0.3]"},
		{LogUniform(0, 1), "want [low, high] with 0 < low < high, got [0, 1]"},
		{LogUniformBase(1, 2, 1), "want [low, high, base] with 0 < low < high and base > 1, got [1, 2, 1]"},
		{QLogUniform(1, 2, -1), "want [low, high, q] with 0 < low < high, q > 0 and a multiple of q in [low, high], got [1, 2, -1]"},
		{RandInt(3, 3), "want integers [low, high] with low < high (high exclusive), got [3, 3]"},
		{QRandInt(1, 4, 0), "want integers [low, high, q] with low < high, q >= 1 and a multiple of q in [low, high] (high inclusive), got [1, 4, 0]"},
		{QRandInt(1, 4, 5), "want integers [low, high, q] with low < high, q >= 1 and a multiple of q in [low, high] (high inclusive), got [1, 4, 5]"},
		{LogRandInt(0, 4), "want integers [low, high] with 0 < low < high (high exclusive), got [0, 4]"},
		{QLogRandInt(1, 4, 8), "want integers [low, high, q] with 0 < low < high, q >= 1 and a multiple of q in [low, high] (high inclusive), got [1, 4, 8]"},
		{Choice(), "want a non-empty list of values, got []"},
		{GridSearch(), "want a non-empty list of values, got []"},
		{Normal(0, 0), "want [mean, sd] with sd > 0, got [0, 0]"},
		{QNormal(0, 1, 0), "want [mean, sd, q] with sd > 0 and q > 0, got [0, 1, 0]"},
		{Func(nil), "want a non-nil function"},
		{Domain{}, `unknown domain kind ""`},
	}
	for _, tt := range tests {
		err := tt.d.Validate()
		if err == nil || err.Error() != tt.want {
			t.Errorf("%v.Validate() = %v, want %q", tt.d, err, tt.want)
		}
	}
}

func TestDomainString(t *testing.T) {
	for d, want := range map[*Domain]string{
		ptr(LogUniform(1e-4, 0.1)):      "{loguniform: [0.0001, 0.1]}",
		ptr(RandInt(1, 10)):             "{randint: [1, 10]}",
		ptr(Choice("a", 1, nil, false)): `{choice: ["a", 1, null, false]}`,
		ptr(Func(nil)):                  "{func}",
	} {
		if got := d.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestContains(t *testing.T) {
	tests := []struct {
		d      Domain
		in     []any
		notIn  []any
		domain string
	}{
		{d: Uniform(0, 1), in: []any{0, 0.5, 1.0, 1}, notIn: []any{-0.1, 1.5, "x", true, math.NaN()}},
		{d: RandInt(0, 3), in: []any{0, 2, 2.0, int64(1)}, notIn: []any{3, 1.5, -1}},
		{d: QRandInt(0, 10, 5), in: []any{0, 5, 10}, notIn: []any{3, 15}},
		{d: QUniform(0, 1, 0.1), in: []any{0.3, 0.30000000000000004, 1}, notIn: []any{0.35}},
		{d: Choice(1, "a", []any{1, 2}), in: []any{1.0, "a", []any{1.0, 2}}, notIn: []any{"b", []any{1}, true}},
		{d: Const(map[string]any{"a": 1}), in: []any{map[string]any{"a": 1.0}}, notIn: []any{map[string]any{}}},
	}
	for _, tt := range tests {
		for _, v := range tt.in {
			if !tt.d.Contains(v) {
				t.Errorf("%v.Contains(%#v) = false", tt.d, v)
			}
		}
		for _, v := range tt.notIn {
			if tt.d.Contains(v) {
				t.Errorf("%v.Contains(%#v) = true", tt.d, v)
			}
		}
	}
}

func TestDeterminism(t *testing.T) {
	s := Space{
		"a": Uniform(0, 1), "b": RandInt(0, 1000), "c": Normal(0, 1),
		"d": Space{"e": Choice(1, 2, 3), "f": LogUniform(1, 100)},
	}
	draw := func(seed uint64) []map[string]any {
		r := newRand(seed)
		var out []map[string]any
		for range 20 {
			out = append(out, s.Sample(r))
		}
		return out
	}
	if a, b := draw(42), draw(42); !reflect.DeepEqual(a, b) {
		t.Fatal("same seed gave different samples")
	}
	if a, b := draw(42), draw(43); reflect.DeepEqual(a, b) {
		t.Fatal("different seeds gave the same samples")
	}
}

// TestSampleProperty checks, for random valid bounds, that every sample lies
// in its domain and survives the unit-cube round trip.
func TestSampleProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		kind := rapid.SampledFrom([]Kind{
			KindUniform, KindQUniform, KindLogUniform, KindQLogUniform,
			KindRandInt, KindQRandInt, KindLogRandInt, KindQLogRandInt,
			KindNormal, KindQNormal,
		}).Draw(t, "kind")
		var d Domain
		switch kind {
		case KindUniform, KindQUniform, KindLogUniform, KindQLogUniform:
			lo := rapid.Float64Range(-1e6, 1e6).Draw(t, "lo")
			hi := lo + rapid.Float64Range(1e-6, 1e6).Draw(t, "width")
			if kind == KindLogUniform || kind == KindQLogUniform {
				lo = rapid.Float64Range(1e-9, 1e3).Draw(t, "loglo")
				hi = lo * rapid.Float64Range(1.001, 1e6).Draw(t, "ratio")
			}
			d = Domain{kind: kind, lo: lo, hi: hi}
			if kind == KindQUniform || kind == KindQLogUniform {
				d.q = (hi - lo) / float64(rapid.IntRange(1, 1000).Draw(t, "steps"))
			}
		case KindRandInt, KindQRandInt, KindLogRandInt, KindQLogRandInt:
			lo := rapid.IntRange(-1000, 1000).Draw(t, "lo")
			if kind == KindLogRandInt || kind == KindQLogRandInt {
				lo = rapid.IntRange(1, 1000).Draw(t, "loglo")
			}
			hi := lo + rapid.IntRange(1, 100000).Draw(t, "width")
			d = Domain{kind: kind, lo: float64(lo), hi: float64(hi)}
			if kind == KindQRandInt || kind == KindQLogRandInt {
				d.q = float64(rapid.IntRange(1, hi-lo).Draw(t, "q"))
			}
		case KindNormal, KindQNormal:
			d = Domain{kind: kind, mean: rapid.Float64Range(-1e6, 1e6).Draw(t, "mean"),
				sd: rapid.Float64Range(1e-3, 1e6).Draw(t, "sd")}
			if kind == KindQNormal {
				d.q = rapid.Float64Range(1e-3, 1e3).Draw(t, "q")
			}
		}
		if !d.valid() {
			t.Skip("bounds without a multiple of q")
		}
		r := newRand(rapid.Uint64().Draw(t, "seed"))
		for range 50 {
			v := d.Sample(r)
			if !d.Contains(v) {
				t.Fatalf("%v: sample %v not contained", d, v)
			}
			if d.isInt() {
				if _, ok := v.(int); !ok {
					t.Fatalf("%v: sample %T, want int", d, v)
				}
			}
			u, err := d.toUnit(v)
			if err != nil || u < 0 || u > 1 {
				t.Fatalf("%v: toUnit(%v) = %v, %v", d, v, u, err)
			}
			back := d.fromUnit(u)
			if d.kind == KindNormal || d.kind == KindLogUniform || d.kind == KindUniform {
				x, y := v.(float64), back.(float64)
				if math.Abs(x-y) > 1e-6*math.Max(1, math.Abs(x)) {
					t.Fatalf("%v: round trip %v -> %v -> %v", d, v, u, back)
				}
			} else if !equalValues(back, v) && !(d.kind == KindQNormal || d.kind == KindQLogUniform || d.kind == KindQUniform) {
				t.Fatalf("%v: round trip %v -> %v -> %v", d, v, u, back)
			}
			if !d.Contains(back) {
				t.Fatalf("%v: fromUnit(%v) = %v not contained", d, u, back)
			}
		}
	})
}

func TestEditDistanceAndSuggest(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"logunifrom", "loguniform", 1},
		{"", "abc", 3},
		{"abc", "abc", 0},
		{"kitten", "sitting", 3},
	} {
		if got := textdist.Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("textdist.Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
	for k, want := range map[string]string{
		"logunifrom": "loguniform", "Uniform": "uniform", "choise": "choice",
		"GRID": "grid", "grad": "", "cost": "", "width": "", "qrandnt": "qrandint",
		"randnit": "randint", "randomint": "", "x": "",
	} {
		if got := suggest(k); got != want {
			t.Errorf("suggest(%q) = %q, want %q", k, got, want)
		}
	}
}

// TestCheckPoint: a point's keys must exist in the space, with nested paths
// named; below a domain or constant the point's value is taken whole.
func TestCheckPoint(t *testing.T) {
	sp := Space{"lr": Uniform(0, 1), "model": map[string]any{"width": Choice(8, 16)}, "opt": Const(map[string]any{"a": 1})}
	if err := sp.CheckPoint(map[string]any{"lr": 0.5, "model": map[string]any{"width": 8}, "opt": map[string]any{"b": 2}}); err != nil {
		t.Fatalf("valid point: %v", err)
	}
	for point, want := range map[string]map[string]any{
		`key "lrr" is not in the search space`:         {"lrr": 0.1},
		`key "model.depth" is not in the search space`: {"model": map[string]any{"depth": 3}},
	} {
		if err := sp.CheckPoint(want); err == nil || err.Error() != point {
			t.Errorf("got %v, want %q", err, point)
		}
	}
}

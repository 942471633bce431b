package space

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"gopkg.in/yaml.v3"
)

const docYAML = `
lr:     {loguniform: [1e-4, 1e-1]}
lr10:   {loguniform: [1, 1000, 10]}
x:      {uniform: [0, 1]}
q:      {quniform: [0, 1, 0.1]}
ql:     {qloguniform: [0.1, 10, 0.1]}
n:      {randint: [1, 10]}
qn:     {qrandint: [0, 100, 10]}
ln:     {lograndint: [1, 1000]}
qln:    {qlograndint: [8, 512, 8]}
m:      {normal: [0, 1]}
qm:     {qnormal: [0, 1, 0.5]}
layers: {choice: [1, 2, 3]}
nets:   {choice: [{depth: 1, act: relu}, [1, 2], null]}
bs:     {grid: [16, 32]}
seeds:  {grid_search: [1, 2]}
model:
  width: {choice: [64, 128]}
  act: relu
  deep:
    drop: {uniform: [0, 0.5]}
opts:   {const: {uniform: [0, 1]}}
one:    {width: 3}
empty:  {}
list:   [1, 2.5, "s", true]
date:   2024-01-02
`

func wantDoc() Space {
	return Space{
		"lr":     LogUniform(1e-4, 1e-1),
		"lr10":   LogUniformBase(1, 1000, 10),
		"x":      Uniform(0, 1),
		"q":      QUniform(0, 1, 0.1),
		"ql":     QLogUniform(0.1, 10, 0.1),
		"n":      RandInt(1, 10),
		"qn":     QRandInt(0, 100, 10),
		"ln":     LogRandInt(1, 1000),
		"qln":    QLogRandInt(8, 512, 8),
		"m":      Normal(0, 1),
		"qm":     QNormal(0, 1, 0.5),
		"layers": Choice(1, 2, 3),
		"nets":   Choice(map[string]any{"depth": 1, "act": "relu"}, []any{1, 2}, nil),
		"bs":     GridSearch(16, 32),
		"seeds":  GridSearch(1, 2),
		"model": Space{
			"width": Choice(64, 128),
			"act":   "relu",
			"deep":  Space{"drop": Uniform(0, 0.5)},
		},
		"opts":  Const(map[string]any{"uniform": []any{0, 1}}),
		"one":   Space{"width": 3},
		"empty": Space{},
		"list":  []any{1, 2.5, "s", true},
		"date":  "2024-01-02",
	}
}

func TestParseYAML(t *testing.T) {
	s, err := ParseYAML([]byte(docYAML))
	if err != nil {
		t.Fatal(err)
	}
	if want := wantDoc(); !reflect.DeepEqual(s, want) {
		t.Fatalf("ParseYAML =\n%#v\nwant\n%#v", s, want)
	}
	cfg := s.Sample(newRand(1))
	if err := s.Check(cfg); err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg["n"].(int); !ok {
		t.Errorf("n = %T, want int", cfg["n"])
	}
	if !reflect.DeepEqual(cfg["opts"], map[string]any{"uniform": []any{0, 1}}) {
		t.Errorf("opts = %v", cfg["opts"])
	}
	if got := len(s.GridPoints()); got != 4 {
		t.Errorf("%d grid points, want 4", got)
	}
}

func TestParseJSON(t *testing.T) {
	// The same document as JSON decodes to the same space.
	var tree any
	if err := yaml.Unmarshal([]byte(docYAML), &tree); err != nil {
		t.Fatal(err)
	}
	tree.(map[string]any)["date"] = "2024-01-02"
	data, err := json.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	if want := wantDoc(); !reflect.DeepEqual(s, want) {
		t.Fatalf("ParseJSON =\n%#v\nwant\n%#v", s, want)
	}
	for _, in := range []string{"null", "{}", "  {}  "} {
		s, err := ParseJSON([]byte(in))
		if err != nil || len(s) != 0 {
			t.Errorf("ParseJSON(%q) = %v, %v; want an empty space", in, s, err)
		}
	}
	for _, in := range []string{"", "\n", "# comment\n"} {
		s, err := ParseYAML([]byte(in))
		if err != nil || len(s) != 0 {
			t.Errorf("ParseYAML(%q) = %v, %v; want an empty space", in, s, err)
		}
	}
}

func TestDecodeGoValues(t *testing.T) {
	s, err := Decode(map[string]any{
		"a": map[string]any{"randint": []int{1, 5}},
		"b": map[string][]float64{"uniform": {0, 2}},
		"c": Uniform(0, 1),
		"d": int64(3),
		"e": json.Number("12"),
		"f": []string{"x"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Space{"a": RandInt(1, 5), "b": Uniform(0, 2), "c": Uniform(0, 1), "d": 3, "e": 12, "f": []any{"x"}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("Decode = %#v, want %#v", s, want)
	}
	if _, err := Decode(map[string]any{"c": Uniform(1, 0)}); err == nil ||
		err.Error() != "space: c.uniform: want [low, high] with low < high, got [1, 0]" {
		t.Fatalf("Decode kept an invalid Domain: %v", err)
	}
}

type spec struct {
	Name  string `yaml:"name" json:"name"`
	Space Space  `yaml:"space" json:"space"`
}

func TestUnmarshalEmbedded(t *testing.T) {
	var y spec
	err := yaml.Unmarshal([]byte("name: exp\nspace:\n  lr: {loguniform: [1e-4, 1e-1]}\n  m: {w: {choice: [1, 2]}}\n"), &y)
	if err != nil {
		t.Fatal(err)
	}
	want := Space{"lr": LogUniform(1e-4, 1e-1), "m": Space{"w": Choice(1, 2)}}
	if y.Name != "exp" || !reflect.DeepEqual(y.Space, want) {
		t.Fatalf("yaml: %#v", y)
	}
	var j spec
	if err := json.Unmarshal([]byte(`{"name": "exp", "space": {"lr": {"loguniform": [1e-4, 1e-1]}, "m": {"w": {"choice": [1, 2]}}}}`), &j); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(j, y) {
		t.Fatalf("json: %#v", j)
	}
	err = yaml.Unmarshal([]byte("space:\n  lr: {loguniform: [0, 1]}\n"), &y)
	if err == nil || err.Error() != "space: lr.loguniform: want [low, high] with 0 < low < high, got [0, 1]" {
		t.Fatalf("yaml error = %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	allowed := "allowed: uniform, quniform, loguniform, qloguniform, randint, qrandint, lograndint, qlograndint, choice, normal, qnormal, grid, const"
	tests := []struct {
		yaml string
		want string
	}{
		// The examples of the spec.
		{`lr: {logunifrom: [1e-4, 1e-1]}`, `space: lr: unknown domain "logunifrom" (did you mean "loguniform"?); ` + allowed},
		{`lr: {loguniform: [0, 1]}`, `space: lr.loguniform: want [low, high] with 0 < low < high, got [0, 1]`},
		// Misspellings, by key path.
		{`m: {deep: {x: {Uniform: [0, 1]}}}`, `space: m.deep.x: unknown domain "Uniform" (did you mean "uniform"?); ` + allowed},
		{`x: {choise: [1, 2]}`, `space: x: unknown domain "choise" (did you mean "choice"?); ` + allowed},
		// Every kind's bounds.
		{`x: {uniform: [1, 0]}`, `space: x.uniform: want [low, high] with low < high, got [1, 0]`},
		{`x: {uniform: [0, .inf]}`, `space: x.uniform: want [low, high] with low < high, got [0, +Inf]`},
		{`x: {uniform: [0, 1, 2]}`, `space: x.uniform: want [low, high] with low < high, got [0, 1, 2]`},
		{`x: {uniform: [0, "1"]}`, `space: x.uniform: want [low, high] with low < high, got [0, "1"]`},
		{`x: {uniform: [0, true]}`, `space: x.uniform: want [low, high] with low < high, got [0, true]`},
		{`x: {uniform: 3}`, `space: x.uniform: want [low, high] with low < high, got 3`},
		{`x: {quniform: [0, 1]}`, `space: x.quniform: want [low, high, q] with low < high, q > 0 and a multiple of q in [low, high], got [0, 1]`},
		{`x: {quniform: [0, 1, 0]}`, `space: x.quniform: want [low, high, q] with low < high, q > 0 and a multiple of q in [low, high], got [0, 1, 0]`},
		{`x: {quniform: [0.1, 0.2, 0.3]}`, `space: x.quniform: want [low, high, q] with low < high, q > 0 and a multiple of q in [low, high], got [0.1, 0.2, 0.3]`},
		{`x: {loguniform: [-1, 1]}`, `space: x.loguniform: want [low, high] with 0 < low < high, got [-1, 1]`},
		{`x: {loguniform: [1, 10, 1]}`, `space: x.loguniform: want [low, high, base] with 0 < low < high and base > 1, got [1, 10, 1]`},
		{`x: {loguniform: [1, 10, 0]}`, `space: x.loguniform: want [low, high, base] with 0 < low < high and base > 1, got [1, 10, 0]`},
		{`x: {loguniform: [1]}`, `space: x.loguniform: want [low, high] or [low, high, base] with 0 < low < high and base > 1, got [1]`},
		{`x: {qloguniform: [0, 1, 0.1]}`, `space: x.qloguniform: want [low, high, q] with 0 < low < high, q > 0 and a multiple of q in [low, high], got [0, 1, 0.1]`},
		{`x: {randint: [1, 1]}`, `space: x.randint: want integers [low, high] with low < high (high exclusive), got [1, 1]`},
		{`x: {randint: [1.5, 3]}`, `space: x.randint: want integers [low, high] with low < high (high exclusive), got [1.5, 3]`},
		{`x: {randint: [0, 1e300]}`, `space: x.randint: want integers [low, high] with low < high (high exclusive), got [0, 1e+300]`},
		{`x: {qrandint: [0, 10, 0]}`, `space: x.qrandint: want integers [low, high, q] with low < high, q >= 1 and a multiple of q in [low, high] (high inclusive), got [0, 10, 0]`},
		{`x: {qrandint: [1, 3, 5]}`, `space: x.qrandint: want integers [low, high, q] with low < high, q >= 1 and a multiple of q in [low, high] (high inclusive), got [1, 3, 5]`},
		{`x: {lograndint: [0, 10]}`, `space: x.lograndint: want integers [low, high] with 0 < low < high (high exclusive), got [0, 10]`},
		{`x: {qlograndint: [1, 10, 0.5]}`, `space: x.qlograndint: want integers [low, high, q] with 0 < low < high, q >= 1 and a multiple of q in [low, high] (high inclusive), got [1, 10, 0.5]`},
		{`x: {choice: []}`, `space: x.choice: want a non-empty list of values, got []`},
		{`x: {choice: a}`, `space: x.choice: want a non-empty list of values, got "a"`},
		{`x: {grid: []}`, `space: x.grid: want a non-empty list of values, got []`},
		{`x: {grid_search: {a: 1}}`, `space: x.grid_search: want a non-empty list of values, got {a: 1}`},
		{`x: {normal: [0, 0]}`, `space: x.normal: want [mean, sd] with sd > 0, got [0, 0]`},
		{`x: {normal: [0, -1]}`, `space: x.normal: want [mean, sd] with sd > 0, got [0, -1]`},
		{`x: {qnormal: [0, 1, -0.5]}`, `space: x.qnormal: want [mean, sd, q] with sd > 0 and q > 0, got [0, 1, -0.5]`},
		// Document shape.
		{`[1, 2]`, `space: want a mapping of parameter names to domains, got [1, 2]`},
		{`hello`, `space: want a mapping of parameter names to domains, got "hello"`},
		{"a: 1\na: 2", `space: top level: duplicate key "a"`},
		{"m:\n  a: 1\n  a: 2", `space: m: duplicate key "a"`},
		{"base: &b {x: 1}\nm:\n  <<: *b", `space: m: merge keys (<<) are not supported`},
		{"? [a]\n: 1", `space: top level: mapping keys must be scalars`},
	}
	for _, tt := range tests {
		_, err := ParseYAML([]byte(tt.yaml))
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseYAML(%q)\n got: %v\nwant: %s", tt.yaml, err, tt.want)
		}
	}
}

func TestDecodeErrorsJSON(t *testing.T) {
	tests := []struct {
		json string
		want string
	}{
		{`{"x": {"uniform": [1, 0]}}`, `space: x.uniform: want [low, high] with low < high, got [1, 0]`},
		{`{"x": 1e999}`, `space: x: number 1e999 out of range`},
		{`{"x": {"choice": [1e999]}}`, `space: x.choice.0: number 1e999 out of range`},
		{`[]`, `space: want a mapping of parameter names to domains, got []`},
		{`{} {}`, `space: parse json: unexpected data after the top-level value`},
		{`{"x": }`, `space: parse json: invalid character '}' looking for beginning of value`},
	}
	for _, tt := range tests {
		_, err := ParseJSON([]byte(tt.json))
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseJSON(%q)\n got: %v\nwant: %s", tt.json, err, tt.want)
		}
	}
	if _, err := ParseYAML([]byte("a: [")); err == nil || !strings.HasPrefix(err.Error(), "space: parse yaml: ") {
		t.Errorf("bad yaml: %v", err)
	}
}

func TestNotMistakenForDomains(t *testing.T) {
	// One-key maps that are not close to a domain name, or whose value is
	// not a list, are sub-spaces.
	s, err := ParseYAML([]byte("a: {grad: [1, 2]}\nb: {uniforms: 3}\nc: {cost: [1]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Space{"a": Space{"grad": []any{1, 2}}, "b": Space{"uniforms": 3}, "c": Space{"cost": []any{1}}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("got %#v", s)
	}
}

func TestYAMLAliases(t *testing.T) {
	s, err := ParseYAML([]byte("a: &lr {loguniform: [1e-4, 1e-1]}\nb: *lr\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, Space{"a": LogUniform(1e-4, 1e-1), "b": LogUniform(1e-4, 1e-1)}) {
		t.Fatalf("got %#v", s)
	}
	// An alias bomb is refused instead of expanded.
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	if _, err := ParseYAML([]byte(b.String())); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("alias bomb: %v", err)
	}
}

func TestFormatValue(t *testing.T) {
	for _, tt := range []struct {
		v    any
		want string
	}{
		{[]any{1, 2.5, "a", nil, true, math.Inf(-1)}, `[1, 2.5, "a", null, true, -Inf]`},
		{map[string]any{"b": 1, "a": []any{}}, `{a: [], b: 1}`},
		{1e-5, "1e-05"},
		{strings.Repeat("x", 300), `"` + strings.Repeat("x", 199) + "..."},
	} {
		if got := formatValue(tt.v); got != tt.want {
			t.Errorf("formatValue(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

// FuzzDecode feeds arbitrary documents to both decoders: they must never
// panic, and whatever they accept must be a valid space whose samples pass
// Check and survive the unit-cube round trip.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(docYAML))
	f.Add([]byte(`{"lr": {"loguniform": [1e-4, 1e-1]}, "bs": {"grid": [16, 32]}, "m": {"w": {"choice": [1, {"a": 2}]}}}`))
	f.Add([]byte("x: {qrandint: [-7, 13, 3]}\ny: {qloguniform: [0.01, 1, 0.01]}\nz: {qnormal: [0, 1e300, 1e-300]}"))
	f.Add([]byte("x: {uniform: [-1.7976931348623157e308, 1.7976931348623157e308]}\nn: {randint: [-9007199254740992, 9007199254740992]}"))
	f.Add([]byte("a: &a [1, *a]"))
	f.Add([]byte("x: {const: {grid: [1]}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, parse := range []func([]byte) (Space, error){ParseYAML, ParseJSON} {
			s, err := parse(data)
			if err != nil {
				continue
			}
			if err := s.Validate(); err != nil {
				t.Fatalf("accepted an invalid space: %v", err)
			}
			r := newRand(1)
			for range 3 {
				cfg := s.Sample(r)
				if err := s.Check(cfg); err != nil {
					t.Fatalf("sample %v: %v", cfg, err)
				}
				u, err := s.ToUnit(cfg)
				if err != nil {
					t.Fatalf("ToUnit(%v): %v", cfg, err)
				}
				back, err := s.FromUnit(u, nil)
				if err != nil {
					t.Fatalf("FromUnit: %v", err)
				}
				if err := s.Check(back); err != nil {
					t.Fatalf("FromUnit(ToUnit(%v)) = %v: %v", cfg, back, err)
				}
			}
			// What marshals parses back to a space that marshals the same.
			if data, err := json.Marshal(s); err == nil {
				back, err := ParseJSON(data)
				if err != nil {
					t.Fatalf("ParseJSON(%s): %v", data, err)
				}
				again, err := json.Marshal(back)
				if err != nil || !bytes.Equal(again, data) {
					t.Fatalf("marshal round trip: %s -> %s (%v)", data, again, err)
				}
			}
			if g := s.Grid(nil); g.Len() <= 1000 {
				for i := range g.Len() {
					if err := s.Check(s.Resolve(g.At(i), r)); err != nil {
						t.Fatalf("grid point %d: %v", i, err)
					}
				}
			}
		}
	})
}

func TestMarshalRoundTrip(t *testing.T) {
	s, err := ParseYAML([]byte(docYAML))
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseJSON(data)
	if err != nil {
		t.Fatalf("ParseJSON(%s): %v", data, err)
	}
	if !reflect.DeepEqual(back, s) {
		t.Fatalf("JSON round trip:\n%#v\nwant\n%#v", back, s)
	}
	ydata, err := yaml.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	yback, err := ParseYAML(ydata)
	if err != nil {
		t.Fatalf("ParseYAML(%s): %v", ydata, err)
	}
	if !reflect.DeepEqual(yback, s) {
		t.Fatalf("YAML round trip:\n%#v\nwant\n%#v", yback, s)
	}
	if _, err := json.Marshal(Space{"f": Func(func(hone.Config) any { return 1 })}); err == nil ||
		!strings.Contains(err.Error(), "space: func domains cannot be marshalled") {
		t.Fatalf("marshal func: %v", err)
	}
}

func TestDecodeLimits(t *testing.T) {
	deep := strings.Repeat(`{"a": `, 150) + "1" + strings.Repeat("}", 150)
	_, err := ParseJSON([]byte(deep))
	want := "space: " + strings.TrimSuffix(strings.Repeat("a.", 100), ".") + ": nested more than 100 levels deep"
	if err == nil || err.Error() != want {
		t.Fatalf("deep JSON: %v", err)
	}
	deepY := strings.Repeat("[", 150) + strings.Repeat("]", 150)
	if _, err := ParseYAML([]byte("a: " + deepY)); err == nil || !strings.HasSuffix(err.Error(), ": nested more than 100 levels deep") {
		t.Fatalf("deep YAML: %v", err)
	}
	if _, err := Decode(map[string]any{"m": map[int]any{1: 2}}); err == nil || err.Error() != "space: m: map keys must be strings, got int" {
		t.Fatalf("int keys: %v", err)
	}
	if _, err := ParseYAML([]byte("x: !!int abc")); err == nil || !strings.HasPrefix(err.Error(), "space: x: ") {
		t.Fatalf("bad scalar: %v", err)
	}
}

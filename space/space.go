package space

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/hone-tune/hone"
)

// Space is a search space: a nested map whose values are Domains,
// sub-spaces (a Space, map[string]any or hone.Config) and constants (any
// other value; an empty map is a constant empty map). Build one in Go, or
// with Decode, ParseYAML or ParseJSON, which also validate it.
//
// The methods read the space and never modify it; they are safe for
// concurrent use as long as no one modifies the map. Methods that sample
// expect a valid space (see Validate). Every configuration a method returns
// is a fresh tree of map[string]any, []any and scalars that the caller owns.
//
// Order. Wherever the order of parameters matters (which draws from r go
// to which parameter, the order Func domains are evaluated in, Params, the
// unit-cube coordinates, the grid), parameters are sorted by key path,
// comparing paths key by key.
type Space map[string]any

// leaf is one parameter of a space: a domain, or a constant.
type leaf struct {
	path []string
	dom  Domain
	isD  bool // dom is set; otherwise val is a constant
	val  any
}

// leaves lists the space's parameters in path order.
func (s Space) leaves() []leaf {
	var out []leaf
	walk(map[string]any(s), nil, &out)
	return out
}

func walk(m map[string]any, prefix []string, out *[]leaf) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		path := append(slices.Clip(prefix), k)
		switch v := m[k].(type) {
		case Domain:
			*out = append(*out, leaf{path: path, dom: v, isD: true})
		case *Domain:
			if v == nil {
				*out = append(*out, leaf{path: path})
			} else {
				*out = append(*out, leaf{path: path, dom: *v, isD: true})
			}
		default:
			if sub, ok := subspace(v); ok && len(sub) > 0 {
				walk(sub, path, out)
			} else {
				*out = append(*out, leaf{path: path, val: v})
			}
		}
	}
}

// subspace reports whether v is a nested space, and returns it as a map.
func subspace(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case Space:
		return x, true
	case map[string]any:
		return x, true
	case hone.Config:
		return x, true
	}
	return nil, false
}

// pathString renders a key path for messages, e.g. "model.width".
func pathString(path []string) string { return strings.Join(path, ".") }

// Validate checks every domain of the space (see Domain.Validate) and that
// the grid has at most MaxGridPoints points. The error names the first
// invalid domain in path order, e.g.
// "space: lr.loguniform: want [low, high] with 0 < low < high, got [0, 1]".
func (s Space) Validate() error {
	points := 1
	for _, l := range s.leaves() {
		if !l.isD {
			continue
		}
		if err := l.dom.Validate(); err != nil {
			return fmt.Errorf("space: %s.%s: %w", pathString(l.path), l.dom.kind, err)
		}
		if l.dom.kind == KindGrid {
			if points > MaxGridPoints/len(l.dom.values) {
				return fmt.Errorf("space: %s.%s: the grid has more than %d points", pathString(l.path), l.dom.kind, MaxGridPoints)
			}
			points *= len(l.dom.values)
		}
	}
	return nil
}

// MaxGridPoints is the largest grid (product of the sizes of all grid
// domains) a valid space may have.
const MaxGridPoints = 1 << 40

// Sample draws one configuration: every domain sampled with r (grid domains
// like choices), constants copied, then Func domains evaluated. It is
// Resolve(nil, r).
func (s Space) Sample(r *rand.Rand) map[string]any { return s.Resolve(nil, r) }

// Resolve completes a partial configuration: the result holds every value
// of point (deep-copied; keys the space does not have are kept, as Ray
// Tune's points_to_evaluate are), and every parameter point does not set is
// sampled with r, in path order. A point value replaces a whole subtree: if
// point sets "model" to a string, nothing under the space's "model" is
// sampled. Func domains are evaluated last, seeing the point's values; a
// point value for a Func's path wins over the function. A grid point from
// Grid.At is a typical point.
func (s Space) Resolve(point map[string]any, r *rand.Rand) map[string]any {
	cfg := map[string]any{}
	var funcs []leaf
	for _, l := range s.leaves() {
		if covered(point, l.path) {
			continue
		}
		switch {
		case !l.isD:
			setPath(cfg, l.path, cloneValue(l.val))
		case l.dom.kind == KindFunc:
			funcs = append(funcs, l)
		default:
			setPath(cfg, l.path, l.dom.sample(r, nil))
		}
	}
	mergeInto(cfg, point)
	for _, l := range funcs {
		setPath(cfg, l.path, l.dom.sample(r, hone.Config(cfg)))
	}
	return cfg
}

// covered reports whether point decides the value at path: it sets path
// itself, or a prefix of it to something that is not a map.
func covered(point map[string]any, path []string) bool {
	cur := point
	for i, k := range path {
		v, ok := cur[k]
		if !ok {
			return false
		}
		if i == len(path)-1 {
			return true
		}
		m, ok := asMap(v)
		if !ok {
			return true
		}
		cur = m
	}
	return false
}

func asMap(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return x, true
	case hone.Config:
		return x, true
	case Space:
		return x, true
	}
	return nil, false
}

// setPath stores v at path in cfg, creating (or replacing non-map values
// with) intermediate maps.
func setPath(cfg map[string]any, path []string, v any) {
	cur := cfg
	for _, k := range path[:len(path)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	cur[path[len(path)-1]] = v
}

// mergeInto deep-merges a copy of src into dst: maps merge key by key,
// anything else replaces.
func mergeInto(dst, src map[string]any) {
	for k, sv := range src {
		if sm, ok := asMap(sv); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeInto(dm, sm)
				continue
			}
		}
		dst[k] = cloneValue(sv)
	}
}

// Grid is the cartesian product of a space's grid domains: every
// combination of their values, each a partial configuration to pass to
// Space.Resolve. Points are ordered as Ray Tune orders them: grid keys
// sorted by path, the first key varying fastest. For {a: {grid: [1, 2]},
// b: {grid: [x, y]}} the points are {a: 1, b: x}, {a: 2, b: x}, {a: 1,
// b: y}, {a: 2, b: y}. A space without grid domains has one point: the
// fixed configuration itself.
type Grid struct {
	fixed  map[string]any
	params []leaf
	n      int
}

// Grid returns the product of the grid domains whose values fixed does not
// decide (see Resolve), each point merged onto a copy of fixed (which may
// be nil). This is how a preset point that leaves some grid keys unset
// expands into several trials, as in Ray Tune. The space must be valid.
func (s Space) Grid(fixed map[string]any) Grid {
	g := Grid{fixed: fixed, n: 1}
	for _, l := range s.leaves() {
		if l.isD && l.dom.kind == KindGrid && !covered(fixed, l.path) {
			g.params = append(g.params, l)
			g.n *= len(l.dom.values)
		}
	}
	return g
}

// Len returns the number of points.
func (g Grid) Len() int { return g.n }

// At returns point i, 0 <= i < Len(), as a fresh map.
func (g Grid) At(i int) map[string]any {
	if i < 0 || i >= g.n {
		panic(fmt.Sprintf("space: grid point %d out of range [0, %d)", i, g.n))
	}
	p, _ := cloneValue(map[string]any(g.fixed)).(map[string]any)
	if p == nil {
		p = map[string]any{}
	}
	for _, l := range g.params {
		n := len(l.dom.values)
		setPath(p, l.path, cloneValue(l.dom.values[i%n]))
		i /= n
	}
	return p
}

// GridPoints returns every point of Grid(nil), in order. It allocates them
// all; iterate a Grid for large grids.
func (s Space) GridPoints() []map[string]any {
	g := s.Grid(nil)
	out := make([]map[string]any, g.Len())
	for i := range out {
		out[i] = g.At(i)
	}
	return out
}

// Param describes one domain of a space, for searchers that model the
// space (TPE, BOHB) rather than only sample it.
type Param struct {
	// Path is the key path, e.g. ["model", "width"].
	Path []string
	// Kind is the domain's kind; Domain is the domain itself.
	Kind   Kind
	Domain Domain
	// Low and High bound the values the domain produces, both inclusive:
	// for randint(1, 10) they are 1 and 9, for quniform(0, 1, 0.3) 0 and
	// 0.9; for normal kinds they are -Inf and +Inf. Zero for choice, grid
	// and func.
	Low, High float64
	// Log is set for log-scale kinds, Integer for integer kinds.
	Log, Integer bool
	// Q is the quantum, 0 if the values are not quantized.
	Q float64
	// Mean and SD are the normal kinds' parameters.
	Mean, SD float64
	// Categories are a choice's or grid's values (shared with the domain:
	// do not modify).
	Categories []any
	// Dim is the param's coordinate in the unit-cube encoding (ToUnit),
	// or -1 for a Func domain, which has none.
	Dim int
}

// Name returns the dotted key path, e.g. "model.width".
func (p Param) Name() string { return pathString(p.Path) }

// Params lists the space's domains (not its constants) in path order. The
// space must be valid.
func (s Space) Params() []Param {
	var out []Param
	dim := 0
	for _, l := range s.leaves() {
		if !l.isD || l.dom.kind == KindConst {
			continue
		}
		d := l.dom
		p := Param{Path: l.path, Kind: d.kind, Domain: d, Log: d.isLog(), Integer: d.isInt(), Q: d.q, Dim: -1}
		switch d.kind {
		case KindUniform, KindLogUniform:
			p.Low, p.High = d.lo, d.hi
		case KindRandInt, KindLogRandInt:
			p.Low, p.High = d.lo, d.hi-1
		case KindQUniform, KindQLogUniform, KindQRandInt, KindQLogRandInt:
			p.Low, p.High = d.span()
		case KindNormal, KindQNormal:
			p.Low, p.High = math.Inf(-1), math.Inf(1)
			p.Mean, p.SD = d.mean, d.sd
		case KindChoice, KindGrid:
			p.Categories = d.values
		}
		if d.kind != KindFunc {
			p.Dim = dim
			dim++
		}
		out = append(out, p)
	}
	return out
}

// Check reports the first domain (in path order) whose value in cfg is
// missing or not one the domain can produce (see Domain.Contains). Func
// domains and constants are not checked. Every configuration Sample or
// Resolve(nil, r) returns passes Check.
func (s Space) Check(cfg map[string]any) error {
	for _, l := range s.leaves() {
		if !l.isD || l.dom.kind == KindFunc || l.dom.kind == KindConst {
			continue
		}
		v, ok := hone.Config(cfg).Lookup(l.path...)
		if !ok {
			return fmt.Errorf("space: %s: missing", pathString(l.path))
		}
		if !l.dom.Contains(v) {
			return fmt.Errorf("space: %s: %s is not in %s", pathString(l.path), formatValue(v), l.dom)
		}
	}
	return nil
}

// ToUnit encodes cfg's values of the space's non-Func domains as a point of
// the unit cube, one coordinate per Param with Dim >= 0, in Params order:
// continuous values map linearly (log kinds: in log space) from [Low,
// High] to [0, 1]; normal kinds through their CDF; integers and categories
// to the middle of their cell, (i+0.5)/n. FromUnit inverts it: for a
// configuration the space produced, FromUnit(ToUnit(cfg)) has the same
// domain values. An error names a missing value, a non-number, or a value
// that is not among a choice's values; numbers out of range are clamped.
func (s Space) ToUnit(cfg map[string]any) ([]float64, error) {
	var u []float64
	for _, p := range s.Params() {
		if p.Dim < 0 {
			continue
		}
		v, ok := hone.Config(cfg).Lookup(p.Path...)
		if !ok {
			return nil, fmt.Errorf("space: to unit: %s: missing", p.Name())
		}
		x, err := p.Domain.toUnit(v)
		if err != nil {
			return nil, fmt.Errorf("space: to unit: %s: %w", p.Name(), err)
		}
		u = append(u, x)
	}
	return u, nil
}

// FromUnit decodes a unit-cube point (see ToUnit) into a configuration:
// constants copied, coordinate i decoded by the Param with Dim i
// (coordinates are clamped to [0, 1]; cells are half-open, so 1 decodes to
// the last category), then Func domains evaluated, with r for FuncRand
// (r may be nil if the space has none). A uniformly drawn u yields the
// space's sampling distribution. It fails if len(u) is not the number of
// dimensions or a coordinate is NaN.
func (s Space) FromUnit(u []float64, r *rand.Rand) (map[string]any, error) {
	cfg := map[string]any{}
	var funcs []leaf
	i := 0
	for _, l := range s.leaves() {
		switch {
		case !l.isD:
			setPath(cfg, l.path, cloneValue(l.val))
		case l.dom.kind == KindFunc:
			funcs = append(funcs, l)
		case l.dom.kind == KindConst:
			setPath(cfg, l.path, cloneValue(l.dom.val))
		default:
			if i >= len(u) {
				i++
				continue
			}
			if math.IsNaN(u[i]) {
				return nil, fmt.Errorf("space: from unit: %s: coordinate %d is NaN", pathString(l.path), i)
			}
			setPath(cfg, l.path, l.dom.fromUnit(u[i]))
			i++
		}
	}
	if i != len(u) {
		return nil, fmt.Errorf("space: from unit: want %d coordinates, got %d", i, len(u))
	}
	for _, l := range funcs {
		setPath(cfg, l.path, l.dom.sample(r, hone.Config(cfg)))
	}
	return cfg, nil
}

// cloneValue deep-copies a JSON-like value; nested spaces and configs
// become map[string]any.
func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneMap(x)
	case hone.Config:
		return cloneMap(x)
	case Space:
		return cloneMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	}
	return v
}

func cloneMap(m map[string]any) any {
	if m == nil {
		return map[string]any(nil)
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		out[k] = cloneValue(e)
	}
	return out
}

// CheckPoint reports the first key of point (a full or partial
// configuration, e.g. one of points_to_evaluate) that the space does not
// have, naming its dotted path. Below a key that is not a sub-space, the
// point's value is taken whole and not checked.
func (s Space) CheckPoint(point map[string]any) error { return checkPoint(s, point, nil) }

func checkPoint(s map[string]any, point map[string]any, path []string) error {
	keys := make([]string, 0, len(point))
	for k := range point {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := append(slices.Clip(path), k)
		sv, ok := s[k]
		if !ok {
			return fmt.Errorf("key %q is not in the search space", strings.Join(p, "."))
		}
		sub, isSub := asMap(sv)
		pv, isMap := asMap(point[k])
		if isSub && isMap {
			if err := checkPoint(sub, pv, p); err != nil {
				return err
			}
		}
	}
	return nil
}

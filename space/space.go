package space

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
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
	// lens[i] > 0 when path[i] is an index (in decimal) into a list of
	// lens[i] elements rather than a map key; nil when no segment is.
	lens []int
	dom  Domain
	isD  bool // dom is set; otherwise val is a constant
	val  any
}

// inList reports whether the leaf is (inside) an element of a list.
func (l leaf) inList() bool { return l.lens != nil }

// index reports whether segment i of the leaf's path indexes a list.
func (l leaf) index(i int) bool { return l.lens != nil && l.lens[i] > 0 }

// leaves lists the space's parameters in path order. A list that holds a
// domain (at any depth) is walked into, element by element in index
// order; other lists are constants.
func (s Space) leaves() []leaf {
	var out []leaf
	walk(map[string]any(s), nil, nil, &out)
	return out
}

func walk(m map[string]any, prefix []string, lens []int, out *[]leaf) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		path := append(slices.Clip(prefix), k)
		var pl []int
		if lens != nil {
			pl = append(slices.Clip(lens), 0)
		}
		walkValue(m[k], path, pl, out)
	}
}

func walkValue(v any, path []string, lens []int, out *[]leaf) {
	switch x := v.(type) {
	case Domain:
		*out = append(*out, leaf{path: path, lens: lens, dom: x, isD: true})
	case *Domain:
		if x == nil {
			*out = append(*out, leaf{path: path, lens: lens})
		} else {
			*out = append(*out, leaf{path: path, lens: lens, dom: *x, isD: true})
		}
	case []any:
		if !hasDomain(x, 0) {
			*out = append(*out, leaf{path: path, lens: lens, val: v})
			return
		}
		for i, e := range x {
			pl := lens
			if pl == nil {
				pl = make([]int, len(path))
			}
			walkValue(e, append(slices.Clip(path), strconv.Itoa(i)), append(slices.Clip(pl), len(x)), out)
		}
	default:
		if sub, ok := subspace(v); ok && len(sub) > 0 {
			walk(sub, path, lens, out)
		} else {
			*out = append(*out, leaf{path: path, lens: lens, val: v})
		}
	}
}

// hasDomain reports whether v holds a domain: is one, or is a list or a
// sub-space with one inside (at most maxDepth levels down).
func hasDomain(v any, depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch x := v.(type) {
	case Domain:
		return true
	case *Domain:
		return x != nil
	case []any:
		for _, e := range x {
			if hasDomain(e, depth+1) {
				return true
			}
		}
		return false
	}
	if sub, ok := subspace(v); ok {
		for _, e := range sub {
			if hasDomain(e, depth+1) {
				return true
			}
		}
	}
	return false
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

// Validate checks every domain of the space (see Domain.Validate), that
// the grid has at most MaxGridPoints points, and the needs of Func domains
// (see Domain.Needs): each names a parameter or sub-space of the space, and
// no Func needs itself through others. The error names the first invalid
// domain in path order, e.g.
// "space: lr.loguniform: want [low, high] with 0 < low < high, got [0, 1]",
// or the Funcs of a cycle, e.g.
// "space: func domains need each other in a cycle: a needs b, b needs a".
func (s Space) Validate() error {
	points := 1
	leaves := s.leaves()
	var funcs []leaf
	for _, l := range leaves {
		if !l.isD {
			continue
		}
		if err := l.dom.Validate(); err != nil {
			return errIn(l.path, string(l.dom.kind), "%w", err)
		}
		if l.dom.kind == KindFunc {
			funcs = append(funcs, l)
			for _, n := range l.dom.needs {
				if !names(leaves, n) {
					return &Error{Path: pathString(l.path), Err: fmt.Errorf("needs %q, which is not a parameter of the space", n)}
				}
			}
		}
		if l.dom.kind == KindGrid {
			if points > MaxGridPoints/len(l.dom.values) {
				return errIn(l.path, string(l.dom.kind), "the grid has more than %d points", MaxGridPoints)
			}
			points *= len(l.dom.values)
		}
	}
	if _, err := funcOrder(funcs); err != nil {
		return err
	}
	return nil
}

// MaxGridPoints is the largest grid (product of the sizes of all grid
// domains) a valid space may have.
const MaxGridPoints = 1 << 40

// Sample draws one configuration: every domain sampled with r (grid domains
// like choices, domains inside lists too), constants copied, then Func
// domains evaluated. It is Resolve(nil, r).
func (s Space) Sample(r *rand.Rand) map[string]any { return s.Resolve(nil, r) }

// Resolve completes a partial configuration: the result holds every value
// of point (deep-copied; keys the space does not have are kept, as Ray
// Tune's points_to_evaluate are), and every parameter point does not set is
// sampled with r, in path order. A point value replaces a whole subtree: if
// point sets "model" to a string, nothing under the space's "model" is
// sampled. Where the space has a list holding domains, a point may give the
// whole list (taken as it is) or some of its elements by index: a map from
// "0", "1", ... to the element's value, as Grid.At gives for a grid domain
// inside a list. Func domains are evaluated last, seeing the point's
// values, in dependency order (see Domain.Needs); a point value for a
// Func's path wins over the function. A grid point from Grid.At is a
// typical point.
func (s Space) Resolve(point map[string]any, r *rand.Rand) map[string]any {
	cfg := map[string]any{}
	var funcs []leaf
	for _, l := range s.leaves() {
		if covered(point, l.path) {
			if l.inList() {
				l.set(cfg, nil) // the lists the point's elements go into
			}
			continue
		}
		switch {
		case !l.isD:
			l.set(cfg, cloneValue(l.val))
		case l.dom.kind == KindFunc:
			funcs = append(funcs, l)
		default:
			l.set(cfg, l.dom.sample(r, nil))
		}
	}
	mergeInto(cfg, point)
	evalFuncs(cfg, funcs, r)
	return cfg
}

// evalFuncs sets the value of every Func leaf in cfg, in dependency order
// (path order among the remaining ones if the needs form a cycle, which
// Validate reports).
func evalFuncs(cfg map[string]any, funcs []leaf, r *rand.Rand) {
	order, _ := funcOrder(funcs)
	for _, l := range order {
		l.set(cfg, l.dom.sample(r, hone.Config(cfg)))
	}
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

// set stores v at the leaf's path in cfg, creating (or replacing values of
// the wrong shape with) the intermediate maps and lists (lists of the
// space's length, elements nil until set).
func (l leaf) set(cfg map[string]any, v any) {
	if !l.inList() {
		SetPath(cfg, l.path, v)
		return
	}
	var cur any = cfg
	for i, k := range l.path {
		if i == len(l.path)-1 {
			put(cur, k, l.index(i), v)
			return
		}
		next, _ := get(cur, k, l.index(i))
		if l.index(i + 1) {
			if list, ok := next.([]any); !ok || len(list) != l.lens[i+1] {
				next = make([]any, l.lens[i+1])
				put(cur, k, l.index(i), next)
			}
		} else if _, ok := next.(map[string]any); !ok {
			next = map[string]any{}
			put(cur, k, l.index(i), next)
		}
		cur = next
	}
}

// lookup returns the value at the leaf's path in cfg.
func (l leaf) lookup(cfg map[string]any) (any, bool) {
	var cur any = cfg
	for i, k := range l.path {
		v, ok := get(cur, k, l.index(i))
		if !ok {
			return nil, false
		}
		cur = v
	}
	return cur, true
}

// get returns element k of a list (index true) or a map.
func get(container any, k string, index bool) (any, bool) {
	if index {
		list, ok := container.([]any)
		j, err := strconv.Atoi(k)
		if !ok || err != nil || j < 0 || j >= len(list) {
			return nil, false
		}
		return list[j], true
	}
	m, ok := asMap(container)
	if !ok {
		return nil, false
	}
	v, ok := m[k]
	return v, ok
}

// put stores v as element k of a list (index true) or a map; it does
// nothing if the container has another shape.
func put(container any, k string, index bool, v any) {
	if index {
		list, ok := container.([]any)
		if j, err := strconv.Atoi(k); ok && err == nil && j >= 0 && j < len(list) {
			list[j] = v
		}
		return
	}
	if m, ok := asMap(container); ok {
		m[k] = v
	}
}

// SetPath stores v at path in cfg (a parameter's Path), creating (or
// replacing non-map values with) intermediate maps.
func SetPath(cfg map[string]any, path []string, v any) {
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

// mergeInto deep-merges a copy of src into dst: maps merge key by key, a
// map whose keys are all indices of a list ("0", "1", ...) merges into the
// list element by element, anything else replaces.
func mergeInto(dst, src map[string]any) {
	for k, sv := range src {
		dst[k] = mergeValue(dst[k], sv)
	}
}

func mergeValue(d, s any) any {
	if sm, ok := asMap(s); ok {
		if dm, ok := d.(map[string]any); ok {
			mergeInto(dm, sm)
			return dm
		}
		if dl, ok := d.([]any); ok && indexKeys(sm, len(dl)) {
			for k, e := range sm {
				j, _ := strconv.Atoi(k)
				dl[j] = mergeValue(dl[j], e)
			}
			return dl
		}
	}
	return cloneValue(s)
}

// indexKeys reports whether m is not empty and its keys are all indices
// 0 <= i < n written in decimal.
func indexKeys(m map[string]any, n int) bool {
	for k := range m {
		j, err := strconv.Atoi(k)
		if err != nil || j < 0 || j >= n || strconv.Itoa(j) != k {
			return false
		}
	}
	return len(m) > 0
}

// Grid is the cartesian product of a space's grid domains: every
// combination of their values, each a partial configuration to pass to
// Space.Resolve. Points are ordered as Ray Tune orders them: grid keys
// sorted by path, the first key varying fastest. For {a: {grid: [1, 2]},
// b: {grid: [x, y]}} the points are {a: 1, b: x}, {a: 2, b: x}, {a: 1,
// b: y}, {a: 2, b: y}. A grid domain inside a list is set by index:
// {layers: [{grid: [16, 32]}, 3]} has the points {layers: {"0": 16}} and
// {layers: {"0": 32}}, which Resolve places in the list. A space without
// grid domains has one point: the fixed configuration itself.
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
		SetPath(p, l.path, cloneValue(l.dom.values[i%n]))
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
// space must be valid. Domains inside lists are not listed: searchers that
// model the space draw them at random (Resolve, FromUnit).
func (s Space) Params() []Param {
	var out []Param
	dim := 0
	for _, l := range s.leaves() {
		if !l.isD || l.dom.kind == KindConst || l.inList() {
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
// missing or not one the domain can produce (see Domain.Contains); domains
// inside lists are checked too, element by element. Func domains and
// constants are not checked. Every configuration Sample or Resolve(nil, r)
// returns passes Check.
func (s Space) Check(cfg map[string]any) error {
	for _, l := range s.leaves() {
		if !l.isD || l.dom.kind == KindFunc || l.dom.kind == KindConst {
			continue
		}
		v, ok := l.lookup(cfg)
		if !ok {
			return &Error{Path: pathString(l.path), Err: errors.New("missing")}
		}
		if !l.dom.Contains(v) {
			return &Error{Path: pathString(l.path), Err: fmt.Errorf("%s is not in %s", formatValue(v), l.dom)}
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
			return nil, &Error{Op: "to unit", Path: p.Name(), Err: errors.New("missing")}
		}
		x, err := p.Domain.toUnit(v)
		if err != nil {
			return nil, &Error{Op: "to unit", Path: p.Name(), Err: err}
		}
		u = append(u, x)
	}
	return u, nil
}

// FromUnit decodes a unit-cube point (see ToUnit) into a configuration:
// constants copied, coordinate i decoded by the Param with Dim i
// (coordinates are clamped to [0, 1]; cells are half-open, so 1 decodes to
// the last category), domains inside lists (which have no coordinate)
// sampled with r, then Func domains evaluated in dependency order, with r
// for FuncRand (r may be nil if the space has neither). A uniformly drawn u
// yields the space's sampling distribution. It fails if len(u) is not the
// number of dimensions or a coordinate is NaN.
func (s Space) FromUnit(u []float64, r *rand.Rand) (map[string]any, error) {
	cfg := map[string]any{}
	var funcs []leaf
	i := 0
	for _, l := range s.leaves() {
		switch {
		case !l.isD:
			l.set(cfg, cloneValue(l.val))
		case l.dom.kind == KindFunc:
			funcs = append(funcs, l)
		case l.dom.kind == KindConst:
			l.set(cfg, cloneValue(l.dom.val))
		case l.inList():
			if r == nil {
				return nil, &Error{Op: "from unit", Path: pathString(l.path), Err: errors.New("a domain inside a list needs a random source")}
			}
			l.set(cfg, l.dom.sample(r, nil))
		default:
			if i >= len(u) {
				i++
				continue
			}
			if math.IsNaN(u[i]) {
				return nil, &Error{Op: "from unit", Path: pathString(l.path), Err: fmt.Errorf("coordinate %d is NaN", i)}
			}
			SetPath(cfg, l.path, l.dom.fromUnit(u[i]))
			i++
		}
	}
	if i != len(u) {
		return nil, &Error{Op: "from unit", Err: fmt.Errorf("want %d coordinates, got %d", i, len(u))}
	}
	evalFuncs(cfg, funcs, r)
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

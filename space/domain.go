package space

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/hone-tune/hone"
)

// Kind names a domain's distribution. It is the key that introduces the
// domain in a space file, e.g. "loguniform" in {loguniform: [1e-4, 1e-1]}.
type Kind string

// The domain kinds. KindFunc domains exist only in spaces built in Go.
const (
	KindUniform     Kind = "uniform"     // float in [low, high]
	KindQUniform    Kind = "quniform"    // float multiple of q in [low, high]
	KindLogUniform  Kind = "loguniform"  // float in [low, high], log scale
	KindQLogUniform Kind = "qloguniform" // float multiple of q in [low, high], log scale
	KindRandInt     Kind = "randint"     // int in [low, high)
	KindQRandInt    Kind = "qrandint"    // int multiple of q in [low, high]
	KindLogRandInt  Kind = "lograndint"  // int in [low, high), log scale
	KindQLogRandInt Kind = "qlograndint" // int multiple of q in [low, high], log scale
	KindChoice      Kind = "choice"      // one of a list of values
	KindNormal      Kind = "normal"      // float from N(mean, sd²)
	KindQNormal     Kind = "qnormal"     // float multiple of q from N(mean, sd²)
	KindGrid        Kind = "grid"        // every value of a list, in turn (grid search)
	KindFunc        Kind = "func"        // computed from the rest of the config
	KindConst       Kind = "const"       // a fixed value
)

// kindOrder lists the kinds a space file may name, in the order error
// messages list them.
var kindOrder = []Kind{
	KindUniform, KindQUniform, KindLogUniform, KindQLogUniform,
	KindRandInt, KindQRandInt, KindLogRandInt, KindQLogRandInt,
	KindChoice, KindNormal, KindQNormal, KindGrid, KindConst,
}

// maxExactInt is the largest magnitude an integer bound may have: beyond
// 2^53 float64 arithmetic no longer represents every integer.
const maxExactInt = 1 << 53

// Domain is one hyperparameter's set of values and how to draw from it.
// Build one with the constructors (Uniform, Choice, Func, ...) or by decoding
// a space file. The constructors do not check their arguments: Validate (or
// Space.Validate) does, with the same messages the decoder gives. A Domain is
// immutable and safe to share.
type Domain struct {
	kind     Kind
	lo, hi   float64 // declared bounds; hi is exclusive for randint and lograndint
	q        float64 // quantum, 0 if none
	base     float64 // loguniform's optional log base, 0 if not given
	mean, sd float64
	values   []any // choice and grid
	val      any   // const
	fn       func(hone.Config, *rand.Rand) any
	needs    []string // func: the dotted paths it reads (see Needs)
}

// Uniform returns a domain of floats drawn uniformly from [lo, hi].
func Uniform(lo, hi float64) Domain { return Domain{kind: KindUniform, lo: lo, hi: hi} }

// QUniform returns a domain of floats drawn uniformly from [lo, hi] and
// rounded to the nearest multiple of q that lies in [lo, hi]. The result is
// a float64, as in Ray Tune.
func QUniform(lo, hi, q float64) Domain {
	return Domain{kind: KindQUniform, lo: lo, hi: hi, q: q}
}

// LogUniform returns a domain of floats drawn from [lo, hi] so that their
// logarithm is uniform. It needs 0 < lo < hi.
func LogUniform(lo, hi float64) Domain { return Domain{kind: KindLogUniform, lo: lo, hi: hi} }

// LogUniformBase is LogUniform with an explicit logarithm base, accepted for
// compatibility with Ray Tune's loguniform(lower, upper, base). The base does
// not change the distribution; it must be greater than 1 (0 means "not
// given").
func LogUniformBase(lo, hi, base float64) Domain {
	return Domain{kind: KindLogUniform, lo: lo, hi: hi, base: base}
}

// QLogUniform returns a LogUniform domain whose values are rounded to the
// nearest multiple of q in [lo, hi].
func QLogUniform(lo, hi, q float64) Domain {
	return Domain{kind: KindQLogUniform, lo: lo, hi: hi, q: q}
}

// RandInt returns a domain of ints drawn uniformly from lo, lo+1, ..., hi-1
// (hi is exclusive, as in Ray Tune).
func RandInt(lo, hi int) Domain {
	return Domain{kind: KindRandInt, lo: float64(lo), hi: float64(hi)}
}

// QRandInt returns a domain of ints drawn uniformly from [lo, hi] and rounded
// to the nearest multiple of q in [lo, hi] (hi is inclusive, as in Ray
// Tune; unlike Ray, also when q is 1).
func QRandInt(lo, hi, q int) Domain {
	return Domain{kind: KindQRandInt, lo: float64(lo), hi: float64(hi), q: float64(q)}
}

// LogRandInt returns a domain of ints in lo, ..., hi-1 drawn so that their
// logarithm is roughly uniform: floor(exp(uniform(ln lo, ln hi))). It needs
// 0 < lo < hi.
func LogRandInt(lo, hi int) Domain {
	return Domain{kind: KindLogRandInt, lo: float64(lo), hi: float64(hi)}
}

// QLogRandInt returns a domain of ints drawn log-uniformly from [lo, hi] and
// rounded to the nearest multiple of q in [lo, hi] (hi inclusive).
func QLogRandInt(lo, hi, q int) Domain {
	return Domain{kind: KindQLogRandInt, lo: float64(lo), hi: float64(hi), q: float64(q)}
}

// Choice returns a domain that picks one of values uniformly. Values are
// literals: maps and lists among them are returned as (deep copies of)
// themselves, not searched.
func Choice(values ...any) Domain { return Domain{kind: KindChoice, values: values} }

// GridSearch returns a grid domain: a grid searcher tries every value, in
// order, combined with every value of the space's other grid domains (see
// Space.Grid). Sampling it outside a grid search picks a value uniformly.
// Values are literals, as for Choice.
func GridSearch(values ...any) Domain { return Domain{kind: KindGrid, values: values} }

// Normal returns a domain of floats drawn from the normal distribution with
// the given mean and standard deviation (sd > 0).
func Normal(mean, sd float64) Domain { return Domain{kind: KindNormal, mean: mean, sd: sd} }

// QNormal returns a Normal domain whose values are rounded to the nearest
// multiple of q.
func QNormal(mean, sd, q float64) Domain {
	return Domain{kind: KindQNormal, mean: mean, sd: sd, q: q}
}

// Const returns a domain that always yields (a deep copy of) v. It is how a
// Go-built space holds a constant map: a plain map in a Space is a
// sub-space.
func Const(v any) Domain { return Domain{kind: KindConst, val: v} }

// Func returns a conditional domain, like Ray Tune's sample_from: its value
// is fn(cfg), where cfg is the configuration being built with every
// non-function value already resolved. Functions run in key-path order,
// except that one that declares what it reads (Func(fn).Needs("b")) runs
// after the functions it needs, wherever they sort: fn sees the functions
// that ran before it. fn is called on the caller's goroutine and must not
// modify or retain cfg; it should be deterministic, or use FuncRand for
// randomness.
func Func(fn func(cfg hone.Config) any) Domain {
	if fn == nil {
		return Domain{kind: KindFunc}
	}
	return Domain{kind: KindFunc, fn: func(c hone.Config, _ *rand.Rand) any { return fn(c) }}
}

// FuncRand is Func for functions that draw random numbers: fn also gets the
// sampler's seeded source, so results stay reproducible.
func FuncRand(fn func(cfg hone.Config, r *rand.Rand) any) Domain {
	return Domain{kind: KindFunc, fn: fn}
}

// Kind returns the domain's kind.
func (d Domain) Kind() Kind { return d.kind }

// Integer reports whether the domain's values are ints: randint, qrandint,
// lograndint and qlograndint. Explorers that scale a value (PBT) keep such
// values ints.
func (d Domain) Integer() bool { return d.isInt() }

// String renders the domain in space-file syntax, e.g.
// "{loguniform: [0.0001, 0.1]}".
func (d Domain) String() string {
	if d.kind == KindFunc {
		return "{func}"
	}
	return "{" + string(d.kind) + ": " + formatValue(d.args()) + "}"
}

// args returns the domain's arguments as they are written in a space file.
func (d Domain) args() any {
	switch d.kind {
	case KindUniform:
		return []any{d.lo, d.hi}
	case KindLogUniform:
		if d.base != 0 {
			return []any{d.lo, d.hi, d.base}
		}
		return []any{d.lo, d.hi}
	case KindQUniform, KindQLogUniform:
		return []any{d.lo, d.hi, d.q}
	case KindRandInt, KindLogRandInt:
		return []any{intArg(d.lo), intArg(d.hi)}
	case KindQRandInt, KindQLogRandInt:
		return []any{intArg(d.lo), intArg(d.hi), intArg(d.q)}
	case KindNormal:
		return []any{d.mean, d.sd}
	case KindQNormal:
		return []any{d.mean, d.sd, d.q}
	case KindChoice, KindGrid:
		return d.values
	case KindConst:
		return d.val
	}
	return nil
}

// intArg renders an integer bound as an int when it is one.
func intArg(f float64) any {
	if f == math.Trunc(f) && math.Abs(f) <= maxExactInt {
		return int(f)
	}
	return f
}

// form describes the arguments the domain's kind accepts, for error
// messages. arity picks loguniform's variant (0 = unknown).
func form(k Kind, arity int) string {
	switch k {
	case KindUniform:
		return "[low, high] with low < high"
	case KindQUniform:
		return "[low, high, q] with low < high, q > 0 and a multiple of q in [low, high]"
	case KindLogUniform:
		switch arity {
		case 2:
			return "[low, high] with 0 < low < high"
		case 3:
			return "[low, high, base] with 0 < low < high and base > 1"
		}
		return "[low, high] or [low, high, base] with 0 < low < high and base > 1"
	case KindQLogUniform:
		return "[low, high, q] with 0 < low < high, q > 0 and a multiple of q in [low, high]"
	case KindRandInt:
		return "integers [low, high] with low < high (high exclusive)"
	case KindQRandInt:
		return "integers [low, high, q] with low < high, q >= 1 and a multiple of q in [low, high] (high inclusive)"
	case KindLogRandInt:
		return "integers [low, high] with 0 < low < high (high exclusive)"
	case KindQLogRandInt:
		return "integers [low, high, q] with 0 < low < high, q >= 1 and a multiple of q in [low, high] (high inclusive)"
	case KindChoice, KindGrid:
		return "a non-empty list of values"
	case KindNormal:
		return "[mean, sd] with sd > 0"
	case KindQNormal:
		return "[mean, sd, q] with sd > 0 and q > 0"
	case KindFunc:
		return "a non-nil function"
	}
	return "a known domain kind"
}

// arity is the number of arguments d was given, for form.
func (d Domain) arity() int {
	if d.kind == KindLogUniform && d.base != 0 {
		return 3
	}
	return 2
}

// Validate reports whether the domain's arguments are acceptable, with an
// error of the form "want <accepted form>, got <arguments>". Every number
// must be finite; integer bounds must be integers of magnitude at most 2^53.
// Only Func domains may declare needs, each a non-empty dotted path.
func (d Domain) Validate() error {
	if len(d.needs) > 0 {
		if d.kind != KindFunc {
			return fmt.Errorf("needs: only func domains read other parameters, not %s", d.kind)
		}
		for _, n := range d.needs {
			if n == "" || slices.Contains(strings.Split(n, "."), "") {
				return fmt.Errorf("needs %q: want a dotted key path such as \"model.width\"", n)
			}
		}
	}
	if d.valid() {
		return nil
	}
	if d.kind == KindFunc {
		return fmt.Errorf("want %s", form(d.kind, 0))
	}
	if _, known := kindNames[string(d.kind)]; !known {
		return fmt.Errorf("unknown domain kind %q", string(d.kind))
	}
	return fmt.Errorf("want %s, got %s", form(d.kind, d.arity()), formatValue(d.args()))
}

func finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func exactInt(xs ...float64) bool {
	for _, x := range xs {
		if !finite(x) || x != math.Trunc(x) || math.Abs(x) > maxExactInt {
			return false
		}
	}
	return true
}

func (d Domain) valid() bool {
	switch d.kind {
	case KindUniform:
		return finite(d.lo, d.hi) && d.lo < d.hi
	case KindQUniform:
		return finite(d.lo, d.hi, d.q) && d.lo < d.hi && d.q > 0 && d.hasMultiple()
	case KindLogUniform:
		if d.base != 0 && !(finite(d.base) && d.base > 1) {
			return false
		}
		return finite(d.lo, d.hi) && 0 < d.lo && d.lo < d.hi
	case KindQLogUniform:
		return finite(d.lo, d.hi, d.q) && 0 < d.lo && d.lo < d.hi && d.q > 0 && d.hasMultiple()
	case KindRandInt:
		return exactInt(d.lo, d.hi) && d.lo < d.hi
	case KindQRandInt:
		return exactInt(d.lo, d.hi, d.q) && d.lo < d.hi && d.q >= 1 && d.hasMultiple()
	case KindLogRandInt:
		return exactInt(d.lo, d.hi) && 0 < d.lo && d.lo < d.hi
	case KindQLogRandInt:
		return exactInt(d.lo, d.hi, d.q) && 0 < d.lo && d.lo < d.hi && d.q >= 1 && d.hasMultiple()
	case KindChoice, KindGrid:
		return len(d.values) > 0
	case KindNormal:
		return finite(d.mean, d.sd) && d.sd > 0
	case KindQNormal:
		return finite(d.mean, d.sd, d.q) && d.sd > 0 && d.q > 0
	case KindFunc:
		return d.fn != nil
	case KindConst:
		return true
	}
	return false
}

// Quantization. A quantized domain's values are k·q for the integers k in
// [kmin, kmax], the multiples of q inside [lo, hi].

// hasMultiple reports whether some multiple of q lies in [lo, hi] and the
// multipliers stay in the range where float64 counts exactly.
func (d Domain) hasMultiple() bool {
	kmin, kmax := d.qrange()
	return finite(kmin, kmax) && kmin <= kmax && math.Abs(kmin) <= maxExactInt && math.Abs(kmax) <= maxExactInt
}

// qrange returns the smallest and largest k with k·q in [lo, hi], with a
// little tolerance for bounds such as 0.3 that are multiples of q = 0.1 in
// decimal but not quite in binary.
func (d Domain) qrange() (kmin, kmax float64) {
	if d.isInt() {
		lo, hi, q := int64(d.lo), int64(d.hi), int64(d.q)
		kmin = float64(ceilDiv(lo, q))
		kmax = float64(floorDiv(hi, q))
		return kmin, kmax
	}
	a, b := d.lo/d.q, d.hi/d.q
	return math.Ceil(a - tol(a)), math.Floor(b + tol(b))
}

func tol(x float64) float64 { return 1e-9 * math.Max(1, math.Abs(x)) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

// mult returns k·q rounded to 15 significant digits, so that q = 0.1 gives
// 0.3 rather than 0.30000000000000004 (and never -0).
func mult(k, q float64) float64 {
	x := k * q
	if y, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 15, 64), 64); err == nil {
		x = y
	}
	return x + 0
}

// isMultiple reports whether x is (within rounding) a multiple of q.
func isMultiple(x, q float64) bool {
	k := x / q
	if math.IsInf(k, 0) || math.Abs(k) >= 1<<52 {
		return !math.IsNaN(x)
	}
	return math.Abs(k-math.Round(k)) <= tol(k)
}

// quantize rounds x to the nearest multiple of q; magnitudes beyond float
// resolution are returned as they are.
func quantize(x, q float64) float64 {
	k := x / q
	if math.IsInf(k, 0) || math.IsNaN(k) || math.Abs(k) >= 1<<52 {
		return x
	}
	return mult(math.Round(k), q)
}

func (d Domain) isInt() bool {
	switch d.kind {
	case KindRandInt, KindQRandInt, KindLogRandInt, KindQLogRandInt:
		return true
	}
	return false
}

func (d Domain) isLog() bool {
	switch d.kind {
	case KindLogUniform, KindQLogUniform, KindLogRandInt, KindQLogRandInt:
		return true
	}
	return false
}

func clamp(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }

// lerp maps u in [0, 1] onto [a, b] without overflowing for wide ranges.
func lerp(a, b, u float64) float64 { return clamp(a*(1-u)+b*u, math.Min(a, b), math.Max(a, b)) }

// unlerp is lerp's inverse, clamped to [0, 1].
func unlerp(a, b, x float64) float64 {
	if a == b {
		return 0.5
	}
	return clamp((x/2-a/2)/(b/2-a/2), 0, 1)
}

// span returns the interval a quantized or continuous domain draws from
// before rounding: [lo, hi], or [kmin·q, kmax·q] for quantized kinds.
func (d Domain) span() (a, b float64) {
	if d.q == 0 {
		return d.lo, d.hi
	}
	kmin, kmax := d.qrange()
	return mult(kmin, d.q), mult(kmax, d.q)
}

// Sample draws one value from the domain with r. Ints are returned as int,
// other numbers as float64, choice and grid values (a grid is sampled like a
// choice) and constants as deep copies. A Func domain is called with an
// empty config. The domain must be valid.
func (d Domain) Sample(r *rand.Rand) any { return d.sample(r, hone.Config{}) }

func (d Domain) sample(r *rand.Rand, cfg hone.Config) any {
	switch d.kind {
	case KindNormal, KindQNormal:
		return d.normalValue(r.NormFloat64())
	case KindFunc:
		return d.fn(cfg, r)
	case KindConst:
		return cloneValue(d.val)
	}
	return d.fromUnit(r.Float64())
}

func (d Domain) normalValue(z float64) float64 {
	x := clamp(d.mean+d.sd*z, -math.MaxFloat64, math.MaxFloat64)
	if d.kind == KindQNormal {
		x = quantize(x, d.q)
	}
	return x
}

// fromUnit maps u in [0, 1] to a value of the domain. Drawing u uniformly
// gives the domain's distribution (for normal kinds, through the inverse
// normal CDF).
func (d Domain) fromUnit(u float64) any {
	u = clamp(u, 0, 1)
	switch d.kind {
	case KindUniform:
		return lerp(d.lo, d.hi, u)
	case KindLogUniform:
		return clamp(math.Exp(lerp(math.Log(d.lo), math.Log(d.hi), u)), d.lo, d.hi)
	case KindQUniform, KindQLogUniform:
		a, b := d.span()
		var x float64
		if d.kind == KindQUniform {
			x = lerp(a, b, u)
		} else {
			x = math.Exp(lerp(math.Log(a), math.Log(b), u))
		}
		kmin, kmax := d.qrange()
		k := clamp(math.Round(x/d.q), kmin, kmax)
		return clamp(mult(k, d.q), d.lo, d.hi)
	case KindRandInt:
		n := d.hi - d.lo
		return int(d.lo + math.Min(math.Floor(u*n), n-1))
	case KindLogRandInt:
		x := math.Floor(math.Exp(lerp(math.Log(d.lo), math.Log(d.hi), u)))
		return int(clamp(x, d.lo, d.hi-1))
	case KindQRandInt, KindQLogRandInt:
		a, b := d.span()
		var x float64
		if d.kind == KindQRandInt {
			x = lerp(a, b, u)
		} else {
			x = math.Exp(lerp(math.Log(a), math.Log(b), u))
		}
		kmin, kmax := d.qrange()
		k := clamp(math.Round(x/d.q), kmin, kmax)
		return int(k) * int(d.q)
	case KindChoice, KindGrid:
		n := len(d.values)
		i := min(int(u*float64(n)), n-1)
		return cloneValue(d.values[i])
	case KindNormal, KindQNormal:
		u = clamp(u, 1e-15, 1-1e-15)
		return d.normalValue(math.Sqrt2 * math.Erfinv(2*u-1))
	case KindConst:
		return cloneValue(d.val)
	}
	return nil
}

// toUnit is fromUnit's inverse: fromUnit(toUnit(v)) == v for every value v
// the domain contains. Values outside the domain are clamped.
func (d Domain) toUnit(v any) (float64, error) {
	switch d.kind {
	case KindChoice, KindGrid:
		for i, c := range d.values {
			if equalValues(c, v) {
				return (float64(i) + 0.5) / float64(len(d.values)), nil
			}
		}
		return 0, fmt.Errorf("%s is not one of %s", formatValue(v), formatValue(d.values))
	case KindFunc, KindConst:
		return 0, fmt.Errorf("%s domains have no unit encoding", d.kind)
	}
	x, ok := number(v)
	if !ok || math.IsNaN(x) {
		return 0, fmt.Errorf("%s is not a number", formatValue(v))
	}
	switch d.kind {
	case KindUniform:
		return unlerp(d.lo, d.hi, x), nil
	case KindLogUniform:
		return unlerp(math.Log(d.lo), math.Log(d.hi), math.Log(clamp(x, d.lo, d.hi))), nil
	case KindQUniform, KindQRandInt:
		a, b := d.span()
		return unlerp(a, b, x), nil
	case KindQLogUniform, KindQLogRandInt:
		a, b := d.span()
		return unlerp(math.Log(a), math.Log(b), math.Log(clamp(x, a, b))), nil
	case KindRandInt:
		x = clamp(math.Floor(x), d.lo, d.hi-1)
		return (x - d.lo + 0.5) / (d.hi - d.lo), nil
	case KindLogRandInt:
		// The middle (in log space) of the u interval that floors to x.
		x = clamp(math.Floor(x), d.lo, d.hi-1)
		mid := (math.Log(x) + math.Log(x+1)) / 2
		return unlerp(math.Log(d.lo), math.Log(d.hi), mid), nil
	case KindNormal, KindQNormal:
		z := (x - d.mean) / d.sd
		return clamp(0.5*math.Erfc(-z/math.Sqrt2), 0, 1), nil
	}
	return 0, fmt.Errorf("unknown domain kind %q", string(d.kind))
}

// Contains reports whether v is a value the domain can produce: a number in
// range (ints for integer kinds, which also accept integral floats such as
// those a JSON round trip gives), a multiple of q for quantized kinds, or a
// value equal to one of a choice's or grid's values or to the constant. A
// Func domain contains everything.
func (d Domain) Contains(v any) bool {
	switch d.kind {
	case KindChoice, KindGrid:
		for _, c := range d.values {
			if equalValues(c, v) {
				return true
			}
		}
		return false
	case KindConst:
		return equalValues(d.val, v)
	case KindFunc:
		return true
	}
	x, ok := number(v)
	if !ok || math.IsNaN(x) {
		return false
	}
	switch d.kind {
	case KindUniform, KindLogUniform:
		return d.lo <= x && x <= d.hi
	case KindQUniform, KindQLogUniform:
		return d.lo <= x && x <= d.hi && isMultiple(x, d.q)
	case KindRandInt, KindLogRandInt:
		return x == math.Trunc(x) && d.lo <= x && x < d.hi
	case KindQRandInt, KindQLogRandInt:
		return x == math.Trunc(x) && d.lo <= x && x <= d.hi && math.Mod(x, d.q) == 0
	case KindNormal:
		return !math.IsInf(x, 0)
	case KindQNormal:
		return !math.IsInf(x, 0) && isMultiple(x, d.q)
	}
	return false
}

// number converts a JSON-like number to float64; booleans are not numbers
// here.
func number(v any) (float64, bool) {
	if _, isBool := v.(bool); isBool {
		return 0, false
	}
	return hone.Number(v)
}

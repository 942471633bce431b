package tpe

import (
	"math"
	"strconv"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/space"
)

// dim is one modelled parameter of the space and the coordinate its Parzen
// estimators work in.
//
// A categorical dim (choice, grid) works with category indices. A numeric
// dim works with an internal coordinate z in [lo, hi]: the value itself,
// its logarithm for log kinds, or its normal CDF for normal kinds (so that
// a normal domain's prior becomes uniform on [0, 1]). Quantized and integer
// dims have values k·q for integers k in [kmin, kmax]; their z range is
// widened by q/2 at each end so that every value owns a cell of the same
// width (in value space) and sampling then rounding treats the end values
// like the others.
type dim struct {
	path []string
	name string
	kind space.Kind

	cats []any // categories; nil for numeric dims

	log, normal, integer bool
	q                    float64 // quantum in value space; 0 if continuous
	kmin, kmax           float64 // quantized: the multipliers allowed
	vlo, vhi             float64 // bounds of the values (infinite for normal kinds)
	mean, sd             float64 // normal kinds
	lo, hi               float64 // bounds of z
}

// newDim describes p, which must not be a Func domain.
func newDim(p space.Param) *dim {
	d := &dim{path: p.Path, name: p.Name(), kind: p.Kind}
	switch p.Kind {
	case space.KindChoice, space.KindGrid:
		d.cats = p.Categories
		return d
	case space.KindNormal, space.KindQNormal:
		d.normal, d.mean, d.sd, d.q = true, p.Mean, p.SD, p.Q
		d.vlo, d.vhi = math.Inf(-1), math.Inf(1)
		d.kmin, d.kmax = math.Inf(-1), math.Inf(1)
		d.lo, d.hi = 0, 1
		return d
	}
	d.log, d.integer, d.q = p.Log, p.Integer, p.Q
	if d.integer && d.q == 0 {
		d.q = 1
	}
	d.vlo, d.vhi = p.Low, p.High
	a, b := d.vlo, d.vhi
	if d.q > 0 {
		d.kmin, d.kmax = math.Round(d.vlo/d.q), math.Round(d.vhi/d.q)
		a, b = d.vlo-d.q/2, d.vhi+d.q/2
	}
	// For log kinds a > 0: the smallest value is a positive multiple of q
	// (or an integer >= 1), so value - q/2 >= q/2.
	d.lo, d.hi = d.fwd(a), d.fwd(b)
	return d
}

// categorical reports whether d models category indices.
func (d *dim) categorical() bool { return d.cats != nil }

// quantized reports whether d's values are multiples of a quantum.
func (d *dim) quantized() bool { return d.q > 0 }

// fwd maps a value to the internal coordinate, without clamping.
func (d *dim) fwd(x float64) float64 {
	switch {
	case d.normal:
		return stdCDF((x - d.mean) / d.sd)
	case d.log:
		return math.Log(x)
	}
	return x
}

// inv maps an internal coordinate to a value (not yet quantized).
func (d *dim) inv(z float64) float64 {
	switch {
	case d.normal:
		z = clamp(z, 1e-15, 1-1e-15)
		return clamp(d.mean+d.sd*stdInvCDF(z), -math.MaxFloat64, math.MaxFloat64)
	case d.log:
		return clamp(math.Exp(z), d.vlo, d.vhi)
	}
	return clamp(z, d.vlo, d.vhi)
}

// snap rounds x to the nearest value d can produce: the nearest allowed
// multiple of q for quantized dims, x clamped to the bounds otherwise.
// Magnitudes beyond float64's integer resolution are left as they are.
func (d *dim) snap(x float64) float64 {
	if !d.quantized() {
		return clamp(x, d.vlo, d.vhi)
	}
	k := x / d.q
	if math.IsNaN(k) || math.Abs(k) >= 1<<52 {
		return x
	}
	return multiple(clamp(math.Round(k), d.kmin, d.kmax), d.q)
}

// output returns the configuration value for a snapped value x: an int for
// integer kinds, a float64 otherwise.
func (d *dim) output(x float64) any {
	if d.integer {
		return int(x)
	}
	return x
}

// cell returns the interval of z that snaps to the quantized value x,
// clipped to [lo, hi].
func (d *dim) cell(x float64) (z1, z2 float64) {
	return clamp(d.fwd(x-d.q/2), d.lo, d.hi), clamp(d.fwd(x+d.q/2), d.lo, d.hi)
}

// encode returns the coordinate of a configuration value: the category
// index for categorical dims, z for numeric ones (values out of range are
// clamped). It returns NaN when the value cannot be encoded: not one of the
// categories, not a number, or NaN.
func (d *dim) encode(v any) float64 {
	if d.categorical() {
		for i, c := range d.cats {
			if space.Choice(c).Contains(v) {
				return float64(i)
			}
		}
		return math.NaN()
	}
	if _, isBool := v.(bool); isBool {
		return math.NaN()
	}
	x, ok := hone.Number(v)
	if !ok || math.IsNaN(x) {
		return math.NaN()
	}
	if !d.normal {
		x = clamp(x, d.vlo, d.vhi)
	}
	return clamp(d.fwd(x), d.lo, d.hi)
}

// multiple returns k·q, rounded to 15 significant digits so that q = 0.1
// gives 0.3 rather than 0.30000000000000004, as the space package does.
func multiple(k, q float64) float64 {
	x := k * q
	if y, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 15, 64), 64); err == nil {
		x = y
	}
	return x + 0 // never -0
}

func clamp(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }

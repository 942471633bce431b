// Package pyfloat does float64 arithmetic the way Python and NumPy do it,
// for schedules that must equal those of Python tools bit for bit: a
// correctly rounded natural logarithm and integer power (the C library's
// log and pow round correctly in practice; Go's math.Log is off by one
// unit in the last place for about one integer in thirty, log(3) among
// them), rounding half to even (numpy.round) and truncation (int()).
package pyfloat

import (
	"math"
	"math/big"
)

// prec is the working precision, in bits, of Log and Pow: far more than
// float64's 53, so that rounding the result to float64 is correct.
const prec = 192

// Log returns the natural logarithm of x correctly rounded to float64
// (ties to even): Log(x) is the float64 nearest to ln x. Special cases are
// those of math.Log.
func Log(x float64) float64 {
	switch {
	case math.IsNaN(x) || x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	case math.IsInf(x, 1):
		return x
	case x == 1:
		return 0
	}
	// x = m·2^e with m in [1/√2, √2): ln x = e·ln 2 + ln m.
	m, e := math.Frexp(x)
	if m < math.Sqrt2/2 {
		m *= 2
		e--
	}
	bm := newFloat().SetFloat64(m)
	one := newFloat().SetInt64(1)
	z := newFloat().Quo(newFloat().Sub(bm, one), newFloat().Add(bm, one))
	ln := atanh2(z) // ln m
	if e != 0 {
		third := newFloat().Quo(one, newFloat().SetInt64(3))
		ln2 := atanh2(third) // ln 2 = 2·atanh(1/3)
		ln.Add(ln, ln2.Mul(ln2, newFloat().SetInt64(int64(e))))
	}
	f, _ := ln.Float64()
	return f
}

// atanh2 returns 2·atanh(z) = ln((1+z)/(1−z)) for |z| <= 1/3, by its
// series 2·(z + z³/3 + z⁵/5 + …).
func atanh2(z *big.Float) *big.Float {
	sum := newFloat().Set(z)
	z2 := newFloat().Mul(z, z)
	term := newFloat().Set(z)
	eps := newFloat().SetMantExp(newFloat().SetInt64(1), -prec-8)
	for k := int64(3); ; k += 2 {
		term.Mul(term, z2)
		t := newFloat().Quo(term, newFloat().SetInt64(k))
		sum.Add(sum, t)
		if t.Sign() == 0 || newFloat().Abs(t).Cmp(eps) < 0 {
			break
		}
	}
	return sum.Mul(sum, newFloat().SetInt64(2))
}

// Pow returns x**n for an integer n, correctly rounded to float64 (ties to
// even), as Python's x ** n is for a float x (and for an int x, where a
// non-negative power is exact and rounds the same way).
func Pow(x float64, n int) float64 {
	if n == 0 {
		return 1
	}
	if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
		return math.Pow(x, float64(n))
	}
	k := n
	if k < 0 {
		k = -k
	}
	r := newFloat().SetInt64(1)
	b := newFloat().SetFloat64(x)
	for ; k > 0; k >>= 1 {
		if k&1 == 1 {
			r.Mul(r, b)
		}
		b.Mul(b, b)
	}
	if n < 0 {
		r.Quo(newFloat().SetInt64(1), r)
	}
	f, _ := r.Float64()
	return f
}

// RoundHalfEven rounds x to the nearest integer, ties to even, as
// numpy.round and Python's round do.
func RoundHalfEven(x float64) float64 { return math.RoundToEven(x) }

// Int truncates x toward zero, as Python's int() does for a float.
func Int(x float64) float64 { return math.Trunc(x) }

func newFloat() *big.Float { return new(big.Float).SetPrec(prec) }

package benchutil

import (
	"fmt"
	"math"
)

// Num formats a figure for the report tables: "n/a" for NaN, three
// significant digits in %g form for very small or large magnitudes, else
// four.
func Num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case v != 0 && (math.Abs(v) < 1e-3 || math.Abs(v) >= 1e5):
		return fmt.Sprintf("%.3g", v)
	}
	return fmt.Sprintf("%.4g", v)
}

// Ratio formats a ratio for the report tables, such as "2.5×"; "n/a" for
// an infinite or NaN ratio.
func Ratio(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.3g×", v)
}

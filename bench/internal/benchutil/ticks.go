package benchutil

import (
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
)

// LogTicks marks a log axis: powers of ten labelled, over less than two
// decades also 2 and 5 times them, and over less than one decade every
// integer multiple. Ticks outside the axis range are dropped, since their
// labels would otherwise reserve room beside the plot.
type LogTicks struct {
	// Label renders a labelled tick's value (nil: %g with four
	// significant digits).
	Label func(v float64) string
}

// Ticks implements plot.Ticker.
func (t LogTicks) Ticks(lo, hi float64) []plot.Tick {
	labelled := []float64{1}
	switch {
	case hi/lo < 10:
		labelled = []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	case hi/lo < 100:
		labelled = []float64{1, 2, 5}
	}
	var out []plot.Tick
	for k := math.Floor(math.Log10(lo)); k <= math.Ceil(math.Log10(hi)); k++ {
		for m := 1.0; m <= 9; m++ {
			v := m * math.Pow(10, k)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			tk := plot.Tick{Value: v}
			if slices.Contains(labelled, m) {
				tk.Label = t.label(v)
			}
			out = append(out, tk)
		}
	}
	return out
}

// label renders v with t.Label, or its default.
func (t LogTicks) label(v float64) string {
	if t.Label != nil {
		return t.Label(v)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

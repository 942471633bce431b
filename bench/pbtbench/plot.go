package pbtbench

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"

	"github.com/hone-tune/hone/bench/internal/benchutil"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// methodColor gives every method a fixed colour.
func methodColor(m string) color.RGBA {
	switch m {
	case MethodPBT:
		return color.RGBA{0x1f, 0x77, 0xb4, 0xff}
	case MethodPB2:
		return color.RGBA{0xd6, 0x27, 0x28, 0xff}
	case MethodPBTSynch:
		return color.RGBA{0x17, 0xbe, 0xcf, 0xff}
	case MethodPB2Synch:
		return color.RGBA{0xff, 0x7f, 0x0e, 0xff}
	}
	return color.RGBA{0x55, 0x55, 0x55, 0xff}
}

// gapFloor is the smallest gap drawn on the log axis.
const gapFloor = 1e-9

// Plot draws r's curves into dir/r.FileName() and returns the file's
// path: per method the median over seeds of the incumbent's gap (the
// problem's Gap of its true metric) against budget, with a band between
// the quartiles, on a log axis, up to the nominal budget; the reference
// figures marked Plot as dotted lines.
func (r *Result) Plot(dir string) (string, error) {
	prob := r.Problem
	b := r.Budget()
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: incumbent vs budget (median, quartile band; %d seeds)", r.Title(), r.Seeds)
	p.X.Label.Text = "budget: steps reported by the population"
	p.Y.Label.Text = prob.GapLabel + " (log)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = benchutil.LogTicks{}
	// Curves fall from the top left; the top right, raised above the
	// curves, holds the legend.
	p.Legend.Top = true
	p.Legend.XOffs = vg.Points(-8)
	p.Legend.YOffs = vg.Points(-4)

	// Start where every method has reported something.
	first := 1
	for _, m := range r.Methods {
		for _, t := range r.Traces[m] {
			if len(t.Points) > 0 {
				first = max(first, t.Points[0].Budget)
			}
		}
	}
	ymin, ymax := math.Inf(1), math.Inf(-1)
	see := func(v float64) {
		if v > 0 && !math.IsInf(v, 0) {
			ymin, ymax = math.Min(ymin, math.Max(v, gapFloor)), math.Max(ymax, v)
		}
	}
	type drawn struct{ med, lower, upper plotter.XYs }
	curves := make([]drawn, len(r.Methods))
	for i, m := range r.Methods {
		for x, q := range r.Curve(m, b) {
			bud := float64(x + 1)
			if x+1 < first {
				continue
			}
			// For a maximised metric the upper quartile of the metric is
			// the lower quartile of the gap.
			g50, ga, gb := prob.Gap(q.Median), prob.Gap(q.Q25), prob.Gap(q.Q75)
			lo, hi := math.Min(ga, gb), math.Max(ga, gb)
			curves[i].med = append(curves[i].med, plotter.XY{X: bud, Y: math.Max(g50, gapFloor)})
			curves[i].lower = append(curves[i].lower, plotter.XY{X: bud, Y: math.Max(lo, gapFloor)})
			curves[i].upper = append(curves[i].upper, plotter.XY{X: bud, Y: math.Max(hi, gapFloor)})
			see(g50)
			see(lo)
			see(hi)
		}
	}
	for _, ref := range prob.References {
		if ref.Plot {
			see(prob.Gap(ref.Value))
		}
	}
	if math.IsInf(ymin, 1) {
		return "", fmt.Errorf("plot %s: nothing to draw", r.Title())
	}
	for i, m := range r.Methods {
		col := methodColor(m)
		c := curves[i]
		if len(c.lower) > 1 {
			ring := append(plotter.XYs{}, c.lower...)
			for j := len(c.upper) - 1; j >= 0; j-- {
				ring = append(ring, c.upper[j])
			}
			band, err := plotter.NewPolygon(ring)
			if err != nil {
				return "", fmt.Errorf("plot %s: %w", r.Title(), err)
			}
			band.Color = color.NRGBA{col.R, col.G, col.B, 0x30}
			band.LineStyle.Width = 0
			p.Add(band)
		}
		if len(c.med) == 0 {
			continue
		}
		line, err := plotter.NewLine(c.med)
		if err != nil {
			return "", fmt.Errorf("plot %s: %w", r.Title(), err)
		}
		line.StepStyle = plotter.PostStep
		line.Color = col
		line.Width = vg.Points(1.5)
		switch m {
		case MethodRandom:
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		case MethodPBTSynch, MethodPB2Synch:
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(1.5)}
		}
		p.Add(line)
		p.Legend.Add(m, line)
	}
	refColors := []color.RGBA{{0x2c, 0xa0, 0x2c, 0xff}, {0x94, 0x67, 0xbd, 0xff}}
	for i, ref := range prob.References {
		g := prob.Gap(ref.Value)
		if !ref.Plot || !(g > 0) {
			continue
		}
		line, err := plotter.NewLine(plotter.XYs{{X: float64(first), Y: g}, {X: float64(b), Y: g}})
		if err != nil {
			return "", fmt.Errorf("plot %s: %w", r.Title(), err)
		}
		line.Color = refColors[i%len(refColors)]
		line.Width = vg.Points(1)
		line.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
		p.Add(line)
		p.Legend.Add(ref.Name, line)
	}
	p.X.Min, p.X.Max = float64(first), float64(b)
	p.Y.Min, p.Y.Max = ymin/1.5, ymax*4
	path := filepath.Join(dir, r.FileName())
	if err := p.Save(7*vg.Inch, 5*vg.Inch, path); err != nil {
		return "", fmt.Errorf("plot %s: %w", r.Title(), err)
	}
	return path, nil
}

package searchbench

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

// methodColors gives every method a fixed colour.
var methodColors = map[string]color.RGBA{
	MethodRandom:       {0x55, 0x55, 0x55, 0xff},
	MethodHyperBand:    {0x1f, 0x77, 0xb4, 0xff},
	MethodASHA:         {0x2c, 0xa0, 0x2c, 0xff},
	MethodBOHB:         {0xd6, 0x27, 0x28, 0xff},
	MethodTPE:          {0x94, 0x67, 0xbd, 0xff},
	MethodGoptunaTPE:   {0xff, 0x7f, 0x0e, 0xff},
	MethodGoptunaTPESH: {0x8c, 0x56, 0x4b, 0xff},
}

// regretFloor is the smallest regret drawn on the log axis.
const regretFloor = 1e-6

// Plot draws r's regret-vs-budget curves (log-log; per method the median
// over seeds, with a band between the quartiles) into dir/<problem>.png
// and returns the file's path.
func (r *ProblemResult) Plot(dir string) (string, error) {
	ss := r.Summaries()
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: regret vs budget (median, quartile band; %d seeds)", r.Problem.Name, r.Seeds)
	p.X.Label.Text = "budget spent (cost of full-fidelity evaluations)"
	p.Y.Label.Text = "regret of incumbent"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = benchutil.LogTicks{}, benchutil.LogTicks{}
	// Curves fall from the top left; the bottom left stays empty.
	p.Legend.Top = false
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(8)
	p.Legend.YOffs = vg.Points(8)

	// Sample every curve on one log grid of budgets, from the first
	// full-fidelity evaluation of any method to the budget.
	lo := math.Inf(1)
	for _, s := range ss {
		for _, c := range []QuantileCurve{s.Q25, s.Median, s.Q75} {
			if len(c.Points) > 0 {
				lo = math.Min(lo, c.Points[0].Budget)
			}
		}
	}
	if math.IsInf(lo, 1) {
		return "", fmt.Errorf("plot %s: no method evaluated anything at full fidelity", r.Problem.Name)
	}
	lo = math.Max(lo, r.Budget*1e-4)
	const n = 400
	grid := make([]float64, n)
	for i := range grid {
		grid[i] = lo * math.Pow(r.Budget/lo, float64(i)/(n-1))
	}
	type sampled struct{ med, lower, upper plotter.XYs }
	curves := make([]sampled, len(ss))
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for i, s := range ss {
		for _, b := range grid {
			m, q25, q75 := s.Median.At(b), s.Q25.At(b), s.Q75.At(b)
			if !math.IsInf(m, 1) {
				curves[i].med = append(curves[i].med, plotter.XY{X: b, Y: math.Max(m, regretFloor)})
			}
			if !math.IsInf(q25, 1) {
				curves[i].lower = append(curves[i].lower, plotter.XY{X: b, Y: math.Max(q25, regretFloor)})
				curves[i].upper = append(curves[i].upper, plotter.XY{X: b, Y: math.Max(q75, regretFloor)})
			}
			for _, v := range []float64{m, q25, q75} {
				if !math.IsInf(v, 1) {
					ymin = math.Min(ymin, math.Max(v, regretFloor))
					ymax = math.Max(ymax, math.Max(v, regretFloor))
				}
			}
		}
	}
	for i, s := range ss {
		col := methodColors[s.Method]
		c := curves[i]
		if len(c.lower) > 1 {
			// An upper quartile still at +Inf is drawn at the top.
			ring := append(plotter.XYs{}, c.lower...)
			for j := len(c.upper) - 1; j >= 0; j-- {
				ring = append(ring, plotter.XY{X: c.upper[j].X, Y: math.Min(c.upper[j].Y, ymax)})
			}
			band, err := plotter.NewPolygon(ring)
			if err != nil {
				return "", err
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
			return "", err
		}
		line.StepStyle = plotter.PostStep
		line.Color = col
		line.Width = vg.Points(1.5)
		if s.Method == Baseline {
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		p.Add(line)
		p.Legend.Add(s.Method, line)
	}
	p.X.Min, p.X.Max = lo, r.Budget
	p.Y.Min, p.Y.Max = ymin, ymax
	path := filepath.Join(dir, r.Problem.Name+".png")
	if err := p.Save(7*vg.Inch, 4.5*vg.Inch, path); err != nil {
		return "", fmt.Errorf("plot %s: %w", r.Problem.Name, err)
	}
	return path, nil
}

package searchbench

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/hone-tune/hone/bench/functions"
	"github.com/hone-tune/hone/bench/internal/benchutil"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// methodColors gives the methods of today a fixed colour; others take one
// of palette in order.
var methodColors = map[string]color.RGBA{
	"random":         {0x55, 0x55, 0x55, 0xff},
	"asha":           {0x2c, 0xa0, 0x2c, 0xff},
	"goptuna-tpe":    {0xff, 0x7f, 0x0e, 0xff},
	"goptuna-tpe-sh": {0x8c, 0x56, 0x4b, 0xff},
	"optuna-tpe-hb":  {0xe3, 0x77, 0xc2, 0xff},
	"optuna-tpe-sh":  {0xbc, 0xbd, 0x22, 0xff},
	"hyperband":      {0x1f, 0x77, 0xb4, 0xff},
	"bohb":           {0xd6, 0x27, 0x28, 0xff},
	"tpe":            {0x94, 0x67, 0xbd, 0xff},
}

var palette = []color.RGBA{
	{0x17, 0xbe, 0xcf, 0xff}, {0x00, 0x00, 0x00, 0xff}, {0x99, 0x00, 0x66, 0xff}, {0x00, 0x66, 0x33, 0xff},
	{0x66, 0x33, 0x00, 0xff}, {0x33, 0x33, 0x99, 0xff}, {0xff, 0x99, 0x00, 0xff}, {0x66, 0x99, 0xff, 0xff},
}

// colorOf returns method's colour.
func colorOf(method string) color.RGBA {
	if c, ok := methodColors[method]; ok {
		return c
	}
	i := 0
	for _, m := range Methods() {
		if _, ok := methodColors[m]; ok {
			continue
		}
		if m == method {
			return palette[i%len(palette)]
		}
		i++
	}
	return palette[0]
}

// dashed reports whether method's line is dashed: the baselines'.
func dashed(method string) bool { return IsBaseline(method) }

// regretFloor is the smallest regret drawn on the log axis.
const regretFloor = 1e-6

// cellPlot draws a cell's regret-vs-budget curves (log-log; per method the
// median over seeds, with a band between the quartiles).
func cellPlot(c *Cell, legend bool) (*plot.Plot, error) {
	ss := c.Summaries()
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s, concurrency %d", c.Problem.Name, c.Concurrency)
	p.X.Label.Text = "budget spent (full-fidelity evaluations)"
	p.Y.Label.Text = "regret of incumbent"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = benchutil.LogTicks{}, benchutil.LogTicks{}
	p.Legend.Top = false
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(6)
	p.Legend.YOffs = vg.Points(6)
	p.Legend.TextStyle.Font.Size = vg.Points(8)

	// Sample every curve on one log grid of budgets, from the first
	// full-fidelity evaluation of any method to the budget.
	lo := math.Inf(1)
	for _, s := range ss {
		for _, q := range []QuantileCurve{s.Q25, s.Median, s.Q75} {
			if len(q.Points) > 0 {
				lo = math.Min(lo, q.Points[0].Budget)
			}
		}
	}
	if math.IsInf(lo, 1) {
		p.Title.Text += ": nothing evaluated at full fidelity"
		return p, nil
	}
	// At least a factor 4 of budget, so that the log axis has ticks.
	lo = math.Min(math.Max(lo, c.Budget*1e-4), c.Budget/4)
	const n = 300
	grid := make([]float64, n)
	for i := range grid {
		grid[i] = lo * math.Pow(c.Budget/lo, float64(i)/(n-1))
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
	if !(ymax > ymin) {
		ymin, ymax = ymin/2, ymin*2
	}
	for i, s := range ss {
		col := colorOf(s.Method)
		cv := curves[i]
		if len(cv.lower) > 1 {
			// An upper quartile still at +Inf is drawn at the top.
			ring := append(plotter.XYs{}, cv.lower...)
			for j := len(cv.upper) - 1; j >= 0; j-- {
				ring = append(ring, plotter.XY{X: cv.upper[j].X, Y: math.Min(cv.upper[j].Y, ymax)})
			}
			band, err := plotter.NewPolygon(ring)
			if err != nil {
				return nil, err
			}
			band.Color = color.NRGBA{col.R, col.G, col.B, 0x20}
			band.LineStyle.Width = 0
			p.Add(band)
		}
		if len(cv.med) == 0 {
			continue
		}
		line, err := plotter.NewLine(cv.med)
		if err != nil {
			return nil, err
		}
		line.StepStyle = plotter.PostStep
		line.Color = col
		line.Width = vg.Points(1.4)
		if dashed(s.Method) {
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		p.Add(line)
		if legend {
			p.Legend.Add(s.Method, line)
		}
	}
	p.X.Min, p.X.Max = lo, c.Budget
	p.Y.Min, p.Y.Max = ymin, ymax
	return p, nil
}

// savePNG draws plots side by side into path.
func savePNG(path string, plots []*plot.Plot, w, h vg.Length) error {
	img := vgimg.New(w*vg.Length(len(plots)), h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Millimeter * 2, PadTop: vg.Millimeter, PadBottom: vg.Millimeter,
		PadLeft: vg.Millimeter, PadRight: vg.Millimeter * 2}
	canvases := plot.Align([][]*plot.Plot{plots}, tiles, dc)
	for i, p := range plots {
		p.Draw(canvases[0][i])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// PlotProblem draws problem p's cells side by side, one panel per
// concurrency, into dir/<problem>.png and returns the file's name.
func PlotProblem(dir string, cells []*Cell, p *functions.Problem) (string, error) {
	var plots []*plot.Plot
	for _, c := range concurrencies(cells) {
		cell := cellOf(cells, p, c)
		if cell == nil {
			continue
		}
		pl, err := cellPlot(cell, len(plots) == 0)
		if err != nil {
			return "", err
		}
		plots = append(plots, pl)
	}
	name := p.Name + ".png"
	if err := savePNG(filepath.Join(dir, name), plots, 5*vg.Inch, 4*vg.Inch); err != nil {
		return "", fmt.Errorf("plot %s: %w", p.Name, err)
	}
	return name, nil
}

// PlotParallel draws the parallel-efficiency figure into
// dir/parallel.png: per method, against concurrency, the median over
// problem settings of the budget needed to reach random search's
// concurrency-1 final regret divided by the method's own budget at
// concurrency 1 (problems where the method never reached it at
// concurrency 1 are left out; a concurrency that never reaches it counts
// as +Inf, drawn at the top). It returns the file's name, or "" when
// there is nothing to draw.
func PlotParallel(dir string, cells []*Cell) (string, error) {
	es := Efficiencies(cells)
	cs := concurrencies(cells)
	if len(es) == 0 || len(cs) < 2 || cs[0] != 1 {
		return "", nil
	}
	p := plot.New()
	p.Title.Text = "Parallel efficiency: budget to reach random's concurrency-1 final regret ÷ budget at concurrency 1 (median over problems)"
	p.Title.TextStyle.Font.Size = vg.Points(9)
	p.X.Label.Text = "concurrency"
	p.Y.Label.Text = "budget ratio (1 = no loss)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = plot.ConstantTicks(ticksAt(cs))
	p.Y.Tick.Marker = benchutil.LogTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	// A ratio above top, or a concurrency that never reaches the target,
	// is drawn at top.
	const top = 20.0
	ymin, ymax := 0.5, 1.5
	for _, m := range methodsOf(cells) {
		var pts plotter.XYs
		for _, c := range cs {
			var rs []float64
			for _, e := range es {
				if e.Method == m && !math.IsInf(e.Budget[1], 1) {
					rs = append(rs, e.Ratio(c))
				}
			}
			if len(rs) == 0 {
				continue
			}
			sort.Float64s(rs)
			r := math.Max(math.Min(benchutil.Quantile(rs, 0.5), top), 0.05)
			ymin, ymax = math.Min(ymin, r), math.Max(ymax, r)
			pts = append(pts, plotter.XY{X: float64(c), Y: r})
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return "", err
		}
		col := colorOf(m)
		line.Color, points.Color = col, col
		line.Width = vg.Points(1.4)
		if dashed(m) {
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		p.Add(line, points)
		p.Legend.Add(m, line, points)
	}
	target, err := plotter.NewLine(plotter.XYs{{X: float64(cs[0]), Y: 1.5}, {X: float64(cs[len(cs)-1]), Y: 1.5}})
	if err != nil {
		return "", err
	}
	target.Color = color.RGBA{0xaa, 0xaa, 0xaa, 0xff}
	target.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
	p.Add(target)
	p.Legend.Add("target for hone, 1.5×", target)
	if ymax >= top {
		p.Title.Text += fmt.Sprintf("\nat %g: %g× or more, or never reached", top, top)
	}
	p.X.Min, p.X.Max = float64(cs[0])*0.8, float64(cs[len(cs)-1])*1.25
	p.Y.Min, p.Y.Max = ymin/1.2, ymax*1.2
	name := "parallel.png"
	if err := savePNG(filepath.Join(dir, name), []*plot.Plot{p}, 8*vg.Inch, 5*vg.Inch); err != nil {
		return "", err
	}
	return name, nil
}

func ticksAt(cs []int) []plot.Tick {
	var out []plot.Tick
	for _, c := range slices.Clone(cs) {
		out = append(out, plot.Tick{Value: float64(c), Label: fmt.Sprint(c)})
	}
	return out
}

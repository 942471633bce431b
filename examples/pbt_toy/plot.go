package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/hone-tune/hone/results"
)

// The plot files WritePlots writes.
const (
	ThetaPlot   = "pbt_toy_theta.png"
	QPlot       = "pbt_toy_q.png"
	LineagePlot = "pbt_toy_lineage.png"
)

// plotDPI keeps the committed images small.
const plotDPI = 80

// workerColor is the colour of worker i in every plot: blue and red, as in
// the paper's figure.
func workerColor(i int) color.Color {
	switch i % 3 {
	case 0:
		return color.RGBA{0x1f, 0x4e, 0xb4, 0xff}
	case 1:
		return color.RGBA{0xd6, 0x27, 0x28, 0xff}
	}
	return color.RGBA{0x2c, 0xa0, 0x2c, 0xff}
}

// WritePlots writes the three plots of runs into dir and returns their
// paths: θ trajectories over the contours of Q (one panel per strategy),
// Q over steps (one panel per strategy), and the h schedules of the PBT
// run's workers with their exploits, from results.Trial.Schedule and
// Lineage.
func WritePlots(dir string, runs []*Run) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	var thetas, qs []*plot.Plot
	for _, r := range runs {
		p, err := thetaPanel(r)
		if err != nil {
			return nil, err
		}
		thetas = append(thetas, p)
		p, err = qPanel(r)
		if err != nil {
			return nil, err
		}
		qs = append(qs, p)
	}
	var pbtRun *Run
	for _, r := range runs {
		if r.Strategy.Name == StrategyPBT {
			pbtRun = r
		}
	}
	if pbtRun == nil {
		return nil, fmt.Errorf("plots: no %s run for the lineage plot", StrategyPBT)
	}
	lineage, err := lineagePanels(pbtRun)
	if err != nil {
		return nil, err
	}
	files := []struct {
		name   string
		panels [][]*plot.Plot
		w, h   vg.Length
	}{
		{ThetaPlot, [][]*plot.Plot{thetas}, 12 * vg.Inch, 3.4 * vg.Inch},
		{QPlot, [][]*plot.Plot{qs}, 12 * vg.Inch, 3 * vg.Inch},
		{LineagePlot, columns(lineage), 10 * vg.Inch, 2.6 * vg.Inch * vg.Length(len(lineage))},
	}
	var paths []string
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := savePNG(p, f.panels, f.w, f.h); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// columns stacks plots in one column.
func columns(ps []*plot.Plot) [][]*plot.Plot {
	out := make([][]*plot.Plot, len(ps))
	for i, p := range ps {
		out[i] = []*plot.Plot{p}
	}
	return out
}

// savePNG draws a grid of panels into one PNG file at path.
func savePNG(path string, panels [][]*plot.Plot, w, h vg.Length) error {
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(plotDPI))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(panels), Cols: len(panels[0]),
		PadX: vg.Points(14), PadY: vg.Points(10), PadTop: vg.Points(4), PadBottom: vg.Points(4),
		PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	canvases := plot.Align(panels, tiles, dc)
	for i := range panels {
		for j, p := range panels[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("plot %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}

// contourLevels are the values of Q the θ panels draw contours at.
func contourLevels() []float64 { return []float64{-0.4, 0, 0.4, 0.8, 1.0, 1.1, Threshold} }

// thetaPanel draws the workers' θ after every step over the contours of
// Q, with the start (0.9, 0.9) ringed.
func thetaPanel(r *Run) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = r.Strategy.Title
	p.X.Label.Text = "θ0"
	p.Y.Label.Text = "θ1"
	// One legend is enough; grid search leaves its lower left empty
	// whatever the seed.
	legend := r.Strategy.Name == StrategyGrid
	xmin, xmax, ymin, ymax := -0.05, thetaStart, -0.05, thetaStart
	for _, w := range r.Workers {
		for _, pt := range w.Points {
			xmin, xmax = math.Min(xmin, pt.Theta0), math.Max(xmax, pt.Theta0)
			ymin, ymax = math.Min(ymin, pt.Theta1), math.Max(ymax, pt.Theta1)
		}
	}
	// A worker whose h turned negative runs away from 0 exponentially:
	// the panel keeps to a window around the start and the optimum, and
	// says so.
	const lo, hi = -0.6, 1.6
	if xmin < lo || ymin < lo || xmax > hi || ymax > hi {
		p.Title.Text += " (θ leaves the plot)"
	}
	xmin, xmax, ymin, ymax = math.Max(xmin, lo), math.Min(xmax, hi), math.Max(ymin, lo), math.Min(ymax, hi)
	pad := 0.05 * math.Max(xmax-xmin, ymax-ymin)
	xmin, xmax, ymin, ymax = xmin-pad, xmax+pad, ymin-pad, ymax+pad
	// The contours of Q are circles around 0 of radius √(1.2 − Q).
	for _, q := range contourLevels() {
		const n = 180
		rad := math.Sqrt(1.2 - q)
		circle := make(plotter.XYs, n+1)
		for k := range circle {
			a := 2 * math.Pi * float64(k) / n
			circle[k] = plotter.XY{X: rad * math.Cos(a), Y: rad * math.Sin(a)}
		}
		l, err := plotter.NewLine(circle)
		if err != nil {
			return nil, fmt.Errorf("plot θ of %s: %w", r.Strategy.Name, err)
		}
		l.Color, l.Width = color.Gray{0xb0}, vg.Points(0.6)
		p.Add(l)
	}
	for i, w := range r.Workers {
		xys := make(plotter.XYs, len(w.Points))
		for k, pt := range w.Points {
			xys[k] = plotter.XY{X: pt.Theta0, Y: pt.Theta1}
		}
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, fmt.Errorf("plot θ of %s: %w", r.Strategy.Name, err)
		}
		s.GlyphStyle = draw.GlyphStyle{Color: workerColor(i), Radius: vg.Points(1.6), Shape: draw.CircleGlyph{}}
		p.Add(s)
		if legend {
			p.Legend.Add(fmt.Sprintf("%s: h starts (%g, %g)", w.Name, w.Points[0].H0, w.Points[0].H1), s)
		}
	}
	start, err := plotter.NewScatter(plotter.XYs{{X: thetaStart, Y: thetaStart}})
	if err != nil {
		return nil, fmt.Errorf("plot θ of %s: %w", r.Strategy.Name, err)
	}
	start.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(4), Shape: draw.RingGlyph{}}
	p.Add(start)
	if legend {
		p.Legend.Add("θ at step 0", start)
	}
	p.Legend.Top = false
	p.Legend.Left = true
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin, xmax, ymin, ymax
	return p, nil
}

// qPanel draws each worker's Q after every step, with the maximum 1.2
// (dotted) and the threshold (dashed).
func qPanel(r *Run) (*plot.Plot, error) {
	p := plot.New()
	s := r.Summary()
	p.Title.Text = fmt.Sprintf("%s: Q < %g throughout", r.Strategy.Title, Threshold)
	if s.Reached > 0 {
		p.Title.Text = fmt.Sprintf("%s: Q ≥ %g at step %d", r.Strategy.Title, Threshold, s.Reached)
	}
	p.X.Label.Text = "step"
	p.Y.Label.Text = "Q"
	ymin := 0.0
	for _, w := range r.Workers {
		for _, pt := range w.Points {
			ymin = math.Min(ymin, pt.Q)
		}
	}
	const lo = -1.0 // a worker whose h turned negative falls far below
	if ymin < lo {
		p.Title.Text += fmt.Sprintf("\n(and falls as low as %.3g)", ymin)
		ymin = lo
	}
	for _, ref := range []struct {
		y      float64
		dashes []vg.Length
	}{{1.2, []vg.Length{vg.Points(1), vg.Points(2)}}, {Threshold, []vg.Length{vg.Points(4), vg.Points(2)}}} {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: ref.y}, {X: float64(r.Params.Steps), Y: ref.y}})
		if err != nil {
			return nil, fmt.Errorf("plot Q of %s: %w", r.Strategy.Name, err)
		}
		l.Color, l.Dashes, l.Width = color.Gray{0x60}, ref.dashes, vg.Points(0.8)
		p.Add(l)
	}
	for i, w := range r.Workers {
		xys := plotter.XYs{{X: 0, Y: Q([2]float64{thetaStart, thetaStart})}}
		for _, pt := range w.Points {
			xys = append(xys, plotter.XY{X: float64(pt.Step), Y: pt.Q})
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("plot Q of %s: %w", r.Strategy.Name, err)
		}
		l.Color, l.Width = workerColor(i), vg.Points(1.2)
		p.Add(l)
		p.Legend.Add(w.Name, l)
	}
	p.Legend.Top = false
	p.Legend.Left = false
	p.Legend.YOffs = vg.Points(10)
	p.X.Min, p.X.Max = 0, float64(r.Params.Steps)
	p.Y.Min, p.Y.Max = ymin, 1.25
	return p, nil
}

// lineagePanels draws, per worker of a PBT run, the h schedule of its
// lineage (results.Trial.Schedule: the h that trained its final θ, step by
// step) and a marker at every exploit of the lineage
// (results.Trial.Lineage), labelled with the donor: filled where the
// worker itself cloned, hollow where an ancestor did.
func lineagePanels(r *Run) ([]*plot.Plot, error) {
	names := map[string]string{} // original tag → worker name
	for _, w := range r.Workers {
		names[originalTag(w.Trial.Tag)] = w.Name
	}
	name := func(tag string) string {
		if n, ok := names[tag]; ok {
			return n
		}
		return tag
	}
	var panels []*plot.Plot
	for _, w := range r.Workers {
		sched, err := w.Trial.Schedule()
		if err != nil {
			return nil, fmt.Errorf("plot lineage: %w", err)
		}
		lin, err := w.Trial.Lineage()
		if err != nil {
			return nil, fmt.Errorf("plot lineage: %w", err)
		}
		p, err := lineagePanel(r, w, sched, lin, name)
		if err != nil {
			return nil, err
		}
		panels = append(panels, p)
	}
	return panels, nil
}

// lineagePanel draws one worker's panel of the lineage plot; name maps
// the tags in the policy log to worker names.
func lineagePanel(r *Run, w *Worker, sched []results.Step, lin []results.Exploit, name func(string) string) (*plot.Plot, error) {
	p := plot.New()
	own := 0
	for _, e := range lin {
		if name(e.Target) == w.Name {
			own++
		}
	}
	p.Title.Text = fmt.Sprintf("PBT worker %s (trial %s): the h schedule of its lineage; %d exploits by %s, %d by its ancestors",
		w.Name, w.Trial.ID, own, w.Name, len(lin)-own)
	p.X.Label.Text = "step"
	p.Y.Label.Text = "h"
	hs := [2]plotter.XYs{}
	lo, hi := 0.0, 1.0
	for i, st := range sched {
		h, err := hOf(st.Config)
		if err != nil {
			return nil, fmt.Errorf("plot lineage of %s: step from %d: %w", w.Name, st.From, err)
		}
		end := r.Params.Steps
		if i+1 < len(sched) {
			end = sched[i+1].From
		}
		for k := range hs {
			hs[k] = append(hs[k], plotter.XY{X: float64(st.From), Y: h[k]}, plotter.XY{X: float64(end), Y: h[k]})
			lo, hi = math.Min(lo, h[k]), math.Max(hi, h[k])
		}
	}
	styles := [2]struct {
		label  string
		color  color.Color
		dashes []vg.Length
	}{{"h0", color.RGBA{0x1b, 0x9e, 0x77, 0xff}, nil}, {"h1", color.RGBA{0xd9, 0x5f, 0x02, 0xff}, []vg.Length{vg.Points(5), vg.Points(2)}}}
	for k, xys := range hs {
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("plot lineage of %s: %w", w.Name, err)
		}
		l.Color, l.Dashes, l.Width = styles[k].color, styles[k].dashes, vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(styles[k].label, l)
	}
	// Exploit markers in a band above the curves, labelled with the donor.
	span := hi - lo
	mark := hi + 0.12*span
	var ownXY, ancXY plotter.XYs
	var labels plotter.XYLabels
	for _, e := range lin {
		xy := plotter.XY{X: float64(e.DonorIteration), Y: mark}
		if name(e.Target) == w.Name {
			ownXY = append(ownXY, xy)
		} else {
			ancXY = append(ancXY, xy)
		}
		labels.XYs = append(labels.XYs, plotter.XY{X: xy.X, Y: mark + 0.07*span})
		labels.Labels = append(labels.Labels, "←"+name(e.Donor))
	}
	for _, m := range []struct {
		xys   plotter.XYs
		shape draw.GlyphDrawer
		label string
	}{{ownXY, draw.TriangleGlyph{}, w.Name + " cloned ←donor"}, {ancXY, draw.RingGlyph{}, "an ancestor cloned"}} {
		if len(m.xys) == 0 {
			continue
		}
		s, err := plotter.NewScatter(m.xys)
		if err != nil {
			return nil, fmt.Errorf("plot lineage of %s: %w", w.Name, err)
		}
		s.GlyphStyle = draw.GlyphStyle{Color: workerColor(w.Trial.Index), Radius: vg.Points(3.5), Shape: m.shape}
		p.Add(s)
		p.Legend.Add(m.label, s)
	}
	if len(labels.Labels) > 0 {
		ls, err := plotter.NewLabels(labels)
		if err != nil {
			return nil, fmt.Errorf("plot lineage of %s: %w", w.Name, err)
		}
		for i := range ls.TextStyle {
			ls.TextStyle[i].Font.Size = vg.Points(7)
			ls.TextStyle[i].XAlign = draw.XCenter
		}
		p.Add(ls)
	}
	// The legend goes right of the last step.
	p.Legend.Top = true
	p.X.Min, p.X.Max = 0, 1.22*float64(r.Params.Steps)
	p.Y.Min, p.Y.Max = lo-0.08*span, mark+0.2*span
	return p, nil
}

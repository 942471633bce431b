package perf

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/hone-tune/hone/bench/internal/benchutil"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Plot file names.
const (
	throughputPlot = "perf-throughput.png"
	checkpointPlot = "perf-checkpoint.png"
)

// Plot colours, 0xRRGGBB (see rgb).
const (
	colorSim    = 0x1f77b4
	colorInproc = 0xff7f0e
	colorRaw    = 0x555555
	colorLink   = 0x2ca02c
	colorCopy   = 0xd62728
	colorHand   = 0x9467bd
)

// rgb returns the opaque colour 0xRRGGBB.
func rgb(c uint32) color.RGBA {
	return color.RGBA{uint8(c >> 16), uint8(c >> 8), uint8(c), 0xff}
}

// series is one line of a panel: per x the median of its samples, with a
// bar from the smallest sample to the largest.
type series struct {
	name    string
	color   color.RGBA
	dashed  bool // baselines are dashed
	xs      []float64
	samples [][]float64
}

// panel is one plot of a figure.
type panel struct {
	title, xLabel, yLabel string
	logY                  bool
	// si labels the ticks of the axes with k and M (1k, 10M).
	si bool
	// legendLeft puts the legend in the top left corner instead of the
	// top right.
	legendLeft bool
	series     []series
}

// writePlots draws the plots of what was measured into dir and returns
// their paths: perf-throughput.png when the scaling shape ran,
// perf-checkpoint.png when the checkpoint shape did.
func (b *bench) writePlots(dir string) ([]string, error) {
	if len(b.scalingPoints) == 0 && len(b.checkpoints) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	reps := fmt.Sprintf("median of %s, bars from the smallest to the largest", plural(b.cfg.Reps, "repetition"))
	var paths []string
	if len(b.scalingPoints) > 0 {
		p := filepath.Join(dir, throughputPlot)
		if err := drawPanels(p, 12*vg.Inch, 4.8*vg.Inch, b.throughputPanels(reps)); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	if len(b.checkpoints) > 0 {
		p := filepath.Join(dir, checkpointPlot)
		if err := drawPanels(p, 12*vg.Inch, 4.8*vg.Inch, b.checkpointPanels()); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// throughputPanels are the panels of perf-throughput.png: trials/s of
// one-result trials, and results/s of trials with several results, each
// against the number of trials, beside the baselines.
func (b *bench) throughputPanels(reps string) []panel {
	conc, per := b.cfg.Concurrency, b.cfg.ScalingResultsPerTrial
	collect := func(variant, name string, col uint32) []series {
		hone := series{name: name, color: rgb(col)}
		base := series{name: "baseline beside " + name, color: rgb(col), dashed: true}
		for _, pt := range b.scalingPoints {
			if pt.variant != variant {
				continue
			}
			hone.xs = append(hone.xs, float64(pt.trials))
			hone.samples = append(hone.samples, pt.hone)
			base.xs = append(base.xs, float64(pt.trials))
			base.samples = append(base.samples, pt.base)
		}
		if len(hone.xs) == 0 {
			return nil
		}
		return []series{hone, base}
	}
	var panels []panel
	if s := collect(scalingSimTrials, "hone, sim executor", colorSim); s != nil {
		s[1].name = "floor: map insert + channel send/receive + map update per trial"
		panels = append(panels, panel{
			title:  fmt.Sprintf("trials/s, 1 result per trial (FIFO, %d at a time)\n%s", conc, reps),
			xLabel: "trials in the experiment", yLabel: "trials/s", logY: true, si: true, series: s,
		})
	}
	var res []series
	if s := collect(scalingSimResults, "hone, sim executor", colorSim); s != nil {
		s[1].name = "channel send per result (beside sim)"
		res = append(res, s...)
	}
	if s := collect(scalingInprocResults, "hone, inproc executor", colorInproc); s != nil {
		s[1].name = "channel send per result (beside inproc)"
		res = append(res, s...)
	}
	if len(res) > 0 {
		panels = append(panels, panel{
			title:  fmt.Sprintf("results/s, %s per trial (FIFO, %d at a time)\n%s", plural(per, "result"), conc, reps),
			xLabel: "trials in the experiment", yLabel: "results/s", logY: true, si: true, series: res,
		})
	}
	return panels
}

// checkpointPanels are the panels of perf-checkpoint.png: write + commit
// MB/s against size beside the raw write + fsync, and Store.Link time
// against size beside a durable copy.
func (b *bench) checkpointPanels() []panel {
	commit := series{name: "hone: write + Commit (store/local, durable)", color: rgb(colorSim)}
	raw := series{name: "baseline: write + fsync one file", color: rgb(colorRaw), dashed: true}
	hand := series{name: "baseline: atomic commit by hand", color: rgb(colorHand), dashed: true}
	link := series{name: "hone: Store.Link (exploit)", color: rgb(colorLink)}
	cp := series{name: "baseline: durable copy (copy + fsync)", color: rgb(colorCopy), dashed: true}
	for _, f := range b.checkpoints {
		x := float64(f.size) / (1 << 20)
		commit.xs, commit.samples = append(commit.xs, x), append(commit.samples, f.commits)
		raw.xs, raw.samples = append(raw.xs, x), append(raw.samples, f.raws)
		hand.xs, hand.samples = append(hand.xs, x), append(hand.samples, f.atomics)
		link.xs, link.samples = append(link.xs, x), append(link.samples, f.links)
		cp.xs, cp.samples = append(cp.xs, x), append(cp.samples, f.copies)
	}
	reps := "median of the samples, bars from the smallest to the largest"
	return []panel{
		{
			title:  "checkpoint commit throughput against size\n" + reps,
			xLabel: "checkpoint size in MB", yLabel: "MB/s", legendLeft: true, series: []series{commit, raw, hand},
		},
		{
			title:  "exploit: Store.Link against a durable copy\n" + reps,
			xLabel: "checkpoint size in MB", yLabel: "ms", logY: true, legendLeft: true, series: []series{link, cp},
		},
	}
}

// drawPanels draws panels side by side into a PNG file at path, w × h.
func drawPanels(path string, w, h vg.Length, panels []panel) error {
	if len(panels) == 0 {
		return nil
	}
	plots := make([]*plot.Plot, len(panels))
	for i, pn := range panels {
		p, err := pn.plot()
		if err != nil {
			return fmt.Errorf("plot %s: %w", filepath.Base(path), err)
		}
		plots[i] = p
	}
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Points(18),
		PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(12)}
	canvases := plot.Align([][]*plot.Plot{plots}, tiles, dc)
	for i, p := range plots {
		p.Draw(canvases[0][i])
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("plot %s: %w", filepath.Base(path), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("plot %s: %w", filepath.Base(path), err)
	}
	return nil
}

// plot builds the panel's plot: x on a log axis, y on a log axis or a
// linear one from 0, with room above the lines for the legend.
func (pn panel) plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = pn.title
	p.X.Label.Text = pn.xLabel + " (log)"
	p.Y.Label.Text = pn.yLabel
	p.X.Scale = plot.LogScale{}
	if pn.logY {
		p.Y.Label.Text += " (log)"
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{si: pn.si}
	}
	p.Legend.Top = true
	p.Legend.Left = pn.legendLeft
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(-6), vg.Points(-4)
	if pn.legendLeft {
		p.Legend.XOffs = vg.Points(6)
	}
	xmin, xmax := math.Inf(1), math.Inf(-1)
	ymin, ymax := math.Inf(1), math.Inf(-1)
	var xs []float64
	for _, s := range pn.series {
		var pts plotter.XYs
		var errs plotter.YErrors
		for i, x := range s.xs {
			ys := s.samples[i]
			if pn.logY {
				// A log axis cannot show zero; the suite's samples are
				// positive, this only guards the drawing.
				ys = slices.DeleteFunc(slices.Clone(ys), func(v float64) bool { return !(v > 0) })
			}
			if len(ys) == 0 || !(x > 0) {
				continue
			}
			med, lo, hi := median(ys), slices.Min(ys), slices.Max(ys)
			pts = append(pts, plotter.XY{X: x, Y: med})
			if !slices.Contains(xs, x) {
				xs = append(xs, x)
			}
			errs = append(errs, struct{ Low, High float64 }{med - lo, hi - med})
			xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
			ymin, ymax = math.Min(ymin, lo), math.Max(ymax, hi)
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		line.Color, line.Width = s.color, vg.Points(1.5)
		points.Color, points.Radius = s.color, vg.Points(2.5)
		points.Shape = draw.CircleGlyph{}
		if s.dashed {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			line.Width = vg.Points(1.2)
			points.Shape = draw.BoxGlyph{}
		}
		bars, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{pts, errs})
		if err != nil {
			return nil, err
		}
		bars.Color, bars.Width, bars.CapWidth = s.color, vg.Points(1), vg.Points(5)
		p.Add(bars, line, points)
		p.Legend.Add(s.name, line, points)
	}
	if math.IsInf(xmin, 1) {
		return nil, fmt.Errorf("%q: nothing to draw", pn.title)
	}
	p.X.Min, p.X.Max = xmin/1.4, xmax*1.4
	p.X.Tick.Marker = pointTicks{xs: xs, si: pn.si}
	// The top of the plot, above the highest bar, holds the legend: a
	// line of it is about a twentieth of the plot's height.
	f := math.Min(0.6, 0.07+0.055*float64(len(pn.series)))
	if pn.logY {
		lo := ymin / 2
		p.Y.Min, p.Y.Max = lo, lo*math.Pow(ymax/lo, 1/(1-f))
	} else {
		p.Y.Min, p.Y.Max = 0, ymax/(1-f)
	}
	p.Add(plotter.NewGrid())
	return p, nil
}

// logTicks marks a log axis as benchutil.LogTicks does, with labels
// from label: with si, labels of thousands and millions end in k and M.
type logTicks struct{ si bool }

// Ticks implements plot.Ticker.
func (t logTicks) Ticks(lo, hi float64) []plot.Tick {
	return benchutil.LogTicks{Label: t.label}.Ticks(lo, hi)
}

// pointTicks marks a log axis at the measured values xs, labelled, with
// unlabelled minor ticks at every integer multiple of a power of ten.
type pointTicks struct {
	xs []float64
	si bool
}

// Ticks implements plot.Ticker.
func (t pointTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, tk := range (logTicks{si: t.si}).Ticks(lo, hi) {
		if !slices.ContainsFunc(t.xs, func(x float64) bool { return math.Abs(x-tk.Value) <= 1e-9*x }) {
			out = append(out, plot.Tick{Value: tk.Value})
		}
	}
	for _, x := range t.xs {
		if x >= lo && x <= hi {
			out = append(out, plot.Tick{Value: x, Label: (logTicks{si: t.si}).label(x)})
		}
	}
	return out
}

// label renders a tick value: 0.5, 20, 1000, or with si 1k, 300k, 10M.
func (t logTicks) label(v float64) string {
	switch {
	case t.si && v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 4, 64) + "M"
	case t.si && v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 4, 64) + "k"
	case v >= 1:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

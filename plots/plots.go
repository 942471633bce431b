// Package plots draws an experiment's charts as PNG and SVG files, for a
// report or a terminal without a browser: learning curves, the best value
// so far against time and against budget, PBT's lineage and hyperparameter
// schedules, the rungs of ASHA and HyperBand, parallel coordinates of
// configuration against metric, and with several objectives the Pareto
// front of the finished trials. The data is package report's, as the
// dashboard shows it; this package only draws it.
//
// The same experiment gives the same files, byte for byte: nothing drawn
// depends on the clock, on map order or on randomness.
package plots

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/results"
)

// The formats a figure is written in.
const (
	PNG = "png"
	SVG = "svg"
)

// Formats returns the formats Write writes: PNG and SVG.
func Formats() []string { return []string{PNG, SVG} }

// The figures' names: a figure is written to NAME.png and NAME.svg.
const (
	// NameCurves: the metric of every trial against the time attribute.
	NameCurves = "learning_curves"
	// NameBestSoFar: the best value so far against time and budget.
	NameBestSoFar = "best_so_far"
	// NameLineage: which PBT trial cloned which, and when.
	NameLineage = "pbt_lineage"
	// NameSchedules: each PBT trial's hyperparameters over iterations.
	NameSchedules = "pbt_schedules"
	// NameRungs: the trials at each rung of ASHA or HyperBand and what
	// became of them.
	NameRungs = "rungs"
	// NameParallel: parallel coordinates of configuration and metric.
	NameParallel = "parallel_coordinates"
	// NameFront: with several objectives, the Pareto front of the
	// finished trials, a panel per pair of objectives.
	NameFront = "pareto_front"
)

// Options bound what the figures draw.
type Options struct {
	// MaxTrials bounds the trials drawn in the learning curves, the
	// parallel coordinates and at each rung: the best are kept. 0 means
	// DefaultMaxTrials.
	MaxTrials int
	// MaxPoints bounds the points of a learning curve: beyond it, x is
	// binned (report.CurveLimits). 0 means DefaultMaxPoints.
	MaxPoints int
}

// The defaults of Options: enough for any chart to be read, few enough
// that a 10,000-trial experiment's SVG stays a few megabytes.
const (
	DefaultMaxTrials = 500
	DefaultMaxPoints = 1000
)

// Figure is one chart, of one or more panels stacked vertically.
type Figure struct {
	// Name is the file name without its extension (one of the Name
	// constants).
	Name string
	// Lines counts what the figure draws one of per trial: the learning
	// curves' and the parallel coordinates' lines, the lineage's and the
	// schedules' trials, the rungs' marks (one per trial and rung), the
	// best-so-far's one line. It is what a reader can count in it.
	Lines int
	// Note says what was left out, if anything ("the best 500 of 2000
	// trials").
	Note string

	panels []*plot.Plot
	width  vg.Length
	height vg.Length
}

// Skipped is a figure the experiment has no data for.
type Skipped struct {
	// Name is the figure's (one of the Name constants).
	Name string
	// Reason says what the experiment lacks for it.
	Reason string
}

// The size of a figure: a panel alone, or each of stacked panels.
const (
	figureWidth = 9 * vg.Inch
	panelHeight = 5.5 * vg.Inch
	stackHeight = 3.4 * vg.Inch
	// dpi is the PNG's resolution: 864 by 528 pixels for one panel.
	dpi = 96
)

// newFigure returns a figure of the panels, sized for them.
func newFigure(name string, panels ...*plot.Plot) *Figure {
	h := panelHeight
	if len(panels) > 1 {
		h = stackHeight * vg.Length(len(panels))
	}
	return &Figure{Name: name, panels: panels, width: figureWidth, height: h}
}

// Figures builds every figure the experiment has data for, with info's
// metric, mode (min when not set) and time attribute (training_iteration
// when not set), and says why the others were skipped. Without a metric
// there are none (every figure is skipped). For a scheduler with rungs,
// info.Brackets, when nil, is read by replaying the experiment's journal
// (report.Brackets), so that the rungs are drawn per bracket.
func Figures(e *results.Experiment, info report.Info, o Options) ([]*Figure, []Skipped, error) {
	if o.MaxTrials <= 0 {
		o.MaxTrials = DefaultMaxTrials
	}
	if o.MaxPoints <= 0 {
		o.MaxPoints = DefaultMaxPoints
	}
	if !info.Mode.Valid() {
		info.Mode = hone.Min
	}
	if info.TimeAttr == "" {
		info.TimeAttr = hone.FieldTrainingIteration
	}
	if info.Rungs != nil && info.Brackets == nil && e.Dir != "" {
		a, err := report.Brackets(e.Dir)
		if err != nil {
			a = &report.Assignment{Note: err.Error()}
		}
		info.Brackets = a
	}
	var figs []*Figure
	var skipped []Skipped
	type builder struct {
		name  string
		build func(*results.Experiment, report.Info, Options) (*Figure, string, error)
	}
	for _, b := range []builder{
		{NameCurves, curvesFigure},
		{NameBestSoFar, bestFigure},
		{NameLineage, lineageFigure},
		{NameSchedules, schedulesFigure},
		{NameRungs, rungsFigure},
		{NameParallel, parallelFigure},
		{NameFront, frontFigure},
	} {
		if info.Metric == "" {
			skipped = append(skipped, Skipped{b.name, "no metric"})
			continue
		}
		f, why, err := b.build(e, info, o)
		if err != nil {
			return nil, nil, fmt.Errorf("plot %s: %w", b.name, err)
		}
		if f == nil {
			skipped = append(skipped, Skipped{b.name, why})
			continue
		}
		figs = append(figs, f)
	}
	return figs, skipped, nil
}

// Encode writes the figure in format (PNG or SVG) to w.
func (f *Figure) Encode(w io.Writer, format string) error {
	if len(f.panels) == 0 {
		return fmt.Errorf("encode %s: the figure has nothing to draw", f.Name)
	}
	var c vg.CanvasWriterTo
	switch format {
	case PNG:
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(f.width, f.height), vgimg.UseDPI(dpi))}
	case SVG:
		c = vgsvg.New(f.width, f.height)
	default:
		return fmt.Errorf("encode %s: unknown format %q (png or svg)", f.Name, format)
	}
	dc := draw.New(c)
	if len(f.panels) == 1 {
		f.panels[0].Draw(dc)
	} else {
		grid := make([][]*plot.Plot, len(f.panels))
		for i, p := range f.panels {
			grid[i] = []*plot.Plot{p}
		}
		tiles := draw.Tiles{Rows: len(f.panels), Cols: 1, PadY: vg.Points(12), PadTop: vg.Points(4), PadBottom: vg.Points(4)}
		cs := plot.Align(grid, tiles, dc)
		for i := range grid {
			grid[i][0].Draw(cs[i][0])
		}
	}
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("encode %s as %s: %w", f.Name, format, err)
	}
	return nil
}

// Write writes each figure in each format into dir, which it makes if
// missing, as NAME.FORMAT, and returns the paths written. A file is
// written beside its final name and renamed over it, so a reader never
// sees one half written.
func Write(dir string, figs []*Figure, formats []string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("write plots to %s: %w", dir, err)
	}
	var paths []string
	for _, f := range figs {
		for _, format := range formats {
			var buf bytes.Buffer
			if err := f.Encode(&buf, format); err != nil {
				return paths, err
			}
			path := filepath.Join(dir, f.Name+"."+format)
			if err := writeFile(path, buf.Bytes()); err != nil {
				return paths, fmt.Errorf("write plots to %s: %w", dir, err)
			}
			paths = append(paths, path)
		}
	}
	return paths, nil
}

// writeFile writes data to path through a temporary file in its directory.
func writeFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err = errors.Join(err, tmp.Close()); err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// newPlot returns a panel with the title and axis labels, its text in the
// sizes every figure uses.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text, p.Y.Label.Text = x, y
	p.X.Tick.Marker, p.Y.Tick.Marker = shortTicks{}, shortTicks{}
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Legend.Top = true
	return p
}

// shortTicks are gonum's default ticks labelled in the shortest form of
// six significant digits: 10 and 2.5 rather than 10.00 and 2.50.
type shortTicks struct{}

// Ticks implements plot.Ticker.
func (shortTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 6, 64)
		}
	}
	return ts
}

// trialColor is the colour of the trial at index i of a figure: ten
// colours that tell apart on white, in turn.
func trialColor(i int) color.RGBA {
	colors := [...]color.RGBA{
		{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff},
		{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff},
		{0xbc, 0xbd, 0x22, 0xff}, {0x17, 0xbe, 0xcf, 0xff},
	}
	return colors[i%len(colors)]
}

// faded is c at the opacity a (0 to 255), premultiplied as image/color
// wants.
func faded(c color.RGBA, a uint8) color.RGBA {
	f := func(v uint8) uint8 { return uint8(uint16(v) * uint16(a) / 255) }
	return color.RGBA{f(c.R), f(c.G), f(c.B), a}
}

// bestColor is the colour of what a figure highlights: the best trial.
func bestColor() color.RGBA { return color.RGBA{0x00, 0x00, 0x00, 0xff} }

// gridColor is the colour of guide lines.
func gridColor() color.RGBA { return color.RGBA{0xbb, 0xbb, 0xbb, 0xff} }

// The line widths: a trial's line, and the best trial's, which stands out.
const (
	lineWidth = vg.Length(1.2)
	bestWidth = vg.Length(3)
)

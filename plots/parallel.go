package plots

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/results"
)

// parallelFigure draws parallel coordinates: a vertical axis per
// configuration key that varies and a last one for the metric, each
// trial a line through its values, coloured from pale blue (the worst) to
// red (the best), the best trial's thick and black on top. Each axis is
// labelled with its least and greatest value, or its categories.
func parallelFigure(e *results.Experiment, info report.Info, o Options) (*Figure, string, error) {
	pc, err := report.ParallelCoordinates(e, info, o.MaxTrials)
	if err != nil {
		return nil, "", err
	}
	if len(pc.Lines) == 0 {
		return nil, fmt.Sprintf("no trial has a score for %s", info.Metric), nil
	}
	if len(pc.Axes) < 2 {
		return nil, "no configuration key varies between the trials", nil
	}
	title := fmt.Sprintf("Parallel coordinates: configuration against %s, %s", info.Metric, plural(pc.Trials, "trial"))
	var note string
	if len(pc.Lines) < pc.Trials {
		note = fmt.Sprintf("the best %d of %d trials", len(pc.Lines), pc.Trials)
		title = fmt.Sprintf("Parallel coordinates: configuration against %s, %s", info.Metric, note)
	}
	title += fmt.Sprintf("\nin black, the best: trial %s (%s %s, %s); the better, the redder", pc.Best, info.Metric, num(pc.Lines[0].Score), info.Mode)
	p := newPlot(title, "", "")
	p.HideY()
	p.Legend.Top, p.Legend.Left = true, false
	var ticks []plot.Tick
	var labels plotter.XYLabels
	for i, ax := range pc.Axes {
		x := float64(i)
		name := ax.Name
		if ax.Kind == "log" {
			name += "\n(log)"
		}
		if i == len(pc.Axes)-1 {
			name += fmt.Sprintf("\n(%s)", info.Mode)
		}
		ticks = append(ticks, plot.Tick{Value: x, Label: name})
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: 1}})
		if err != nil {
			return nil, "", err
		}
		l.Color, l.Width = gridColor(), 1
		p.Add(l)
		if ax.Kind == "category" {
			for k, c := range ax.Categories {
				y := 0.5
				if len(ax.Categories) > 1 {
					y = float64(k) / float64(len(ax.Categories)-1)
				}
				labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: y})
				labels.Labels = append(labels.Labels, c)
			}
			continue
		}
		labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: 0}, plotter.XY{X: x, Y: 1})
		labels.Labels = append(labels.Labels, num(ax.Min), num(ax.Max))
	}
	// The worst first, so the best are drawn over them.
	for j := len(pc.Lines) - 1; j >= 0; j-- {
		ln := pc.Lines[j]
		col, width := rankColor(j, len(pc.Lines)), lineWidth
		if ln.ID == pc.Best {
			col, width = bestColor(), bestWidth
		}
		var seg plotter.XYs
		flush := func() error {
			defer func() { seg = nil }()
			if len(seg) == 0 {
				return nil
			}
			pl, _, err := trialLine(seg, col, width)
			if err != nil {
				return err
			}
			p.Add(pl)
			return nil
		}
		for i, v := range ln.Values {
			if v == nil {
				if err := flush(); err != nil {
					return nil, "", err
				}
				continue
			}
			seg = append(seg, plotter.XY{X: float64(i), Y: *v})
		}
		if err := flush(); err != nil {
			return nil, "", err
		}
	}
	lb, err := plotter.NewLabels(labels)
	if err != nil {
		return nil, "", err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].Font.Size = vg.Points(8)
		lb.TextStyle[i].XAlign = draw.XLeft
		lb.TextStyle[i].YAlign = draw.YCenter
	}
	lb.Offset = vg.Point{X: vg.Points(3)}
	p.Add(lb)
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.1, float64(len(pc.Axes))-0.4
	p.Y.Min, p.Y.Max = -0.02, 1.02
	f := newFigure(NameParallel, p)
	f.Lines, f.Note = len(pc.Lines), note
	return f, "", nil
}

// rankColor is the colour of the line ranked rank (0 the best) of n: red
// for the best, through to a pale blue for the worst.
func rankColor(rank, n int) color.RGBA {
	t := 0.0
	if n > 1 {
		t = float64(rank) / float64(n-1)
	}
	lerp := func(a, b uint8) uint8 { return uint8(float64(a) + t*(float64(b)-float64(a)) + 0.5) }
	best, worst := color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0x9e, 0xc5, 0xe8, 0xff}
	return faded(color.RGBA{lerp(best.R, worst.R), lerp(best.G, worst.G), lerp(best.B, worst.B), 0xff}, 0xc0)
}

package plots

import (
	"fmt"
	"image/color"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/results"
)

// curvesFigure draws the learning curves: every trial's metric against
// the time attribute, one line per trial in its colour, the best trial's
// thick and black on top.
func curvesFigure(e *results.Experiment, info report.Info, o Options) (*Figure, string, error) {
	c, err := report.LearningCurves(e, info, "", "", report.CurveLimits{MaxTrials: o.MaxTrials, MaxPoints: o.MaxPoints})
	if err != nil {
		return nil, "", err
	}
	if len(c.Series) == 0 {
		return nil, fmt.Sprintf("no result has both %s and %s", c.Metric, c.X), nil
	}
	title := fmt.Sprintf("Learning curves: %s against %s, %s", c.Metric, c.X, plural(c.Trials, "trial"))
	var note string
	if len(c.Series) < c.Trials {
		note = fmt.Sprintf("the best %d of %d trials", len(c.Series), c.Trials)
		title = fmt.Sprintf("Learning curves: %s against %s, %s", c.Metric, c.X, note)
	}
	if c.Binned {
		note = joinNote(note, fmt.Sprintf("%s binned into %d intervals, each trial's last value in each", c.X, len(c.Xs)))
	}
	p := newPlot(title, c.X, c.Metric)
	var best plot.Plotter
	for i, s := range c.Series {
		var xys plotter.XYs
		for k, y := range s.Ys {
			if y != nil {
				xys = append(xys, plotter.XY{X: c.Xs[k], Y: *y})
			}
		}
		col, width := faded(trialColor(i), 0xb0), lineWidth
		if s.ID == c.Best {
			col, width = bestColor(), bestWidth
		}
		pl, _, err := trialLine(xys, col, width)
		if err != nil {
			return nil, "", err
		}
		if s.ID == c.Best {
			best = pl
			continue
		}
		p.Add(pl)
	}
	if best != nil {
		p.Add(best) // on top of the others
		label := "\nin black, the best: trial " + c.Best
		if t := e.Trial(c.Best); t != nil {
			if v, ok, err := t.Score(hone.Objective{Metric: c.Metric, Mode: info.Mode}, info.Scope); err == nil && ok {
				label += fmt.Sprintf(" (%s %s, %s)", c.Metric, num(v), info.Mode)
			}
		}
		p.Title.Text += label
	}
	f := newFigure(NameCurves, p)
	f.Lines, f.Note = len(c.Series), note
	return f, "", nil
}

// trialLine draws one trial's points: a line, or a dot for a trial with a
// single point. The line is returned for the legend (nil for a dot).
func trialLine(xys plotter.XYs, col color.RGBA, width vg.Length) (plot.Plotter, *plotter.Line, error) {
	if len(xys) == 1 {
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, nil, err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: col, Radius: width + 1, Shape: draw.CircleGlyph{}}
		return s, nil, nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, nil, err
	}
	l.Color, l.Width = col, width
	return l, l, nil
}

// bestFigure draws the best value so far, against the time since the
// experiment began (above) and against the budget spent (below), a dot
// at each result that improved it.
func bestFigure(e *results.Experiment, info report.Info, _ Options) (*Figure, string, error) {
	pr, err := report.BestSoFar(e, info)
	if err != nil {
		return nil, "", err
	}
	if len(pr.Points) == 0 {
		return nil, fmt.Sprintf("no result has %s", pr.Metric), nil
	}
	last := pr.Points[len(pr.Points)-1]
	ylabel := fmt.Sprintf("best %s so far (%s)", pr.Metric, info.Mode)
	timeLabel := "seconds since the experiment began"
	if pr.NoTime {
		timeLabel = "results, in the order they arrived (some have no timestamp)"
	}
	panels := []struct {
		title, x string
		at       func(report.ProgressPoint) float64
	}{
		{fmt.Sprintf("Best %s in any result so far: %s (trial %s), %s", pr.Metric, num(last.Best), last.ID, plural(pr.Results, "result")),
			timeLabel, func(p report.ProgressPoint) float64 { return p.Time }},
		{fmt.Sprintf("Best %s so far against the budget spent: %s of %s", pr.Metric, num(pr.Budget), pr.TimeAttr),
			fmt.Sprintf("budget: the sum of %s over trials", pr.TimeAttr), func(p report.ProgressPoint) float64 { return p.Budget }},
	}
	var ps []*plot.Plot
	for _, pn := range panels {
		p := newPlot(pn.title, pn.x, ylabel)
		var line, dots plotter.XYs
		for i, pt := range pr.Points {
			xy := plotter.XY{X: pn.at(pt), Y: pt.Best}
			line = append(line, xy)
			if i == 0 || pt.Best != pr.Points[i-1].Best {
				dots = append(dots, xy)
			}
		}
		l, err := plotter.NewLine(line)
		if err != nil {
			return nil, "", err
		}
		l.StepStyle, l.Color, l.Width = plotter.PostStep, trialColor(0), 2
		s, err := plotter.NewScatter(dots)
		if err != nil {
			return nil, "", err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: trialColor(0), Radius: 3, Shape: draw.CircleGlyph{}}
		p.Add(plotter.NewGrid(), l, s)
		p.X.Min, p.X.Max = min(0, p.X.Min), max(1, p.X.Max)
		p.Legend.Add("a result that improved the best", s)
		ps = append(ps, p)
	}
	f := newFigure(NameBestSoFar, ps...)
	f.Lines = 1
	return f, "", nil
}

// num formats a value for a label: four significant digits.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// plural is "1 trial", "2 trials".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

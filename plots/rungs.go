package plots

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"

	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/results"
)

// outcomeStyle is how the rungs figure draws a trial's outcome at a rung.
type outcomeStyle struct {
	outcome string
	color   color.RGBA
	shape   draw.GlyphDrawer
}

// outcomeStyles are the outcomes in the order of the legend.
func outcomeStyles() []outcomeStyle {
	return []outcomeStyle{
		{report.OutcomePromoted, color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, draw.TriangleGlyph{}},
		{report.OutcomeCompleted, color.RGBA{0x1f, 0x77, 0xb4, 0xff}, draw.CircleGlyph{}},
		{report.OutcomeStopped, color.RGBA{0xd6, 0x27, 0x28, 0xff}, draw.CrossGlyph{}},
		{report.OutcomePaused, color.RGBA{0xff, 0x7f, 0x0e, 0xff}, draw.SquareGlyph{}},
		{report.OutcomePending, color.RGBA{0x7f, 0x7f, 0x7f, 0xff}, draw.RingGlyph{}},
		{report.OutcomeError, color.RGBA{0x00, 0x00, 0x00, 0xff}, draw.PyramidGlyph{}},
	}
}

// maxBracketPanels bounds the panels of the rungs figure: one per bracket.
const maxBracketPanels = 12

// rungsFigure draws successive halving: a column per rung, each trial that
// reached it a mark at its metric there, the best on the left, shaped and
// coloured by what became of it (promoted, stopped, ...). Below each rung
// its milestone and how many trials reached it. When info.Brackets says
// which trials ran in which bracket, each bracket that took a trial is a
// panel of its own, with its own rungs and trials; otherwise one panel
// shows the rungs of all brackets together.
func rungsFigure(e *results.Experiment, info report.Info, o Options) (*Figure, string, error) {
	rg, err := report.SuccessiveHalving(e, info, o.MaxTrials)
	if err != nil {
		return nil, "", err
	}
	if rg == nil {
		return nil, "the scheduler has no rungs (not ASHA, HyperBand, BOHB or DEHB)", nil
	}
	if len(rg.Rungs) == 0 || rg.Rungs[0].Reached == 0 {
		return nil, "no trial reached the first rung", nil
	}
	name := info.Scheduler
	if name == "" {
		name = "the scheduler"
	}
	ylabel := fmt.Sprintf("%s at the rung (%s)", rg.Metric, info.Mode)
	var panels []*plot.Plot
	var note string
	lines := 0
	if len(rg.Brackets) == 0 {
		title := fmt.Sprintf("Rungs of %s: %s where each trial reached a milestone of %s", name, rg.Metric, rg.Plan.TimeAttr)
		if rg.BracketsNote != "" {
			title += "\n(all brackets together: " + rg.BracketsNote + ")"
			note = "all brackets together: " + rg.BracketsNote
		}
		p, n, left, err := rungPanel(title, ylabel, rg.Plan.TimeAttr, rg.Rungs)
		if err != nil {
			return nil, "", err
		}
		panels, lines, note = append(panels, p), n, joinNote(note, left)
	} else {
		used := 0
		for _, b := range rg.Brackets {
			if b.Trials == 0 {
				continue
			}
			used++
			if len(panels) == maxBracketPanels {
				continue
			}
			title := fmt.Sprintf("Rungs of %s, %s: %s of its %d trials at each milestone of %s", name, b.Label, rg.Metric, b.Trials, rg.Plan.TimeAttr)
			p, n, left, err := rungPanel(title, ylabel, rg.Plan.TimeAttr, b.Rungs)
			if err != nil {
				return nil, "", err
			}
			panels, lines = append(panels, p), lines+n
			if left != "" {
				note = joinNote(note, b.Label+": "+left)
			}
		}
		if used > len(panels) {
			note = joinNote(note, fmt.Sprintf("the first %d of %d brackets", len(panels), used))
		}
	}
	f := newFigure(NameRungs, panels...)
	f.Lines, f.Note = lines, note
	return f, "", nil
}

// rungPanel draws the rungs of one bracket, or of all together, and
// returns the panel, the marks drawn and what was left out.
func rungPanel(title, ylabel, attr string, rungs []report.Rung) (*plot.Plot, int, string, error) {
	p := newPlot(title, "rung", ylabel)
	points := map[string]plotter.XYs{}
	totals := map[string]int{}
	var ticks []plot.Tick
	var note string
	for k, g := range rungs {
		label := fmt.Sprintf("%s ≥ %s\n%d reached", attr, num(g.Milestone), g.Reached)
		if len(g.Trials) < g.Reached {
			label += fmt.Sprintf(", the best %d drawn", len(g.Trials))
		}
		ticks = append(ticks, plot.Tick{Value: float64(k), Label: label})
		for out, c := range g.Counts {
			totals[out] += c
		}
		if len(g.Trials) < g.Reached {
			note = joinNote(note, fmt.Sprintf("the best %d of %d trials at %s %s", len(g.Trials), g.Reached, attr, num(g.Milestone)))
		}
		for i, t := range g.Trials {
			if t.Value == nil {
				continue
			}
			// Spread the trials across the column, best to worst.
			x := float64(k)
			if n := len(g.Trials); n > 1 {
				x += -0.35 + 0.7*float64(i)/float64(n-1)
			}
			points[t.Outcome] = append(points[t.Outcome], plotter.XY{X: x, Y: *t.Value})
		}
	}
	lines := 0
	for _, st := range outcomeStyles() {
		xys := points[st.outcome]
		if len(xys) == 0 {
			continue
		}
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, 0, "", err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: st.color, Radius: 3, Shape: st.shape}
		p.Add(s)
		p.Legend.Add(fmt.Sprintf("%s (%d)", st.outcome, totals[st.outcome]), s)
		lines += len(xys)
	}
	p.Add(plotter.NewGrid())
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.5, float64(len(rungs))-0.5
	p.Legend.Top, p.Legend.Left = true, false
	return p, lines, note, nil
}

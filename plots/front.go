package plots

import (
	"fmt"
	"image/color"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/results"
)

// The marks of the front figure.
func frontColor() color.RGBA      { return color.RGBA{0xd6, 0x27, 0x28, 0xff} }
func dominatedColor() color.RGBA  { return color.RGBA{0x7f, 0x7f, 0x7f, 0xff} }
func infeasibleColor() color.RGBA { return color.RGBA{0xff, 0x7f, 0x0e, 0xff} }

// frontFigure draws the Pareto front of the finished trials
// (report.ParetoFront): for two objectives one panel, each trial a point
// at its two values, the front's trials red and joined in the order of the
// first objective, the others grey, infeasible ones an orange cross, the
// reference point of the hypervolume a black plus. For three objectives or
// more, a panel per pair of objectives, in which the front's trials are
// red and the ones no other front trial beats on that pair are joined.
func frontFigure(e *results.Experiment, info report.Info, _ Options) (*Figure, string, error) {
	objs := info.FrontObjectives()
	if len(objs) < 2 {
		return nil, "one objective: the other charts show the best trial", nil
	}
	f, err := report.ParetoFront(e, objs, info.Constraints, info.Reference)
	if err != nil {
		return nil, "", err
	}
	if len(f.Points) == 0 {
		return nil, fmt.Sprintf("no finished trial has every objective (%s)", strings.Join(objs.Metrics(), ", ")), nil
	}
	on := f.OnFront()
	sub := fmt.Sprintf("%d of %s on the front", f.Size, plural(len(f.Points), "finished trial"))
	if len(f.Constraints) > 0 {
		sub += fmt.Sprintf(", %d feasible under %s", f.Feasible, strings.Join(f.Constraints, ", "))
	}
	hv := "no hypervolume: no feasible trial"
	if f.Hypervolume != nil {
		ref := make([]string, len(f.Reference))
		for i, v := range f.Reference {
			ref[i] = num(v)
		}
		from := "given"
		if f.ReferenceDerived {
			from = "derived from the front"
		}
		hv = fmt.Sprintf("hypervolume %s against the reference point (%s), %s", num(*f.Hypervolume), strings.Join(ref, ", "), from)
	}
	var panels []*plot.Plot
	for i := 0; i < len(objs); i++ {
		for j := i + 1; j < len(objs); j++ {
			title := fmt.Sprintf("Pareto front: %s and %s\n%s\n%s", objs[i], objs[j], sub, hv)
			if len(objs) > 2 {
				title = fmt.Sprintf("Pareto front of %d objectives: %s and %s\n%s; %s", len(objs), objs[i], objs[j], sub, hv)
			}
			p, err := frontPanel(f, on, i, j, title)
			if err != nil {
				return nil, "", err
			}
			panels = append(panels, p)
		}
	}
	fig := newFigure(NameFront, panels...)
	fig.Lines = len(f.Points)
	if f.Incomplete > 0 {
		fig.Note = fmt.Sprintf("%d finished trials lack an objective and are left out", f.Incomplete)
	}
	return fig, "", nil
}

// frontPanel draws objective j against objective i.
func frontPanel(f *report.Front, on []report.FrontPoint, i, j int, title string) (*plot.Plot, error) {
	objs := f.Objectives
	p := newPlot(title, objs[i].String(), objs[j].String())
	var dominated, infeasible plotter.XYs
	for _, pt := range f.Points {
		xy := plotter.XY{X: pt.Values[i], Y: pt.Values[j]}
		switch {
		case pt.OnFront:
		case !pt.Feasible:
			infeasible = append(infeasible, xy)
		default:
			dominated = append(dominated, xy)
		}
	}
	add := func(xys plotter.XYs, style draw.GlyphStyle, label string) error {
		if len(xys) == 0 {
			return nil
		}
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return err
		}
		s.GlyphStyle = style
		p.Add(s)
		p.Legend.Add(label, s)
		return nil
	}
	if err := add(dominated, draw.GlyphStyle{Color: faded(dominatedColor(), 0xb0), Radius: 3, Shape: draw.CircleGlyph{}}, "dominated"); err != nil {
		return nil, err
	}
	if err := add(infeasible, draw.GlyphStyle{Color: infeasibleColor(), Radius: 3.5, Shape: draw.CrossGlyph{}}, "infeasible"); err != nil {
		return nil, err
	}
	// The front joined along the pair's own front, in the order of x.
	idx := report.PairFront(on, i, j)
	line := make(plotter.XYs, 0, len(idx))
	for _, k := range idx {
		line = append(line, plotter.XY{X: on[k].Values[i], Y: on[k].Values[j]})
	}
	slices.SortStableFunc(line, func(a, b plotter.XY) int {
		if a.X != b.X {
			if a.X < b.X {
				return -1
			}
			return 1
		}
		if a.Y < b.Y {
			return -1
		}
		if a.Y > b.Y {
			return 1
		}
		return 0
	})
	if len(line) > 1 {
		l, err := plotter.NewLine(line)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = frontColor(), lineWidth
		p.Add(l)
	}
	var front, frontInfeasible plotter.XYs
	for _, pt := range on {
		xy := plotter.XY{X: pt.Values[i], Y: pt.Values[j]}
		if pt.Feasible {
			front = append(front, xy)
		} else {
			frontInfeasible = append(frontInfeasible, xy)
		}
	}
	if err := add(front, draw.GlyphStyle{Color: frontColor(), Radius: 4, Shape: draw.CircleGlyph{}}, "on the front"); err != nil {
		return nil, err
	}
	if err := add(frontInfeasible, draw.GlyphStyle{Color: frontColor(), Radius: 4.5, Shape: draw.CrossGlyph{}}, "on the front, infeasible (none is feasible)"); err != nil {
		return nil, err
	}
	if f.Reference != nil {
		ref := plotter.XYs{{X: f.Reference[i], Y: f.Reference[j]}}
		if err := add(ref, draw.GlyphStyle{Color: bestColor(), Radius: 5, Shape: draw.PlusGlyph{}}, "reference point"); err != nil {
			return nil, err
		}
	}
	// The legend in the corner of the worst values, which the front
	// stays away from.
	p.Legend.Left, p.Legend.Top = objs[i].Mode == hone.Max, objs[j].Mode != hone.Max
	p.Add(plotter.NewGrid())
	// A margin, so that the extreme points are drawn whole.
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		if m := (ax.Max - ax.Min) * 0.04; m > 0 {
			ax.Min, ax.Max = ax.Min-m, ax.Max+m
		}
	}
	return p, nil
}

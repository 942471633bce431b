package plots

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/results"
)

// noLineage is why the PBT figures are skipped.
const noLineage = "no PBT exploits (the scheduler is not PBT or PB2, or no trial exploited another yet)"

// lastIterations returns each trial's last training iteration, by id.
func lastIterations(e *results.Experiment) (map[string]float64, error) {
	out := map[string]float64{}
	for _, t := range e.Trials {
		last, err := t.Last()
		if err != nil {
			return nil, err
		}
		if v, ok := last.Value(hone.FieldTrainingIteration); ok && !math.IsNaN(v) {
			out[t.ID] = v
		}
	}
	return out, nil
}

// maxTickLabels bounds the trials named on the lineage's axis: beyond it,
// every k-th is.
const maxTickLabels = 40

// lineageFigure draws PBT's lineage: each trial a horizontal line over
// the training iterations it reached, one row per trial in the order of
// creation; each exploit a line from the donor's row at the iteration of
// the checkpoint the target restored to the target's row at the iteration
// it exploited, in the donor's colour, ending in a triangle.
func lineageFigure(e *results.Experiment, _ report.Info, _ Options) (*Figure, string, error) {
	lin, err := report.PBTLineage(e)
	if err != nil {
		return nil, "", err
	}
	if lin == nil {
		return nil, noLineage, nil
	}
	ends, err := lastIterations(e)
	if err != nil {
		return nil, "", err
	}
	p := newPlot(fmt.Sprintf("PBT lineage: %s of %s", plural(len(lin.Exploits), "exploit"), plural(len(e.Trials), "trial")),
		hone.FieldTrainingIteration, "trial")
	row := map[string]int{}
	n := len(e.Trials)
	y := func(i int) float64 { return float64(n - 1 - i) } // the first trial on top
	var ticks []plot.Tick
	every := (n + maxTickLabels - 1) / maxTickLabels
	for i, t := range e.Trials {
		row[t.ID] = i
		label := ""
		if i%every == 0 {
			label = t.ID
		}
		ticks = append(ticks, plot.Tick{Value: y(i), Label: label})
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: y(i)}, {X: ends[t.ID], Y: y(i)}})
		if err != nil {
			return nil, "", err
		}
		l.Color, l.Width = trialColor(i), 2.5
		p.Add(l)
	}
	lines := n
	var heads plotter.XYs
	for _, x := range lin.Exploits {
		ti, ok1 := row[x.TargetID]
		di, ok2 := row[x.DonorID]
		if !ok1 || !ok2 {
			continue // a tag that names no trial of the experiment
		}
		l, err := plotter.NewLine(plotter.XYs{{X: float64(x.DonorIteration), Y: y(di)}, {X: float64(x.Iteration), Y: y(ti)}})
		if err != nil {
			return nil, "", err
		}
		l.Color, l.Width = trialColor(di), 1.2
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		p.Add(l)
		heads = append(heads, plotter.XY{X: float64(x.Iteration), Y: y(ti)})
	}
	if len(heads) > 0 {
		s, err := plotter.NewScatter(heads)
		if err != nil {
			return nil, "", err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: bestColor(), Radius: 3.5, Shape: draw.TriangleGlyph{}}
		p.Add(s)
		p.Legend.Add("exploit: the target restored the donor's checkpoint (dashed from the donor)", s)
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	p.Legend.Top, p.Legend.Left = false, false
	f := newFigure(NameLineage, p)
	f.Lines = lines
	if every > 1 {
		f.Note = fmt.Sprintf("every %d-th trial named on the axis", every)
	}
	return f, "", nil
}

// maxScheduleKeys bounds the panels of the schedules figure.
const maxScheduleKeys = 6

// maxLegend bounds the trials a legend names.
const maxLegend = 12

// schedulesFigure draws PBT's hyperparameter schedules: a panel per
// hyperparameter that some exploit changed, each trial's value of it over
// training iterations as a step line in the trial's colour (the same
// colours as the lineage's).
func schedulesFigure(e *results.Experiment, _ report.Info, _ Options) (*Figure, string, error) {
	lin, err := report.PBTLineage(e)
	if err != nil {
		return nil, "", err
	}
	if lin == nil {
		return nil, noLineage, nil
	}
	if len(lin.Keys) == 0 {
		return nil, "no exploit changed a hyperparameter", nil
	}
	ends, err := lastIterations(e)
	if err != nil {
		return nil, "", err
	}
	index := map[string]int{}
	for i, t := range e.Trials {
		index[t.ID] = i
	}
	keys := lin.Keys
	var note string
	if len(keys) > maxScheduleKeys {
		note = fmt.Sprintf("the first %d of %d hyperparameters", maxScheduleKeys, len(keys))
		keys = keys[:maxScheduleKeys]
	}
	var panels []*plot.Plot
	for k, key := range keys {
		// A key with a value that is not a number is drawn on categories.
		var cats []string
		for _, s := range lin.Schedules {
			for _, st := range s.Steps {
				if v, ok := st.Values[key]; ok {
					if _, isNum := hone.Number(v); !isNum {
						cats = append(cats, report.Text(v))
					}
				}
			}
		}
		if len(cats) > 0 {
			cats = nil
			for _, s := range lin.Schedules {
				for _, st := range s.Steps {
					if v, ok := st.Values[key]; ok {
						cats = append(cats, report.Text(v))
					}
				}
			}
			slices.Sort(cats)
			cats = slices.Compact(cats)
		}
		value := func(v any) float64 {
			if cats != nil {
				return float64(slices.Index(cats, report.Text(v)))
			}
			f, _ := hone.Number(v)
			return f
		}
		p := newPlot("PBT schedule of "+key, hone.FieldTrainingIteration, key)
		for _, s := range lin.Schedules {
			var xys plotter.XYs
			var prev any
			for _, st := range s.Steps {
				v, ok := st.Values[key]
				if !ok {
					continue
				}
				xys = append(xys, plotter.XY{X: float64(st.From), Y: value(v)})
				prev = v
			}
			if len(xys) == 0 {
				continue
			}
			if end := ends[s.ID]; end > xys[len(xys)-1].X {
				xys = append(xys, plotter.XY{X: end, Y: value(prev)})
			}
			pl, ln, err := trialLine(xys, trialColor(index[s.ID]), 2)
			if err != nil {
				return nil, "", err
			}
			if ln != nil {
				ln.StepStyle = plotter.PostStep
			}
			p.Add(pl)
			if k == 0 && len(lin.Schedules) <= maxLegend && ln != nil {
				p.Legend.Add("trial "+s.ID, ln)
			}
		}
		if cats != nil {
			var ticks []plot.Tick
			for i, c := range cats {
				ticks = append(ticks, plot.Tick{Value: float64(i), Label: c})
			}
			p.Y.Tick.Marker = plot.ConstantTicks(ticks)
			p.Y.Min, p.Y.Max = -0.5, float64(len(cats))-0.5
		}
		p.Legend.Top, p.Legend.Left = true, false
		panels = append(panels, p)
	}
	f := newFigure(NameSchedules, panels...)
	f.Lines, f.Note = len(lin.Schedules), note
	return f, "", nil
}

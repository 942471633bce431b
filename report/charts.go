package report

import (
	"math"
	"slices"
	"strconv"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/results"
)

// Curves are learning curves: the metric of each trial against a time
// attribute, on a shared x axis (values of a trial where it has no point
// are nil). Many trials or points are thinned: at most MaxTrials curves,
// the best first, and at most MaxPoints x values, each the last value of
// its trial within an equal-width bin.
type Curves struct {
	// X is the result field on the x axis, Metric the one on the y axis.
	X      string `json:"x"`
	Metric string `json:"metric"`
	// Xs are the x values, ascending.
	Xs     []float64 `json:"xs"`
	Series []Series  `json:"series"`
	// Best is the id of the best trial ("" when there is none); its curve
	// is among the series.
	Best string `json:"best"`
	// Trials counts the trials with a point; Series may hold fewer.
	Trials int `json:"trials"`
	// Binned says the x values are bin centres, not the values reported.
	Binned bool `json:"binned"`
}

// Series is one trial's curve.
type Series struct {
	ID string `json:"id"`
	// Ys are its values at Curves.Xs, nil where it has none.
	Ys []*float64 `json:"ys"`
}

// CurveLimits bound a curve chart; zero means no bound.
type CurveLimits struct {
	// MaxTrials bounds the curves: the best ones are kept.
	MaxTrials int
	// MaxPoints bounds the x values: beyond it, x is binned.
	MaxPoints int
}

// DefaultCurveLimits returns limits that keep a chart of a 10,000-trial
// experiment quick to draw in a browser: 200 curves, 400 points each.
func DefaultCurveLimits() CurveLimits { return CurveLimits{MaxTrials: 200, MaxPoints: 400} }

type point struct{ x, y float64 }

// LearningCurves returns the curves of metric (info.Metric when "")
// against the result field x (info.TimeAttr when "").
func LearningCurves(e *results.Experiment, info Info, x, metric string, lim CurveLimits) (Curves, error) {
	if x == "" {
		x = info.TimeAttr
	}
	if metric == "" {
		metric = info.Metric
	}
	c := Curves{X: x, Metric: metric, Xs: []float64{}, Series: []Series{}}
	if metric == "" {
		return c, nil
	}
	type cand struct {
		t      *results.Trial
		pts    []point
		score  float64
		scored bool
	}
	var cands []cand
	for _, t := range e.Trials {
		rows, err := t.Results()
		if err != nil {
			return c, err
		}
		var pts []point
		for _, r := range rows {
			xv, ok1 := r.Value(x)
			yv, ok2 := r.Value(metric)
			if ok1 && ok2 && isFinite(xv) && isFinite(yv) {
				pts = append(pts, point{xv, yv})
			}
		}
		if len(pts) == 0 {
			continue
		}
		v, ok, err := t.Score(hone.Objective{Metric: metric, Mode: info.Mode}, info.Scope)
		if err != nil {
			return c, err
		}
		cands = append(cands, cand{t, pts, v, ok && !math.IsNaN(v)})
	}
	c.Trials = len(cands)
	if len(cands) == 0 {
		return c, nil
	}
	mode := info.Mode
	if !mode.Valid() {
		mode = hone.Min
	}
	// Best first; the rest keep their order of creation among equals.
	order := slices.Clone(cands)
	slices.SortStableFunc(order, func(a, b cand) int { return mode.Compare(a.score, a.scored, b.score, b.scored) })
	if order[0].scored {
		c.Best = order[0].t.ID
	}
	if lim.MaxTrials > 0 && len(order) > lim.MaxTrials {
		order = order[:lim.MaxTrials]
	}
	// Shown in creation order, so colours stay put as results arrive.
	slices.SortFunc(order, func(a, b cand) int { return a.t.Index - b.t.Index })
	distinct := map[float64]bool{}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, cd := range order {
		for _, p := range cd.pts {
			distinct[p.x] = true
			lo, hi = min(lo, p.x), max(hi, p.x)
		}
	}
	if lim.MaxPoints <= 0 || len(distinct) <= lim.MaxPoints {
		c.Xs = sortedFloats(distinct)
		at := make(map[float64]int, len(c.Xs))
		for i, v := range c.Xs {
			at[v] = i
		}
		for _, cd := range order {
			ys := make([]*float64, len(c.Xs))
			for _, p := range cd.pts {
				ys[at[p.x]] = ptr(p.y)
			}
			c.Series = append(c.Series, Series{ID: cd.t.ID, Ys: ys})
		}
		return c, nil
	}
	n := lim.MaxPoints
	w := (hi - lo) / float64(n)
	c.Binned = true
	for i := range n {
		c.Xs = append(c.Xs, lo+(float64(i)+0.5)*w)
	}
	for _, cd := range order {
		ys := make([]*float64, n)
		for _, p := range cd.pts {
			ys[min(n-1, int((p.x-lo)/w))] = ptr(p.y)
		}
		c.Series = append(c.Series, Series{ID: cd.t.ID, Ys: ys})
	}
	return c, nil
}

// Parallel is a parallel-coordinates chart: one axis per numeric or
// categorical configuration key and a last one for the metric; one line
// per trial with a score, its values scaled to [0, 1] on each axis.
type Parallel struct {
	// Axes are the configuration keys, sorted, then the metric.
	Axes []Axis `json:"axes"`
	// Lines are the trials, best first.
	Lines []Line `json:"lines"`
	// Trials counts the trials with a score; Lines may hold fewer (the
	// best MaxLines).
	Trials int `json:"trials"`
	// Best is the best trial's id.
	Best string `json:"best"`
}

// Axis is one axis of a parallel-coordinates chart.
type Axis struct {
	// Name is the configuration key (as NumericLeaves names it) or the
	// metric.
	Name string `json:"name"`
	// Kind is linear, log or category.
	Kind string `json:"kind"`
	// Min and Max are the values at the bottom and the top of the axis.
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// Categories are a category axis's values, bottom to top.
	Categories []string `json:"categories,omitempty"`
}

// Line is one trial of a parallel-coordinates chart.
type Line struct {
	ID string `json:"id"`
	// Values are scaled to [0, 1], one per axis; nil where the trial has
	// no value for the key.
	Values []*float64 `json:"values"`
	// Score is the trial's score, unscaled.
	Score float64 `json:"score"`
}

// ParallelCoordinates returns the chart for the best maxLines trials
// (all when maxLines <= 0).
func ParallelCoordinates(e *results.Experiment, info Info, maxLines int) (Parallel, error) {
	p := Parallel{Axes: []Axis{}, Lines: []Line{}}
	if info.Metric == "" {
		return p, nil
	}
	type item struct {
		t      *results.Trial
		leaves map[string]any
		score  float64
	}
	var items []item
	for _, t := range e.Trials {
		v, ok, err := t.Score(info.Objective, info.Scope)
		if err != nil {
			return p, err
		}
		if !ok || !isFinite(v) {
			continue
		}
		items = append(items, item{t, NumericLeaves(t.Config), v})
	}
	p.Trials = len(items)
	if len(items) == 0 {
		return p, nil
	}
	slices.SortStableFunc(items, func(a, b item) int {
		switch {
		case info.Mode.Better(a.score, b.score):
			return -1
		case info.Mode.Better(b.score, a.score):
			return 1
		}
		return 0
	})
	p.Best = items[0].t.ID
	if maxLines > 0 && len(items) > maxLines {
		items = items[:maxLines]
	}
	keys := map[string]bool{}
	for _, it := range items {
		for k := range it.leaves {
			keys[k] = true
		}
	}
	for _, k := range sortedKeys(keys) {
		ax := Axis{Name: k, Kind: "linear", Min: math.Inf(1), Max: math.Inf(-1)}
		cats := map[string]bool{}
		numeric, distinct := true, map[string]bool{}
		for _, it := range items {
			v, ok := it.leaves[k]
			if !ok {
				continue
			}
			distinct[Text(v)] = true
			if f, ok := hone.Number(v); ok && isFinite(f) {
				ax.Min, ax.Max = min(ax.Min, f), max(ax.Max, f)
			} else {
				numeric = false
				cats[Text(v)] = true
			}
		}
		if len(distinct) < 2 {
			continue // a constant tells nothing
		}
		if !numeric {
			ax = Axis{Name: k, Kind: "category", Categories: sortedKeys(distinct), Max: float64(len(distinct) - 1)}
		} else if ax.Min > 0 && ax.Max/ax.Min >= 100 {
			ax.Kind = "log"
		}
		p.Axes = append(p.Axes, ax)
	}
	metric := Axis{Name: info.Metric, Kind: "linear", Min: math.Inf(1), Max: math.Inf(-1)}
	for _, it := range items {
		metric.Min, metric.Max = min(metric.Min, it.score), max(metric.Max, it.score)
	}
	p.Axes = append(p.Axes, metric)
	for _, it := range items {
		ln := Line{ID: it.t.ID, Score: it.score}
		for i, ax := range p.Axes {
			var v any
			if i == len(p.Axes)-1 {
				v = it.score
			} else if x, ok := it.leaves[ax.Name]; ok {
				v = x
			} else {
				ln.Values = append(ln.Values, nil)
				continue
			}
			ln.Values = append(ln.Values, ptr(ax.scale(v)))
		}
		p.Lines = append(p.Lines, ln)
	}
	return p, nil
}

// scale maps a value to [0, 1] on the axis.
func (ax Axis) scale(v any) float64 {
	if ax.Kind == "category" {
		i := slices.Index(ax.Categories, Text(v))
		if len(ax.Categories) < 2 {
			return 0.5
		}
		return float64(i) / float64(len(ax.Categories)-1)
	}
	f, _ := hone.Number(v)
	lo, hi := ax.Min, ax.Max
	if ax.Kind == "log" {
		f, lo, hi = math.Log(f), math.Log(lo), math.Log(hi)
	}
	if hi == lo {
		return 0.5
	}
	return (f - lo) / (hi - lo)
}

// NumericLeaves flattens a configuration for charts: nested maps by key
// path ("model/width"), and lists of numbers one element per key
// ("h[0]", "h[1]"); other leaves as they are.
func NumericLeaves(cfg hone.Config) map[string]any {
	out := map[string]any{}
	hone.Flatten("", map[string]any(cfg), func(k string, leaf any) {
		if xs, ok := leaf.([]any); ok && len(xs) > 0 && len(xs) <= 16 {
			all := true
			for _, x := range xs {
				if _, ok := hone.Number(x); !ok {
					all = false
				}
			}
			if all {
				for i, x := range xs {
					out[k+"["+strconv.Itoa(i)+"]"] = x
				}
				return
			}
		}
		out[k] = leaf
	})
	return out
}

func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func ptr(f float64) *float64 { return &f }

func sortedFloats(m map[float64]bool) []float64 {
	out := make([]float64, 0, len(m))
	for v := range m {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

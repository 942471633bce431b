package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/hone-tune/hone/results"
)

// Threshold is the Q the comparison asks each strategy to reach; Q ≥ 1.19
// means |θ| ≤ 0.1.
const Threshold = 1.19

// Run is one strategy's experiment as read back from its directory with
// package results: every number in it comes from the results the workers
// reported.
type Run struct {
	Strategy Strategy
	Params   Params
	Dir      string
	Workers  []*Worker // in creation order
}

// Worker is one trial of a run.
type Worker struct {
	Name   string // "w0", "w1": by creation order
	Trial  *results.Trial
	Points []Point // its results, in the order it reported them
}

// Point is one reported result: the state after a step.
type Point struct {
	Step           int // training_iteration
	Q              float64
	Theta0, Theta1 float64
	H0, H1         float64
}

// ReadRun opens the experiment in dir and reads every worker's results.
func ReadRun(dir string, s Strategy, p Params) (*Run, error) {
	e, err := results.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	run := &Run{Strategy: s, Params: p, Dir: e.Dir}
	for i, t := range e.Trials {
		rows, err := t.Results()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		w := &Worker{Name: fmt.Sprintf("w%d", i), Trial: t}
		for n, row := range rows {
			var pt Point
			fields := []struct {
				key string
				dst *float64
			}{{MetricQ, &pt.Q}, {MetricTheta0, &pt.Theta0}, {MetricTheta1, &pt.Theta1}, {MetricH0, &pt.H0}, {MetricH1, &pt.H1}}
			for _, f := range fields {
				v, ok := row.Value(f.key)
				if !ok {
					return nil, fmt.Errorf("%s: trial %s: result %d has no %q", s.Name, t.ID, n+1, f.key)
				}
				*f.dst = v
			}
			it, ok := row.Value("training_iteration")
			if !ok {
				return nil, fmt.Errorf("%s: trial %s: result %d has no training_iteration", s.Name, t.ID, n+1)
			}
			pt.Step = int(it)
			w.Points = append(w.Points, pt)
		}
		if len(w.Points) == 0 {
			return nil, fmt.Errorf("%s: trial %s reported nothing", s.Name, t.ID)
		}
		run.Workers = append(run.Workers, w)
	}
	if len(run.Workers) == 0 {
		return nil, fmt.Errorf("%s: no trials in %s", s.Name, dir)
	}
	return run, nil
}

// Summary is one line of the comparison table.
type Summary struct {
	// FinalBest is the best worker's Q after the last step.
	FinalBest float64
	// Best is the best Q any worker reported at any step.
	Best float64
	// Reached is the first step at which a worker reported
	// Q ≥ Threshold, or 0 if none did.
	Reached int
}

// Summary computes r's line of the table.
func (r *Run) Summary() Summary {
	s := Summary{FinalBest: math.Inf(-1), Best: math.Inf(-1)}
	last := 0
	for _, w := range r.Workers {
		last = max(last, w.Points[len(w.Points)-1].Step)
	}
	for _, w := range r.Workers {
		for _, pt := range w.Points {
			s.Best = math.Max(s.Best, pt.Q)
			if pt.Q >= Threshold && (s.Reached == 0 || pt.Step < s.Reached) {
				s.Reached = pt.Step
			}
		}
		if end := w.Points[len(w.Points)-1]; end.Step == last {
			s.FinalBest = math.Max(s.FinalBest, end.Q)
		}
	}
	return s
}

// WriteTable writes the comparison table: per strategy, the final best
// Q, the best Q, and the first step with Q ≥ Threshold.
func WriteTable(w io.Writer, runs []*Run) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "strategy\tfinal best Q\tbest Q\tfirst step with Q ≥ %g\n", Threshold)
	for _, r := range runs {
		s := r.Summary()
		reached := "never"
		if s.Reached > 0 {
			reached = fmt.Sprint(s.Reached)
		}
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%s\n", r.Strategy.Title, s.FinalBest, s.Best, reached)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// WriteSweepTable writes, per strategy, in how many of the comparisons
// (one per seed; each a list of runs in Strategies order) some worker
// reached Q ≥ Threshold, the median first step among those that did, and
// the median final best Q.
func WriteSweepTable(w io.Writer, comparisons [][]*Run) error {
	if len(comparisons) == 0 {
		return fmt.Errorf("write sweep table: no comparisons")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "strategy\treached Q ≥ %g\tmedian first step (of those)\tmedian final best Q\n", Threshold)
	for i, r0 := range comparisons[0] {
		var steps []int
		var finals []float64
		for _, runs := range comparisons {
			s := runs[i].Summary()
			if s.Reached > 0 {
				steps = append(steps, s.Reached)
			}
			finals = append(finals, s.FinalBest)
		}
		med := "-"
		if len(steps) > 0 {
			med = fmt.Sprint(median(toFloats(steps)))
		}
		fmt.Fprintf(tw, "%s\t%d of %d\t%s\t%.4f\n", r0.Strategy.Title, len(steps), len(comparisons), med, median(finals))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write sweep table: %w", err)
	}
	return nil
}

func toFloats(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// median returns the median of xs (the mean of the middle two for an
// even count); xs must not be empty.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// originalTag returns a trial's experiment tag without what PBT appended
// ("<tag>@perturbed[...]"), the form its policy log names it by.
func originalTag(tag string) string {
	if i := strings.IndexByte(tag, '@'); i >= 0 {
		return tag[:i]
	}
	return tag
}

package report

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/pareto"
	"github.com/hone-tune/hone/results"
)

// Front is the Pareto front of an experiment's finished trials: with
// several objectives, what takes the place of the best trial. Each
// TERMINATED trial's last result is a point, one value per objective;
// the front is the points no other beats on every objective. With
// constraints, the points are ranked by Deb's constrained domination
// (pareto.SortConstrained): while any trial is feasible, the front holds
// feasible trials only. The hypervolume is that of the front's feasible
// points against the reference point.
type Front struct {
	// Objectives are the objectives, in order: a point's Values follow
	// it.
	Objectives hone.Objectives `json:"objectives"`
	// Constraints are the constraints as the spec writes them
	// ("memory_mb ≤ 4000").
	Constraints []string `json:"constraints,omitempty"`
	// Points are every finished trial with a finite value of every
	// objective, in creation order.
	Points []FrontPoint `json:"points,omitempty"`
	// Finished counts the TERMINATED trials; Incomplete those of them
	// left out of Points because their last result lacks an objective
	// (or holds NaN or an infinity there).
	Finished   int `json:"finished"`
	Incomplete int `json:"incomplete"`
	// Feasible counts the points that satisfy every constraint.
	Feasible int `json:"feasible"`
	// Size counts the points on the front.
	Size int `json:"size"`
	// Hypervolume is the volume the front's feasible points dominate up
	// to Reference, in the product of the metrics' units; nil without a
	// feasible point on the front.
	Hypervolume *float64 `json:"hypervolume"`
	// Reference is the reference point, one value per objective in the
	// metric's own units and direction; nil with Hypervolume.
	Reference []float64 `json:"reference"`
	// ReferenceDerived says the reference point was derived from the
	// front (pareto.Reference: the front's worst value of each
	// objective, moved 10% of the front's range further), not given.
	ReferenceDerived bool `json:"reference_derived"`
}

// FrontPoint is one finished trial as the front sees it.
type FrontPoint struct {
	ID    string `json:"id"`
	Index int    `json:"index"`
	// Values are the objectives' values in the trial's last result, in
	// the order of Front.Objectives.
	Values []float64 `json:"values"`
	// Rank is the trial's non-dominated rank: 0 on the front, 1 on the
	// front of the rest, and so on; infeasible trials rank after every
	// feasible one.
	Rank int `json:"rank"`
	// OnFront is Rank == 0.
	OnFront bool `json:"front"`
	// Feasible says the trial satisfies every constraint; Broken lists
	// those it does not, as the spec writes them.
	Feasible bool     `json:"feasible"`
	Broken   []string `json:"broken,omitempty"`
	// Config holds the configuration's leaves by key path.
	Config map[string]any `json:"config"`

	losses []float64
}

// ParetoFront returns the front of e's finished trials under objs and
// cs. ref, when given, is the hypervolume's reference point, one value
// per objective in the metrics' own units and directions (a maximised
// metric's reference is below the values that count); without it the
// reference point is derived from the front (pareto.Reference). With one
// objective the front is the best trial, or the trials tied for best.
func ParetoFront(e *results.Experiment, objs hone.Objectives, cs hone.Constraints, ref []float64) (*Front, error) {
	if len(objs) == 0 {
		return nil, errors.New("pareto front: the experiment has no objective")
	}
	objs = objs.WithDefaults()
	if ref != nil {
		if len(ref) != len(objs) {
			return nil, fmt.Errorf("pareto front: reference point: %d values for %d objectives (%s): give one per objective, in order",
				len(ref), len(objs), strings.Join(objs.Metrics(), ", "))
		}
		for i, v := range ref {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("pareto front: reference point: %s = %v: must be a finite number", objs[i].Metric, v)
			}
		}
	}
	f := &Front{Objectives: objs, Points: []FrontPoint{}}
	for _, c := range cs {
		f.Constraints = append(f.Constraints, c.String())
	}
	var points [][]float64
	var violation []float64
	for _, t := range e.Trials {
		if t.Status != hone.StatusTerminated {
			continue
		}
		f.Finished++
		last, err := t.Last()
		if err != nil {
			return nil, fmt.Errorf("pareto front: %w", err)
		}
		p, ok := frontPoint(t, last, objs, cs)
		if !ok {
			f.Incomplete++
			continue
		}
		if p.Feasible {
			f.Feasible++
		}
		f.Points = append(f.Points, p)
		points = append(points, p.losses)
		violation = append(violation, cs.Violation(asResult(last)))
	}
	if len(points) == 0 {
		return f, nil
	}
	ranks := pareto.SortConstrained(points, violation)
	var hvPoints [][]float64
	for i := range f.Points {
		p := &f.Points[i]
		p.Rank, p.OnFront = ranks[i], ranks[i] == 0
		if p.OnFront {
			f.Size++
			if p.Feasible {
				hvPoints = append(hvPoints, p.losses)
			}
		}
	}
	if len(hvPoints) == 0 {
		return f, nil
	}
	refLoss := make([]float64, len(objs))
	if ref != nil {
		for i, o := range objs {
			refLoss[i] = o.Loss(ref[i])
		}
	} else {
		refLoss = pareto.Reference(hvPoints)
		f.ReferenceDerived = true
	}
	hv := pareto.Hypervolume(hvPoints, refLoss)
	f.Hypervolume = &hv
	f.Reference = make([]float64, len(objs))
	for i, o := range objs {
		f.Reference[i] = o.Loss(refLoss[i]) // Loss is its own inverse
	}
	return f, nil
}

// asResult is a result row as a *hone.Result, for the objectives and
// constraints to read: its user metrics, and the auto fields they may
// name.
func asResult(r results.Row) *hone.Result {
	num := func(k string) float64 { v, _ := r.Value(k); return v }
	res := &hone.Result{Metrics: r,
		TrainingIteration:      int(num(hone.FieldTrainingIteration)),
		TimeThisIter:           num(hone.FieldTimeThisIter),
		TimeTotal:              num(hone.FieldTimeTotal),
		TimeSinceRestore:       num(hone.FieldTimeSinceRestore),
		IterationsSinceRestore: int(num(hone.FieldIterationsSinceRestore)),
		Done:                   num(hone.FieldDone) != 0,
	}
	if ts, ok := r.Value(hone.FieldTimestamp); ok {
		res.Timestamp = time.Unix(int64(ts), 0)
	}
	return res
}

// frontPoint reads a trial's point from its last result: false when the
// result lacks an objective, or holds NaN or an infinity there.
func frontPoint(t *results.Trial, last results.Row, objs hone.Objectives, cs hone.Constraints) (FrontPoint, bool) {
	if last == nil {
		return FrontPoint{}, false
	}
	r := asResult(last)
	p := FrontPoint{ID: t.ID, Index: t.Index, Feasible: true, Config: map[string]any{}}
	for _, o := range objs {
		v, ok := o.Value(r)
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			return FrontPoint{}, false
		}
		p.Values = append(p.Values, v)
		p.losses = append(p.losses, o.Loss(v))
	}
	for _, c := range cs {
		if c.Violation(r) > 0 {
			p.Feasible = false
			p.Broken = append(p.Broken, c.String())
		}
	}
	hone.Flatten("", map[string]any(t.Config), func(k string, leaf any) { p.Config[k] = leaf })
	return p, true
}

// OnFront returns the points on the front, ordered by the first
// objective, best first, then by the others, then by creation.
func (f *Front) OnFront() []FrontPoint {
	var out []FrontPoint
	for _, p := range f.Points {
		if p.OnFront {
			out = append(out, p)
		}
	}
	slices.SortStableFunc(out, func(a, b FrontPoint) int {
		for i := range a.losses {
			if c := cmp.Compare(a.losses[i], b.losses[i]); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.Index, b.Index)
	})
	return out
}

// Losses returns the point's objectives as losses to minimise, in the
// order of Front.Objectives (hone.Objective.Loss).
func (p FrontPoint) Losses() []float64 { return slices.Clone(p.losses) }

// PairFront returns the indices, into pts, of the points that no other
// of pts beats on both objectives i and j: the front of a pair of
// objectives, which a chart of that pair joins. pts are usually a
// front's points on the front.
func PairFront(pts []FrontPoint, i, j int) []int {
	proj := make([][]float64, len(pts))
	for k, p := range pts {
		proj[k] = []float64{p.losses[i], p.losses[j]}
	}
	return pareto.Front(proj)
}

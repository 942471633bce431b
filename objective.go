package hone

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Mode says whether a metric is minimised or maximised.
type Mode string

// The two modes.
const (
	Min Mode = "min"
	Max Mode = "max"
)

// Valid reports whether m is "min" or "max".
func (m Mode) Valid() bool { return m == Min || m == Max }

// Validate returns an error naming m unless it is "min", "max" or empty
// (empty: the default applies).
func (m Mode) Validate() error {
	if m != "" && !m.Valid() {
		return fmt.Errorf("mode = %q: allowed values are \"min\" and \"max\"", string(m))
	}
	return nil
}

// Better reports whether a is strictly better than b under m. NaN is never
// better than anything, and anything non-NaN is better than NaN.
func (m Mode) Better(a, b float64) bool {
	if math.IsNaN(a) {
		return false
	}
	if math.IsNaN(b) {
		return true
	}
	if m == Max {
		return a > b
	}
	return a < b
}

// Compare orders two trials' values best first under m, for sorting: it
// returns −1 if a goes first, 1 if b does, 0 if neither. A missing value
// (ok false) goes after any present one; two missing are equal.
func (m Mode) Compare(a float64, aOK bool, b float64, bOK bool) int {
	switch {
	case aOK && !bOK:
		return -1
	case !aOK && bOK:
		return 1
	case !aOK:
		return 0
	case m.Better(a, b):
		return -1
	case m.Better(b, a):
		return 1
	}
	return 0
}

// Score maps a metric value to a score where higher is better (metric for
// max, −metric for min).
func (m Mode) Score(v float64) float64 {
	if m == Max {
		return v
	}
	return -v
}

// Loss maps a metric value to a loss where lower is better (metric for
// min, −metric for max): the value a minimising model is fitted to.
func (m Mode) Loss(v float64) float64 { return -m.Score(v) }

// Objective is one number an experiment optimises: the result field Metric
// (a user metric or an auto-filled field, see Result.Value), minimised or
// maximised as Mode says. With a Metric, an empty Mode means Min (see
// WithDefaults).
//
// It is the one place that knows how to read the objective from a result
// and how to compare, score and turn values into losses; schedulers,
// searchers and the tools that rank trials use its methods rather than
// deriving any of that from a metric name and a mode.
type Objective struct {
	Metric string `json:"metric" yaml:"metric"`
	Mode   Mode   `json:"mode" yaml:"mode"`

	// sum, for an objective made by Objectives.Scalarized, is its terms;
	// Metric is then a name for logs, not a metric.
	sum *weightedSum
}

// WithDefaults returns o with the default mode, min, if it names a metric
// and no mode.
func (o Objective) WithDefaults() Objective {
	if o.Metric != "" && o.Mode == "" {
		o.Mode = Min
	}
	return o
}

// Or returns o with the fields it leaves empty taken from fallback, and
// the default mode if neither has one (WithDefaults): a plugin's own
// objective falls back to the experiment's field by field, so a scheduler
// may name only a metric, or only a mode.
func (o Objective) Or(fallback Objective) Objective {
	if o.Metric == "" {
		o.Metric = fallback.Metric
	}
	if o.Mode == "" {
		o.Mode = fallback.Mode
	}
	return o.WithDefaults()
}

// AsList returns o with its defaults as a list of one, or none if o is
// the zero Objective: the list form of the one-objective shorthand
// (metric and mode).
func (o Objective) AsList() Objectives {
	if o == (Objective{}) {
		return nil
	}
	return Objectives{o.WithDefaults()}
}

// Validate checks that Mode is empty, "min" or "max", and that a Mode
// comes with a Metric. Its messages name the field and the allowed values.
func (o Objective) Validate() error {
	if err := o.Mode.Validate(); err != nil {
		return err
	}
	if o.Mode != "" && o.Metric == "" {
		return errors.New("mode is set but metric is empty")
	}
	return nil
}

// Value reads the objective from r: the numeric value of its metric (see
// Result.Value), with ok false when r lacks it or holds something other
// than a number there. NaN is returned as is, with ok true; Better and
// Compare rank it below every number.
func (o Objective) Value(r *Result) (v float64, ok bool) {
	if o.sum != nil {
		return o.sum.value(r)
	}
	return r.Value(o.Metric)
}

// Better reports whether value a is strictly better than b (Mode.Better).
func (o Objective) Better(a, b float64) bool { return o.Mode.Better(a, b) }

// Compare orders two values best first, a missing one last
// (Mode.Compare).
func (o Objective) Compare(a float64, aOK bool, b float64, bOK bool) int {
	return o.Mode.Compare(a, aOK, b, bOK)
}

// Score maps a value to a score where higher is better (Mode.Score).
func (o Objective) Score(v float64) float64 { return o.Mode.Score(v) }

// Loss maps a value to the loss to minimise: v under min, −v under max.
func (o Objective) Loss(v float64) float64 { return o.Mode.Loss(v) }

// String returns "metric (mode)", with the default mode when o has none.
func (o Objective) String() string {
	o = o.WithDefaults()
	return fmt.Sprintf("%s (%s)", o.Metric, o.Mode)
}

// Objectives is the list form of an experiment's objectives, in the
// order given; the first is the primary one. With one objective every
// searcher and scheduler optimises it; with several, only those that
// implement MultiObjective run (Experiment.Validate), each as its
// documentation says: a Pareto front (non-dominated sorting), or one
// weighted sum (Scalarized).
type Objectives []Objective

// MultiObjective is an optional ability of searchers and schedulers: they
// take several objectives at once. Experiment.Validate calls
// CheckObjectives with the experiment's objectives and constraints when
// there are several objectives, or any constraint, and refuses the
// experiment with its error; nil means the plugin handles them (a
// scalarising scheduler checks that it has one weight per objective). A
// searcher or scheduler without it optimises one objective and honours no
// constraint, and an experiment with several objectives or a constraint
// refuses it with an error wrapping ErrOneObjective.
type MultiObjective interface {
	CheckObjectives(Objectives, Constraints) error
}

// ErrOneObjective is what Experiment.Validate wraps when a searcher or
// scheduler that optimises one objective (it does not implement
// MultiObjective) is given several objectives or a constraint.
var ErrOneObjective = errors.New("it optimises one objective and honours no constraint")

// Primary returns the first objective, or the zero Objective when there
// is none.
func (os Objectives) Primary() Objective {
	if len(os) == 0 {
		return Objective{}
	}
	return os[0]
}

// WithDefaults returns a copy of os in which every objective has a mode.
func (os Objectives) WithDefaults() Objectives {
	if os == nil {
		return nil
	}
	out := make(Objectives, len(os))
	for i, o := range os {
		out[i] = o.WithDefaults()
	}
	return out
}

// Metrics returns the objectives' metrics, in order.
func (os Objectives) Metrics() []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = o.Metric
	}
	return out
}

// Validate checks every objective: each must name its metric, once, with
// a valid mode. Its messages name the objective by its index.
func (os Objectives) Validate() error {
	seen := make(map[string]int, len(os))
	for i, o := range os {
		if o.Metric == "" {
			return fmt.Errorf("objectives[%d]: metric is empty", i)
		}
		if err := o.Validate(); err != nil {
			return fmt.Errorf("objectives[%d]: %w", i, err)
		}
		if j, dup := seen[o.Metric]; dup {
			return fmt.Errorf("objectives[%d]: metric %q is objectives[%d]'s already", i, o.Metric, j)
		}
		seen[o.Metric] = i
	}
	return nil
}

// Losses reads every objective from r as a loss to minimise (Loss), in
// order, into dst (grown as needed), and reports whether r had them all:
// the point a Pareto front ranks. A missing or NaN value is +Inf, worse
// than any number.
func (os Objectives) Losses(dst []float64, r *Result) ([]float64, bool) {
	dst = dst[:0]
	all := true
	for _, o := range os {
		v, ok := o.Value(r)
		if !ok || math.IsNaN(v) {
			all = false
			dst = append(dst, math.Inf(1))
			continue
		}
		dst = append(dst, o.Loss(v))
	}
	return dst, all
}

// Scalarized returns the one objective that a scheduler ranking trials by
// a single number (median stopping, PBT) optimises when there are several:
// the weighted sum Σ wᵢ·scoreᵢ, maximised, where scoreᵢ is objective i's
// value as a score, higher being better (Objective.Score). Weights are one
// per objective, finite and not all zero; scale them to the metrics'
// ranges, since the sum adds the metrics' own units. With one objective
// and no weights it returns that objective. A result lacking one of the
// metrics lacks the sum (Value's ok is false).
func (os Objectives) Scalarized(weights []float64) (Objective, error) {
	if len(os) == 1 && len(weights) == 0 {
		return os[0].WithDefaults(), nil
	}
	if len(weights) != len(os) {
		return Objective{}, fmt.Errorf("weights: %d given for %d objectives (%s): give one per objective, in order", len(weights), len(os), strings.Join(os.Metrics(), ", "))
	}
	nonzero := false
	var name strings.Builder
	for i, w := range weights {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return Objective{}, fmt.Errorf("weights[%d] = %v: must be a finite number", i, w)
		}
		nonzero = nonzero || w != 0
		if i > 0 {
			name.WriteString(" + ")
		}
		fmt.Fprintf(&name, "%g·%s", w, os[i].WithDefaults())
	}
	if !nonzero {
		return Objective{}, errors.New("weights: all zero: give at least one objective a weight")
	}
	return Objective{Metric: name.String(), Mode: Max,
		sum: &weightedSum{objs: os.WithDefaults(), weights: slices.Clone(weights)}}, nil
}

// Ranked returns the one objective that a scheduler ranking trials by a
// single number optimises: with several objectives, their weighted sum
// (Scalarized); else the scheduler's own objective, each field falling
// back to the primary one's (Objective.Or). CheckRanked checks beforehand
// what Ranked needs; given weights that do not fit, Ranked returns the
// error and the primary objective.
func (os Objectives) Ranked(own Objective, weights []float64) (Objective, error) {
	if len(os) > 1 || len(weights) > 0 {
		o, err := os.Scalarized(weights)
		if err != nil {
			return own.Or(os.Primary()), err
		}
		return o, nil
	}
	return own.Or(os.Primary()), nil
}

// Ranking is the objective of a scheduler that ranks trials by a single
// number: its own objective (Own, whose empty fields are the experiment's
// primary objective's) and, for an experiment with several objectives,
// Weights (Objectives.Ranked). A scheduler embeds it, set when it is
// built; Objective works the objective out once, on first use, and
// CheckObjectives makes the scheduler a MultiObjective. It is not part of
// the scheduler's state: a restored scheduler works it out again.
type Ranking struct {
	// Plugin names the scheduler in errors and logs.
	Plugin  string
	Own     Objective
	Weights []float64

	ranked *Objective
}

// Objective returns the objective the scheduler ranks by, worked out from
// c's objectives on the first call. Weights that do not fit (an
// experiment that was not validated) are logged, and the scheduler ranks
// by its own objective with the primary one's defaults.
func (r *Ranking) Objective(c Control) Objective {
	if r.ranked == nil {
		o, err := c.Objectives().Ranked(r.Own, r.Weights)
		if err != nil {
			c.Logf("%s: %v; ranking by %s", r.Plugin, err, o)
		}
		r.ranked = &o
	}
	return *r.ranked
}

// CheckObjectives implements MultiObjective for the scheduler that embeds
// r (CheckRanked).
func (r *Ranking) CheckObjectives(objs Objectives, cs Constraints) error {
	return CheckRanked(r.Plugin, r.Own, r.Weights, objs, cs)
}

// CheckRanked is the MultiObjective check of a scheduler that ranks trials
// by a single number (Ranked), plugin naming it: several objectives need
// one weight each and no objective of the scheduler's own (own), and such
// a scheduler honours no constraint. Its errors are *ParamError.
func CheckRanked(plugin string, own Objective, weights []float64, objs Objectives, cs Constraints) error {
	switch {
	case len(cs) > 0:
		return &ParamError{Plugin: plugin, Err: fmt.Errorf("constraints (%d given) are not honoured by a scheduler that ranks trials by one number: leave them to the searcher and the results, or use another scheduler", len(cs))}
	case len(objs) > 1 && own.Metric != "":
		return &ParamError{Plugin: plugin, Param: "metric", Err: fmt.Errorf("metric = %q: with several objectives the scheduler ranks by their weighted sum; give weights instead", own.Metric)}
	}
	if _, err := objs.Ranked(own, weights); err != nil {
		return &ParamError{Plugin: plugin, Param: "weights", Err: err}
	}
	return nil
}

// CheckSorted is the MultiObjective check of a scheduler that ranks trials
// by non-dominated sorting of every objective (MO-ASHA, MO-HyperBand),
// plugin naming it and name in its messages: with several objectives it
// takes no metric or mode of its own (own). Its errors are *ParamError.
func CheckSorted(plugin, name string, own Objective, objs Objectives) error {
	switch {
	case len(objs) < 2:
		return nil
	case own.Metric != "":
		return &ParamError{Plugin: plugin, Param: "metric", Err: fmt.Errorf("metric = %q: with several objectives %s ranks trials by all of them (%s); leave metric empty", own.Metric, name, strings.Join(objs.Metrics(), ", "))}
	case own.Mode != "":
		return &ParamError{Plugin: plugin, Param: "mode", Err: fmt.Errorf("mode = %q: with several objectives each takes its own mode; leave mode empty", own.Mode)}
	}
	return nil
}

// weightedSum is a scalarised objective's terms (Objectives.Scalarized).
type weightedSum struct {
	objs    Objectives
	weights []float64
}

// value is the weighted sum of r's scores, with ok false when r lacks one
// of the metrics.
func (w *weightedSum) value(r *Result) (float64, bool) {
	sum := 0.0
	for i, o := range w.objs {
		v, ok := o.Value(r)
		if !ok {
			return 0, false
		}
		sum += w.weights[i] * o.Score(v)
	}
	return sum, true
}

// Constraint bounds a metric: a configuration is feasible when each of
// the experiment's constraints holds for its result, that is when the
// metric is at most Below and at least Above (either may be nil, not
// both). A result that lacks the metric, or holds NaN there, is
// infeasible.
type Constraint struct {
	Metric string   `json:"metric" yaml:"metric"`
	Below  *float64 `json:"below,omitempty" yaml:"below,omitempty"`
	Above  *float64 `json:"above,omitempty" yaml:"above,omitempty"`
}

// Validate checks that c names a metric and a finite bound, with Above
// not beyond Below.
func (c Constraint) Validate() error {
	switch {
	case c.Metric == "":
		return errors.New("metric is empty")
	case c.Below == nil && c.Above == nil:
		return fmt.Errorf("%s: give below (the largest feasible value), above (the smallest), or both", c.Metric)
	case c.Below != nil && (math.IsNaN(*c.Below) || math.IsInf(*c.Below, 0)):
		return fmt.Errorf("%s: below = %v: must be a finite number", c.Metric, *c.Below)
	case c.Above != nil && (math.IsNaN(*c.Above) || math.IsInf(*c.Above, 0)):
		return fmt.Errorf("%s: above = %v: must be a finite number", c.Metric, *c.Above)
	case c.Below != nil && c.Above != nil && *c.Above > *c.Below:
		return fmt.Errorf("%s: above = %v is greater than below = %v: no value is feasible", c.Metric, *c.Above, *c.Below)
	}
	return nil
}

// Violation is how far r is from satisfying c: 0 when it holds, else the
// distance from the value to the bound it crosses, and +Inf when r lacks
// the metric or holds NaN there.
func (c Constraint) Violation(r *Result) float64 {
	v, ok := r.Value(c.Metric)
	if !ok || math.IsNaN(v) {
		return math.Inf(1)
	}
	switch {
	case c.Below != nil && v > *c.Below:
		return v - *c.Below
	case c.Above != nil && v < *c.Above:
		return *c.Above - v
	}
	return 0
}

// String returns the constraint as the spec writes it, e.g.
// "memory_mb ≤ 4000".
func (c Constraint) String() string {
	switch {
	case c.Below != nil && c.Above != nil:
		return fmt.Sprintf("%g ≤ %s ≤ %g", *c.Above, c.Metric, *c.Below)
	case c.Below != nil:
		return fmt.Sprintf("%s ≤ %g", c.Metric, *c.Below)
	case c.Above != nil:
		return fmt.Sprintf("%s ≥ %g", c.Metric, *c.Above)
	}
	return c.Metric
}

// Constraints are an experiment's constraints, all of which a feasible
// configuration satisfies.
type Constraints []Constraint

// Validate checks each constraint; its messages name it by its index.
func (cs Constraints) Validate() error {
	for i, c := range cs {
		if err := c.Validate(); err != nil {
			return fmt.Errorf("constraints[%d]: %w", i, err)
		}
	}
	return nil
}

// Violation is the sum of r's violations of every constraint (0: r is
// feasible), the measure by which Deb's constrained domination ranks
// infeasible points.
func (cs Constraints) Violation(r *Result) float64 {
	sum := 0.0
	for _, c := range cs {
		sum += c.Violation(r)
	}
	return sum
}

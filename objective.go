package hone

import (
	"errors"
	"fmt"
	"math"
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
func (o Objective) Value(r *Result) (v float64, ok bool) { return r.Value(o.Metric) }

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
// order given; the first is the primary one, which every scheduler and
// searcher optimises today. Several objectives are not supported yet:
// Validate refuses more than one with ErrSeveralObjectives.
type Objectives []Objective

// ErrSeveralObjectives is what Objectives.Validate wraps when there is more
// than one objective, which hone does not support yet.
var ErrSeveralObjectives = errors.New("several objectives are not supported yet: give one metric and mode")

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

// Validate checks every objective (each must name its metric, once) and
// refuses more than one with an error wrapping ErrSeveralObjectives. Its
// messages name the objective by its index.
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
	if len(os) > 1 {
		return fmt.Errorf("objectives: %d given (%s): %w", len(os), strings.Join(os.Metrics(), ", "), ErrSeveralObjectives)
	}
	return nil
}

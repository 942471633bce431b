// Package stopper holds the stock stop conditions: a maximum number of
// iterations, metric thresholds, plateaus and user functions. Each is a
// hone.Stopper; the experiment's time budget is hone.Experiment.TimeBudget.
package stopper

import (
	"fmt"
	"math"

	"github.com/hone-tune/hone"
)

// MaxIterations stops a trial once its training_iteration reaches N.
type MaxIterations int

// ShouldStop implements hone.Stopper.
func (n MaxIterations) ShouldStop(_ string, r *hone.Result) bool {
	return r.TrainingIteration >= int(n)
}

// ShouldStopAll implements hone.Stopper; it never stops the experiment.
func (MaxIterations) ShouldStopAll() bool { return false }

// Threshold stops a trial once a result field reaches a value: at or above
// it for mode max, at or below it for mode min. Ray's dict stopper
// ({"mean_accuracy": 0.9}) is Threshold{Field, 0.9, hone.Max}. As there,
// a result without the field fails the experiment (hone.FieldStopper).
type Threshold struct {
	Field string
	Value float64
	Mode  hone.Mode // default max
}

// ShouldStop implements hone.Stopper.
func (s Threshold) ShouldStop(_ string, r *hone.Result) bool {
	v, ok := r.Value(s.Field)
	if !ok || math.IsNaN(v) {
		return false
	}
	if s.Mode == hone.Min {
		return v <= s.Value
	}
	return v >= s.Value
}

// ShouldStopAll implements hone.Stopper; it never stops the experiment.
func (Threshold) ShouldStopAll() bool { return false }

var _ hone.FieldStopper = Threshold{}

// Fields implements hone.FieldStopper: every result must hold Field, as a
// number.
func (s Threshold) Fields() []string { return []string{s.Field} }

// Func stops trials by a user function of the trial id and result.
type Func func(trialID string, r *hone.Result) bool

// ShouldStop implements hone.Stopper.
func (f Func) ShouldStop(id string, r *hone.Result) bool { return f(id, r) }

// ShouldStopAll implements hone.Stopper; it never stops the experiment.
func (Func) ShouldStopAll() bool { return false }

// Plateau stops a trial whose metric has stopped moving: after at least
// GracePeriod results, when the standard deviation of its last NumResults
// values of Metric is below Std. Results without the metric are skipped.
// Its state is per trial and lives on the controller's goroutine.
type Plateau struct {
	Metric      string
	Std         float64 // default 0.01
	NumResults  int     // default 4
	GracePeriod int     // default 4
	history     map[string][]float64
}

// NewPlateau returns a plateau stopper with Ray's defaults (std 0.01, the
// last 4 results, a grace period of 4 results).
func NewPlateau(metric string) *Plateau {
	return &Plateau{Metric: metric, Std: 0.01, NumResults: 4, GracePeriod: 4}
}

// Validate names the first invalid field.
func (p *Plateau) Validate() error {
	switch {
	case p.Metric == "":
		return fmt.Errorf("plateau stopper: metric is required")
	case p.Std < 0:
		return fmt.Errorf("plateau stopper: std = %v: must be >= 0", p.Std)
	case p.NumResults < 2:
		return fmt.Errorf("plateau stopper: num_results = %d: must be >= 2", p.NumResults)
	case p.GracePeriod < 0:
		return fmt.Errorf("plateau stopper: grace_period = %d: must be >= 0", p.GracePeriod)
	}
	return nil
}

// ShouldStop implements hone.Stopper.
func (p *Plateau) ShouldStop(id string, r *hone.Result) bool {
	v, ok := r.Value(p.Metric)
	if !ok || math.IsNaN(v) {
		return false
	}
	if p.history == nil {
		p.history = map[string][]float64{}
	}
	h := append(p.history[id], v)
	if len(h) > p.NumResults {
		h = h[len(h)-p.NumResults:]
	}
	p.history[id] = h
	if r.TrainingIteration < p.GracePeriod || len(h) < p.NumResults {
		return false
	}
	mean := 0.0
	for _, x := range h {
		mean += x
	}
	mean /= float64(len(h))
	ss := 0.0
	for _, x := range h {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss/float64(len(h))) < p.Std
}

// ShouldStopAll implements hone.Stopper; it never stops the experiment.
func (*Plateau) ShouldStopAll() bool { return false }

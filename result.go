package hone

import (
	"math"
	"time"
)

// Result is one report from a trial: the user's metrics plus the fields
// hone fills in (docs/SEMANTICS.md §2). The controller fills the auto fields; the
// Metrics map belongs to the Result once reported and must not be modified.
type Result struct {
	TrialID string
	Metrics map[string]any // user metrics as reported

	TrainingIteration      int
	TimeThisIter           float64 // seconds
	TimeTotal              float64 // seconds, across restores
	TimeSinceRestore       float64 // seconds
	IterationsSinceRestore int
	Timestamp              time.Time
	Done                   bool
	PID                    int
	Hostname               string

	// Checkpoint is the checkpoint this result carried, once committed.
	Checkpoint *Checkpoint
}

// Names of the auto-filled result fields, as written to result.json.
const (
	FieldTrainingIteration      = "training_iteration"
	FieldTimeThisIter           = "time_this_iter_s"
	FieldTimeTotal              = "time_total_s"
	FieldTimeSinceRestore       = "time_since_restore"
	FieldIterationsSinceRestore = "iterations_since_restore"
	FieldTimestamp              = "timestamp"
	FieldDate                   = "date"
	FieldPID                    = "pid"
	FieldHostname               = "hostname"
	FieldTrialID                = "trial_id"
	FieldExperimentTag          = "experiment_tag"
	FieldDone                   = "done"
	FieldConfig                 = "config"
	FieldCheckpointDirName      = "checkpoint_dir_name"
)

// Value returns the numeric value of a result field: an auto field by its
// result.json name, or a user metric (numbers and booleans; booleans are 0
// or 1). ok is false if the field is missing or not numeric. NaN is
// returned as is.
func (r *Result) Value(name string) (v float64, ok bool) {
	if r == nil {
		return 0, false
	}
	switch name {
	case FieldTrainingIteration:
		return float64(r.TrainingIteration), true
	case FieldTimeThisIter:
		return r.TimeThisIter, true
	case FieldTimeTotal:
		return r.TimeTotal, true
	case FieldTimeSinceRestore:
		return r.TimeSinceRestore, true
	case FieldIterationsSinceRestore:
		return float64(r.IterationsSinceRestore), true
	case FieldTimestamp:
		return float64(r.Timestamp.Unix()), true
	case FieldDone:
		if r.Done {
			return 1, true
		}
		return 0, true
	}
	return Number(r.Metrics[name])
}

// Number converts a JSON-like value to float64: numbers and booleans
// convert; everything else reports ok = false.
func Number(x any) (float64, bool) {
	switch n := x.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case int16:
		return float64(n), true
	case int8:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint8:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint64:
		return float64(n), true
	case uint32:
		return float64(n), true
	case bool:
		if n {
			return 1, true
		}
		return 0, true
	case interface{ Float64() (float64, error) }: // json.Number
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// Mode says whether a metric is minimised or maximised.
type Mode string

// The two modes.
const (
	Min Mode = "min"
	Max Mode = "max"
)

// Valid reports whether m is "min" or "max".
func (m Mode) Valid() bool { return m == Min || m == Max }

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

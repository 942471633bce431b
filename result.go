package hone

import "time"

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

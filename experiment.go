package hone

import (
	"fmt"
	"strings"
	"time"
)

// FailureConfig says what happens when a trial fails (docs/SEMANTICS.md §3).
type FailureConfig struct {
	// MaxFailures is how many times a trial is retried: 0 never, -1 without
	// limit.
	MaxFailures int `json:"max_failures,omitempty" yaml:"max_failures"`
	// FailFast stops the whole experiment at the first trial error.
	FailFast bool `json:"fail_fast,omitempty" yaml:"fail_fast"`
}

// Validate names the first invalid field.
func (f FailureConfig) Validate() error {
	if f.MaxFailures < -1 {
		return fmt.Errorf("failure.max_failures = %d: must be -1 (unlimited), 0 (no retries) or a positive count", f.MaxFailures)
	}
	return nil
}

// Experiment is what to tune and how. The zero values of optional fields
// are the defaults given in each field's comment.
type Experiment struct {
	// Name names the experiment directory under the storage root.
	Name string
	// Trainable names what is trained; it starts every trial directory
	// name. Default "trainable".
	Trainable string
	// Metric and Mode are the objective, the one-objective form (as
	// Optuna's direction): Mode defaults to "min" when Metric is set. Both
	// empty: no objective (a searcher and scheduler that compare trials
	// then need their own).
	Metric string
	Mode   Mode
	// Objectives is the list form (as Optuna's directions), an
	// alternative to Metric and Mode: set one or the other. The first is
	// the primary objective. With several, the searcher and the scheduler
	// must implement MultiObjective (Validate checks).
	// ResolvedObjectives reads whichever form is set.
	Objectives Objectives
	// Constraints make a configuration infeasible when its result breaks
	// one; like several objectives, they need a searcher and a scheduler
	// that implement MultiObjective.
	Constraints Constraints
	// Searcher proposes configurations. Required.
	Searcher Searcher
	// Scheduler decides about running trials. Default: FIFO.
	Scheduler Scheduler
	// Stoppers stop trials or the experiment.
	Stoppers []Stopper
	// MaxConcurrentTrials caps running trials; 0 = as many as resources
	// allow.
	MaxConcurrentTrials int
	// MaxPendingTrials caps how many trials wait PENDING at once (created
	// ahead of free slots, so a scheduler can choose among them or
	// time-multiplex a population). 0 asks the searcher (PendingLimit):
	// max(16, ⌈1.1 × the trials that can run at once⌉) for searchers that
	// do not learn from results, else 1.
	MaxPendingTrials int
	// Resources is what each trial needs (default: 1 CPU). ResourcesFn,
	// if set, overrides it per configuration.
	Resources   Resources
	ResourcesFn func(Config) Resources
	// Checkpoint is the retention policy for every trial.
	Checkpoint CheckpointConfig
	// Failure is the retry policy.
	Failure FailureConfig
	// TimeBudget stops the experiment after this much time (on the
	// executor's clock) since it started; 0 = no limit.
	TimeBudget time.Duration
	// TrialTimeout ends a trial whose current run (since it last started
	// or restored) has lasted longer than this, on the executor's clock;
	// it counts as a failure (retried under Failure.MaxFailures). 0 = no
	// limit. With an executor whose trials may wait in a queue
	// (StartAnnouncer), a run starts when the trial leaves the queue.
	TrialTimeout time.Duration
	// ReportTimeout ends a running trial that has not reported (a result
	// or a save) for this long, on the executor's clock, counted from its
	// run's start until its first report; it counts as a failure. 0 = no
	// limit.
	ReportTimeout time.Duration
	// Seed seeds every random choice hone makes.
	Seed uint64
	// Callbacks are told what happens.
	Callbacks []Callback
}

// Validate checks the fields that do not depend on a plugin and names the
// first invalid one.
func (e *Experiment) Validate() error {
	if e.Searcher == nil {
		return fmt.Errorf("experiment: searcher is required")
	}
	if err := (Objective{Metric: e.Metric, Mode: e.Mode}).Validate(); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	if len(e.Objectives) > 0 && (e.Metric != "" || e.Mode != "") {
		return fmt.Errorf("experiment: objectives and metric/mode are both set: set metric and mode for one objective, or objectives alone")
	}
	if err := e.Objectives.Validate(); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	if err := e.Constraints.Validate(); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	if objs := e.ResolvedObjectives(); len(objs) > 1 || len(e.Constraints) > 0 {
		if err := checkObjectives("searcher", e.Searcher, objs, e.Constraints); err != nil {
			return err
		}
		if e.Scheduler != nil {
			if err := checkObjectives("scheduler", e.Scheduler, objs, e.Constraints); err != nil {
				return err
			}
		}
	}
	if e.MaxPendingTrials < 0 {
		return fmt.Errorf("experiment: max_pending_trials = %d: must be >= 0 (0 = the searcher's choice)", e.MaxPendingTrials)
	}
	if e.MaxConcurrentTrials < 0 {
		return fmt.Errorf("experiment: max_concurrent_trials = %d: must be >= 0 (0 = no limit)", e.MaxConcurrentTrials)
	}
	if e.TimeBudget < 0 {
		return fmt.Errorf("experiment: time_budget = %v: must be >= 0", e.TimeBudget)
	}
	if e.TrialTimeout < 0 {
		return fmt.Errorf("experiment: trial_timeout = %v: must be >= 0 (0 = no limit)", e.TrialTimeout)
	}
	if e.ReportTimeout < 0 {
		return fmt.Errorf("experiment: report_timeout = %v: must be >= 0 (0 = no limit)", e.ReportTimeout)
	}
	if err := e.Resources.Validate(); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	if err := e.Checkpoint.Validate(); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	if err := e.Failure.Validate(); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	return nil
}

// checkObjectives asks plugin, the experiment's searcher or scheduler (the
// kind), whether it handles objs and cs (MultiObjective).
func checkObjectives(kind string, plugin any, objs Objectives, cs Constraints) error {
	m, ok := plugin.(MultiObjective)
	if !ok {
		return fmt.Errorf("experiment: %d objectives (%s) and %d constraints, but the %s (%T) cannot take them: %w",
			len(objs), strings.Join(objs.Metrics(), ", "), len(cs), kind, plugin, ErrOneObjective)
	}
	if err := m.CheckObjectives(objs, cs); err != nil {
		return fmt.Errorf("experiment: %s: %w", kind, err)
	}
	return nil
}

// ResolvedObjectives returns the experiment's objectives with their
// defaults: Objectives when set, else the one of Metric and Mode, else
// none; every mode defaults to min.
func (e *Experiment) ResolvedObjectives() Objectives {
	if len(e.Objectives) > 0 {
		return e.Objectives.WithDefaults()
	}
	return Objective{Metric: e.Metric, Mode: e.Mode}.AsList()
}

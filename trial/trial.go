// Package trial is the Go API of a trainable: what training code sees of
// hone. A trainable comes in one of two styles:
//
//   - a [Func] gets a [Session], reads its configuration and restore point
//     from it, and reports metrics (and checkpoints it wrote itself) through
//     [Session.Report], which blocks until hone says how to go on;
//   - a [Trainable] (class style) is driven by hone one [Trainable.Step] at a
//     time, and hone can ask it to save at any moment, so pausing and
//     exploiting it never lose progress.
//
// Executors (package executor/inproc in process; [Main] and [MainClass] in
// a trial process that package executor/process started) implement
// [Session] and drive [Trainable]s; training code only implements the
// interfaces and calls the Session. The package also holds the small
// helpers executors share: [Stager] for checkpoint staging directories and
// [Guard] for turning panics in training code into errors.
package trial

import (
	"context"

	"github.com/hone-tune/hone"
)

// Metrics is one report of a trainable: metric names to JSON-like values
// (numbers, strings, booleans, nested maps and slices). A map passed to
// hone belongs to hone from then on; the trainable must not modify it.
type Metrics = map[string]any

// Metric names with a meaning to hone in a class-style trainable's Step
// result.
const (
	// MetricDone set to true marks the trial's last result.
	MetricDone = "done"
	// MetricShouldCheckpoint set to true asks hone to save the trainable
	// right after this step and attach the checkpoint to the result. The
	// executor removes the key from the reported metrics.
	MetricShouldCheckpoint = "should_checkpoint"
)

// Session is what a function-style trainable gets from its executor. The
// executor owns it; it is valid until the function returns. All methods
// may be called from any goroutine; overlapping Report calls are
// serialised, each waiting for its own directive.
type Session interface {
	// Config returns the trial's configuration. The map is the
	// trainable's own copy.
	Config() hone.Config
	// TrialID returns the trial's id.
	TrialID() string
	// Dir returns the trial's local directory (absolute); the trainable
	// may write logs and scratch files there.
	Dir() string
	// Checkpoint returns the local directory of the checkpoint to restore
	// from, or "" when the trial starts from scratch. The directory is
	// read-only to the trainable.
	Checkpoint() string
	// Iteration returns the training iteration the restored checkpoint was
	// taken at, 0 when the trial starts from scratch.
	Iteration() int
	// StagingDir returns a fresh empty directory under Dir()/.staging/ to
	// write a checkpoint into. Reporting it with WithCheckpoint hands it to
	// hone, which commits it into storage (by renaming it); the trainable
	// must not touch it afterwards. A staging directory that is never
	// reported is left for the store's cleanup.
	StagingDir() (string, error)
	// Report sends one result and blocks until the runner answers with a
	// directive. It returns nil when the trial should go on training, and
	// hone.ErrTrialStopped when the trial is being stopped: the function
	// should then return that error (or nil) promptly. Report takes
	// ownership of m and of a reported checkpoint directory.
	Report(m Metrics, opts ...ReportOption) error
}

// ReportOption modifies one Session.Report call. Build them with
// WithCheckpoint and Done.
type ReportOption func(*ReportOptions)

// ReportOptions is the resolved form of a Report call's options.
// Implementations of Session build it with CollectReportOptions.
type ReportOptions struct {
	// Checkpoint is the directory of a checkpoint reported with the
	// result, or "".
	Checkpoint string
	// Done marks the trial's last result.
	Done bool
}

// WithCheckpoint attaches the checkpoint in dir (usually from
// Session.StagingDir) to a result. hone takes ownership of dir.
func WithCheckpoint(dir string) ReportOption {
	return func(o *ReportOptions) { o.Checkpoint = dir }
}

// Done marks a result as the trial's last one. Reporting metrics with
// "done": true has the same effect.
func Done() ReportOption {
	return func(o *ReportOptions) { o.Done = true }
}

// CollectReportOptions applies opts in order to a zero ReportOptions. It is
// called by Session implementations.
func CollectReportOptions(opts ...ReportOption) ReportOptions {
	var o ReportOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// IsDone reports whether m says the trial is done: m["done"] is the
// boolean true.
func IsDone(m Metrics) bool {
	d, _ := m[MetricDone].(bool)
	return d
}

// Func is a function-style trainable. The executor calls it once per trial
// start, on a goroutine of its own, and cancels ctx when the trial is
// stopped. The function trains, reports through s, and returns nil when it
// has finished, hone.ErrTrialStopped (as returned by Report) when it was
// stopped, or an error when it failed. A function cannot save on demand:
// hone restores it from the latest checkpoint it reported.
type Func func(ctx context.Context, s Session) error

// Trainable is a class-style trainable: hone calls its methods one at a
// time, never concurrently, on a goroutine the executor owns. Because hone
// decides when to save, it can checkpoint a Trainable on demand.
type Trainable interface {
	// Setup prepares training for cfg; it is called once, first. The map
	// is the trainable's own copy.
	Setup(cfg hone.Config) error
	// Step trains one iteration and returns its metrics, which then belong
	// to hone. Metrics with "done": true end the trial after this result;
	// "should_checkpoint": true makes hone save right after the step. ctx
	// is cancelled when the trial is stopped.
	Step(ctx context.Context) (Metrics, error)
	// Save writes a checkpoint of the trainable's state into dir, an empty
	// directory that hone owns once Save returns.
	Save(dir string) error
	// Load restores the state from a checkpoint directory written by Save.
	// It is called after Setup and before the first Step, and only when the
	// trial restores; dir is read-only.
	Load(dir string) error
}

package hone

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Checkpoint is an immutable, committed checkpoint directory in storage.
// Two Checkpoint values with the same Path are the same checkpoint.
type Checkpoint struct {
	TrialID   string // the trial whose manager registered it
	Index     int    // per-trial sequence number, from 0
	Path      string // relative to the experiment directory, e.g. "<trial_dir>/checkpoint_000003"
	Iteration int    // training_iteration of the result that produced it
	// TimeTotal is time_total_s of the result that produced it, so a trial
	// restored from it keeps counting time from there.
	TimeTotal float64
}

// Name returns the checkpoint directory's base name, e.g. "checkpoint_000003".
func (c *Checkpoint) Name() string { return CheckpointDirName(c.Index) }

// CheckpointDirName is the directory name of the checkpoint with index i.
func CheckpointDirName(i int) string { return fmt.Sprintf("checkpoint_%06d", i) }

// CheckpointIndex parses a checkpoint directory name: it reports the index
// i for exactly the names CheckpointDirName(i) gives, and false for any
// other name.
func CheckpointIndex(name string) (int, bool) {
	digits, ok := strings.CutPrefix(name, "checkpoint_")
	if !ok || digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	i, err := strconv.Atoi(digits)
	if err != nil || CheckpointDirName(i) != name {
		return 0, false
	}
	return i, true
}

// StagingDirName is the directory inside a trial directory where
// executors stage checkpoints before a store commits them. Whatever is
// left in it after a crash was never committed: a leftover, deleted on
// resume.
const StagingDirName = ".staging"

// UploadDirName is the directory inside a trial directory of a store
// where a trial's side commits its checkpoints (see RemoteCommitter)
// before the runner links each to its place. What is left in it after a
// crash was never registered: a leftover, deleted on resume.
const UploadDirName = ".uploaded"

// CheckpointConfig is the retention policy of a trial's checkpoints
// (docs/SEMANTICS.md §2).
type CheckpointConfig struct {
	// NumToKeep is how many checkpoints to keep; 0 keeps all. Negative is
	// invalid. The latest checkpoint and pinned checkpoints are never
	// deleted.
	NumToKeep int `json:"num_to_keep,omitempty" yaml:"num_to_keep"`
	// ScoreAttribute ranks checkpoints by a result field; "" ranks by
	// recency. A missing or NaN score ranks lowest.
	ScoreAttribute string `json:"score_attribute,omitempty" yaml:"score_attribute"`
	// ScoreOrder is "max" (default) or "min".
	ScoreOrder Mode `json:"score_order,omitempty" yaml:"score_order"`
	// Frequency asks for a checkpoint every N iterations; 0 never asks.
	Frequency int `json:"frequency,omitempty" yaml:"frequency"`
	// AtEnd asks for a checkpoint when the trial finishes.
	AtEnd bool `json:"at_end,omitempty" yaml:"at_end"`
}

// Validate names the first invalid field.
func (c CheckpointConfig) Validate() error {
	if c.NumToKeep < 0 {
		return fmt.Errorf("checkpoint.num_to_keep = %d: must be 0 (keep all) or >= 1", c.NumToKeep)
	}
	if c.ScoreOrder != "" && !c.ScoreOrder.Valid() {
		return fmt.Errorf("checkpoint.score_order = %q: allowed values are \"max\" and \"min\"", c.ScoreOrder)
	}
	if c.Frequency < 0 {
		return fmt.Errorf("checkpoint.frequency = %d: must be >= 0 (0 = never on schedule)", c.Frequency)
	}
	return nil
}

// SaveFuture is a pending save of one trial (docs/SEMANTICS.md §1 "Saves"). There is
// at most one in flight per trial: asking for a save while one is in flight
// returns the same future. It resolves exactly once, to a checkpoint, to
// "no checkpoint" (nil, nil), or to an error. A scheduler that waits on a
// save keeps what it waits for in its own state and is told of the
// resolution by SaveListener.OnTrialSave: a future carries no
// continuations, so no decision hides in a closure.
//
// A SaveFuture is resolved on the controller's goroutine only.
type SaveFuture struct {
	TrialID string

	mu   sync.Mutex // guards nothing on the hot path; keeps -race quiet for readers in tests
	done bool
	cp   *Checkpoint
	err  error
}

// NewSaveFuture returns an unresolved future for trialID. Called by the
// controller only.
func NewSaveFuture(trialID string) *SaveFuture { return &SaveFuture{TrialID: trialID} }

// Done reports whether the future has resolved.
func (f *SaveFuture) Done() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.done
}

// Result returns the resolved checkpoint (nil for "no checkpoint") and
// error. Before resolution both are nil.
func (f *SaveFuture) Result() (*Checkpoint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cp, f.err
}

// Resolve settles the future. Resolving twice panics: it would mean two
// saves answered one request. Called by the controller only.
func (f *SaveFuture) Resolve(cp *Checkpoint, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		panic("hone: SaveFuture resolved twice for trial " + f.TrialID)
	}
	f.done, f.cp, f.err = true, cp, err
}

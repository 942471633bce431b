package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/hone-tune/hone"
)

// ErrInjected is the error of a failure injected by FailingModel.
var ErrInjected = errors.New("sim: injected failure")

// FailingModel wraps a Model so that trials fail at a given iteration, for
// fault-tolerance tests. It counts iterations itself, from scratch, and
// keeps the count in the checkpoint, so a trial restored past the failing
// iteration does not fail again while one restarted before it does. Use the
// method value (*FailingModel).New as the Model, and a fresh FailingModel
// for every run: it remembers how often each trial failed.
type FailingModel struct {
	// Model makes the trainables that do the work.
	Model Model
	// Iteration is the step that fails (1 = the first step from scratch).
	Iteration int
	// Trials lists the ids of the trials that fail; empty means all.
	Trials []string
	// Times is how often each trial fails before it runs clean; 0 means
	// every time it reaches Iteration.
	Times int

	failures map[string]int // trial id → failures injected so far
}

// New is the Model of f: it makes the trainable of one trial, wrapping one
// made by f.Model. Like every Model it is called on the runner's goroutine;
// it is not safe for concurrent use.
func (f *FailingModel) New(cfg hone.Config, trialID string) (Trainable, error) {
	inner, err := f.Model(cfg, trialID)
	if err != nil {
		return nil, err
	}
	return &failing{
		f:      f,
		id:     trialID,
		inner:  inner,
		target: len(f.Trials) == 0 || slices.Contains(f.Trials, trialID),
	}, nil
}

// failing is the trainable of FailingModel.
type failing struct {
	f      *FailingModel
	id     string
	inner  Trainable
	target bool // the trial is one that fails
	iter   int
}

func (t *failing) Step() (Step, error) {
	t.iter++
	if t.target && t.iter == t.f.Iteration && (t.f.Times == 0 || t.f.failures[t.id] < t.f.Times) {
		if t.f.failures == nil {
			t.f.failures = make(map[string]int)
		}
		t.f.failures[t.id]++
		return Step{}, fmt.Errorf("trial %s iteration %d: %w", t.id, t.iter, ErrInjected)
	}
	return t.inner.Step()
}

// Save prefixes the wrapped state with the iteration count.
func (t *failing) Save() ([]byte, error) {
	state, err := t.inner.Save()
	if err != nil {
		return nil, err
	}
	return append(binary.AppendUvarint(nil, uint64(t.iter)), state...), nil
}

func (t *failing) Load(state []byte) error {
	n, k := binary.Uvarint(state)
	if k <= 0 || n > 1<<31 {
		return errors.New("failing model: bad state")
	}
	t.iter = int(n)
	return t.inner.Load(state[k:])
}

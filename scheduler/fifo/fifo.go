// Package fifo is the default scheduler: every result continues, and the
// oldest PENDING trial runs first, then the oldest PAUSED one.
package fifo

import (
	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/snapshot"
)

// Scheduler is the FIFO scheduler. It keeps no state.
type Scheduler struct{ Base }

// Base is FIFO's behaviour as the hone.Scheduler methods alone (every
// hook does nothing, every result continues, the oldest waiting trial runs
// next), for schedulers that embed it and override what they decide. It
// is apart from Scheduler so that an embedding scheduler takes none of
// FIFO's other abilities (CheckObjectives, its snapshot) by accident.
type Base struct{}

// New returns a FIFO scheduler.
func New() Scheduler { return Scheduler{} }

// CheckObjectives accepts any objectives and constraints: FIFO compares
// no trials (hone.MultiObjective).
func (Scheduler) CheckObjectives(hone.Objectives, hone.Constraints) error { return nil }

// OnTrialAdd does nothing.
func (Base) OnTrialAdd(hone.Control, *hone.Trial) {}

// OnResult returns CONTINUE.
func (Base) OnResult(hone.Control, *hone.Trial, *hone.Result) hone.Decision {
	return hone.Continue
}

// OnTrialComplete does nothing.
func (Base) OnTrialComplete(hone.Control, *hone.Trial, *hone.Result) {}

// OnTrialError does nothing.
func (Base) OnTrialError(hone.Control, *hone.Trial) {}

// OnTrialRemove does nothing.
func (Base) OnTrialRemove(hone.Control, *hone.Trial) {}

// ChooseTrialToRun returns the oldest PENDING trial, else the oldest PAUSED
// one, else nil.
func (Base) ChooseTrialToRun(c hone.Control) *hone.Trial {
	if q, ok := c.(hone.OldestByStatus); ok {
		if t := q.Oldest(hone.StatusPending); t != nil {
			return t
		}
		return q.Oldest(hone.StatusPaused)
	}
	var paused *hone.Trial
	for _, t := range c.Trials() {
		switch t.Status {
		case hone.StatusPending:
			return t
		case hone.StatusPaused:
			if paused == nil {
				paused = t
			}
		}
	}
	return paused
}

// stateVersion is the version of the snapshot form of FIFO's state.
const stateVersion = 1

// MarshalState implements hone.Stateful. FIFO keeps no state: its
// snapshot only names it.
func (Scheduler) MarshalState() ([]byte, error) {
	return snapshot.Marshal("fifo", stateVersion, nil, nil)
}

// UnmarshalState implements hone.Stateful: it accepts FIFO's snapshot.
func (Scheduler) UnmarshalState(data []byte) error {
	return snapshot.Unmarshal(data, "fifo", stateVersion, nil, nil)
}

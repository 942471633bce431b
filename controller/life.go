package controller

import (
	"fmt"

	"github.com/hone-tune/hone"
)

// runLife is where a trial's run (its process, as the controller knows
// it) is in its lifecycle. It is one value, changed only by tstate.to
// through the transition table runLife.next:
//
//	from       event     to
//	idle       start     queued
//	queued     run       computing
//	computing  result    blocked
//	blocked    save      saving
//	saved      save      saving
//	saving     saved     saved
//	blocked    continue  computing
//	saved      continue  computing
//	any live   stop      stopping (from every live state but stopping)
//	any live   gone      idle
//
// Every other pair is illegal.
//
// The trial's status (hone.Status, set by setStatus) is a separate value:
// a PAUSED or PENDING trial may still be stopping, and a RUNNING one may
// have no process after an experiment-wide stop.
type runLife uint8

// The states of a run.
const (
	// lifeIdle: the trial has no process (never started, or it exited).
	lifeIdle runLife = iota
	// lifeQueued: ActStart was emitted, and the executor announces starts
	// (Settings.StartsAnnounced) but has not announced this one: the run
	// waits in a queue, under no per-trial limit.
	lifeQueued
	// lifeComputing: the process runs; its next report is due.
	lifeComputing
	// lifeBlocked: the process reported a result and waits for a
	// directive.
	lifeBlocked
	// lifeSaved: the process answered a save and waits for a directive;
	// the decision carried out next does not save again.
	lifeSaved
	// lifeSaving: DirectCheckpoint was sent; the process's answer is due.
	lifeSaving
	// lifeStopping: DirectStop was sent; the process's exit is due. Its
	// results and saves are ignored.
	lifeStopping

	numLives // the number of states, for tables and tests
)

// String names the state.
func (l runLife) String() string {
	switch l {
	case lifeIdle:
		return "idle"
	case lifeQueued:
		return "queued"
	case lifeComputing:
		return "computing"
	case lifeBlocked:
		return "blocked"
	case lifeSaved:
		return "saved"
	case lifeSaving:
		return "saving"
	case lifeStopping:
		return "stopping"
	}
	return fmt.Sprintf("runLife(%d)", uint8(l))
}

// alive reports whether the trial has a process (including one that is
// stopping).
func (l runLife) alive() bool { return l != lifeIdle }

// waiting reports whether the process is blocked after a result or a
// save (including while it saves: it answers with hone.EventSaved and waits
// again).
func (l runLife) waiting() bool { return l == lifeBlocked || l == lifeSaved || l == lifeSaving }

// lifeEvent is what moves a run from one state to another.
type lifeEvent uint8

// The events of a run.
const (
	// evStart: the controller emits ActStart.
	evStart lifeEvent = iota
	// evRun: the run counts as running: at its start when the executor
	// does not announce starts, else at its hone.EventStarted input or its first
	// report, whichever comes first.
	evRun
	// evResult: a hone.EventResult input; the process waits for a directive.
	evResult
	// evSaveSent: the controller sends DirectCheckpoint to a waiting process.
	evSaveSent
	// evSaved: a hone.EventSaved input, the answer to DirectCheckpoint.
	evSaved
	// evContinue: the controller sends DirectContinue.
	evContinue
	// evStop: the controller sends DirectStop.
	evStop
	// evGone: the process is gone (hone.EventExited,
	// hone.EventStartFailed), or never began (a start undone by
	// hone.EventCheckpointMissing), or did not survive a resume.
	evGone

	numLifeEvents // the number of events, for tables and tests
)

// String names the event.
func (e lifeEvent) String() string {
	switch e {
	case evStart:
		return "start"
	case evRun:
		return "run"
	case evResult:
		return "result"
	case evSaveSent:
		return "save"
	case evSaved:
		return "saved"
	case evContinue:
		return "continue"
	case evStop:
		return "stop"
	case evGone:
		return "gone"
	}
	return fmt.Sprintf("lifeEvent(%d)", uint8(e))
}

// next is the transition table: the state that event e leads to from l,
// and whether e is legal in l at all.
func (l runLife) next(e lifeEvent) (runLife, bool) {
	switch e {
	case evStart:
		if l == lifeIdle {
			return lifeQueued, true
		}
	case evRun:
		if l == lifeQueued {
			return lifeComputing, true
		}
	case evResult:
		if l == lifeComputing {
			return lifeBlocked, true
		}
	case evSaveSent:
		if l == lifeBlocked || l == lifeSaved {
			return lifeSaving, true
		}
	case evSaved:
		if l == lifeSaving {
			return lifeSaved, true
		}
	case evContinue:
		if l == lifeBlocked || l == lifeSaved {
			return lifeComputing, true
		}
	case evStop:
		if l.alive() && l != lifeStopping {
			return lifeStopping, true
		}
	case evGone:
		if l.alive() {
			return lifeIdle, true
		}
	}
	return l, false
}

// can reports whether e is legal in l.
func (l runLife) can(e lifeEvent) bool {
	_, ok := l.next(e)
	return ok
}

// to moves the trial's run through e. It is the only place the state
// changes. An illegal transition is a bug of the controller, not of its
// inputs (inputs that do not fit the state are refused before they get
// here, see Step), so it panics, naming the state and the event.
func (s *tstate) to(e lifeEvent) {
	n, ok := s.life.next(e)
	if !ok {
		panic(fmt.Sprintf("controller: trial run in state %s cannot take event %s", s.life, e))
	}
	s.life = n
}

// queuedDecision is a run's decision queue (docs/SEMANTICS.md §1): what to
// carry out once the process waits and no save is in flight. STOP beats
// PAUSE beats CONTINUE, and a later decision never overwrites a stronger
// one; a pause without a save (Control.PauseTrial with save false) counts
// as a pause, and overrides a pause with one.
type queuedDecision uint8

// The queued decisions.
const (
	qContinue    queuedDecision = iota // nothing queued: continue
	qPause                             // pause, saving first unless the latest checkpoint is current
	qPauseNoSave                       // pause without saving
	qStop                              // stop (TERMINATED), saving first if Checkpoint.AtEnd
)

// String names the queued decision.
func (q queuedDecision) String() string {
	switch q {
	case qContinue:
		return "continue"
	case qPause:
		return "pause"
	case qPauseNoSave:
		return "pause without save"
	case qStop:
		return "stop"
	}
	return fmt.Sprintf("queuedDecision(%d)", uint8(q))
}

// rank orders queued decisions: STOP beats PAUSE beats CONTINUE.
func (q queuedDecision) rank() int {
	switch q {
	case qStop:
		return 2
	case qPause, qPauseNoSave:
		return 1
	}
	return 0
}

// queueOf is the queued form of a scheduler's decision; NOOP adds
// nothing (it queues as CONTINUE, the weakest).
func queueOf(d hone.Decision) queuedDecision {
	switch d {
	case hone.Stop:
		return qStop
	case hone.Pause:
		return qPause
	}
	return qContinue
}

// with returns the queue after d arrives: d if it ranks higher, else q.
func (q queuedDecision) with(d queuedDecision) queuedDecision {
	if d.rank() > q.rank() {
		return d
	}
	return q
}

package process

import "fmt"

// A trial's start lives in three lifecycles at once, each one value with
// its own transition table, because each moves on its own inputs:
//
//   - turn: the trial as the runner sees it, through events and
//     directives (emitted, answered, saving, stopping, exited);
//   - sockTurn: the conversation on the trial's socket (hello, reports,
//     checkpoint and stop directives), which the trial may also skip
//     (reports on standard output) and hone may answer for it (a save
//     that the trial cannot do);
//   - phase: the process and its output (running, drained, finished),
//     which end whenever the process does.
//
// Each changes only through its method to (proc.toTurn, toSock, toPhase),
// which panics on a transition its table refuses: the callers check what
// the trial or the runner may do first (a trial out of turn is a protocol
// violation, a directive out of turn an error of Direct), so an illegal
// transition is a bug of the executor.

// turn is whose move it is between the runner and the trial. Guarded by
// Executor.mu.
//
//	from      event       to
//	running   emit        waiting
//	running   stop        stopping
//	running   exit        exited
//	waiting   continue    running
//	waiting   asksave     saving
//	waiting   answersave  waiting (hone answers a save the trial cannot do)
//	waiting   stop        stopping
//	saving    saved       waiting
//	saving    lost        running (the process ended: no answer will come)
//	saving    stop        stopping
//	stopping  exit        exited
type turn uint8

// The turns.
const (
	// turnRunning: no event awaits the runner; the next pending one may
	// be emitted.
	turnRunning turn = iota
	// turnWaiting: an emitted event awaits the runner's directive.
	turnWaiting
	// turnSaving: the runner awaits the trial's answer to DirectCheckpoint.
	turnSaving
	// turnStopping: the runner stopped the trial (or the executor is
	// closing); pending events are dropped and the exit is due.
	turnStopping
	// turnExited: EventExited is queued; the start is over.
	turnExited

	numTurns
)

// String names the turn.
func (t turn) String() string {
	switch t {
	case turnRunning:
		return "running"
	case turnWaiting:
		return "waiting"
	case turnSaving:
		return "saving"
	case turnStopping:
		return "stopping"
	case turnExited:
		return "exited"
	}
	return fmt.Sprintf("turn(%d)", uint8(t))
}

// turnEvent moves a turn.
type turnEvent uint8

// The turn events.
const (
	tEmit       turnEvent = iota // an event goes to the runner, which owes a directive
	tContinue                    // DirectContinue
	tAskSave                     // DirectCheckpoint, passed on to the trial
	tAnswerSave                  // DirectCheckpoint, answered by hone with an EventSaved at once
	tSaved                       // the trial's answer to DirectCheckpoint goes to the runner
	tLost                        // the process ended while its answer to DirectCheckpoint was awaited
	tStop                        // DirectStop, or Close
	tExit                        // EventExited is queued

	numTurnEvents
)

// String names the event.
func (e turnEvent) String() string {
	switch e {
	case tEmit:
		return "emit"
	case tContinue:
		return "continue"
	case tAskSave:
		return "asksave"
	case tAnswerSave:
		return "answersave"
	case tSaved:
		return "saved"
	case tLost:
		return "lost"
	case tStop:
		return "stop"
	case tExit:
		return "exit"
	}
	return fmt.Sprintf("turnEvent(%d)", uint8(e))
}

// next is the turn's transition table (see turn).
func (t turn) next(e turnEvent) (turn, bool) {
	switch {
	case t == turnRunning && e == tEmit:
		return turnWaiting, true
	case t == turnWaiting && e == tContinue:
		return turnRunning, true
	case t == turnWaiting && e == tAskSave:
		return turnSaving, true
	case t == turnWaiting && e == tAnswerSave:
		return turnWaiting, true
	case t == turnSaving && e == tSaved:
		return turnWaiting, true
	case t == turnSaving && e == tLost:
		return turnRunning, true
	case e == tStop && (t == turnRunning || t == turnWaiting || t == turnSaving):
		return turnStopping, true
	case e == tExit && (t == turnRunning || t == turnStopping):
		return turnExited, true
	}
	return t, false
}

// can reports whether e is legal in t.
func (t turn) can(e turnEvent) bool {
	_, ok := t.next(e)
	return ok
}

// toTurn moves p's turn through e; it panics if the table refuses e.
func (p *proc) toTurn(e turnEvent) {
	n, ok := p.turn.next(e)
	if !ok {
		panic(fmt.Sprintf("process executor: trial %s: turn %s cannot take event %s", p.spec.TrialID, p.turn, e))
	}
	p.turn = n
}

// sockTurn is where the conversation on the trial's socket is. Guarded by
// Executor.mu.
//
//	from       event     to
//	hello      hello     computing
//	computing  report    waiting
//	computing  stop      stopped
//	waiting    continue  computing
//	waiting    asksave   saving
//	waiting    stop      stopped
//	saving     saved     waiting
//	saving     stop      stopped
type sockTurn uint8

// The socket turns.
const (
	// sockHello: the trial has not said hello (it may never connect).
	sockHello sockTurn = iota
	// sockComputing: the trial computes; it may report.
	sockComputing
	// sockWaiting: the trial waits on its socket for a directive.
	sockWaiting
	// sockSaving: a checkpoint directive went out; "saved" is owed.
	sockSaving
	// sockStopped: a stop directive went out; nothing more is said.
	sockStopped

	numSockTurns
)

// String names the socket turn.
func (s sockTurn) String() string {
	switch s {
	case sockHello:
		return "hello"
	case sockComputing:
		return "computing"
	case sockWaiting:
		return "waiting"
	case sockSaving:
		return "saving"
	case sockStopped:
		return "stopped"
	}
	return fmt.Sprintf("sockTurn(%d)", uint8(s))
}

// sockEvent moves a socket turn.
type sockEvent uint8

// The socket events.
const (
	sHello    sockEvent = iota // the trial's hello was accepted
	sReport                    // the trial reported; it waits for a directive
	sSaved                     // the trial answered the checkpoint directive; it waits
	sContinue                  // a continue directive went out
	sAskSave                   // a checkpoint directive went out
	sStop                      // a stop directive went out

	numSockEvents
)

// String names the event.
func (e sockEvent) String() string {
	switch e {
	case sHello:
		return "hello"
	case sReport:
		return "report"
	case sSaved:
		return "saved"
	case sContinue:
		return "continue"
	case sAskSave:
		return "asksave"
	case sStop:
		return "stop"
	}
	return fmt.Sprintf("sockEvent(%d)", uint8(e))
}

// next is the socket turn's transition table (see sockTurn).
func (s sockTurn) next(e sockEvent) (sockTurn, bool) {
	switch {
	case s == sockHello && e == sHello:
		return sockComputing, true
	case s == sockComputing && e == sReport:
		return sockWaiting, true
	case s == sockWaiting && e == sContinue:
		return sockComputing, true
	case s == sockWaiting && e == sAskSave:
		return sockSaving, true
	case s == sockSaving && e == sSaved:
		return sockWaiting, true
	case e == sStop && (s == sockComputing || s == sockWaiting || s == sockSaving):
		return sockStopped, true
	}
	return s, false
}

// can reports whether e is legal in s.
func (s sockTurn) can(e sockEvent) bool {
	_, ok := s.next(e)
	return ok
}

// toSock moves p's socket turn through e; it panics if the table refuses
// e.
func (p *proc) toSock(e sockEvent) {
	n, ok := p.talk.next(e)
	if !ok {
		panic(fmt.Sprintf("process executor: trial %s: socket turn %s cannot take event %s", p.spec.TrialID, p.talk, e))
	}
	p.talk = n
}

// phase is where the trial's process and its output are. Guarded by
// Executor.mu.
//
//	from     event   to
//	live     drain   drained
//	live     finish  finished
//	drained  finish  finished
type phase uint8

// The phases.
const (
	// phaseLive: the process runs, or its output and socket are still
	// being read.
	phaseLive phase = iota
	// phaseDrained: output and socket are done with (or abandoned: a
	// process outside the group keeps them open); the end is being
	// settled.
	phaseDrained
	// phaseFinished: the process ended and drained; exitErr is set.
	phaseFinished

	numPhases
)

// String names the phase.
func (ph phase) String() string {
	switch ph {
	case phaseLive:
		return "live"
	case phaseDrained:
		return "drained"
	case phaseFinished:
		return "finished"
	}
	return fmt.Sprintf("phase(%d)", uint8(ph))
}

// phaseEvent moves a phase.
type phaseEvent uint8

// The phase events.
const (
	pDrain  phaseEvent = iota // output and socket are abandoned
	pFinish                   // the process ended and everything it wrote was read

	numPhaseEvents
)

// String names the event.
func (e phaseEvent) String() string {
	switch e {
	case pDrain:
		return "drain"
	case pFinish:
		return "finish"
	}
	return fmt.Sprintf("phaseEvent(%d)", uint8(e))
}

// next is the phase's transition table (see phase).
func (ph phase) next(e phaseEvent) (phase, bool) {
	switch {
	case ph == phaseLive && e == pDrain:
		return phaseDrained, true
	case (ph == phaseLive || ph == phaseDrained) && e == pFinish:
		return phaseFinished, true
	}
	return ph, false
}

// toPhase moves p's phase through e; it panics if the table refuses e.
func (p *proc) toPhase(e phaseEvent) {
	n, ok := p.phase.next(e)
	if !ok {
		panic(fmt.Sprintf("process executor: trial %s: phase %s cannot take event %s", p.spec.TrialID, p.phase, e))
	}
	p.phase = n
}

// drained reports whether the trial's output and socket are done with.
func (p *proc) drained() bool { return p.phase != phaseLive }

// finished reports whether the process ended and drained.
func (p *proc) finished() bool { return p.phase == phaseFinished }

// stopped reports whether the runner stopped the trial or its start is
// over: what it still says is dropped.
func (p *proc) stopped() bool { return p.turn == turnStopping || p.turn == turnExited }

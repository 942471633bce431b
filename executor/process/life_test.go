package process

import (
	"strings"
	"testing"

	"github.com/hone-tune/hone"
)

func recoverText(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg, _ = r.(string)
			if msg == "" {
				msg = "panic"
			}
		}
	}()
	f()
	return ""
}

// TestTurnTable enumerates every (turn, event) pair: the legal ones land
// where the table in life.go says, every other one is refused, and
// toTurn panics on it naming both, leaving the turn as it was.
func TestTurnTable(t *testing.T) {
	type pair struct {
		from turn
		ev   turnEvent
	}
	legal := map[pair]turn{
		{turnRunning, tEmit}:       turnWaiting,
		{turnRunning, tStop}:       turnStopping,
		{turnRunning, tExit}:       turnExited,
		{turnWaiting, tContinue}:   turnRunning,
		{turnWaiting, tAskSave}:    turnSaving,
		{turnWaiting, tAnswerSave}: turnWaiting,
		{turnWaiting, tStop}:       turnStopping,
		{turnSaving, tSaved}:       turnWaiting,
		{turnSaving, tLost}:        turnRunning,
		{turnSaving, tStop}:        turnStopping,
		{turnStopping, tExit}:      turnExited,
	}
	n := 0
	for from := range numTurns {
		for ev := range numTurnEvents {
			n++
			want, ok := legal[pair{from, ev}]
			got, gotOK := from.next(ev)
			if ok != gotOK || (ok && got != want) || (!ok && got != from) {
				t.Errorf("%s --%s-->: got %s (legal %v), want %s (legal %v)", from, ev, got, gotOK, want, ok)
			}
			p := &proc{spec: hone.StartSpec{TrialID: "t1"}, turn: from}
			msg := recoverText(func() { p.toTurn(ev) })
			switch {
			case ok && (msg != "" || p.turn != want):
				t.Errorf("%s --%s-->: toTurn gave %s, panic %q; want %s", from, ev, p.turn, msg, want)
			case !ok && (p.turn != from || !strings.Contains(msg, "trial t1: turn "+from.String()+" cannot take event "+ev.String())):
				t.Errorf("%s --%s-->: toTurn gave %s, panic %q; want a panic naming both and no move", from, ev, p.turn, msg)
			}
		}
	}
	if n != 5*8 {
		t.Errorf("enumerated %d pairs, want 40", n)
	}
}

// TestSockTable enumerates every (socket turn, event) pair.
func TestSockTable(t *testing.T) {
	type pair struct {
		from sockTurn
		ev   sockEvent
	}
	legal := map[pair]sockTurn{
		{sockHello, sHello}:      sockComputing,
		{sockComputing, sReport}: sockWaiting,
		{sockComputing, sStop}:   sockStopped,
		{sockWaiting, sContinue}: sockComputing,
		{sockWaiting, sAskSave}:  sockSaving,
		{sockWaiting, sStop}:     sockStopped,
		{sockSaving, sSaved}:     sockWaiting,
		{sockSaving, sStop}:      sockStopped,
	}
	n := 0
	for from := range numSockTurns {
		for ev := range numSockEvents {
			n++
			want, ok := legal[pair{from, ev}]
			got, gotOK := from.next(ev)
			if ok != gotOK || (ok && got != want) || (!ok && got != from) || from.can(ev) != ok {
				t.Errorf("%s --%s-->: got %s (legal %v), want %s (legal %v)", from, ev, got, gotOK, want, ok)
			}
			p := &proc{spec: hone.StartSpec{TrialID: "t1"}, talk: from}
			msg := recoverText(func() { p.toSock(ev) })
			switch {
			case ok && (msg != "" || p.talk != want):
				t.Errorf("%s --%s-->: toSock gave %s, panic %q; want %s", from, ev, p.talk, msg, want)
			case !ok && (p.talk != from || !strings.Contains(msg, "trial t1: socket turn "+from.String()+" cannot take event "+ev.String())):
				t.Errorf("%s --%s-->: toSock gave %s, panic %q; want a panic naming both and no move", from, ev, p.talk, msg)
			}
		}
	}
	if n != 5*6 {
		t.Errorf("enumerated %d pairs, want 30", n)
	}
}

// TestPhaseTable enumerates every (phase, event) pair.
func TestPhaseTable(t *testing.T) {
	type pair struct {
		from phase
		ev   phaseEvent
	}
	legal := map[pair]phase{
		{phaseLive, pDrain}:     phaseDrained,
		{phaseLive, pFinish}:    phaseFinished,
		{phaseDrained, pFinish}: phaseFinished,
	}
	n := 0
	for from := range numPhases {
		for ev := range numPhaseEvents {
			n++
			want, ok := legal[pair{from, ev}]
			got, gotOK := from.next(ev)
			if ok != gotOK || (ok && got != want) || (!ok && got != from) {
				t.Errorf("%s --%s-->: got %s (legal %v), want %s (legal %v)", from, ev, got, gotOK, want, ok)
			}
			p := &proc{spec: hone.StartSpec{TrialID: "t1"}, phase: from}
			msg := recoverText(func() { p.toPhase(ev) })
			switch {
			case ok && (msg != "" || p.phase != want):
				t.Errorf("%s --%s-->: toPhase gave %s, panic %q; want %s", from, ev, p.phase, msg, want)
			case !ok && (p.phase != from || !strings.Contains(msg, "trial t1: phase "+from.String()+" cannot take event "+ev.String())):
				t.Errorf("%s --%s-->: toPhase gave %s, panic %q; want a panic naming both and no move", from, ev, p.phase, msg)
			}
		}
	}
	if n != 3*2 {
		t.Errorf("enumerated %d pairs, want 6", n)
	}
}

// TestLifeNames: every state and event of the three lifecycles has a
// name of its own.
func TestLifeNames(t *testing.T) {
	check := func(kind string, names []string) {
		seen := map[string]bool{}
		for i, s := range names {
			if strings.Contains(s, "(") || seen[s] {
				t.Errorf("%s %d is named %q", kind, i, s)
			}
			seen[s] = true
		}
	}
	var ns []string
	for x := range numTurns {
		ns = append(ns, x.String())
	}
	check("turn", ns)
	ns = nil
	for x := range numTurnEvents {
		ns = append(ns, x.String())
	}
	check("turn event", ns)
	ns = nil
	for x := range numSockTurns {
		ns = append(ns, x.String())
	}
	check("socket turn", ns)
	ns = nil
	for x := range numSockEvents {
		ns = append(ns, x.String())
	}
	check("socket event", ns)
	ns = nil
	for x := range numPhases {
		ns = append(ns, x.String())
	}
	check("phase", ns)
	ns = nil
	for x := range numPhaseEvents {
		ns = append(ns, x.String())
	}
	check("phase event", ns)
}

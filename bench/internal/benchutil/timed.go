package benchutil

import (
	"fmt"
	"runtime"
	"time"

	"github.com/hone-tune/hone"
)

// CPUMeter adds up the CPU time spent inside the calls it times. Every
// timed call runs with its goroutine locked to its OS thread, so the
// thread's CPU clock read before and after the call counts the call's own
// work (and the clock reads), not that of other goroutines (CPUClock says
// which clock it is). A CPUMeter is used from one goroutine at a time; its
// zero value is ready to use.
type CPUMeter struct {
	total time.Duration
	calls int
}

// Time runs f and adds its CPU time.
func (m *CPUMeter) Time(f func()) {
	runtime.LockOSThread()
	t0 := markClock()
	f()
	m.total += t0.since()
	m.calls++
	runtime.UnlockOSThread()
}

// Total returns the CPU time of the calls timed so far.
func (m *CPUMeter) Total() time.Duration { return m.total }

// Calls returns the number of calls timed so far.
func (m *CPUMeter) Calls() int { return m.calls }

// TimerOverhead returns the CPU time a CPUMeter measures for a call that
// does nothing: what every timed call adds to a run's measured CPU.
func TimerOverhead() time.Duration {
	const n = 20000
	m := &CPUMeter{}
	for range n {
		m.Time(func() {})
	}
	return m.total / n
}

// TimedSearcher measures the CPU time of every call into a searcher with
// a CPUMeter. It forwards the optional abilities the controller and
// Experiment.Validate check on a searcher, so that the wrapped searcher
// runs exactly as the plain one: hone.PendingLimit (answering 1, the
// controller's default, when the inner searcher has none),
// hone.MultiObjective (an error wrapping hone.ErrOneObjective when the
// inner searcher has none, as its absence means) and, through
// StatefulTimedSearcher, hone.Stateful. A new optional ability checked on
// searchers must be forwarded here too. Abilities a builder checks when it
// wires a searcher to a scheduler (fidelity.RungUser, fidelity.Advisor)
// are not forwarded: wrap after wiring. Build one with TimeSearcher.
type TimedSearcher struct {
	inner hone.Searcher
	m     *CPUMeter
}

// StatefulTimedSearcher is a TimedSearcher around a searcher that
// implements hone.Stateful, which it forwards untimed: saving and
// restoring state is persistence, not search.
type StatefulTimedSearcher struct {
	*TimedSearcher
}

// TimeSearcher returns inner wrapped so that the CPU time of every call
// into it adds to m: a *StatefulTimedSearcher when inner implements
// hone.Stateful, a *TimedSearcher otherwise.
func TimeSearcher(inner hone.Searcher, m *CPUMeter) hone.Searcher {
	s := &TimedSearcher{inner: inner, m: m}
	if _, ok := inner.(hone.Stateful); ok {
		return &StatefulTimedSearcher{s}
	}
	return s
}

// Inner returns the wrapped searcher.
func (s *TimedSearcher) Inner() hone.Searcher { return s.inner }

// Suggest times the inner searcher's Suggest.
func (s *TimedSearcher) Suggest(id string) (cfg hone.Config, err error) {
	s.m.Time(func() { cfg, err = s.inner.Suggest(id) })
	return cfg, err
}

// OnResult times the inner searcher's OnResult.
func (s *TimedSearcher) OnResult(id string, r *hone.Result) {
	s.m.Time(func() { s.inner.OnResult(id, r) })
}

// OnTrialComplete times the inner searcher's OnTrialComplete.
func (s *TimedSearcher) OnTrialComplete(id string, last *hone.Result, failed bool) {
	s.m.Time(func() { s.inner.OnTrialComplete(id, last, failed) })
}

// MaxPending implements hone.PendingLimit: the inner searcher's limit, or
// 1 (the controller's default) when it has none.
func (s *TimedSearcher) MaxPending() int {
	if p, ok := s.inner.(hone.PendingLimit); ok {
		return p.MaxPending()
	}
	return 1
}

// CheckObjectives implements hone.MultiObjective: the inner searcher's
// check, or an error wrapping hone.ErrOneObjective when it has none.
func (s *TimedSearcher) CheckObjectives(objs hone.Objectives, cs hone.Constraints) error {
	return checkObjectives(s.inner, objs, cs)
}

// MarshalState implements hone.Stateful: the inner searcher's state.
func (s *StatefulTimedSearcher) MarshalState() ([]byte, error) {
	b, err := s.inner.(hone.Stateful).MarshalState()
	if err != nil {
		return nil, fmt.Errorf("timed searcher: %w", err)
	}
	return b, nil
}

// UnmarshalState implements hone.Stateful: it restores the inner
// searcher's state.
func (s *StatefulTimedSearcher) UnmarshalState(data []byte) error {
	if err := s.inner.(hone.Stateful).UnmarshalState(data); err != nil {
		return fmt.Errorf("timed searcher: %w", err)
	}
	return nil
}

// TimedScheduler measures the CPU time of every call into a scheduler
// with a CPUMeter. It forwards the optional abilities the controller and
// Experiment.Validate check on a scheduler: hone.SaveListener (timed, and
// nothing when the inner scheduler has none), hone.MultiObjective (an
// error wrapping hone.ErrOneObjective when the inner scheduler has none)
// and, through StatefulTimedScheduler, hone.Stateful. A new optional
// ability checked on schedulers must be forwarded here too. Build one
// with TimeScheduler.
type TimedScheduler struct {
	inner hone.Scheduler
	m     *CPUMeter
}

// StatefulTimedScheduler is a TimedScheduler around a scheduler that
// implements hone.Stateful, which it forwards untimed.
type StatefulTimedScheduler struct {
	*TimedScheduler
}

// TimeScheduler returns inner wrapped so that the CPU time of every call
// into it adds to m: a *StatefulTimedScheduler when inner implements
// hone.Stateful, a *TimedScheduler otherwise.
func TimeScheduler(inner hone.Scheduler, m *CPUMeter) hone.Scheduler {
	s := &TimedScheduler{inner: inner, m: m}
	if _, ok := inner.(hone.Stateful); ok {
		return &StatefulTimedScheduler{s}
	}
	return s
}

// Inner returns the wrapped scheduler.
func (s *TimedScheduler) Inner() hone.Scheduler { return s.inner }

// OnTrialAdd times the inner scheduler's OnTrialAdd.
func (s *TimedScheduler) OnTrialAdd(c hone.Control, t *hone.Trial) {
	s.m.Time(func() { s.inner.OnTrialAdd(c, t) })
}

// OnResult times the inner scheduler's OnResult.
func (s *TimedScheduler) OnResult(c hone.Control, t *hone.Trial, r *hone.Result) (d hone.Decision) {
	s.m.Time(func() { d = s.inner.OnResult(c, t, r) })
	return d
}

// OnTrialComplete times the inner scheduler's OnTrialComplete.
func (s *TimedScheduler) OnTrialComplete(c hone.Control, t *hone.Trial, r *hone.Result) {
	s.m.Time(func() { s.inner.OnTrialComplete(c, t, r) })
}

// OnTrialError times the inner scheduler's OnTrialError.
func (s *TimedScheduler) OnTrialError(c hone.Control, t *hone.Trial) {
	s.m.Time(func() { s.inner.OnTrialError(c, t) })
}

// OnTrialRemove times the inner scheduler's OnTrialRemove.
func (s *TimedScheduler) OnTrialRemove(c hone.Control, t *hone.Trial) {
	s.m.Time(func() { s.inner.OnTrialRemove(c, t) })
}

// ChooseTrialToRun times the inner scheduler's ChooseTrialToRun.
func (s *TimedScheduler) ChooseTrialToRun(c hone.Control) (t *hone.Trial) {
	s.m.Time(func() { t = s.inner.ChooseTrialToRun(c) })
	return t
}

// OnTrialSave implements hone.SaveListener: it times the inner
// scheduler's OnTrialSave, and does nothing when it has none.
func (s *TimedScheduler) OnTrialSave(c hone.Control, t *hone.Trial, cp *hone.Checkpoint, err error) {
	if l, ok := s.inner.(hone.SaveListener); ok {
		s.m.Time(func() { l.OnTrialSave(c, t, cp, err) })
	}
}

// CheckObjectives implements hone.MultiObjective: the inner scheduler's
// check, or an error wrapping hone.ErrOneObjective when it has none.
func (s *TimedScheduler) CheckObjectives(objs hone.Objectives, cs hone.Constraints) error {
	return checkObjectives(s.inner, objs, cs)
}

// MarshalState implements hone.Stateful: the inner scheduler's state.
func (s *StatefulTimedScheduler) MarshalState() ([]byte, error) {
	b, err := s.inner.(hone.Stateful).MarshalState()
	if err != nil {
		return nil, fmt.Errorf("timed scheduler: %w", err)
	}
	return b, nil
}

// UnmarshalState implements hone.Stateful: it restores the inner
// scheduler's state.
func (s *StatefulTimedScheduler) UnmarshalState(data []byte) error {
	if err := s.inner.(hone.Stateful).UnmarshalState(data); err != nil {
		return fmt.Errorf("timed scheduler: %w", err)
	}
	return nil
}

// checkObjectives is plugin's hone.MultiObjective check, or an error
// wrapping hone.ErrOneObjective when it has none.
func checkObjectives(plugin any, objs hone.Objectives, cs hone.Constraints) error {
	if m, ok := plugin.(hone.MultiObjective); ok {
		return m.CheckObjectives(objs, cs)
	}
	return fmt.Errorf("%T: %w", plugin, hone.ErrOneObjective)
}

// Interface checks.
var (
	_ hone.PendingLimit   = (*TimedSearcher)(nil)
	_ hone.MultiObjective = (*TimedSearcher)(nil)
	_ hone.Stateful       = (*StatefulTimedSearcher)(nil)
	_ hone.SaveListener   = (*TimedScheduler)(nil)
	_ hone.MultiObjective = (*TimedScheduler)(nil)
	_ hone.Stateful       = (*StatefulTimedScheduler)(nil)
)

package snaptest

import (
	"fmt"

	"github.com/hone-tune/hone"
)

// swapScheduler is a scheduler whose implementation can be replaced
// between two calls. It passes the optional abilities the controller
// looks for through, and behaves as the controller's defaults where the
// inner scheduler lacks them.
type swapScheduler struct{ inner hone.Scheduler }

func (s *swapScheduler) OnTrialAdd(c hone.Control, t *hone.Trial) { s.inner.OnTrialAdd(c, t) }
func (s *swapScheduler) OnResult(c hone.Control, t *hone.Trial, r *hone.Result) hone.Decision {
	return s.inner.OnResult(c, t, r)
}
func (s *swapScheduler) OnTrialComplete(c hone.Control, t *hone.Trial, r *hone.Result) {
	s.inner.OnTrialComplete(c, t, r)
}
func (s *swapScheduler) OnTrialError(c hone.Control, t *hone.Trial)  { s.inner.OnTrialError(c, t) }
func (s *swapScheduler) OnTrialRemove(c hone.Control, t *hone.Trial) { s.inner.OnTrialRemove(c, t) }
func (s *swapScheduler) ChooseTrialToRun(c hone.Control) *hone.Trial {
	return s.inner.ChooseTrialToRun(c)
}

// OnTrialSave implements hone.SaveListener for an inner scheduler that
// does.
func (s *swapScheduler) OnTrialSave(c hone.Control, t *hone.Trial, cp *hone.Checkpoint, err error) {
	if l, ok := s.inner.(hone.SaveListener); ok {
		l.OnTrialSave(c, t, cp, err)
	}
}

// CheckObjectives implements hone.MultiObjective: the inner scheduler's
// check, or hone.ErrOneObjective when it has none.
func (s *swapScheduler) CheckObjectives(objs hone.Objectives, cs hone.Constraints) error {
	return checkObjectives(s.inner, objs, cs)
}

// checkObjectives is plugin's hone.MultiObjective check, or an error
// wrapping hone.ErrOneObjective when it has none.
func checkObjectives(plugin any, objs hone.Objectives, cs hone.Constraints) error {
	if m, ok := plugin.(hone.MultiObjective); ok {
		return m.CheckObjectives(objs, cs)
	}
	return fmt.Errorf("%T: %w", plugin, hone.ErrOneObjective)
}

// swapSearcher is a searcher whose implementation can be replaced.
type swapSearcher struct{ inner hone.Searcher }

func (s *swapSearcher) Suggest(id string) (hone.Config, error) { return s.inner.Suggest(id) }
func (s *swapSearcher) OnResult(id string, r *hone.Result)     { s.inner.OnResult(id, r) }
func (s *swapSearcher) OnTrialComplete(id string, last *hone.Result, failed bool) {
	s.inner.OnTrialComplete(id, last, failed)
}

// CheckObjectives implements hone.MultiObjective: the inner searcher's
// check, or hone.ErrOneObjective when it has none.
func (s *swapSearcher) CheckObjectives(objs hone.Objectives, cs hone.Constraints) error {
	return checkObjectives(s.inner, objs, cs)
}

// MaxPending implements hone.PendingLimit: the inner searcher's, or 1
// (the controller's default) when it has none.
func (s *swapSearcher) MaxPending() int {
	if p, ok := s.inner.(hone.PendingLimit); ok {
		return p.MaxPending()
	}
	return 1
}

// swapStopper is a stopper whose implementation can be replaced; a
// FieldStopper stays one.
type swapStopper struct{ inner hone.Stopper }

func (s *swapStopper) ShouldStop(id string, r *hone.Result) bool { return s.inner.ShouldStop(id, r) }
func (s *swapStopper) ShouldStopAll() bool                       { return s.inner.ShouldStopAll() }

type swapFieldStopper struct{ swapStopper }

func (s *swapFieldStopper) Fields() []string { return s.inner.(hone.FieldStopper).Fields() }

func wrapStopper(s hone.Stopper) hone.Stopper {
	if _, ok := s.(hone.FieldStopper); ok {
		return &swapFieldStopper{swapStopper{s}}
	}
	return &swapStopper{s}
}

func setStopper(w, inner hone.Stopper) {
	switch w := w.(type) {
	case *swapStopper:
		w.inner = inner
	case *swapFieldStopper:
		w.inner = inner
	}
}

func innerStopper(w hone.Stopper) hone.Stopper {
	switch w := w.(type) {
	case *swapStopper:
		return w.inner
	case *swapFieldStopper:
		return w.inner
	}
	return w
}

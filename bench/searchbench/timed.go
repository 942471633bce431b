package searchbench

import (
	"runtime"
	"time"

	"github.com/hone-tune/hone"
)

// cpuMeter adds up the CPU time spent inside the calls it times. Every
// timed call runs with its goroutine locked to its OS thread, so the
// thread's CPU clock read before and after the call counts the call's own
// work (and the clock reads), not that of other goroutines.
type cpuMeter struct {
	total time.Duration
	calls int
}

// time runs f and adds its CPU time.
func (m *cpuMeter) time(f func()) {
	runtime.LockOSThread()
	t0 := threadCPU()
	f()
	m.total += threadCPU() - t0
	m.calls++
	runtime.UnlockOSThread()
}

// TimerOverhead returns the CPU time cpuMeter measures for a call that
// does nothing: what every timed call adds to a run's searcher CPU.
func TimerOverhead() time.Duration {
	const n = 20000
	m := &cpuMeter{}
	for range n {
		m.time(func() {})
	}
	return m.total / n
}

// timedSearcher measures the CPU time of every call into a searcher. The
// controller looks for one optional interface on a searcher,
// hone.PendingLimit, which it forwards (answering 1, the controller's
// default, when the inner searcher has none); a new optional interface the
// controller checks must be forwarded here too, or the wrapped method
// would run differently from the plain one.
type timedSearcher struct {
	inner hone.Searcher
	m     *cpuMeter
}

func (s *timedSearcher) Suggest(id string) (cfg hone.Config, err error) {
	s.m.time(func() { cfg, err = s.inner.Suggest(id) })
	return cfg, err
}

func (s *timedSearcher) OnResult(id string, r *hone.Result) {
	s.m.time(func() { s.inner.OnResult(id, r) })
}

func (s *timedSearcher) OnTrialComplete(id string, last *hone.Result, failed bool) {
	s.m.time(func() { s.inner.OnTrialComplete(id, last, failed) })
}

// MaxPending implements hone.PendingLimit.
func (s *timedSearcher) MaxPending() int {
	if p, ok := s.inner.(hone.PendingLimit); ok {
		return p.MaxPending()
	}
	return 1
}

// timedScheduler measures the CPU time of every call into a scheduler,
// passing on hone.SaveListener, the one optional ability the controller
// checks on schedulers.
type timedScheduler struct {
	inner hone.Scheduler
	m     *cpuMeter
}

func (s *timedScheduler) OnTrialAdd(c hone.Control, t *hone.Trial) {
	s.m.time(func() { s.inner.OnTrialAdd(c, t) })
}

func (s *timedScheduler) OnResult(c hone.Control, t *hone.Trial, r *hone.Result) (d hone.Decision) {
	s.m.time(func() { d = s.inner.OnResult(c, t, r) })
	return d
}

func (s *timedScheduler) OnTrialComplete(c hone.Control, t *hone.Trial, r *hone.Result) {
	s.m.time(func() { s.inner.OnTrialComplete(c, t, r) })
}

func (s *timedScheduler) OnTrialError(c hone.Control, t *hone.Trial) {
	s.m.time(func() { s.inner.OnTrialError(c, t) })
}

func (s *timedScheduler) OnTrialRemove(c hone.Control, t *hone.Trial) {
	s.m.time(func() { s.inner.OnTrialRemove(c, t) })
}

func (s *timedScheduler) ChooseTrialToRun(c hone.Control) (t *hone.Trial) {
	s.m.time(func() { t = s.inner.ChooseTrialToRun(c) })
	return t
}

// OnTrialSave implements hone.SaveListener for an inner scheduler that
// does.
func (s *timedScheduler) OnTrialSave(c hone.Control, t *hone.Trial, cp *hone.Checkpoint, err error) {
	if l, ok := s.inner.(hone.SaveListener); ok {
		s.m.time(func() { l.OnTrialSave(c, t, cp, err) })
	}
}

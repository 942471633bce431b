package dehb

import (
	"errors"
	"fmt"

	"github.com/hone-tune/hone"
)

// Scheduler carries out the Searcher's jobs on running trials: a trial
// runs until its time attribute reaches its job's budget, where its result
// answers the job, and it then pauses (to wait for a promotion) or stops;
// promoted trials run again first, then new trials, oldest first. It is
// used on the controller's goroutine only.
type Scheduler struct {
	cfg    Config
	sr     *Searcher
	warned bool
}

// NewScheduler returns DEHB's scheduler with the budgets of cfg (zero
// fields take DefaultConfig's values), bound to sr if sr is not nil
// (else call Bind before the experiment runs).
func NewScheduler(cfg Config, sr *Searcher) (*Scheduler, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Scheduler{cfg: cfg}
	if sr != nil {
		if err := s.Bind(sr); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Bind joins the scheduler and its searcher, which must be a DEHB
// *Searcher that has made no suggestion yet.
func (s *Scheduler) Bind(sr hone.Searcher) error {
	d, ok := sr.(*Searcher)
	if !ok {
		return &hone.ParamError{Plugin: "dehb", Err: fmt.Errorf("the dehb scheduler needs the dehb searcher (searcher: dehb), not %T", sr)}
	}
	if s.sr != nil && s.sr != d {
		return errors.New("dehb: the scheduler is bound to another searcher already")
	}
	if d.n > 0 {
		return errors.New("dehb: the searcher has made suggestions already")
	}
	if err := d.bind(s.cfg); err != nil {
		return err
	}
	s.sr = d
	return nil
}

// Config returns the scheduler's budgets, defaults filled in.
func (s *Scheduler) Config() Config { return s.cfg }

// Budgets returns the budget levels of the time attribute, lowest first;
// the last is MaxT.
func (s *Scheduler) Budgets() []float64 { return newSchedule(s.cfg).levels }

// OnTrialAdd does nothing: the searcher registered the trial's job.
func (s *Scheduler) OnTrialAdd(hone.Control, *hone.Trial) {}

// OnResult answers t's job once t's time attribute reaches its budget,
// and then pauses t (a promotion from its level may come) or stops it;
// before that t continues. A trial DEHB did not create runs to MaxT. A
// result without the time attribute or the metric continues, with one
// warning.
func (s *Scheduler) OnResult(c hone.Control, t *hone.Trial, r *hone.Result) hone.Decision {
	defer s.sweep(c, t.ID)
	tv, loss, ok := s.values(r)
	if !ok {
		if !s.warned {
			s.warned = true
			c.Logf("dehb: a result of trial %s has no %q or no %q; such results continue", t.ID, s.cfg.TimeAttr, s.metric())
		}
		return hone.Continue
	}
	if s.sr == nil {
		return s.beyond(tv)
	}
	rec := s.sr.trials[t.ID]
	if rec == nil {
		return s.beyond(tv)
	}
	rec.time = tv
	if rec.dispatched {
		rec.dispatched = false
		s.sr.unpromote(rec) // it runs now
	}
	j := rec.job
	switch {
	case j == nil && rec.paused:
		return hone.Pause // told already; its pause may wait for a save
	case j == nil:
		return hone.Stop
	case !s.sr.sc.reached(tv, j.level):
		return hone.Continue
	}
	s.sr.answer(rec, loss)

	if s.sr.holds(rec) && s.sr.promotable(rec.level) {
		rec.paused = true
		return hone.Pause
	}
	return hone.Stop
}

// beyond is the decision for a trial DEHB does not know: stop at MaxT.
func (s *Scheduler) beyond(tv float64) hone.Decision {
	if tv >= s.cfg.MaxT {
		return hone.Stop
	}
	return hone.Continue
}

func (s *Scheduler) metric() string {
	if s.sr == nil {
		return ""
	}
	return s.sr.opts.Metric
}

func (s *Scheduler) values(r *hone.Result) (tv, loss float64, ok bool) {
	if s.sr == nil {
		tv, ok = r.Value(s.cfg.TimeAttr)
		return tv, 0, ok
	}
	return s.sr.values(r)
}

// sweep stops the paused trials that wait for a promotion that cannot
// come any more (no promotion from their level may be decided, or they
// lost their member of the population), except skip.
func (s *Scheduler) sweep(c hone.Control, skip string) {
	if s.sr == nil || s.sr.levels == nil {
		return
	}
	var stop []string
	for _, p := range s.sr.pausedTrials() {
		if p.id != skip && (!s.sr.holds(p) || !s.sr.promotable(p.level)) {
			stop = append(stop, p.id)
		}
	}
	for _, id := range stop {
		if rec := s.sr.trials[id]; rec != nil {
			rec.paused = false
		}
		if t := c.Trial(id); t != nil && !t.Status.Finished() {
			c.StopTrial(t)
		}
	}
}

// OnTrialComplete stops paused trials no promotion can take any more (the
// searcher answers the trial's job, if it had one, when it hears of the
// end).
func (s *Scheduler) OnTrialComplete(c hone.Control, t *hone.Trial, _ *hone.Result) { s.sweep(c, t.ID) }

// OnTrialError does nothing: a retried trial keeps its job, and the
// searcher hears of a final failure.
func (s *Scheduler) OnTrialError(hone.Control, *hone.Trial) {}

// OnTrialRemove stops paused trials no promotion can take any more.
func (s *Scheduler) OnTrialRemove(c hone.Control, t *hone.Trial) { s.sweep(c, t.ID) }

// ChooseTrialToRun returns a promoted trial once it is PAUSED (or PENDING
// again, after a resume or a retry), in the order of the promotions, else
// the oldest PENDING trial; paused trials
// no promotion can take any more are stopped first.
func (s *Scheduler) ChooseTrialToRun(c hone.Control) *hone.Trial {
	s.sweep(c, "")
	if s.sr != nil {
		for _, rec := range s.sr.promoted {
			// PENDING: a promoted trial that a resume or a retry sent back.
			if t := c.Trial(rec.id); t != nil && (t.Status == hone.StatusPaused || t.Status == hone.StatusPending) {
				rec.dispatched = true
				return t
			}
		}
	}
	if o, ok := c.(hone.OldestByStatus); ok {
		return o.Oldest(hone.StatusPending)
	}
	for _, t := range c.Trials() {
		if t.Status == hone.StatusPending {
			return t
		}
	}
	return nil
}

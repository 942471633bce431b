// Package median is the median stopping rule (Golovin et al. 2017, Google
// Vizier) with Ray Tune's semantics (docs/SEMANTICS.md §4): from the grace period
// on (a result at exactly the grace period is judged), a trial whose best
// result is worse than the median, over the other trials that have reached
// the same time, of their running means is stopped (or paused, without
// hard_stop).
package median

import (
	"fmt"
	"math"
	"sort"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/scheduler/fifo"
)

// Config holds the rule's parameters. Start from DefaultConfig.
type Config struct {
	// Metric and Mode default to the experiment's.
	Metric string
	Mode   hone.Mode
	// Weights, one per objective of an experiment with several, make the
	// scheduler rank trials by their weighted sum (hone.Objectives'
	// Scalarized): each objective's value as a score, higher being better,
	// times its weight. Metric must then be empty.
	Weights []float64
	// TimeAttr measures progress (default time_total_s).
	TimeAttr string
	// GracePeriod: no trial stops before this much time; a result at
	// exactly GracePeriod is judged (default 60).
	GracePeriod float64
	// MinSamplesRequired other trials must have reached the time (default 3).
	MinSamplesRequired int
	// MinTimeSlice: with too few samples, a trial is paused (to let others
	// catch up) at most once per this much time, and only when others wait
	// (default 0).
	MinTimeSlice float64
	// HardStop stops a trial below the median; otherwise it is paused and
	// later resumed FIFO, never judged again (default true).
	HardStop bool
}

// DefaultConfig returns Ray's defaults.
func DefaultConfig() Config {
	return Config{TimeAttr: hone.FieldTimeTotal, GracePeriod: 60, MinSamplesRequired: 3, HardStop: true}
}

// Validate names the first invalid parameter.
func (c Config) Validate() error {
	switch {
	case c.Mode.Validate() != nil:
		return &hone.ParamError{Plugin: "median", Param: "mode", Err: c.Mode.Validate()}
	case c.GracePeriod < 0:
		return invalid("grace_period", "grace_period = %v: must be >= 0", c.GracePeriod)
	case c.MinSamplesRequired < 1:
		return invalid("min_samples_required", "min_samples_required = %d: must be >= 1", c.MinSamplesRequired)
	case c.MinTimeSlice < 0:
		return invalid("min_time_slice", "min_time_slice = %v: must be >= 0", c.MinTimeSlice)
	}
	return nil
}

// Scheduler is the median stopping rule. It is used on the controller's
// goroutine only.
type Scheduler struct {
	fifo.Base

	cfg       Config
	history   map[string][]point // per trial, in report order
	order     []string           // trials with history, in first-report order
	stopped   map[string]bool    // judged below the median (soft stop: paused)
	lastPause map[string]float64
	warned    bool
	// Ranking is the objective, and CheckObjectives (hone.MultiObjective).
	hone.Ranking
}

type point struct{ time, score float64 } // score: higher is better

// New returns the rule. TimeAttr "" means time_total_s; other zero values
// are taken as given (start from DefaultConfig for Ray's defaults).
func New(cfg Config) (*Scheduler, error) {
	if cfg.TimeAttr == "" {
		cfg.TimeAttr = hone.FieldTimeTotal
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Scheduler{cfg: cfg, history: map[string][]point{}, stopped: map[string]bool{}, lastPause: map[string]float64{},
		Ranking: hone.Ranking{Plugin: "median", Own: hone.Objective{Metric: cfg.Metric, Mode: cfg.Mode}, Weights: cfg.Weights}}, nil
}

// objective is what the scheduler ranks trials by: its own metric and
// mode, each defaulting to the experiment's primary objective's, or with
// several objectives their weighted sum (hone.Ranking).
func (s *Scheduler) objective(c hone.Control) hone.Objective { return s.Ranking.Objective(c) }

func (s *Scheduler) record(c hone.Control, t *hone.Trial, r *hone.Result) (float64, bool) {
	obj := s.objective(c)
	tv, ok1 := r.Value(s.cfg.TimeAttr)
	mv, ok2 := obj.Value(r)
	if !ok1 || !ok2 {
		if !s.warned {
			s.warned = true
			c.Logf("median: a result of trial %s has no %q or no %q; such results continue", t.ID, s.cfg.TimeAttr, obj.Metric)
		}
		return 0, false
	}
	if _, seen := s.history[t.ID]; !seen {
		s.order = append(s.order, t.ID)
	}
	s.history[t.ID] = append(s.history[t.ID], point{tv, obj.Score(mv)})
	return tv, true
}

// OnResult applies the rule to t at the time of r.
func (s *Scheduler) OnResult(c hone.Control, t *hone.Trial, r *hone.Result) hone.Decision {
	if s.stopped[t.ID] {
		return hone.Continue // paused once by a soft stop; now FIFO
	}
	now, ok := s.record(c, t, r)
	if !ok || now < s.cfg.GracePeriod {
		return hone.Continue
	}
	var means []float64
	for _, id := range s.order {
		h := s.history[id]
		if id == t.ID || h[len(h)-1].time < now {
			continue
		}
		if m, ok := s.runningMean(h, now); ok {
			means = append(means, m)
		}
	}
	if len(means) < s.cfg.MinSamplesRequired {
		return s.insufficient(c, t, now)
	}
	if s.best(t.ID) < median(means) {
		s.stopped[t.ID] = true
		if s.cfg.HardStop {
			return hone.Stop
		}
		return hone.Pause
	}
	return hone.Continue
}

// insufficient pauses t (to let others catch up) when others wait and t
// has run MinTimeSlice since its last such pause; else CONTINUE.
func (s *Scheduler) insufficient(c hone.Control, t *hone.Trial, now float64) hone.Decision {
	last, ok := s.lastPause[t.ID]
	if ok && now-last <= s.cfg.MinTimeSlice {
		return hone.Continue
	}
	for _, x := range c.Trials() {
		if x != t && (x.Status == hone.StatusPending || x.Status == hone.StatusPaused) {
			s.lastPause[t.ID] = now
			return hone.Pause
		}
	}
	return hone.Continue
}

// runningMean is the mean score of h over results with grace <= time <= now.
func (s *Scheduler) runningMean(h []point, now float64) (float64, bool) {
	sum, n := 0.0, 0
	for _, p := range h {
		if p.time >= s.cfg.GracePeriod && p.time <= now && !math.IsNaN(p.score) {
			sum += p.score
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

func (s *Scheduler) best(id string) float64 {
	b := math.Inf(-1)
	for _, p := range s.history[id] {
		if p.score > b {
			b = p.score
		}
	}
	return b
}

func median(v []float64) float64 {
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// OnTrialComplete records the last result, so finished trials keep
// counting in later medians.
func (s *Scheduler) OnTrialComplete(c hone.Control, t *hone.Trial, r *hone.Result) {
	if r != nil && (len(s.history[t.ID]) == 0 || s.history[t.ID][len(s.history[t.ID])-1].time != mustTime(r, s.cfg.TimeAttr)) {
		s.record(c, t, r)
	}
}

func mustTime(r *hone.Result, attr string) float64 {
	v, _ := r.Value(attr)
	return v
}

// invalid is the error of Validate for param: a *hone.ParamError.
func invalid(param, format string, args ...any) error {
	return &hone.ParamError{Plugin: "median", Param: param, Err: fmt.Errorf(format, args...)}
}

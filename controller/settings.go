package controller

import (
	"fmt"
	"time"

	"github.com/hone-tune/hone"
)

// Settings are the parts of an experiment that a resume may change (a
// resume with another spec: more CPUs per trial, a different concurrency
// cap, more retries) although the controller's decisions depend on them.
// A journal replay must see each session with the settings it ran with, or
// the rebuilt state would not match the journal: the runner journals the
// first session's settings in the journal's header and each resume's in
// its InResume input (ResumeFlags.Settings), and the controller applies
// them at those points. Everything else a decision depends on (metric,
// mode, seed, search space, searcher, scheduler, stoppers, checkpoint
// scoring) is fixed for the experiment's life.
type Settings struct {
	// Pool is the resource pool trials share.
	Pool hone.Resources `json:"pool"`
	// Resources is what each new trial needs, or nil when the experiment
	// sizes trials with ResourcesFn (which is not data, so a Go caller
	// must resume with the same function).
	Resources *hone.Resources `json:"resources,omitempty"`
	// MaxConcurrentTrials, MaxPendingTrials, Failure, TrialTimeout and
	// ReportTimeout are the Experiment fields of the same names.
	MaxConcurrentTrials int                `json:"max_concurrent_trials,omitempty"`
	MaxPendingTrials    int                `json:"max_pending_trials,omitempty"`
	Failure             hone.FailureConfig `json:"failure"`
	TrialTimeout        time.Duration      `json:"trial_timeout,omitempty"`
	ReportTimeout       time.Duration      `json:"report_timeout,omitempty"`
	// StartsAnnounced says the session's executor announces when a
	// started trial begins to run (hone.StartAnnouncer): a trial's
	// per-trial limits then count from its InStarted input, not from its
	// start, so that time in a cluster's queue is not held against it.
	// It is the executor's, so a resume with another executor changes it.
	StartsAnnounced bool `json:"starts_announced,omitempty"`
	// SpareIDs says that the id of a suggestion the searcher declined
	// (hone.ErrNotNow) is kept for the next one rather than drawn again,
	// so that trial ids do not depend on how often the searcher was asked.
	// Every session of hone sets it; a journal whose sessions ran without
	// it (absent: false) replays with the ids it drew then.
	SpareIDs bool `json:"spare_ids,omitempty"`
}

// Settings returns the settings the controller runs with now.
func (c *Controller) Settings() Settings {
	s := Settings{
		Pool:                c.pool,
		MaxConcurrentTrials: c.exp.MaxConcurrentTrials,
		MaxPendingTrials:    c.exp.MaxPendingTrials,
		Failure:             c.exp.Failure,
		TrialTimeout:        c.exp.TrialTimeout,
		ReportTimeout:       c.exp.ReportTimeout,
		StartsAnnounced:     c.announced,
		SpareIDs:            c.spareIDs,
	}
	if c.exp.ResourcesFn == nil {
		r := c.exp.Resources
		s.Resources = &r
	}
	return s
}

// ApplySettings makes s the controller's settings from now on. The runner
// calls it before replaying a journal, with the settings of the journal's
// first session; a resume input applies its own. It changes no trial; see
// resume for what a resume with new settings does to unfinished trials.
func (c *Controller) ApplySettings(s Settings) error {
	if err := s.Pool.Validate(); err != nil {
		return fmt.Errorf("settings: resource pool: %w", err)
	}
	if s.Resources != nil {
		if err := s.Resources.Validate(); err != nil {
			return fmt.Errorf("settings: resources: %w", err)
		}
	}
	if err := s.Failure.Validate(); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	if s.MaxConcurrentTrials < 0 || s.MaxPendingTrials < 0 || s.TrialTimeout < 0 || s.ReportTimeout < 0 {
		return fmt.Errorf("settings: negative limit in %+v", s)
	}
	c.pool = s.Pool
	if s.Resources != nil && c.exp.ResourcesFn == nil {
		c.exp.Resources = *s.Resources
	}
	c.exp.MaxConcurrentTrials = s.MaxConcurrentTrials
	c.exp.MaxPendingTrials = s.MaxPendingTrials
	c.exp.Failure = s.Failure
	c.exp.TrialTimeout = s.TrialTimeout
	c.exp.ReportTimeout = s.ReportTimeout
	c.announced = s.StartsAnnounced
	c.spareIDs = s.SpareIDs
	if !c.spareIDs {
		c.spareID = ""
	}
	c.autoPending = AutoPending(Slots(c.exp, c.pool))
	return nil
}

// SetStartsAnnounced says whether the executor announces when a started
// trial begins to run (Settings.StartsAnnounced). The runner calls it
// before the first input, for its executor; a journal replay takes it
// from the settings each session ran with.
func (c *Controller) SetStartsAnnounced(on bool) { c.announced = on }

// resize gives every unfinished trial the resources the current settings
// give a new trial, so that a resume with other resources applies to the
// trials it continues, not only to those it adds.
func (c *Controller) resize() {
	for i, t := range c.trials {
		if t.Status.Finished() || c.states[i].life.alive() {
			continue
		}
		t.Resources = c.trialResources(t.Config)
	}
}

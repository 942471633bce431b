package controller

import (
	"fmt"

	"github.com/hone-tune/hone"
)

// Settings returns the settings the controller runs with now.
func (c *Controller) Settings() hone.Settings {
	s := hone.Settings{
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
func (c *Controller) ApplySettings(s hone.Settings) error {
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

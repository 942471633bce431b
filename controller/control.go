package controller

import (
	"math/rand/v2"
	"time"

	"github.com/hone-tune/hone"
)

// control is the hone.Control the controller hands to schedulers.
type control struct{ c *Controller }

func (c *Controller) ctl() hone.Control { return control{c} }

func (x control) Trials() []*hone.Trial       { return x.c.trials }
func (x control) Trial(id string) *hone.Trial { return x.c.Trial(id) }

// Oldest implements hone.OldestByStatus.
func (x control) Oldest(s hone.Status) *hone.Trial { return x.c.Oldest(s) }
func (x control) Now() time.Time                   { return x.c.now }
func (x control) Rand() *rand.Rand                 { return x.c.schedRng }
func (x control) Objectives() hone.Objectives      { return x.c.objs }
func (x control) Constraints() hone.Constraints    { return x.c.exp.Constraints }

func (x control) Logf(format string, args ...any) { x.c.logf(format, args...) }

func (x control) ScheduleSave(t *hone.Trial) *hone.SaveFuture { return x.c.scheduleSave(t) }

func (x control) PauseTrial(t *hone.Trial, save bool) {
	c := x.c
	s := c.st[t.ID]
	switch t.Status {
	case hone.StatusRunning:
		if s.life == lifeStopping {
			return
		}
		c.enqueue(t, hone.Pause)
		if !save && s.next == qPause {
			s.next = qPauseNoSave
		}
		if s.life.waiting() || t.Saving != nil {
			c.advance(t)
			return
		}
		if save {
			c.scheduleSave(t) // sent, and the pause carried out, at its next report
			return
		}
		c.stopProcess(t)
		c.pause(t)
	case hone.StatusPending:
		c.setStatus(t, hone.StatusPaused)
	}
}

func (x control) StopTrial(t *hone.Trial) { x.c.stopTrial(t) }

// FailTrial implements hone.TrialFailer.
func (x control) FailTrial(t *hone.Trial, msg string) { x.c.failTrial(t, msg) }

func (x control) SetConfig(t *hone.Trial, cfg hone.Config, tag string) {
	t.Config = cfg
	if tag != "" {
		t.Tag = tag
	}
	x.c.record(&Record{Op: "config", Trial: t.ID, Config: cfg, Tag: t.Tag})
}

func (x control) SetRestore(t *hone.Trial, cp *hone.Checkpoint) {
	x.c.setRestore(t, cp)
	s := x.c.st[t.ID]
	s.explicitPin, s.restartedSincePin = cp != nil, false
}

func (x control) AppendLine(path, line string) {
	x.c.out = append(x.c.out, Action{Kind: ActAppend, Path: path, Text: line})
}

func (x control) CopyFile(src, dst string) {
	x.c.out = append(x.c.out, Action{Kind: ActCopy, Path: dst, Src: src})
}

func (x control) Pin(cp *hone.Checkpoint)   { x.c.pin(cp) }
func (x control) Unpin(cp *hone.Checkpoint) { x.c.unpin(cp) }

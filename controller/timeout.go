package controller

import (
	"container/heap"
	"fmt"
	"time"

	"github.com/hone-tune/hone"
)

// deadlineQueue is a min-heap of the running trials that a per-trial limit
// (Experiment.TrialTimeout, ReportTimeout) can end, by deadline, then by
// creation index (so that equal deadlines expire in a fixed order). Each
// trial is in it at most once; tstate.dlIndex is its position.
type deadlineQueue struct {
	ts []*hone.Trial
	st map[string]*tstate
}

func (q *deadlineQueue) Len() int { return len(q.ts) }
func (q *deadlineQueue) Less(i, j int) bool {
	a, b := q.st[q.ts[i].ID], q.st[q.ts[j].ID]
	if !a.run.deadline.Equal(b.run.deadline) {
		return a.run.deadline.Before(b.run.deadline)
	}
	return q.ts[i].Index < q.ts[j].Index
}
func (q *deadlineQueue) Swap(i, j int) {
	q.ts[i], q.ts[j] = q.ts[j], q.ts[i]
	q.st[q.ts[i].ID].run.dlIndex = i
	q.st[q.ts[j].ID].run.dlIndex = j
}
func (q *deadlineQueue) Push(x any) {
	t := x.(*hone.Trial)
	q.st[t.ID].run.dlIndex = len(q.ts)
	q.ts = append(q.ts, t)
}
func (q *deadlineQueue) Pop() any {
	n := len(q.ts) - 1
	t := q.ts[n]
	q.ts[n] = nil
	q.ts = q.ts[:n]
	q.st[t.ID].run.dlIndex = -1
	return t
}

// limited reports whether the experiment has a per-trial limit.
func (c *Controller) limited() bool { return c.exp.TrialTimeout > 0 || c.exp.ReportTimeout > 0 }

// watch puts a trial that has just started running under the per-trial
// limits, or moves its deadline after a report.
func (c *Controller) watch(t *hone.Trial) {
	if !c.limited() {
		return
	}
	s := c.st[t.ID]
	s.run.deadline = c.deadlineOf(s)
	q := &c.deadlines
	if q.st == nil {
		q.st = c.st
	}
	if s.run.dlIndex >= 0 && s.run.dlIndex < q.Len() && q.ts[s.run.dlIndex] == t {
		heap.Fix(q, s.run.dlIndex)
		return
	}
	heap.Push(q, t)
}

// unwatch takes t out of the deadline queue: it was told to stop, or its
// process is gone.
func (c *Controller) unwatch(t *hone.Trial) {
	s := c.st[t.ID]
	q := &c.deadlines
	if s == nil || s.run.dlIndex < 0 || s.run.dlIndex >= q.Len() || q.ts[s.run.dlIndex] != t {
		return
	}
	heap.Remove(q, s.run.dlIndex)
}

// running puts t's current run under the per-trial limits from now: at
// its start, or, when the executor announces starts, once it runs.
func (c *Controller) running(t *hone.Trial) {
	s := c.st[t.ID]
	s.to(evRun)
	s.run.startedAt, s.run.lastReport = c.now, c.now
	c.watch(t)
}

// onStarted handles hone.EventStarted: the trial's current run, queued since its
// start, runs from now on, for its limits and its result times. A trial that is not running, was told to stop
// (its start may have raced the stop), exited, or already counts as
// running is left alone: it is a late or repeated announcement.
func (c *Controller) onStarted(in hone.Event) {
	t := c.Trial(in.TrialID)
	if t == nil || t.Status != hone.StatusRunning {
		return
	}
	s := c.st[t.ID]
	if s.life != lifeQueued {
		return
	}
	// The time it waited in the queue is no training time: the first
	// result's time_this_iter_s (and so time_total_s) and its
	// time_since_restore count from now.
	s.run.lastTime, s.run.restoredAt = c.now, c.now
	c.running(t)
}

// reported notes that t reported (a result or a save): the report limit
// starts again. A queued trial that reports runs, even if the executor
// has not announced it.
func (c *Controller) reported(t *hone.Trial) {
	s := c.st[t.ID]
	if s.life == lifeQueued {
		c.running(t)
		return
	}
	s.run.lastReport = c.now
	if c.exp.ReportTimeout > 0 {
		c.watch(t)
	}
}

// deadlineOf is the earlier of the two limits of a trial's current run.
func (c *Controller) deadlineOf(s *tstate) time.Time {
	var d time.Time
	if l := c.exp.TrialTimeout; l > 0 {
		d = s.run.startedAt.Add(l)
	}
	if l := c.exp.ReportTimeout; l > 0 {
		if r := s.run.lastReport.Add(l); d.IsZero() || r.Before(d) {
			d = r
		}
	}
	return d
}

// expire fails every watched trial whose deadline is before now: its run
// lasted longer than TrialTimeout, or it has not reported for longer than
// ReportTimeout. Each failure goes through the failure path (retried from
// the checkpoint while retries are left). It costs O(log n) per expired
// trial and nothing when none has expired. The trial skip is left alone:
// the input being handled is its exit.
func (c *Controller) expire(skip string) {
	q := &c.deadlines
	var kept *hone.Trial
	for q.Len() > 0 {
		t := q.ts[0]
		s := c.st[t.ID]
		if !s.run.deadline.Before(c.now) {
			break
		}
		heap.Pop(q)
		if t.ID == skip {
			kept = t
			continue
		}
		if !s.life.alive() || s.life == lifeStopping || t.Status != hone.StatusRunning {
			continue
		}
		c.fail(t, c.limitMessage(s))
	}
	if kept != nil {
		heap.Push(q, kept) // onExited takes it out
	}
}

// limitMessage says which limit a trial exceeded, and how long it is.
func (c *Controller) limitMessage(s *tstate) string {
	if l := c.exp.TrialTimeout; l > 0 && !s.run.startedAt.Add(l).After(s.run.deadline) {
		return fmt.Sprintf("trial exceeded trial_timeout of %v (it ran for %v)", l, c.now.Sub(s.run.startedAt))
	}
	l := c.exp.ReportTimeout
	return fmt.Sprintf("no report for %v (report_timeout; the last was %v ago)", l, c.now.Sub(s.run.lastReport))
}

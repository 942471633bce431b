// Package controller is hone's pure, deterministic state machine. It owns
// every trial, consumes inputs (results, saves, exits, ticks), calls the
// scheduler, searcher and stoppers, and emits actions for the runner. It
// does no I/O, starts no goroutines and reads no clock: the same seed and the
// same inputs give the same actions, which is what makes resume by journal
// replay exact.
//
// # How trials end
//
// A trial becomes TERMINATED only when something with the right to end it
// did: a stopper's ShouldStop for that trial, a scheduler (a STOP decision
// or Control.StopTrial), the trial itself (a done result, or a clean exit of
// its process that nobody asked for), or a resume with Unfinished false. It
// becomes ERROR only through the failure path, once its retries are used.
//
// Everything that stops the whole experiment stops its running trials the
// way an interrupt does: they are asked to save (at their next report, or
// at once if they are waiting), then stopped, and they keep status RUNNING,
// so that a resume restarts them from that checkpoint. PENDING and PAUSED
// trials keep their status. This holds for every experiment-wide stop:
//
//   - an interrupt (hone.EventInterrupt: Ctrl-C, SIGTERM);
//   - fail_fast, when a trial has failed for good: Err names it; a resume
//     forgets it, continues the stopped trials and leaves the failed one
//     ERROR unless asked to retry or restart errored trials;
//   - the time budget: a resume after the budget was used starts a new
//     budget of the same length (a resume after a crash or an interrupt
//     continues the one in use);
//   - a stopper's ShouldStopAll: asked again at every input, so a resume
//     stops again at once if the stopper still says so;
//   - a searcher failure: Err names it; a resume asks the searcher again;
//   - a metric that no result contains: Err names it; a resume checks again
//     when its next trial finishes;
//   - a result without a field that a stopper reads (hone.FieldStopper,
//     such as a spec's stop threshold): Err names the field and the
//     result's fields; a resume checks again at its next result.
//
// # Per-trial limits
//
// Experiment.TrialTimeout and ReportTimeout are judged on the inputs'
// clock: before the controller acts on an input it fails every running
// trial whose run has lasted longer than TrialTimeout since it started, or
// that has not reported for longer than ReportTimeout. The failure is
// retried from the trial's checkpoint under Failure.MaxFailures like any
// other; its message names the limit. Ticks bring the time when no trial
// reports, so a limit is noticed within one tick of the runner.
//
// With an executor that announces starts (Settings.StartsAnnounced: a
// cluster's trials wait in its queue), a started trial is queued until its
// hone.EventStarted (or its first report), and both limits count from
// then: a queued trial is under neither. The setting is journaled with each
// session's settings, so a replay counts as the run did.
package controller

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/scheduler/fifo"
)

// Controller is the experiment state machine. It is not safe for concurrent
// use: one goroutine (the runner) owns it.
type Controller struct {
	exp    *hone.Experiment
	objs   hone.Objectives // with their modes: Control.Objectives
	sched  hone.Scheduler
	search hone.Searcher
	pool   hone.Resources

	// cause is the Cause of the input being handled, for its trial
	// (causeOf): the error behind a failure that input brings.
	cause      error
	causeTrial string

	trials []*hone.Trial
	st     map[string]*tstate // every trial's state (and the trial), by id
	states []*tstate          // the same states in the order of trials, for snapshots

	idRng *rand.Rand
	idSrc *rand.PCG // idRng's source, for snapshots
	// spareIDs and spareID: with spareIDs, the id of a suggestion the
	// searcher did not make waits in spareID for the next (keepID).
	spareIDs bool
	spareID  string
	schedRng *rand.Rand
	schedSrc *rand.PCG // schedRng's source, for snapshots

	now          time.Time
	began        bool
	sessionStart time.Time
	spent        time.Duration
	lastSeen     time.Time // time of the input before the current one
	endSent      bool

	used     hone.Resources
	gpuFree  []float64 // the pool's GPUs by index: the share of each no live trial holds
	live     int       // trials with a live process (including stopping ones)
	nPending int
	nPaused  int

	searchDone   bool
	searchFailed bool // searchDone because Suggest failed: a resume asks again
	stopping     bool // no new starts; the experiment ends when nothing is alive
	stopReason   string
	budgetUsed   bool // the session stopped because the time budget was used
	interrupted  bool
	metricSeen   bool
	fatal        error
	deciding     *hone.Trial

	autoPending int // the pending bound of searchers that do not learn

	// announced: the executor announces when a started trial begins to
	// run (Settings.StartsAnnounced), so per-trial limits wait for it.
	announced bool

	// deadlines orders running trials by when a per-trial limit
	// (TrialTimeout, ReportTimeout) ends them.
	deadlines deadlineQueue

	pins map[string]int // checkpoint path -> number of trials that will restore from it

	// queues index PENDING and PAUSED trials by creation order (Oldest).
	queues [2]statusQueue

	out   []Action
	spare []Action // the array Ready handed out before the last one
}

// tstate is the controller's private per-trial state. A finished trial
// keeps only this small struct (and its checkpoint manager, if it has
// checkpoints): what its runs needed is in run, which it gives up.
type tstate struct {
	t   *hone.Trial
	mgr *Manager  // nil until the trial's first checkpoint (see manager)
	run *runState // nil before the first start and once finished with no process (see settle)

	// life is where the trial's run is (see runLife); only to changes it.
	life runLife
	// next is the run's decision queue.
	next queuedDecision
	// interrupt: an experiment-wide stop asked this run to save and stop
	// (saveAndStop). It is not a state of its own: it holds whatever the
	// run's state, a STOP or PAUSE decided meanwhile still wins over it,
	// and it outlives the stop, so that the exit keeps the trial RUNNING.
	interrupt bool

	// Facts about the trial rather than states of its run.
	warnedMetric      bool    // told that a result lacks the metric
	warnedScratch     bool    // told that a pause without a checkpoint restarts from scratch
	explicitPin       bool    // RestoreFrom was set by SetRestore (an exploit)
	restartedSincePin bool    // the trial started from that restore point since
	queued            [2]bool // an entry of the trial is in queues[i]
}

// runState is what a trial's runs need and a finished trial does not: the
// current run's counters, times and devices. A trial gets one at its
// first start and gives it up once it is finished with no process.
type runState struct {
	gpus []int // the pool's GPUs the live process holds (a share of each), by index

	iter       int
	sinceIter  int
	timeTotal  float64
	lastTime   time.Time
	restoredAt time.Time

	schedFail string // a failure the scheduler asked for while deciding on the trial

	// startedAt and lastReport are when the current run started and when
	// the trial last reported (a result or a save), for the per-trial
	// limits; deadline is the earlier of the two limits and dlIndex the
	// trial's position in the deadline queue (-1 when not in it). A run
	// in lifeQueued is under no limit.
	startedAt, lastReport time.Time
	deadline              time.Time
	dlIndex               int
}

// settle gives up t's run state once t is finished and has no process:
// nothing reads it after that, and a trial that runs again (an ERROR trial
// a resume retries) gets a new one at its start.
func (c *Controller) settle(t *hone.Trial) {
	if s := c.st[t.ID]; s != nil {
		settle(s)
	}
}

// settle drops the run state of s's trial once it is finished and idle.
func settle(s *tstate) {
	if s.life == lifeIdle && s.t.Status.Finished() {
		s.run = nil
	}
}

// manager returns s's checkpoint manager, making it at first need.
func (c *Controller) manager(s *tstate) *Manager {
	if s.mgr == nil {
		s.mgr = newManager(&c.exp.Checkpoint, s.t.Dir)
	}
	return s.mgr
}

// New returns a controller for exp with a resource pool. Call Step with an
// hone.EventBegin input to start it.
func New(exp *hone.Experiment, pool hone.Resources) (*Controller, error) {
	if err := exp.Validate(); err != nil {
		return nil, err
	}
	if err := pool.Validate(); err != nil {
		return nil, fmt.Errorf("resource pool: %w", err)
	}
	if exp.ResourcesFn == nil {
		// Every trial needs the same: one that can never start is found
		// now, not when the first trial is due to start.
		need := exp.Resources
		if isZero(need) {
			need = hone.Resources{CPU: 1}
		}
		if !fits(need, pool) {
			return nil, fmt.Errorf("each trial needs %s but the whole resource pool has %s, so no trial could ever start; ask for less (Experiment.Resources) or give the pool more", need, pool)
		}
	}
	objs := exp.ResolvedObjectives()
	sched := exp.Scheduler
	if sched == nil {
		sched = fifo.New()
	}
	own := *exp // the settings a resume changes (ApplySettings) are the controller's own
	exp = &own
	idSrc, schedSrc := rand.NewPCG(exp.Seed, 0x1d5eed), rand.NewPCG(exp.Seed, 0x5c4ed)
	return &Controller{
		exp: exp, objs: objs, sched: sched, search: exp.Searcher, pool: pool,
		st:          map[string]*tstate{},
		idRng:       rand.New(idSrc),
		idSrc:       idSrc,
		spareIDs:    true,
		schedRng:    rand.New(schedSrc),
		schedSrc:    schedSrc,
		pins:        map[string]int{},
		autoPending: AutoPending(Slots(exp, pool)),
	}, nil
}

// Ready returns the actions emitted since the last call and clears them.
// The runner appends every ActRecord to the journal, then carries out the
// rest in order. The slice is valid until Ready is called twice more: the
// controller reuses its array.
func (c *Controller) Ready() []Action {
	out := c.out
	clear(c.spare)
	c.out, c.spare = c.spare[:0], out
	return out
}

// Trials returns every trial in creation order. Read only.
func (c *Controller) Trials() []*hone.Trial { return c.trials }

// Trial returns the trial with id, or nil.
func (c *Controller) Trial(id string) *hone.Trial {
	if s := c.st[id]; s != nil {
		return s.t
	}
	return nil
}

// Manager returns the checkpoint manager of trial id, or nil if there is
// no such trial.
func (c *Controller) Manager(id string) *Manager {
	if s := c.st[id]; s != nil {
		return c.manager(s)
	}
	return nil
}

// Err returns the error that ended the experiment in this session
// (fail_fast, a searcher failure, a metric no result contains), or nil. A
// resume starts without it.
func (c *Controller) Err() error { return c.fatal }

// Stopping reports whether the experiment is stopping: no trial starts
// any more, and it ends once the running trials have saved and stopped.
// StopReason says why ("" when not stopping).
func (c *Controller) Stopping() bool { return c.stopping }

// StopReason says why the experiment is stopping, or "".
func (c *Controller) StopReason() string { return c.stopReason }

// Alive reports how many trials have a live process.
func (c *Controller) Alive() int { return c.live }

// Done reports whether the experiment is over: nothing is alive and either
// it was stopped or every trial is finished and the searcher has no more.
func (c *Controller) Done() bool {
	if c.live > 0 {
		return false
	}
	if c.stopping {
		return true
	}
	if !c.searchDone {
		return false
	}
	for _, t := range c.trials {
		if !t.Status.Finished() {
			return false
		}
	}
	return true
}

// Stuck reports whether the experiment can make no progress: nothing is
// alive, it is not done, and no trial could be started. It describes why.
func (c *Controller) Stuck() (bool, string) {
	if c.live > 0 || c.Done() {
		return false, ""
	}
	counts := map[hone.Status]int{}
	for _, t := range c.trials {
		counts[t.Status]++
	}
	why := fmt.Sprintf("no trial is running and none can start (pending=%d paused=%d terminated=%d error=%d",
		counts[hone.StatusPending], counts[hone.StatusPaused], counts[hone.StatusTerminated], counts[hone.StatusError])
	if !c.searchDone {
		why += ", the searcher has no suggestion now"
	}
	return true, why + ")"
}

// Interrupted reports whether the experiment was stopped by hone.EventInterrupt.
func (c *Controller) Interrupted() bool { return c.interrupted }

// NextCheckpointPath returns the index and relative path where the next
// checkpoint of trial id is to be committed.
func (c *Controller) NextCheckpointPath(id string) (int, string, error) {
	s := c.st[id]
	if s == nil {
		return 0, "", fmt.Errorf("unknown trial %q", id)
	}
	i, p := c.manager(s).NextPath()
	return i, p, nil
}

// Registered reports whether path is a registered checkpoint of any trial.
func (c *Controller) Registered(p string) bool {
	for _, s := range c.st {
		if s.mgr.Has(p) {
			return true
		}
	}
	return false
}

// Step consumes one input and emits actions (see Ready).
func (c *Controller) Step(in hone.Event) {
	c.lastSeen = c.now
	c.now = in.At()
	if in.Kind != hone.EventBegin && in.Kind != hone.EventResume {
		// A resume's time is on a new clock, and no process of the
		// previous session survives it: only later inputs judge limits.
		skip := ""
		if in.Kind == hone.EventExited || in.Kind == hone.EventStartFailed {
			skip = in.TrialID // its process is gone: the exit speaks for itself
		}
		c.expire(skip)
	}
	c.cause, c.causeTrial = in.Cause, in.TrialID
	switch in.Kind {
	case hone.EventBegin:
		if !c.began {
			c.began = true
			c.sessionStart = c.now
		}
	case hone.EventResult:
		if t := c.liveTrial(in); t != nil && c.inTurn(t, in) {
			c.onResult(t, in)
		}
	case hone.EventSaved:
		if t := c.liveTrial(in); t != nil && c.inTurn(t, in) {
			c.onSaved(t, in)
		}
	case hone.EventExited, hone.EventStartFailed:
		if t := c.liveTrial(in); t != nil {
			c.onExited(t, in)
		}
	case hone.EventStarted:
		c.onStarted(in)
	case hone.EventTrialFailed:
		c.onTrialFailed(in)
	case hone.EventCheckpointMissing:
		if t := c.liveTrial(in); t != nil && in.Checkpoint != nil {
			c.onCheckpointMissing(t, in.Checkpoint.Path)
		}
	case hone.EventTick:
	case hone.EventInterrupt:
		c.interrupt()
	case hone.EventResume:
		flags := hone.ResumeFlags{Unfinished: true}
		if in.Resume != nil {
			flags = *in.Resume
		}
		c.resume(flags)
	default:
		c.logf("ignoring unknown input kind %q", in.Kind)
	}
	c.cause, c.causeTrial = nil, ""
	c.checkBudget()
	c.schedule()
	if c.Done() && c.began && !c.endSent {
		c.endSent = true
		c.out = append(c.out, Action{Kind: ActNotify, Note: NoteEnd})
	}
}

func (c *Controller) liveTrial(in hone.Event) *hone.Trial {
	s := c.st[in.TrialID]
	if s == nil || !s.life.alive() {
		c.logf("ignoring %s input for trial %q with no live process", in.Kind, in.TrialID)
		return nil
	}
	return s.t
}

// inTurn reports whether t's run expects the result or save in, and logs
// why not when it does not. A trial that was told to stop may still
// report (the executor contract says none comes, but acting on one would
// answer a process that is exiting); otherwise the contract has a trial
// report only while it computes (a queued run runs from its first report)
// and save only in answer to DirectCheckpoint. Refusing the rest here keeps the
// run's transitions (runLife.next) legal whatever the inputs.
func (c *Controller) inTurn(t *hone.Trial, in hone.Event) bool {
	l, e := c.st[t.ID].life, evSaved
	if l == lifeStopping {
		c.logf("ignoring %s input for trial %s: it was told to stop", in.Kind, t.ID)
		return false
	}
	if in.Kind == hone.EventResult {
		e = evResult
		if l == lifeQueued {
			l = lifeComputing
		}
	}
	if l.can(e) {
		return true
	}
	c.logf("ignoring %s input for trial %s: its process is %s, not waiting to %s", in.Kind, t.ID, l, e)
	return false
}

// ---- results, saves and exits ----

func (c *Controller) onResult(t *hone.Trial, in hone.Event) {
	s := c.st[t.ID]
	c.reported(t)
	s.to(evResult)
	if in.Err != "" { // the runner could not commit the result's checkpoint
		c.fail(t, in.Err)
		return
	}
	s.run.iter++
	s.run.sinceIter++
	dt := c.now.Sub(s.run.lastTime).Seconds()
	if dt < 0 {
		dt = 0
	}
	s.run.lastTime = c.now
	s.run.timeTotal += dt
	done := in.Done
	if d, ok := in.Metrics[hone.FieldDone].(bool); ok && d {
		done = true
	}
	r := &hone.Result{
		TrialID: t.ID, Metrics: in.Metrics,
		TrainingIteration: s.run.iter, TimeThisIter: dt, TimeTotal: s.run.timeTotal,
		TimeSinceRestore: c.now.Sub(s.run.restoredAt).Seconds(), IterationsSinceRestore: s.run.sinceIter,
		Timestamp: c.now, Done: done, PID: in.PID, Hostname: in.Hostname,
	}
	if in.Checkpoint != nil {
		r.Checkpoint = &hone.Checkpoint{TrialID: t.ID, Index: in.Checkpoint.Index, Path: in.Checkpoint.Path,
			Iteration: s.run.iter, TimeTotal: s.run.timeTotal}
	}
	t.LastResult = r
	c.notify(NoteResult, t, r, nil, "")
	if r.Checkpoint != nil {
		c.register(t, r.Checkpoint, r)
	}
	if len(c.objs) > 0 {
		if o, missing := c.missingObjective(r); !missing {
			c.metricSeen = true
		} else if !s.warnedMetric {
			s.warnedMetric = true
			if v, present := in.Metrics[o.Metric]; present {
				c.logf("trial %s: result %d: metric %q is %s, not a number", t.ID, s.run.iter, o.Metric, describeValue(v))
			} else {
				c.logf("trial %s: result %d has no metric %q (keys: %s)", t.ID, s.run.iter, o.Metric, keys(in.Metrics))
			}
		}
	}

	if !done && c.checkStopFields(t, r) {
		return // the experiment stops; t saves and stops with the others
	}
	dec := hone.Continue
	if done || c.shouldStop(t, r) {
		dec = hone.Stop
	} else {
		c.deciding = t
		dec = c.sched.OnResult(c.ctl(), t, r)
		c.deciding = nil
		if msg := s.run.schedFail; msg != "" {
			s.run.schedFail = ""
			c.fail(t, msg)
			return
		}
		if dec != hone.Stop {
			c.search.OnResult(t.ID, r)
		}
	}
	if f := c.exp.Checkpoint.Frequency; f > 0 && s.run.iter%f == 0 && r.Checkpoint == nil && dec != hone.Stop {
		c.scheduleSave(t)
	}
	c.enqueue(t, dec)
	c.advance(t)
}

func (c *Controller) shouldStop(t *hone.Trial, r *hone.Result) bool {
	for _, st := range c.exp.Stoppers {
		if st.ShouldStop(t.ID, r) {
			return true
		}
	}
	return false
}

func (c *Controller) onSaved(t *hone.Trial, in hone.Event) {
	s := c.st[t.ID]
	c.reported(t)
	s.to(evSaved)
	f := t.Saving
	t.Saving = nil
	if f == nil {
		c.logf("trial %s: save answered with none requested", t.ID)
		c.advance(t)
		return
	}
	if in.Err != "" {
		err := fmt.Errorf("save failed: %s", in.Err)
		c.resolveSave(t, f, nil, err)
		c.fail(t, err.Error())
		return
	}
	cp := s.mgr.Latest()
	if in.Checkpoint != nil {
		cp = &hone.Checkpoint{TrialID: t.ID, Index: in.Checkpoint.Index, Path: in.Checkpoint.Path,
			Iteration: s.run.iter, TimeTotal: s.run.timeTotal}
		c.register(t, cp, t.LastResult)
	}
	c.resolveSave(t, f, cp, nil)
	c.advance(t)
}

func (c *Controller) onExited(t *hone.Trial, in hone.Event) {
	s := c.st[t.ID]
	defer c.settle(t)
	wasStopping := s.life == lifeStopping
	s.to(evGone)
	c.unwatch(t)
	c.live--
	c.release(t)
	if f := t.Saving; f != nil {
		t.Saving = nil
		if in.Err != "" {
			err := fmt.Errorf("save failed: trial exited: %s", in.Err)
			c.resolveSave(t, f, nil, err)
			if !t.Status.Finished() && t.Status != hone.StatusRunning {
				// The trial was paused (or already unpaused) while its save
				// was in flight: a failed save still fails the trial.
				c.fail(t, err.Error())
				return
			}
		} else {
			c.resolveSave(t, f, s.mgr.Latest(), nil)
		}
	}
	// A trial that exits by itself after an interrupt (the executor
	// signalled it) stays RUNNING, as one stopped after its save does:
	// resume restarts it from its latest checkpoint.
	if wasStopping || s.interrupt {
		if in.Err != "" && t.Status == hone.StatusRunning && !s.interrupt {
			c.fail(t, in.Err)
		} else if in.Err != "" {
			c.logf("trial %s: error while stopping: %s", t.ID, in.Err)
		}
		return
	}
	if t.Status != hone.StatusRunning {
		return
	}
	if in.Err != "" {
		c.fail(t, in.Err)
		return
	}
	c.finish(t, hone.StatusTerminated)
}

// onTrialFailed logs an error outside a trial (its files could not be
// written) and fails the trial if it is running.
func (c *Controller) onTrialFailed(in hone.Event) {
	t := c.Trial(in.TrialID)
	if t == nil {
		c.logf("ignoring %s input for unknown trial %q: %s", in.Kind, in.TrialID, in.Err)
		return
	}
	c.logf("trial %s: %s", t.ID, in.Err)
	if s := c.st[t.ID]; t.Status != hone.StatusRunning || !s.life.alive() || s.life == lifeStopping {
		return
	}
	c.fail(t, in.Err)
}

// onCheckpointMissing handles a trial just started from a checkpoint that
// no longer exists: the checkpoint is forgotten (a ckdel record) and the
// trial starts again from its own newest registered checkpoint, or from
// scratch, with the iteration count of the one it now uses. A start that
// finds that one missing too comes back here, so the trial ends up on the
// newest checkpoint that exists.
func (c *Controller) onCheckpointMissing(t *hone.Trial, missing string) {
	s := c.st[t.ID]
	if t.RestoreFrom == nil || t.RestoreFrom.Path != missing || t.Status != hone.StatusRunning {
		c.logf("trial %s: ignoring missing checkpoint %s: it is not the one the trial started from", t.ID, missing)
		return
	}
	c.setRestore(t, nil)
	s.explicitPin, s.restartedSincePin = false, false
	for _, o := range c.st {
		if o.mgr.Has(missing) {
			owner := o.mgr.byPath[missing].cp.TrialID
			o.mgr.remove(missing)
			c.record(&Record{Op: "ckdel", Trial: owner, Path: missing})
			if ot := c.Trial(owner); ot != nil && ot.Checkpoint != nil && ot.Checkpoint.Path == missing {
				ot.Checkpoint = o.mgr.Latest()
			}
			break
		}
	}
	next := s.mgr.Latest()
	c.logf("trial %s: checkpoint %s is missing (deleted?); restarting from %s", t.ID, missing, describe(next))
	c.setRestore(t, next)
	// Undo the start, then start again from next.
	s.to(evGone)
	c.live--
	c.release(t)
	c.start(t)
}

// ---- the decision queue ----

// enqueue queues decision d for t's run (see queuedDecision).
func (c *Controller) enqueue(t *hone.Trial, d hone.Decision) {
	s := c.st[t.ID]
	s.next = s.next.with(queueOf(d))
}

// advance carries out the queued decision of a waiting trial, unless a save
// is in flight (then it waits for the save to resolve).
func (c *Controller) advance(t *hone.Trial) {
	s := c.st[t.ID]
	if !s.life.waiting() || c.deciding == t {
		return
	}
	if t.Saving != nil {
		if s.life != lifeSaving {
			c.sendSave(t)
		}
		return
	}
	if s.interrupt && s.next == qContinue {
		// The experiment is stopping: save, stop, stay RUNNING so that a
		// resume continues the trial. A STOP or PAUSE decided meanwhile is
		// carried out as usual below: it is the trial's own end or pause.
		if s.life != lifeSaved && !c.checkpointedNow(t) {
			c.scheduleSave(t)
			c.advance(t)
			return
		}
		c.stopProcess(t)
		return
	}
	switch s.next {
	case qStop:
		if c.exp.Checkpoint.AtEnd && s.life != lifeSaved && !c.checkpointedNow(t) {
			c.scheduleSave(t)
			c.advance(t)
			return
		}
		c.stopProcess(t)
		c.finish(t, hone.StatusTerminated)
	case qPause, qPauseNoSave:
		if s.next != qPauseNoSave && s.life != lifeSaved && !c.checkpointedNow(t) {
			c.scheduleSave(t)
			c.advance(t)
			return
		}
		c.stopProcess(t)
		c.pause(t)
	default:
		s.to(evContinue)
		c.direct(t, hone.DirectContinue)
	}
}

// sendSave sends DirectCheckpoint for t.Saving to t's waiting process.
func (c *Controller) sendSave(t *hone.Trial) {
	c.st[t.ID].to(evSaveSent)
	c.direct(t, hone.DirectCheckpoint)
}

// checkpointedNow reports whether t's latest checkpoint is from its current
// iteration, so saving again would add nothing.
func (c *Controller) checkpointedNow(t *hone.Trial) bool {
	s := c.st[t.ID]
	cp := s.mgr.Latest()
	return cp != nil && cp.Iteration == s.run.iter && s.run.iter > 0
}

func (c *Controller) stopProcess(t *hone.Trial) {
	s := c.st[t.ID]
	if !s.life.can(evStop) {
		return // no process, or it is stopping already
	}
	s.to(evStop)
	s.next = qContinue
	c.unwatch(t)
	c.direct(t, hone.DirectStop)
}

// resolveSave settles f, the save of t that was in flight, and tells a
// scheduler that listens (hone.SaveListener).
func (c *Controller) resolveSave(t *hone.Trial, f *hone.SaveFuture, cp *hone.Checkpoint, err error) {
	f.Resolve(cp, err)
	if l, ok := c.sched.(hone.SaveListener); ok {
		l.OnTrialSave(c.ctl(), t, cp, err)
	}
}

func (c *Controller) scheduleSave(t *hone.Trial) *hone.SaveFuture {
	if t.Saving != nil {
		return t.Saving
	}
	s := c.st[t.ID]
	f := hone.NewSaveFuture(t.ID)
	if !s.life.alive() || s.life == lifeStopping {
		f.Resolve(s.mgr.Latest(), nil)
		return f
	}
	t.Saving = f
	if s.life.can(evSaveSent) && c.deciding != t {
		c.sendSave(t)
	}
	return f
}

// ---- status changes: the one place ----

// setStatus is the only function that changes a trial's status.
func (c *Controller) setStatus(t *hone.Trial, st hone.Status) {
	if t.Status == st {
		return
	}
	switch t.Status {
	case hone.StatusPending:
		c.nPending--
	case hone.StatusPaused:
		c.nPaused--
	}
	switch st {
	case hone.StatusPending:
		c.nPending++
	case hone.StatusPaused:
		c.nPaused++
	}
	t.Status = st
	c.queueStatus(t, st)
	c.record(&Record{Op: "status", Trial: t.ID, Status: st, Error: t.Error, Failures: t.Failures})
	if st.Finished() {
		c.settle(t)
	}
}

func (c *Controller) finish(t *hone.Trial, st hone.Status) {
	was := t.Status
	c.setStatus(t, st)
	c.setRestore(t, nil)
	switch was {
	case hone.StatusRunning:
		c.sched.OnTrialComplete(c.ctl(), t, t.LastResult)
	default:
		c.sched.OnTrialRemove(c.ctl(), t)
	}
	c.search.OnTrialComplete(t.ID, t.LastResult, st == hone.StatusError)
	c.notify(NoteComplete, t, t.LastResult, nil, "")
	c.checkMetricSeen(t)
}

func (c *Controller) pause(t *hone.Trial) {
	s := c.st[t.ID]
	if !s.explicitPin {
		c.setRestore(t, s.mgr.Latest())
	}
	if t.RestoreFrom == nil && s.run.iter > 0 && !s.warnedScratch {
		s.warnedScratch = true
		c.logf("trial %s paused at iteration %d without any checkpoint: it will restart from scratch when resumed "+
			"(report checkpoints, or use a class-style trainable so hone can save on demand)", t.ID, s.run.iter)
	}
	c.setStatus(t, hone.StatusPaused)
}

// fail is the failure path of docs/SEMANTICS.md §3: retry from the latest
// checkpoint while retries are left, else ERROR.
func (c *Controller) fail(t *hone.Trial, msg string) {
	s := c.st[t.ID]
	if s.life.alive() {
		c.stopProcess(t)
	}
	s.next = qContinue
	t.Failures++
	t.Error = msg
	if t.Status == hone.StatusRunning {
		c.sched.OnTrialError(c.ctl(), t)
	} else {
		c.sched.OnTrialRemove(c.ctl(), t)
	}
	cause := c.causeOf(t)
	c.out = append(c.out, Action{Kind: ActNotify, Note: NoteError, Trial: t, Result: t.LastResult, Err: msg, Cause: cause})
	maxF := c.exp.Failure.MaxFailures
	if !c.exp.Failure.FailFast && (maxF < 0 || t.Failures <= maxF) {
		c.logf("trial %s failed (%d of %s): %s; retrying from %s", t.ID, t.Failures, retries(maxF), firstLine(msg), describe(c.restorePoint(t)))
		c.setRestore(t, c.restorePoint(t))
		c.setStatus(t, hone.StatusPending)
		c.sched.OnTrialAdd(c.ctl(), t)
		return
	}
	c.setStatus(t, hone.StatusError)
	c.setRestore(t, nil)
	c.search.OnTrialComplete(t.ID, t.LastResult, true)
	if c.exp.Failure.FailFast && c.fatal == nil {
		c.fatal = &hone.FailFastError{Trial: &hone.TrialFailedError{TrialID: t.ID, Msg: msg, Err: cause}}
		c.stopAll("fail_fast")
	}
}

// causeOf returns the error behind the failure of t that the input being
// handled brings, or nil (hone fails t itself, or the input is about
// another trial).
func (c *Controller) causeOf(t *hone.Trial) error {
	if c.causeTrial != t.ID {
		return nil
	}
	return c.cause
}

// failTrial is FailTrial of the scheduler's Control: it fails t at once,
// or, while the scheduler decides on t's result, once it has decided.
func (c *Controller) failTrial(t *hone.Trial, msg string) {
	if c.Trial(t.ID) != t || t.Status.Finished() {
		return
	}
	if c.deciding == t {
		if s := c.st[t.ID]; s.run.schedFail == "" {
			s.run.schedFail = msg
		}
		return
	}
	c.fail(t, msg)
}

// restorePoint is where a retried trial restarts: an exploit's assigned
// checkpoint if the trial has not checkpointed since, else its own latest.
func (c *Controller) restorePoint(t *hone.Trial) *hone.Checkpoint {
	s := c.st[t.ID]
	if s.explicitPin && t.RestoreFrom != nil {
		return t.RestoreFrom
	}
	return s.mgr.Latest()
}

func retries(m int) string {
	if m < 0 {
		return "unlimited"
	}
	return fmt.Sprint(m + 1)
}

// ---- checkpoints and pins ----

func (c *Controller) register(t *hone.Trial, cp *hone.Checkpoint, r *hone.Result) {
	s := c.st[cp.TrialID]
	if s == nil || !c.manager(s).Register(cp, r) {
		return
	}
	c.record(&Record{Op: "ckpt", Trial: cp.TrialID, Path: cp.Path, CkIndex: cp.Index, Iteration: cp.Iteration, TimeTotal: cp.TimeTotal})
	t.Checkpoint = cp
	// A checkpoint the trial took before restarting from an exploit's
	// assigned one (say, a save that was in flight when it was exploited)
	// must not replace that restore point: Ray's bug of restoring the
	// trial's own newer checkpoint instead of the donor's.
	if !s.explicitPin || s.restartedSincePin {
		s.explicitPin, s.restartedSincePin = false, false
		c.setRestore(t, cp)
	}
	c.notify(NoteCheckpoint, t, r, cp, "")
	c.prune(s.mgr)
}

func (c *Controller) prune(m *Manager) {
	for _, cp := range m.Prune(c.pinned) {
		c.record(&Record{Op: "ckdel", Trial: cp.TrialID, Path: cp.Path})
		c.out = append(c.out, Action{Kind: ActDelete, Checkpoint: cp})
		if t := c.Trial(cp.TrialID); t != nil && t.Checkpoint == cp {
			t.Checkpoint = m.Latest()
		}
	}
}

func (c *Controller) pinned(p string) bool { return c.pins[p] > 0 }

// setRestore moves t's restore point (and its pin) to cp.
func (c *Controller) setRestore(t *hone.Trial, cp *hone.Checkpoint) {
	old := t.RestoreFrom
	if old == cp {
		return
	}
	t.RestoreFrom = cp
	c.pin(cp)
	c.unpin(old)
}

// pin keeps cp from retention until a matching unpin.
func (c *Controller) pin(cp *hone.Checkpoint) {
	if cp != nil {
		c.pins[cp.Path]++
	}
}

// unpin releases one pin of cp; the last one lets retention delete it.
func (c *Controller) unpin(cp *hone.Checkpoint) {
	if cp == nil || c.pins[cp.Path] <= 0 {
		return
	}
	c.pins[cp.Path]--
	if c.pins[cp.Path] == 0 {
		delete(c.pins, cp.Path)
		if s := c.st[cp.TrialID]; s != nil {
			c.prune(s.mgr)
		}
	}
}

// ---- starting trials ----

func (c *Controller) schedule() {
	if c.stopping || !c.began {
		return
	}
	for {
		for c.nPending < c.maxPending() && !c.searchDone && !c.stopping {
			if !c.suggest() {
				break
			}
		}
		if m := c.exp.MaxConcurrentTrials; m > 0 && c.live >= m {
			return
		}
		if c.nPending == 0 && c.nPaused == 0 {
			return // nothing could be chosen; spare the scheduler a scan
		}
		t := c.sched.ChooseTrialToRun(c.ctl())
		if t == nil {
			return
		}
		if t.Status != hone.StatusPending && t.Status != hone.StatusPaused {
			c.logf("scheduler chose trial %s with status %s; ignoring", t.ID, t.Status)
			return
		}
		if c.st[t.ID].life.alive() {
			return // still stopping; it can start once it has exited
		}
		if !fits(t.Resources, c.pool) {
			t.Error = fmt.Sprintf("trial needs %s but the whole pool has %s", t.Resources, c.pool)
			c.finishError(t)
			continue
		}
		if !fits(add(c.used, t.Resources), c.pool) || c.placeGPUs(t.Resources.GPU) == nil {
			return
		}
		c.start(t)
	}
}

func (c *Controller) finishError(t *hone.Trial) {
	c.notify(NoteError, t, nil, nil, t.Error)
	c.finish(t, hone.StatusError)
}

// maxPending is how many trials may wait PENDING at once (MaxPending).
func (c *Controller) maxPending() int {
	if n := c.exp.MaxPendingTrials; n > 0 {
		return n
	}
	if p, ok := c.search.(hone.PendingLimit); ok {
		switch n := p.MaxPending(); {
		case n == hone.PendingAuto:
			return c.autoPending
		case n > 0:
			return n
		}
	}
	return 1
}

// MaxPending returns how many trials may wait PENDING at once:
// Experiment.MaxPendingTrials if set; else, for a searcher whose
// MaxPending is hone.PendingAuto (one that does not learn from results),
// AutoPending of the trials that can run at once; else the searcher's own
// positive limit; else 1.
func (c *Controller) MaxPending() int { return c.maxPending() }

// Slots returns how many trials of exp can run at once in pool: the
// fewest that fill one of the pool's resources (CPU, GPU, memory when the
// pool has a memory figure, custom resources), capped by
// MaxConcurrentTrials. Each trial is taken to need exp.Resources (1 CPU
// when unset), also when ResourcesFn sizes trials one by one. It is 0 when
// no trial fits, and MaxConcurrentTrials (or -1, no bound) when trials
// need nothing the pool counts.
func Slots(exp *hone.Experiment, pool hone.Resources) int {
	need := exp.Resources
	if isZero(need) {
		need = hone.Resources{CPU: 1}
	}
	n := -1
	limit := func(have, want float64) {
		if want <= 0 {
			return
		}
		k := int(math.Floor(have/want + eps))
		if n < 0 || k < n {
			n = k
		}
	}
	limit(pool.CPU, need.CPU)
	limit(pool.GPU, need.GPU)
	if pool.Memory > 0 {
		limit(float64(pool.Memory), float64(need.Memory))
	}
	for k, v := range need.Custom {
		limit(pool.Custom[k], v)
	}
	if m := exp.MaxConcurrentTrials; m > 0 && (n < 0 || m < n) {
		n = m
	}
	return n
}

// AutoPending is the pending bound of searchers that do not learn from
// results: max(16, ceil(1.1 × slots)), where slots is how many trials can
// run at once (Slots; a negative slots, no bound, gives 16). Enough trials
// wait that a free slot always finds one and a scheduler can choose among
// them, and few enough that a run stopped early leaves few never started.
func AutoPending(slots int) int {
	return max(16, (11*slots+9)/10)
}

// suggest asks the searcher for one trial and reports whether it got one.
func (c *Controller) suggest() bool {
	if c.searchDone {
		return false
	}
	id := c.spareID
	if id == "" {
		id = c.newID()
	}
	c.spareID = ""
	cfg, err := c.search.Suggest(id)
	switch {
	case errors.Is(err, hone.ErrNotNow):
		c.keepID(id)
		return false
	case errors.Is(err, hone.ErrSearchDone):
		c.searchDone = true
		c.keepID(id)
		return false
	case err != nil:
		c.searchDone, c.searchFailed = true, true
		if c.fatal == nil {
			c.fatal = fmt.Errorf("searcher: %w", err)
		}
		c.stopAll("searcher failed")
		return false
	}
	c.addTrial(id, cfg)
	return true
}

func (c *Controller) addTrial(id string, cfg hone.Config) *hone.Trial {
	idx := len(c.trials)
	if n := len(c.trials); n > 0 {
		idx = c.trials[n-1].Index + 1
	}
	res := c.trialResources(cfg)
	tag := fmt.Sprintf("%d_%s", idx, configTag(cfg))
	t := &hone.Trial{ID: id, Index: idx, Config: cfg, Tag: tag, Resources: res}
	t.Dir = trialDirName(c.trainable(), id, idx, tag, c.now)
	c.trials = append(c.trials, t)
	s := &tstate{t: t}
	c.st[id] = s
	c.states = append(c.states, s)
	c.record(&Record{Op: "trial", Trial: id, Index: idx, Config: cfg, Tag: tag, Dir: t.Dir, Resources: &res})
	c.setStatus(t, hone.StatusPending)
	c.sched.OnTrialAdd(c.ctl(), t)
	return t
}

// trialResources is what a trial with cfg needs: ResourcesFn's answer,
// else Resources, else 1 CPU.
func (c *Controller) trialResources(cfg hone.Config) hone.Resources {
	res := c.exp.Resources
	if c.exp.ResourcesFn != nil {
		res = c.exp.ResourcesFn(cfg)
	}
	if isZero(res) {
		res = hone.Resources{CPU: 1}
	}
	return res
}

func (c *Controller) trainable() string {
	if c.exp.Trainable != "" {
		return c.exp.Trainable
	}
	return "trainable"
}

// placeGPUs returns the GPUs, by index, a trial needing need GPUs would
// get now, or nil if they are not free: a fraction of a GPU shares the
// lowest device with that much left (as Ray packs fractional GPUs), a
// whole number takes that many devices no one holds, lowest first. It
// returns an empty, non-nil slice when need is 0.
func (c *Controller) placeGPUs(need float64) []int {
	if n := int(c.pool.GPU + eps); len(c.gpuFree) != n && c.live == 0 {
		c.gpuFree = c.gpuFree[:0]
		for range n {
			c.gpuFree = append(c.gpuFree, 1)
		}
	}
	got := []int{}
	switch {
	case need <= eps:
	case need < 1:
		for i, free := range c.gpuFree {
			if free >= need-eps {
				return append(got, i)
			}
		}
		return nil
	default:
		for i := 0; i < len(c.gpuFree) && len(got) < int(math.Ceil(need-eps)); i++ {
			if c.gpuFree[i] >= 1-eps {
				got = append(got, i)
			}
		}
		if len(got) < int(math.Ceil(need-eps)) {
			return nil
		}
	}
	return got
}

// take counts t's resources as used and gives it its GPUs (placeGPUs).
func (c *Controller) take(t *hone.Trial) {
	s := c.st[t.ID]
	c.used = add(c.used, t.Resources)
	s.run.gpus = c.placeGPUs(t.Resources.GPU)
	for _, i := range s.run.gpus {
		c.gpuFree[i] -= min(1, t.Resources.GPU)
	}
}

// release returns what take gave t.
func (c *Controller) release(t *hone.Trial) {
	s := c.st[t.ID]
	c.used = sub(c.used, t.Resources)
	for _, i := range s.run.gpus {
		if i < len(c.gpuFree) {
			c.gpuFree[i] += min(1, t.Resources.GPU)
		}
	}
	s.run.gpus = nil
}

func (c *Controller) start(t *hone.Trial) {
	s := c.st[t.ID]
	if s.run == nil {
		s.run = &runState{dlIndex: -1}
	}
	c.take(t)
	c.live++
	s.to(evStart)
	if c.announced {
		c.unwatch(t) // queued until its hone.EventStarted
	} else {
		c.running(t)
	}
	s.next, s.interrupt = qContinue, false
	s.run.iter, s.run.timeTotal = 0, 0
	cp := t.RestoreFrom
	if cp != nil {
		s.run.iter, s.run.timeTotal = cp.Iteration, cp.TimeTotal
	}
	s.restartedSincePin = s.explicitPin
	s.run.sinceIter = 0
	s.run.lastTime, s.run.restoredAt = c.now, c.now
	c.setStatus(t, hone.StatusRunning)
	c.out = append(c.out, Action{Kind: ActStart, Trial: t, Checkpoint: cp, Iteration: s.run.iter, GPUs: slices.Clone(s.run.gpus)})
	c.notify(NoteStart, t, nil, cp, "")
}

// newID draws a trial id that no trial has and that is not the spare.
func (c *Controller) newID() string {
	for {
		id := fmt.Sprintf("%08x", c.idRng.Uint32())
		if _, dup := c.st[id]; !dup && id != c.spareID {
			return id
		}
	}
}

// keepID keeps the id of a suggestion the searcher did not make for the
// next one (Settings.SpareIDs), so that the ids of the trials, and a
// run's decisions, do not depend on how often the searcher was asked in
// vain: a tick more or less between two results changes nothing.
func (c *Controller) keepID(id string) {
	if c.spareIDs {
		c.spareID = id
	}
}

// ---- experiment-wide stops ----

func (c *Controller) elapsed() time.Duration {
	if !c.began {
		return 0
	}
	return c.spent + c.now.Sub(c.sessionStart)
}

func (c *Controller) checkBudget() {
	if c.stopping {
		return
	}
	if b := c.exp.TimeBudget; b > 0 && c.elapsed() >= b {
		c.budgetUsed = true
		c.stopAll(fmt.Sprintf("time budget of %v used", b))
		return
	}
	for _, st := range c.exp.Stoppers {
		if st.ShouldStopAll() {
			c.stopAll("a stopper stopped the experiment")
			return
		}
	}
}

// stopAll ends the experiment without ending its trials (see "How trials
// end" in the package comment): no trial starts any more, and running
// trials save and stop as on an interrupt, keeping status RUNNING so that a
// resume continues them. PENDING and PAUSED trials keep their status.
func (c *Controller) stopAll(why string) {
	if c.stopping {
		return
	}
	c.stopping, c.stopReason = true, why
	c.logf("stopping the experiment: %s; running trials save and stop, and hone resume continues them", why)
	c.saveAndStop()
}

// stopTrial is Control.StopTrial: the scheduler ends t (TERMINATED).
func (c *Controller) stopTrial(t *hone.Trial) {
	s := c.st[t.ID]
	switch t.Status {
	case hone.StatusRunning:
		if s.life.waiting() || t.Saving != nil {
			c.enqueue(t, hone.Stop)
			c.advance(t)
			return
		}
		c.stopProcess(t)
		c.finish(t, hone.StatusTerminated)
	case hone.StatusPending, hone.StatusPaused:
		c.finish(t, hone.StatusTerminated)
	}
}

func (c *Controller) interrupt() {
	c.interrupted = true
	if !c.stopping {
		c.stopping, c.stopReason = true, "interrupted"
	}
	c.logf("interrupted: saving and stopping running trials")
	c.saveAndStop()
}

// saveAndStop asks every running trial to save and then stop, keeping it
// RUNNING: a waiting trial at once, a computing one when it next reports.
func (c *Controller) saveAndStop() {
	for _, t := range c.trials {
		s := c.st[t.ID]
		if t.Status != hone.StatusRunning || !s.life.alive() || s.life == lifeStopping {
			continue
		}
		s.interrupt = true
		if s.life.waiting() {
			c.advance(t)
		} else {
			c.scheduleSave(t) // sent when it next reports
		}
	}
}

// resume turns the state rebuilt by replay into a runnable one: no process
// survived, so in-flight saves resolve to the latest checkpoint and RUNNING
// trials go back to PENDING.
func (c *Controller) resume(f hone.ResumeFlags) {
	switch {
	case c.began && c.budgetUsed:
		// The budget ran out and the user resumes: a new budget of the
		// same length. A resume after a crash or an interrupt continues
		// the budget in use.
		c.spent = 0
	case c.began:
		c.spent += c.lastSessionEnd().Sub(c.sessionStart)
	}
	c.began, c.sessionStart = true, c.now
	c.stopping, c.stopReason, c.budgetUsed, c.interrupted, c.endSent = false, "", false, false, false
	c.fatal = nil // the previous session's failure; a new one sets it again
	if c.searchFailed {
		c.searchDone, c.searchFailed = false, false
	}
	for i, t := range c.trials {
		s := c.states[i]
		if s.life.alive() {
			s.to(evGone) // no process survives a resume
			c.unwatch(t)
			c.live--
			c.release(t)
		}
		if fut := t.Saving; fut != nil {
			t.Saving = nil
			c.resolveSave(t, fut, s.mgr.Latest(), nil)
		}
		switch {
		case t.Status == hone.StatusRunning && s.next == qStop:
			c.finish(t, hone.StatusTerminated)
		case t.Status == hone.StatusRunning && (s.next == qPause || s.next == qPauseNoSave):
			c.pause(t)
		case t.Status == hone.StatusRunning:
			c.setRestore(t, c.restorePoint(t))
			c.setStatus(t, hone.StatusPending)
		}
		s.next, s.interrupt = qContinue, false
		settle(s) // one that finished while stopping has no process now
	}
	c.live, c.used = 0, hone.Resources{}
	c.gpuFree = c.gpuFree[:0]
	if f.Settings != nil {
		if err := c.ApplySettings(*f.Settings); err != nil {
			c.logf("resume: keeping the settings in use: %v", err)
		} else {
			c.resize()
		}
	}
	if !f.Unfinished {
		for _, t := range c.trials {
			if !t.Status.Finished() {
				c.finish(t, hone.StatusTerminated)
			}
		}
		c.searchDone = true
	}
	var restart []*hone.Trial
	for _, t := range c.trials {
		if t.Status != hone.StatusError {
			continue
		}
		switch {
		case f.Errored:
			t.Failures, t.Error = 0, ""
			c.setRestore(t, c.st[t.ID].mgr.Latest())
			c.setStatus(t, hone.StatusPending)
			c.sched.OnTrialAdd(c.ctl(), t)
		case f.RestartErrored:
			restart = append(restart, t)
		}
	}
	for _, old := range restart {
		c.drop(old)
		c.addTrial(c.newID(), old.Config.Clone())
	}
}

func (c *Controller) lastSessionEnd() time.Time {
	// The resume input's time is on a new clock; the previous session ended
	// at the last time seen before it, which replay left in lastSeen.
	return c.lastSeen
}

func (c *Controller) drop(t *hone.Trial) {
	for i, x := range c.trials {
		if x == t {
			c.trials = append(c.trials[:i], c.trials[i+1:]...)
			c.states = append(c.states[:i], c.states[i+1:]...)
			break
		}
	}
	c.setRestore(t, nil)
	delete(c.st, t.ID)
	c.record(&Record{Op: "drop", Trial: t.ID})
}

// ---- metric check ----

// missingObjective returns the first objective whose metric is not a
// number in r, and whether there is one.
func (c *Controller) missingObjective(r *hone.Result) (hone.Objective, bool) {
	for _, o := range c.objs {
		if _, ok := r.Value(o.Metric); !ok {
			return o, true
		}
	}
	return hone.Objective{}, false
}

// checkMetricSeen fails the experiment when the first trial to finish never
// reported the metric and no other trial has either: the metric name is
// almost certainly wrong, and going on would waste the whole budget.
func (c *Controller) checkMetricSeen(t *hone.Trial) {
	if len(c.objs) == 0 || c.metricSeen || c.fatal != nil || t.LastResult == nil {
		return
	}
	o, missing := c.missingObjective(t.LastResult)
	if !missing {
		return
	}
	e := &FieldError{Setting: "metric", Field: o.Metric, Keys: sortedKeys(t.LastResult.Metrics)}
	if v, present := t.LastResult.Metrics[o.Metric]; present {
		e.msg = fmt.Sprintf("metric %q is a number in no result: trial %s finished after %d results, and in its last %q is %s",
			o.Metric, t.ID, t.LastResult.TrainingIteration, o.Metric, describeValue(v))
	} else {
		e.msg = fmt.Sprintf("metric %q is in no result: trial %s finished after %d results with keys %s",
			o.Metric, t.ID, t.LastResult.TrainingIteration, keys(t.LastResult.Metrics))
	}
	c.fatal = e
	c.stopAll("the metric is in no result")
}

// checkStopFields fails the experiment, and reports true, when r lacks a
// field that a stopper reads, or holds something other than a number
// there: the stop condition is almost certainly misspelt, and would never
// stop a trial.
func (c *Controller) checkStopFields(t *hone.Trial, r *hone.Result) bool {
	if c.fatal != nil || c.stopping {
		return false
	}
	for _, st := range c.exp.Stoppers {
		fs, ok := st.(hone.FieldStopper)
		if !ok {
			continue
		}
		for _, f := range fs.Fields() {
			if _, ok := r.Value(f); ok {
				continue
			}
			e := &FieldError{Setting: "stop", Field: f, Keys: sortedKeys(r.Metrics)}
			if v, present := r.Metrics[f]; present {
				e.msg = fmt.Sprintf("stop condition %q: result %d of trial %s has %q = %s, not a number", f, r.TrainingIteration, t.ID, f, describeValue(v))
			} else {
				e.msg = fmt.Sprintf("stop condition %q is not in result %d of trial %s, whose fields are %s (and the automatic ones such as training_iteration and time_total_s)",
					f, r.TrainingIteration, t.ID, keys(r.Metrics))
			}
			c.fatal = e
			c.stopAll("a stop condition's field is not in a result")
			return true
		}
	}
	return false
}

// FieldError is the failure of an experiment whose results lack a field
// that it names: the metric, in no result of the first trial to finish, or
// a stop condition's field, in a result. The field is almost certainly
// misspelt; a resume with the same settings fails the same way.
type FieldError struct {
	// Setting is what names the field: "metric" or "stop".
	Setting string
	// Field is the field the results lack (or hold as something other
	// than a number).
	Field string
	// Keys are the user fields the result has, sorted.
	Keys []string
	msg  string
}

// Error says which field is missing, from which result, and what the
// result holds instead.
func (e *FieldError) Error() string { return e.msg }

// ---- output helpers ----

func (c *Controller) direct(t *hone.Trial, d hone.Directive) {
	c.out = append(c.out, Action{Kind: ActDirect, Trial: t, Directive: d})
}

func (c *Controller) record(r *Record) { c.out = append(c.out, Action{Kind: ActRecord, Record: r}) }

func (c *Controller) notify(n Note, t *hone.Trial, r *hone.Result, cp *hone.Checkpoint, err string) {
	c.out = append(c.out, Action{Kind: ActNotify, Note: n, Trial: t, Result: r, Checkpoint: cp, Err: err})
}

func (c *Controller) logf(format string, args ...any) {
	c.out = append(c.out, Action{Kind: ActLog, Text: fmt.Sprintf(format, args...)})
}

// ---- small helpers ----

// sortedKeys returns the keys of m, sorted.
func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func keys(m map[string]any) string {
	ks := sortedKeys(m)
	if len(ks) == 0 {
		return "(none)"
	}
	return strings.Join(ks, ", ")
}

// describeValue names the JSON type of a reported value that is not a
// number, with the value when it is short: `a string ("0.5")`.
func describeValue(v any) string {
	var kind string
	switch v.(type) {
	case nil:
		return "null"
	case string:
		kind = "a string"
	case map[string]any:
		kind = "an object"
	case []any:
		kind = "a list"
	default:
		kind = fmt.Sprintf("a %T", v)
	}
	text := fmt.Sprintf("%v", v)
	if sv, ok := v.(string); ok {
		text = strconv.Quote(sv)
	}
	if len(text) > 40 {
		return kind
	}
	return kind + " (" + text + ")"
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func describe(cp *hone.Checkpoint) string {
	if cp == nil {
		return "scratch"
	}
	return cp.Path
}

func isZero(r hone.Resources) bool {
	return r.CPU == 0 && r.GPU == 0 && r.Memory == 0 && len(r.Custom) == 0
}

func add(a, b hone.Resources) hone.Resources {
	out := hone.Resources{CPU: a.CPU + b.CPU, GPU: a.GPU + b.GPU, Memory: a.Memory + b.Memory}
	if len(a.Custom)+len(b.Custom) > 0 {
		out.Custom = map[string]float64{}
		for k, v := range a.Custom {
			out.Custom[k] += v
		}
		for k, v := range b.Custom {
			out.Custom[k] += v
		}
	}
	return out
}

func sub(a, b hone.Resources) hone.Resources {
	neg := hone.Resources{CPU: -b.CPU, GPU: -b.GPU, Memory: -b.Memory}
	if len(b.Custom) > 0 {
		neg.Custom = map[string]float64{}
		for k, v := range b.Custom {
			neg.Custom[k] = -v
		}
	}
	return add(a, neg)
}

const eps = 1e-9

// fits reports whether need fits in pool. A pool amount of zero for CPU
// means "no CPU limit" only if need asks for none.
func fits(need, pool hone.Resources) bool {
	if need.CPU > pool.CPU+eps || need.GPU > pool.GPU+eps || need.Memory > pool.Memory && pool.Memory > 0 {
		return false
	}
	for k, v := range need.Custom {
		if v > pool.Custom[k]+eps {
			return false
		}
	}
	return true
}

// safeName replaces each run of characters other than A-Z a-z 0-9 _ . = ,
// + - in s with one underscore.
func safeName(s string) string {
	safe := func(c byte) bool {
		return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_.=,+-", c) >= 0
	}
	i := 0
	for i < len(s) && safe(s[i]) {
		i++
	}
	if i == len(s) {
		return s // the common case: nothing to replace
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for i < len(s) {
		if safe(s[i]) {
			b = append(b, s[i])
			i++
			continue
		}
		b = append(b, '_')
		for i < len(s) && !safe(s[i]) {
			i++
		}
	}
	return string(b)
}

// configTag renders the leaves of cfg as "k=v,k2=v2" in key order, numbers
// to 4 significant digits, for the experiment tag.
func configTag(cfg hone.Config) string {
	var parts []string
	hone.Flatten("", map[string]any(cfg), func(k string, leaf any) { parts = append(parts, k+"="+shortValue(leaf)) })
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func shortValue(v any) string {
	if f, ok := v.(float64); ok && !math.IsInf(f, 0) && !math.IsNaN(f) && f != math.Trunc(f) {
		return fmt.Sprintf("%.4g", f)
	}
	return fmt.Sprint(v)
}

// trialDirName builds "<trainable>_<id>_<index>_<short tag>_<date>" from
// safe characters, at most about 130 characters long.
func trialDirName(trainable, id string, idx int, tag string, at time.Time) string {
	short := tag
	if i := strings.IndexByte(short, '_'); i >= 0 {
		short = short[i+1:]
	}
	short = strings.Trim(safeName(short), "_")
	tr := strings.Trim(safeName(trainable), "_")
	if len(tr) > 30 {
		tr = tr[:30]
	}
	if len(short) > 60 {
		short = short[:60]
	}
	name := tr + "_" + id + "_" + strconv.Itoa(idx)
	if short != "" {
		name += "_" + short
	}
	return path.Clean(name + "_" + at.UTC().Format("2006-01-02_15-04-05"))
}

// Control returns the hone.Control the controller gives schedulers, for
// test harnesses that act as a scheduler would between inputs. Its Logf
// lines come out of the next Ready as ActLog actions.
func (c *Controller) Control() hone.Control { return c.ctl() }

// Pool returns the resource pool the controller was made with.
func (c *Controller) Pool() hone.Resources { return c.pool }

// HasProcess reports whether trial id has a live process (including one
// that is stopping).
func (c *Controller) HasProcess(id string) bool {
	s := c.st[id]
	return s != nil && s.life.alive()
}

// Pinned reports whether the checkpoint at path is pinned: some trial will
// restore from it.
func (c *Controller) Pinned(path string) bool { return c.pinned(path) }

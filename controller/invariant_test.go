package controller_test

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/controller"
)

// causes records, per trial, what may legitimately make it TERMINATED:
// a stopper's ShouldStop, a scheduler's STOP or StopTrial, a done result.
// A trial's causes are forgotten when it starts again. While a resume
// replays the journal the plugins do not record (replay is not the run).
type causes struct {
	by        map[string][]string
	recording bool
}

func (c *causes) add(id, why string) {
	if c.recording {
		c.by[id] = append(c.by[id], why)
	}
}

func mix(seed uint64, parts ...any) uint64 {
	h := fnv.New64a()
	fmt.Fprint(h, seed)
	for _, p := range parts {
		fmt.Fprint(h, "|", p)
	}
	return h.Sum64()
}

// invScheduler decides from a hash of (seed, trial, iteration), so that a
// replay decides the same: mostly CONTINUE, sometimes PAUSE or STOP, and
// sometimes it stops another waiting trial through Control.
type invScheduler struct {
	seed uint64
	c    *causes
}

func (s *invScheduler) OnTrialAdd(hone.Control, *hone.Trial) {}
func (s *invScheduler) OnResult(ctl hone.Control, t *hone.Trial, r *hone.Result) hone.Decision {
	switch h := mix(s.seed, t.ID, r.TrainingIteration) % 100; {
	case h < 10:
		return hone.Pause
	case h < 15:
		s.c.add(t.ID, "scheduler STOP")
		return hone.Stop
	case h < 18:
		for _, o := range ctl.Trials() {
			if o != t && (o.Status == hone.StatusPending || o.Status == hone.StatusPaused) {
				s.c.add(o.ID, "scheduler StopTrial")
				ctl.StopTrial(o)
				break
			}
		}
	}
	return hone.Continue
}
func (s *invScheduler) OnTrialComplete(hone.Control, *hone.Trial, *hone.Result) {}
func (s *invScheduler) OnTrialError(hone.Control, *hone.Trial)                  {}
func (s *invScheduler) OnTrialRemove(hone.Control, *hone.Trial)                 {}
func (s *invScheduler) ChooseTrialToRun(ctl hone.Control) *hone.Trial {
	for _, st := range []hone.Status{hone.StatusPending, hone.StatusPaused} {
		for _, t := range ctl.Trials() {
			if t.Status == st {
				return t
			}
		}
	}
	return nil
}

// invStopper stops a trial on a hash of (seed, trial, iteration), and the
// experiment once it has seen stopAllAt results (never if 0).
type invStopper struct {
	seed      uint64
	stopAllAt int
	seen      int
	c         *causes
}

func (s *invStopper) ShouldStop(id string, r *hone.Result) bool {
	s.seen++
	if mix(s.seed, id, r.TrainingIteration)%20 == 0 {
		s.c.add(id, "stopper")
		return true
	}
	return false
}
func (s *invStopper) ShouldStopAll() bool { return s.stopAllAt > 0 && s.seen >= s.stopAllAt }

// invSearcher suggests n configurations (n < 0: without end); the
// suggestion at failAt fails once per searcher (a resume asks again).
type invSearcher struct {
	n, i, failAt int
	failed       bool
}

func (s *invSearcher) Suggest(string) (hone.Config, error) {
	if s.n >= 0 && s.i >= s.n {
		return nil, hone.ErrSearchDone
	}
	if s.i == s.failAt && !s.failed {
		s.failed = true
		return nil, errors.New("model fit failed")
	}
	s.i++
	return hone.Config{"x": float64(s.i)}, nil
}
func (s *invSearcher) OnResult(string, *hone.Result)              {}
func (s *invSearcher) OnTrialComplete(string, *hone.Result, bool) {}

// phase is what a simulated trial process does next.
type phase int

const (
	computing phase = iota // will report, or exit by itself
	saving                 // was told to save
	stopping               // was told to stop
	queued                 // started with an executor that announces starts, not yet running
)

// TestTerminatedOnlyByItsCauses is the controller invariant of the package
// comment, over random runs: random results, failures, clean exits, saves,
// interrupts, time budgets, per-trial limits, fail_fast, stoppers that
// stop trials or the experiment, a failing searcher, a missing metric,
// crashes with a replayed resume. At every step, a trial becomes
// TERMINATED only when a stopper's ShouldStop, the scheduler (STOP or
// StopTrial), a done result, the trial's own clean exit (not asked for) or
// a resume with Unfinished false ended it. Also: a trial becomes ERROR
// only through a failure; every process the controller heard from is
// answered; a resume restarts or requeues every RUNNING trial, leaves
// ERROR trials ERROR unless told otherwise, and forgets the previous
// session's fail_fast error. Each session's executor may announce starts
// (its trials are queued until a started input or their first report):
// no trial is failed by a per-trial limit while queued, nor before the
// limit has passed since it ran or last reported; late and repeated
// started inputs are ignored; and a replay of the inputs rebuilds the
// trials as they were.
func TestTerminatedOnlyByItsCauses(t *testing.T) {
	rounds := 3 // 100 cases each (rapid's default); HONE_LONG=1 runs 50 rounds
	if os.Getenv("HONE_LONG") != "" {
		rounds = 50
	}
	for range rounds {
		rapid.Check(t, terminatedOnlyByItsCauses)
	}
}

func terminatedOnlyByItsCauses(rt *rapid.T) {
	{
		seed := rapid.Uint64().Draw(rt, "seed")
		samples := rapid.IntRange(-1, 10).Draw(rt, "samples")
		failAt := rapid.IntRange(-1, 8).Draw(rt, "search_fail_at")
		stopAllAt := rapid.IntRange(0, 30).Draw(rt, "stop_all_at")
		if rapid.IntRange(0, 2).Draw(rt, "stop_all_off") > 0 {
			stopAllAt = 0
		}
		dur := func(name string, lo, hi int) time.Duration {
			if rapid.Bool().Draw(rt, name+"_off") {
				return 0
			}
			return time.Duration(rapid.IntRange(lo, hi).Draw(rt, name)) * time.Second
		}
		budget := dur("budget", 20, 300)
		if samples < 0 && budget == 0 {
			budget = 200 * time.Second
		}
		metric := "loss"
		reported := "loss"
		if rapid.IntRange(0, 5).Draw(rt, "metric_missing") == 0 {
			reported = "acc"
		}
		cs := &causes{by: map[string][]string{}, recording: true}
		proto := hone.Experiment{
			Metric: metric, Seed: seed,
			MaxConcurrentTrials: rapid.IntRange(1, 3).Draw(rt, "concurrent"),
			Checkpoint: hone.CheckpointConfig{AtEnd: rapid.Bool().Draw(rt, "at_end"),
				Frequency: rapid.IntRange(0, 2).Draw(rt, "frequency")},
			Failure: hone.FailureConfig{FailFast: rapid.Bool().Draw(rt, "fail_fast"),
				MaxFailures: rapid.IntRange(-1, 2).Draw(rt, "max_failures")},
			TimeBudget:    budget,
			TrialTimeout:  dur("trial_timeout", 20, 120),
			ReportTimeout: dur("report_timeout", 10, 60),
		}
		// newExp builds the experiment with fresh plugins, as a resume does.
		newExp := func() *hone.Experiment {
			e := proto
			e.Searcher = &invSearcher{n: samples, failAt: failAt}
			e.Scheduler = &invScheduler{seed: seed, c: cs}
			e.Stoppers = []hone.Stopper{&invStopper{seed: seed + 1, stopAllAt: stopAllAt, c: cs}}
			return &e
		}
		exp := newExp()
		pool := hone.Resources{CPU: 8}
		c, err := controller.New(exp, pool)
		if err != nil {
			rt.Fatal(err)
		}
		// announce: this session's executor announces starts; first is the
		// first session's, which a replay takes (as from the journal's
		// header), later sessions' come with their resume inputs.
		announce := rapid.Bool().Draw(rt, "announce")
		first := announce
		c.SetStartsAnnounced(announce)
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var log []hone.Event
		procs := map[string]phase{}
		told := map[string]bool{} // DirectStop sent since the last start
		answered := map[string]bool{}
		// ranAt and lastReport are, per live process, when it began to run
		// and when it last reported, as the executor saw it; a trial in
		// waiting has not run yet (queued).
		ranAt, lastReport := map[string]time.Time{}, map[string]time.Time{}
		waiting := map[string]bool{}
		ran := func(id string, at time.Time) {
			if waiting[id] {
				delete(waiting, id)
				ranAt[id] = at
			}
			lastReport[id] = at
		}

		step := func(in hone.Event) {
			before := map[string]hone.Status{}
			for _, tr := range c.Trials() {
				before[tr.ID] = tr.Status
			}
			log = append(log, in)
			at := in.At()
			// The limits are judged before the input is acted on: the
			// trial it reports on runs, or reported, from after that.
			reports := (in.Kind == hone.EventStarted && waiting[in.TrialID] && !told[in.TrialID]) ||
				in.Kind == hone.EventResult || in.Kind == hone.EventSaved
			c.Step(in)
			for _, a := range c.Ready() {
				switch a.Kind {
				case controller.ActStart:
					if _, alive := procs[a.Trial.ID]; alive {
						rt.Fatalf("trial %s started while its process is alive", a.Trial.ID)
					}
					procs[a.Trial.ID] = computing
					waiting[a.Trial.ID] = true
					if announce {
						procs[a.Trial.ID] = queued
					} else {
						ran(a.Trial.ID, at)
					}
					delete(cs.by, a.Trial.ID)
					told[a.Trial.ID] = false
				case controller.ActNotify:
					tl, rl := strings.Contains(a.Err, "trial_timeout"), strings.Contains(a.Err, "report_timeout")
					if a.Note != controller.NoteError || !tl && !rl {
						continue
					}
					id := a.Trial.ID
					switch {
					case waiting[id]:
						rt.Fatalf("input %s %s: trial %s failed by a limit while queued: %s", in.Kind, in.TrialID, id, a.Err)
					case tl && at.Sub(ranAt[id]) <= proto.TrialTimeout:
						rt.Fatalf("input %s %s: trial %s failed by trial_timeout %v after running %v: %s", in.Kind, in.TrialID, id, proto.TrialTimeout, at.Sub(ranAt[id]), a.Err)
					case rl && at.Sub(lastReport[id]) <= proto.ReportTimeout:
						rt.Fatalf("input %s %s: trial %s failed by report_timeout %v %v after its last report: %s", in.Kind, in.TrialID, id, proto.ReportTimeout, at.Sub(lastReport[id]), a.Err)
					}
				case controller.ActDirect:
					answered[a.Trial.ID] = true
					switch a.Directive {
					case hone.DirectContinue:
						procs[a.Trial.ID] = computing
					case hone.DirectCheckpoint:
						procs[a.Trial.ID] = saving
					case hone.DirectStop:
						procs[a.Trial.ID] = stopping
						told[a.Trial.ID] = true
					}
				case controller.ActRecord:
					r := a.Record
					if r.Op == "status" && r.Status == hone.StatusError && in.Err == "" && in.Kind != hone.EventStartFailed &&
						proto.TrialTimeout == 0 && proto.ReportTimeout == 0 {
						rt.Fatalf("input %s %s: trial %s became ERROR with no failure", in.Kind, in.TrialID, r.Trial)
					}
					if r.Op != "status" || r.Status != hone.StatusTerminated {
						continue
					}
					ok := len(cs.by[r.Trial]) > 0 ||
						in.Kind == hone.EventExited && in.TrialID == r.Trial && in.Err == "" && !told[r.Trial] ||
						in.Kind == hone.EventResume && !in.Resume.Unfinished
					if !ok {
						rt.Fatalf("input %s %s: trial %s became TERMINATED (was %s) with no stopper, scheduler, done result or own exit behind it (stop reason %q)",
							in.Kind, in.TrialID, r.Trial, before[r.Trial], c.StopReason())
					}
				}
			}
			if reports {
				ran(in.TrialID, at)
			}
			if (in.Kind == hone.EventResult || in.Kind == hone.EventSaved) && c.HasProcess(in.TrialID) && !answered[in.TrialID] {
				if p := procs[in.TrialID]; p != stopping {
					rt.Fatalf("trial %s reported and was not answered", in.TrialID)
				}
			}
			if in.Kind == hone.EventResume {
				if err := c.Err(); err != nil && strings.Contains(err.Error(), "fail_fast") {
					rt.Fatalf("a resume kept the previous session's error: %v", err)
				}
				f := in.Resume
				for _, tr := range c.Trials() {
					if tr.Status == hone.StatusRunning && !c.HasProcess(tr.ID) {
						rt.Fatalf("after the resume trial %s is RUNNING with no process", tr.ID)
					}
					if before[tr.ID] == hone.StatusError && !f.Errored && !f.RestartErrored && tr.Status != hone.StatusError {
						rt.Fatalf("a plain resume changed ERROR trial %s to %s", tr.ID, tr.Status)
					}
				}
			}
		}
		at := func() int64 {
			now = now.Add(time.Duration(rapid.IntRange(0, 15).Draw(rt, "dt")) * time.Second)
			return now.UnixNano()
		}
		resume := func() {
			cs.recording = false
			exp = newExp()
			nc, err := controller.New(exp, pool)
			if err != nil {
				rt.Fatal(err)
			}
			nc.SetStartsAnnounced(first)
			for _, in := range log {
				nc.Step(in)
				nc.Ready()
			}
			if was, got := trialStates(c), trialStates(nc); was != got {
				rt.Fatalf("the replay rebuilt other trials:\n%s\nwant\n%s", got, was)
			}
			cs.recording = true
			c = nc
			procs, told = map[string]phase{}, map[string]bool{}
			clear(ranAt)
			clear(lastReport)
			clear(waiting)
			flags := hone.ResumeFlags{Unfinished: rapid.IntRange(0, 9).Draw(rt, "unfinished") > 0,
				Errored: rapid.IntRange(0, 3).Draw(rt, "errored") == 0}
			if !flags.Errored {
				flags.RestartErrored = rapid.IntRange(0, 3).Draw(rt, "restart") == 0
			}
			// The resumed session may run on another executor.
			announce = rapid.Bool().Draw(rt, "announce_resumed")
			settings := c.Settings()
			settings.StartsAnnounced = announce
			flags.Settings = &settings
			now = now.Add(time.Hour)
			step(hone.Event{Kind: hone.EventResume, Time: now.UnixNano(), Resume: &flags})
		}

		step(hone.Event{Kind: hone.EventBegin, Time: now.UnixNano()})
		resumes := 0
		for n := 0; n < 300; n++ {
			clear(answered)
			if c.Done() || len(procs) == 0 {
				if resumes == 4 {
					break
				}
				if c.Done() || rapid.IntRange(0, 3).Draw(rt, "resume_when_idle") == 0 {
					resumes++
					resume()
				} else {
					step(hone.Event{Kind: hone.EventTick, Time: at()})
				}
				continue
			}
			ids := make([]string, 0, len(procs))
			for _, tr := range c.Trials() {
				if _, ok := procs[tr.ID]; ok {
					ids = append(ids, tr.ID)
				}
			}
			choice := rapid.IntRange(0, len(ids)+2).Draw(rt, "choice")
			switch {
			case choice == len(ids):
				step(hone.Event{Kind: hone.EventTick, Time: at()})
				continue
			case choice == len(ids)+1:
				if rapid.IntRange(0, 9).Draw(rt, "interrupt") == 0 {
					step(hone.Event{Kind: hone.EventInterrupt, Time: at()})
				} else if rapid.IntRange(0, 9).Draw(rt, "crash") == 0 && resumes < 4 {
					resumes++
					resume()
				}
				continue
			case choice == len(ids)+2:
				continue
			}
			id := ids[choice]
			in := hone.Event{TrialID: id, Time: at()}
			ph := procs[id]
			if ph == queued {
				switch k := rapid.IntRange(0, 9).Draw(rt, "queued"); {
				case k < 6:
					in.Kind, in.Hostname = hone.EventStarted, "n1 (slurm job 1)"
				case k < 8:
					ph = computing // it reports before it is announced
					procs[id] = computing
				default:
					in.Kind, in.Err = hone.EventExited, "job failed in the queue"
				}
			}
			switch ph {
			case computing:
				switch k := rapid.IntRange(0, 19).Draw(rt, "event"); {
				case k < 15:
					in.Kind = hone.EventResult
					in.Metrics = map[string]any{reported: float64(k)}
					in.Done = k == 0
					if in.Done {
						cs.add(id, "done result")
					}
					if rapid.Bool().Draw(rt, "ckpt") {
						i, p, _ := c.NextCheckpointPath(id)
						in.Checkpoint = &hone.CheckpointRef{Index: i, Path: p}
					}
				case k < 17:
					in.Kind = hone.EventExited // the trial ends by itself
				default:
					in.Kind = hone.EventExited
					in.Err = "crashed"
				}
			case saving:
				in.Kind = hone.EventSaved
				switch k := rapid.IntRange(0, 9).Draw(rt, "save"); {
				case k == 0:
					in.Err = "disk full"
				case k < 6:
					i, p, _ := c.NextCheckpointPath(id)
					in.Checkpoint = &hone.CheckpointRef{Index: i, Path: p}
				}
			case stopping:
				in.Kind = hone.EventExited
				switch k := rapid.IntRange(0, 9).Draw(rt, "stop_event"); {
				case k < 2:
					in.Err = "killed"
				case k < 4 && waiting[id]:
					// Told to stop while queued, it may be announced
					// before its exit: a late start, ignored.
					in.Kind = hone.EventStarted
				}
			default:
				if in.Kind == hone.EventStarted && rapid.IntRange(0, 3).Draw(rt, "started_twice") == 0 {
					step(in) // announced twice: the second is ignored
					in.Time = at()
				}
			}
			if in.Kind == hone.EventStarted {
				procs[id] = computing
				if ph == stopping {
					procs[id] = stopping
				}
			}
			if in.Kind == hone.EventExited {
				delete(procs, id)
				delete(waiting, id)
			}
			step(in)
		}
	}
}

// trialStates describes every trial's state a replay must rebuild.
func trialStates(c *controller.Controller) string {
	var b strings.Builder
	for _, tr := range c.Trials() {
		restore := "-"
		if tr.RestoreFrom != nil {
			restore = tr.RestoreFrom.Path
		}
		fmt.Fprintf(&b, "%s %s failures=%d restore=%s alive=%v saving=%v error=%q\n",
			tr.ID, tr.Status, tr.Failures, restore, c.HasProcess(tr.ID), tr.Saving != nil, tr.Error)
	}
	fmt.Fprintf(&b, "done=%v stopping=%v alive=%d", c.Done(), c.Stopping(), c.Alive())
	return b.String()
}

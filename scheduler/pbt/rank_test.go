package pbt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/scratch"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
	"pgregory.net/rapid"
)

// ---- reference implementations: the scans rank.go replaced ----

// refQuantiles is quantiles as a stable sort of every scored, unfinished
// trial in add order.
func refQuantiles(s *Scheduler, c hone.Control) (lower, upper []*hone.Trial) {
	type scored struct {
		t     *hone.Trial
		score float64
	}
	var ts []scored
	for _, id := range s.order {
		st := s.state[id]
		if !st.hasScore {
			continue
		}
		if t := c.Trial(id); t != nil && !t.Status.Finished() {
			ts = append(ts, scored{t, st.lastScore})
		}
	}
	if len(ts) <= 1 {
		return nil, nil
	}
	slices.SortStableFunc(ts, func(a, b scored) int {
		switch {
		case less(a.score, b.score):
			return -1
		case less(b.score, a.score):
			return 1
		}
		return 0
	})
	k := int(math.Ceil(float64(len(ts)) * s.quantile))
	if k > len(ts)/2 {
		k = len(ts) / 2
	}
	lower, upper = make([]*hone.Trial, k), make([]*hone.Trial, k)
	for i := range k {
		lower[i], upper[i] = ts[i].t, ts[len(ts)-k+i].t
	}
	return lower, upper
}

// quantiles returns both quantiles of s.view as slices, worst first.
func (s *Scheduler) quantiles(c hone.Control) (lower, upper []*hone.Trial) {
	return s.view(c).lists()
}

// checkAgainstRef compares quantiles, membership and ChooseTrialToRun with
// the references.
func checkAgainstRef(t interface{ Fatalf(string, ...any) }, s *Scheduler, c hone.Control, where string) {
	wantL, wantU := refQuantiles(s, c)
	gotL, gotU := s.quantiles(c)
	if !slices.Equal(gotL, wantL) || !slices.Equal(gotU, wantU) {
		t.Fatalf("%s: quantiles: lower %v upper %v, want lower %v upper %v", where, ids(gotL), ids(gotU), ids(wantL), ids(wantU))
	}
	q := s.view(c)
	for _, tr := range c.Trials() {
		if q.inLower(tr) != slices.Contains(wantL, tr) || q.inUpper(tr) != slices.Contains(wantU, tr) {
			t.Fatalf("%s: membership of %s: lower %v upper %v, want lower %v upper %v", where, tr.ID,
				q.inLower(tr), q.inUpper(tr), ids(wantL), ids(wantU))
		}
	}
	want := s.scanForRun(c) // the scan ChooseTrialToRun replaced, kept as its fallback
	if got := s.ChooseTrialToRun(c); got != want {
		t.Fatalf("%s: ChooseTrialToRun = %v, want %v", where, idOf(got), idOf(want))
	}
}

const dbg = false

func idOf(t *hone.Trial) string {
	if t == nil {
		return "<nil>"
	}
	return t.ID
}

// ---- a Control that keeps to the controller's order of hooks ----

// fakeControl holds the trials and carries out PBT's actions the way the
// controller does, as far as the ranking and the run queue can tell.
type fakeControl struct {
	trials []*hone.Trial
	byID   map[string]*hone.Trial
	rng    *rand.Rand
	saves  map[string]*hone.SaveFuture // in flight, by trial
	// dropped holds the trials a resume dropped, whose saves may still
	// resolve.
	dropped map[string]*hone.Trial
}

func (f *fakeControl) Trials() []*hone.Trial         { return f.trials }
func (f *fakeControl) Trial(id string) *hone.Trial   { return f.byID[id] }
func (f *fakeControl) Now() time.Time                { return time.Time{} }
func (f *fakeControl) Rand() *rand.Rand              { return f.rng }
func (f *fakeControl) Constraints() hone.Constraints { return nil }

func (f *fakeControl) Objectives() hone.Objectives {
	return hone.Objectives{{Metric: "m", Mode: hone.Max}}
}
func (f *fakeControl) ScheduleSave(t *hone.Trial) *hone.SaveFuture {
	if fut := f.saves[t.ID]; fut != nil {
		return fut
	}
	fut := hone.NewSaveFuture(t.ID)
	if t.Status != hone.StatusRunning {
		fut.Resolve(&hone.Checkpoint{TrialID: t.ID, Path: t.ID}, nil)
		return fut
	}
	f.saves[t.ID] = fut
	return fut
}
func (f *fakeControl) PauseTrial(t *hone.Trial, _ bool) {
	if t.Status == hone.StatusRunning || t.Status == hone.StatusPending {
		t.Status = hone.StatusPaused
	}
}
func (f *fakeControl) StopTrial(*hone.Trial)                              {}
func (f *fakeControl) SetConfig(t *hone.Trial, cfg hone.Config, _ string) { t.Config = cfg }
func (f *fakeControl) SetRestore(*hone.Trial, *hone.Checkpoint)           {}
func (f *fakeControl) Pin(*hone.Checkpoint)                               {}
func (f *fakeControl) Unpin(*hone.Checkpoint)                             {}
func (f *fakeControl) Logf(string, ...any)                                {}
func (f *fakeControl) AppendLine(string, string)                          {}
func (f *fakeControl) CopyFile(string, string)                            {}

// Oldest implements hone.OldestByStatus, by a scan.
func (f *fakeControl) Oldest(s hone.Status) *hone.Trial {
	for _, t := range f.trials {
		if t.Status == s && (s == hone.StatusPending || s == hone.StatusPaused) {
			return t
		}
	}
	return nil
}

func (f *fakeControl) pick(t *rapid.T, label string, ok func(*hone.Trial) bool) *hone.Trial {
	var ts []*hone.Trial
	for _, tr := range f.trials {
		if ok(tr) {
			ts = append(ts, tr)
		}
	}
	if len(ts) == 0 {
		return nil
	}
	return ts[rapid.IntRange(0, len(ts)-1).Draw(t, label)]
}

func status(ss ...hone.Status) func(*hone.Trial) bool {
	return func(t *hone.Trial) bool { return slices.Contains(ss, t.Status) }
}

// TestRankingMatchesScan drives PBT through random sequences of adds,
// starts, results (scores with ties, NaN and -0), pauses, completions,
// failures with and without retry, removals, resumes and resolving saves,
// in the controller's order of hooks, and after every step compares the
// incremental ranking's quantiles and the run queue's choice with the
// scans they replaced.
func TestRankingMatchesScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := DefaultConfig()
		cfg.TimeAttr = "time"
		cfg.Metric, cfg.Mode = "m", hone.Max
		cfg.PerturbationInterval = float64(rapid.IntRange(1, 3).Draw(t, "interval"))
		cfg.QuantileFraction = new(rapid.SampledFrom([]float64{0, 0.1, 0.25, 0.5}).Draw(t, "quantile"))
		cfg.Synch = rapid.Bool().Draw(t, "synch")
		cfg.LogConfig = new(false)
		cfg.Mutations = map[string]any{"x": []any{1, 2, 3}}
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		c := &fakeControl{byID: map[string]*hone.Trial{}, rng: rand.New(rand.NewPCG(1, 2)), saves: map[string]*hone.SaveFuture{}}
		scores := []float64{math.NaN(), math.Copysign(0, -1), 0, 1, 1, 2, math.Inf(1), math.Inf(-1)}
		nanTimes := rapid.Bool().Draw(t, "nan_times")
		retry := func(t *hone.Trial) {
			t.Status = hone.StatusPending
			s.OnTrialAdd(c, t)
		}
		steps := rapid.IntRange(1, 200).Draw(t, "steps")
		for step := range steps {
			switch op := rapid.IntRange(0, 11).Draw(t, "op"); op {
			case 0: // a new trial
				tr := &hone.Trial{ID: fmt.Sprintf("t%d", len(s.order)), Index: len(s.order), Status: hone.StatusPending}
				c.trials = append(c.trials, tr)
				c.byID[tr.ID] = tr
				s.OnTrialAdd(c, tr)
			case 1, 2: // start the chosen trial (checked against the scan below)
				if tr := s.ChooseTrialToRun(c); tr != nil {
					tr.Status = hone.StatusRunning
				}
			case 3, 4, 5: // a result
				tr := c.pick(t, "result", status(hone.StatusRunning))
				if tr == nil {
					break
				}
				st := s.state[tr.ID]
				tv := st.lastTrainTime + float64(rapid.IntRange(0, 3).Draw(t, "dt"))
				if nanTimes && rapid.IntRange(0, 20).Draw(t, "nan_time") == 0 {
					tv = math.NaN()
				}
				mv := rapid.SampledFrom(scores).Draw(t, "score")
				r := &hone.Result{TrialID: tr.ID, Metrics: map[string]any{"time": tv, "m": mv}}
				checkAgainstRef(t, s, c, fmt.Sprintf("step %d before result", step))
				switch s.OnResult(c, tr, r) {
				case hone.Pause:
					if tr.Status == hone.StatusRunning {
						tr.Status = hone.StatusPaused
					}
				case hone.Stop:
					tr.Status = hone.StatusTerminated
					s.OnTrialComplete(c, tr, r)
				}
			case 6: // a running trial pauses or finishes
				tr := c.pick(t, "running", status(hone.StatusRunning))
				if tr == nil {
					break
				}
				if rapid.Bool().Draw(t, "pause") {
					tr.Status = hone.StatusPaused
				} else {
					tr.Status = hone.StatusTerminated
					s.OnTrialComplete(c, tr, nil)
				}
			case 7: // a waiting trial is stopped
				if tr := c.pick(t, "stop", status(hone.StatusPending, hone.StatusPaused)); tr != nil {
					tr.Status = hone.StatusTerminated
					s.OnTrialRemove(c, tr)
				}
			case 8: // a failure: the hook comes first, then ERROR or a retry
				tr := c.pick(t, "fail", status(hone.StatusRunning, hone.StatusPending, hone.StatusPaused))
				if tr == nil {
					break
				}
				if tr.Status == hone.StatusRunning {
					s.OnTrialError(c, tr)
				} else {
					s.OnTrialRemove(c, tr)
				}
				if rapid.Bool().Draw(t, "retry") {
					retry(tr)
				} else {
					tr.Status = hone.StatusError
				}
			case 9: // resume: ERROR trials retried, or dropped; RUNNING ones pending
				for _, tr := range slices.Clone(c.trials) {
					switch {
					case tr.Status == hone.StatusError && rapid.Bool().Draw(t, "errored"):
						retry(tr)
					case tr.Status == hone.StatusError && rapid.Bool().Draw(t, "drop"):
						delete(c.byID, tr.ID)
						if c.dropped == nil {
							c.dropped = map[string]*hone.Trial{}
						}
						c.dropped[tr.ID] = tr
						c.trials = slices.DeleteFunc(c.trials, func(x *hone.Trial) bool { return x == tr })
					case tr.Status == hone.StatusRunning:
						tr.Status = hone.StatusPending
					}
				}
			case 10: // a save in flight resolves (with or without a checkpoint)
				ids := make([]string, 0, len(c.saves))
				for id := range c.saves {
					ids = append(ids, id)
				}
				slices.Sort(ids)
				if len(ids) == 0 {
					break
				}
				id := rapid.SampledFrom(ids).Draw(t, "save")
				fut := c.saves[id]
				delete(c.saves, id)
				var cp *hone.Checkpoint
				if rapid.Bool().Draw(t, "saved") {
					cp = &hone.Checkpoint{TrialID: id, Path: id}
				}
				fut.Resolve(cp, nil)
				tr := c.byID[id]
				if tr == nil {
					tr = c.dropped[id]
				}
				s.OnTrialSave(c, tr, cp, nil) // as the controller tells a hone.SaveListener
			case 11: // the controller pauses a waiting trial
				if tr := c.pick(t, "pause_pending", status(hone.StatusPending)); tr != nil {
					c.PauseTrial(tr, false)
				}
			}
			if dbg {
				for _, tr := range c.trials {
					st := s.state[tr.ID]
					t.Logf("  %s %s score=%v has=%v gone=%v ranked=%v", tr.ID, tr.Status, st.lastScore, st.hasScore, st.gone, st.ranked)
				}
			}
			checkAgainstRef(t, s, c, fmt.Sprintf("step %d", step))
		}
	})
}

// TestRunQueueRecoversALostTrial: a Control that brings a finished trial
// back without OnTrialAdd breaks the contract, but the trial is still
// found rather than left waiting forever.
func TestRunQueueRecoversALostTrial(t *testing.T) {
	s, _ := New(Config{Mutations: map[string]any{"x": []any{1}}})
	c := &fakeControl{byID: map[string]*hone.Trial{}, rng: rand.New(rand.NewPCG(1, 2)), saves: map[string]*hone.SaveFuture{}}
	tr := &hone.Trial{ID: "a", Status: hone.StatusPending}
	c.trials, c.byID["a"] = []*hone.Trial{tr}, tr
	s.OnTrialAdd(c, tr)
	tr.Status = hone.StatusTerminated
	if got := s.ChooseTrialToRun(c); got != nil {
		t.Fatalf("chose finished trial %s", got.ID)
	}
	tr.Status = hone.StatusPaused // no OnTrialAdd
	if got := s.ChooseTrialToRun(c); got != tr {
		t.Fatalf("ChooseTrialToRun = %v, want the lost trial", idOf(got))
	}
	if got := s.ChooseTrialToRun(c); got != tr {
		t.Fatalf("after the repair: ChooseTrialToRun = %v", idOf(got))
	}
}

// checkedPBT is PBT that compares its ranking and run queue with the scans
// at every result (before and after PBT's decision) and every choice.
type checkedPBT struct {
	*Scheduler
	t      *rapid.T
	checks int
}

func (w *checkedPBT) OnResult(c hone.Control, t *hone.Trial, r *hone.Result) hone.Decision {
	checkAgainstRef(w.t, w.Scheduler, c, "before a result of "+t.ID)
	d := w.Scheduler.OnResult(c, t, r)
	checkAgainstRef(w.t, w.Scheduler, c, "after a result of "+t.ID)
	w.checks += 2
	return d
}

func (w *checkedPBT) ChooseTrialToRun(c hone.Control) *hone.Trial {
	want := w.Scheduler.scanForRun(c)
	got := w.Scheduler.ChooseTrialToRun(c)
	if got != want {
		w.t.Fatalf("ChooseTrialToRun = %s, want %s", idOf(got), idOf(want))
	}
	w.checks++
	return got
}

// TestRankingMatchesScanUnderTheController is TestRankingMatchesScan with
// the real controller on the sim executor: random populations, slots,
// intervals, quantiles, synchronous or not, and injected failures (retried
// or not), so every hook comes in the controller's own order.
func TestRankingMatchesScanUnderTheController(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		n := rapid.IntRange(2, 24).Draw(t, "population")
		cfg := DefaultConfig()
		cfg.TimeAttr = hone.FieldTrainingIteration
		cfg.PerturbationInterval = float64(rapid.IntRange(1, 4).Draw(t, "interval"))
		cfg.QuantileFraction = new(rapid.SampledFrom([]float64{0.1, 0.25, 0.5}).Draw(t, "quantile"))
		cfg.Synch = rapid.Bool().Draw(t, "synch")
		cfg.LogConfig = new(false)
		cfg.Mutations = map[string]any{"rate": func(r *rand.Rand) any { return 0.01 + 0.5*r.Float64() }}
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		w := &checkedPBT{Scheduler: s, t: t}
		sr, err := random.New(space.Space{"rate": space.Uniform(0.01, 0.5), "asymptote": space.Uniform(0, 1),
			"step_seconds": space.Uniform(0.5, 3)}, n, nil, seed)
		if err != nil {
			t.Fatal(err)
		}
		exp := &hone.Experiment{Name: "pbt", Metric: "loss", Mode: hone.Min, Searcher: sr, Scheduler: w, Seed: seed,
			MaxConcurrentTrials: rapid.IntRange(1, n).Draw(t, "concurrency"),
			MaxPendingTrials:    rapid.IntRange(1, n).Draw(t, "pending"),
			Failure:             hone.FailureConfig{MaxFailures: rapid.IntRange(0, 2).Draw(t, "max_failures")}}
		model := sim.Curve{Noise: 0.05, MaxIterations: 12, CheckpointEvery: 1}.New
		if rapid.Bool().Draw(t, "failures") {
			model = (&sim.FailingModel{Model: model, Iteration: rapid.IntRange(1, 12).Draw(t, "fail_at"),
				Times: rapid.IntRange(0, 2).Draw(t, "fail_times")}).New
		}
		ex := &checkingExecutor{Executor: sim.New(model, sim.WithSaveDuration(time.Duration(rapid.IntRange(0, 2000).Draw(t, "save_ms"))*time.Millisecond))}
		dir, err := os.MkdirTemp(scratch.Dir(), "hone-pbt-rank-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		st, _ := local.New(dir, local.NoSync())
		_, err = runner.Run(context.Background(), exp, runner.Options{Dir: dir, Store: st, Log: io.Discard, Executor: ex})
		if err != nil && !errors.Is(err, errEnough) {
			t.Fatalf("run: %v", err)
		}
		t.Logf("%d checks, %d exploits", w.checks, s.Stats().Perturbations)
	})
}

// checkingExecutor cuts a run off after a bound of events (PBT with noisy
// scores may go on for long).
type checkingExecutor struct {
	hone.Executor
	events int
}

var errEnough = errors.New("enough events")

func (c *checkingExecutor) Next(ctx context.Context) (hone.Event, error) {
	if c.events++; c.events > 4000 {
		return hone.Event{}, errEnough
	}
	return c.Executor.Next(ctx)
}

func (c *checkingExecutor) Clock() hone.Clock { return c.Executor.(hone.Clocked).Clock() }

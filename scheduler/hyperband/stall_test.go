package hyperband_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/scratch"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/hyperband"
	"github.com/hone-tune/hone/search/bohb"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
)

// long reports whether the larger property runs were asked for
// (HONE_LONG=1).
func long() bool { return os.Getenv("HONE_LONG") == "1" }

// run is one HyperBand experiment on the sim executor, driven by the real
// runner.
type run struct {
	bohb          bool // HyperBand for BOHB with the BOHB searcher, else HyperBand with random search
	maxT, eta     float64
	concurrency   int
	samples       int           // -1: until the time budget runs out
	budget        time.Duration // 0: none
	unequalSteps  bool          // step times differ between trials
	checkpointing int           // checkpoint every n results (0: saves on demand only)
	failEvery     int           // about one trial in failEvery fails (0: none), for good
	failAt        int           // at this iteration
}

// flaky is a trainable that fails at iteration at when fail is set.
type flaky struct {
	sim.Trainable
	fail     bool
	at, iter int
}

func (f *flaky) Step() (sim.Step, error) {
	f.iter++
	if f.fail && f.iter == f.at {
		return sim.Step{Duration: time.Second}, errFlaky // failing takes time too
	}
	return f.Trainable.Step()
}

var errFlaky = errors.New("injected trial failure")

// model is r's sim model: the learning curve, with r's failures.
func (r run) model() sim.Model {
	curve := sim.Curve{Noise: 0.02, CheckpointEvery: r.checkpointing}.New
	if r.failEvery == 0 {
		return curve
	}
	return func(cfg hone.Config, id string) (sim.Trainable, error) {
		tr, err := curve(cfg, id)
		if err != nil {
			return nil, err
		}
		h := fnv.New32a()
		h.Write([]byte(id))
		return &flaky{Trainable: tr, fail: h.Sum32()%uint32(r.failEvery) == 0, at: r.failAt}, nil
	}
}

func (r run) String() string {
	return fmt.Sprintf("bohb=%v max_t=%v η=%v concurrency=%d samples=%d budget=%v unequal=%v checkpoint_every=%d fail_every=%d fail_at=%d",
		r.bohb, r.maxT, r.eta, r.concurrency, r.samples, r.budget, r.unequalSteps, r.checkpointing, r.failEvery, r.failAt)
}

// pauseLog is the Pauser between HyperBand for BOHB and the BOHB searcher:
// it forwards every call and counts the pauses each trial was told of.
type pauseLog struct {
	next   hyperband.Pauser
	pauses map[string]int
}

func (p *pauseLog) OnPause(id string) {
	p.pauses[id]++
	p.next.OnPause(id)
}

func (p *pauseLog) OnUnpause(id string) { p.next.OnUnpause(id) }

// decisions wraps the scheduler to check, at every PAUSE it returns for a
// trial, that the searcher was told of that pause during the same call.
type decisions struct {
	*hyperband.Scheduler
	log    *pauseLog
	missed []string
	pauses int
	start  time.Time            // when the first trial was added
	ended  map[string]time.Time // when each trial ended
}

func (d *decisions) OnTrialAdd(c hone.Control, t *hone.Trial) {
	if d.start.IsZero() {
		d.start = c.Now()
	}
	d.Scheduler.OnTrialAdd(c, t)
}

func (d *decisions) OnTrialComplete(c hone.Control, t *hone.Trial, r *hone.Result) {
	d.ended[t.ID] = c.Now()
	d.Scheduler.OnTrialComplete(c, t, r)
}

func (d *decisions) OnTrialError(c hone.Control, t *hone.Trial) {
	d.ended[t.ID] = c.Now()
	d.Scheduler.OnTrialError(c, t)
}

func (d *decisions) OnTrialRemove(c hone.Control, t *hone.Trial) {
	d.ended[t.ID] = c.Now()
	d.Scheduler.OnTrialRemove(c, t)
}

// cut reports whether trial id ended when, or just before, the time budget
// ran out (then the stop of the experiment may have ended it).
func (d *decisions) cut(id string, budget time.Duration) bool {
	at, ok := d.ended[id]
	return budget > 0 && (!ok || !at.Before(d.start.Add(budget-maxStep)))
}

// maxStep is the longest step time of a trial.
const maxStep = 3 * time.Second

func (d *decisions) OnResult(c hone.Control, t *hone.Trial, r *hone.Result) hone.Decision {
	before := d.log.pauses[t.ID]
	dec := d.Scheduler.OnResult(c, t, r)
	if dec == hone.Pause {
		d.pauses++
		if d.log.pauses[t.ID] == before {
			d.missed = append(d.missed, fmt.Sprintf("%s at iteration %d", t.ID, r.TrainingIteration))
		}
	}
	return dec
}

// tb is what the checks need of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// execute runs r and returns the final trials and the scheduler.
func execute(t tb, r run) ([]*hone.Trial, *decisions) {
	sp := space.Space{"rate": space.Uniform(0.01, 0.5), "asymptote": space.Uniform(0, 1)}
	if r.unequalSteps {
		sp["step_seconds"] = space.Uniform(0.5, maxStep.Seconds())
	}
	cfg := hyperband.DefaultConfig()
	cfg.MaxT, cfg.ReductionFactor = r.maxT, r.eta
	var (
		sr    hone.Searcher
		sched *hyperband.Scheduler
		err   error
	)
	d := &decisions{ended: map[string]time.Time{}}
	if r.bohb {
		b, err := bohb.New(sp, bohb.Options{Metric: "loss", Mode: hone.Min, NumSamples: r.samples, Seed: 11, MaxConcurrent: r.concurrency})
		if err != nil {
			t.Fatal(err)
		}
		d.log = &pauseLog{next: b, pauses: map[string]int{}}
		sr = b
		sched, err = hyperband.NewForBOHB(cfg, d.log)
		if err != nil {
			t.Fatal(err)
		}
	} else {
		if sr, err = random.New(sp, r.samples, nil, 11); err != nil {
			t.Fatal(err)
		}
		if sched, err = hyperband.New(cfg); err != nil {
			t.Fatal(err)
		}
		d.log = &pauseLog{pauses: map[string]int{}}
	}
	d.Scheduler = sched
	exp := &hone.Experiment{Name: "hb", Metric: "loss", Mode: hone.Min, Searcher: sr, Scheduler: d, Seed: 3,
		MaxConcurrentTrials: r.concurrency, TimeBudget: r.budget}
	if !r.bohb {
		exp.MaxPendingTrials = 2*r.concurrency + 16 // random search would keep 1000 waiting
	}
	dir, err := os.MkdirTemp(scratch.Dir(), "hone-hb-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ex := sim.New(r.model())
	st, err := local.New(filepath.Join(dir, "hb"), local.NoSync())
	if err != nil {
		t.Fatal(err)
	}
	out, err := runner.Run(context.Background(), exp, runner.Options{Dir: filepath.Join(dir, "hb"), Store: st, Log: io.Discard, Executor: ex})
	if err != nil {
		t.Fatalf("%v: run: %v", r, err)
	}
	return out.Trials, d
}

// checkBrackets is the property of a finished run: no trial is PAUSED or
// PENDING unless the time budget ran out; every bracket that took all its
// trials and has none left ran to its end (per halving level k exactly
// Rungs[k].N of its trials reached milestone Rungs[k].R, the last one
// max_t or Ray's truncation of it); no bracket that took all its trials
// has every live trial waiting at the milestone (stalled); no trial ran
// past max_t; and with BOHB the searcher heard of every pause.
//
// It returns how many brackets it saw run to their end.
func checkBrackets(t tb, r run, trials []*hone.Trial, d *decisions) (ended int) {
	iter := map[string]int{}
	status := map[string]hone.Status{}
	for _, tr := range trials {
		status[tr.ID] = tr.Status
		if tr.LastResult != nil {
			iter[tr.ID] = tr.LastResult.TrainingIteration
		}
		if float64(iter[tr.ID]) > r.maxT {
			t.Fatalf("%v: trial %s ran to %d > max_t", r, tr.ID, iter[tr.ID])
		}
		if r.budget == 0 && !tr.Status.Finished() {
			t.Fatalf("%v: trial %s ended %s without a time budget", r, tr.ID, tr.Status)
		}
	}
	if r.budget == 0 && r.samples >= 0 && len(trials) != r.samples {
		t.Fatalf("%v: %d trials, want %d", r, len(trials), r.samples)
	}
	if r.bohb && len(d.missed) > 0 {
		t.Fatalf("%v: the searcher did not hear of %d of %d pauses, e.g. %s", r, len(d.missed), d.pauses, d.missed[0])
	}
	for bi, band := range d.Brackets() {
		for _, b := range band {
			if b.Skipped || !b.Complete {
				continue
			}
			if len(b.Live) > 0 {
				if b.Reached == len(b.Live) {
					t.Fatalf("%v: band %d bracket s=%d stalled: all %d live trials wait at milestone %v", r, bi, b.S, len(b.Live), b.Milestone)
				}
				continue // cut short by the time budget
			}
			cut := false
			for _, id := range b.Members {
				cut = cut || d.cut(id, r.budget) || status[id] == hone.StatusError
			}
			if cut {
				continue // some trials failed, or were ended by the stop at the time budget
			}
			for k, rung := range b.Rungs {
				n := 0
				for _, id := range b.Members {
					if float64(iter[id]) >= rung.R {
						n++
					}
				}
				if n != rung.N {
					t.Fatalf("%v: band %d bracket s=%d: %d trials reached milestone %v (level %d), want %d (rungs %v)", r, bi, b.S, n, rung.R, k, rung.N, b.Rungs)
				}
			}
			ended++
		}
	}
	return ended
}

// TestBOHBBracketsDoNotStall is the regression test for brackets of
// HyperBand for BOHB left PAUSED for good: equal step times, so a
// bracket's trials reach each milestone together, 4 concurrent trials and
// a searcher that keeps suggesting. Every filled bracket must run to its
// end (Ray processes such a bracket only once no trial at all is running).
func TestBOHBBracketsDoNotStall(t *testing.T) {
	for _, r := range []run{
		{bohb: true, maxT: 81, eta: 3, concurrency: 4, samples: -1, budget: 3000 * time.Second},
		{bohb: true, maxT: 81, eta: 3, concurrency: 4, samples: -1, budget: 3000 * time.Second, checkpointing: 1},
		{bohb: true, maxT: 27, eta: 3, concurrency: 4, samples: 600},
		{bohb: false, maxT: 81, eta: 3, concurrency: 4, samples: -1, budget: 3000 * time.Second},
	} {
		trials, d := execute(t, r)
		if n := checkBrackets(t, r, trials, d); n < 10 {
			t.Fatalf("%v: only %d brackets ran to their end", r, n)
		}
	}
}

// TestBOHBSearcherHearsEveryPause: with one trial at a time, a kept trial
// reaches the next milestone while the other kept trials are still PAUSED;
// that PAUSE comes from processing the bracket, and the searcher must hear
// of it like of any other (else it counts the trial against its
// concurrency limit).
func TestBOHBSearcherHearsEveryPause(t *testing.T) {
	r := run{bohb: true, maxT: 9, eta: 3, concurrency: 1, samples: 30}
	trials, d := execute(t, r)
	if d.pauses == 0 {
		t.Fatal("no trial was paused")
	}
	checkBrackets(t, r, trials, d)
}

// TestNoBracketLeftPaused is the property over the sim executor: for
// HyperBand and HyperBand for BOHB, equal and unequal step times,
// concurrency 1–16, a grid of max_t and η, num_samples up to 300 (2000
// with HONE_LONG=1) or -1 with a time budget, and some runs where trials
// fail for good, checkBrackets holds.
func TestNoBracketLeftPaused(t *testing.T) {
	maxSamples := 300
	if long() {
		maxSamples = 2000
	}
	rapid.Check(t, func(rt *rapid.T) {
		r := run{
			bohb:          rapid.Bool().Draw(rt, "bohb"),
			maxT:          rapid.SampledFrom([]float64{1, 2, 3, 4, 5, 8, 9, 10, 16, 27, 32, 50, 81, 100}).Draw(rt, "max_t"),
			eta:           rapid.SampledFrom([]float64{2, 2.5, 3, 4, 5}).Draw(rt, "eta"),
			concurrency:   rapid.IntRange(1, 16).Draw(rt, "concurrency"),
			unequalSteps:  rapid.Bool().Draw(rt, "unequal_steps"),
			checkpointing: rapid.IntRange(0, 2).Draw(rt, "checkpoint_every"),
		}
		if rapid.IntRange(0, 3).Draw(rt, "failing") == 0 {
			r.failEvery = rapid.IntRange(1, 6).Draw(rt, "fail_every")
			r.failAt = rapid.IntRange(1, int(r.maxT)).Draw(rt, "fail_at")
		}
		if rapid.IntRange(0, 3).Draw(rt, "budgeted") == 0 {
			r.samples = -1
			// about maxSamples trials' worth of time at most
			most := max(1, maxSamples*max(1, int(r.maxT)/4)/r.concurrency)
			r.budget = time.Duration(rapid.IntRange(1, most).Draw(rt, "budget_s")) * time.Second
		} else {
			r.samples = rapid.IntRange(1, maxSamples).Draw(rt, "samples")
		}
		trials, d := execute(rt, r)
		checkBrackets(rt, r, trials, d)
	})
}

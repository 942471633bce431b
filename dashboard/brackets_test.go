package dashboard_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/spectest"
	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/scheduler/asha"
	"github.com/hone-tune/hone/search/dehb"
	"github.com/hone-tune/hone/spec"
	"github.com/hone-tune/hone/trial"
)

// bracketsSpec is ASHA with three brackets: milestones 1, 3 and 9 (max_t)
// in bracket 0, 3 and 9 in bracket 1, 9 in bracket 2.
const bracketsSpec = `metric: loss
mode: min
seed: 11
num_samples: 12
command: [unused]
search_space:
  x: {uniform: [0, 1]}
scheduler: {name: asha, max_t: 9, grace_period: 1, reduction_factor: 3, brackets: 3}
max_concurrent_trials: 4
`

// held is a Go trainable whose trials report loss x + 1/iteration for up
// to 9 iterations, and wait after their second result until the test
// closes gate.
func held(gate <-chan struct{}) func(spec.Process) (hone.Executor, error) {
	return func(spec.Process) (hone.Executor, error) {
		return inproc.NewFunc(func(ctx context.Context, s trial.Session) error {
			x := s.Config()["x"].(float64)
			for it := 1; it <= 9; it++ {
				if err := s.Report(trial.Metrics{"loss": x + 1/float64(it)}); err != nil {
					return err
				}
				if it == 2 {
					select {
					case <-gate:
					case <-ctx.Done():
						return ctx.Err()
					}
				}
			}
			return nil
		}), nil
	}
}

// brackets records the bracket ASHA assigned each trial as it starts, on
// the run's own goroutine.
type brackets struct {
	hone.NopCallback
	sched *asha.Scheduler
	mu    sync.Mutex
	of    map[string]string
}

func (b *brackets) OnTrialStart(t *hone.Trial) {
	if i := b.sched.Bracket(t.ID); i >= 0 {
		b.mu.Lock()
		b.of[t.ID] = fmt.Sprintf("bracket %d", i)
		b.mu.Unlock()
	}
}

func (b *brackets) snapshot() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.of)
}

// TestBracketsOfARun follows an ASHA run with three brackets: while it
// runs and once it ended, the rungs the API shows per bracket hold the
// trials the scheduler put in that bracket, and a trial's page names its
// bracket.
func TestBracketsOfARun(t *testing.T) {
	gate := make(chan struct{})
	rec := &brackets{of: map[string]string{}}
	x := startPlan(t, t.TempDir(), "brackets", bracketsSpec, held(gate), func(p *spec.Plan) {
		rec.sched = p.Experiment.Scheduler.(*asha.Scheduler)
		p.Experiment.Callbacks = append(p.Experiment.Callbacks, rec)
	})
	_, hs := serve(t, x.dir, nil)
	api := hs.URL + "/api/"
	shown := func() (map[string]string, *report.Rungs) {
		var rg report.Rungs
		if !tryJSON(t, api+"rungs", &rg) {
			return nil, nil
		}
		out := map[string]string{}
		for _, b := range rg.Brackets {
			for _, id := range b.Members {
				out[id] = b.Label
			}
		}
		return out, &rg
	}
	// Running: every trial started so far is shown in its bracket.
	eventually(t, "the running trials in their brackets", func() bool {
		live := rec.snapshot()
		got, rg := shown()
		if rg == nil || len(live) == 0 || rg.BracketsNote != "" || len(rg.Brackets) != 3 {
			return false
		}
		for id, b := range live {
			if got[id] != b {
				return false
			}
		}
		for _, b := range rg.Brackets {
			if len(b.Rungs) == 0 || b.Rungs[len(b.Rungs)-1].Milestone != 9 {
				t.Errorf("bracket %s: rungs %+v", b.Label, b.Rungs)
			}
		}
		return true
	})
	var some string
	for id := range rec.snapshot() {
		some = id
		break
	}
	var tv struct {
		Rungs []report.TrialRung `json:"rungs"`
	}
	eventually(t, "a trial's page names its bracket", func() bool {
		if !tryJSON(t, api+"trial?id="+some, &tv) || len(tv.Rungs) == 0 {
			return false
		}
		for _, r := range tv.Rungs {
			if r.Bracket != rec.snapshot()[some] {
				t.Fatalf("trial %s: a rung of %q, it runs in %q", some, r.Bracket, rec.snapshot()[some])
			}
		}
		return true
	})
	close(gate)
	x.wait(t)
	eventually(t, "every trial in the bracket the scheduler gave it", func() bool {
		live := rec.snapshot()
		got, rg := shown()
		if rg == nil || len(live) != 12 || !maps.Equal(got, live) {
			return false
		}
		for _, b := range rg.Brackets {
			for _, g := range b.Rungs {
				if g.Counts[report.OutcomePending]+g.Counts[report.OutcomePaused] != 0 {
					return false // a result not read yet
				}
			}
		}
		return true
	})
	got, rg := shown()
	used := 0
	for _, b := range rg.Brackets {
		if b.Trials > 0 {
			used++
		}
		for _, g := range b.Rungs {
			for _, rt := range g.Trials {
				if got[rt.ID] != b.Label {
					t.Errorf("%s lists trial %s of %s", b.Label, rt.ID, got[rt.ID])
				}
			}
		}
	}
	if used < 2 {
		t.Errorf("the trials ran in %d brackets; the test needs several", used)
	}
	if rg.BracketsNote != "" {
		t.Errorf("note %q", rg.BracketsNote)
	}
}

// TestBracketsOfDEHB shows DEHB's budgets as rungs, per bracket of the
// searcher: each trial at the rungs its jobs were for.
func TestBracketsOfDEHB(t *testing.T) {
	var sr *dehb.Searcher
	x := startPlan(t, t.TempDir(), "dehb", spectest.CurveSpec(3, 30, `searcher: {name: dehb, max_concurrent: 3}
scheduler: {name: dehb, max_t: 9, grace_period: 1, reduction_factor: 3}
`), func(spec.Process) (hone.Executor, error) { return sim.New(sim.Curve{MaxIterations: 9}.New), nil }, func(p *spec.Plan) {
		sr = p.Experiment.Searcher.(*dehb.Searcher)
	})
	x.wait(t)
	_, hs := serve(t, x.dir, nil)
	var rg report.Rungs
	getJSON(t, hs.URL+"/api/rungs", http.StatusOK, &rg)
	if rg.BracketsNote != "" || len(rg.Brackets) != sr.Brackets() || len(rg.Brackets) < 2 {
		t.Fatalf("%d brackets shown, %d started; note %q", len(rg.Brackets), sr.Brackets(), rg.BracketsNote)
	}
	for i, b := range rg.Brackets {
		for _, id := range b.Members {
			if !slices.ContainsFunc(sr.Jobs(id), func(j dehb.Job) bool { return j.Bracket == i }) {
				t.Errorf("%s lists trial %s, which ran no job for it", b.Label, id)
			}
		}
		for k, g := range b.Rungs {
			if g.Milestone != sr.BracketBudgets(i)[k] {
				t.Errorf("%s: rung %d at %v, budget %v", b.Label, k, g.Milestone, sr.BracketBudgets(i)[k])
			}
			for _, rt := range g.Trials {
				if !slices.ContainsFunc(sr.Jobs(rt.ID), func(j dehb.Job) bool { return j.Bracket == i && j.Rung == k }) {
					t.Errorf("%s rung %d shows trial %s, which ran no job there", b.Label, k, rt.ID)
				}
			}
		}
	}
}

package tpe_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/mfbench"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/asha"
	"github.com/hone-tune/hone/search"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/search/tpe"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
)

// problem is a multi-fidelity function to minimise on [0, 1]^dim: a
// trial's result at step u of steps is f(x, u/steps), and f(x, 1) is the
// objective.
type problem struct {
	dim, steps int
	f          func(x []float64, s float64) float64
	opt        float64 // min of f(·, 1)
}

func (p problem) space() space.Space {
	sp := space.Space{}
	for i := range p.dim {
		sp[fmt.Sprint("x", i)] = space.Uniform(0, 1)
	}
	return sp
}

func (p problem) x(cfg hone.Config) []float64 {
	x := make([]float64, p.dim)
	for i := range x {
		x[i], _ = hone.Number(cfg[fmt.Sprint("x", i)])
	}
	return x
}

// sq is the squared distance of x to (c, c, ...).
func sq(x []float64, c float64) float64 {
	d := 0.0
	for _, v := range x {
		d += (v - c) * (v - c)
	}
	return d
}

// smooth has low fidelities that agree with the highest: a bowl at 0.3
// whose bias fades with the budget.
var smooth = problem{dim: 3, steps: 27, opt: 0, f: func(x []float64, s float64) float64 {
	return sq(x, 0.3) + 0.05*(1-s)*math.Sin(7*x[0])
}}

// misleading is f_s(x) = (1−s)·g(x) + s·h(x) with g = 1 − h: every
// budget below half of the steps ranks configurations in the opposite
// order to the highest (h, a bowl at 0.8); under ASHA (grace 1, η 3) the
// rungs at steps 1, 3 and 9 agree with each other and disagree with 27.
var misleading = problem{dim: 3, steps: 27, opt: 0, f: func(x []float64, s float64) float64 {
	h := sq(x, 0.8) / 1.92 // in [0, 1]
	return (1-s)*(1-h) + s*h
}}

// trainable evaluates a configuration one step at a time.
type trainable struct {
	p    problem
	x    []float64
	u    int
	fifo bool // report done at the last step
}

func (t *trainable) Step() (sim.Step, error) {
	t.u++
	return sim.Step{
		Metrics:  map[string]any{"loss": t.p.f(t.x, float64(t.u)/float64(t.p.steps))},
		Duration: time.Second,
		Done:     t.fifo && t.u >= t.p.steps,
	}, nil
}

func (t *trainable) Save() ([]byte, error) { return binary.AppendUvarint(nil, uint64(t.u)), nil }

func (t *trainable) Load(b []byte) error {
	u, n := binary.Uvarint(b)
	if n <= 0 {
		return errors.New("bad state")
	}
	t.u = int(u)
	return nil
}

// budget stops the experiment once steps results have arrived, and keeps
// the best objective value reached at full fidelity within them.
type budget struct {
	hone.NopCallback
	p       problem
	steps   int
	seen    int
	best    float64
	configs map[string][]float64
}

func (b *budget) OnTrialResult(tr *hone.Trial, r *hone.Result) {
	b.seen++
	u, _ := r.Value(hone.FieldTrainingIteration)
	if int(u) >= b.p.steps && b.seen <= b.steps {
		b.best = math.Min(b.best, b.p.f(b.configs[tr.ID], 1))
	}
}

func (b *budget) ShouldStop(string, *hone.Result) bool { return false }

func (b *budget) ShouldStopAll() bool { return b.seen >= b.steps }

// method builds a searcher and scheduler for a run.
type method func(p problem, seed uint64, workers int) (hone.Searcher, hone.Scheduler, error)

func tpeMethod(rungs, check bool) method {
	return func(p problem, seed uint64, workers int) (hone.Searcher, hone.Scheduler, error) {
		s, err := tpe.New(p.space(), tpe.Options{Metric: "loss", NumSamples: -1, Seed: seed,
			Multivariate: true, ConstantLiar: true, FidelityCheck: check})
		if err != nil || !rungs {
			return search.Limit(s, workers), nil, err
		}
		sc, err := ashaFor(p)
		if err != nil {
			return nil, nil, err
		}
		s.SetRungs(sc.Rungs())
		sc.SetAdvisor(s)
		return search.Limit(s, workers), sc, nil
	}
}

func ashaFor(p problem) (*asha.Scheduler, error) {
	return asha.New(asha.Config{MaxT: float64(p.steps), GracePeriod: 1, ReductionFactor: 3, Brackets: 1, StopLastTrials: true})
}

func randomMethod(withASHA bool) method {
	return func(p problem, seed uint64, workers int) (hone.Searcher, hone.Scheduler, error) {
		s, err := random.New(p.space(), -1, nil, seed)
		if err != nil || !withASHA {
			return s, nil, err
		}
		sc, err := ashaFor(p)
		return s, sc, err
	}
}

// simRun runs m on p with seed and workers trials at once until steps
// results, and returns the regret of the best full-fidelity evaluation
// and the trials.
func simRun(t *testing.T, m method, p problem, seed uint64, workers, steps int) (float64, []*hone.Trial) {
	t.Helper()
	sr, sc, err := m(p, seed, workers)
	if err != nil {
		t.Fatal(err)
	}
	b := &budget{p: p, steps: steps, best: math.Inf(1), configs: map[string][]float64{}}
	exp := &hone.Experiment{Name: "e", Metric: "loss", Mode: hone.Min, Searcher: sr, Scheduler: sc, Seed: seed,
		MaxConcurrentTrials: workers, Stoppers: []hone.Stopper{b}, Callbacks: []hone.Callback{b},
		Checkpoint: hone.CheckpointConfig{NumToKeep: 1}}
	model := func(cfg hone.Config, id string) (sim.Trainable, error) {
		x := p.x(cfg)
		b.configs[id] = x
		return &trainable{p: p, x: x, fifo: sc == nil}, nil
	}
	dir := filepath.Join(t.TempDir(), "e")
	st, err := local.New(dir, local.NoSync())
	if err != nil {
		t.Fatal(err)
	}
	out, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Store: st, Log: io.Discard,
		Executor: sim.New(model), Pool: hone.Resources{CPU: float64(workers)}})
	if err != nil {
		t.Fatal(err)
	}
	return b.best - p.opt, out.Trials
}

func medianOf(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// medianRegret runs m over seeds 1..n and returns the median regret.
func medianRegret(t *testing.T, m method, p problem, n, workers, steps int) (float64, []float64) {
	var rs []float64
	for seed := range uint64(n) {
		r, _ := simRun(t, m, p, seed+1, workers, steps)
		rs = append(rs, r)
	}
	return medianOf(rs), rs
}

// On the sim executor, at equal budget (in training steps), TPE beats
// random search, alone and under ASHA, one trial at a time and 4 at once.
func TestSimBeatsRandom(t *testing.T) {
	if testing.Short() {
		t.Skip("runs dozens of experiments")
	}
	const seeds, steps = 7, 27 * 40
	for _, workers := range []int{1, 4} {
		for _, tc := range []struct {
			name      string
			tpe, base method
		}{
			{"fifo", tpeMethod(false, true), randomMethod(false)},
			{"asha", tpeMethod(true, true), randomMethod(true)},
		} {
			mt, rt := medianRegret(t, tc.tpe, smooth, seeds, workers, steps)
			mr, rr := medianRegret(t, tc.base, smooth, seeds, workers, steps)
			t.Logf("%s, %d at once: median regret TPE %.4g %v, random %.4g %v", tc.name, workers, mt, rt, mr, rr)
			if !(mt < mr/2) {
				t.Errorf("%s, %d at once: median regret TPE %.4g, random %.4g: want less than half", tc.name, workers, mt, mr)
			}
		}
	}
}

// TestSimMisleadingFidelities is the test of the fidelity rule
// (docs/SEMANTICS.md §5): on a problem whose low budgets rank
// configurations in the opposite order to the highest, TPE + ASHA with the
// check (ASHA advised, the model on trusted budgets) reaches a lower final
// regret than the same method without it, at equal budget, median over
// seeds.
func TestSimMisleadingFidelities(t *testing.T) {
	if testing.Short() {
		t.Skip("runs dozens of experiments")
	}
	const seeds, steps = 9, 27 * 40
	for _, workers := range []int{1, 4} {
		with, rw := medianRegret(t, tpeMethod(true, true), misleading, seeds, workers, steps)
		without, ro := medianRegret(t, tpeMethod(true, false), misleading, seeds, workers, steps)
		t.Logf("%d at once: median regret with the check %.4g %v, without %.4g %v", workers, with, rw, without, ro)
		if !(with < without/2) {
			t.Errorf("%d at once: median regret with the check %.4g, without %.4g: want less than half", workers, with, without)
		}
	}
	// On the smooth problem the check changes little: no budget misleads.
	with, _ := medianRegret(t, tpeMethod(true, true), smooth, 5, 1, 27*40)
	without, _ := medianRegret(t, tpeMethod(true, false), smooth, 5, 1, 27*40)
	t.Logf("smooth: median regret with the check %.4g, without %.4g", with, without)
	if with > 1.5*without+1e-3 {
		t.Errorf("smooth: median regret with the check %.4g, without %.4g", with, without)
	}
}

// Sixteen trials at once: the configurations suggested are distinct, and
// the liar keeps each wave of suggestions apart.
func TestSimConcurrency16(t *testing.T) {
	_, trials := simRun(t, tpeMethod(true, true), smooth, 3, 16, 27*30)
	seen := map[string]bool{}
	for _, tr := range trials {
		k := fmt.Sprint(tr.Config)
		if seen[k] {
			t.Fatalf("configuration %s suggested twice", k)
		}
		seen[k] = true
	}
	if len(trials) < 48 {
		t.Fatalf("%d trials", len(trials))
	}
}

// Same seed, same experiment: the same trials with the same configurations
// and results, at 4 trials at once, under ASHA.
func TestSimDeterministic(t *testing.T) {
	run := func() string {
		_, trials := simRun(t, tpeMethod(true, true), misleading, 5, 4, 27*15)
		var s string
		for _, tr := range trials {
			last := any(nil)
			if tr.LastResult != nil {
				last = tr.LastResult.Metrics["loss"]
			}
			s += fmt.Sprintf("%s %v %v %s\n", tr.ID, tr.Config, last, tr.Status)
		}
		return s
	}
	a, b := run(), run()
	if a != b {
		t.Fatalf("two runs with the same seed differ:\n%s\n---\n%s", a, b)
	}
}

// A TPE + ASHA experiment (rungs, advice, liars) crashed midway resumes:
// the journal replays through a new searcher and scheduler without
// diverging, and the experiment runs to its end with the trials of an
// uninterrupted run.
func TestSimResume(t *testing.T) {
	p := smooth
	const n = 60
	mk := func() *hone.Experiment {
		sr, err := tpe.New(p.space(), tpe.Options{Metric: "loss", NumSamples: n, Seed: 9,
			Multivariate: true, ConstantLiar: true, FidelityCheck: true})
		if err != nil {
			t.Fatal(err)
		}
		sc, err := ashaFor(p)
		if err != nil {
			t.Fatal(err)
		}
		sr.SetRungs(sc.Rungs())
		sc.SetAdvisor(sr)
		return &hone.Experiment{Name: "e", Metric: "loss", Mode: hone.Min, Searcher: search.Limit(sr, 4), Scheduler: sc,
			Seed: 9, MaxConcurrentTrials: 4, Checkpoint: hone.CheckpointConfig{NumToKeep: 1}}
	}
	model := func(cfg hone.Config, id string) (sim.Trainable, error) {
		return &trainable{p: p, x: p.x(cfg)}, nil
	}
	opts := func(dir string, e hone.Executor) runner.Options {
		st, err := local.New(dir, local.NoSync())
		if err != nil {
			t.Fatal(err)
		}
		return runner.Options{Dir: dir, Store: st, Log: io.Discard, Executor: e, Pool: hone.Resources{CPU: 4}}
	}
	whole, err := runner.Run(context.Background(), mk(), opts(filepath.Join(t.TempDir(), "e"), sim.New(model)))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "e")
	if _, err := runner.Run(context.Background(), mk(), opts(dir, &mfbench.CrashAfter{Executor: sim.New(model), N: 250})); !errors.Is(err, mfbench.ErrCrash) {
		t.Fatalf("crashing run: %v", err)
	}
	out, err := runner.Resume(context.Background(), mk(), opts(dir, sim.New(model)), hone.ResumeFlags{Unfinished: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Trials) != n || len(whole.Trials) != n {
		t.Fatalf("%d trials after resume, %d in the whole run; want %d", len(out.Trials), len(whole.Trials), n)
	}
	for _, tr := range out.Trials {
		if !tr.Status.Finished() {
			t.Errorf("trial %s ended %s", tr.ID, tr.Status)
		}
	}
	// The trials created before the crash are the whole run's.
	for i, tr := range out.Trials[:20] {
		if w := whole.Trials[i]; tr.ID != w.ID || fmt.Sprint(tr.Config) != fmt.Sprint(w.Config) {
			t.Fatalf("trial %d: %s %v after resume, %s %v in the whole run", i, tr.ID, tr.Config, w.ID, w.Config)
		}
	}
}

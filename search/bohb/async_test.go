package bohb_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/mfbench"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/asha"
	"github.com/hone-tune/hone/search/bohb"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/stopper"
	"github.com/hone-tune/hone/store/local"
)

// asyncBOHB is asynchronous BOHB on the mfbench problem: ASHA (budgets 1,
// 3, 9, 27) marking its rungs for the BOHB searcher with AsyncOptions.
func asyncBOHB(t testing.TB, sp space.Space, maxT float64, seed uint64, samples int) *hone.Experiment {
	t.Helper()
	o := bohb.AsyncOptions()
	o.Metric, o.Mode, o.NumSamples, o.Seed = mfbench.Metric, hone.Min, samples, seed
	sr, err := bohb.New(sp, o)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := asha.New(asha.Config{MaxT: maxT, GracePeriod: 1, ReductionFactor: 3, Brackets: 1, StopLastTrials: true, BudgetInfo: true})
	if err != nil {
		t.Fatal(err)
	}
	return &hone.Experiment{Name: "asha-bohb", Metric: mfbench.Metric, Mode: hone.Min, Seed: seed, Searcher: sr, Scheduler: sc}
}

// TestAsyncBeatsRandom: on the mixed multi-fidelity problem of mfbench, at
// an equal budget of 40 full evaluations' worth of steps, asynchronous
// BOHB's median regret over eleven seeds is below 60% of random search's
// (each trial to full fidelity), one trial at a time and four at once.
func TestAsyncBeatsRandom(t *testing.T) {
	const budget = 40 * mfbench.Steps
	for _, w := range []int{1, 4} {
		var rd, ab []float64
		for seed := uint64(1); seed <= 11; seed++ {
			sr, err := random.New(mfbench.Space(), -1, nil, seed)
			if err != nil {
				t.Fatal(err)
			}
			exp := &hone.Experiment{Name: "random", Metric: mfbench.Metric, Mode: hone.Min, Seed: seed, Searcher: sr,
				Stoppers: []hone.Stopper{stopper.MaxIterations(mfbench.Steps)}}
			o, err := mfbench.Run(context.Background(), exp, budget, w)
			if err != nil {
				t.Fatal(err)
			}
			rd = append(rd, o.Regret)
			o, err = mfbench.Run(context.Background(), asyncBOHB(t, mfbench.Space(), mfbench.Steps, seed, -1), budget, w)
			if err != nil {
				t.Fatal(err)
			}
			ab = append(ab, o.Regret)
		}
		t.Logf("%d at once: median regret: random %.4f, asynchronous BOHB %.4f", w, median(rd), median(ab))
		if !(median(ab) < 0.6*median(rd)) {
			t.Errorf("%d at once: asynchronous BOHB's median regret %v is not below 60%% of random's %v", w, median(ab), median(rd))
		}
	}
}

// TestAsyncConcurrency16: sixteen trials at once complete, every trial
// ends, and no configuration is suggested twice.
func TestAsyncConcurrency16(t *testing.T) {
	o, err := mfbench.Run(context.Background(), asyncBOHB(t, mfbench.Space(), mfbench.Steps, 5, 400), 1<<30, 16)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range o.CheckEnded(400) {
		t.Error(err)
	}
}

// TestAsyncDeterministic: the same seed gives the same trials, bit for
// bit, at concurrency 1 and 8; another seed gives others.
func TestAsyncDeterministic(t *testing.T) {
	mfbench.CheckDeterministic(t, func(seed uint64) *hone.Experiment { return asyncBOHB(t, mfbench.Space(), mfbench.Steps, seed, 120) }, 1<<30, 1, 8)
}

// TestAsyncResumeDecidesAsUninterrupted: asynchronous BOHB killed midway
// (one trial at a time, a checkpoint every step) and resumed from its
// journal creates the same configurations, and they end as in an
// uninterrupted run, with the same trial ids.
func TestAsyncResumeDecidesAsUninterrupted(t *testing.T) {
	sp := space.Space{"x": space.Uniform(0, 1), "y": space.Uniform(0, 1)}
	model := func() hone.Executor {
		return sim.New(sim.Curve{CheckpointEvery: 1, Params: func(c hone.Config) (sim.CurveParams, error) {
			x, _ := hone.Number(c["x"])
			y, _ := hone.Number(c["y"])
			return sim.CurveParams{Initial: 1 + x, Asymptote: math.Abs(x-0.3) + math.Abs(y-0.6), Rate: 0.2, StepTime: time.Second}, nil
		}}.New)
	}
	opts := func(e hone.Executor) runner.Options {
		dir := filepath.Join(t.TempDir(), "exp")
		st, err := local.New(dir, local.NoSync())
		if err != nil {
			t.Fatal(err)
		}
		return runner.Options{Dir: dir, Store: st, Log: io.Discard, Executor: e, Pool: hone.Resources{CPU: 1}}
	}
	exp := func() *hone.Experiment { return asyncBOHB(t, sp, 27, 11, 60) }
	count := &mfbench.CrashAfter{Executor: model(), N: math.MaxInt}
	whole, err := runner.Run(context.Background(), exp(), opts(count))
	if err != nil {
		t.Fatal(err)
	}
	events := math.MaxInt - count.N
	for _, at := range []int{events / 5, events / 2, events * 4 / 5} {
		o := opts(&mfbench.CrashAfter{Executor: model(), N: at})
		if _, err := runner.Run(context.Background(), exp(), o); !errors.Is(err, mfbench.ErrCrash) {
			t.Fatalf("crash at %d: %v", at, err)
		}
		o.Executor = model()
		out, err := runner.Resume(context.Background(), exp(), o, hone.ResumeFlags{Unfinished: true})
		if err != nil {
			t.Fatalf("resume after %d events: %v", at, err)
		}
		if got, want := mfbench.MustSummary(t, out.Trials, true), mfbench.MustSummary(t, whole.Trials, true); !slices.Equal(got, want) {
			t.Errorf("resumed after %d events: %d trials, uninterrupted %d; they differ", at, len(got), len(want))
		}
	}
}

// ctl is the Control ASHA needs here: the objective and a random source.
type ctl struct {
	hone.Control
	r *rand.Rand
}

func (c ctl) Rand() *rand.Rand            { return c.r }
func (ctl) Constraints() hone.Constraints { return nil }

func (ctl) Objectives() hone.Objectives {
	return hone.Objectives{{Metric: "loss", Mode: hone.Min}}
}
func (ctl) Logf(string, ...any) {}

// TestModelPerRung: fed by ASHA's rung results as they arrive, the model
// in use is the one of the highest rung whose observations fit one (dim+1
// points at least, and more than dim rows in the good and the bad sets:
// here 6 with two dimensions); lower rungs' observations are dropped once
// a higher rung has a model.
func TestModelPerRung(t *testing.T) {
	sp := space.Space{"x": space.Uniform(0, 1), "y": space.Uniform(0, 1)}
	o := bohb.AsyncOptions()
	o.Metric, o.Mode, o.NumSamples, o.Seed = "loss", hone.Min, -1, 3
	sr, err := bohb.New(sp, o)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := asha.New(asha.Config{MaxT: 9, GracePeriod: 1, ReductionFactor: 3, Brackets: 1, StopLastTrials: false, BudgetInfo: true})
	if err != nil {
		t.Fatal(err)
	}
	c := ctl{r: rand.New(rand.NewPCG(1, 1))}
	// Every trial reports at 1, 3 and 9 (stop_last_trials off, and ASHA's
	// decisions are not carried out here: only its marks matter).
	report := func(id string, cfg hone.Config, it int) {
		x, y := cfg["x"].(float64), cfg["y"].(float64)
		r := &hone.Result{TrialID: id, TrainingIteration: it, Metrics: map[string]any{"loss": x + y/float64(it)}}
		sc.OnResult(c, &hone.Trial{ID: id}, r)
		sr.OnResult(id, r)
	}
	var cfgs []hone.Config
	var ids []string
	for i := range 6 {
		id := fmt.Sprintf("t%d", i)
		cfg, err := sr.Suggest(id)
		if err != nil {
			t.Fatal(err)
		}
		sc.OnTrialAdd(c, &hone.Trial{ID: id})
		ids, cfgs = append(ids, id), append(cfgs, cfg)
	}
	step := func(it int, wantBudget float64, wantModel bool) {
		t.Helper()
		for i, id := range ids {
			report(id, cfgs[i], it)
		}
		b, ok := sr.ModelBudget()
		if ok != wantModel || ok && b != wantBudget {
			t.Fatalf("after every trial reported at %d: model at %v (%v), want %v (%v)", it, b, ok, wantBudget, wantModel)
		}
	}
	step(1, 1, true) // six observations at rung 1: a model there
	if n := sr.Observations(1); n != 6 {
		t.Fatalf("%d observations at rung 1, want 6", n)
	}
	step(2, 1, true) // between rungs: nothing new
	step(3, 3, true) // rung 3 fits a model: rung 1's data goes
	if sr.Observations(1) != 0 || sr.Observations(3) != 6 {
		t.Fatalf("observations: rung 1 %d, rung 3 %d; want 0 and 6", sr.Observations(1), sr.Observations(3))
	}
	step(9, 9, true)
}

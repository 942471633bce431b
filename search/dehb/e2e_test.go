package dehb_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/mfbench"
	"github.com/hone-tune/hone/internal/scratch"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/dehb"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/stopper"
	"github.com/hone-tune/hone/store/local"
	"pgregory.net/rapid"
)

func dehbExperiment(t testing.TB, seed uint64, samples int) *hone.Experiment {
	t.Helper()
	sr, err := dehb.New(mfbench.Space(), dehb.Options{Metric: mfbench.Metric, Mode: hone.Min, NumSamples: samples, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := dehb.NewScheduler(dehb.Config{MaxT: mfbench.Steps, GracePeriod: 1, ReductionFactor: 3}, sr)
	if err != nil {
		t.Fatal(err)
	}
	return &hone.Experiment{Name: "dehb", Metric: mfbench.Metric, Mode: hone.Min, Seed: seed, Searcher: sr, Scheduler: sc}
}

func randomExperiment(t testing.TB, seed uint64) *hone.Experiment {
	t.Helper()
	sr, err := random.New(mfbench.Space(), -1, nil, seed)
	if err != nil {
		t.Fatal(err)
	}
	return &hone.Experiment{Name: "random", Metric: mfbench.Metric, Mode: hone.Min, Seed: seed, Searcher: sr,
		Stoppers: []hone.Stopper{stopper.MaxIterations(mfbench.Steps)}}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestBeatsRandom: on the mixed multi-fidelity problem of mfbench, at an
// equal budget of 40 full evaluations' worth of steps, DEHB's median
// regret over eleven seeds is below 60% of random search's (each trial to
// full fidelity), one trial at a time and four at once.
func TestBeatsRandom(t *testing.T) {
	const budget = 40 * mfbench.Steps
	for _, w := range []int{1, 4} {
		var rd, de []float64
		for seed := uint64(1); seed <= 11; seed++ {
			o, err := mfbench.Run(context.Background(), randomExperiment(t, seed), budget, w)
			if err != nil {
				t.Fatal(err)
			}
			rd = append(rd, o.Regret)
			o, err = mfbench.Run(context.Background(), dehbExperiment(t, seed, -1), budget, w)
			if err != nil {
				t.Fatal(err)
			}
			de = append(de, o.Regret)
		}
		t.Logf("%d at once: median regret: random %.4f, dehb %.4f", w, median(rd), median(de))
		if !(median(de) < 0.6*median(rd)) {
			t.Errorf("%d at once: dehb's median regret %v is not below 60%% of random's %v", w, median(de), median(rd))
		}
	}
}

// constModel reports loss = the configuration's x at every step, one
// second each, with a checkpoint every step.
func constModel() sim.Model {
	return sim.Curve{CheckpointEvery: 1, Params: func(cfg hone.Config) (sim.CurveParams, error) {
		x, _ := hone.Number(cfg["x"])
		return sim.CurveParams{Initial: x, Asymptote: x, StepTime: time.Second}, nil
	}}.New
}

func simOptions(t testing.TB, e hone.Executor, workers int) runner.Options {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "exp")
	st, err := local.New(dir, local.NoSync())
	if err != nil {
		t.Fatal(err)
	}
	return runner.Options{Dir: dir, Store: st, Log: io.Discard, Executor: e, Pool: hone.Resources{CPU: float64(workers)}}
}

// fataler is what oneD needs of a *testing.T or a *rapid.T.
type fataler interface{ Fatal(args ...any) }

func oneD(t fataler, seed uint64, samples int, cfg dehb.Config) *hone.Experiment {
	return oneDCapped(t, seed, samples, 0, cfg)
}

// oneDCapped is oneD with the searcher's max_concurrent.
func oneDCapped(t fataler, seed uint64, samples, maxConcurrent int, cfg dehb.Config) *hone.Experiment {
	sr, err := dehb.New(space.Space{"x": space.Uniform(0, 1)}, dehb.Options{Metric: "loss", Mode: hone.Min, NumSamples: samples, Seed: seed, MaxConcurrent: maxConcurrent})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := dehb.NewScheduler(cfg, sr)
	if err != nil {
		t.Fatal(err)
	}
	return &hone.Experiment{Name: "dehb", Metric: "loss", Mode: hone.Min, Seed: seed, Searcher: sr, Scheduler: sc, MaxConcurrentTrials: 1}
}

// TestFirstBracketIsSuccessiveHalving: one trial at a time, budgets 1, 3
// and 9, nine samples: the first bracket evaluates its nine initial
// members at budget 1, resumes the best three to 3 and the best of those
// to 9, and every other trial stops where it was left.
func TestFirstBracketIsSuccessiveHalving(t *testing.T) {
	out, err := runner.Run(context.Background(), oneD(t, 3, 9, dehb.Config{MaxT: 9, GracePeriod: 1, ReductionFactor: 3}),
		simOptions(t, sim.New(constModel()), 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Trials) != 9 {
		t.Fatalf("%d trials, want 9", len(out.Trials))
	}
	byLoss := slices.Clone(out.Trials)
	slices.SortFunc(byLoss, func(a, b *hone.Trial) int {
		x, _ := hone.Number(a.Config["x"])
		y, _ := hone.Number(b.Config["x"])
		return cmp.Compare(x, y)
	})
	for i, tr := range byLoss {
		want := 1
		switch {
		case i == 0:
			want = 9
		case i < 3:
			want = 3
		}
		if tr.Status != hone.StatusTerminated || tr.LastResult == nil || tr.LastResult.TrainingIteration != want {
			t.Errorf("rank %d (x=%v): %s at iteration %v, want TERMINATED at %d", i, tr.Config["x"], tr.Status, tr.LastResult.TrainingIteration, want)
		}
	}
}

// TestEveryTrialEnds is the no-deadlock property on the sim executor: for
// random budgets, η, samples, concurrency (of the experiment and the
// searcher's max_concurrent) and injected failures, every trial ends
// TERMINATED or ERROR, the searcher creates every sample, no trial trains
// past max_t, and no more than max_concurrent of them ever have a job in
// flight.
func TestEveryTrialEnds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		eta := rapid.IntRange(2, 4).Draw(t, "eta")
		grace := rapid.IntRange(1, 2).Draw(t, "grace")
		maxT := rapid.IntRange(grace*eta, 60).Draw(t, "max_t")
		cfg := dehb.Config{MaxT: float64(maxT), GracePeriod: float64(grace), ReductionFactor: float64(eta)}
		samples := rapid.IntRange(1, 80).Draw(t, "samples")
		conc := rapid.IntRange(1, 20).Draw(t, "concurrency")
		capped := rapid.IntRange(0, 4).Draw(t, "max_concurrent")
		exp := oneDCapped(t, rapid.Uint64().Draw(t, "seed"), samples, capped, cfg)
		exp.MaxConcurrentTrials = conc
		if capped > 0 {
			exp.Callbacks = []hone.Callback{&liveCap{sr: exp.Searcher.(*dehb.Searcher), max: capped, t: t}}
		}
		exp.Failure = hone.FailureConfig{MaxFailures: rapid.IntRange(0, 1).Draw(t, "max_failures")}
		fm := &sim.FailingModel{Model: sim.Curve{Noise: 0.1, CheckpointEvery: 2}.New,
			Iteration: rapid.IntRange(1, maxT+1).Draw(t, "fail_at"), Times: rapid.IntRange(0, 2).Draw(t, "fail_times")}
		dir, err := os.MkdirTemp(scratch.Dir(), "hone-dehb-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		st, _ := local.New(dir, local.NoSync())
		out, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Store: st, Log: io.Discard,
			Executor: sim.New(fm.New), Pool: hone.Resources{CPU: float64(conc)}})
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		if len(out.Trials) != samples {
			t.Fatalf("%d trials, want %d", len(out.Trials), samples)
		}
		for _, tr := range out.Trials {
			if !tr.Status.Finished() {
				t.Fatalf("trial %s ended %s", tr.ID, tr.Status)
			}
			if tr.LastResult != nil && tr.LastResult.TrainingIteration > maxT {
				t.Fatalf("trial %s ran to %d > max_t %d", tr.ID, tr.LastResult.TrainingIteration, maxT)
			}
		}
	})
}

// liveCap checks, at every trial start, that the searcher's live trials
// are within its cap.
type liveCap struct {
	hone.NopCallback
	sr  *dehb.Searcher
	max int
	t   fataler
}

func (l *liveCap) OnTrialStart(*hone.Trial) {
	if n := l.sr.Live(); n > l.max {
		l.t.Fatal(fmt.Sprintf("%d live trials, max_concurrent %d", n, l.max))
	}
}

// TestConcurrency16: sixteen trials at once on the mixed problem complete,
// every trial ends, and the searcher never suggests a configuration twice
// (a promotion continues its trial instead).
func TestConcurrency16(t *testing.T) {
	exp := dehbExperiment(t, 5, 400)
	o, err := mfbench.Run(context.Background(), exp, 1<<30, 16)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range o.CheckEnded(400) {
		t.Error(err)
	}
}

// TestDeterministic: the same seed gives the same trials, bit for bit, at
// concurrency 1 and 8; another seed gives others.
func TestDeterministic(t *testing.T) {
	mfbench.CheckDeterministic(t, func(seed uint64) *hone.Experiment { return dehbExperiment(t, seed, 120) }, 1<<30, 1, 8)
}

// TestResumeDecidesAsUninterrupted: an experiment killed midway (one
// trial at a time, a checkpoint every step) and resumed from its journal
// creates the same trials with the same configurations, and they end as
// they do in an uninterrupted run, with the same trial ids.
func TestResumeDecidesAsUninterrupted(t *testing.T) {
	cfg := dehb.Config{MaxT: 27, GracePeriod: 1, ReductionFactor: 3}
	model := func() hone.Executor {
		return sim.New(sim.Curve{CheckpointEvery: 1, Params: func(c hone.Config) (sim.CurveParams, error) {
			x, _ := hone.Number(c["x"])
			return sim.CurveParams{Initial: 1 + x, Asymptote: math.Abs(x - 0.3), Rate: 0.2, StepTime: time.Second}, nil
		}}.New)
	}
	count := &mfbench.CrashAfter{Executor: model(), N: math.MaxInt}
	whole, err := runner.Run(context.Background(), oneD(t, 11, 90, cfg), simOptions(t, count, 1))
	if err != nil {
		t.Fatal(err)
	}
	events := math.MaxInt - count.N
	for _, at := range []int{events / 5, events / 2, events * 4 / 5} {
		opts := simOptions(t, &mfbench.CrashAfter{Executor: model(), N: at}, 1)
		if _, err := runner.Run(context.Background(), oneD(t, 11, 90, cfg), opts); !errors.Is(err, mfbench.ErrCrash) {
			t.Fatalf("crash at %d: %v", at, err)
		}
		opts.Executor = model()
		out, err := runner.Resume(context.Background(), oneD(t, 11, 90, cfg), opts, hone.ResumeFlags{Unfinished: true})
		if err != nil {
			t.Fatalf("resume after %d events: %v", at, err)
		}
		if got, want := mfbench.MustSummary(t, out.Trials, true), mfbench.MustSummary(t, whole.Trials, true); !slices.Equal(got, want) {
			t.Errorf("resumed after %d events: %d trials, uninterrupted %d; they differ:\n%s", at, len(got), len(want), firstDiff(got, want))
		}
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("at %d:\n  %s\n  %s", i, a[i], b[i])
		}
	}
	return "one is a prefix of the other"
}

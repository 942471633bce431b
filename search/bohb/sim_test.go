package bohb_test

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
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/hyperband"
	"github.com/hone-tune/hone/search/bohb"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
)

// misleading is f_s(x) = (1−s)·g(x) + s·h(x) on [0, 1]^3 with g = 1 − h:
// every budget below half of max_t ranks configurations in the opposite
// order to the highest, h, a bowl at 0.8 (as in search/tpe's test).
func misleading(x []float64, s float64) float64 {
	h := 0.0
	for _, v := range x {
		h += (v - 0.8) * (v - 0.8)
	}
	h /= 1.92
	return (1-s)*(1-h) + s*h
}

const steps = 27

type trainable struct {
	x []float64
	u int
}

func (t *trainable) Step() (sim.Step, error) {
	t.u++
	return sim.Step{Metrics: map[string]any{"loss": misleading(t.x, float64(t.u)/steps)}, Duration: time.Second}, nil
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

// budget stops the experiment after n results and keeps the best value of
// h among the full-fidelity results within them.
type budget struct {
	hone.NopCallback
	n, seen int
	best    float64
	x       map[string][]float64
}

func (b *budget) OnTrialResult(tr *hone.Trial, r *hone.Result) {
	b.seen++
	if u, _ := r.Value(hone.FieldTrainingIteration); int(u) >= steps && b.seen <= b.n {
		b.best = math.Min(b.best, misleading(b.x[tr.ID], 1))
	}
}
func (b *budget) ShouldStop(string, *hone.Result) bool { return false }
func (b *budget) ShouldStopAll() bool                  { return b.seen >= b.n }

// run runs BOHB (HyperBand for BOHB, max_t 27, η 3, advised by the
// searcher) with or without the fidelity check and returns the final
// regret.
func run(t *testing.T, check bool, seed uint64, workers int) float64 {
	t.Helper()
	sp := space.Space{"x0": space.Uniform(0, 1), "x1": space.Uniform(0, 1), "x2": space.Uniform(0, 1)}
	sr, err := bohb.New(sp, bohb.Options{Metric: "loss", Mode: hone.Min, NumSamples: -1, Seed: seed, FidelityCheck: check})
	if err != nil {
		t.Fatal(err)
	}
	cfg := hyperband.DefaultConfig()
	cfg.MaxT, cfg.ReductionFactor = steps, 3
	sc, err := hyperband.NewForBOHB(cfg, sr)
	if err != nil {
		t.Fatal(err)
	}
	sc.SetAdvisor(sr)
	b := &budget{n: steps * 60, best: math.Inf(1), x: map[string][]float64{}}
	exp := &hone.Experiment{Name: "e", Metric: "loss", Mode: hone.Min, Searcher: sr, Scheduler: sc, Seed: seed,
		MaxConcurrentTrials: workers, Stoppers: []hone.Stopper{b}, Callbacks: []hone.Callback{b},
		Checkpoint: hone.CheckpointConfig{NumToKeep: 1}}
	model := func(cfg hone.Config, id string) (sim.Trainable, error) {
		x := make([]float64, 3)
		for i := range x {
			x[i], _ = hone.Number(cfg[fmt.Sprint("x", i)])
		}
		b.x[id] = x
		return &trainable{x: x}, nil
	}
	dir := filepath.Join(t.TempDir(), "e")
	st, err := local.New(dir, local.NoSync())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Store: st, Log: io.Discard,
		Executor: sim.New(model), Pool: hone.Resources{CPU: float64(workers)}}); err != nil {
		t.Fatal(err)
	}
	return b.best
}

// TestSimMisleadingFidelities: on a problem whose low budgets rank
// configurations in reverse, BOHB with the fidelity check (its model on
// trusted budgets, HyperBand skipping brackets that start below the floor)
// reaches a lower median final regret than BOHB without it.
func TestSimMisleadingFidelities(t *testing.T) {
	if testing.Short() {
		t.Skip("runs dozens of experiments")
	}
	for _, workers := range []int{1, 4} {
		var with, without []float64
		for seed := range uint64(9) {
			with = append(with, run(t, true, seed+1, workers))
			without = append(without, run(t, false, seed+1, workers))
		}
		mw, mo := median(with), median(without)
		t.Logf("%d at once: median regret with the check %.4g %v, without %.4g %v", workers, mw, with, mo, without)
		if !(mw < mo/2) {
			t.Errorf("%d at once: median regret with the check %.4g, without %.4g: want less than half", workers, mw, mo)
		}
	}
}

func median(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	if n := len(xs); n%2 == 1 {
		return xs[n/2]
	} else {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
}

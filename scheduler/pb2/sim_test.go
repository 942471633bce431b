package pb2_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/fifo"
	"github.com/hone-tune/hone/scheduler/pb2"
	"github.com/hone-tune/hone/scheduler/pbt"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
)

// boundsExecutor records every configuration a trial is started with, and
// bounds the number of events of a run.
type boundsExecutor struct {
	hone.Executor
	mu      sync.Mutex
	configs []hone.Config
	events  int
}

var errEnough = errors.New("enough events")

func (b *boundsExecutor) Start(spec hone.StartSpec) error {
	b.mu.Lock()
	b.configs = append(b.configs, spec.Config.Clone())
	b.mu.Unlock()
	return b.Executor.Start(spec)
}

func (b *boundsExecutor) Next(ctx context.Context) (hone.Event, error) {
	if b.events++; b.events > 20000 {
		return hone.Event{}, errEnough
	}
	return b.Executor.Next(ctx)
}

func (b *boundsExecutor) Clock() hone.Clock { return b.Executor.(hone.Clocked).Clock() }

// lrCurve: the loss falls from 1 towards (lr − 0.8)², so lr = 0.8 is best
// at every iteration past the first.
func lrCurve(cfg hone.Config) (sim.CurveParams, error) {
	lr, ok := hone.Number(cfg["lr"])
	if !ok {
		return sim.CurveParams{}, fmt.Errorf("lr = %v: not a number", cfg["lr"])
	}
	return sim.CurveParams{Initial: 1, Asymptote: (lr - 0.8) * (lr - 0.8), Rate: 0.15, StepTime: time.Second}, nil
}

// runPopulation runs 8 trials whose lr starts uniform in [0, 0.3], for at
// most 40 iterations each, under sched, and returns the final losses and
// every started configuration.
func runPopulation(t *testing.T, sched hone.Scheduler) (losses []float64, configs []hone.Config, out *runner.Outcome) {
	t.Helper()
	const seed = 11
	sr, err := random.New(space.Space{"lr": space.Uniform(0, 0.3)}, 8, nil, seed)
	if err != nil {
		t.Fatal(err)
	}
	exp := &hone.Experiment{Name: "pb2", Metric: "loss", Mode: hone.Min, Searcher: sr, Scheduler: sched, Seed: seed,
		MaxConcurrentTrials: 4, Checkpoint: hone.CheckpointConfig{NumToKeep: 2}}
	model := sim.Curve{Params: lrCurve, Noise: 0.002, MaxIterations: 40, Seed: seed}.New
	ex := &boundsExecutor{Executor: sim.New(model)}
	dir := t.TempDir()
	st, err := local.New(dir, local.NoSync())
	if err != nil {
		t.Fatal(err)
	}
	out, err = runner.Run(context.Background(), exp, runner.Options{Dir: dir, Store: st, Log: io.Discard, Executor: ex})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusTerminated {
			t.Fatalf("trial %s ended %s (%s)", tr.ID, tr.Status, tr.Error)
		}
		v, ok := tr.LastResult.Value("loss")
		if !ok {
			t.Fatalf("trial %s: no loss", tr.ID)
		}
		losses = append(losses, v)
	}
	sort.Float64s(losses)
	return losses, ex.configs, out
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// TestSimPopulationImproves runs PB2 on the sim executor: every
// configuration a trial starts with has lr within the bounds, PB2 explores
// beyond the initial range, and the population ends better than the same
// population left alone (FIFO), deterministically.
func TestSimPopulationImproves(t *testing.T) {
	newPB2 := func() *pbt.Scheduler {
		cfg := pb2.DefaultConfig()
		cfg.PBT.TimeAttr = hone.FieldTrainingIteration
		cfg.PBT.PerturbationInterval = 4
		cfg.Bounds = map[string][2]float64{"lr": {0, 1}}
		s, err := pb2.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sched := newPB2()
	losses, configs, out := runPopulation(t, sched)
	base, _, _ := runPopulation(t, fifo.New())

	explored := false
	for _, cfg := range configs {
		lr, ok := hone.Number(cfg["lr"])
		if !ok || lr < 0 || lr > 1 {
			t.Fatalf("a trial started with lr = %v, outside [0, 1]", cfg["lr"])
		}
		if lr > 0.3 {
			explored = true
		}
	}
	if !explored || sched.Stats().Perturbations == 0 {
		t.Fatalf("no exploration: %d perturbations", sched.Stats().Perturbations)
	}
	t.Logf("PB2 final losses %.4f (mean %.4f), %d exploits; FIFO %.4f (mean %.4f)",
		losses, mean(losses), sched.Stats().Perturbations, base, mean(base))
	if !(losses[0] < base[0]-0.05) || !(mean(losses) < mean(base)-0.05) {
		t.Fatalf("PB2 did not improve the population: best %.4f mean %.4f, FIFO best %.4f mean %.4f",
			losses[0], mean(losses), base[0], mean(base))
	}
	// The best final configurations moved towards lr = 0.8.
	best := math.Inf(1)
	for _, tr := range out.Trials {
		lr, _ := hone.Number(tr.Config["lr"])
		best = math.Min(best, math.Abs(lr-0.8))
	}
	if best > 0.2 {
		t.Fatalf("no final lr within 0.2 of the optimum 0.8")
	}
	// Same seed, same run.
	again, _, _ := runPopulation(t, newPB2())
	for i := range losses {
		if losses[i] != again[i] {
			t.Fatalf("not deterministic: %v then %v", losses, again)
		}
	}
}

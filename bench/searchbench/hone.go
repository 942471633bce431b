package searchbench

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/bench/functions"
	"github.com/hone-tune/hone/bench/internal/benchutil"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/fifo"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
)

// The metrics a benchmark trainable reports.
const (
	metricLoss   = "loss"
	metricBudget = "budget"
	metricCost   = "cost"
)

// costUnit is the virtual time of one unit of cost (one full-fidelity
// evaluation).
const costUnit = time.Hour

// eta is the reduction factor of every multi-fidelity method.
const eta = 3

// spaceOf returns the hone search space of p: a uniform float per float
// dimension, an integer uniform in [Lo, Hi] per integer one, and a choice
// of the category indices per categorical one.
func spaceOf(p *functions.Problem) space.Space {
	sp := space.Space{}
	for _, d := range p.Dims {
		switch {
		case d.Categorical():
			vals := make([]any, d.Cats)
			for i := range vals {
				vals[i] = i
			}
			sp[d.Name] = space.Choice(vals...)
		case d.Int:
			sp[d.Name] = space.QRandInt(int(d.Lo), int(d.Hi), 1)
		default:
			sp[d.Name] = space.Uniform(d.Lo, d.Hi)
		}
	}
	return sp
}

// configX reads p's configuration vector from a hone configuration.
func configX(p *functions.Problem, cfg hone.Config) ([]float64, error) {
	x := make([]float64, len(p.Dims))
	for i, d := range p.Dims {
		v, ok := hone.Number(cfg[d.Name])
		if !ok {
			return nil, fmt.Errorf("config %s = %v: not a number", d.Name, cfg[d.Name])
		}
		x[i] = v
	}
	if err := p.Check(x); err != nil {
		return nil, err
	}
	return x, nil
}

// trainable is the sim trainable of one trial: it evaluates the trial's
// configuration one budget step at a time.
type trainable struct {
	p   *functions.Problem
	run *functions.Run
	// done marks the result at full fidelity as the trial's last. Only
	// FIFO methods set it: a done result goes to no scheduler, so
	// HyperBand and ASHA stop their trials at max_t themselves, and the
	// BOHB searcher sees the full-fidelity result of HyperBandForBOHB.
	done bool
}

func (t *trainable) Step() (sim.Step, error) {
	v := t.run.Step()
	u := t.run.At()
	c := t.p.StepCost(u)
	return sim.Step{
		Metrics:  map[string]any{metricLoss: v, metricBudget: u, metricCost: c},
		Duration: time.Duration(c * float64(costUnit)),
		Done:     t.done && u >= t.p.Steps,
	}, nil
}

func (t *trainable) Save() ([]byte, error) {
	return binary.AppendUvarint(nil, uint64(t.run.At())), nil
}

func (t *trainable) Load(state []byte) error {
	u, n := binary.Uvarint(state)
	if n <= 0 || n != len(state) || u > uint64(t.p.Steps) {
		return fmt.Errorf("bad trainable state of %d bytes", len(state))
	}
	t.run = t.run.Restart(int(u))
	return nil
}

// honeRecorder feeds every result to a recorder (a hone.Callback) and stops
// the experiment once the budget is used up (a hone.Stopper).
type honeRecorder struct {
	hone.NopCallback
	rec *recorder
	err error
}

func (h *honeRecorder) OnTrialResult(t *hone.Trial, r *hone.Result) {
	u, ok1 := r.Value(metricBudget)
	v, ok2 := r.Value(metricLoss)
	if !ok1 || !ok2 {
		if h.err == nil {
			h.err = fmt.Errorf("trial %s: a result without %s or %s", t.ID, metricBudget, metricLoss)
		}
		return
	}
	h.rec.add(int(u), v, func() []float64 {
		x, err := configX(h.rec.p, t.Config)
		if err != nil && h.err == nil {
			h.err = err
		}
		return x
	})
}

func (h *honeRecorder) ShouldStop(string, *hone.Result) bool { return false }

func (h *honeRecorder) ShouldStopAll() bool { return h.rec.done() }

// honeExperiment builds the experiment of hone method m. Its searcher and
// scheduler are wrapped so that the CPU time of every call into them adds
// to meter; a method without a scheduler gets FIFO, timed too.
func honeExperiment(m *HoneMethod, p *functions.Problem, seed uint64, concurrency int, meter *benchutil.CPUMeter) (*hone.Experiment, bool, error) {
	sr, sc, err := m.Build(Env{Space: spaceOf(p), Seed: seed, Concurrency: concurrency,
		Metric: metricLoss, TimeAttr: metricBudget, MaxT: float64(p.Steps), Eta: eta})
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", m.Name, err)
	}
	fifoOnly := sc == nil
	if fifoOnly {
		sc = fifo.New()
	}
	// MaxPendingTrials stays 0: each searcher's own limit (for random
	// search max(16, ⌈1.1 × concurrency⌉), so HyperBand's brackets fill as
	// trials are added; 1 for BOHB and for TPE behind its concurrency
	// limit).
	exp := &hone.Experiment{
		Name: m.Name, Metric: metricLoss, Mode: hone.Min, Seed: seed,
		MaxConcurrentTrials: concurrency,
		Checkpoint:          hone.CheckpointConfig{NumToKeep: 1},
		Searcher:            benchutil.TimeSearcher(sr, meter),
		Scheduler:           benchutil.TimeScheduler(sc, meter),
	}
	return exp, fifoOnly, nil
}

// runHone runs hone method m on p with the given seed, budget and
// concurrency, in a temporary experiment directory under tmp that it
// removes afterwards.
func runHone(ctx context.Context, m *HoneMethod, p *functions.Problem, seed uint64, budget float64, concurrency int, tmp string) (*Trace, error) {
	meter := &benchutil.CPUMeter{}
	exp, fifoOnly, err := honeExperiment(m, p, seed, concurrency, meter)
	if err != nil {
		return nil, err
	}
	method := m.Name
	h := &honeRecorder{rec: newRecorder(p, method, seed, budget)}
	exp.Stoppers = []hone.Stopper{h}
	exp.Callbacks = []hone.Callback{h}

	dir, err := os.MkdirTemp(tmp, fmt.Sprintf("%s-%s-%d-", p.Name, method, seed))
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	dir = filepath.Join(dir, "exp")
	st, err := local.New(dir, local.NoSync())
	if err != nil {
		return nil, err
	}
	model := func(cfg hone.Config, trialID string) (sim.Trainable, error) {
		x, err := configX(p, cfg)
		if err != nil {
			return nil, err
		}
		return &trainable{p: p, run: p.NewRun(x, functions.Key(seed, trialID)), done: fifoOnly}, nil
	}
	start := time.Now()
	out, err := runner.Run(ctx, exp, runner.Options{
		Dir: dir, Store: st, Log: io.Discard, Executor: sim.New(model),
		Pool: hone.Resources{CPU: float64(concurrency)},
	})
	if err != nil {
		return nil, fmt.Errorf("%s on %s, seed %d: %w", method, p.Name, seed, err)
	}
	if h.err != nil {
		return nil, fmt.Errorf("%s on %s, seed %d: %w", method, p.Name, seed, h.err)
	}
	if out.Interrupted {
		return nil, fmt.Errorf("%s on %s, seed %d: interrupted", method, p.Name, seed)
	}
	for _, t := range out.Trials {
		if t.Status == hone.StatusError {
			return nil, fmt.Errorf("%s on %s, seed %d: trial %s failed: %s", method, p.Name, seed, t.ID, t.Error)
		}
	}
	tr := h.rec.tr
	for _, t := range out.Trials {
		if t.LastResult != nil {
			tr.Trials++
		}
	}
	tr.Concurrency = concurrency
	tr.CPU = meter.Total()
	tr.Wall = time.Since(start)
	return tr, nil
}

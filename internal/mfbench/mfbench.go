// Package mfbench is a small multi-fidelity problem for the search-quality
// tests of hone's searchers and schedulers on the sim executor: a mixed
// space (two uniform floats, a log-uniform float, a three-way choice), a
// multi-fidelity Hartmann-3 whose low fidelities are biased, and a runner
// that stops an experiment once it has trained a budget of steps and
// reports the regret of its incumbent. bench/searchbench is the full
// benchmark; this one runs in a test's time.
package mfbench

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/scratch"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
)

// Steps is the full fidelity: step u of a trial reports the function at
// fidelity z = u/Steps; with η = 3 the budgets are 1, 3, 9 and 27.
const Steps = 27

// Metric is the reported value (minimised); the time attribute is
// training_iteration (one step per iteration).
const Metric = "loss"

// Space is the problem's search space: x and y in [0, 1], lr log-uniform
// in [1e-4, 1] (the third Hartmann coordinate is its position on the log
// scale), and act, whose choice adds a penalty.
func Space() space.Space {
	return space.Space{
		"x":   space.Uniform(0, 1),
		"y":   space.Uniform(0, 1),
		"lr":  space.LogUniform(1e-4, 1),
		"act": space.Choice("relu", "tanh", "gelu"),
	}
}

// penalty is what each choice of act adds.
var penalty = map[string]float64{"relu": 0.3, "tanh": 0.6, "gelu": 0}

// Hartmann-3's constants (Dixon and Szegő 1978).
var (
	alpha = [4]float64{1, 1.2, 3, 3.2}
	hA    = [4][3]float64{{3, 10, 30}, {0.1, 10, 35}, {3, 10, 30}, {0.1, 10, 35}}
	hP    = [4][3]float64{{0.3689, 0.1170, 0.2673}, {0.4699, 0.4387, 0.7470}, {0.1091, 0.8732, 0.5547}, {0.03815, 0.5743, 0.8828}}
)

// Optimum is the minimum of the full-fidelity function: Hartmann-3's,
// with act gelu.
const Optimum = -3.86278214782076

// bias shifts α at low fidelity, as the multi-fidelity Hartmann functions
// of the BOHB and FABOLAS papers do: α(z) = α − (1 − z)·bias, which moves
// the weight between the function's basins.
var bias = [4]float64{0.6, -0.6, 0.6, -0.6}

// Value returns the noise-free value of cfg at fidelity z in (0, 1].
func Value(cfg hone.Config, z float64) (float64, error) {
	x, ok1 := hone.Number(cfg["x"])
	y, ok2 := hone.Number(cfg["y"])
	lr, ok3 := hone.Number(cfg["lr"])
	act, ok4 := cfg["act"].(string)
	pen, ok5 := penalty[act]
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !(lr > 0) {
		return 0, fmt.Errorf("mfbench: bad configuration %v", cfg)
	}
	p := [3]float64{x, y, (math.Log10(lr) + 4) / 4}
	var sum float64
	for i := range alpha {
		var e float64
		for j := range p {
			d := p[j] - hP[i][j]
			e += hA[i][j] * d * d
		}
		sum += (alpha[i] - (1-z)*bias[i]) * math.Exp(-e)
	}
	return -sum + pen, nil
}

// noise is the standard deviation of the observation noise at fidelity z:
// 0.1·(1 − z), none at full fidelity.
func noise(z float64) float64 { return 0.1 * (1 - z) }

// model is the sim model of the problem: one step per iteration, one
// second of virtual time each, state the step count.
type model struct {
	cfg  hone.Config
	id   string
	seed uint64
	u    int
}

// Model returns the problem's sim model; seed varies the noise.
func Model(seed uint64) sim.Model {
	return func(cfg hone.Config, id string) (sim.Trainable, error) {
		if _, err := Value(cfg, 1); err != nil {
			return nil, err
		}
		return &model{cfg: cfg, id: id, seed: seed}, nil
	}
}

func (m *model) Step() (sim.Step, error) {
	m.u++
	z := math.Min(float64(m.u), Steps) / Steps
	v, err := Value(m.cfg, z)
	if err != nil {
		return sim.Step{}, err
	}
	v += noise(z) * gauss(m.seed, m.id, m.u)
	return sim.Step{Metrics: map[string]any{Metric: v}, Duration: time.Second}, nil
}

func (m *model) Save() ([]byte, error) { return binary.AppendUvarint(nil, uint64(m.u)), nil }

func (m *model) Load(b []byte) error {
	u, n := binary.Uvarint(b)
	if n <= 0 || n != len(b) {
		return fmt.Errorf("mfbench: bad state of %d bytes", len(b))
	}
	m.u = int(u)
	return nil
}

// gauss is a standard normal number derived from (seed, trial id, step).
func gauss(seed uint64, id string, u int) float64 {
	h := seed ^ 0x9e3779b97f4a7c15
	for i := 0; i < len(id); i++ {
		h = (h ^ uint64(id[i])) * 0x100000001b3
	}
	h ^= uint64(u) * 0xbf58476d1ce4e5b9
	a, b := splitmix(&h), splitmix(&h)
	u1 := (float64(a>>11) + 0.5) / (1 << 53)
	u2 := float64(b>>11) / (1 << 53)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

func splitmix(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Outcome is what one run found.
type Outcome struct {
	// Regret is the full-fidelity value of the incumbent (the
	// configuration with the best reported full-fidelity result) minus
	// Optimum; +Inf if no trial reached full fidelity.
	Regret float64
	// Steps is the number of steps trained.
	Steps int
	// Trials are the experiment's trials.
	Trials []*hone.Trial
}

// recorder counts steps, keeps the incumbent, and stops the experiment
// once the budget is trained.
type recorder struct {
	hone.NopCallback
	budget int
	steps  int
	best   float64
	inc    hone.Config
}

func (r *recorder) OnTrialResult(t *hone.Trial, res *hone.Result) {
	r.steps++
	if res.TrainingIteration < Steps {
		return
	}
	if v, ok := res.Value(Metric); ok && (r.inc == nil || v < r.best) {
		r.best, r.inc = v, t.Config
	}
}

func (r *recorder) ShouldStop(string, *hone.Result) bool { return false }
func (r *recorder) ShouldStopAll() bool                  { return r.steps >= r.budget }

// Run runs exp (its metric should be Metric, mode min) on the problem
// with the sim executor until budget steps are trained or it ends, in a
// temporary directory, with at most workers trials at once. Its Seed seeds
// the noise too.
func Run(ctx context.Context, exp *hone.Experiment, budget, workers int) (*Outcome, error) {
	rec := &recorder{budget: budget}
	exp.Stoppers = append(exp.Stoppers, rec)
	exp.Callbacks = append(exp.Callbacks, rec)
	if exp.MaxConcurrentTrials == 0 {
		exp.MaxConcurrentTrials = workers
	}
	dir, err := os.MkdirTemp(scratch.Dir(), "hone-mfbench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	st, err := local.New(dir, local.NoSync())
	if err != nil {
		return nil, err
	}
	out, err := runner.Run(ctx, exp, runner.Options{Dir: dir, Store: st, Log: io.Discard,
		Executor: sim.New(Model(exp.Seed)), Pool: hone.Resources{CPU: float64(workers)}})
	if err != nil {
		return nil, err
	}
	o := &Outcome{Regret: math.Inf(1), Steps: rec.steps, Trials: out.Trials}
	if rec.inc != nil {
		v, err := Value(rec.inc, 1)
		if err != nil {
			return nil, err
		}
		o.Regret = v - Optimum
	}
	return o, nil
}

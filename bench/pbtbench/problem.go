package pbtbench

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/bench/functions"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/space"
)

// The metrics a benchmark trainable reports besides the problem's own.
const (
	// MetricTrue is the noise-free value of the problem's metric, which
	// scores a result.
	MetricTrue = "true_value"
	// MetricStep is the member's step count (its lineage's, after an
	// exploit).
	MetricStep = "step"
)

// stepTime is the virtual time of one training step.
const stepTime = time.Second

// Param is one hyperparameter of a problem: a float in [Lo, Hi], sampled
// and explored on a log scale if Log.
type Param struct {
	Name   string
	Lo, Hi float64
	Log    bool
}

// domain returns the search-space domain of p.
func (p Param) domain() space.Domain {
	if p.Log {
		return space.LogUniform(p.Lo, p.Hi)
	}
	return space.Uniform(p.Lo, p.Hi)
}

// clamp returns v limited to p's bounds.
func (p Param) clamp(v float64) float64 { return min(max(v, p.Lo), p.Hi) }

// Reference is a documented figure to set beside the results, such as the
// best value any schedule can reach.
type Reference struct {
	Name  string
	Value float64
	// Plot draws it on the plots.
	Plot bool
}

// Problem is one benchmark problem. Its values are read-only once made.
type Problem struct {
	// Name identifies the problem in reports and file names.
	Name string
	// Metric is the reported metric the schedulers optimise, in Mode.
	Metric string
	Mode   hone.Mode
	// Params are the hyperparameters.
	Params []Param
	// Steps is the number of training steps of each member (T).
	Steps int
	// Interval is the perturbation interval of PBT and PB2, in steps.
	Interval int
	// GapLabel names Gap on plots.
	GapLabel string
	// Gap maps a true metric value to a positive distance from the ideal,
	// drawn on a log axis (smaller is better).
	Gap func(v float64) float64
	// References are figures to set beside the results.
	References []Reference
	// newTrainable makes the trainable of one member.
	newTrainable func(seed uint64, cfg hone.Config, trialID string) (sim.Trainable, error)
}

// Space returns the search space of the initial population.
func (p *Problem) Space() space.Space {
	sp := space.Space{}
	for _, q := range p.Params {
		sp[q.Name] = q.domain()
	}
	return sp
}

// Model returns the sim model of the problem's members under seed.
func (p *Problem) Model(seed uint64) sim.Model {
	return func(cfg hone.Config, trialID string) (sim.Trainable, error) {
		return p.newTrainable(seed, cfg, trialID)
	}
}

// params reads p's hyperparameters from a configuration, in p.Params
// order, checking their bounds.
func (p *Problem) params(cfg hone.Config) ([]float64, error) {
	out := make([]float64, len(p.Params))
	for i, q := range p.Params {
		v, ok := hone.Number(cfg[q.Name])
		if !ok {
			return nil, fmt.Errorf("config %s = %v: not a number", q.Name, cfg[q.Name])
		}
		if !(v >= q.Lo && v <= q.Hi) {
			return nil, fmt.Errorf("config %s = %v: outside [%g, %g]", q.Name, v, q.Lo, q.Hi)
		}
		out[i] = v
	}
	return out, nil
}

// Toy constants (Jaderberg et al. 2017, Fig. 2).
const (
	// ToyEta is the step size η.
	ToyEta = 0.04
	// ToyTheta0 is both coordinates of θ at the start.
	ToyTheta0 = 0.9
	// ToyQMax is the supremum of Q.
	ToyQMax = 1.2
)

// ToyQ returns Q(θ) = 1.2 − (θ₀² + θ₁²).
func ToyQ(t0, t1 float64) float64 { return ToyQMax - (t0*t0 + t1*t1) }

// ToyBest returns the best Q any member can reach in steps steps: with
// h = (1, 1) throughout, θᵢ = 0.9·(1 − 2η)^steps.
func ToyBest(steps int) float64 {
	t := ToyTheta0 * math.Pow(1-2*ToyEta, float64(steps))
	return ToyQ(t, t)
}

// Toy returns the PBT toy problem with the given number of steps per
// member and perturbation interval (the paper's is 4).
func Toy(steps, interval int) *Problem {
	q0 := ToyQ(ToyTheta0, ToyTheta0)
	return &Problem{
		Name:   "toy",
		Metric: "Q",
		Mode:   hone.Max,
		Params: []Param{{Name: "h0", Lo: 0, Hi: 1}, {Name: "h1", Lo: 0, Hi: 1}},
		Steps:  steps, Interval: interval,
		GapLabel: "1.2 − Q of incumbent",
		Gap:      func(v float64) float64 { return ToyQMax - v },
		References: []Reference{
			{Name: "initial Q (θ = (0.9, 0.9))", Value: q0},
			{Name: fmt.Sprintf("best possible after %d steps (h = (1, 1) throughout)", steps), Value: ToyBest(steps), Plot: true},
		},
		newTrainable: func(_ uint64, cfg hone.Config, _ string) (sim.Trainable, error) { return newToy(cfg, steps) },
	}
}

// toy is a member of the toy problem.
type toy struct {
	h      [2]float64
	theta  [2]float64
	n, max int
}

func newToy(cfg hone.Config, steps int) (*toy, error) {
	h := make([]float64, 2)
	for i, k := range []string{"h0", "h1"} {
		v, ok := hone.Number(cfg[k])
		if !ok || !(v >= 0 && v <= 1) {
			return nil, fmt.Errorf("toy: config %s = %v: want a number in [0, 1]", k, cfg[k])
		}
		h[i] = v
	}
	return &toy{h: [2]float64{h[0], h[1]}, theta: [2]float64{ToyTheta0, ToyTheta0}, max: steps}, nil
}

func (t *toy) Step() (sim.Step, error) {
	for i := range t.theta {
		// ∂Q̂/∂θᵢ = −2hᵢθᵢ
		t.theta[i] += ToyEta * (-2 * t.h[i] * t.theta[i])
	}
	t.n++
	q := ToyQ(t.theta[0], t.theta[1])
	return sim.Step{
		Metrics:  map[string]any{"Q": q, MetricTrue: q, MetricStep: t.n},
		Duration: stepTime,
		Done:     t.n >= t.max,
	}, nil
}

func (t *toy) Save() ([]byte, error) {
	return appendFloats(binary.AppendUvarint(nil, uint64(t.n)), t.theta[:]), nil
}

func (t *toy) Load(state []byte) error {
	n, theta, err := decodeState(state, 2)
	if err != nil {
		return fmt.Errorf("toy: %w", err)
	}
	t.n = n
	copy(t.theta[:], theta)
	return nil
}

// NQM is the noisy quadratic model of LRSchedule.
type NQM struct {
	// Dims is the number of directions; their curvatures are log-spaced
	// from 1 down to 10^−Decades.
	Dims    int
	Decades float64
	// Sigma2 scales the gradient noise: its variance along direction i
	// is Sigma2·λᵢ.
	Sigma2 float64
	// ObsNoise is the standard deviation of the log of the multiplicative
	// observation noise of the reported loss.
	ObsNoise float64
	// LRLo and LRHi bound the learning rate (log scale).
	LRLo, LRHi float64
}

// DefaultNQM returns the model of the benchmark: 50 directions over two
// decades of curvature, σ² = 0.05, 5% observation noise, learning rate in
// [10⁻³, 1].
func DefaultNQM() NQM {
	return NQM{Dims: 50, Decades: 2, Sigma2: 0.05, ObsNoise: 0.05, LRLo: 1e-3, LRHi: 1}
}

// curvatures returns λᵢ.
func (m NQM) curvatures() []float64 {
	l := make([]float64, m.Dims)
	for i := range l {
		l[i] = math.Pow(10, -m.Decades*float64(i)/float64(max(m.Dims-1, 1)))
	}
	return l
}

// nqmState is the expected dynamics of one member.
type nqmState struct {
	lambda []float64
	sumL   float64
	m      []float64 // E[wᵢ²]
}

func (m NQM) start() *nqmState {
	s := &nqmState{lambda: m.curvatures(), m: make([]float64, m.Dims)}
	for i, l := range s.lambda {
		s.sumL += l
		s.m[i] = 1
	}
	return s
}

// step applies one SGD step with learning rate lr to the second moments.
func (s *nqmState) step(lr, sigma2 float64) {
	for i, l := range s.lambda {
		f := 1 - lr*l
		s.m[i] = f*f*s.m[i] + lr*lr*sigma2*l
	}
}

// loss returns the expected loss, normalised to 1 at the start.
func (s *nqmState) loss() float64 {
	v := 0.0
	for i, l := range s.lambda {
		v += l * s.m[i]
	}
	return v / s.sumL
}

// ExpectedLoss returns the expected loss after the steps of schedule (one
// learning rate per step).
func (m NQM) ExpectedLoss(schedule []float64) float64 {
	s := m.start()
	for _, lr := range schedule {
		s.step(lr, m.Sigma2)
	}
	return s.loss()
}

// lrGrid returns n+1 learning rates log-spaced over [LRLo, LRHi].
func (m NQM) lrGrid(n int) []float64 {
	g := make([]float64, n+1)
	for i := range g {
		g[i] = m.LRLo * math.Pow(m.LRHi/m.LRLo, float64(i)/float64(n))
	}
	return g
}

// BestConstant returns the fixed learning rate with the lowest expected
// loss after steps steps (searched on a log grid of 401 rates, then
// refined by golden-section search in log space), and that loss.
func (m NQM) BestConstant(steps int) (lr, loss float64) {
	f := func(logLR float64) float64 {
		s := m.start()
		a := math.Exp(logLR)
		for range steps {
			s.step(a, m.Sigma2)
		}
		return s.loss()
	}
	grid := m.lrGrid(400)
	best := 0
	vals := make([]float64, len(grid))
	for i, a := range grid {
		vals[i] = f(math.Log(a))
		if vals[i] < vals[best] {
			best = i
		}
	}
	lo, hi := math.Log(grid[max(best-1, 0)]), math.Log(grid[min(best+1, len(grid)-1)])
	const phi = 0.6180339887498949
	for range 60 {
		a, b := hi-phi*(hi-lo), lo+phi*(hi-lo)
		if f(a) < f(b) {
			hi = b
		} else {
			lo = a
		}
	}
	x := (lo + hi) / 2
	if v := f(x); v < vals[best] {
		return math.Exp(x), v
	}
	return grid[best], vals[best]
}

// BestSchedule returns a piecewise-constant schedule, one learning rate
// per interval steps (what PBT and PB2 can change), with the lowest
// expected loss after steps steps that coordinate descent finds (each
// piece in turn set to the best of 241 log-spaced rates, until a sweep
// improves by less than 10⁻⁹ relative, starting from the best constant
// rate), and that loss. It is an upper bound on the optimum over such
// schedules, and in practice close to it.
func (m NQM) BestSchedule(steps, interval int) (pieces []float64, loss float64) {
	n := (steps + interval - 1) / interval
	c, _ := m.BestConstant(steps)
	pieces = make([]float64, n)
	for i := range pieces {
		pieces[i] = c
	}
	eval := func() float64 {
		s := m.start()
		for t := range steps {
			s.step(pieces[t/interval], m.Sigma2)
		}
		return s.loss()
	}
	grid := m.lrGrid(240)
	loss = eval()
	for range 50 {
		before := loss
		for j := range pieces {
			bestLR := pieces[j]
			for _, a := range grid {
				pieces[j] = a
				if v := eval(); v < loss {
					loss, bestLR = v, a
				}
			}
			pieces[j] = bestLR
		}
		if before-loss <= 1e-9*before {
			break
		}
	}
	return pieces, loss
}

// LRSchedule returns the learning-rate-schedule problem on model m with
// the given number of steps per member and perturbation interval.
func LRSchedule(m NQM, steps, interval int) *Problem {
	bestLR, constLoss := m.BestConstant(steps)
	_, schedLoss := m.BestSchedule(steps, interval)
	return &Problem{
		Name:     "lr-schedule",
		Metric:   "loss",
		Mode:     hone.Min,
		Params:   []Param{{Name: "lr", Lo: m.LRLo, Hi: m.LRHi, Log: true}},
		Steps:    steps,
		Interval: interval,
		GapLabel: "true loss of incumbent",
		Gap:      func(v float64) float64 { return v },
		References: []Reference{
			{Name: fmt.Sprintf("best fixed lr (%.3g) after %d steps", bestLR, steps), Value: constLoss, Plot: true},
			{Name: fmt.Sprintf("best schedule changing lr every %d steps (coordinate descent)", interval), Value: schedLoss, Plot: true},
		},
		newTrainable: func(seed uint64, cfg hone.Config, trialID string) (sim.Trainable, error) {
			lr, ok := hone.Number(cfg["lr"])
			if !ok || !(lr >= m.LRLo && lr <= m.LRHi) {
				return nil, fmt.Errorf("nqm: config lr = %v: want a number in [%g, %g]", cfg["lr"], m.LRLo, m.LRHi)
			}
			return &nqmMember{m: m, s: m.start(), lr: lr, key: functions.Key(seed, trialID), max: steps}, nil
		},
	}
}

// nqmMember is a member of the learning-rate-schedule problem.
type nqmMember struct {
	m      NQM
	s      *nqmState
	lr     float64
	key    uint64 // observation-noise key: (seed, trial id)
	n, max int
}

func (t *nqmMember) Step() (sim.Step, error) {
	t.s.step(t.lr, t.m.Sigma2)
	t.n++
	v := t.s.loss()
	obs := v * math.Exp(t.m.ObsNoise*normal(t.key, uint64(t.n)))
	return sim.Step{
		Metrics:  map[string]any{"loss": obs, MetricTrue: v, MetricStep: t.n, "lr": t.lr},
		Duration: stepTime,
		Done:     t.n >= t.max,
	}, nil
}

func (t *nqmMember) Save() ([]byte, error) {
	return appendFloats(binary.AppendUvarint(nil, uint64(t.n)), t.s.m), nil
}

func (t *nqmMember) Load(state []byte) error {
	n, m, err := decodeState(state, t.m.Dims)
	if err != nil {
		return fmt.Errorf("nqm: %w", err)
	}
	t.n = n
	copy(t.s.m, m)
	return nil
}

// appendFloats appends vs as little-endian float64 bits.
func appendFloats(b []byte, vs []float64) []byte {
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// decodeState decodes a step count followed by n floats.
func decodeState(state []byte, n int) (int, []float64, error) {
	steps, k := binary.Uvarint(state)
	if k <= 0 || steps > math.MaxInt32 || len(state)-k != 8*n {
		return 0, nil, fmt.Errorf("bad state of %d bytes", len(state))
	}
	vs := make([]float64, n)
	for i := range vs {
		vs[i] = math.Float64frombits(binary.LittleEndian.Uint64(state[k+8*i:]))
	}
	return int(steps), vs, nil
}

// splitmix64 advances *x and returns the next output of the SplitMix64
// generator.
func splitmix64(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// normal returns a standard normal number that depends only on key and i
// (Box–Muller over two SplitMix64 outputs).
func normal(key, i uint64) float64 {
	x := key ^ (i * 0xd1b54a32d192ed03)
	u1 := (float64(splitmix64(&x)>>11) + 1) / (1 << 53) // in (0, 1]
	u2 := float64(splitmix64(&x)>>11) / (1 << 53)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

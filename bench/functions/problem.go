package functions

import (
	"fmt"
	"math"
)

// Dim is one dimension of a Problem's search space: a float in [Lo, Hi],
// or, when Binary, a choice between 0 and 1.
type Dim struct {
	Name   string
	Lo, Hi float64
	Binary bool
}

// Problem is a test function prepared for a benchmark: a box search space,
// a budget scale of whole steps 1..Steps (step u evaluates the function at
// fidelity Fidelity(u), and Steps is full fidelity), a cost model, and the
// optimum. A Problem is immutable and safe for concurrent use; its Runs
// are not.
type Problem struct {
	// Name identifies the problem in reports, e.g. "hartmann6".
	Name string
	// Dims is the search space; configurations are []float64 in this order.
	Dims []Dim
	// Steps is the largest budget, in steps; a step is one unit of the
	// problem's budget scale.
	Steps int
	// Optimum is the minimum at full fidelity.
	Optimum float64

	fidelity func(u int) float64
	cost     func(fid float64) float64
	newEval  func(x []float64, key uint64) evaluator
	trueVal  func(x []float64) float64
}

// evaluator computes a problem's value along the budget steps of one
// configuration: next advances one step and returns the value there.
type evaluator interface{ next(u int) float64 }

// Fidelity returns the native fidelity at step u (1 ≤ u ≤ Steps): z for
// Hartmann-6, s for Branin, b for counting ones.
func (p *Problem) Fidelity(u int) float64 { return p.fidelity(u) }

// Cost returns the cost of evaluating a configuration at step u from
// scratch: the function's cost model at Fidelity(u), normalised so that
// Cost(Steps) = 1; Cost(0) = 0. Continuing a run from step u−1 to u costs
// Cost(u) − Cost(u−1) (see StepCost).
func (p *Problem) Cost(u int) float64 {
	if u <= 0 {
		return 0
	}
	return p.cost(p.fidelity(u)) / p.cost(p.fidelity(p.Steps))
}

// StepCost returns Cost(u) − Cost(u−1), the cost of advancing a run from
// step u−1 to u.
func (p *Problem) StepCost(u int) float64 { return p.Cost(u) - p.Cost(u-1) }

// True returns the noise-free value of x at full fidelity, whose gap to
// Optimum is the regret of x. For counting ones it is the expected value.
func (p *Problem) True(x []float64) float64 { return p.trueVal(x) }

// Check reports a configuration of the wrong length or outside the space.
func (p *Problem) Check(x []float64) error {
	if len(x) != len(p.Dims) {
		return fmt.Errorf("%s: configuration has %d values, want %d", p.Name, len(x), len(p.Dims))
	}
	for i, d := range p.Dims {
		v := x[i]
		if d.Binary && v != 0 && v != 1 || !d.Binary && !(v >= d.Lo && v <= d.Hi) {
			return fmt.Errorf("%s: %s = %v is outside its domain", p.Name, d.Name, v)
		}
	}
	return nil
}

// Run is one configuration evaluated step by step. It is not safe for
// concurrent use.
type Run struct {
	p   *Problem
	x   []float64
	key uint64
	u   int
	ev  evaluator
}

// NewRun starts evaluating x (which must pass Check) at step 0. Every
// random number it uses derives from key and the step, so two runs of the
// same x and key report the same values.
func (p *Problem) NewRun(x []float64, key uint64) *Run {
	x = append([]float64(nil), x...)
	return &Run{p: p, x: x, key: key, ev: p.newEval(x, key)}
}

// Step advances the run by one step and returns the value at the new
// step's fidelity. Stepping past Steps keeps evaluating at full fidelity.
func (r *Run) Step() float64 {
	r.u++
	return r.ev.next(min(r.u, r.p.Steps))
}

// At returns the run's current step (0 before the first Step).
func (r *Run) At() int { return r.u }

// Restart returns a run of the same configuration and key advanced to step
// u, as the original was when it reached u: a restored checkpoint.
func (r *Run) Restart(u int) *Run {
	n := r.p.NewRun(r.x, r.key)
	for n.u < u {
		n.Step()
	}
	return n
}

// Hartmann6Steps is the budget scale of the Hartmann-6 problem: step u is
// z = 100·u/27, so HyperBand's budgets with η = 3 are z = 3.7, 11.1, 33.3
// and 100, the budgets HpBandSter derives from z ∈ [3, 100].
const Hartmann6Steps = 27

// Hartmann6Problem is Hartmann-6 on [0, 1]^6 with fidelity z = 100·u/27.
func Hartmann6Problem(h Hartmann6) *Problem {
	p := &Problem{Name: "hartmann6", Steps: Hartmann6Steps, Optimum: Hartmann6Min}
	for i := range 6 {
		p.Dims = append(p.Dims, Dim{Name: fmt.Sprintf("x%d", i), Lo: 0, Hi: 1})
	}
	p.fidelity = func(u int) float64 { return Hartmann6ZMax * float64(u) / Hartmann6Steps }
	p.cost = h.Cost
	p.newEval = func(x []float64, key uint64) evaluator {
		return evalFunc(func(u int) float64 {
			s := stream(key, uint64(u))
			return h.Value([6]float64(x), p.fidelity(u), normal(&s))
		})
	}
	p.trueVal = func(x []float64) float64 { return h.Value([6]float64(x), Hartmann6ZMax, 0) }
	return p
}

// BraninSteps is the budget scale of the Branin problem: step u is
// s = u/27.
const BraninSteps = 27

// BraninProblem is multi-fidelity Branin with fidelity s = u/27.
func BraninProblem() *Problem {
	p := &Problem{Name: "branin", Steps: BraninSteps, Optimum: BraninMin,
		Dims: []Dim{{Name: "x1", Lo: BraninX1Min, Hi: BraninX1Max}, {Name: "x2", Lo: BraninX2Min, Hi: BraninX2Max}}}
	p.fidelity = func(u int) float64 { return float64(u) / BraninSteps }
	p.cost = BraninCost
	p.newEval = func(x []float64, _ uint64) evaluator {
		return evalFunc(func(u int) float64 { return Branin(x[0], x[1], p.fidelity(u)) })
	}
	p.trueVal = func(x []float64) float64 { return Branin(x[0], x[1], 1) }
	return p
}

// CountingOnesSteps is the budget scale of the counting-ones problems:
// step u is b = 9·u draws, so HyperBand's budgets with η = 3 are the BOHB
// paper's 9, 27, 81, 243 and 729.
const CountingOnesSteps = CountingOnesBMax / CountingOnesBMin

// CountingOnesProblem is counting ones with c.Cat binary parameters
// followed by c.Cont continuous ones; step u is b = 9·u. A run continues
// its draws: the value at step u is the mean of the same first 9·(u−1)
// draws as at step u−1 plus 9 new ones.
func CountingOnesProblem(c CountingOnes) *Problem {
	p := &Problem{Name: fmt.Sprintf("countingones-%d+%d", c.Cat, c.Cont), Steps: CountingOnesSteps, Optimum: c.Min()}
	for i := range c.Cat {
		p.Dims = append(p.Dims, Dim{Name: fmt.Sprintf("c%d", i), Lo: 0, Hi: 1, Binary: true})
	}
	for i := range c.Cont {
		p.Dims = append(p.Dims, Dim{Name: fmt.Sprintf("r%d", i), Lo: 0, Hi: 1})
	}
	p.fidelity = func(u int) float64 { return float64(CountingOnesBMin * u) }
	p.cost = c.Cost
	split := func(x []float64) ([]int, []float64) {
		cat := make([]int, c.Cat)
		for i := range cat {
			cat[i] = int(math.Round(x[i]))
		}
		return cat, x[c.Cat:]
	}
	p.newEval = func(x []float64, key uint64) evaluator {
		cat, cont := split(x)
		return &countingEval{c: c, key: key, cat: cat, cont: cont, successes: make([]int, c.Cont)}
	}
	p.trueVal = func(x []float64) float64 { return c.Expected(split(x)) }
	return p
}

// countingEval keeps the successes of a counting-ones run's draws.
type countingEval struct {
	c         CountingOnes
	key       uint64
	cat       []int
	cont      []float64
	successes []int
	drawn     int // steps whose draws are in successes
}

func (e *countingEval) next(u int) float64 {
	for e.drawn < u {
		e.drawn++
		for j, pj := range e.cont {
			s := stream(e.key, uint64(e.drawn), uint64(j))
			for range CountingOnesBMin {
				if uniform(&s) < pj {
					e.successes[j]++
				}
			}
		}
	}
	return e.c.Value(e.cat, e.successes, CountingOnesBMin*e.drawn)
}

// evalFunc is an evaluator without state.
type evalFunc func(u int) float64

func (f evalFunc) next(u int) float64 { return f(u) }

// Problems returns the benchmark's four problems, in report order:
// hartmann6, branin, countingones-4+4, countingones-16+16.
func Problems() []*Problem {
	return []*Problem{
		Hartmann6Problem(DefaultHartmann6()),
		BraninProblem(),
		CountingOnesProblem(CountingOnes{Cat: 4, Cont: 4}),
		CountingOnesProblem(CountingOnes{Cat: 16, Cont: 16}),
	}
}

// ByName returns the problem of Problems with the given name, or nil.
func ByName(name string) *Problem {
	for _, p := range Problems() {
		if p.Name == name {
			return p
		}
	}
	return nil
}

package functions

import (
	"fmt"
	"math"
)

// Dim is one dimension of a Problem's search space: a float in [Lo, Hi],
// an integer in [Lo, Hi] (both included) when Int, or, when Cats > 0, a
// categorical parameter whose values are the category indices 0..Cats−1
// (Lo and Hi are then 0 and Cats−1). A configuration holds every value as
// a float64.
type Dim struct {
	Name   string
	Lo, Hi float64
	Int    bool
	Cats   int
}

// Categorical reports whether d is a categorical dimension.
func (d Dim) Categorical() bool { return d.Cats > 0 }

// cat returns a categorical dimension of n categories.
func cat(name string, n int) Dim { return Dim{Name: name, Lo: 0, Hi: float64(n - 1), Cats: n} }

// Problem is a test function prepared for a benchmark: a box search space,
// a budget scale of whole steps 1..Steps (step u evaluates the function at
// fidelity Fidelity(u), and Steps is full fidelity), a cost model, and the
// optimum. A Problem is immutable and safe for concurrent use; its Runs
// are not.
type Problem struct {
	// Name identifies the problem in reports, e.g. "hartmann6" or
	// "currin-mislead": its family, and its setting if any.
	Name string
	// Family is the function the problem is a setting of, e.g. "currin";
	// Setting names the fidelity setting ("" for the family's first).
	Family, Setting string
	// Misleading marks settings whose lowest fidelity ranks configurations
	// badly: Spearman's ρ between the value at step 1 and the
	// full-fidelity objective is below 0.5 on RankSample's sample (the
	// tests check it).
	Misleading bool
	// About says in a sentence or two what the problem is (function,
	// fidelity, setting), and Source where it comes from; both are for
	// the report.
	About, Source string
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
// Hartmann-6 and -3, b for counting ones, s for the others.
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
		if !(v >= d.Lo && v <= d.Hi) || (d.Int || d.Categorical()) && v != math.Trunc(v) {
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

package searchbench

import (
	"math"
	"sort"
	"time"

	"github.com/hone-tune/hone/bench/functions"
	"github.com/hone-tune/hone/bench/internal/benchutil"
)

// Point is the regret of the incumbent once Budget had been spent.
type Point struct {
	Budget, Regret float64
}

// Trace is one run of one method on one problem with one seed.
type Trace struct {
	Method  string
	Problem string
	Seed    uint64
	// Concurrency is the number of trials run at once.
	Concurrency int
	// Budget is the budget the run was given and Spent what it used.
	Budget, Spent float64
	// Points are the incumbent's regret after each improvement, in budget
	// order.
	Points []Point
	// Steps is the number of evaluation steps counted, FullEvals the number
	// of evaluations at full fidelity, Trials the number of configurations
	// tried.
	Steps, FullEvals, Trials int
	// CPU is the searcher's CPU time: the time spent inside the calls
	// into the method's searcher and scheduler (hone), or into the
	// optimisation library (Goptuna, Optuna), as measured by the thread's
	// CPU clock; the evaluation of the function and the executor's and
	// runner's work are not counted.
	CPU time.Duration
	// Wall is the wall-clock time the run took.
	Wall time.Duration
}

// RegretAt returns the incumbent's regret once budget b had been spent,
// or +Inf if nothing had been evaluated at full fidelity by then.
func (t *Trace) RegretAt(b float64) float64 {
	i := sort.Search(len(t.Points), func(i int) bool { return t.Points[i].Budget > b })
	if i == 0 {
		return math.Inf(1)
	}
	return t.Points[i-1].Regret
}

// Final returns the regret at the end of the run.
func (t *Trace) Final() float64 { return t.RegretAt(math.Inf(1)) }

// recorder does a run's budget accounting and keeps its trace. It is used
// from one goroutine.
type recorder struct {
	p       *functions.Problem
	tr      *Trace
	bestObs float64
	over    bool
}

func newRecorder(p *functions.Problem, method string, seed uint64, budget float64) *recorder {
	return &recorder{p: p, tr: &Trace{Method: method, Problem: p.Name, Seed: seed, Budget: budget}, bestObs: math.Inf(1)}
}

// budgetSlack absorbs rounding in the sum of step costs.
const budgetSlack = 1e-9

// add counts one evaluation step that reached step u with value v; x
// returns the configuration (asked for only at full fidelity). It reports
// false, and counts nothing, once the step would exceed the budget.
func (r *recorder) add(u int, v float64, x func() []float64) bool {
	if r.over {
		return false
	}
	c := r.p.StepCost(u)
	if r.tr.Spent+c > r.tr.Budget+budgetSlack {
		r.over = true
		return false
	}
	r.tr.Spent += c
	r.tr.Steps++
	if u < r.p.Steps {
		return true
	}
	r.tr.FullEvals++
	if v < r.bestObs {
		r.bestObs = v
		regret := r.p.True(x()) - r.p.Optimum
		if n := len(r.tr.Points); n > 0 && r.tr.Points[n-1].Budget == r.tr.Spent {
			r.tr.Points[n-1].Regret = regret
		} else {
			r.tr.Points = append(r.tr.Points, Point{r.tr.Spent, regret})
		}
	}
	return true
}

// done reports whether the budget is used up.
func (r *recorder) done() bool { return r.over || r.tr.Spent >= r.tr.Budget-budgetSlack }

// QuantileCurve is the p-quantile over seeds of the regret of a set of
// traces, as a step function: Points[i].Regret holds from Points[i].Budget
// until the next point; before the first point it is +Inf.
type QuantileCurve struct {
	P      float64
	Points []Point
}

// quantileCurve computes the p-quantile curve of traces (same method and
// problem, one per seed).
func quantileCurve(traces []*Trace, p float64) QuantileCurve {
	var budgets []float64
	for _, t := range traces {
		for _, pt := range t.Points {
			budgets = append(budgets, pt.Budget)
		}
	}
	sort.Float64s(budgets)
	qc := QuantileCurve{P: p}
	vals := make([]float64, len(traces))
	for i, b := range budgets {
		if i > 0 && b == budgets[i-1] {
			continue
		}
		for j, t := range traces {
			vals[j] = t.RegretAt(b)
		}
		sort.Float64s(vals)
		q := benchutil.Quantile(vals, p)
		if math.IsInf(q, 1) {
			continue
		}
		if n := len(qc.Points); n > 0 && qc.Points[n-1].Regret == q {
			continue
		}
		qc.Points = append(qc.Points, Point{b, q})
	}
	return qc
}

// At returns the curve's value at budget b.
func (c QuantileCurve) At(b float64) float64 {
	i := sort.Search(len(c.Points), func(i int) bool { return c.Points[i].Budget > b })
	if i == 0 {
		return math.Inf(1)
	}
	return c.Points[i-1].Regret
}

// Reach returns the first budget at which the curve is at or below
// regret, or +Inf if it never is.
func (c QuantileCurve) Reach(regret float64) float64 {
	for _, pt := range c.Points {
		if pt.Regret <= regret {
			return pt.Budget
		}
	}
	return math.Inf(1)
}

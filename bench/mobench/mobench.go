package mobench

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hone-tune/hone/bench/mofunctions"
)

// Eval is one evaluation of a configuration at a step of its problem.
type Eval struct {
	// X is the configuration, Step the budget step it was evaluated at
	// (the problem's Steps for full fidelity), Values the objective
	// vector there.
	X      []float64
	Step   int
	Values []float64
}

// Trace is what one run of a method evaluated, in order.
type Trace struct {
	Problem, Method string
	Seed            uint64
	// Budget is the budget the run was given and Spent what its
	// evaluations cost, both in full-fidelity evaluations.
	Budget, Spent float64
	Evals         []Eval
	// CPU is the CPU time of the method's own computation (its searcher
	// and scheduler, or its sampler; not the problem), when the method
	// measures it (see the package documentation); 0 otherwise.
	CPU time.Duration
}

// Full returns the objective vectors of the full-fidelity evaluations, in
// order.
func (t *Trace) Full(p *mofunctions.Problem) [][]float64 {
	var out [][]float64
	for _, e := range t.Evals {
		if e.Step >= p.Steps {
			out = append(out, e.Values)
		}
	}
	return out
}

// Hypervolume returns the hypervolume of the trace's full-fidelity
// evaluations with respect to p's reference point.
func (t *Trace) Hypervolume(p *mofunctions.Problem) float64 { return p.Hypervolume(t.Full(p)) }

// Method is a multi-objective search method: Run evaluates configurations
// of p with the given seed until it has spent budget (in full-fidelity
// evaluations, see Problem.Cost; it must not spend more) and returns its
// trace.
type Method struct {
	Name string
	Run  func(ctx context.Context, p *mofunctions.Problem, seed uint64, budget float64) (*Trace, error)
}

// Config is a benchmark: every method on every problem for seeds
// 1..Seeds at the given budget.
type Config struct {
	Problems []*mofunctions.Problem
	Methods  []Method
	Seeds    int
	Budget   float64
	// Log, if not nil, gets a line per finished run.
	Log io.Writer
}

// Cell is the outcome of one method on one problem over the seeds.
type Cell struct {
	Problem, Method string
	// HV holds the hypervolume of each seed's run, in seed order.
	HV []float64
	// CPU holds each run's method CPU time.
	CPU []time.Duration
}

// Median returns the median hypervolume over the seeds.
func (c *Cell) Median() float64 { return median(c.HV) }

// median returns the median of v (the mean of the middle two for an even
// count), NaN for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Report is the outcome of a benchmark: a cell per problem and method, in
// the order of the Config's problems, then methods.
type Report struct {
	Budget float64
	Seeds  int
	Cells  []*Cell
}

// Run runs every method of c on every problem for every seed, one run at a
// time, and checks each trace (its budget and configurations) before
// counting it.
func Run(ctx context.Context, c Config) (*Report, error) {
	rep := &Report{Budget: c.Budget, Seeds: c.Seeds}
	for _, p := range c.Problems {
		for _, m := range c.Methods {
			cell := &Cell{Problem: p.Name, Method: m.Name}
			for seed := uint64(1); seed <= uint64(c.Seeds); seed++ {
				tr, err := m.Run(ctx, p, seed, c.Budget)
				if err != nil {
					return nil, fmt.Errorf("%s on %s, seed %d: %w", m.Name, p.Name, seed, err)
				}
				if err := Check(p, tr); err != nil {
					return nil, fmt.Errorf("%s on %s, seed %d: %w", m.Name, p.Name, seed, err)
				}
				hv := tr.Hypervolume(p)
				cell.HV = append(cell.HV, hv)
				cell.CPU = append(cell.CPU, tr.CPU)
				if c.Log != nil {
					fmt.Fprintf(c.Log, "mobench: %s %s seed %d: %d evaluations, spent %.4g, hypervolume %.6g, cpu %v\n",
						p.Name, m.Name, seed, len(tr.Evals), tr.Spent, hv, tr.CPU.Round(time.Millisecond))
				}
			}
			rep.Cells = append(rep.Cells, cell)
		}
	}
	return rep, nil
}

// budgetSlack absorbs the rounding of sums of step costs.
const budgetSlack = 1e-9

// Check verifies a trace of p: every configuration in p's space, every
// step in 1..Steps, objective vectors of p's length that match p's own
// evaluation to 1e-9 relative, and a spent budget that is the sum of the
// evaluations' costs and within the budget.
func Check(p *mofunctions.Problem, tr *Trace) error {
	var spent float64
	for i, e := range tr.Evals {
		if err := p.Check(e.X); err != nil {
			return fmt.Errorf("evaluation %d: %w", i, err)
		}
		if e.Step < 1 || e.Step > p.Steps {
			return fmt.Errorf("evaluation %d: step %d outside 1..%d", i, e.Step, p.Steps)
		}
		want := p.At(e.X, e.Step)
		if len(e.Values) != len(want) {
			return fmt.Errorf("evaluation %d: %d objectives, want %d", i, len(e.Values), len(want))
		}
		for j := range want {
			if d := math.Abs(e.Values[j] - want[j]); d > 1e-9*math.Max(1, math.Abs(want[j])) {
				return fmt.Errorf("evaluation %d at %v, step %d: objective %d is %v, the problem says %v", i, e.X, e.Step, j, e.Values[j], want[j])
			}
		}
		spent += p.Cost(e.Step)
	}
	if math.Abs(spent-tr.Spent) > budgetSlack*math.Max(1, spent) {
		return fmt.Errorf("the trace says it spent %v, its evaluations cost %v", tr.Spent, spent)
	}
	if spent > tr.Budget+budgetSlack*math.Max(1, tr.Budget) {
		return fmt.Errorf("spent %v of a budget of %v", spent, tr.Budget)
	}
	return nil
}

// Write prints the report as a table: per problem and method, the median
// hypervolume over the seeds, its ratio to the true front's, the median
// regret (FrontHV − HV), the seeds' minimum and maximum, and the median
// CPU time of the method ("-" when the method does not measure it).
func (r *Report) Write(w io.Writer) error {
	fmt.Fprintf(w, "Median over %d seeds at a budget of %g full-fidelity evaluations.\n\n", r.Seeds, r.Budget)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "problem\tmethod\tmedian HV\tHV / front\tregret\tmin HV\tmax HV\tCPU\t")
	for _, c := range r.Cells {
		p := mofunctions.ByName(c.Problem)
		m := c.Median()
		front := math.NaN()
		if p != nil {
			front = p.FrontHV
		}
		fmt.Fprintf(tw, "%s\t%s\t%.4f\t%.3f\t%.4f\t%.4f\t%.4f\t%s\t\n", c.Problem, c.Method, m, m/front, front-m,
			slices.Min(c.HV), slices.Max(c.HV), c.cpuText())
	}
	return tw.Flush()
}

// MethodNames returns the names of ms joined by commas.
func MethodNames(ms []Method) string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name
	}
	return strings.Join(names, ",")
}

// Select returns the methods of ms named in names (comma-separated), in
// the order of names; "" selects all.
func Select(ms []Method, names string) ([]Method, error) {
	if names == "" {
		return ms, nil
	}
	var out []Method
	for _, n := range strings.Split(names, ",") {
		i := slices.IndexFunc(ms, func(m Method) bool { return m.Name == n })
		if i < 0 {
			return nil, fmt.Errorf("unknown method %q (known: %s)", n, MethodNames(ms))
		}
		out = append(out, ms[i])
	}
	return out, nil
}

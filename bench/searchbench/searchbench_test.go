package searchbench

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/hone-tune/hone/bench/functions"
)

// TestRecorder: the budget is cut before the step that would exceed it,
// only full-fidelity evaluations are found, and the regret is the true
// value of the incumbent chosen by reported value.
func TestRecorder(t *testing.T) {
	p := functions.ByName("countingones-4+4")
	r := newRecorder(p, "m", 1, 3*p.StepCost(1)+0.5*p.StepCost(1))
	x := func(v float64) func() []float64 {
		return func() []float64 { return []float64{1, 1, 1, 1, v, v, v, v} }
	}
	if !r.add(1, -3, x(0.5)) || len(r.tr.Points) != 0 {
		t.Fatal("a low-fidelity step was found")
	}
	if !r.add(p.Steps, -7, x(0.75)) || len(r.tr.Points) != 1 || r.tr.Points[0].Regret != 1 {
		t.Fatalf("points %v, want one with regret 1 (true value -7)", r.tr.Points)
	}
	if !r.add(p.Steps, -6, x(1)) || len(r.tr.Points) != 1 {
		t.Fatalf("a worse reported value changed the incumbent: %v", r.tr.Points)
	}
	if r.done() {
		t.Fatal("done with budget left")
	}
	if r.add(p.Steps, -8, x(1)) || !r.done() || r.tr.Steps != 3 || r.tr.FullEvals != 2 {
		t.Fatalf("the step over budget was counted: %+v", r.tr)
	}
	if got := r.tr.Final(); got != 1 {
		t.Errorf("final regret %v, want 1", got)
	}
	if got := r.tr.RegretAt(r.tr.Points[0].Budget - 1e-9); !math.IsInf(got, 1) {
		t.Errorf("regret before the first full evaluation = %v, want +Inf", got)
	}
}

func TestQuantileCurveAndReach(t *testing.T) {
	traces := []*Trace{
		{Points: []Point{{1, 10}, {4, 2}}},
		{Points: []Point{{2, 8}, {3, 1}}},
		{Points: []Point{{5, 3}}},
	}
	med := quantileCurve(traces, 0.5)
	for _, c := range []struct{ b, want float64 }{{0.5, math.Inf(1)}, {1, math.Inf(1)}, {2, 10}, {3, 10}, {4, 2}, {5, 2}, {9, 2}} {
		if got := med.At(c.b); got != c.want {
			t.Errorf("median at %v = %v, want %v", c.b, got, c.want)
		}
	}
	if got := med.Reach(2); got != 4 {
		t.Errorf("reach 2 at %v, want 4", got)
	}
	if got := med.Reach(0.5); !math.IsInf(got, 1) {
		t.Errorf("reach 0.5 at %v, want +Inf", got)
	}
	q25 := quantileCurve(traces, 0.25)
	if got := q25.At(3); got != 5.5 {
		t.Errorf("q25 at 3 = %v, want 5.5", got)
	}
}

// TestEveryMethodRuns runs every method briefly on every problem and
// checks the budget accounting.
func TestEveryMethodRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every method")
	}
	results, err := Run(context.Background(), Config{Seeds: 1, Parallel: 2, TempDir: t.TempDir(),
		Budget: func(p *functions.Problem) float64 { return 6 }})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 4 {
		t.Fatalf("%d problems", len(results))
	}
	for _, r := range results {
		if len(r.Methods) != len(Methods) {
			t.Errorf("%s: methods %v", r.Problem.Name, r.Methods)
		}
		for _, m := range r.Methods {
			tr := r.Traces[m][0]
			if tr.Spent > 6+budgetSlack || tr.Spent < 6-1 || tr.Steps == 0 || tr.Trials == 0 {
				t.Errorf("%s %s: spent %v of 6 in %d steps, %d trials", r.Problem.Name, m, tr.Spent, tr.Steps, tr.Trials)
			}
			for _, pt := range tr.Points {
				if !(pt.Regret >= 0) {
					t.Errorf("%s %s: regret %v", r.Problem.Name, m, pt.Regret)
				}
			}
		}
	}
	var buf bytes.Buffer
	WriteReport(&buf, results, 1)
	if !strings.Contains(buf.String(), "### Targets") {
		t.Errorf("report without targets:\n%s", buf.String())
	}
}

func TestHoneMultiFidelityStopsEarly(t *testing.T) {
	p := functions.ByName("hartmann6")
	for _, m := range []string{MethodHyperBand, MethodASHA, MethodBOHB} {
		tr, err := runHone(context.Background(), m, p, 3, 10, 1, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if tr.Trials <= tr.FullEvals {
			t.Errorf("%s: %d trials, %d at full fidelity: nothing was stopped early", m, tr.Trials, tr.FullEvals)
		}
	}
}

func TestUnknownMethod(t *testing.T) {
	if _, err := Run(context.Background(), Config{Methods: []string{"nope"}}); err == nil {
		t.Error("an unknown method was accepted")
	}
}

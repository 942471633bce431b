package report_test

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/spectest"
	"github.com/hone-tune/hone/pareto"
	"github.com/hone-tune/hone/report"
)

// dominates reports whether a is no worse than b in every loss and better
// in one: the definition, for checking the front against.
func dominates(a, b []float64) bool {
	better := false
	for i := range a {
		if a[i] > b[i] {
			return false
		}
		better = better || a[i] < b[i]
	}
	return better
}

// TestParetoFront checks the front of a real two-objective run against
// the definition: every finished trial is a point; a point is on the
// front exactly when no other dominates it; the hypervolume is that of
// the front against the derived reference point, which is beyond every
// front point; a given reference is used as given.
func TestParetoFront(t *testing.T) {
	dir := spectest.Run(t, spectest.TradeOffSpec(4, 30, ""), spectest.TradeOff(3))
	e, info := openExp(t, dir)
	if len(info.Objectives) != 2 || info.Objectives[0] != (hone.Objective{Metric: "accuracy", Mode: hone.Max}) || info.Objectives[1].Metric != "latency_ms" {
		t.Fatalf("info's objectives: %v", info.Objectives)
	}
	f, err := report.ParetoFront(e, info.Objectives, info.Constraints, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Finished != 30 || len(f.Points) != 30 || f.Incomplete != 0 || f.Feasible != 30 {
		t.Fatalf("front: %d finished, %d points, %d incomplete, %d feasible; want 30, 30, 0, 30", f.Finished, len(f.Points), f.Incomplete, f.Feasible)
	}
	var front [][]float64
	for i, p := range f.Points {
		last, err := e.Trial(p.ID).Last()
		if err != nil {
			t.Fatal(err)
		}
		if p.Values[0] != last["accuracy"] || p.Values[1] != last["latency_ms"] {
			t.Errorf("%s: values %v, last result %v", p.ID, p.Values, last)
		}
		dominated := false
		for j, q := range f.Points {
			if i != j && dominates(q.Losses(), p.Losses()) {
				dominated = true
			}
		}
		if p.OnFront == dominated || (p.Rank == 0) != p.OnFront {
			t.Errorf("%s: on the front %v, rank %d, dominated %v", p.ID, p.OnFront, p.Rank, dominated)
		}
		if p.OnFront {
			front = append(front, p.Losses())
		}
	}
	if f.Size != len(front) || f.Size < 2 || f.Size == 30 {
		t.Fatalf("front size %d, %d points undominated: the run should give a front of some but not all trials", f.Size, len(front))
	}
	on := f.OnFront()
	for k := 1; k < len(on); k++ {
		if on[k].Values[0] > on[k-1].Values[0] {
			t.Errorf("OnFront: accuracy %v after %v, want best first", on[k].Values[0], on[k-1].Values[0])
		}
	}
	ref := pareto.Reference(front)
	if !f.ReferenceDerived || f.Hypervolume == nil || *f.Hypervolume != pareto.Hypervolume(front, ref) || *f.Hypervolume <= 0 {
		t.Fatalf("hypervolume %v (derived %v), want %v", f.Hypervolume, f.ReferenceDerived, pareto.Hypervolume(front, ref))
	}
	if f.Reference[0] != -ref[0] || f.Reference[1] != ref[1] {
		t.Errorf("reference %v, want the derived %v in the metrics' directions", f.Reference, ref)
	}
	for _, p := range on {
		if p.Values[0] <= f.Reference[0] || p.Values[1] >= f.Reference[1] {
			t.Errorf("%s %v is not better than the reference %v", p.ID, p.Values, f.Reference)
		}
	}

	// A given reference: accuracy 0, latency 200.
	g, err := report.ParetoFront(e, info.Objectives, nil, []float64{0, 200})
	if err != nil {
		t.Fatal(err)
	}
	if g.ReferenceDerived || !slices.Equal(g.Reference, []float64{0, 200}) || *g.Hypervolume != pareto.Hypervolume(front, []float64{0, 200}) {
		t.Errorf("given reference: %v (derived %v), hypervolume %v", g.Reference, g.ReferenceDerived, *g.Hypervolume)
	}
	if *g.Hypervolume <= *f.Hypervolume {
		t.Errorf("a reference farther out gives a hypervolume %v, not above %v", *g.Hypervolume, *f.Hypervolume)
	}
	for _, bad := range [][]float64{{0}, {0, math.NaN()}} {
		if _, err := report.ParetoFront(e, info.Objectives, nil, bad); err == nil {
			t.Errorf("reference %v: no error", bad)
		}
	}

	// The summary shows the front in place of a best trial.
	sum, err := report.Summarize(e, info, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Best != nil || sum.Front == nil || sum.Front.Size != f.Size || *sum.Front.Hypervolume != *f.Hypervolume || sum.Front.Points != nil {
		t.Errorf("summary: best %v, front %+v", sum.Best, sum.Front)
	}
}

// TestParetoFrontConstrained: with a constraint, an infeasible trial is
// never on the front while a feasible one exists, the front is the front
// of the feasible trials, and the hypervolume counts feasible points only.
func TestParetoFrontConstrained(t *testing.T) {
	dir := spectest.Run(t, spectest.TradeOffSpec(4, 30, "constraints:\n  - {metric: memory_mb, below: 500}\n"), spectest.TradeOff(3))
	e, info := openExp(t, dir)
	if len(info.Constraints) != 1 {
		t.Fatalf("info's constraints: %v", info.Constraints)
	}
	f, err := report.ParetoFront(e, info.Objectives, info.Constraints, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Feasible == 0 || f.Feasible == len(f.Points) {
		t.Fatalf("%d of %d feasible: the test needs both kinds", f.Feasible, len(f.Points))
	}
	if !slices.Equal(f.Constraints, []string{"memory_mb ≤ 500"}) {
		t.Errorf("constraints %q", f.Constraints)
	}
	var feasible [][]float64
	for _, p := range f.Points {
		width, _ := hone.Number(e.Trial(p.ID).Config["width"])
		if p.Feasible != (10*width <= 500) || p.Feasible != (len(p.Broken) == 0) {
			t.Errorf("%s: width %v, feasible %v, broken %v", p.ID, width, p.Feasible, p.Broken)
		}
		if p.Feasible {
			feasible = append(feasible, p.Losses())
		} else if p.OnFront {
			t.Errorf("%s is infeasible and on the front", p.ID)
		}
	}
	want := pareto.Front(feasible)
	if f.Size != len(want) {
		t.Errorf("front size %d, want the %d of the feasible trials' front", f.Size, len(want))
	}
	var fr [][]float64
	for _, i := range want {
		fr = append(fr, feasible[i])
	}
	if *f.Hypervolume != pareto.Hypervolume(fr, pareto.Reference(fr)) {
		t.Errorf("hypervolume %v, want the feasible front's %v", *f.Hypervolume, pareto.Hypervolume(fr, pareto.Reference(fr)))
	}

	// No feasible trial: the least violating ones are the front, shown
	// infeasible, with no hypervolume.
	tight := hone.Constraints{{Metric: "memory_mb", Below: ptr(-1)}}
	g, err := report.ParetoFront(e, info.Objectives, tight, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.Feasible != 0 || g.Size == 0 || g.Hypervolume != nil || g.Reference != nil {
		t.Errorf("with no feasible trial: %d feasible, size %d, hypervolume %v, reference %v", g.Feasible, g.Size, g.Hypervolume, g.Reference)
	}
}

// TestParetoFrontOneObjective: with one objective the front is the best
// trial.
func TestParetoFrontOneObjective(t *testing.T) {
	dir := spectest.Run(t, spectest.TradeOffSpec(5, 12, ""), spectest.TradeOff(2))
	e, _ := openExp(t, dir)
	o := hone.Objective{Metric: "latency_ms", Mode: hone.Min}
	best, v, err := e.Best(o, "last")
	if err != nil {
		t.Fatal(err)
	}
	f, err := report.ParetoFront(e, hone.Objectives{o}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	on := f.OnFront()
	if f.Size != 1 || on[0].ID != best.ID || on[0].Values[0] != v {
		t.Errorf("front %+v, want the best trial %s (%v)", on, best.ID, v)
	}
}

func ptr(f float64) *float64 { return &f }

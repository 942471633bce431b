package searchbench

import (
	"bytes"
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/bench/functions"
	"github.com/hone-tune/hone/bench/internal/benchutil"
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

// fakeStudy is an askTell that records what simulate asks of it and
// prunes every trial whose number is odd at its first report.
type fakeStudy struct {
	p     *functions.Problem
	n     int
	calls []string
}

func (f *fakeStudy) ask() (int, []float64, error) {
	f.n++
	f.calls = append(f.calls, "ask")
	return f.n, f.p.RandomConfig(uint64(f.n)), nil
}

func (f *fakeStudy) report(id, u int, v float64) (bool, error) {
	f.calls = append(f.calls, "report")
	return id%2 == 1, nil
}

func (f *fakeStudy) tell(id int, v float64, pruned bool) error {
	if pruned {
		f.calls = append(f.calls, "pruned")
	} else {
		f.calls = append(f.calls, "tell")
	}
	return nil
}

// TestSimulate: concurrency trials start at once, a pruned trial's slot
// gets a new trial at once, steps are counted in virtual-time order and
// the run stops at the budget.
func TestSimulate(t *testing.T) {
	p := functions.ByName("currin")
	f := &fakeStudy{p: p}
	budget := 4.0
	rec := newRecorder(p, "fake", 1, budget)
	trials, err := simulate(context.Background(), p, 1, 3, true, "fake-", f, rec)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.calls[:6], " "); got != "ask ask ask report pruned ask" {
		t.Errorf("first calls: %s", got)
	}
	// The odd trials are pruned at step 1 and replaced at once, so the
	// slots end up with trials 2, 4 and 6 side by side; the budget (4)
	// holds their three full runs (and the pruned first steps), not a
	// fourth.
	if rec.tr.FullEvals != 3 || rec.tr.Spent > budget || !rec.done() {
		t.Errorf("%d full evaluations, spent %v of %v", rec.tr.FullEvals, rec.tr.Spent, budget)
	}
	if trials < 4 || trials != rec.tr.Trials && rec.tr.Trials != 0 {
		t.Errorf("%d trials", trials)
	}
	// Without a pruner nothing is reported below full fidelity.
	f2 := &fakeStudy{p: p}
	if _, err := simulate(context.Background(), p, 1, 2, false, "fake-", f2, newRecorder(p, "fake", 1, 3)); err != nil {
		t.Fatal(err)
	}
	for _, c := range f2.calls {
		if c == "report" || c == "pruned" {
			t.Fatalf("calls without a pruner: %v", f2.calls)
		}
	}
}

// TestEveryMethodRuns runs every method but Optuna's (which the command's
// smoke test runs) briefly at two concurrencies and checks the budget
// accounting.
func TestEveryMethodRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every method")
	}
	probs := []*functions.Problem{functions.ByName("bumps-decoy"), functions.ByName("countingones-4+4")}
	res, err := Run(context.Background(), Config{Problems: probs, Seeds: 1, Parallel: 2, TempDir: t.TempDir(),
		Concurrency: []int{1, 4}, NoOptuna: true, Budget: func(*functions.Problem) float64 { return 6 }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != 4 || res.OptunaRan {
		t.Fatalf("%d cells, optuna %v", len(res.Cells), res.OptunaRan)
	}
	for _, c := range res.Cells {
		if c.Methods[0] != Baseline || len(c.Methods) != len(Methods())-2 {
			t.Errorf("%s: methods %v", c.Problem.Name, c.Methods)
		}
		for _, m := range c.Methods {
			tr := c.Traces[m][0]
			if tr.Spent > 6+budgetSlack || tr.Spent < 6-1 || tr.Steps == 0 || tr.Trials == 0 || tr.Concurrency != c.Concurrency {
				t.Errorf("%s c=%d %s: spent %v of 6 in %d steps, %d trials", c.Problem.Name, c.Concurrency, m, tr.Spent, tr.Steps, tr.Trials)
			}
			if tr.CPU <= 0 {
				t.Errorf("%s %s: no searcher CPU measured", c.Problem.Name, m)
			}
			for _, pt := range tr.Points {
				if !(pt.Regret >= 0) {
					t.Errorf("%s %s: regret %v", c.Problem.Name, m, pt.Regret)
				}
			}
		}
	}
	var buf bytes.Buffer
	WriteReport(&buf, res, RunInfo{Command: "searchbench", Mode: "test", Notes: "a note", SeveralObjectives: "| zdt1 | nsga2 |"})
	for _, want := range []string{"## Summary", "cells (", "Parallel efficiency", "Searcher CPU", "## Problems", "### bumps-decoy", NotesBegin, NotesEnd, "## Several objectives"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// The kept sections come back as they were given.
	if got := Kept(buf.String(), NotesBegin, NotesEnd); got != "a note" {
		t.Errorf("kept notes %q", got)
	}
	if got := Kept(buf.String(), SeveralBegin, SeveralEnd); got != "| zdt1 | nsga2 |" {
		t.Errorf("kept section of several objectives %q", got)
	}
}

// TestHoneMethodsDeterministic: every hone method gives the same run, bit
// for bit, from the same seed, at concurrency 1, 4 and 16.
func TestHoneMethodsDeterministic(t *testing.T) {
	p := functions.ByName("bumps-decoy")
	for _, m := range HoneMethods {
		for _, c := range []int{1, 4, 16} {
			a, err := runHone(context.Background(), &m, p, 5, 20, c, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			b, err := runHone(context.Background(), &m, p, 5, 20, c, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a.Points, b.Points) || a.Steps != b.Steps || a.Trials != b.Trials || a.Spent != b.Spent {
				t.Errorf("%s c=%d: two runs of seed 5 differ: %+v and %+v", m.Name, c, a, b)
			}
		}
	}
}

// TestTimedWrappers: the wrapped searcher answers MaxPending as the
// controller would for the plain one.
func TestTimedWrappers(t *testing.T) {
	p := functions.ByName("currin")
	for _, m := range HoneMethods {
		for _, c := range []int{1, 4, 16} {
			sr, _, err := m.Build(Env{Space: spaceOf(p), Seed: 1, Concurrency: c, Metric: metricLoss, TimeAttr: metricBudget, MaxT: 27, Eta: eta})
			if err != nil {
				t.Fatal(err)
			}
			want := 1
			if pl, ok := sr.(hone.PendingLimit); ok && (pl.MaxPending() > 0 || pl.MaxPending() == hone.PendingAuto) {
				want = pl.MaxPending()
			}
			w := benchutil.TimeSearcher(sr, &benchutil.CPUMeter{}).(hone.PendingLimit)
			if got := w.MaxPending(); got != want && !(got <= 0 && got != hone.PendingAuto && want == 1) {
				t.Errorf("%s c=%d: wrapped MaxPending %d, plain %d", m.Name, c, got, want)
			}
		}
	}
}

func TestHoneMultiFidelityStopsEarly(t *testing.T) {
	p := functions.ByName("hartmann6")
	for _, name := range []string{"hyperband", "asha", "bohb"} {
		tr, err := runHone(context.Background(), honeMethod(name), p, 3, 10, 1, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if tr.Trials <= tr.FullEvals {
			t.Errorf("%s: %d trials, %d at full fidelity: nothing was stopped early", name, tr.Trials, tr.FullEvals)
		}
	}
}

// TestVerdictsAndEfficiency checks the report's arithmetic on made-up
// traces.
func TestVerdictsAndEfficiency(t *testing.T) {
	p := functions.ByName("currin")
	trace := func(m string, c int, pts ...Point) *Trace { return &Trace{Method: m, Concurrency: c, Points: pts} }
	cell := func(c int, bohb, asha float64) *Cell {
		return &Cell{Problem: p, Concurrency: c, Budget: 10, Seeds: 1, Methods: []string{"random", "asha", "bohb"},
			Traces: map[string][]*Trace{
				"random": {trace("random", c, Point{8, 1})},
				"asha":   {trace("asha", c, Point{2, asha})},
				"bohb":   {trace("bohb", c, Point{2, 2}, Point{4 * float64(c), bohb})},
			}}
	}
	cells := []*Cell{cell(1, 0.1, 0.5), cell(4, 0.6, 0.5)}
	vs := Verdicts(cells)
	if len(vs) != 2 || !vs[0].Won || vs[1].Won || vs[0].Hone != "bohb" || vs[0].Base != "asha" {
		t.Fatalf("verdicts %+v", vs)
	}
	var e *Efficiency
	for _, x := range Efficiencies(cells) {
		if x.Method == "bohb" {
			e = &x
		}
	}
	// Random's final regret at concurrency 1 is 1: bohb reaches it at 4
	// (c=1) and 16 (c=4).
	if e == nil || e.Target != 1 || e.Budget[1] != 4 || e.Budget[4] != 16 || e.Ratio(4) != 4 {
		t.Fatalf("efficiency %+v", e)
	}
}

func TestUnknownMethod(t *testing.T) {
	if _, err := Run(context.Background(), Config{Methods: []string{"nope"}, Budget: func(*functions.Problem) float64 { return 1 }}); err == nil {
		t.Error("an unknown method was accepted")
	}
}

// TestModeSizes: every problem of a mode has a budget, and the long mode
// covers every problem.
func TestModeSizes(t *testing.T) {
	for _, n := range DefaultProblems {
		if functions.ByName(n) == nil || !(DefaultBudgets[n] > 0) {
			t.Errorf("default mode: %s unknown or without a budget", n)
		}
	}
	for _, p := range functions.Problems() {
		if !(LongBudgets[p.Name] > 0) {
			t.Errorf("long mode: %s without a budget", p.Name)
		}
	}
	families := map[string]int{}
	for _, p := range functions.Problems() {
		families[p.Family] += 0
	}
	for _, n := range SmokeProblems {
		p := functions.ByName(n)
		if p == nil {
			t.Errorf("smoke mode: %s unknown", n)
			continue
		}
		families[p.Family]++
	}
	for f, n := range families {
		if n != 1 {
			t.Errorf("smoke mode: %d problems of family %s, want 1", n, f)
		}
	}
}

// TestOutOfReach: a setting is out of reach at the highest concurrency
// when even the earliest first full-fidelity result there, of any method,
// comes after 1.5 times the budget hone's best method needs at 1; a
// setting the best method misses otherwise is only over 1.5×.
func TestOutOfReach(t *testing.T) {
	p := functions.ByName("currin")
	trace := func(m string, c int, pts ...Point) *Trace { return &Trace{Method: m, Concurrency: c, Points: pts} }
	cell := func(c int, first, reach float64) *Cell {
		return &Cell{Problem: p, Concurrency: c, Budget: 40, Seeds: 1, Methods: []string{"random", "bohb"},
			Traces: map[string][]*Trace{
				"random": {trace("random", c, Point{first, 2}, Point{30, 1})},
				"bohb":   {trace("bohb", c, Point{reach, 0.5})},
			}}
	}
	for _, tc := range []struct {
		first16 float64 // the first full-fidelity results at 16
		want    string
	}{
		{first16: 16, want: "(over 1.5×; out of reach: at least 4×)"},
		{first16: 3, want: "(over 1.5×) |"},
	} {
		// bohb reaches random's final regret (1) at 4 at concurrency 1,
		// and 10 after the first results at 16.
		cells := []*Cell{cell(1, 2, 4), cell(16, tc.first16, tc.first16+10)}
		if got := floorAt(cells[1]); got != tc.first16 {
			t.Errorf("floorAt = %v, want %v", got, tc.first16)
		}
		var b strings.Builder
		writeEfficiencySummary(&b, cells, []int{1, 16}, RunInfo{}, "")
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("first full-fidelity result at 16 at %v: want %q in\n%s", tc.first16, tc.want, b.String())
		}
	}
	// With a concurrency between 1 and the highest, the summary counts
	// the settings within 1.5× there too: bohb reaches the target at 4
	// at concurrency 1 and at 6 (1.5×) at concurrency 4.
	cells := []*Cell{cell(1, 2, 4), cell(4, 3, 6), cell(16, 16, 26)}
	var b strings.Builder
	writeEfficiencySummary(&b, cells, []int{1, 4, 16}, RunInfo{}, "")
	for _, want := range []string{"on **0 of 1** problem settings", "At concurrency 4, where trials at once spend about 4 full evaluations' worth before the first can finish, it needs at most 1.5× its concurrency-1 budget on 1 of 1."} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("want %q in\n%s", want, b.String())
		}
	}
	cells[1] = cell(4, 3, 6.5)
	b.Reset()
	writeEfficiencySummary(&b, cells, []int{1, 4, 16}, RunInfo{}, "")
	if want := "budget on 0 of 1."; !strings.Contains(b.String(), want) {
		t.Errorf("bohb at 6.5 at concurrency 4: want %q in\n%s", want, b.String())
	}
}

// TestFirstFullFidelityFloor pins the bound behind "out of reach": with
// 16 trials at once, no method, hone's or a baseline run in Go, has a
// full-fidelity result before 1 + 15·Cost(Steps−1) was spent. The first
// trial to reach full fidelity has spent a whole evaluation, 1; every
// other trial slot has been busy as long, and has finished all but at
// most its last step, which costs at most 1 − Cost(Steps−1). A method
// that left trial slots idle at the start could beat the bound; none does.
func TestFirstFullFidelityFloor(t *testing.T) {
	var methods []string
	for _, m := range HoneMethods {
		methods = append(methods, m.Name)
	}
	probs := []*functions.Problem{functions.ByName("park"), functions.ByName("countingones-4+4")}
	res, err := Run(context.Background(), Config{Problems: probs, Methods: methods, Concurrency: []int{16}, Seeds: 2,
		Budget: func(*functions.Problem) float64 { return 20 }, TempDir: t.TempDir(), NoOptuna: true})
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	for _, c := range res.Cells {
		bound := 1 + 15*c.Problem.Cost(c.Problem.Steps-1)
		for m, traces := range c.Traces {
			for _, tr := range traces {
				runs++
				if len(tr.Points) == 0 {
					continue
				}
				if first := tr.Points[0].Budget; first < bound-1e-9 {
					t.Errorf("%s, %s, seed %d: first full-fidelity result at %v, before the bound %v", c.Problem.Name, m, tr.Seed, first, bound)
				}
			}
		}
	}
	if runs != len(probs)*len(methods)*2 {
		t.Fatalf("%d runs, want %d", runs, len(probs)*len(methods)*2)
	}
}

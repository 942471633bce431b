package tpe

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/motest"
)

// moAt is a result at time t with f1, f2 and mem.
func moAt(t float64, f []float64, mem float64) *hone.Result {
	return &hone.Result{Metrics: map[string]any{"t": t, "f1": f[0], "f2": f[1], "mem": mem}}
}

// moRungOpts are two objectives under a constraint mem < 1, at rungs 1, 3
// and 9 of t.
func moRungOpts(seed uint64) Options {
	below := 1.0
	return Options{Objectives: motest.Objectives(), Constraints: hone.Constraints{{Metric: "mem", Below: &below}},
		NumSamples: -1, Seed: seed, NStartupTrials: 5, Multivariate: true, ConstantLiar: true,
		Rungs: &Rungs{TimeAttr: "t", Budgets: []float64{1, 3, 9}}}
}

// TestMultiObjectiveRungRanking: with several objectives at rungs the good
// trials are those at the highest budget first, then, at the budget that
// does not fit, the first by constrained non-dominated sorting, the last
// front cut by greedy hypervolume subset selection; a trial stopped at a
// low rung is not good however small its losses, nor an infeasible one
// beside feasible ones. Good kernels weigh by hypervolume contribution
// within their own budget: the only trial at the highest budget weighs 1
// although every trial below dominates it.
func TestMultiObjectiveRungRanking(t *testing.T) {
	o := moRungOpts(1)
	o.NStartupTrials = 3
	o.Gamma = func(int) int { return 3 }
	s := mustNew(t, motest.ZDTSpace(), o)
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		if _, err := s.Suggest(id); err != nil {
			t.Fatal(err)
		}
	}
	up := func(id string, to float64, f []float64, mem float64) {
		for _, b := range []float64{1, 3, 9} {
			if b <= to {
				s.OnResult(id, moAt(b, f, mem))
			}
		}
	}
	up("a", 9, []float64{5, 5}, 0)     // the highest budget, dominated
	up("b", 3, []float64{1, 3}, 0)     // front 0 at budget 3
	up("c", 3, []float64{3, 1}, 0)     // front 0
	up("d", 3, []float64{2, 2}, 0)     // front 0, the most hypervolume alone
	up("e", 3, []float64{4, 4}, 0)     // front 1
	up("f", 1, []float64{0, 0}, 0)     // dominates all, stopped at budget 1
	up("g", 3, []float64{0.5, 0.5}, 5) // infeasible
	s.OnTrialComplete("f", moAt(1, []float64{0, 0}, 0), false)
	// h is pending: a liar.
	ids := map[int]string{0: "a", 1: "b", 2: "c", 3: "d", 4: "e", 5: "f", 6: "g", 7: "h"}
	names := func(rows []row) (out []string) {
		for _, r := range rows {
			out = append(out, ids[r.seq])
		}
		return out
	}
	// c, e and g are still running: not judged yet, so not bad.
	if good, bad, ok := s.training(); !ok || !slices.Equal(names(good), []string{"a", "b", "d"}) || !slices.Equal(names(bad), []string{"f", "h"}) {
		t.Fatalf("good %v, bad %v (model %v); want [a b d], [f h] while c, e and g run", names(good), names(bad), ok)
	}
	// Every observed trial but a is complete: a, still running, is good.
	for _, id := range []string{"b", "c", "d", "e", "g"} {
		s.OnTrialComplete(id, nil, false)
	}
	good, bad, ok := s.training()
	if !ok {
		t.Fatal("no model")
	}
	// Front {b, c, d} at budget 3 has the reference point (3.2, 3.2): d
	// adds 1.44, then b and c 0.2 each, b the earlier.
	var g, b []string
	for _, r := range good {
		g = append(g, ids[r.seq])
	}
	for _, r := range bad {
		b = append(b, ids[r.seq])
		if r.liar != (ids[r.seq] == "h") {
			t.Errorf("row %s liar = %v", ids[r.seq], r.liar)
		}
	}
	if !slices.Equal(g, []string{"a", "b", "d"}) || !slices.Equal(b, []string{"c", "e", "f", "g", "h"}) {
		t.Fatalf("good %v, bad %v; want [a b d], [c e f g h]", g, b)
	}
	if good[0].level != 2 || good[0].w != 1 {
		t.Errorf("a: level %d, weight %v; want 2, 1", good[0].level, good[0].w)
	}
	// b and d, alone at budget 3 among the good ones, add 0.1 each to
	// their hypervolume (reference (2.1, 3.1)): both weigh 1.
	for _, r := range good[1:] {
		if r.level != 1 || math.Abs(r.w-1) > 1e-9 {
			t.Errorf("%s: level %d, weight %v; want 1, 1", ids[r.seq], r.level, r.w)
		}
	}
	if !slices.Equal(good[0].losses, []float64{5, 5}) || !slices.Equal(good[2].losses, []float64{2, 2}) {
		t.Errorf("losses at the rungs: %v, %v", good[0].losses, good[2].losses)
	}
}

// moRungRun suggests n trials, two running at a time, each reporting
// motest.ZDT1's losses plus 1/t at t = 1, 3 and 9 while their f1 + f2 at t = 1
// is below a bar that rises with t (a stand-in for ASHA's promotions),
// and calls check before each suggestion. It returns the suggestions.
func moRungRun(t *testing.T, s *Searcher, n int, check func(s *Searcher)) []hone.Config {
	t.Helper()
	var out []hone.Config
	type live struct {
		id  string
		cfg hone.Config
	}
	var running []live
	finish := func(l live) {
		f := motest.ZDT1(l.cfg)
		for _, b := range []float64{1, 3, 9} {
			r := moAt(b, []float64{f[0] + 1/b, f[1] + 1/b}, f[0]*2)
			if b == 9 || f[0]+f[1] > 4/b {
				s.OnTrialComplete(l.id, r, false)
				return
			}
			s.OnResult(l.id, r)
		}
	}
	for i := range n {
		if check != nil {
			check(s)
		}
		id := fmt.Sprint("t", i)
		cfg, err := s.Suggest(id)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, cfg)
		running = append(running, live{id, cfg})
		if len(running) == 2 {
			finish(running[0])
			running = running[1:]
		}
	}
	return out
}

// TestMultiObjectiveRungOrder: at every suggestion of a run, no trial
// observed at a higher budget than a good one is bad: a trial stopped at a
// low rung never outranks one that went further.
func TestMultiObjectiveRungOrder(t *testing.T) {
	models, below := 0, 0
	moRungRun(t, mustNew(t, motest.ZDTSpace(), moRungOpts(2)), 80, func(s *Searcher) {
		good, bad, ok := s.training()
		if !ok {
			return
		}
		models++
		low := len(s.budgets)
		for _, r := range good {
			low = min(low, r.level)
			if !(r.w > 0) {
				t.Fatalf("good row %d has weight %v", r.seq, r.w)
			}
		}
		for _, r := range bad {
			if !r.liar && r.level > low {
				t.Fatalf("bad row %d at level %d above a good one at level %d", r.seq, r.level, low)
			}
			if !r.liar && r.level < low {
				below++
			}
		}
	})
	if models < 60 || below == 0 {
		t.Errorf("the model made %d suggestions, with %d bad rows below the good ones' budgets; want at least 60 and some", models, below)
	}
}

// TestMultiObjectiveRungDeterminismAndState: the same seed gives the same
// run, another seed another; a searcher restored from a snapshot taken
// mid-run continues exactly as the original.
func TestMultiObjectiveRungDeterminismAndState(t *testing.T) {
	a := moRungRun(t, mustNew(t, motest.ZDTSpace(), moRungOpts(3)), 40, nil)
	b := moRungRun(t, mustNew(t, motest.ZDTSpace(), moRungOpts(3)), 40, nil)
	c := moRungRun(t, mustNew(t, motest.ZDTSpace(), moRungOpts(4)), 40, nil)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("same seed, different suggestions")
	}
	if fmt.Sprint(a) == fmt.Sprint(c) {
		t.Error("another seed, the same suggestions")
	}
	s := mustNew(t, motest.ZDTSpace(), moRungOpts(3))
	moRungRun(t, s, 25, nil) // one trial left running
	data, err := s.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	r := mustNew(t, motest.ZDTSpace(), moRungOpts(99))
	if err := r.UnmarshalState(data); err != nil {
		t.Fatal(err)
	}
	if r.Observed() != s.Observed() || r.Observed() == 0 {
		t.Fatalf("restored %d observations, want %d", r.Observed(), s.Observed())
	}
	g1, b1, _ := s.training()
	g2, b2, _ := r.training()
	if fmt.Sprint(g1, b1) != fmt.Sprint(g2, b2) {
		t.Fatal("restored model differs")
	}
	for i := range 10 {
		id := fmt.Sprint("n", i)
		x, _ := s.Suggest(id)
		y, _ := r.Suggest(id)
		if fmt.Sprint(x) != fmt.Sprint(y) {
			t.Fatalf("suggestion %d after restore: %v, want %v", i, y, x)
		}
		res := moAt(3, []float64{float64(i), float64(10 - i)}, 0)
		s.OnTrialComplete(id, res, false)
		r.OnTrialComplete(id, res, false)
	}
}

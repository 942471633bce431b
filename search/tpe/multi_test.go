package tpe

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/motest"
	"github.com/hone-tune/hone/pareto"
	"github.com/hone-tune/hone/search/random"
)

// TestMultiObjectiveImprovesOverRandom: on ZDT1 at 120 trials, the
// multi-objective TPE's median hypervolume over five seeds is above the
// best random run's, univariate and multivariate.
func TestMultiObjectiveImprovesOverRandom(t *testing.T) {
	ref := []float64{1.1, 11}
	var rnd []float64
	for seed := range uint64(5) {
		r, err := random.New(motest.ZDTSpace(), -1, nil, seed)
		if err != nil {
			t.Fatal(err)
		}
		rnd = append(rnd, pareto.Hypervolume(motest.Run(t, r, 120, motest.ZDT1), ref))
	}
	for _, mv := range []bool{false, true} {
		var hv []float64
		for seed := range uint64(5) {
			s := mustNew(t, motest.ZDTSpace(), Options{Objectives: motest.Objectives(), NumSamples: -1, Seed: seed, Multivariate: mv})
			hv = append(hv, pareto.Hypervolume(motest.Run(t, s, 120, motest.ZDT1), ref))
		}
		t.Logf("multivariate %v: %v; random %v", mv, hv, rnd)
		if median(hv) <= slices.Max(rnd) {
			t.Errorf("multivariate %v: median hypervolume %v is not above random's best %v", mv, median(hv), slices.Max(rnd))
		}
	}
}

// TestSplitGeneral: the good set is filled front by front, the last front
// by greedy hypervolume subset selection; feasible observations come
// first; the good rows' weights are their hypervolume contributions,
// the largest 1, a dominated row's almost 0.
func TestSplitGeneral(t *testing.T) {
	rows := func(pts [][]float64, viol []float64) []row {
		out := make([]row, len(pts))
		for i, p := range pts {
			out[i] = row{seq: i, losses: p, loss: p[0]}
			if viol != nil {
				out[i].viol = viol[i]
			}
		}
		return out
	}
	seqs := func(rs []row) []int {
		var out []int
		for _, r := range rs {
			out = append(out, r.seq)
		}
		return out
	}
	// Front 0: 0, 1; front 1: 2, 3, 4; 5 is dominated by all. Of front
	// 1, with its reference point (2.18, 2.15), 3 has the largest box, and
	// then 4 adds more than 2, which 3 nearly covers.
	pts := [][]float64{{0, 1}, {1, 0}, {0.2, 2}, {0.3, 1.9}, {2, 0.5}, {3, 3}}
	all := rows(pts, nil)
	all = append(all, row{seq: 6, liar: true, loss: math.Inf(1)})
	good, bad := splitGeneral(all, 4, true)
	if got := seqs(good); !slices.Equal(got, []int{0, 1, 3, 4}) {
		t.Errorf("good %v, want the front, 3 and 4", got)
	}
	if got := seqs(bad); !slices.Equal(got, []int{2, 5, 6}) {
		t.Errorf("bad %v, want the rest and the liar", got)
	}
	for _, r := range good {
		switch {
		case r.w <= 0 || r.w > 1:
			t.Errorf("row %d: weight %v outside (0, 1]", r.seq, r.w)
		case r.seq == 3 || r.seq == 4:
			if r.w > 1e-9 {
				t.Errorf("row %d, dominated within the good set: weight %v", r.seq, r.w)
			}
		}
	}
	if top := slices.MaxFunc(good, func(a, b row) int { return cmpFloat(a.w, b.w) }); top.w != 1 {
		t.Errorf("largest weight %v, want 1", top.w)
	}
	// Constraints: 0 and 1 are infeasible, so the feasible ones fill the
	// good set; of the infeasible ones, the least violating comes first.
	good, _ = splitGeneral(rows(pts, []float64{1, 0.5, 0, 0, 0, 0}), 5, true)
	if got := seqs(good); !slices.Equal(got, []int{1, 2, 3, 4, 5}) {
		t.Errorf("constrained good %v", got)
	}
	for _, r := range good {
		if r.seq == 1 && r.w > 1e-9 {
			t.Errorf("infeasible row beside feasible ones: weight %v", r.w)
		}
	}
	// No feasible row: the least violating ones weigh 1.
	good, _ = splitGeneral(rows(pts, []float64{3, 1, 2, 5, 4, 6}), 2, true)
	if got := seqs(good); !slices.Equal(got, []int{1, 2}) || good[0].w != 1 || good[1].w != 1 {
		t.Errorf("infeasible good %v with weights %v, %v", got, good[0].w, good[1].w)
	}
	// One objective under a constraint: feasible by loss, ties by
	// suggestion, no weights of their own.
	one := rows([][]float64{{3}, {1}, {2}, {1}, {0}}, []float64{0, 0, 0, 0, 1})
	good, _ = splitGeneral(one, 2, false)
	if got := seqs(good); !slices.Equal(got, []int{1, 3}) || good[0].w != 0 {
		t.Errorf("one objective: good %v, weight %v", got, good[0].w)
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestMultiObjectiveObservations: a trial is observed with the losses of
// its last result, or of the latest result that had every objective;
// maximised objectives are negated; failed and incomplete trials are
// dropped.
func TestMultiObjectiveObservations(t *testing.T) {
	objs := hone.Objectives{{Metric: "f1", Mode: hone.Max}, {Metric: "f2"}}
	below := 2.0
	s := mustNew(t, motest.ZDTSpace(), Options{Objectives: objs, Constraints: hone.Constraints{{Metric: "mem", Below: &below}}, NumSamples: -1})
	for i := range 4 {
		if _, err := s.Suggest(fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	s.OnTrialComplete("0", motest.Result([]float64{1, 2}, 3), false)
	s.OnResult("1", motest.Result([]float64{4, 5}, 1))
	s.OnTrialComplete("1", &hone.Result{Metrics: map[string]any{"f1": 9}}, false)
	s.OnTrialComplete("2", motest.Result([]float64{1, 1}), true)
	s.OnTrialComplete("3", &hone.Result{Metrics: map[string]any{"f1": math.NaN(), "f2": 1}}, false)
	if len(s.obs) != 2 {
		t.Fatalf("%d observations, want 2", len(s.obs))
	}
	if o := s.obs[0]; !slices.Equal(o.losses, []float64{-1, 2}) || o.viol != 1 {
		t.Errorf("first: losses %v, violation %v", o.losses, o.viol)
	}
	if o := s.obs[1]; !slices.Equal(o.losses, []float64{-4, 5}) || o.viol != 0 {
		t.Errorf("second: losses %v, violation %v", o.losses, o.viol)
	}
}

// TestMultiObjectiveOptions: objectives replace metric and mode; rungs
// with several objectives are accepted, the fidelity check refused;
// CheckObjectives wants the experiment's objectives and constraints.
func TestMultiObjectiveOptions(t *testing.T) {
	var pe *hone.ParamError
	rs := mustNew(t, motest.ZDTSpace(), Options{Objectives: motest.Objectives(), NumSamples: 5, Rungs: &Rungs{TimeAttr: "training_iteration", Budgets: []float64{1, 3}}})
	if err := rs.CheckObjectives(motest.Objectives(), nil); err != nil {
		t.Errorf("rungs with two objectives: %v", err)
	}
	_, err := New(motest.ZDTSpace(), Options{Objectives: motest.Objectives(), NumSamples: 5, FidelityCheck: true, Rungs: &Rungs{TimeAttr: "training_iteration", Budgets: []float64{1, 3}}})
	if !errors.As(err, &pe) || pe.Param != "fidelity_check" {
		t.Errorf("fidelity check with two objectives: %v", err)
	}
	_, err = New(motest.ZDTSpace(), Options{Objectives: hone.Objectives{{Metric: "a"}, {Metric: "a"}}, NumSamples: 5})
	if !errors.As(err, &pe) || pe.Param != "objectives" {
		t.Errorf("twice the same metric: %v", err)
	}
	s := mustNew(t, motest.ZDTSpace(), Options{Objectives: motest.Objectives(), NumSamples: 5})
	if err := s.CheckObjectives(motest.Objectives(), nil); err != nil {
		t.Errorf("its objectives: %v", err)
	}
	if err := s.CheckObjectives(motest.Objectives()[:1], nil); !errors.As(err, &pe) || pe.Param != "objectives" {
		t.Errorf("other objectives: %v", err)
	}
	s.SetRungs("training_iteration", []float64{1, 3})
	if ta, bs := s.Rungs(); ta != "training_iteration" || !slices.Equal(bs, []float64{1, 3}) {
		t.Errorf("rungs set with two objectives: %q %v", ta, bs)
	}
	one := mustNew(t, motest.ZDTSpace(), Options{Metric: "f1", NumSamples: 5, Rungs: &Rungs{TimeAttr: "training_iteration", Budgets: []float64{1, 3}}})
	if err := one.CheckObjectives(hone.Objectives{{Metric: "f1", Mode: hone.Min}}, nil); err != nil {
		t.Errorf("one objective with rungs: %v", err)
	}
}

// TestMultiObjectiveState: determinism, and a searcher restored from a
// snapshot with observations and pending trials suggests what the
// original does; a snapshot of other objectives is refused.
func TestMultiObjectiveState(t *testing.T) {
	below := 4.0
	opts := Options{Objectives: motest.Objectives(), Constraints: hone.Constraints{{Metric: "f2", Below: &below}},
		NumSamples: -1, NStartupTrials: 5, Multivariate: true, ConstantLiar: true, Seed: 3}
	step := func(s *Searcher, i int) hone.Config {
		id := fmt.Sprint(i)
		cfg, err := s.Suggest(id)
		if err != nil {
			t.Fatal(err)
		}
		if i >= 2 {
			prev := fmt.Sprint(i - 2)
			s.OnResult(prev, motest.Result([]float64{float64(i % 5), float64(i % 7)}))
			s.OnTrialComplete(prev, nil, i%9 == 0)
		}
		return cfg
	}
	a, c := mustNew(t, motest.ZDTSpace(), opts), mustNew(t, motest.ZDTSpace(), opts)
	for i := range 20 {
		if ca, cc := step(a, i), step(c, i); !reflect.DeepEqual(ca, cc) {
			t.Fatalf("suggestion %d differs between two searchers of one seed", i)
		}
	}
	data, err := a.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	o2 := opts
	o2.Seed = 77
	b := mustNew(t, motest.ZDTSpace(), o2)
	if err := b.UnmarshalState(data); err != nil {
		t.Fatal(err)
	}
	for i := 20; i < 40; i++ {
		if ca, cb := step(a, i), step(b, i); !reflect.DeepEqual(ca, cb) {
			t.Fatalf("suggestion %d: %v, restored %v", i, ca, cb)
		}
	}
	o3 := opts
	o3.Constraints = nil
	if err := mustNew(t, motest.ZDTSpace(), o3).UnmarshalState(data); err == nil {
		t.Error("a snapshot under a constraint restored into a searcher without")
	}
	o4 := opts
	o4.Objectives, o4.Constraints = nil, nil
	o4.Metric = "f1"
	if err := mustNew(t, motest.ZDTSpace(), o4).UnmarshalState(data); err == nil {
		t.Error("a snapshot of two objectives restored into a searcher of one")
	}
}

// TestWeightedJointWidth: with weights of their own (several objectives),
// the spread rule takes the weighted standard deviation and the effective
// number of observations, (Σw)²/Σw², so that observations of almost no
// weight do not widen the kernels.
func TestWeightedJointWidth(t *testing.T) {
	xs := [][]float64{{0.40}, {0.42}, {0.44}, {0.95}}
	none := make([]bool, len(xs))
	own := []float64{1, 1, 1, 1e-12}
	d, span := 1, 1.0
	got := jointWidth(xs, none, own, 0, d, span, 0.001)
	// The three heavy points: mean 0.42, variance 0.0008/3, m ≈ 3.
	want := onGrid(0.2 * math.Sqrt(12) * math.Sqrt(0.0008/3) * math.Pow(3, -1/float64(d+4)))
	if math.Abs(got-want) > 1e-6 {
		t.Errorf("weighted width %v, want %v", got, want)
	}
	if plain := jointWidth(xs, none, nil, 0, d, span, 0.001); !(plain > 2*got) {
		t.Errorf("unweighted width %v is not wider than the weighted %v", plain, got)
	}
}

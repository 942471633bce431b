package bohb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/space"
)

var (
	_ interface {
		hone.Searcher
		hone.Stateful
		Pauser
	} = (*Searcher)(nil)
)

func mustNew(t *testing.T, sp space.Space, o Options) *Searcher {
	t.Helper()
	s, err := New(sp, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// result is a result of metric "loss" = v that crossed budget b (b < 0: no
// hyperband_info).
func result(id string, v, b float64) *hone.Result {
	m := map[string]any{"loss": v}
	if b >= 0 {
		m[InfoKey] = map[string]any{BudgetKey: b}
	}
	return &hone.Result{TrialID: id, Metrics: m}
}

func xy() space.Space { return space.Space{"x": space.Uniform(0, 1), "y": space.Uniform(0, 1)} }

// run suggests n trials, each fed once at budget b with loss f(cfg) and
// completed, and returns the configurations.
func run(t *testing.T, s *Searcher, n int, b float64, f func(hone.Config) float64) []hone.Config {
	t.Helper()
	var out []hone.Config
	for range n {
		id := fmt.Sprintf("t%d", s.Suggested())
		cfg, err := s.Suggest(id)
		if err != nil {
			t.Fatal(err)
		}
		r := result(id, f(cfg), b)
		s.OnResult(id, r)
		s.OnTrialComplete(id, r, false)
		out = append(out, cfg)
	}
	return out
}

func TestOptions(t *testing.T) {
	sp := xy()
	s := mustNew(t, sp, Options{Metric: "loss", Mode: hone.Min, NumSamples: -1})
	want := DefaultOptions()
	want.Metric, want.Mode, want.NumSamples, want.MinPointsInModel = "loss", hone.Min, -1, 3
	if !reflect.DeepEqual(s.opts, want) {
		t.Errorf("options = %+v, want %+v", s.opts, want)
	}
	// A minimum below dim+1 is raised, as in HpBandSter; a negative random
	// fraction means 0.
	s = mustNew(t, sp, Options{Metric: "loss", Mode: hone.Max, MinPointsInModel: 1, RandomFraction: -1})
	if s.opts.MinPointsInModel != 3 || s.opts.RandomFraction != 0 {
		t.Errorf("options = %+v", s.opts)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Mode: hone.Min}, "metric is required"},
		{Options{Metric: "loss", Mode: "up"}, "mode"},
		{Options{Metric: "loss", Mode: hone.Min, NumSamples: -2}, "num_samples"},
		{Options{Metric: "loss", Mode: hone.Min, MaxConcurrent: -1}, "max_concurrent"},
		{Options{Metric: "loss", Mode: hone.Min, MinPointsInModel: -1}, "min_points_in_model"},
		{Options{Metric: "loss", Mode: hone.Min, TopNPercent: 100}, "top_n_percent"},
		{Options{Metric: "loss", Mode: hone.Min, NumCandidates: -1}, "candidates"},
		{Options{Metric: "loss", Mode: hone.Min, RandomFraction: 1.5}, "random_fraction"},
		{Options{Metric: "loss", Mode: hone.Min, RandomFraction: math.NaN()}, "random_fraction"},
		{Options{Metric: "loss", Mode: hone.Min, BandwidthFactor: -3}, "bandwidth_factor"},
		{Options{Metric: "loss", Mode: hone.Min, MinBandwidth: math.Inf(1)}, "min_bandwidth"},
		{Options{Metric: "loss", Mode: hone.Min, Points: []map[string]any{{"z": 1}}}, `points_to_evaluate[0]: key "z"`},
	} {
		_, err := New(sp, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error about %s", c.o, err, c.want)
		}
	}
	if _, err := New(space.Space{"x": space.Uniform(1, 0)}, Options{Metric: "loss", Mode: hone.Min}); err == nil {
		t.Error("New accepted an invalid space")
	}
}

func TestPointsAndNumSamples(t *testing.T) {
	sp := space.Space{"x": space.Uniform(0, 1), "c": space.Choice("a", "b"), "k": 7}
	points := []map[string]any{{"x": 0.25, "c": "b"}, {"x": 0.75}}
	s := mustNew(t, sp, Options{Metric: "loss", Mode: hone.Min, NumSamples: 4, Points: points, Seed: 3})
	points[0]["x"] = 0.5 // the searcher has its own copy
	cfgs := []hone.Config{}
	for i := range 4 {
		cfg, err := s.Suggest(fmt.Sprint(i))
		if err != nil {
			t.Fatal(err)
		}
		if err := sp.Check(cfg); err != nil {
			t.Fatal(err)
		}
		cfgs = append(cfgs, cfg)
	}
	if cfgs[0]["x"] != 0.25 || cfgs[0]["c"] != "b" || cfgs[0]["k"] != 7 || cfgs[1]["x"] != 0.75 {
		t.Errorf("points not first: %v", cfgs)
	}
	if _, err := s.Suggest("4"); !errors.Is(err, hone.ErrSearchDone) {
		t.Errorf("Suggest after NumSamples = %v, want ErrSearchDone", err)
	}
	s = mustNew(t, sp, Options{Metric: "loss", Mode: hone.Min, NumSamples: 1, Points: points})
	if _, err := s.Suggest("0"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Suggest("1"); !errors.Is(err, hone.ErrSearchDone) {
		t.Errorf("points beyond NumSamples: %v", err)
	}
}

func TestDeterministic(t *testing.T) {
	sp := space.Space{"x": space.Uniform(0, 1), "n": space.RandInt(1, 10), "c": space.Choice("a", "b", "c")}
	f := func(c hone.Config) float64 { return c["x"].(float64) + float64(c["n"].(int))/10 }
	o := Options{Metric: "loss", Mode: hone.Min, NumSamples: -1, Seed: 42}
	a := run(t, mustNew(t, sp, o), 80, 1, f)
	b := run(t, mustNew(t, sp, o), 80, 1, f)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different suggestions")
	}
	o.Seed = 43
	if c := run(t, mustNew(t, sp, o), 80, 1, f); reflect.DeepEqual(a, c) {
		t.Fatal("different seeds, same suggestions")
	}
}

func TestModelNeedsEnoughPoints(t *testing.T) {
	// dim 2 → min points 3; the bad set needs 3 rows: 6 observations.
	s := mustNew(t, xy(), Options{Metric: "loss", Mode: hone.Min, NumSamples: -1})
	f := func(c hone.Config) float64 { return c["x"].(float64) }
	run(t, s, 5, 1, f)
	if _, ok := s.ModelBudget(); ok {
		t.Fatal("model with 5 observations")
	}
	run(t, s, 1, 1, f)
	if b, ok := s.ModelBudget(); !ok || b != 1 {
		t.Fatalf("no model at budget 1 with 6 observations (%v, %v)", b, ok)
	}

	// A larger MinPointsInModel delays the model.
	s = mustNew(t, xy(), Options{Metric: "loss", Mode: hone.Min, NumSamples: -1, MinPointsInModel: 8})
	run(t, s, 10, 1, f)
	if _, ok := s.ModelBudget(); ok {
		t.Fatal("model with 10 observations and min points 8 (good 8, bad 2)")
	}
	run(t, s, 1, 1, f)
	if _, ok := s.ModelBudget(); !ok {
		t.Fatal("no model with 11 observations and min points 8 (good 8, bad 3)")
	}
}

func TestLargestBudget(t *testing.T) {
	s := mustNew(t, xy(), Options{Metric: "loss", Mode: hone.Min, NumSamples: -1})
	f := func(c hone.Config) float64 { return c["y"].(float64) }
	run(t, s, 4, 1, f)
	run(t, s, 5, 3, f) // budget 3 has data but not enough yet
	if _, ok := s.ModelBudget(); ok {
		t.Fatal("model too early")
	}
	run(t, s, 2, 1, f)
	if b, _ := s.ModelBudget(); b != 1 {
		t.Fatalf("model budget %v, want 1", b)
	}
	if s.Observations(1) != 6 || s.Observations(3) != 5 {
		t.Fatalf("observations %d, %d", s.Observations(1), s.Observations(3))
	}
	run(t, s, 1, 3, f)
	if b, _ := s.ModelBudget(); b != 3 {
		t.Fatalf("model budget %v, want 3", b)
	}
	// Budget 1's data is dropped, and further budget-1 results are ignored;
	// more budget-9 data does not replace the model before it fits.
	if s.Observations(1) != 0 {
		t.Fatalf("budget 1 still has %d observations", s.Observations(1))
	}
	run(t, s, 10, 1, f)
	run(t, s, 5, 9, f)
	if s.Observations(1) != 0 || s.Observations(9) != 5 {
		t.Fatalf("observations %d, %d", s.Observations(1), s.Observations(9))
	}
	if b, _ := s.ModelBudget(); b != 3 {
		t.Fatalf("model budget %v, want 3", b)
	}
}

func TestFeedOncePerBudget(t *testing.T) {
	s := mustNew(t, xy(), Options{Metric: "acc", Mode: hone.Max, NumSamples: -1})
	if _, err := s.Suggest("a"); err != nil {
		t.Fatal(err)
	}
	r := func(acc, b float64) *hone.Result {
		return &hone.Result{Metrics: map[string]any{"acc": acc, InfoKey: map[string]any{BudgetKey: b}}}
	}
	s.OnResult("a", &hone.Result{Metrics: map[string]any{"acc": 0.5}}) // no budget
	s.OnResult("a", &hone.Result{Metrics: map[string]any{InfoKey: map[string]any{BudgetKey: 1.0}}})
	if s.Observations(1) != 0 {
		t.Fatal("fed without a budget or without the metric")
	}
	s.OnResult("a", r(0.5, 1))
	s.OnResult("a", r(0.6, 1))
	s.OnTrialComplete("a", r(0.6, 1), false)
	if n := s.Observations(1); n != 1 {
		t.Fatalf("%d observations at budget 1, want 1", n)
	}
	if l := s.data[1].losses[0]; l != -0.5 {
		t.Fatalf("loss %v, want -0.5 (max mode, first result)", l)
	}
	// After completion the trial is forgotten.
	s.OnResult("a", r(0.7, 3))
	if s.Observations(3) != 0 {
		t.Fatal("fed a completed trial")
	}

	// Another trial: budget 1 then 3 via OnResult, 9 via OnTrialComplete
	// (a trial stopped at a milestone is not told the result).
	if _, err := s.Suggest("b"); err != nil {
		t.Fatal(err)
	}
	s.OnResult("b", r(0.1, 1))
	s.OnResult("b", r(math.NaN(), 3))
	s.OnTrialComplete("b", r(math.Inf(1), 9), true)
	if s.Observations(1) != 2 || s.Observations(3) != 1 || s.Observations(9) != 1 {
		t.Fatalf("observations %d, %d, %d", s.Observations(1), s.Observations(3), s.Observations(9))
	}
	if !math.IsInf(s.data[3].losses[0], 1) || !math.IsInf(s.data[9].losses[0], 1) {
		t.Fatalf("non-finite losses: %v, %v; want +Inf", s.data[3].losses, s.data[9].losses)
	}
	// Unknown trials are ignored; integer budgets and hone.Config infos work.
	s.OnResult("zzz", r(0.1, 1))
	if _, err := s.Suggest("c"); err != nil {
		t.Fatal(err)
	}
	s.OnResult("c", &hone.Result{Metrics: map[string]any{"acc": 1, InfoKey: hone.Config{BudgetKey: 1}}})
	if s.Observations(1) != 3 {
		t.Fatalf("%d observations at budget 1, want 3", s.Observations(1))
	}
}

func TestMaxConcurrentPause(t *testing.T) {
	s := mustNew(t, xy(), Options{Metric: "loss", Mode: hone.Min, NumSamples: -1, MaxConcurrent: 2})
	suggest := func(id string) error { _, err := s.Suggest(id); return err }
	if suggest("a") != nil || suggest("b") != nil {
		t.Fatal("first two suggestions failed")
	}
	if err := suggest("c"); !errors.Is(err, hone.ErrNotNow) {
		t.Fatalf("third suggestion: %v, want ErrNotNow", err)
	}
	s.OnPause("a")
	s.OnPause("a") // twice is once
	if s.Live() != 1 {
		t.Fatalf("Live = %d", s.Live())
	}
	if err := suggest("c"); err != nil {
		t.Fatalf("after a pause: %v", err)
	}
	if err := suggest("d"); !errors.Is(err, hone.ErrNotNow) {
		t.Fatalf("at the limit again: %v", err)
	}
	s.OnUnpause("a")
	if s.Live() != 3 {
		t.Fatalf("Live = %d, want 3 (over the limit after unpause)", s.Live())
	}
	s.OnTrialComplete("b", nil, false)
	if err := suggest("d"); !errors.Is(err, hone.ErrNotNow) {
		t.Fatalf("still at the limit: %v", err)
	}
	s.OnPause("c")
	s.OnTrialComplete("c", nil, false) // a paused trial completes
	if s.Live() != 1 {
		t.Fatalf("Live = %d, want 1", s.Live())
	}
	if err := suggest("d"); err != nil {
		t.Fatalf("below the limit: %v", err)
	}
	s.OnPause("unknown")
	s.OnUnpause("unknown")
	if s.Live() != 2 {
		t.Fatalf("Live = %d, want 2", s.Live())
	}
}

// modelPicks feeds n observations of f at one budget and then returns
// the configurations of the next k suggestions that came from the model.
func modelPicks(t *testing.T, sp space.Space, seed uint64, n, k int, f func(hone.Config) float64) (picks []hone.Config, total int) {
	t.Helper()
	s := mustNew(t, sp, Options{Metric: "loss", Mode: hone.Min, NumSamples: -1, Seed: seed})
	run(t, s, n, 1, f)
	for range k {
		id := fmt.Sprintf("p%d", s.Suggested())
		cfg, err := s.Suggest(id)
		if err != nil {
			t.Fatal(err)
		}
		if s.lastFromModel {
			picks = append(picks, cfg)
		}
		s.OnTrialComplete(id, nil, false)
	}
	return picks, k
}

func TestConcentratesOnGoodRegion(t *testing.T) {
	f := func(c hone.Config) float64 {
		x, y := c["x"].(float64), c["y"].(float64)
		return (x-0.3)*(x-0.3) + (y-0.8)*(y-0.8)
	}
	inside := func(c hone.Config) bool { return math.Sqrt(f(c)) < 0.25 }
	for seed := range uint64(3) {
		picks, total := modelPicks(t, xy(), seed, 60, 300, f)
		// About 2/3 of the suggestions come from the model.
		if len(picks) < total/2 || len(picks) > 5*total/6 {
			t.Errorf("seed %d: %d of %d suggestions from the model", seed, len(picks), total)
		}
		in := 0
		for _, c := range picks {
			if inside(c) {
				in++
			}
		}
		// A uniform point is within 0.25 of (0.3, 0.8) with probability
		// about 0.18.
		if frac := float64(in) / float64(len(picks)); frac < 0.7 {
			t.Errorf("seed %d: %.2f of the model's picks within 0.25 of the optimum, want >= 0.7", seed, frac)
		}
	}
}

func TestBestCategoryDominates(t *testing.T) {
	sp := space.Space{"c": space.Choice("a", "b", "c", "d"), "x": space.Uniform(0, 1)}
	f := func(c hone.Config) float64 {
		l := c["x"].(float64) / 10
		if c["c"] != "c" {
			l++
		}
		return l
	}
	for seed := range uint64(3) {
		picks, _ := modelPicks(t, sp, seed, 40, 200, f)
		n := 0
		for _, c := range picks {
			if c["c"] == "c" {
				n++
			}
		}
		if frac := float64(n) / float64(len(picks)); frac < 0.8 {
			t.Errorf("seed %d: category c in %.2f of the model's picks, want >= 0.8", seed, frac)
		}
	}
}

func TestMixedSpaceDecodes(t *testing.T) {
	sp := space.Space{
		"lr":    space.LogUniform(1e-4, 1e-1),
		"n":     space.RandInt(1, 10),
		"q":     space.QUniform(0, 1, 0.25),
		"m":     space.Normal(0, 1),
		"g":     space.GridSearch(16, 32),
		"c":     space.Choice(true, false, "x"),
		"model": space.Space{"w": space.QLogRandInt(8, 512, 8)},
		"sum":   space.Func(func(c hone.Config) any { return c["n"].(int) * 2 }),
	}
	f := func(c hone.Config) float64 {
		if c["sum"] != c["n"].(int)*2 {
			t.Fatalf("func not resolved: %v", c)
		}
		return math.Abs(math.Log10(c["lr"].(float64))+2) + float64(c["n"].(int))/10
	}
	s := mustNew(t, sp, Options{Metric: "loss", Mode: hone.Min, NumSamples: -1, Seed: 9})
	for _, c := range run(t, s, 120, 1, f) {
		if err := sp.Check(c); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := s.ModelBudget(); !ok {
		t.Fatal("no model")
	}
}

func TestStateRoundTrip(t *testing.T) {
	sp := space.Space{"x": space.Uniform(0, 1), "c": space.Choice("a", "b", "c"), "n": space.RandInt(0, 5)}
	f := func(c hone.Config) float64 {
		l := c["x"].(float64)
		if c["c"] == "b" {
			l -= 1
		}
		return l
	}
	o := Options{Metric: "loss", Mode: hone.Min, NumSamples: 200, Seed: 5, MaxConcurrent: 4, ConstantLiar: true,
		Points: []map[string]any{{"x": 0.5}, {"c": "zz"}}}
	a := mustNew(t, sp, o)
	run(t, a, 30, 1, f)
	run(t, a, 12, 3, f)
	// Two live trials: one paused after a budget was fed, one running.
	for _, id := range []string{"live1", "live2"} {
		if _, err := a.Suggest(id); err != nil {
			t.Fatal(err)
		}
	}
	a.OnResult("live1", result("live1", 0.01, 1))
	a.OnPause("live1")
	a.OnResult("live2", result("live2", math.Inf(1), 3))
	data, err := a.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	o2 := o
	o2.Seed = 99
	b := mustNew(t, sp, o2)
	if err := b.UnmarshalState(data); err != nil {
		t.Fatal(err)
	}
	data2, err := b.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, data2) {
		t.Fatalf("state changed in a round trip:\n%s\n%s", data, data2)
	}
	if !reflect.DeepEqual(a.model, b.model) {
		t.Fatal("restored model differs")
	}
	// Both continue identically.
	a.OnUnpause("live1")
	b.OnUnpause("live1")
	a.OnResult("live1", result("live1", 0.01, 1)) // already fed
	b.OnResult("live1", result("live1", 0.01, 1))
	a.OnTrialComplete("live1", nil, false)
	b.OnTrialComplete("live1", nil, false)
	ca := run(t, a, 40, 3, f)
	cb := run(t, b, 40, 3, f)
	if !reflect.DeepEqual(ca, cb) {
		t.Fatal("restored searcher suggests differently")
	}
	if a.Live() != b.Live() || a.Observations(3) != b.Observations(3) {
		t.Fatal("restored searcher counts differently")
	}

	// Unchanged on error.
	c := mustNew(t, sp, o)
	before, _ := c.MarshalState()
	for _, bad := range []string{
		`{`,
		`{"version":2}`,
		strings.Replace(string(data), `"num_samples":200`, `"num_samples":100`, 1),
		strings.Replace(string(data), `"dim":3`, `"dim":2`, 1),
		strings.Replace(string(data), `"rng":"`, `"rng":"AA`, 1),
	} {
		if err := c.UnmarshalState([]byte(bad)); err == nil {
			t.Errorf("UnmarshalState accepted %.60s", bad)
		}
	}
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	st.Budgets[0].X[0][1] = 7 // not a category index of 3
	if bad, _ := json.Marshal(st); c.UnmarshalState(bad) == nil {
		t.Error("UnmarshalState accepted a bad category")
	}
	after, _ := c.MarshalState()
	if !bytes.Equal(before, after) {
		t.Error("failed UnmarshalState changed the searcher")
	}
}

// feedBoth suggests a trial and feeds it at budget 1 with loss lo and, if
// hi is not NaN, at budget 3 with loss hi, then completes it.
func feedBoth(t *testing.T, s *Searcher, lo func(hone.Config) float64, hi func(hone.Config) float64) {
	t.Helper()
	id := fmt.Sprintf("t%d", s.Suggested())
	cfg, err := s.Suggest(id)
	if err != nil {
		t.Fatal(err)
	}
	s.OnResult(id, result(id, lo(cfg), 1))
	last := result(id, lo(cfg), -1)
	if hi != nil {
		last = result(id, hi(cfg), 3)
		s.OnResult(id, last)
	}
	s.OnTrialComplete(id, last, false)
}

// Budget 1 ranks trials against budget 3. With the check, budget 1 is not
// modelled once that is seen, and while budget 3 has too few points to
// fit, suggestions are random; without it, the model stays on budget 1.
func TestFidelityCheck(t *testing.T) {
	sp := space.Space{"a": space.Uniform(0, 1), "b": space.Uniform(0, 1), "c": space.Uniform(0, 1), "d": space.Uniform(0, 1)}
	lo := func(c hone.Config) float64 { return c["a"].(float64) }
	hi := func(c hone.Config) float64 { return -c["a"].(float64) }
	for _, check := range []bool{false, true} {
		s := mustNew(t, sp, Options{Metric: "loss", Mode: hone.Min, NumSamples: -1, FidelityCheck: check})
		for i := range 20 {
			if i < 7 {
				feedBoth(t, s, lo, hi)
			} else {
				feedBoth(t, s, lo, nil)
			}
		}
		b, ok := s.ModelBudget()
		if check {
			if f := s.Floor(); f != 3 {
				t.Fatalf("floor %v, want 3; links %+v", f, s.Links())
			}
			if ok {
				t.Fatalf("with the check: a model at budget %v; want none (7 points at 3, 10 needed)", b)
			}
		} else {
			if !ok || b != 1 || s.Floor() != 0 || s.Links() != nil {
				t.Fatalf("without the check: model %v %v, floor %v; want the model at 1, floor 0", b, ok, s.Floor())
			}
			continue
		}
		for range 4 {
			feedBoth(t, s, lo, hi)
		}
		if b, ok := s.ModelBudget(); !ok || b != 3 {
			t.Fatalf("with the check and 11 points at 3: model %v %v, want 3", b, ok)
		}
		// A round trip keeps the losses and the floor.
		data, err := s.MarshalState()
		if err != nil {
			t.Fatal(err)
		}
		r := mustNew(t, sp, Options{Metric: "loss", Mode: hone.Min, NumSamples: -1, FidelityCheck: true})
		if err := r.UnmarshalState(data); err != nil {
			t.Fatal(err)
		}
		if b, ok := r.ModelBudget(); !ok || b != 3 || r.Floor() != 3 {
			t.Fatalf("restored: model %v %v, floor %v", b, ok, r.Floor())
		}
		again, _ := r.MarshalState()
		if !bytes.Equal(again, data) {
			t.Fatalf("state changed across a round trip:\n%s\n%s", data, again)
		}
	}
}

// With consistent budgets the check changes nothing: the same suggestions.
func TestFidelityCheckConsistent(t *testing.T) {
	f := func(c hone.Config) float64 { return c["x"].(float64) + c["y"].(float64) }
	var out [2][]hone.Config
	for i, check := range []bool{false, true} {
		s := mustNew(t, xy(), Options{Metric: "loss", Mode: hone.Min, NumSamples: -1, Seed: 4, FidelityCheck: check})
		for range 30 {
			id := fmt.Sprintf("t%d", s.Suggested())
			cfg, err := s.Suggest(id)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = append(out[i], cfg)
			s.OnResult(id, result(id, f(cfg), 1))
			s.OnResult(id, result(id, 2*f(cfg), 3))
			s.OnTrialComplete(id, result(id, 3*f(cfg), 9), false)
		}
	}
	if fmt.Sprint(out[0]) != fmt.Sprint(out[1]) {
		t.Fatal("the check changed the suggestions of consistent budgets")
	}
}

// TestPendingTrials: the constant liar's pending trials are the live ones
// not paused and not observed at the model's budget or above, in the
// order they were suggested.
func TestPendingTrials(t *testing.T) {
	s := mustNew(t, xy(), Options{Metric: "loss", Mode: hone.Min, NumSamples: -1, Seed: 1, ConstantLiar: true})
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		if _, err := s.Suggest(id); err != nil {
			t.Fatal(err)
		}
	}
	s.OnResult("b", result("b", 1, 9)) // observed at the budget: not pending
	s.OnResult("c", result("c", 1, 3)) // below it: pending
	s.OnPause("d")
	s.OnTrialComplete("e", nil, false)
	got := s.pending(9)
	want := [][]float64{s.trials["a"].x, s.trials["c"].x}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pending = %v, want the encodings of a and c %v", got, want)
	}
	if got := s.pending(27); len(got) != 3 {
		t.Fatalf("%d pending at budget 27, want 3 (a, b, c)", len(got))
	}
}

// TestConstantLiarNoRepeats: sixteen suggestions from one model over a
// grid of 36 choices, none answered: without the constant liar many repeat
// a configuration already pending; with it none does.
func TestConstantLiarNoRepeats(t *testing.T) {
	vals := []any{0, 1, 2, 3, 4, 5}
	sp := space.Space{"a": space.Choice(vals...), "b": space.Choice(vals...)}
	f := func(c hone.Config) float64 {
		a, b := float64(c["a"].(int)), float64(c["b"].(int))
		return (a-2)*(a-2) + (b-3)*(b-3)
	}
	distinct := func(liar bool, seed uint64) int {
		o := AsyncOptions()
		o.Metric, o.Mode, o.NumSamples, o.Seed, o.RandomFraction, o.ConstantLiar = "loss", hone.Min, -1, seed, -1, liar
		s := mustNew(t, sp, o)
		run(t, s, 30, 1, f)
		seen := map[string]bool{}
		for range 16 {
			cfg, err := s.Suggest(fmt.Sprintf("p%d", s.Suggested()))
			if err != nil {
				t.Fatal(err)
			}
			seen[fmt.Sprint(cfg["a"], cfg["b"])] = true
		}
		return len(seen)
	}
	for seed := range uint64(5) {
		with, without := distinct(true, seed), distinct(false, seed)
		if with != 16 {
			t.Errorf("seed %d: %d distinct of 16 pending suggestions with the liar, want 16", seed, with)
		}
		if without > 12 {
			t.Errorf("seed %d: %d distinct of 16 without the liar; the test needs repeats there", seed, without)
		}
	}
}

func TestAsyncOptions(t *testing.T) {
	o := AsyncOptions()
	def := DefaultOptions()
	if !o.ConstantLiar || o.MinBandwidth != 0.02 || o.TopNPercent != def.TopNPercent || o.RandomFraction != def.RandomFraction ||
		o.BandwidthFactor != def.BandwidthFactor || o.NumCandidates != def.NumCandidates {
		t.Fatalf("AsyncOptions = %+v", o)
	}
}

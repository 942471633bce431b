package asha

import (
	"errors"
	"flag"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/scenario"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of the scenario scripts in testdata/")

func factory(args map[string]string) (hone.Scheduler, error) {
	cfg := DefaultConfig()
	num := func(k string, dst *float64) {
		if v, ok := args[k]; ok {
			*dst, _ = strconv.ParseFloat(v, 64)
		}
	}
	num("max_t", &cfg.MaxT)
	num("grace", &cfg.GracePeriod)
	num("rf", &cfg.ReductionFactor)
	if v, ok := args["brackets"]; ok {
		cfg.Brackets, _ = strconv.Atoi(v)
	}
	if args["stop_last"] == "false" {
		cfg.StopLastTrials = false
	}
	if v, ok := args["time_attr"]; ok {
		cfg.TimeAttr = v
	}
	if v, ok := args["promotion"]; ok {
		cfg.Promotion = Promotion(v)
	}
	return New(cfg)
}

// TestScenarios pins docs/SEMANTICS.md §4 ASHA with scripts in testdata/.
func TestScenarios(t *testing.T) {
	scenario.Run(t, "testdata/*.txt", *rewrite, map[string]scenario.SchedulerFactory{"asha": factory})
}

// TestMilestones pins bracket s's rungs: grace·η^(k+s) for
// k < int(log(max_t/grace)/log(η) − s + 1) (see also TestRayRungs).
func TestMilestones(t *testing.T) {
	cases := []struct {
		maxT, grace, rf float64
		brackets        int
		want            [][]float64
	}{
		{100, 1, 4, 1, [][]float64{{1, 4, 16, 64}}},
		{81, 1, 3, 3, [][]float64{{1, 3, 9, 27, 81}, {3, 9, 27, 81}, {9, 27, 81}}},
		{9, 1, 3, 1, [][]float64{{1, 3, 9}}},
		{10, 2, 2, 2, [][]float64{{2, 4, 8}, {4, 8}}},
		{1, 1, 2, 1, [][]float64{{1}}},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		cfg.MaxT, cfg.GracePeriod, cfg.ReductionFactor, cfg.Brackets = c.maxT, c.grace, c.rf, c.brackets
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for b, want := range c.want {
			got := s.Milestones(b)
			if len(got) != len(want) {
				t.Fatalf("max_t=%v grace=%v rf=%v bracket %d: %v, want %v", c.maxT, c.grace, c.rf, b, got, want)
			}
			for i := range want {
				if math.Abs(got[i]-want[i]) > 1e-9 {
					t.Fatalf("max_t=%v grace=%v rf=%v bracket %d: %v, want %v", c.maxT, c.grace, c.rf, b, got, want)
				}
			}
		}
	}
}

// TestCutoff checks the linear-interpolation percentile (numpy's default)
// and that NaN is ignored.
func TestCutoff(t *testing.T) {
	rec := func(v ...float64) map[string]float64 {
		m := map[string]float64{}
		for i, x := range v {
			m[strconv.Itoa(i)] = x
		}
		return m
	}
	cases := []struct {
		rec  map[string]float64
		rf   float64
		want float64
		ok   bool
	}{
		{rec(), 4, 0, false},
		{rec(math.NaN()), 4, 0, false},
		{rec(5), 4, 5, true},
		{rec(1, 2, 3, 4, 5), 4, 4, true},            // 75th percentile
		{rec(1, 2), 3, 1 + 2.0/3, true},             // 66.7th
		{rec(1, math.NaN(), 2), 3, 1 + 2.0/3, true}, // NaN ignored
		{rec(10, 0, 20, 30), 2, 15, true},           // median of 4
	}
	for i, c := range cases {
		g := &rung{recorded: map[string]float64{}}
		for id, v := range c.rec {
			g.record(id, v)
		}
		got, ok := cutoff(g.sorted, c.rf)
		if ok != c.ok || (ok && math.Abs(got-c.want) > 1e-12) {
			t.Errorf("case %d: cutoff = %v, %v; want %v, %v", i, got, ok, c.want, c.ok)
		}
	}
}

// TestBracketSoftmax: with brackets of 4, 3 and 2 rungs the assignment
// probabilities are softmax(4,3,2) ≈ 0.665, 0.245, 0.090.
func TestBracketSoftmax(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxT, cfg.GracePeriod, cfg.ReductionFactor, cfg.Brackets = 64, 1, 4, 3
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &fixedRand{r: rand.New(rand.NewPCG(1, 2))}
	counts := make([]int, 3)
	const n = 20000
	for i := 0; i < n; i++ {
		tr := &hone.Trial{ID: strconv.Itoa(i)}
		s.OnTrialAdd(c, tr)
		counts[s.Bracket(tr.ID)]++
	}
	e := math.E
	z := 1 + 1/e + 1/(e*e)
	want := []float64{1 / z, 1 / e / z, 1 / (e * e) / z}
	for i := range want {
		got := float64(counts[i]) / n
		if math.Abs(got-want[i]) > 0.015 { // > 4 standard deviations
			t.Errorf("bracket %d: frequency %.3f, want %.3f", i, got, want[i])
		}
	}
}

// A failed trial that is retried is added again (docs/SEMANTICS.md §3):
// it keeps the bracket it was given, whatever the random source draws
// now, and a trial that fails for good keeps its bracket too (its scores
// stay at the rungs it reached). Only OnTrialRemove forgets it.
func TestRetriedTrialKeepsItsBracket(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxT, cfg.GracePeriod, cfg.ReductionFactor, cfg.Brackets = 64, 1, 4, 3
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &fixedRand{r: rand.New(rand.NewPCG(3, 4))}
	var ids []string
	first := map[string]int{}
	for i := range 60 {
		tr := &hone.Trial{ID: strconv.Itoa(i)}
		s.OnTrialAdd(c, tr)
		ids = append(ids, tr.ID)
		first[tr.ID] = s.Bracket(tr.ID)
	}
	moved := 0
	for _, id := range ids {
		tr := &hone.Trial{ID: id}
		s.OnTrialError(c, tr)
		s.OnTrialAdd(c, tr) // the retry
		if b := s.Bracket(id); b != first[id] {
			moved++
		}
	}
	if moved > 0 {
		t.Fatalf("%d of %d retried trials changed bracket", moved, len(ids))
	}
	s.OnTrialRemove(c, &hone.Trial{ID: ids[0]})
	if b := s.Bracket(ids[0]); b != -1 {
		t.Fatalf("a removed trial is still in bracket %d", b)
	}
}

// fixedRand is a Control that only offers a random source (all OnTrialAdd
// uses).
type fixedRand struct {
	hone.Control
	r *rand.Rand
}

func (f *fixedRand) Rand() *rand.Rand { return f.r }

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		mut  func(*Config)
		want string
	}{
		{func(c *Config) { c.ReductionFactor = 1 }, "reduction_factor = 1: must be > 1"},
		{func(c *Config) { c.GracePeriod = -1 }, "grace_period = -1: must be > 0"},
		{func(c *Config) { c.MaxT = 0.5 }, "max_t = 0.5: must be >= grace_period (1)"},
		{func(c *Config) { c.Brackets = -1 }, "brackets = -1: must be >= 1"},
	} {
		cfg := DefaultConfig()
		c.mut(&cfg)
		if _, err := New(cfg); err == nil || err.Error() != "asha: "+c.want {
			t.Errorf("got %v, want %q", err, "asha: "+c.want)
		}
	}
}

// floorAdvisor is a fidelity.Advisor with a fixed floor.
type floorAdvisor float64

func (f floorAdvisor) Floor() float64 { return float64(f) }

// TestAdvisorFloor: below the advisor's floor a trial below the cutoff is
// recorded but not stopped; at or above it, ASHA cuts as Ray's does.
func TestAdvisorFloor(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxT, cfg.GracePeriod, cfg.ReductionFactor = 27, 1, 3
	for _, tc := range []struct {
		floor float64
		want  [2]hone.Decision // a weak trial's decision at rung 1 and at rung 3
	}{
		{0, [2]hone.Decision{hone.Stop, hone.Stop}},
		{1, [2]hone.Decision{hone.Stop, hone.Stop}},
		{3, [2]hone.Decision{hone.Continue, hone.Stop}},
		{9, [2]hone.Decision{hone.Continue, hone.Continue}},
	} {
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if tc.floor > 0 {
			s.SetAdvisor(floorAdvisor(tc.floor))
		}
		b := s.brackets[0]
		for i, score := range []float64{5, 6, 7} {
			for _, m := range []float64{1, 3} {
				if d, _, _ := b.onResult(strconv.Itoa(i), m, value{score: score}, Config{ReductionFactor: 3, StopLastTrials: true}, s.floor()); d != hone.Continue {
					t.Fatalf("floor %v: strong trial %d at %v: %v", tc.floor, i, m, d)
				}
			}
		}
		for k, m := range []float64{1, 3} {
			if d, _, _ := b.onResult("weak", m, value{}, Config{ReductionFactor: 3, StopLastTrials: true}, s.floor()); d != tc.want[k] {
				t.Errorf("floor %v: weak trial at rung %v: %v, want %v", tc.floor, m, d, tc.want[k])
			}
			if _, ok := b.rungAt(m).recorded["weak"]; !ok {
				t.Errorf("floor %v: weak trial not recorded at rung %v", tc.floor, m)
			}
		}
	}
}

func (b *bracket) rungAt(m float64) *rung {
	for _, g := range b.rungs {
		if g.milestone == m {
			return g
		}
	}
	return nil
}

func TestRungs(t *testing.T) {
	for _, tc := range []struct {
		maxT, grace, rf float64
		brackets        int
		want            []float64
	}{
		{100, 1, 4, 1, []float64{1, 4, 16, 64, 100}},
		{81, 1, 3, 3, []float64{1, 3, 9, 27, 81}},
		{27, 1, 3, 1, []float64{1, 3, 9, 27}},
	} {
		cfg := DefaultConfig()
		cfg.MaxT, cfg.GracePeriod, cfg.ReductionFactor, cfg.Brackets = tc.maxT, tc.grace, tc.rf, tc.brackets
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		attr, got := s.Rungs()
		if attr != hone.FieldTrainingIteration || !slices.Equal(got, tc.want) {
			t.Errorf("max_t %v grace %v rf %v brackets %d: rungs %s %v, want %v", tc.maxT, tc.grace, tc.rf, tc.brackets, attr, got, tc.want)
		}
	}
}

// control is the Control the budget-info test needs: the objective and a
// random source.
type control struct{ fixedRand }

func (control) Constraints() hone.Constraints { return nil }

func (control) Objectives() hone.Objectives {
	return hone.Objectives{{Metric: "loss", Mode: hone.Min}}
}

// TestBudgetInfo: with BudgetInfo, a result recorded at a rung carries
// hyperband_info.budget = the milestone, one between rungs nothing, the
// result that stops a trial at max_t carries max_t, and a finished
// trial's last result the rung it is recorded at; without it, results are
// left alone.
func TestBudgetInfo(t *testing.T) {
	budget := func(r *hone.Result) any {
		info, ok := r.Metrics[InfoKey].(map[string]any)
		if !ok {
			return nil
		}
		return info[BudgetKey]
	}
	res := func(iter int, loss float64) *hone.Result {
		return &hone.Result{TrialID: "a", TrainingIteration: iter, Metrics: map[string]any{"loss": loss}}
	}
	for _, on := range []bool{true, false} {
		cfg := DefaultConfig()
		cfg.MaxT, cfg.GracePeriod, cfg.ReductionFactor, cfg.BudgetInfo = 9, 1, 3, on
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		c := &control{fixedRand{r: rand.New(rand.NewPCG(1, 2))}}
		a, b := &hone.Trial{ID: "a"}, &hone.Trial{ID: "b"}
		s.OnTrialAdd(c, a)
		s.OnTrialAdd(c, b)
		want := func(r *hone.Result, w any) {
			t.Helper()
			if !on {
				w = nil
			}
			if got := budget(r); got != w {
				t.Errorf("BudgetInfo %v: iteration %d: budget %v, want %v", on, r.TrainingIteration, got, w)
			}
		}
		r1 := res(1, 0.5)
		s.OnResult(c, a, r1)
		want(r1, 1.0)
		r2 := res(2, 0.4)
		s.OnResult(c, a, r2)
		want(r2, nil)
		r3 := res(3, 0.3)
		s.OnResult(c, a, r3)
		want(r3, 3.0)
		r9 := res(9, 0.1)
		if d := s.OnResult(c, a, r9); d != hone.Stop {
			t.Errorf("at max_t: %v", d)
		}
		want(r9, 9.0)
		s.OnTrialComplete(c, a, r9)
		want(r9, 9.0)
		// b ends by itself between rungs 3 and 9 without reporting at 3.
		rb := res(5, 0.2)
		rb.TrialID = "b"
		s.OnTrialComplete(c, b, rb)
		want(rb, 3.0)
	}
}

// TestPromoteTop checks the top rule against its definition on random
// rungs: a trial goes on unless max(1, ⌊n/η⌋) or more of the n scores, its
// own included, are strictly better than its own.
func TestPromoteTop(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		rf := float64(2 + r.IntN(3))
		sorted := make([]float64, r.IntN(12))
		for i := range sorted {
			sorted[i] = float64(r.IntN(6)) // ties are common
		}
		slices.Sort(sorted)
		score := float64(r.IntN(6))
		better := 0
		for _, v := range sorted {
			if v > score {
				better++
			}
		}
		k := max(1, (len(sorted)+1)/int(rf))
		if got, want := PromoteTop.stops(sorted, score, rf), better >= k; got != want {
			t.Fatalf("top rule, rf %v, scores %v, score %v: stops %v, want %v", rf, sorted, score, got, want)
		}
	}
	if err := (Config{GracePeriod: 1, MaxT: 9, ReductionFactor: 3, Brackets: 1, Promotion: "best"}).Validate(); err == nil ||
		!strings.Contains(err.Error(), `allowed values are "percentile" and "top"`) {
		t.Errorf("Validate of promotion best: %v", err)
	}
}

// TestCheckObjectives: ASHA takes several objectives and constraints,
// refusing its own metric or mode with several objectives as a
// *hone.ParamError naming the parameter.
func TestCheckObjectives(t *testing.T) {
	two := hone.Objectives{{Metric: "acc", Mode: hone.Max}, {Metric: "latency_ms", Mode: hone.Min}}
	below := 100.0
	cs := hone.Constraints{{Metric: "mem_mb", Below: &below}}
	for _, c := range []struct {
		metric string
		mode   hone.Mode
		objs   hone.Objectives
		param  string
	}{
		{"", "", two, ""},
		{"loss", "", two[:1], ""},
		{"acc", "", two, "metric"},
		{"", hone.Max, two, "mode"},
	} {
		cfg := DefaultConfig()
		cfg.Metric, cfg.Mode = c.metric, c.mode
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		err = s.CheckObjectives(c.objs, cs)
		var pe *hone.ParamError
		switch {
		case c.param == "" && err != nil:
			t.Errorf("metric %q mode %q, %d objectives: %v", c.metric, c.mode, len(c.objs), err)
		case c.param != "" && (!errors.As(err, &pe) || pe.Plugin != "asha" || pe.Param != c.param):
			t.Errorf("metric %q mode %q: %v, want a *hone.ParamError for %s", c.metric, c.mode, err, c.param)
		}
	}
}

// TestStopsAhead pins the promotion rules with several objectives by hand
// (η = 3): top stops at max(1, ⌊n/3⌋) ahead; percentile at more than
// (n − 2)/3, never the first trial. They differ at n = 5 (k = 1 against
// more than 1) and n = 32 (10 against more than 10).
func TestStopsAhead(t *testing.T) {
	for _, c := range []struct {
		n, ahead  int
		top, pctl bool
	}{
		{1, 0, false, false},
		{2, 0, false, false}, {2, 1, true, true},
		{4, 0, false, false}, {4, 1, true, true},
		{5, 1, true, false}, {5, 2, true, true},
		{6, 1, false, false}, {6, 2, true, true},
		{32, 10, true, false}, {32, 11, true, true}, {32, 9, false, false},
	} {
		if got := PromoteTop.stopsAhead(c.ahead, c.n, 3); got != c.top {
			t.Errorf("top, n %d, %d ahead: stops %v, want %v", c.n, c.ahead, got, c.top)
		}
		if got := PromotePercentile.stopsAhead(c.ahead, c.n, 3); got != c.pctl {
			t.Errorf("percentile, n %d, %d ahead: stops %v, want %v", c.n, c.ahead, got, c.pctl)
		}
	}
}

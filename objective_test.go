package hone_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
)

// TestObjective pins the objective's defaults, the lookup of its value in
// a result and the loss it turns values into, against Mode's methods.
func TestObjective(t *testing.T) {
	r := &hone.Result{Metrics: map[string]any{"acc": 0.75, "nan": math.NaN(), "s": "x"}, TrainingIteration: 3}
	for _, tc := range []struct {
		metric string
		v      float64
		ok     bool
	}{
		{"acc", 0.75, true}, {hone.FieldTrainingIteration, 3, true}, {"missing", 0, false}, {"s", 0, false},
	} {
		v, ok := hone.Objective{Metric: tc.metric}.Value(r)
		if v != tc.v || ok != tc.ok {
			t.Errorf("Value(%s) = %v, %v; want %v, %v", tc.metric, v, ok, tc.v, tc.ok)
		}
	}
	if v, ok := (hone.Objective{Metric: "nan"}).Value(r); !ok || !math.IsNaN(v) {
		t.Errorf("Value(nan) = %v, %v; want NaN, true", v, ok)
	}
	if _, ok := (hone.Objective{Metric: "acc"}).Value(nil); ok {
		t.Error("Value(nil result) is ok")
	}
	for _, m := range []hone.Mode{hone.Min, hone.Max, ""} {
		o := hone.Objective{Metric: "m", Mode: m}
		for _, p := range [][2]float64{{1, 2}, {2, 1}, {-3, 7}, {0, math.NaN()}, {math.NaN(), 0}} {
			if o.Better(p[0], p[1]) != m.Better(p[0], p[1]) || o.Compare(p[0], true, p[1], false) != m.Compare(p[0], true, p[1], false) {
				t.Errorf("%v: Better/Compare(%v) disagree with the mode's", o, p)
			}
			if !math.IsNaN(p[0]) && !math.IsNaN(p[1]) && o.Better(p[0], p[1]) != (o.Loss(p[0]) < o.Loss(p[1])) {
				t.Errorf("%v: Loss(%v) does not order as Better", o, p)
			}
		}
		if o.Score(2) != -o.Loss(2) {
			t.Errorf("%v: Score(2) = %v, Loss(2) = %v", o, o.Score(2), o.Loss(2))
		}
	}
	if got := (hone.Objective{Metric: "m", Mode: hone.Max}).Loss(2); got != -2 {
		t.Errorf("max Loss(2) = %v", got)
	}
	if got := (hone.Objective{Metric: "m"}).Loss(2); got != 2 {
		t.Errorf("default Loss(2) = %v", got)
	}
	if got := (hone.Objective{Metric: "m"}).WithDefaults(); got.Mode != hone.Min {
		t.Errorf("WithDefaults = %+v", got)
	}
	exp := hone.Objective{Metric: "acc", Mode: hone.Max}
	for _, tc := range []struct{ own, want hone.Objective }{
		{hone.Objective{}, exp},
		{hone.Objective{Metric: "loss"}, hone.Objective{Metric: "loss", Mode: hone.Max}},
		{hone.Objective{Mode: hone.Min}, hone.Objective{Metric: "acc", Mode: hone.Min}},
		{hone.Objective{Metric: "loss", Mode: hone.Min}, hone.Objective{Metric: "loss", Mode: hone.Min}},
	} {
		if got := tc.own.Or(exp); got != tc.want {
			t.Errorf("%+v.Or(%+v) = %+v, want %+v", tc.own, exp, got, tc.want)
		}
	}
	if got := (hone.Objective{Metric: "x"}).Or(hone.Objective{}); got.Mode != hone.Min {
		t.Errorf("Or without modes = %+v, want min", got)
	}
	if got := (hone.Objective{}).WithDefaults(); got != (hone.Objective{}) {
		t.Errorf("WithDefaults without a metric = %+v, want no mode", got)
	}
	if got := hone.Objectives(nil).Primary(); got != (hone.Objective{}) {
		t.Errorf("Primary of none = %+v", got)
	}
}

func TestObjectiveValidate(t *testing.T) {
	for _, tc := range []struct {
		o     hone.Objective
		wants []string
	}{
		{hone.Objective{Metric: "m"}, nil},
		{hone.Objective{}, nil},
		{hone.Objective{Metric: "m", Mode: hone.Max}, nil},
		{hone.Objective{Metric: "m", Mode: "maximise"}, []string{"mode", `"maximise"`, `"min"`, `"max"`}},
		{hone.Objective{Mode: hone.Max}, []string{"mode is set but metric is empty"}},
	} {
		err := tc.o.Validate()
		if (err != nil) != (tc.wants != nil) {
			t.Errorf("%+v: Validate = %v", tc.o, err)
			continue
		}
		for _, w := range tc.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: error %q lacks %q", tc.o, err, w)
			}
		}
	}
	if err := (hone.Objectives{{Metric: "acc", Mode: hone.Max}, {Metric: "latency"}}).Validate(); err != nil {
		t.Errorf("two objectives: %v", err)
	}
	for _, bad := range []hone.Objectives{
		{{Metric: ""}},
		{{Metric: "a", Mode: "up"}},
		{{Metric: "a"}, {Metric: "a", Mode: hone.Max}},
	} {
		if err := bad.Validate(); err == nil || !strings.HasPrefix(err.Error(), "objectives[") {
			t.Errorf("%+v: Validate = %v, want an error naming the objective", bad, err)
		}
	}
	if err := (hone.Objectives{{Metric: "a"}}).Validate(); err != nil {
		t.Errorf("one objective: %v", err)
	}
}

// TestExperimentObjectives pins the two ways an experiment says its
// objectives: Metric and Mode, or the list Objectives, not both, and one
// objective only for now.
func TestExperimentObjectives(t *testing.T) {
	for _, tc := range []struct {
		e    hone.Experiment
		want hone.Objectives
	}{
		{hone.Experiment{}, nil},
		{hone.Experiment{Metric: "loss"}, hone.Objectives{{Metric: "loss", Mode: hone.Min}}},
		{hone.Experiment{Metric: "acc", Mode: hone.Max}, hone.Objectives{{Metric: "acc", Mode: hone.Max}}},
		{hone.Experiment{Objectives: hone.Objectives{{Metric: "acc", Mode: hone.Max}}}, hone.Objectives{{Metric: "acc", Mode: hone.Max}}},
		{hone.Experiment{Objectives: hone.Objectives{{Metric: "loss"}}}, hone.Objectives{{Metric: "loss", Mode: hone.Min}}},
	} {
		if got := tc.e.ResolvedObjectives(); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: ResolvedObjectives = %+v, want %+v", tc.e.Objectives, got, tc.want)
		}
		tc.e.Searcher = nopSearcher{}
		if err := tc.e.Validate(); err != nil {
			t.Errorf("%+v: Validate = %v", tc.want, err)
		}
	}
	// ResolvedObjectives does not change the experiment's list.
	e := hone.Experiment{Objectives: hone.Objectives{{Metric: "loss"}}}
	e.ResolvedObjectives()
	if e.Objectives[0].Mode != "" {
		t.Error("ResolvedObjectives changed Objectives")
	}

	both := hone.Experiment{Searcher: nopSearcher{}, Metric: "loss", Objectives: hone.Objectives{{Metric: "acc"}}}
	if err := both.Validate(); err == nil || !strings.Contains(err.Error(), "objectives") || !strings.Contains(err.Error(), "metric") {
		t.Errorf("both forms: %v", err)
	}
	// Several objectives, or a constraint, need a searcher and a
	// scheduler that take them (MultiObjective), which check them.
	two := hone.Objectives{{Metric: "acc", Mode: hone.Max}, {Metric: "latency_ms"}}
	below := 4000.0
	mem := hone.Constraints{{Metric: "memory_mb", Below: &below}}
	for _, tc := range []struct {
		e    hone.Experiment
		want string // "" for valid
		one  bool   // the error wraps ErrOneObjective
	}{
		{hone.Experiment{Searcher: nopSearcher{}, Objectives: two}, "the searcher (hone_test.nopSearcher) cannot take them", true},
		{hone.Experiment{Searcher: nopSearcher{}, Metric: "loss", Constraints: mem}, "1 objectives (loss) and 1 constraints", true},
		{hone.Experiment{Searcher: moSearcher{}, Objectives: two}, "", false},
		{hone.Experiment{Searcher: moSearcher{}, Objectives: two, Scheduler: nopScheduler{}}, "the scheduler (hone_test.nopScheduler) cannot take them", true},
		{hone.Experiment{Searcher: moSearcher{}, Objectives: two, Scheduler: weighted{}}, "scheduler: weights: 0 given for 2 objectives", false},
		{hone.Experiment{Searcher: moSearcher{}, Objectives: two, Scheduler: weighted{1, -0.01}, Constraints: mem}, "", false},
		{hone.Experiment{Searcher: moSearcher{}, Metric: "loss", Constraints: hone.Constraints{{Metric: "memory_mb"}}}, "constraints[0]: memory_mb: give below", false},
	} {
		err := tc.e.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: Validate = %v", tc.e.Objectives, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "experiment: ")):
			t.Errorf("%+v: Validate = %v, want %q", tc.e.Objectives, err, tc.want)
		case errors.Is(err, hone.ErrOneObjective) != tc.one:
			t.Errorf("%+v: errors.Is(%v, ErrOneObjective) = %v", tc.e.Objectives, err, !tc.one)
		}
	}
	bad := hone.Experiment{Searcher: nopSearcher{}, Objectives: hone.Objectives{{Metric: "acc", Mode: "most"}}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), `"most"`) {
		t.Errorf("bad mode in objectives: %v", err)
	}
}

// moSearcher is a searcher that takes several objectives.
type moSearcher struct{ nopSearcher }

func (moSearcher) CheckObjectives(hone.Objectives, hone.Constraints) error { return nil }

// nopScheduler is a scheduler of one objective.
type nopScheduler struct{}

func (nopScheduler) OnTrialAdd(hone.Control, *hone.Trial) {}
func (nopScheduler) OnResult(hone.Control, *hone.Trial, *hone.Result) hone.Decision {
	return hone.Continue
}
func (nopScheduler) OnTrialComplete(hone.Control, *hone.Trial, *hone.Result) {}
func (nopScheduler) OnTrialError(hone.Control, *hone.Trial)                  {}
func (nopScheduler) OnTrialRemove(hone.Control, *hone.Trial)                 {}
func (nopScheduler) ChooseTrialToRun(hone.Control) *hone.Trial               { return nil }

// weighted is a scalarising scheduler: its weights must fit the
// objectives.
type weighted []float64

func (weighted) OnTrialAdd(hone.Control, *hone.Trial) {}
func (weighted) OnResult(hone.Control, *hone.Trial, *hone.Result) hone.Decision {
	return hone.Continue
}
func (weighted) OnTrialComplete(hone.Control, *hone.Trial, *hone.Result) {}
func (weighted) OnTrialError(hone.Control, *hone.Trial)                  {}
func (weighted) OnTrialRemove(hone.Control, *hone.Trial)                 {}
func (weighted) ChooseTrialToRun(hone.Control) *hone.Trial               { return nil }
func (w weighted) CheckObjectives(objs hone.Objectives, _ hone.Constraints) error {
	_, err := objs.Scalarized(w)
	return err
}

// TestScalarized pins the weighted sum a scalarising scheduler ranks by:
// each objective's score (higher is better) times its weight, maximised;
// a missing metric leaves the sum missing; bad weights are refused.
func TestScalarized(t *testing.T) {
	objs := hone.Objectives{{Metric: "acc", Mode: hone.Max}, {Metric: "latency_ms"}}
	o, err := objs.Scalarized([]float64{1, 0.01})
	if err != nil {
		t.Fatal(err)
	}
	r := &hone.Result{Metrics: map[string]any{"acc": 0.9, "latency_ms": 20.0}}
	if v, ok := o.Value(r); !ok || math.Abs(v-(0.9-0.2)) > 1e-12 || o.Mode != hone.Max {
		t.Errorf("Value = %v, %v (mode %s), want 0.7, true, max", v, ok, o.Mode)
	}
	faster := &hone.Result{Metrics: map[string]any{"acc": 0.9, "latency_ms": 10.0}}
	v1, _ := o.Value(r)
	v2, _ := o.Value(faster)
	if !o.Better(v2, v1) {
		t.Errorf("a faster trial of the same accuracy is not better: %v vs %v", v2, v1)
	}
	if _, ok := o.Value(&hone.Result{Metrics: map[string]any{"acc": 0.9}}); ok {
		t.Error("a result without latency_ms has a value")
	}
	if !strings.Contains(o.Metric, "acc (max)") || !strings.Contains(o.Metric, "latency_ms (min)") {
		t.Errorf("name %q", o.Metric)
	}
	single, err := objs[:1].Scalarized(nil)
	if err != nil || single != objs[0] {
		t.Errorf("one objective, no weights: %+v, %v", single, err)
	}
	for _, w := range [][]float64{nil, {1}, {0, 0}, {1, math.NaN()}, {math.Inf(1), 1}} {
		if _, err := objs.Scalarized(w); err == nil || !strings.HasPrefix(err.Error(), "weights") {
			t.Errorf("weights %v: %v", w, err)
		}
	}
}

// TestLossesAndConstraints pins the point a Pareto front ranks (losses,
// +Inf where a metric is missing or NaN) and constraint violations.
func TestLossesAndConstraints(t *testing.T) {
	objs := hone.Objectives{{Metric: "acc", Mode: hone.Max}, {Metric: "latency_ms", Mode: hone.Min}}
	r := &hone.Result{Metrics: map[string]any{"acc": 0.9, "latency_ms": 20.0, "memory_mb": 5000.0}}
	got, all := objs.Losses(nil, r)
	if !all || !slices.Equal(got, []float64{-0.9, 20}) {
		t.Errorf("Losses = %v, %v", got, all)
	}
	got, all = objs.Losses(got, &hone.Result{Metrics: map[string]any{"acc": math.NaN()}})
	if all || !math.IsInf(got[0], 1) || !math.IsInf(got[1], 1) {
		t.Errorf("Losses of a result without the metrics = %v, %v", got, all)
	}
	lo, hi := 100.0, 4000.0
	for _, tc := range []struct {
		c    hone.Constraint
		want float64
		text string
	}{
		{hone.Constraint{Metric: "memory_mb", Below: &hi}, 1000, "memory_mb ≤ 4000"},
		{hone.Constraint{Metric: "memory_mb", Above: &lo}, 0, "memory_mb ≥ 100"},
		{hone.Constraint{Metric: "memory_mb", Above: &lo, Below: &hi}, 1000, "100 ≤ memory_mb ≤ 4000"},
		{hone.Constraint{Metric: "params", Below: &hi}, math.Inf(1), "params ≤ 4000"},
	} {
		if err := tc.c.Validate(); err != nil {
			t.Errorf("%s: %v", tc.text, err)
		}
		if got := tc.c.Violation(r); got != tc.want || tc.c.String() != tc.text {
			t.Errorf("%s: Violation = %v, want %v; String %q", tc.text, got, tc.want, tc.c.String())
		}
	}
	cs := hone.Constraints{{Metric: "memory_mb", Below: &hi}, {Metric: "acc", Above: &lo}}
	if got := cs.Violation(r); math.Abs(got-(1000+99.1)) > 1e-9 {
		t.Errorf("Constraints.Violation = %v", got)
	}
	nan := math.NaN()
	for _, bad := range []hone.Constraint{{Below: &hi}, {Metric: "m"}, {Metric: "m", Below: &nan}, {Metric: "m", Above: &hi, Below: &lo}} {
		if err := (hone.Constraints{bad}).Validate(); err == nil || !strings.HasPrefix(err.Error(), "constraints[0]: ") {
			t.Errorf("%+v: Validate = %v", bad, err)
		}
	}
}

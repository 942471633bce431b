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
	two := hone.Objectives{{Metric: "acc", Mode: hone.Max}, {Metric: "latency"}}
	err := two.Validate()
	if !errors.Is(err, hone.ErrSeveralObjectives) || !strings.Contains(err.Error(), "acc, latency") || !strings.Contains(err.Error(), "not supported yet") {
		t.Errorf("two objectives: %v", err)
	}
	for _, bad := range []hone.Objectives{
		{{Metric: ""}},
		{{Metric: "a", Mode: "up"}},
		{{Metric: "a"}, {Metric: "a", Mode: hone.Max}},
	} {
		if err := bad.Validate(); err == nil || errors.Is(err, hone.ErrSeveralObjectives) || !strings.HasPrefix(err.Error(), "objectives[") {
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
	several := hone.Experiment{Searcher: nopSearcher{}, Objectives: hone.Objectives{{Metric: "acc", Mode: hone.Max}, {Metric: "latency_ms"}}}
	err := several.Validate()
	if !errors.Is(err, hone.ErrSeveralObjectives) || !strings.HasPrefix(err.Error(), "experiment: ") {
		t.Errorf("two objectives: %v, want ErrSeveralObjectives", err)
	}
	bad := hone.Experiment{Searcher: nopSearcher{}, Objectives: hone.Objectives{{Metric: "acc", Mode: "most"}}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), `"most"`) {
		t.Errorf("bad mode in objectives: %v", err)
	}
}

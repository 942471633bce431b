package spec

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
)

// TestObjectivesAndConstraints pins the spec's several objectives and
// constraints: how they read, what is refused and where, and what the
// experiment is given.
func TestObjectivesAndConstraints(t *testing.T) {
	head := "command: [x]\nsearch_space: {lr: {loguniform: [0.001, 0.1]}}\n"
	two := "objectives:\n  - {metric: acc, mode: max}\n  - {metric: latency_ms}\n"
	parse := func(t *testing.T, src string) (*Spec, error) {
		t.Helper()
		s, err := Parse([]byte(head+src), "experiment.yaml", t.TempDir())
		if err == nil {
			err = s.Validate()
		}
		return s, err
	}
	t.Run("several", func(t *testing.T) {
		s, err := parse(t, two+"constraints:\n  - {metric: memory_mb, below: 4000}\n  - {metric: acc, above: 0.5, below: 1}\nsearcher: random\n")
		if err != nil {
			t.Fatal(err)
		}
		want := hone.Objectives{{Metric: "acc", Mode: hone.Max}, {Metric: "latency_ms", Mode: hone.Min}}
		if !slices.Equal(s.ResolvedObjectives(), want) || s.Metric != "acc" || s.Mode != hone.Max {
			t.Errorf("objectives %+v, metric %q mode %q", s.ResolvedObjectives(), s.Metric, s.Mode)
		}
		if len(s.Constraints) != 2 || s.Constraints[0].String() != "memory_mb ≤ 4000" || s.Constraints[1].String() != "0.5 ≤ acc ≤ 1" {
			t.Errorf("constraints %v", s.Constraints)
		}
		plan, err := Build(s, t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		e := plan.Experiment
		if !slices.Equal(e.ResolvedObjectives(), want) || e.Metric != "" || len(e.Constraints) != 2 {
			t.Errorf("experiment: objectives %+v, metric %q, constraints %v", e.ResolvedObjectives(), e.Metric, e.Constraints)
		}
		if err := e.Validate(); err != nil {
			t.Errorf("experiment: %v", err)
		}
	})
	t.Run("weights", func(t *testing.T) {
		s, err := parse(t, two+"searcher: random\nscheduler: {name: median, weights: [1, 0.1]}\n")
		if err != nil {
			t.Fatal(err)
		}
		plan, err := Build(s, t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := plan.Experiment.Validate(); err != nil {
			t.Error(err)
		}
	})
	t.Run("mo-asha and mo-hyperband", func(t *testing.T) {
		for _, sched := range []string{"{name: asha, max_t: 9, reduction_factor: 3}", "{name: hyperband, max_t: 9}"} {
			s, err := parse(t, two+"constraints: [{metric: memory_mb, below: 4000}]\nsearcher: random\nscheduler: "+sched+"\n")
			if err != nil {
				t.Fatal(err)
			}
			plan, err := Build(s, t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := plan.Experiment.Validate(); err != nil {
				t.Errorf("%s: %v", sched, err)
			}
		}
	})
	t.Run("one is metric and mode", func(t *testing.T) {
		s, err := parse(t, "objectives: [{metric: acc, mode: max}]\nsearcher: tpe\n")
		if err != nil {
			t.Fatal(err)
		}
		if s.Objectives != nil || s.Metric != "acc" || s.Mode != hone.Max {
			t.Errorf("objectives %+v, metric %q mode %q", s.Objectives, s.Metric, s.Mode)
		}
	})
	t.Run("auto", func(t *testing.T) {
		s, err := parse(t, two+"searcher: auto\nscheduler: auto\nstop: {training_iteration: 81}\n")
		if err != nil {
			t.Fatal(err)
		}
		ch := s.auto()
		if ch.Searcher != "random" || !strings.Contains(ch.SearcherWhy, "2 objectives (acc, latency_ms)") {
			t.Errorf("auto chose %+v", ch)
		}
		// The budget gives MO-ASHA, with one objective's parameters.
		one, err := parse(t, "metric: acc\nmode: max\nsearcher: auto\nscheduler: auto\nstop: {training_iteration: 81}\n")
		if err != nil {
			t.Fatal(err)
		}
		if want := one.auto(); ch.Scheduler != "asha" || ch.ASHA != want.ASHA || !strings.Contains(ch.SchedulerWhy, "with 2 objectives (acc, latency_ms) it is MO-ASHA") {
			t.Errorf("auto chose %+v; with one objective %+v", ch, want)
		}
		plan, err := Build(s, t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := plan.Experiment.Validate(); err != nil {
			t.Error(err)
		}
		// Without a budget, FIFO.
		s, err = parse(t, two+"searcher: auto\nscheduler: auto\n")
		if err != nil {
			t.Fatal(err)
		}
		if ch := s.auto(); ch.Scheduler != "fifo" || !strings.Contains(ch.SchedulerWhy, "no budget") {
			t.Errorf("without a budget auto chose %+v", ch)
		}
	})
	for _, tc := range []struct {
		name, yaml, path, want string
		allowed                []string
	}{
		{"both forms", "metric: acc\n" + two, "objectives", "objectives and metric/mode are both set", nil},
		{"no metric", "objectives: [{mode: max}, {metric: b}]\n", "objectives[0]", "metric is empty", nil},
		{"bad mode", "objectives: [{metric: a, mode: most}, {metric: b}]\n", "objectives[0].mode", `allowed values are min and max, got "most"`, []string{"max", "min"}},
		{"twice", "objectives: [{metric: a}, {metric: a, mode: max}]\n", "objectives[1].metric", `"a" is an earlier objective's metric already`, nil},
		{"unknown key", "objectives: [{metric: a, direction: max}, {metric: b}]\n", "objectives[0].direction", "unknown key", []string{"metric", "mode"}},
		{"not a list", "objectives: {metric: a}\n", "objectives", "want a list of {metric: NAME, mode: min or max}", nil},
		{"constraint without bound", "metric: a\nconstraints: [{metric: m}]\nsearcher: random\n", "constraints[0]", "give below (the largest feasible value), above (the smallest), or both", nil},
		{"constraint empty range", "metric: a\nconstraints: [{metric: m, above: 2, below: 1}]\nsearcher: random\n", "constraints[0]", "no value is feasible", nil},
		{"one-objective searcher", two + "searcher: bohb\n", "searcher", "searcher bohb optimises one objective and honours no constraint; with 2 objectives (acc, latency_ms) use one of auto, grid, nsga2, random, tpe", []string{"auto", "grid", "nsga2", "random", "tpe"}},
		{"one-objective scheduler", two + "searcher: random\nscheduler: {name: hyperband_for_bohb, max_t: 9}\n", "scheduler", "scheduler hyperband_for_bohb optimises one objective", []string{"asha", "auto", "fifo", "hyperband", "median", "pb2", "pbt"}},
		{"asha with a metric", two + "searcher: random\nscheduler: {name: asha, max_t: 9, metric: acc}\n", "scheduler", `asha: metric = "acc": with several objectives ASHA ranks trials by all of them (acc, latency_ms); leave metric empty`, nil},
		{"hyperband with a mode", two + "searcher: random\nscheduler: {name: hyperband, max_t: 9, mode: max}\n", "scheduler", `hyperband: mode = "max": with several objectives each takes its own mode`, nil},
		{"weights missing", two + "searcher: random\nscheduler: median\n", "scheduler", "median: weights: 0 given for 2 objectives (acc, latency_ms): give one per objective, in order", nil},
		{"weights and a metric", two + "searcher: random\nscheduler: {name: median, metric: acc, weights: [1, 0.1]}\n", "scheduler", `median: metric = "acc": with several objectives the scheduler ranks by their weighted sum; give weights instead`, nil},
		{"weights not numbers", two + "searcher: random\nscheduler: {name: median, weights: [1, fast]}\n", "scheduler.weights[1]", "want a number", nil},
		{"ranking scheduler and constraints", two + "constraints: [{metric: m, below: 1}]\nsearcher: random\nscheduler: {name: median, weights: [1, 0.1]}\n", "scheduler", "median: constraints (1 given) are not honoured", nil},
		{"constraint needs a taker", "metric: a\nconstraints: [{metric: m, below: 1}]\nsearcher: bohb\n", "searcher", "with objective a under 1 constraints use one of", []string{"auto", "grid", "nsga2", "random", "tpe"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, tc.yaml)
			se := specErrorAt(err, tc.path)
			if se == nil {
				t.Fatalf("no error at %s in %v", tc.path, err)
			}
			if !strings.Contains(se.Msg, tc.want) {
				t.Errorf("%s: %q, want %q", tc.path, se.Msg, tc.want)
			}
			if tc.allowed != nil && !slices.Equal(se.Allowed, tc.allowed) {
				t.Errorf("%s: Allowed %q, want %q", tc.path, se.Allowed, tc.allowed)
			}
			if one := tc.path == "searcher" || strings.Contains(tc.want, "optimises one objective"); errors.Is(err, hone.ErrOneObjective) != one {
				t.Errorf("errors.Is(%v, ErrOneObjective) = %v", err, !one)
			}
			var pe *hone.ParamError
			if plugin, _, ranked := strings.Cut(tc.want, ": "); (ranked && slices.Contains([]string{"median", "asha", "hyperband"}, plugin)) && (!errors.As(err, &pe) || pe.Plugin != plugin) {
				t.Errorf("errors.As(%v, *hone.ParamError) = %+v", err, pe)
			}
		})
	}
}

package spec

import (
	"slices"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/search/nsga2"
	"github.com/hone-tune/hone/search/tpe"
)

// TestNSGA2Spec: nsga2's parameters, their defaults, their errors (naming
// the field and the allowed range), and a searcher built with the spec's
// objectives and constraints.
func TestNSGA2Spec(t *testing.T) {
	head := "command: [x]\nsearch_space: {lr: {loguniform: [0.001, 0.1]}, act: {choice: [a, b]}}\nseed: 3\nnum_samples: 20\n"
	two := "objectives:\n  - {metric: acc, mode: max}\n  - {metric: latency_ms}\nconstraints: [{metric: mem, below: 10}]\n"
	build := func(t *testing.T, src string) (hone.Searcher, error) {
		t.Helper()
		s, err := Parse([]byte(head+src), "experiment.yaml", t.TempDir())
		if err == nil {
			err = s.Validate()
		}
		if err != nil {
			return nil, err
		}
		plan, err := Build(s, t.TempDir(), nil)
		if err != nil {
			return nil, err
		}
		if err := plan.Experiment.Validate(); err != nil {
			return nil, err
		}
		return plan.Experiment.Searcher, nil
	}
	sr, err := build(t, two+"searcher: {name: nsga2, population_size: 4, mutation_prob: 0.3, crossover_prob: 0.8, swapping_prob: 0.4}\n")
	if err != nil {
		t.Fatal(err)
	}
	ns, ok := sr.(*nsga2.Searcher)
	if !ok {
		t.Fatalf("searcher %T", sr)
	}
	if ns.Total() != 20 {
		t.Errorf("total %d, want num_samples 20", ns.Total())
	}
	below := 10.0
	if err := ns.CheckObjectives(hone.Objectives{{Metric: "acc", Mode: hone.Max}, {Metric: "latency_ms", Mode: hone.Min}},
		hone.Constraints{{Metric: "mem", Below: &below}}); err != nil {
		t.Errorf("built for other objectives: %v", err)
	}
	if _, err := build(t, "metric: loss\nsearcher: nsga2\n"); err != nil {
		t.Errorf("one objective: %v", err)
	}
	var want []string
	for _, p := range Parameters("searcher", "nsga2") {
		want = append(want, p.Name)
		if p.Name == "population_size" && p.Default != 50 || p.Name == "mutation_prob" && p.Default != nil {
			t.Errorf("default of %s: %v", p.Name, p.Default)
		}
	}
	if !slices.Equal(want, []string{"population_size", "crossover_prob", "swapping_prob", "mutation_prob"}) {
		t.Errorf("parameters %v", want)
	}
	for _, c := range []struct{ yaml, path, want string }{
		{"population_size: 1", "searcher.population_size", "must be >= 2, got 1"},
		{"mutation_prob: 2", "searcher.mutation_prob", "must be in [0, 1], got 2"},
		{"crossover_prob: -0.5", "searcher.crossover_prob", "must be in [0, 1], got -0.5"},
		{"swapping_prob: 1.5", "searcher.swapping_prob", "must be in [0, 1], got 1.5"},
		{"population: 10", "searcher.population", "unknown key"},
	} {
		_, err := build(t, two+"searcher: {name: nsga2, "+c.yaml+"}\n")
		se := specErrorAt(err, c.path)
		if se == nil || !strings.Contains(se.Msg, c.want) {
			t.Errorf("%s: errors %v, want at %s: %s", c.yaml, err, c.path, c.want)
		}
	}
}

// TestTPESeveralObjectives: the tpe searcher is built with the spec's
// objectives and constraints, which the experiment then accepts; with an
// ASHA scheduler (MO-ASHA) it observes the trials at ASHA's rungs, with
// the fidelity check off by default and refused when asked for.
func TestTPESeveralObjectives(t *testing.T) {
	head := "command: [x]\nsearch_space: {lr: {loguniform: [0.001, 0.1]}}\nnum_samples: 20\n"
	two := "objectives:\n  - {metric: acc, mode: max}\n  - {metric: latency_ms}\nconstraints: [{metric: mem, below: 10}]\n"
	s, err := Parse([]byte(head+two+"searcher: {name: tpe, multivariate: false}\n"), "experiment.yaml", t.TempDir())
	if err == nil {
		err = s.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Build(s, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Experiment.Validate(); err != nil {
		t.Errorf("experiment: %v", err)
	}
	m, ok := plan.Experiment.Searcher.(hone.MultiObjective)
	if !ok {
		t.Fatalf("searcher %T", plan.Experiment.Searcher)
	}
	if err := m.CheckObjectives(s.ResolvedObjectives(), s.Constraints); err != nil {
		t.Errorf("built for other objectives: %v", err)
	}
	s, err = Parse([]byte(head+two+"searcher: tpe\nscheduler: {name: asha, max_t: 9}\n"), "experiment.yaml", t.TempDir())
	if err == nil {
		err = s.Validate()
	}
	if err != nil {
		t.Fatalf("tpe with asha: %v", err)
	}
	plan, err = Build(s, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Experiment.Validate(); err != nil {
		t.Errorf("tpe with asha: experiment: %v", err)
	}
	sr, ok := plan.Experiment.Searcher.(*tpe.Searcher)
	if !ok {
		t.Fatalf("searcher %T", plan.Experiment.Searcher)
	}
	if ta, budgets := sr.Rungs(); ta != "training_iteration" || len(budgets) == 0 || budgets[len(budgets)-1] != 9 {
		t.Errorf("tpe with asha: rungs %q %v", ta, budgets)
	}
	if err := sr.CheckObjectives(s.ResolvedObjectives(), s.Constraints); err != nil {
		t.Errorf("tpe with asha: %v", err)
	}
	s, err = Parse([]byte(head+two+"searcher: {name: tpe, fidelity_check: true}\nscheduler: {name: asha, max_t: 9}\n"), "experiment.yaml", t.TempDir())
	if err == nil {
		err = s.Validate()
	}
	if se := specErrorAt(err, "searcher"); se == nil || !strings.Contains(se.Msg, "fidelity_check with 2 objectives under 1 constraints: not supported") {
		t.Errorf("tpe with fidelity_check: %v", err)
	}
}

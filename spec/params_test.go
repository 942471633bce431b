package spec

import (
	"slices"
	"testing"
)

// The parameter schema comes from the tables' Read functions: every
// parameter a plugin reads, in order, with the default it takes.
func TestParameters(t *testing.T) {
	find := func(ps []Param, name string) (Param, bool) {
		i := slices.IndexFunc(ps, func(p Param) bool { return p.Name == name })
		if i < 0 {
			return Param{}, false
		}
		return ps[i], true
	}
	asha := Parameters("scheduler", "asha")
	for _, want := range []Param{{"time_attr", "training_iteration"}, {"max_t", 100.0}, {"grace_period", 1.0}, {"reduction_factor", 4.0}, {"promotion", "percentile"}} {
		if got, ok := find(asha, want.Name); !ok || got != want {
			t.Errorf("asha's %s: got %+v (listed %v), want default %v", want.Name, got, ok, want.Default)
		}
	}
	if p, ok := find(Parameters("scheduler", "pbt"), "hyperparam_mutations"); !ok || p.Default != nil {
		t.Errorf("pbt's hyperparam_mutations: %+v, %v; want listed without a default", p, ok)
	}
	if p, ok := find(Parameters("searcher", "tpe"), "n_startup_trials"); !ok || p.Default != 10 {
		t.Errorf("tpe's n_startup_trials: %+v, %v; want 10", p, ok)
	}
	if p, ok := find(Parameters("executor", "slurm"), "mode"); !ok || p.Default != "auto" {
		t.Errorf("slurm's mode: %+v, %v; want auto", p, ok)
	}
	for _, bad := range [][2]string{{"scheduler", "nope"}, {"searcher", "asha"}, {"storage", "local"}} {
		if ps := Parameters(bad[0], bad[1]); ps != nil {
			t.Errorf("Parameters(%q, %q) = %v, want nil", bad[0], bad[1], ps)
		}
	}
}

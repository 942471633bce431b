package spec

import (
	"testing"

	"github.com/hone-tune/hone/scheduler/pbt"
)

// TestPBTExplicitZeros: quantile_fraction, resample_probability,
// log_config and require_attrs written as zero (false) in a spec are kept,
// not taken for "unset"; left out they are Ray's defaults.
func TestPBTExplicitZeros(t *testing.T) {
	head := "command: [x]\nmetric: loss\nscheduler:\n  name: pbt\n  hyperparam_mutations: {lr: [0.1, 0.2]}\n"
	build := func(extra string) pbt.Config {
		t.Helper()
		s, err := Parse([]byte(head+extra), "experiment.yaml", t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		plan, err := Build(s, t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return plan.Experiment.Scheduler.(*pbt.Scheduler).Config()
	}
	c := build("  quantile_fraction: 0\n  resample_probability: 0\n  log_config: false\n  require_attrs: false\n")
	if *c.QuantileFraction != 0 || *c.ResampleProbability != 0 || *c.LogConfig || *c.RequireAttrs {
		t.Fatalf("explicit zeros: quantile %v resample %v log %v require %v",
			*c.QuantileFraction, *c.ResampleProbability, *c.LogConfig, *c.RequireAttrs)
	}
	d := build("")
	if *d.QuantileFraction != 0.25 || *d.ResampleProbability != 0.25 || !*d.LogConfig || !*d.RequireAttrs {
		t.Fatalf("defaults: quantile %v resample %v log %v require %v",
			*d.QuantileFraction, *d.ResampleProbability, *d.LogConfig, *d.RequireAttrs)
	}
}

package pb2

import (
	"flag"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/scenario"
	"github.com/hone-tune/hone/scheduler/pbt"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of the scenario scripts in testdata/")

// factory: time attr training_iteration; bounds x in [0, 10] and the
// nested opt/lr in [0.1, 0.2] (missing from the scenario's configs, so
// sampled on add). A custom explore function rounds the new x to two
// decimals and opt/lr to three, to keep the scripts readable.
func factory(args map[string]string) (hone.Scheduler, error) {
	cfg := DefaultConfig()
	cfg.PBT.TimeAttr = hone.FieldTrainingIteration
	cfg.Bounds = map[string][2]float64{"x": {0, 10}, "opt/lr": {0.1, 0.2}}
	cfg.PBT.Explore = func(c hone.Config) hone.Config {
		if x, ok := c["x"].(float64); ok {
			c["x"] = math.Round(x*100) / 100
		}
		if opt, ok := c["opt"].(map[string]any); ok {
			if lr, ok := opt["lr"].(float64); ok {
				opt["lr"] = math.Round(lr*1000) / 1000
			}
		}
		return c
	}
	if v, ok := args["interval"]; ok {
		cfg.PBT.PerturbationInterval, _ = strconv.ParseFloat(v, 64)
	}
	if v, ok := args["quantile"]; ok {
		q, _ := strconv.ParseFloat(v, 64)
		cfg.PBT.QuantileFraction = &q
	}
	cfg.PBT.Synch = args["synch"] == "true"
	return New(cfg)
}

// TestScenarios pins docs/SEMANTICS.md §4 PB2 with scripts in testdata/.
func TestScenarios(t *testing.T) {
	scenario.Run(t, "testdata/*.txt", *rewrite, map[string]scenario.SchedulerFactory{"pb2": factory})
}

func TestValidate(t *testing.T) {
	ok := DefaultConfig()
	ok.Bounds = map[string][2]float64{"lr": {0.001, 0.1}, "model/width": {1, 64}, "fixed": {3, 3}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	if _, err := New(Config{Bounds: ok.Bounds}); err != nil {
		t.Fatalf("zero config with bounds: %v", err)
	}
	logScale := ok
	logScale.LogScale = map[string]bool{"lr": true, "model/width": true, "fixed": false, "absent": false}
	if err := logScale.Validate(); err != nil {
		t.Fatalf("log scale on positive bounds: %v", err)
	}
	for _, c := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Bounds = nil }, "pb2: hyperparam_bounds is required"},
		{func(c *Config) { c.Bounds = map[string][2]float64{"lr": {1, 0}} }, "hyperparam_bounds.lr = [1, 0]: want finite [low, high] with low <= high"},
		{func(c *Config) { c.Bounds = map[string][2]float64{"lr": {0, math.Inf(1)}} }, "hyperparam_bounds.lr = [0, +Inf]"},
		{func(c *Config) { c.Bounds = map[string][2]float64{"a//b": {0, 1}} }, "hyperparam_bounds.a//b: a key has an empty part"},
		{func(c *Config) { c.Bounds = map[string][2]float64{"a": {0, 1}, "a/b": {0, 1}} }, "a and a/b conflict"},
		{func(c *Config) { c.PBT.Mutations = map[string]any{"x": []any{1}} }, "hyperparam_mutations must be empty"},
		{func(c *Config) { c.PBT.Explorer = nopExplorer{} }, "the PBT explorer must be empty"},
		{func(c *Config) { c.PBT.QuantileFraction = new(0.7) }, "pb2: pbt: quantile_fraction = 0.7: must be in [0, 0.5]"},
		{func(c *Config) { c.PBT.Mode = "up" }, "pb2: pbt: mode = \"up\""},
		{func(c *Config) { c.MaxRows = -1 }, "pb2: max rows = -1: must be >= 1"},
		{func(c *Config) { c.FitRows = -1 }, "pb2: fit rows = -1"},
		{func(c *Config) { c.Starts = -2 }, "pb2: starts = -2"},
		{func(c *Config) { c.LogScale = map[string]bool{"lr": true} }, "pb2: hyperparam_bounds.lr = [0, 1]: a log scale needs bounds > 0"},
		{func(c *Config) { c.LogScale = map[string]bool{"momentum": true} }, "pb2: log scale: momentum is not a key of hyperparam_bounds"},
	} {
		cfg := ok
		cfg.Bounds = map[string][2]float64{"lr": {0, 1}}
		c.mod(&cfg)
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

// TestMutations: bounds become uniform PBT mutations, nested for "a/b";
// a LogScale key's is log-uniform within its bounds.
func TestMutations(t *testing.T) {
	lm := mutations(map[string][2]float64{"lr": {1e-4, 1}}, map[string]bool{"lr": true})
	d, ok := lm["lr"].(logUniform)
	if !ok || d != (logUniform{1e-4, 1}) {
		t.Fatalf("log-scale lr: %#v", lm["lr"])
	}
	r := rand.New(rand.NewPCG(1, 1))
	below := 0
	for range 1000 {
		v := d.Sample(r).(float64)
		if v < 1e-4 || v > 1 {
			t.Fatalf("log-uniform sample %v outside [1e-4, 1]", v)
		}
		if v < 1e-2 {
			below++
		}
	}
	if below < 430 || below > 570 { // half the decades lie below 1e-2
		t.Fatalf("%d of 1000 log-uniform samples below 1e-2, want about 500", below)
	}
	m := mutations(map[string][2]float64{"lr": {0, 1}, "model/width": {1, 64}, "model/depth": {2, 2}}, nil)
	if _, ok := m["lr"].(uniform); !ok {
		t.Fatalf("lr: %T", m["lr"])
	}
	inner, ok := m["model"].(map[string]any)
	if !ok || inner["width"] != (uniform{1, 64}) || inner["depth"] != (uniform{2, 2}) {
		t.Fatalf("model: %v", m["model"])
	}
	var _ pbt.Explorer = (*explorer)(nil)
}

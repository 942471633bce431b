package spec

import (
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hone-tune/hone/scheduler/asha"
	"github.com/hone-tune/hone/scheduler/hyperband"
	"github.com/hone-tune/hone/scheduler/pbt"
	"github.com/hone-tune/hone/search/bohb"
	"github.com/hone-tune/hone/search/dehb"
)

// TestPluginTable builds each registered searcher and scheduler from YAML.
func TestPluginTable(t *testing.T) {
	base := "command: [x]\nmetric: loss\nnum_samples: 4\nsearch_space:\n  lr: {loguniform: [0.001, 0.1]}\n  m: {choice: [0.5, 0.9]}\n"
	for _, c := range []struct{ name, yaml string }{
		{"tpe", "searcher: {name: tpe, n_startup_trials: 3}\n"},
		{"bohb", "searcher: {name: bohb, max_concurrent: 2}\nscheduler: {name: hyperband_for_bohb, max_t: 9, reduction_factor: 3}\n"},
		{"hyperband", "scheduler: {name: hyperband, max_t: 27}\n"},
		{"asha_bohb", "searcher: {name: bohb, max_concurrent: 2}\nscheduler: {name: asha, max_t: 27, reduction_factor: 3}\n"},
		{"asha_bohb_set", "searcher: {name: bohb, constant_liar: false, min_bandwidth: 0.001}\nscheduler: {name: asha, max_t: 27}\n"},
		{"dehb", "searcher: {name: dehb, max_concurrent: 3, mutation_factor: 0.8, crossover_prob: 0.3}\nscheduler: {name: dehb, max_t: 27, grace_period: 1, reduction_factor: 3}\n"},
		{"median", "scheduler: {name: median, grace_period: 5, min_samples_required: 2}\n"},
		{"pbt", "scheduler:\n  name: pbt\n  perturbation_interval: 2\n  perturbation_factors: [1.5, 0.5]\n  hyperparam_mutations:\n    lr: {loguniform: [0.001, 0.1]}\n    m: [0.5, 0.9]\n    nested: {beta: {uniform: [0, 1]}}\n"},
		{"pb2", "scheduler:\n  name: pb2\n  time_attr: training_iteration\n  perturbation_interval: 2\n  quantile_fraction: 0.5\n  synch: true\n  hyperparam_bounds:\n    lr: {loguniform: [0.001, 0.1]}\n    m: [0.5, 0.9]\n    nested: {beta: [0, 1]}\n"},
	} {
		s, err := Parse([]byte(base+c.yaml), "experiment.yaml", t.TempDir())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		plan, err := Build(s, t.TempDir(), nil)
		if err != nil {
			t.Fatalf("%s: build: %v", c.name, err)
		}
		exp := plan.Experiment
		switch c.name {
		case "bohb":
			if _, ok := exp.Scheduler.(*hyperband.Scheduler); !ok {
				t.Fatalf("bohb: scheduler %T", exp.Scheduler)
			}
			sr, ok := exp.Searcher.(*bohb.Searcher)
			if !ok {
				t.Fatalf("bohb: the searcher %T was wrapped, hiding its pause hooks", exp.Searcher)
			}
			// HyperBand for BOHB: HpBandSter's defaults.
			if o := sr.Options(); o.ConstantLiar || o.MinBandwidth != 1e-3 {
				t.Fatalf("bohb: options %+v", o)
			}
		case "asha_bohb", "asha_bohb_set":
			sc, ok := exp.Scheduler.(*asha.Scheduler)
			if !ok || !sc.Config().BudgetInfo {
				t.Fatalf("%s: scheduler %T does not mark its rungs for the searcher", c.name, exp.Scheduler)
			}
			sr, ok := exp.Searcher.(*bohb.Searcher)
			if !ok {
				t.Fatalf("%s: searcher %T", c.name, exp.Searcher)
			}
			o := sr.Options()
			want := bohb.AsyncOptions()
			if c.name == "asha_bohb_set" {
				want.ConstantLiar, want.MinBandwidth = false, 1e-3
			}
			if o.ConstantLiar != want.ConstantLiar || o.MinBandwidth != want.MinBandwidth || o.MaxConcurrent != map[string]int{"asha_bohb": 2}[c.name] {
				t.Fatalf("%s: options %+v", c.name, o)
			}
		case "dehb":
			sc, ok := exp.Scheduler.(*dehb.Scheduler)
			if !ok {
				t.Fatalf("dehb: scheduler %T", exp.Scheduler)
			}
			if got := sc.Config(); got.MaxT != 27 || got.ReductionFactor != 3 {
				t.Fatalf("dehb: scheduler config %+v", got)
			}
			sr, ok := exp.Searcher.(*dehb.Searcher)
			if !ok || len(sr.Budgets()) != 4 {
				t.Fatalf("dehb: searcher %T (not wrapped: it caps its own live trials) not bound to the scheduler's budgets", exp.Searcher)
			}
		case "pbt", "pb2":
			sc, ok := exp.Scheduler.(*pbt.Scheduler)
			if !ok {
				t.Fatalf("%s: scheduler %T", c.name, exp.Scheduler)
			}
			if c.name == "pb2" {
				// {loguniform: [low, high]} is a bound on a log scale: a
				// missing lr is sampled log-uniformly (median 0.01, where
				// a uniform sample's is 0.05); m stays uniform.
				if med := sampleMedian(t, sc.Config().Mutations["lr"]); med < 0.007 || med > 0.014 {
					t.Fatalf("pb2: median lr sample %v, want about 0.01 (log-uniform)", med)
				}
				if med := sampleMedian(t, sc.Config().Mutations["m"]); med < 0.67 || med > 0.73 {
					t.Fatalf("pb2: median m sample %v, want about 0.7 (uniform)", med)
				}
			}
		}
	}
}

// sampleMedian returns the median of 2001 samples of mutation m, a
// distribution with a Sample method.
func sampleMedian(t *testing.T, m any) float64 {
	t.Helper()
	d, ok := m.(interface{ Sample(*rand.Rand) any })
	if !ok {
		t.Fatalf("mutation %T has no Sample method", m)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var vs []float64
	for range 2001 {
		v, ok := d.Sample(r).(float64)
		if !ok {
			t.Fatalf("sample of %T is not a float64", m)
		}
		vs = append(vs, v)
	}
	sort.Float64s(vs)
	return vs[len(vs)/2]
}

// TestPBTMutationErrors: a mutation that is neither a list nor a domain is
// an error naming it.
func TestPBTMutationErrors(t *testing.T) {
	src := "command: [x]\nmetric: loss\nscheduler:\n  name: pbt\n  hyperparam_mutations:\n    lr: 0.1\n"
	_, err := Parse([]byte(src), "experiment.yaml", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "scheduler.hyperparam_mutations: lr: want a list of values or a domain") {
		t.Fatalf("got %v", err)
	}
	src = "command: [x]\nmetric: loss\nscheduler: {name: pbt}\n"
	if _, err := Parse([]byte(src), "experiment.yaml", t.TempDir()); err == nil || !strings.Contains(err.Error(), "hyperparam_mutations: is required") {
		t.Fatalf("got %v", err)
	}
}

// TestPB2BoundsErrors: bad hyperparam_bounds and PB2 parameters are
// errors naming the field and what is allowed; PBT-only parameters are
// unknown keys.
func TestPB2BoundsErrors(t *testing.T) {
	head := "command: [x]\nmetric: loss\nscheduler:\n  name: pb2\n"
	for _, c := range []struct{ yaml, want string }{
		{"", "scheduler.hyperparam_bounds: is required: the keys PB2 tunes, each [low, high]"},
		{"  hyperparam_bounds: {}\n", "scheduler.hyperparam_bounds: is empty"},
		{"  hyperparam_bounds: [0, 1]\n", "scheduler.hyperparam_bounds: want a mapping, got a list"},
		{"  hyperparam_bounds: {lr: 0.1}\n", "scheduler.hyperparam_bounds.lr: want [low, high], {loguniform: [low, high]} or a nested map of bounds, got 0.1"},
		{"  hyperparam_bounds: {lr: {loguniform: [0, 0.1]}}\n", "scheduler.hyperparam_bounds.lr.loguniform: a log scale needs low > 0, got [0, 0.1]"},
		{"  hyperparam_bounds: {lr: {loguniform: [0.1]}}\n", "scheduler.hyperparam_bounds.lr.loguniform: want [low, high], got a list of 1 values"},
		{"  hyperparam_bounds: {lr: {loguniform: [0.2, 0.1]}}\n", "scheduler.hyperparam_bounds.lr.loguniform: want [low, high] with low <= high, got [0.2, 0.1]"},
		// A key named loguniform that holds a map is a nested key.
		{"  hyperparam_bounds: {net: {loguniform: {lr: [0.2, 0.1]}}}\n", "scheduler.hyperparam_bounds.net.loguniform.lr: want [low, high] with low <= high"},
		{"  hyperparam_bounds: {lr: [0.1, 0.2, 0.3]}\n", "scheduler.hyperparam_bounds.lr: want [low, high], got a list of 3 values"},
		{"  hyperparam_bounds: {lr: [0.2, 0.1]}\n", "scheduler.hyperparam_bounds.lr: want [low, high] with low <= high, got [0.2, 0.1]"},
		{"  hyperparam_bounds: {net: {lr: [low, 1]}}\n", "scheduler.hyperparam_bounds.net.lr[0]: want a number, got \"low\""},
		{"  hyperparam_bounds: {a: [0, 1], a/b: [0, 1]}\n", "scheduler.hyperparam_bounds: pb2: hyperparam_bounds: a and a/b conflict"},
		{"  quantile_fraction: 0.7\n  hyperparam_bounds: {lr: [0, 1]}\n", "scheduler.quantile_fraction: must be in [0, 0.5], got 0.7"},
		{"  mode: up\n  hyperparam_bounds: {lr: [0, 1]}\n", "scheduler.mode: allowed values are min and max, got \"up\""},
		{"  perturbation_interval: 0\n  hyperparam_bounds: {lr: [0, 1]}\n", "scheduler.perturbation_interval: must be > 0, got 0"},
		{"  hyperparam_mutations: {lr: [0.1]}\n  hyperparam_bounds: {lr: [0, 1]}\n", "scheduler.hyperparam_mutations: unknown key"},
		{"  resample_probability: 0.5\n  hyperparam_bounds: {lr: [0, 1]}\n", "scheduler.resample_probability: unknown key"},
	} {
		_, err := Parse([]byte(head+c.yaml), "experiment.yaml", t.TempDir())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.yaml, err, c.want)
		}
	}
}

// TestExamplesValidate keeps every example experiment in examples/ valid.
func TestExamplesValidate(t *testing.T) {
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(files) < 6 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, f := range files {
		s, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if _, err := Build(s, t.TempDir(), nil); err != nil {
			t.Errorf("%s: build: %v", f, err)
		}
	}
}

// TestValidateErrorsAtTheirKey: a plugin's own validation error is
// reported at the parameter it names, with that parameter's line.
func TestValidateErrorsAtTheirKey(t *testing.T) {
	head := "command: [x]\nmetric: loss\nscheduler:\n"
	for _, c := range []struct{ yaml, want string }{
		{"  name: median\n  grace_period: 5\n  min_samples_required: 0\n", "experiment.yaml:6: scheduler.min_samples_required: median: min_samples_required = 0: must be >= 1"},
		{"  name: median\n  min_time_slice: -1\n", "experiment.yaml:5: scheduler.min_time_slice: median: min_time_slice = -1: must be >= 0"},
		{"  name: hyperband\n  max_t: 9\n  reduction_factor: 1\n", "experiment.yaml:6: scheduler.reduction_factor: hyperband: reduction_factor = 1: must be > 1"},
	} {
		_, err := Parse([]byte(head+c.yaml), "experiment.yaml", t.TempDir())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.yaml, err, c.want)
		}
	}
}

// TestDEHBPairAndErrors: the dehb searcher and scheduler only work as a
// pair, and their parameters' errors name the key and what is allowed.
func TestDEHBPairAndErrors(t *testing.T) {
	head := "command: [x]\nmetric: loss\nsearch_space: {lr: {loguniform: [0.001, 0.1]}}\n"
	for _, c := range []struct{ yaml, want string }{
		{"searcher: dehb\n", "searcher: dehb: needs scheduler dehb, which runs its jobs (the scheduler is fifo)"},
		{"searcher: random\nscheduler: dehb\n", "scheduler: dehb: needs searcher dehb, which decides its jobs (the searcher is random)"},
		{"searcher: {name: dehb, mutation_factor: 0}\nscheduler: dehb\n", "searcher.mutation_factor: must be in (0, 2], got 0"},
		{"searcher: {name: dehb, crossover_prob: 2}\nscheduler: dehb\n", "searcher.crossover_prob: must be in [0, 1], got 2"},
		{"searcher: dehb\nscheduler: {name: dehb, max_t: 2, grace_period: 1}\n", "scheduler.max_t: dehb: max_t = 2: must be at least grace_period × reduction_factor (3)"},
		{"searcher: dehb\nscheduler: {name: dehb, reduction_factor: 1}\n", "scheduler.reduction_factor: dehb: reduction_factor = 1: must be a finite number > 1"},
		{"searcher: dehb\nscheduler: {name: dehb, min_budget: 1}\n", "scheduler.min_budget: unknown key for scheduler dehb (allowed keys: grace_period, max_t, name, reduction_factor, time_attr); hone calls it grace_period"},
		{"searcher: dehb\nscheduler: {name: dehb, eta: 3}\n", "scheduler.eta: unknown key for scheduler dehb (allowed keys: grace_period, max_t, name, reduction_factor, time_attr); hone calls it reduction_factor"},
		{"scheduler: {name: asha, eta: 3}\n", "scheduler.eta: unknown key; allowed keys: brackets, grace_period"},
	} {
		s, err := Parse([]byte(head+c.yaml), "experiment.yaml", t.TempDir())
		if err == nil {
			err = s.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.yaml, err, c.want)
		}
	}
}

// TestASHAMarksRungsOnlyForBOHB: ASHA marks its rungs for the bohb
// searcher and leaves results alone with any other.
func TestASHAMarksRungsOnlyForBOHB(t *testing.T) {
	base := "command: [x]\nmetric: loss\nsearch_space: {lr: {loguniform: [0.001, 0.1]}}\nscheduler: asha\n"
	for searcher, want := range map[string]bool{"bohb": true, "random": false, "tpe": false} {
		s, err := Parse([]byte(base+"searcher: "+searcher+"\n"), "experiment.yaml", t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		plan, err := Build(s, t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := plan.Experiment.Scheduler.(*asha.Scheduler).Config().BudgetInfo; got != want {
			t.Errorf("searcher %s: BudgetInfo %v, want %v", searcher, got, want)
		}
	}
}

// TestBOHBParamErrors: bad BOHB parameters are errors naming the key.
func TestBOHBParamErrors(t *testing.T) {
	head := "command: [x]\nmetric: loss\nsearch_space: {lr: {loguniform: [0.001, 0.1]}}\nscheduler: asha\n"
	for _, c := range []struct{ yaml, want string }{
		{"searcher: {name: bohb, min_bandwidth: 0}\n", "searcher.min_bandwidth: must be > 0, got 0"},
		{"searcher: {name: bohb, constant_liar: maybe}\n", "searcher.constant_liar: want true or false"},
	} {
		_, err := Parse([]byte(head+c.yaml), "experiment.yaml", t.TempDir())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.yaml, err, c.want)
		}
	}
}

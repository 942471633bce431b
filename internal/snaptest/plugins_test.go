package snaptest_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/snapshot"
	"github.com/hone-tune/hone/internal/snaptest"
	"github.com/hone-tune/hone/spec"
)

// space is the search space of every case: numbers, an integer and a
// choice.
const space = `
search_space:
  lr: {loguniform: [0.001, 1.0]}
  momentum: {uniform: [0.0, 0.99]}
  layers: {randint: [1, 6]}
  act: {choice: [relu, tanh, gelu]}
`

// A case is an experiment spec, without its search space and command, and
// the plugins it exercises.
type pluginCase struct {
	name string
	spec string
	// opts are the run's options beyond the seed and lengths.
	opts snaptest.Options
}

var cases = []pluginCase{
	{name: "fifo+random", spec: `
num_samples: 10
searcher: random
scheduler: fifo
`},
	{name: "median+random", spec: `
num_samples: 16
searcher: random
scheduler:
  name: median
  time_attr: training_iteration
  grace_period: 2
  min_samples_required: 2
`},
	{name: "median_soft+grid", spec: `
num_samples: 12
searcher: grid
scheduler:
  name: median
  grace_period: 1
  min_samples_required: 3
  min_time_slice: 2
  hard_stop: false
stop:
  plateau: {std: 0.02, num_results: 3, grace_period: 3}
`},
	{name: "asha+random", spec: `
num_samples: 30
searcher: random
scheduler:
  name: asha
  max_t: 12
  grace_period: 1
  reduction_factor: 2
`},
	{name: "asha_top_brackets+grid", spec: `
num_samples: 10
searcher: grid
scheduler:
  name: asha
  max_t: 16
  grace_period: 1
  reduction_factor: 2
  brackets: 3
  promotion: top
  stop_last_trials: false
`, opts: snaptest.Options{MaxIter: 20}},
	{name: "asha_mo+random", spec: `
objectives:
  - {metric: loss, mode: min}
  - {metric: cost, mode: min}
constraints:
  - {metric: cost, below: 0.9}
num_samples: 30
searcher: random
scheduler:
  name: asha
  max_t: 12
  grace_period: 1
  reduction_factor: 2
  brackets: 2
`},
	{name: "asha_mo_top+random", spec: `
objectives:
  - {metric: loss, mode: min}
  - {metric: cost, mode: min}
num_samples: 20
searcher: random
scheduler:
  name: asha
  max_t: 9
  grace_period: 1
  reduction_factor: 3
  promotion: top
`},
	{name: "hyperband_mo+random", spec: `
objectives:
  - {metric: loss, mode: min}
  - {metric: cost, mode: min}
constraints:
  - {metric: cost, below: 0.9}
num_samples: 40
searcher: random
scheduler:
  name: hyperband
  max_t: 9
  reduction_factor: 3
`, opts: snaptest.Options{MaxIter: 12}},
	{name: "hyperband+random", spec: `
num_samples: 40
searcher: random
scheduler:
  name: hyperband
  max_t: 9
  reduction_factor: 3
`, opts: snaptest.Options{MaxIter: 12}},
	{name: "hyperband_keep_last+grid", spec: `
num_samples: 6
searcher: grid
scheduler:
  name: hyperband
  max_t: 8
  reduction_factor: 2
  stop_last_trials: false
`, opts: snaptest.Options{MaxIter: 10}},
	{name: "pbt_replay+random", spec: `
num_samples: 1
searcher: random
scheduler:
  name: pbt_replay
  policy_file: $TESTDATA/replay.policy
`, opts: snaptest.Options{MaxIter: 30}},
	{name: "pbt+random", spec: `
num_samples: 8
searcher: random
scheduler:
  name: pbt
  time_attr: training_iteration
  perturbation_interval: 2
  quantile_fraction: 0.25
  hyperparam_mutations:
    lr: {loguniform: [0.001, 1.0]}
    act: [relu, tanh, gelu]
    extra: {uniform: [0, 1]}
max_concurrent_trials: 3
checkpoint:
  num_to_keep: 1
`, opts: snaptest.Options{MaxIter: 24}},
	{name: "pbt_synch+random", spec: `
num_samples: 6
searcher: random
scheduler:
  name: pbt
  time_attr: training_iteration
  perturbation_interval: 3
  burn_in_period: 2
  quantile_fraction: 0.5
  resample_probability: 0.5
  synch: true
  require_attrs: false
  hyperparam_mutations:
    momentum: {uniform: [0.0, 0.99]}
    layers: [1, 2, 3, 4, 5]
`, opts: snaptest.Options{MaxIter: 20}},
	{name: "pb2+random", spec: `
num_samples: 8
searcher: random
scheduler:
  name: pb2
  time_attr: training_iteration
  perturbation_interval: 2
  hyperparam_bounds:
    lr: [0.001, 1.0]
    momentum: [0.0, 0.99]
max_concurrent_trials: 2
`, opts: snaptest.Options{MaxIter: 20}},
	{name: "dehb+dehb", spec: `
num_samples: 40
points_to_evaluate:
  - {lr: 0.01, momentum: 0.5, layers: 2, act: relu}
searcher:
  name: dehb
  mutation_factor: 0.5
  crossover_prob: 0.5
scheduler:
  name: dehb
  max_t: 9
  grace_period: 1
  reduction_factor: 3
max_concurrent_trials: 3
`, opts: snaptest.Options{MaxIter: 12}},
	{name: "tpe+fifo", spec: `
num_samples: 30
searcher:
  name: tpe
  n_startup_trials: 5
max_concurrent_trials: 3
`},
	{name: "tpe_multivariate_liar+median", spec: `
num_samples: 30
searcher:
  name: tpe
  n_startup_trials: 4
  multivariate: true
  constant_liar: true
scheduler:
  name: median
  time_attr: training_iteration
  grace_period: 3
  min_samples_required: 2
max_concurrent_trials: 4
`},
	{name: "tpe_rungs+asha", spec: `
num_samples: 40
searcher:
  name: tpe
  n_startup_trials: 4
  fidelity_check: true
scheduler:
  name: asha
  max_t: 12
  grace_period: 1
  reduction_factor: 2
max_concurrent_trials: 3
`},
	{name: "tpe_rungs+hyperband", spec: `
num_samples: 30
searcher:
  name: tpe
  n_startup_trials: 4
scheduler:
  name: hyperband
  max_t: 9
  reduction_factor: 3
max_concurrent_trials: 3
`},
	{name: "tpe_mo+asha", spec: `
objectives:
  - {metric: loss, mode: min}
  - {metric: cost, mode: min}
constraints:
  - {metric: cost, below: 0.9}
num_samples: 40
searcher:
  name: tpe
  n_startup_trials: 4
scheduler:
  name: asha
  max_t: 12
  grace_period: 1
  reduction_factor: 2
max_concurrent_trials: 3
`},
	{name: "tpe_mo+hyperband", spec: `
objectives:
  - {metric: loss, mode: min}
  - {metric: cost, mode: min}
num_samples: 30
searcher:
  name: tpe
  n_startup_trials: 4
scheduler:
  name: hyperband
  max_t: 9
  reduction_factor: 3
max_concurrent_trials: 3
`, opts: snaptest.Options{MaxIter: 12}},
	{name: "nsga2_objectives+fifo", spec: `
num_samples: 40
objectives:
  - {metric: loss, mode: min}
  - {metric: acc, mode: min}
constraints:
  - {metric: loss, below: 1.5}
searcher:
  name: nsga2
  population_size: 6
  mutation_prob: 0.3
scheduler: fifo
max_concurrent_trials: 3
`},
	{name: "nsga2+median", spec: `
num_samples: 30
searcher:
  name: nsga2
  population_size: 4
scheduler:
  name: median
  time_attr: training_iteration
  grace_period: 3
  min_samples_required: 2
max_concurrent_trials: 2
`},
	{name: "tpe_objectives+fifo", spec: `
num_samples: 30
objectives:
  - {metric: loss, mode: min}
  - {metric: acc, mode: min}
constraints:
  - {metric: loss, below: 1.5}
searcher:
  name: tpe
  n_startup_trials: 4
scheduler: fifo
max_concurrent_trials: 3
`},
	{name: "bohb+hyperband_for_bohb", spec: `
num_samples: 40
searcher:
  name: bohb
  min_points_in_model: 4
scheduler:
  name: hyperband_for_bohb
  max_t: 9
  reduction_factor: 3
max_concurrent_trials: 3
`},
	{name: "bohb+asha", spec: `
num_samples: 40
searcher:
  name: bohb
  min_points_in_model: 4
scheduler:
  name: asha
  max_t: 12
  grace_period: 1
  reduction_factor: 2
max_concurrent_trials: 3
`},
	{name: "auto+auto", spec: `
num_samples: 30
searcher: auto
scheduler: auto
stop:
  training_iteration: 10
max_concurrent_trials: 3
`},
}

// build returns the builder of the case's experiment: every call parses
// and builds the spec again, so each gives fresh plugins.
func build(t *testing.T, c pluginCase) func() (*hone.Experiment, error) {
	dir := t.TempDir()
	objective := "metric: loss\nmode: min\n"
	if strings.Contains(c.spec, "\nobjectives:") {
		objective = "" // the case's own
	}
	text := "name: snap\n" + objective + "seed: 7\ncommand: [\"true\"]\n" + space + c.spec
	text = strings.ReplaceAll(text, "$TESTDATA", testdata(t))
	return func() (*hone.Experiment, error) {
		s, err := spec.Parse([]byte(text), filepath.Join(dir, "snap.yaml"), dir)
		if err != nil {
			return nil, err
		}
		plan, err := spec.Build(s, filepath.Join(dir, "exp"), nil)
		if err != nil {
			return nil, err
		}
		exp := plan.Experiment
		if err := plan.Close(); err != nil {
			return nil, err
		}
		return exp, nil
	}
}

func testdata(t *testing.T) string {
	d, err := filepath.Abs("../../scheduler/pbt/testdata")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestSnapshotRestore is the property of hone.Stateful for every plugin
// of the registries: after a seeded random run, a fresh plugin restored
// from a snapshot decides, chooses and suggests as the plugin that ran
// throughout.
func TestSnapshotRestore(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := build(t, c)
			checkKind(t, b, field(c.spec, "scheduler"))
			runSeeds(t, b, []int{5, 40, 150}, func(seed uint64, before int) snaptest.Options {
				o := c.opts
				o.Seed, o.Before, o.After = seed, before, 400
				o.Crashes, o.Interrupts = seed%2 == 1, seed%3 != 0
				return o
			})
		})
	}
}

// runSeeds runs the property for every seed (3; HONE_LONG=1 runs 20,
// -short 1) and snapshot point, with the options opts gives for them,
// and fails if the runs together exercised nothing.
func runSeeds(t *testing.T, b func() (*hone.Experiment, error), befores []int, opts func(seed uint64, before int) snaptest.Options) {
	t.Helper()
	seeds := 3
	switch {
	case os.Getenv("HONE_LONG") != "":
		seeds = 20
	case testing.Short():
		seeds = 1
	}
	var total snaptest.Stats
	for seed := range uint64(seeds) {
		for _, before := range befores {
			st := snaptest.Run(t, b, opts(seed, before))
			total.Events += st.Events
			total.Results += st.Results
			total.Starts += st.Starts
			total.Saves += st.Saves
			total.Trials += st.Trials
		}
	}
	t.Logf("%+v", total)
	if total.Results == 0 || total.Trials == 0 {
		t.Fatalf("the runs exercised nothing: %+v", total)
	}
}

// controllerCases exercise what only the controller's snapshot holds:
// per-trial limits (the deadline queue), retries, GPUs shared among
// trials, checkpoint retention and pins, and a stopper with state.
var controllerCases = []pluginCase{
	{name: "limits+asha", spec: `
num_samples: 20
searcher: random
scheduler:
  name: asha
  max_t: 12
  grace_period: 1
  reduction_factor: 2
trial_timeout: 25s
report_timeout: 5s
failure:
  max_failures: 2
checkpoint:
  num_to_keep: 2
`},
	{name: "announced+hyperband", spec: `
num_samples: 20
searcher: random
scheduler:
  name: hyperband
  max_t: 9
  reduction_factor: 3
trial_timeout: 30s
report_timeout: 6s
failure:
  max_failures: 1
`, opts: snaptest.Options{Announced: true}},
	{name: "gpus+pbt", spec: `
num_samples: 6
searcher: random
scheduler:
  name: pbt
  time_attr: training_iteration
  perturbation_interval: 2
  hyperparam_mutations:
    lr: {loguniform: [0.001, 1.0]}
resources: {cpu: 1, gpu: 0.5}
gpus: 2
failure:
  max_failures: -1
checkpoint:
  num_to_keep: 1
stop:
  plateau: {std: 0.01, num_results: 4, grace_period: 4}
  training_iteration: 18
`, opts: snaptest.Options{MaxIter: 20, Pool: hone.Resources{CPU: 4, GPU: 2}}},
}

// TestControllerSnapshotRestore is the property of the controller's own
// snapshot: after a seeded random run, a controller restored from a
// snapshot (with fresh plugins, restored from the nested snapshots; the
// JSON form or the binary one) emits the same actions as the one that ran
// throughout, and both end in the same state.
func TestControllerSnapshotRestore(t *testing.T) {
	for _, c := range append(slices.Clip(cases), controllerCases...) {
		t.Run(c.name, func(t *testing.T) {
			runSeeds(t, build(t, c), []int{0, 7, 60, 200}, func(seed uint64, before int) snaptest.Options {
				o := c.opts
				o.Seed, o.Before, o.After = seed+100, before, 300
				o.Crashes, o.Interrupts = seed%2 == 0, seed%3 != 1
				o.Controller = true
				o.Binary = before == 7 || before == 200
				return o
			})
		})
	}
}

// checkKind fails when the scheduler's snapshot is FIFO's while the spec
// names another scheduler: a scheduler that embeds fifo.Scheduler and
// forgets its own MarshalState would save nothing of its state.
func checkKind(t *testing.T, build func() (*hone.Experiment, error), name string) {
	exp, err := build()
	if err != nil {
		t.Fatal(err)
	}
	sf, ok := exp.Scheduler.(hone.Stateful)
	if !ok {
		t.Fatalf("scheduler %s (%T) does not implement hone.Stateful", name, exp.Scheduler)
	}
	data, err := sf.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	kind, _, err := snapshot.Kind(data)
	if err != nil {
		t.Fatal(err)
	}
	if kind == "fifo" && name != "fifo" && name != "auto" && name != "" {
		t.Fatalf("scheduler %s (%T) saves FIFO's state: it inherits fifo.Scheduler's MarshalState", name, exp.Scheduler)
	}
}

// TestEveryPluginCovered fails when a searcher or scheduler joins the
// registry without a case here, so that its state is tested.
func TestEveryPluginCovered(t *testing.T) {
	schedulers, _ := spec.Schedulers()
	searchers, _ := spec.Searchers()
	var usedSched, usedSearch []string
	for _, c := range cases {
		usedSched = append(usedSched, field(c.spec, "scheduler"))
		usedSearch = append(usedSearch, field(c.spec, "searcher"))
	}
	for _, n := range schedulers {
		if !slices.Contains(usedSched, n) {
			t.Errorf("scheduler %q has no case in TestSnapshotRestore", n)
		}
	}
	for _, n := range searchers {
		if !slices.Contains(usedSearch, n) {
			t.Errorf("searcher %q has no case in TestSnapshotRestore", n)
		}
	}
}

// TestMultiObjectiveAsRegistered: a searcher or scheduler takes several
// objectives (implements hone.MultiObjective) exactly when its registry
// entry says how, which is what validation lists to users.
func TestMultiObjectiveAsRegistered(t *testing.T) {
	two := hone.Objectives{{Metric: "loss", Mode: hone.Min}, {Metric: "cost", Mode: hone.Min}}
	searchers, schedulers := spec.MultiObjectiveSearchers(), spec.MultiObjectiveSchedulers()
	for _, c := range cases {
		exp, err := build(t, c)()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, p := range []struct {
			kind, name string
			plugin     any
			how        map[string]string
		}{
			{"searcher", field(c.spec, "searcher"), exp.Searcher, searchers},
			{"scheduler", field(c.spec, "scheduler"), exp.Scheduler, schedulers},
		} {
			switch p.name {
			case "auto":
				continue // it builds another entry, which is checked in its own case
			case "":
				p.name = map[string]string{"searcher": "random", "scheduler": "fifo"}[p.kind] // the defaults
			}
			// A plugin may implement it for a sibling that shares its type
			// and refuse several objectives itself (hyperband_for_bohb).
			m, takes := p.plugin.(hone.MultiObjective)
			if takes && errors.Is(m.CheckObjectives(two, nil), hone.ErrOneObjective) {
				takes = false
			}
			if _, says := p.how[p.name]; takes != says {
				t.Errorf("%s %s (%T): implements hone.MultiObjective %v, registry says %v", p.kind, p.name, p.plugin, takes, says)
			}
		}
	}
}

// field returns the plugin name a case's spec gives key: "key: name" or
// "key:\n  name: name".
func field(spec, key string) string {
	lines := strings.Split(spec, "\n")
	for i, l := range lines {
		v, ok := strings.CutPrefix(l, key+":")
		if !ok {
			continue
		}
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
		for _, m := range lines[i+1:] {
			if n, ok := strings.CutPrefix(strings.TrimSpace(m), "name:"); ok {
				return strings.TrimSpace(n)
			}
		}
	}
	return ""
}

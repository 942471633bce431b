package spec

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const compareBase = `command: [python3, train.py]
metric: loss
mode: min
seed: 1
num_samples: 4
search_space:
  lr: {loguniform: [0.0001, 0.1]}
  model: {width: {grid: [16, 32]}, act: relu}
points_to_evaluate: [{lr: 0.01}]
searcher: {name: tpe, n_startup_trials: 5}
scheduler: {name: asha, max_t: 100, grace_period: 1}
stop: {training_iteration: 20, acc: 0.9, time_budget_s: 60}
checkpoint: {num_to_keep: 2, score_attribute: loss, score_order: min, frequency: 5}
failure: {max_failures: 1}
env: {A: "1"}
resources: {cpu: 1}
`

// TestCompare checks which differences between the spec an experiment ran
// with and a new one are refused on resume, and which are allowed.
func TestCompare(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		edit    func(string) string
		refused []string
		allowed []string
	}{{
		name: "the same spec",
		edit: func(s string) string { return s },
	}, {
		name: "reformatted, defaults written out, 100 as 100.0",
		edit: func(string) string {
			return `# the same experiment, written differently
command:
  - python3
  - train.py
metric: loss
seed: 1
num_samples: 4.0
search_space:
  model:
    act: relu
    width:
      grid: [16, 32]
  lr:
    loguniform: [1.0e-4, 0.1]
points_to_evaluate:
  - lr: 0.01
searcher:
  name: tpe
  n_startup_trials: 5
  n_ei_candidates: 24
  max_concurrent: 0
scheduler:
  name: asha
  metric: loss
  mode: min
  max_t: 100.0
  grace_period: 1
  reduction_factor: 4
  brackets: 1
  time_attr: training_iteration
  stop_last_trials: true
stop:
  acc: {above: 0.9}
  training_iteration: 20
  time_budget_s: 60.0
checkpoint:
  score_order: min
  score_attribute: loss
  num_to_keep: 2
  frequency: 5
  at_end: false
failure: {max_failures: 1, fail_fast: false}
env: {A: 1}
resources: {cpu: 1.0, gpu: 0}
stop_grace: 10s
`
		},
	}, {
		name:    "mode flipped",
		edit:    func(s string) string { return strings.Replace(s, "mode: min", "mode: max", 1) },
		refused: []string{`mode: "min" -> "max"`},
	}, {
		name:    "metric changed",
		edit:    func(s string) string { return strings.Replace(s, "metric: loss", "metric: error", 1) },
		refused: []string{`metric: "loss" -> "error"`},
	}, {
		name: "seed and num_samples",
		edit: func(s string) string {
			return strings.Replace(strings.Replace(s, "seed: 1", "seed: 2", 1), "num_samples: 4", "num_samples: -1", 1)
		},
		refused: []string{`num_samples: 4 -> -1`, `seed: 1 -> 2`},
	}, {
		name: "search space",
		edit: func(s string) string {
			s = strings.Replace(s, "lr: {loguniform: [0.0001, 0.1]}", "lr: {uniform: [0, 1]}\n  momentum: 0.9", 1)
			return strings.Replace(s, "act: relu", "act: tanh", 1)
		},
		refused: []string{
			`search_space.lr: {loguniform: [0.0001, 0.1]} -> {uniform: [0, 1]}`,
			`search_space.model.act: "relu" -> "tanh"`,
			`search_space.momentum: none -> 0.9`,
		},
	}, {
		name: "points to evaluate",
		edit: func(s string) string {
			return strings.Replace(s, "[{lr: 0.01}]", "[{lr: 0.01}, {lr: 0.02, model: {width: 16}}]", 1)
		},
		refused: []string{`points_to_evaluate: [{lr: 0.01}] -> [{lr: 0.01}, {lr: 0.02, model: {width: 16}}]`},
	}, {
		name: "searcher parameters",
		edit: func(s string) string {
			return strings.Replace(s, "{name: tpe, n_startup_trials: 5}", "{name: tpe, n_startup_trials: 10, prior_weight: 2, max_concurrent: 2}", 1)
		},
		refused: []string{`searcher.max_concurrent: 0 -> 2`, `searcher.n_startup_trials: 5 -> 10`, `searcher.prior_weight: 1 -> 2`},
	}, {
		name:    "another searcher: its name, not its parameters",
		edit:    func(s string) string { return strings.Replace(s, "{name: tpe, n_startup_trials: 5}", "random", 1) },
		refused: []string{`searcher.name: "tpe" -> "random"`},
	}, {
		name: "scheduler parameters",
		edit: func(s string) string {
			return strings.Replace(s, "{name: asha, max_t: 100, grace_period: 1}", "{name: asha, max_t: 50, grace_period: 1, reduction_factor: 3, mode: max}", 1)
		},
		refused: []string{`scheduler.max_t: 100 -> 50`, `scheduler.mode: the experiment's -> "max"`, `scheduler.reduction_factor: 4 -> 3`},
	}, {
		name: "another scheduler",
		edit: func(s string) string {
			return strings.Replace(s, "{name: asha, max_t: 100, grace_period: 1}", "{name: hyperband, max_t: 100}", 1)
		},
		refused: []string{`scheduler.name: "asha" -> "hyperband"`},
	}, {
		name: "stop conditions",
		edit: func(s string) string {
			return strings.Replace(s, "{training_iteration: 20, acc: 0.9, time_budget_s: 60}",
				"{training_iteration: 30, acc: 0.95, loss: {below: 0.1}, time_budget_s: 120, plateau: {std: 0.1}}", 1)
		},
		refused: []string{
			`stop.acc: >= 0.9 -> >= 0.95`,
			`stop.loss: none -> <= 0.1`,
			`stop.plateau: none -> {metric: "loss", std: 0.1, num_results: 4, grace_period: 4}`,
			`stop.time_budget_s: 60 -> 120`,
			`stop.training_iteration: 20 -> 30`,
		},
	}, {
		name:    "time budget moved to the top level is no difference",
		edit:    func(s string) string { return strings.Replace(s, ", time_budget_s: 60}", "}\ntime_budget_s: 60", 1) },
		refused: nil,
	}, {
		name: "checkpoint scoring and timing",
		edit: func(s string) string {
			return strings.Replace(s, "{num_to_keep: 2, score_attribute: loss, score_order: min, frequency: 5}",
				"{num_to_keep: 2, score_attribute: acc, score_order: max, frequency: 1, at_end: true}", 1)
		},
		refused: []string{
			`checkpoint.at_end: false -> true`,
			`checkpoint.frequency: 5 -> 1`,
			`checkpoint.score_attribute: "loss" -> "acc"`,
			`checkpoint.score_order: "min" -> "max"`,
		},
	}, {
		name:    "trainable names the trial directories",
		edit:    func(s string) string { return s + "trainable: mlp\n" },
		refused: []string{`trainable: "trainable" -> "mlp"`},
	}, {
		name: "settings that do not change decisions",
		edit: func(s string) string {
			s = strings.Replace(s, "command: [python3, train.py]", "command: [python3, train_fixed.py]", 1)
			s = strings.Replace(s, `env: {A: "1"}`, `env: {A: "2", B: x}`, 1)
			s = strings.Replace(s, "resources: {cpu: 1}", "resources: {cpu: 0.5, memory: 1GiB}", 1)
			s = strings.Replace(s, "failure: {max_failures: 1}", "failure: {max_failures: 3, fail_fast: true}", 1)
			s = strings.Replace(s, "num_to_keep: 2", "num_to_keep: 0", 1)
			return s + "working_dir: other\nmax_concurrent_trials: 2\nmax_pending_trials: 4\nstop_grace: 1m\n" +
				"trial_timeout: 1h\nreport_timeout: 5m\ngpus: 1\ncustom_resources: {tpu: 1}\nname: renamed\nstorage: /elsewhere\n"
		},
		allowed: []string{
			`checkpoint.num_to_keep: 2 -> 0`,
			`command: ["python3", "train.py"] -> ["python3", "train_fixed.py"]`,
			`custom_resources.tpu: none -> 1`,
			`env.A: "1" -> "2"`,
			`env.B: none -> "x"`,
			`failure.fail_fast: false -> true`,
			`failure.max_failures: 1 -> 3`,
			`gpus: 0 -> 1`,
			`max_concurrent_trials: 0 -> 2`,
			`max_pending_trials: hone's choice -> 4`,
			`name: "experiment" -> "renamed"`,
			`report_timeout: none -> 5m0s`,
			`resources.cpu: 1 -> 0.5`,
			`resources.memory: 0 -> 1GiB`,
			`stop_grace: 10s -> 1m0s`,
			`storage: "hone_results" -> "/elsewhere"`,
			`trial_timeout: none -> 1h0m0s`,
			`working_dir: "` + dir + `" -> "` + filepath.Join(dir, "other") + `"`,
		},
	}, {
		name: "the executor: a local experiment resumed on a cluster",
		edit: func(s string) string {
			return s + "executor: {name: slurm, partition: gpu}\n"
		},
		allowed: []string{
			`executor.account: none -> ""`,
			`executor.advertise: none -> ""`,
			`executor.hone_path: none -> ""`,
			`executor.listen: none -> ":0"`,
			`executor.mode: none -> "auto"`,
			`executor.name: "local" -> "slurm"`,
			`executor.node_cache: none -> ""`,
			`executor.partition: none -> "gpu"`,
			`executor.poll_interval_s: none -> 2`,
			`executor.qos: none -> ""`,
			`executor.sbatch_args: none -> []`,
			`executor.srun_args: none -> []`,
			`executor.time: none -> ""`,
		},
	}, {
		name: "both kinds at once",
		edit: func(s string) string {
			s = strings.Replace(s, "mode: min", "mode: max", 1)
			return strings.Replace(s, "failure: {max_failures: 1}", "failure: {max_failures: 2}", 1)
		},
		refused: []string{`mode: "min" -> "max"`},
		allowed: []string{`failure.max_failures: 1 -> 2`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			old, err := Parse([]byte(compareBase), "experiment.yaml", dir)
			if err != nil {
				t.Fatal(err)
			}
			nw, err := Parse([]byte(tc.edit(compareBase)), "experiment.yaml", dir)
			if err != nil {
				t.Fatal(err)
			}
			refused, allowed := Compare(old, nw)
			if !reflect.DeepEqual(refused, tc.refused) || !reflect.DeepEqual(allowed, tc.allowed) {
				t.Errorf("Compare:\n refused %q\n    want %q\n allowed %q\n    want %q", refused, tc.refused, allowed, tc.allowed)
			}
			// The other way round, the same keys.
			back, backAllowed := Compare(nw, old)
			if len(back) != len(tc.refused) || len(backAllowed) != len(tc.allowed) {
				t.Errorf("Compare(new, old): %q, %q", back, backAllowed)
			}
		})
	}
}

// TestComparePBT checks that PBT's mutations, a nested parameter, compare
// by value.
func TestComparePBT(t *testing.T) {
	dir := t.TempDir()
	base := "command: [x]\nmetric: loss\nsearch_space: {lr: {uniform: [0, 1]}}\nscheduler:\n  name: pbt\n  hyperparam_mutations: {lr: [0.1, 0.2], opt: {momentum: {uniform: [0, 1]}}}\n"
	same := "command: [x]\nmetric: loss\nsearch_space: {lr: {uniform: [0, 1]}}\nscheduler:\n  name: pbt\n  perturbation_interval: 60\n  hyperparam_mutations:\n    opt:\n      momentum: {uniform: [0.0, 1.0]}\n    lr:\n      - 0.1\n      - 0.2\n"
	other := strings.Replace(base, "[0.1, 0.2]", "[0.1, 0.3]", 1)
	parse := func(src string) *Spec {
		s, err := Parse([]byte(src), "p.yaml", dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if r, a := Compare(parse(base), parse(same)); r != nil || a != nil {
		t.Errorf("reformatted mutations: %q %q", r, a)
	}
	want := []string{`scheduler.hyperparam_mutations: {lr: [0.1, 0.2], opt: {momentum: {uniform: [0, 1]}}} -> {lr: [0.1, 0.3], opt: {momentum: {uniform: [0, 1]}}}`}
	if r, a := Compare(parse(base), parse(other)); !reflect.DeepEqual(r, want) || a != nil {
		t.Errorf("changed mutations: %q %q", r, a)
	}
}

// TestDecode checks that Decode reads a spec that no longer validates, so
// that it can still be compared.
func TestDecode(t *testing.T) {
	src := "command: [x]\nmetric: loss\nnum_samples: 0\nresources: {cpu: 100000}\n"
	if _, err := Parse([]byte(src), "e.yaml", t.TempDir()); err == nil {
		t.Fatal("Parse accepted an invalid spec")
	}
	s, err := Decode([]byte(src), "e.yaml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if s.NumSamples != 0 || s.Resources.CPU != 100000 {
		t.Errorf("decoded %+v", s)
	}
	if _, err := Decode([]byte("command: [x]\nnum_samples: ten\n"), "e.yaml", t.TempDir()); err == nil {
		t.Error("Decode accepted a wrong type")
	}
}

// TestComparePB2LogScale: giving a PB2 bound a log scale on resume changes
// the scheduler's decisions, so it is refused like any other parameter.
func TestComparePB2LogScale(t *testing.T) {
	base := "command: [x]\nmetric: loss\nscheduler:\n  name: pb2\n  hyperparam_bounds:\n    lr: "
	old, err := Parse([]byte(base+"[0.001, 0.1]\n"), "experiment.yaml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	nu, err := Parse([]byte(base+"{loguniform: [0.001, 0.1]}\n"), "experiment.yaml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	refused, _ := Compare(old, nu)
	want := "scheduler.hyperparam_bounds: {lr: [0.001, 0.1]} -> {lr: {loguniform: [0.001, 0.1]}}"
	if len(refused) != 1 || refused[0] != want {
		t.Fatalf("refused %q, want [%q]", refused, want)
	}
}

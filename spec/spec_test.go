package spec

import (
	"errors"
	"fmt"
	"github.com/hone-tune/hone/internal/textdist"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/scheduler/asha"
	"github.com/hone-tune/hone/scheduler/fifo"
	"github.com/hone-tune/hone/search"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/stopper"
)

// parse parses src as experiment.yaml in a temporary directory.
func parse(t *testing.T, src string) (*Spec, error) {
	t.Helper()
	return Parse([]byte(src), "experiment.yaml", t.TempDir())
}

// messages returns the lines of err, which must be an Errors.
func messages(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("error is %T, not Errors: %v", err, err)
	}
	return strings.Split(es.Error(), "\n")
}

func TestParseFull(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := `
name: demo
storage: /tmp/results
trainable: mlp
metric: loss
seed: 42
num_samples: 3
search_space:
  lr: {loguniform: [1e-4, 1e-1]}
  model: {width: {grid: [16, 32]}, act: relu}
points_to_evaluate:
  - {lr: 0.01, model: {width: 16}}
searcher: {name: random, max_concurrent: 2}
scheduler: fifo
stop:
  training_iteration: 20
  accuracy: 0.95
  loss: {below: 0.05}
  score: {above: 3}
  time_budget_s: 90
  plateau: {num_results: 5}
resources: {cpu: 2, gpu: 1, memory: 2GiB, custom: {licence: 1}}
max_concurrent_trials: 4
checkpoint: {num_to_keep: 2, score_attribute: loss, score_order: min, frequency: 5, at_end: true}
failure: {max_failures: -1, fail_fast: true}
command: [python3, train.py, --epochs, 10]
env: {B: two, A: 1, EMPTY: }
working_dir: work
stop_grace: 1m30s
gpus: 2
custom_resources: {licence: 3}
`
	s, err := Parse([]byte(src), filepath.Join(dir, "experiment.yaml"), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := &Spec{
		Name: "demo", Storage: "/tmp/results", Trainable: "mlp",
		Metric: "loss", Mode: hone.Min, Seed: 42, NumSamples: 3,
		SearchSpace: space.Space{
			"lr":    space.LogUniform(1e-4, 1e-1),
			"model": space.Space{"width": space.GridSearch(16, 32), "act": "relu"},
		},
		PointsToEvaluate: []map[string]any{{"lr": 0.01, "model": map[string]any{"width": 16}}},
		Searcher:         Plugin{Name: "random", MaxConcurrent: 2},
		Scheduler:        Plugin{Name: "fifo"},
		Executor:         Plugin{Name: "local"},
		Stop: Stop{
			TrainingIteration: 20,
			Thresholds: []Threshold{
				{Field: "accuracy", Value: 0.95, Mode: hone.Max},
				{Field: "loss", Value: 0.05, Mode: hone.Min},
				{Field: "score", Value: 3, Mode: hone.Max},
			},
			TimeBudget: 90 * time.Second,
			Plateau:    &Plateau{Std: 0.01, NumResults: 5, GracePeriod: 4},
		},
		Resources:           hone.Resources{CPU: 2, GPU: 1, Memory: 2 << 30, Custom: map[string]float64{"licence": 1}},
		MaxConcurrentTrials: 4,
		Checkpoint:          hone.CheckpointConfig{NumToKeep: 2, ScoreAttribute: "loss", ScoreOrder: hone.Min, Frequency: 5, AtEnd: true},
		Failure:             hone.FailureConfig{MaxFailures: -1, FailFast: true},
		Command:             []string{"python3", "train.py", "--epochs", "10"},
		Env:                 map[string]string{"A": "1", "B": "two", "EMPTY": ""},
		WorkingDir:          filepath.Join(dir, "work"),
		StopGrace:           90 * time.Second,
		GPUs:                2,
		CustomResources:     map[string]float64{"licence": 3},
	}
	got := *s
	got.file, got.lines, got.executor = "", nil, nil
	got.Searcher.Node = nil
	if !reflect.DeepEqual(&got, want) {
		t.Errorf("Parse:\n got %+v\nwant %+v", got, *want)
	}
}

func TestParseDefaults(t *testing.T) {
	dir := t.TempDir()
	s, err := Parse([]byte("command: [./train]\n"), filepath.Join(dir, "my-exp.yml"), dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "my-exp" || s.Storage != "hone_results" || s.NumSamples != 1 || s.Searcher.Name != "random" ||
		s.Scheduler.Name != "fifo" || s.StopGrace != 10*time.Second || s.Resources.CPU != 1 || s.WorkingDir != dir ||
		s.Mode != "" || s.GPUs != 0 {
		t.Errorf("defaults: %+v", s)
	}
}

// TestErrors checks the exact message of each kind of problem.
func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{{
		name: "unknown key with suggestion",
		src:  "command: [x]\nschedular: fifo\n",
		want: []string{`experiment.yaml:2: schedular: unknown key (did you mean "scheduler"?); allowed keys: checkpoint, command, constraints, custom_resources, env, executor, failure, gpus, max_concurrent_trials, max_pending_trials, metric, mode, name, num_samples, objectives, points_to_evaluate, report_timeout, resources, scheduler, search_space, searcher, seed, stop, stop_grace, storage, time_budget_s, trainable, trial_timeout, working_dir`},
	}, {
		name: "unknown nested key",
		src:  "command: [x]\ncheckpoint:\n  num_to_kep: 2\n",
		want: []string{`experiment.yaml:3: checkpoint.num_to_kep: unknown key (did you mean "num_to_keep"?); allowed keys: at_end, frequency, num_to_keep, score_attribute, score_order`},
	}, {
		name: "unknown key without suggestion",
		src:  "command: [x]\nfailure: {retries: 3}\n",
		want: []string{`experiment.yaml:2: failure.retries: unknown key; allowed keys: fail_fast, max_failures`},
	}, {
		name: "wrong type",
		src:  "command: [x]\nnum_samples: ten\n",
		want: []string{`experiment.yaml:2: num_samples: want an integer, got "ten"`},
	}, {
		name: "wrong type mapping",
		src:  "command: [x]\nresources: 4\n",
		want: []string{`experiment.yaml:2: resources: want a mapping, got 4`},
	}, {
		name: "wrong type bool",
		src:  "command: [x]\nfailure: {fail_fast: \"yes\"}\n",
		want: []string{`experiment.yaml:2: failure.fail_fast: want true or false, got "yes"`},
	}, {
		name: "bad range",
		src:  "command: [x]\nfailure:\n  max_failures: -2\n",
		want: []string{`experiment.yaml:3: failure.max_failures: must be -1 (retry without limit), 0 (never retry) or a positive count, got -2`},
	}, {
		name: "bad enum",
		src:  "command: [x]\nmetric: loss\nmode: minimize\n",
		want: []string{`experiment.yaml:3: mode: allowed values are min and max, got "minimize"`},
	}, {
		name: "mode without metric",
		src:  "command: [x]\nmode: max\n",
		want: []string{`experiment.yaml:2: mode: is set but metric is empty: name the metric to minimize or maximize`},
	}, {
		name: "searcher cannot be built",
		src:  "command: [x]\nsearch_space: {x: {grid: [1, 2]}}\nnum_samples: 9000000000000000000\nsearcher: {name: random}\n",
		want: []string{`experiment.yaml:4: searcher: random: num_samples = 9000000000000000000 with 2 grid points: too many trials`},
	}, {
		name: "missing command",
		src:  "metric: loss\n",
		want: []string{`experiment.yaml:1: command: required: the program each trial runs and its arguments, as a list, e.g. [python3, train.py]`},
	}, {
		name: "command as a string",
		src:  "command: python train.py\n",
		want: []string{`experiment.yaml:1: command: want a list of strings (the program and its arguments), got the string "python train.py"; write it as a list, e.g. [python3, train.py], or use [sh, -c, "python train.py"] for a shell command`},
	}, {
		name: "unknown scheduler",
		src:  "command: [x]\nscheduler:\n  name: fifi\n",
		want: []string{`experiment.yaml:3: scheduler.name: unknown scheduler "fifi" (did you mean "fifo"?); known: asha, auto, dehb, fifo, hyperband, hyperband_for_bohb, median, pb2, pbt, pbt_replay`},
	}, {
		name: "unknown searcher as a bare name",
		src:  "command: [x]\nsearcher: bayes\n",
		want: []string{`experiment.yaml:2: searcher.name: unknown searcher "bayes"; known: auto, bohb, dehb, grid, nsga2, random, tpe`},
	}, {
		name: "unknown plugin parameter",
		src:  "command: [x]\nscheduler: {name: fifo, grace_period: 3}\n",
		want: []string{`experiment.yaml:2: scheduler.grace_period: unknown key for scheduler fifo (allowed keys: name); it is a parameter of scheduler asha, dehb and median; did you mean stop.plateau.grace_period?`},
	}, {
		name: "search space error at its line",
		src:  "command: [x]\nsearch_space:\n  bs: {grid: [1, 2]}\n  lr: {loguniform: [0, 1]}\n",
		want: []string{`experiment.yaml:4: search_space.lr.loguniform: want [low, high] with 0 < low < high, got [0, 1]`},
	}, {
		name: "every search space error at once",
		src:  "command: [x]\nsearch_space:\n  lr: {loguniform: [0, 1]}\n  bs: {choice: []}\n  act: {uniformm: [1, 2]}\n  ok: {uniform: [0, 1]}\n  n: {randint: [5, 1]}\nmetric: 3\n",
		want: []string{
			`experiment.yaml:3: search_space.lr.loguniform: want [low, high] with 0 < low < high, got [0, 1]`,
			`experiment.yaml:4: search_space.bs.choice: want a non-empty list of values, got []`,
			`experiment.yaml:5: search_space.act: unknown domain "uniformm" (did you mean "uniform"?); allowed: uniform, quniform, loguniform, qloguniform, randint, qrandint, lograndint, qlograndint, choice, normal, qnormal, grid, const`,
			`experiment.yaml:7: search_space.n.randint: want integers [low, high] with low < high (high exclusive), got [5, 1]`,
			`experiment.yaml:8: metric: want a string, got 3`,
		},
	}, {
		name: "every error inside sub-spaces too",
		src:  "command: [x]\nsearch_space:\n  model:\n    width: {randint: [5, 1]}\n    act: {choice: []}\n    depth: 3\n  deep: {a: {b: {uniform: [2, 1]}, c: {grid: []}}}\n  odd: {choice: {a: {randint: [5, 1]}}}\n",
		want: []string{
			`experiment.yaml:4: search_space.model.width.randint: want integers [low, high] with low < high (high exclusive), got [5, 1]`,
			`experiment.yaml:5: search_space.model.act.choice: want a non-empty list of values, got []`,
			`experiment.yaml:7: search_space.deep.a.b.uniform: want [low, high] with low < high, got [2, 1]`,
			`experiment.yaml:7: search_space.deep.a.c.grid: want a non-empty list of values, got []`,
			`experiment.yaml:8: search_space.odd.choice: want a non-empty list of values, got {a: {randint: [5, 1]}}`,
		},
	}, {
		name: "point key not in the space",
		src:  "command: [x]\nsearch_space: {lr: {uniform: [0, 1]}}\npoints_to_evaluate:\n  - {lr: 0.1}\n  - {lrr: 0.2}\n",
		want: []string{`experiment.yaml:5: points_to_evaluate[1].lrr: not in search_space (did you mean "lr"?); search_space has: lr`},
	}, {
		name: "thresholds",
		src:  "command: [x]\nstop:\n  loss: {under: 1}\n  acc: high\n  time_budget: 5\n",
		want: []string{
			`experiment.yaml:3: stop.loss.under: unknown key; allowed keys: above, below`,
			`experiment.yaml:4: stop.acc: want a number (stop when the result is >= it), {above: value} or {below: value}, got "high"`,
			`experiment.yaml:5: stop.time_budget: unknown stop condition (did you mean "time_budget_s"?); other keys are result fields to stop at`,
		},
	}, {
		name: "resources",
		src:  "command: [x]\nresources: {gpu: 1, memory: 2 gigs, custom: {tpu: 1}}\n",
		want: []string{
			`experiment.yaml:2: resources.gpu: each trial needs 1 GPU(s) but gpus, the number the machine has, is 0`,
			`experiment.yaml:2: resources.memory: want a size such as "2GiB" or "512MB", or a whole number of bytes, got "2 gigs"`,
			`experiment.yaml:2: resources.custom.tpu: the machine offers no "tpu"; say how much it has under custom_resources`,
		},
	}, {
		name: "a fraction of a gpu above one",
		src:  "command: [x]\ngpus: 2\nresources: {gpu: 1.5}\n",
		want: []string{`experiment.yaml:3: resources.gpu: must be a fraction below 1 (trials share a GPU) or a whole number (each trial gets GPUs of its own), got 1.5`},
	}, {
		name: "env",
		src:  "command: [x]\nenv:\n  HONE_TOKEN: x\n  OK: [1]\n",
		want: []string{
			`experiment.yaml:3: env.HONE_TOKEN: hone sets HONE_TOKEN for each trial; choose another name`,
			`experiment.yaml:4: env.OK: want a string, got a list`,
		},
	}, {
		name: "working dir",
		src:  "command: [x]\nworking_dir: nowhere\n",
		want: []string{`experiment.yaml:2: working_dir: ` + "DIR" + `/nowhere: no such directory`},
	}, {
		name: "duration",
		src:  "command: [x]\nstop_grace: soon\n",
		want: []string{`experiment.yaml:2: stop_grace: want a duration such as "10s" or "1m30s", or a number of seconds, got "soon"`},
	}, {
		name: "duplicate key",
		src:  "command: [x]\ngpus: 1\ngpus: 2\n",
		want: []string{`experiment.yaml:3: gpus: duplicate key`},
	}, {
		name: "name with a slash",
		src:  "command: [x]\nname: a/b\n",
		want: []string{`experiment.yaml:2: name: names a directory under storage, so it cannot contain a slash, got "a/b"`},
	}, {
		name: "syntax",
		src:  "command: [x\n",
		want: []string{`experiment.yaml:1: invalid YAML: did not find expected ',' or ']'`},
	}, {
		name: "empty",
		src:  "",
		want: []string{`experiment.yaml: the spec is empty; it needs at least a command`},
	}, {
		name: "not a mapping",
		src:  "- command\n",
		want: []string{`experiment.yaml:1: a spec is a mapping of keys such as command and search_space, got a list`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Parse([]byte(tc.src), "experiment.yaml", dir)
			if s != nil {
				t.Errorf("Parse returned a spec with errors")
			}
			got := messages(t, err)
			for i := range tc.want {
				tc.want[i] = strings.ReplaceAll(tc.want[i], "DIR", dir)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestAllErrorsAtOnce checks that problems of every kind come together, in
// line order.
func TestAllErrorsAtOnce(t *testing.T) {
	src := `metric: loss
mode: up
num_samples: -3
search_space:
  lr: {uniform: [0, 1]}
scheduler:
  name: fifo
  reduction_factor: 2
stop:
  training_iteration: 0
checkpoint: {num_to_keep: -1, score_order: best}
gpus: many
`
	_, err := parse(t, src)
	want := []string{
		`experiment.yaml:1: command: required: the program each trial runs and its arguments, as a list, e.g. [python3, train.py]`,
		`experiment.yaml:2: mode: allowed values are min and max, got "up"`,
		`experiment.yaml:3: num_samples: must be -1 (until a stop condition ends the experiment) or >= 1, got -3`,
		`experiment.yaml:8: scheduler.reduction_factor: unknown key for scheduler fifo (allowed keys: name); it is a parameter of scheduler asha, dehb, hyperband and hyperband_for_bohb`,
		`experiment.yaml:10: stop.training_iteration: must be >= 1, got 0`,
		`experiment.yaml:11: checkpoint.num_to_keep: must be >= 1, or 0 to keep all, got -1`,
		`experiment.yaml:11: checkpoint.score_order: allowed values are max and min, got "best"`,
		`experiment.yaml:12: gpus: want an integer, got "many"`,
	}
	if got := messages(t, err); !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n got %q\nwant %q", got, want)
	}
	var one *Error
	if !errors.As(err, &one) || one.Line != 1 || one.Path != "command" {
		t.Errorf("errors.As(*Error) = %+v", one)
	}
}

// TestPluginParams registers a scheduler with parameters, as the real ones
// are, and checks how its parameters are read and reported.
func TestPluginParams(t *testing.T) {
	var got struct {
		rf    float64
		bk    int
		stop  bool
		attr  string
		built int
	}
	schedulers["test"] = SchedulerPlugin{
		Doc: "a test scheduler",
		Read: func(p *Params) func(*Spec) (hone.Scheduler, error) {
			got.rf = p.Float("reduction_factor", 4)
			if got.rf <= 1 {
				p.Errorf("reduction_factor", "must be > 1, got %s", formatNum(got.rf))
			}
			got.bk = p.Int("brackets", 1)
			got.stop = p.Bool("stop_last_trials", true)
			got.attr = p.String("time_attr", hone.FieldTrainingIteration)
			return func(s *Spec) (hone.Scheduler, error) {
				got.built++
				if s.Metric == "" {
					return nil, errors.New("needs a metric")
				}
				return fifo.New(), nil
			}
		},
	}
	t.Cleanup(func() { delete(schedulers, "test") })

	base := "command: [x]\nmetric: loss\nscheduler:\n  name: test\n"
	s, err := parse(t, base+"  reduction_factor: 3\n  brackets: 2\n  time_attr: time_total_s\n")
	if err != nil {
		t.Fatal(err)
	}
	if got.rf != 3 || got.bk != 2 || !got.stop || got.attr != "time_total_s" || got.built != 1 {
		t.Errorf("params read: %+v", got)
	}
	if _, err := Build(s, t.TempDir(), nil); err != nil || got.built != 2 {
		t.Errorf("Build: %v (built %d times)", err, got.built)
	}

	_, err = parse(t, base+"  reduction_factor: 1\n  brackts: 2\n  stop_last_trials: 0\n")
	want := []string{
		`experiment.yaml:5: scheduler.reduction_factor: must be > 1, got 1`,
		`experiment.yaml:6: scheduler.brackts: unknown key (did you mean "brackets"?); allowed keys: brackets, name, reduction_factor, stop_last_trials, time_attr`,
		`experiment.yaml:7: scheduler.stop_last_trials: want true or false, got 0`,
	}
	if got := messages(t, err); !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n got %q\nwant %q", got, want)
	}

	// The builder's own error is reported once the rest is valid.
	_, err = parse(t, "command: [x]\nscheduler: test\n")
	want = []string{`experiment.yaml:2: scheduler: test: needs a metric`}
	if got := messages(t, err); !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n got %q\nwant %q", got, want)
	}
}

func TestASHA(t *testing.T) {
	s, err := parse(t, `command: [x]
metric: loss
scheduler:
  name: asha
  time_attr: time_total_s
  max_t: 60
  grace_period: 5
  reduction_factor: 3
  brackets: 2
  stop_last_trials: false
`)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Build(s, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, ok := plan.Experiment.Scheduler.(*asha.Scheduler)
	if !ok {
		t.Fatalf("scheduler is %T", plan.Experiment.Scheduler)
	}
	if got := sc.Milestones(1); !reflect.DeepEqual(got, []float64{15, 45}) {
		t.Errorf("bracket 1 milestones %v, want [15 45]", got)
	}
	if got := sc.Config().Promotion; got != asha.PromotePercentile {
		t.Errorf("promotion %q, want Ray Tune's rule, %q, by default", got, asha.PromotePercentile)
	}
	s, err = parse(t, "command: [x]\nmetric: loss\nscheduler: {name: asha, promotion: top}\n")
	if err != nil {
		t.Fatal(err)
	}
	if plan, err = Build(s, t.TempDir(), nil); err != nil {
		t.Fatal(err)
	}
	if got := plan.Experiment.Scheduler.(*asha.Scheduler).Config().Promotion; got != asha.PromoteTop {
		t.Errorf("promotion: top built promotion %q", got)
	}

	_, err = parse(t, `command: [x]
metric: loss
scheduler:
  name: asha
  mode: low
  max_t: 10
  grace_period: 20
  reduction_factor: 1
  brackets: 0
  grace: 1
  promotion: best
`)
	want := []string{
		`experiment.yaml:5: scheduler.mode: allowed values are min and max, got "low"`,
		`experiment.yaml:6: scheduler.max_t: must be >= grace_period (20), got 10`,
		`experiment.yaml:8: scheduler.reduction_factor: must be > 1, got 1`,
		`experiment.yaml:9: scheduler.brackets: must be >= 1, got 0`,
		`experiment.yaml:10: scheduler.grace: unknown key (did you mean "grace_period"?); allowed keys: brackets, grace_period, max_t, metric, mode, name, promotion, reduction_factor, stop_last_trials, time_attr`,
		`experiment.yaml:11: scheduler.promotion: allowed values are percentile and top, got "best"`,
	}
	if got := messages(t, err); !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n got %q\nwant %q", got, want)
	}

	_, err = parse(t, "command: [x]\nscheduler: asha\n")
	want = []string{`experiment.yaml:2: scheduler: asha: needs a metric to compare trials: set metric (at the top level, or in this section)`}
	if got := messages(t, err); !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n got %q\nwant %q", got, want)
	}
}

func TestValidateGoSpec(t *testing.T) {
	s := Default()
	s.WorkingDir = t.TempDir()
	s.Command = []string{"true"}
	s.Name = "x"
	if err := s.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	s.Name = ""
	s.NumSamples = 0
	s.Scheduler.Name = "nope"
	want := []string{
		`name: must not be empty`,
		`num_samples: must be -1 (until a stop condition ends the experiment) or >= 1, got 0`,
		`scheduler.name: unknown scheduler "nope"; known: asha, auto, dehb, fifo, hyperband, hyperband_for_bohb, median, pb2, pbt, pbt_replay`,
	}
	if got := messages(t, s.Validate()); !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n got %q\nwant %q", got, want)
	}
}

func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(files) < 2 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, f := range files {
		s, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		root, _ := filepath.Abs("..")
		if s.WorkingDir != root {
			t.Errorf("%s: working_dir = %s, want the repository root %s", f, s.WorkingDir, root)
		}
		if _, err := os.Stat(filepath.Join(s.WorkingDir, s.Command[len(s.Command)-1])); err != nil {
			t.Logf("%s: %v (the example trainer is not there yet)", f, err)
		}
	}
	// The reference documents every top-level key.
	data, err := os.ReadFile("../examples/reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range topKeys {
		// A key that is an alternative to another (objectives to metric
		// and mode) is documented as a commented-out example.
		if !strings.Contains(string(data), "\n"+k+":") && !strings.Contains(string(data), "\n# "+k+":") {
			t.Errorf("examples/reference.yaml does not document %s", k)
		}
	}
}

func TestBuild(t *testing.T) {
	src := `
name: b
metric: acc
mode: max
seed: 3
num_samples: 2
search_space: {x: {grid: [1, 2, 3]}}
searcher: {name: grid, max_concurrent: 2}
stop:
  training_iteration: 5
  acc: 0.9
  loss: {below: 0.1}
  time_budget_s: 2.5
  plateau: {std: 0.5}
resources: {cpu: 1, memory: 1KB}
max_concurrent_trials: 3
checkpoint: {num_to_keep: 1, at_end: true}
failure: {max_failures: 2}
command: [sh, -c, "echo hi"]
env: {Z: 1, A: "x=y"}
stop_grace: 20s
gpus: 1
custom_resources: {tpu: 4}
`
	s, err := parse(t, src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var out strings.Builder
	plan, err := Build(s, dir, &out)
	if err != nil {
		t.Fatal(err)
	}
	exp := plan.Experiment
	if exp.Name != "b" || exp.Metric != "acc" || exp.Mode != hone.Max || exp.Seed != 3 || exp.MaxConcurrentTrials != 3 ||
		exp.TimeBudget != 2500*time.Millisecond || exp.Resources.Memory != 1000 || exp.Checkpoint.NumToKeep != 1 ||
		!exp.Checkpoint.AtEnd || exp.Failure.MaxFailures != 2 {
		t.Errorf("experiment: %+v", exp)
	}
	lim, ok := exp.Searcher.(*search.StatefulLimiter)
	if !ok {
		t.Fatalf("searcher is %T, want a limiter (max_concurrent)", exp.Searcher)
	}
	if r, ok := lim.Inner().(*random.Searcher); !ok || r.Total() != 6 {
		t.Errorf("inner searcher %T", lim.Inner())
	}
	if _, ok := exp.Scheduler.(fifo.Scheduler); !ok {
		t.Errorf("scheduler is %T", exp.Scheduler)
	}
	wantStop := []hone.Stopper{
		stopper.MaxIterations(5),
		stopper.Threshold{Field: "acc", Value: 0.9, Mode: hone.Max},
		stopper.Threshold{Field: "loss", Value: 0.1, Mode: hone.Min},
		&stopper.Plateau{Metric: "acc", Std: 0.5, NumResults: 4, GracePeriod: 4},
	}
	if !reflect.DeepEqual(exp.Stoppers, wantStop) {
		t.Errorf("stoppers %#v", exp.Stoppers)
	}
	if len(exp.Callbacks) != 2 {
		t.Errorf("callbacks: %d, want trial files and progress", len(exp.Callbacks))
	}
	wantPool := hone.Resources{CPU: float64(runtime.NumCPU()), GPU: 1, Memory: thisMachine().memory, Custom: map[string]float64{"tpu": 4}}
	if !reflect.DeepEqual(plan.Options.Pool, wantPool) || plan.Options.Dir != dir || plan.Options.StopGrace != 40*time.Second {
		t.Errorf("options: %+v", plan.Options)
	}
	wantProc := Process{Command: []string{"sh", "-c", "echo hi"}, Env: []string{"A=x=y", "Z=1"}, Dir: s.WorkingDir, StopGrace: 20 * time.Second, GPUs: 1,
		ExperimentDir: dir}
	gotProc := plan.Process
	if gotProc.build == nil {
		t.Error("the plan has no executor to build")
	}
	gotProc.build = nil
	if !reflect.DeepEqual(gotProc, wantProc) {
		t.Errorf("process: %+v", plan.Process)
	}
	if err := plan.Close(); err != nil {
		t.Error(err)
	}

	// A fresh plan has a fresh searcher.
	plan2, err := Build(s, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if plan2.Experiment.Searcher == exp.Searcher || len(plan2.Experiment.Callbacks) != 1 {
		t.Error("Build reused a searcher, or made a progress table without stdout")
	}

	// Too many CPUs per trial for this machine.
	s.Resources.CPU = float64(runtime.NumCPU() + 1)
	_, err = Build(s, dir, nil)
	if got := messages(t, err); len(got) != 1 || !strings.Contains(got[0], "experiment.yaml:15: resources.cpu: each trial needs") {
		t.Errorf("Build with too many CPUs: %q", got)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "1024": 1024, "2GiB": 2 << 30, "2 gib": 2 << 30, "1.5G": 3 << 29, "512MB": 512e6,
		"1kB": 1000, "1KB": 1000, "3KiB": 3072, "1T": 1 << 40, "7B": 7,
	} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "1.5", "2 gigs", "-1GiB", "1e3", "9999999TiB"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}

func TestClosest(t *testing.T) {
	keys := []string{"scheduler", "searcher", "seed", "stop", "num_samples", "gpus"}
	for in, want := range map[string]string{
		"schedular": "scheduler", "Searcher": "searcher", "sead": "seed", "stpo": "stop",
		"num_sample": "num_samples", "gpu": "gpus", "foo": "", "resources": "", "s": "",
		"num_": "num_samples", "sto": "stop", "stop_": "stop", "xyz_abc": "",
	} {
		if got := closest(in, keys); got != want {
			t.Errorf("closest(%q) = %q, want %q", in, got, want)
		}
	}
	if d := textdist.Distance("abcd", "acbd"); d != 1 {
		t.Errorf("editDistance swap = %d", d)
	}
}

// FuzzParse checks that no document makes Parse panic, that whatever it
// accepts passes Validate, that Decode reads it the same, and that Compare
// finds no difference between the spec and itself.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"command: [x]\n",
		"command: [x]\nsearch_space: {lr: {loguniform: [1e-4, 1e-1]}}\nnum_samples: 2\n",
		"command: [x]\nstop: {loss: {below: 1}, plateau: {std: 1}}\n",
		"command: [x]\nscheduler: {name: fifo, x: &a [1, *a]}\n",
		"command: [x]\nenv: {A: 1}\nresources: {memory: 1GiB}\n",
		"command: [x]\nmetric: m\nscheduler: {name: pbt, hyperparam_mutations: {a: [1, .nan]}}\npoints_to_evaluate: [{a: .inf}]\n",
		"command: [x]\ntime_budget_s: 5\nmax_pending_trials: 2\ntrial_timeout: 1h\nstorage: file:///tmp/x\n",
		"command: [x]\n\"a\\nb\": 1\nenv: {\"x\\ty\": 1}\nname: \"\\r\"\n",
		"- a\n",
		"{",
	} {
		f.Add(seed)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse([]byte(src), "f.yaml", dir)
		if err != nil {
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error is not a non-empty Errors: %v", err)
			}
			for _, e := range es {
				if strings.ContainsAny(e.Error(), "\n\r") {
					t.Fatalf("an error takes more than one line: %q", e.Error())
				}
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("accepted spec fails Validate: %v", err)
		}
		if r, a := Compare(s, s); r != nil || a != nil {
			t.Fatalf("a spec differs from itself: %q %q", r, a)
		}
		d, err := Decode([]byte(src), "f.yaml", dir)
		if err != nil {
			t.Fatalf("Decode refuses what Parse accepts: %v", err)
		}
		if r, a := Compare(s, d); r != nil || a != nil {
			t.Fatalf("Decode and Parse differ: %q %q", r, a)
		}
	})
}

// TestAliasBomb checks that a document expanding exponentially through
// aliases is refused quickly.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("command: [x]\na0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n")
	for i := 1; i < 12; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	for _, key := range []string{"search_space", "points_to_evaluate"} {
		src := strings.Replace(b.String(), "a11:", key+":", 1)
		if key == "points_to_evaluate" {
			src = strings.Replace(src, key+": &a11 [", key+": &a11 [{x: ", 1)
			src = strings.Replace(src, "*a10]\n", "*a10}]\n", 1)
		}
		start := time.Now()
		_, err := parse(t, src)
		if err == nil || !strings.Contains(err.Error(), "too large") {
			t.Errorf("%s: err = %v", key, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", key, d)
		}
	}
}

package spec

import (
	"reflect"
	"testing"
	"time"
)

// TestKeyElsewhere checks that a key written in the wrong place names
// where it belongs.
func TestKeyElsewhere(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{{
		name: "max_failures at the top level",
		src:  "command: [x]\nmax_failures: 3\n",
		want: []string{`experiment.yaml:2: max_failures: unknown key at the top level; did you mean failure.max_failures?`},
	}, {
		name: "fail_fast at the top level",
		src:  "command: [x]\nfail_fast: true\n",
		want: []string{`experiment.yaml:2: fail_fast: unknown key at the top level; did you mean failure.fail_fast?`},
	}, {
		name: "num_to_keep at the top level",
		src:  "command: [x]\nnum_to_keep: 2\n",
		want: []string{`experiment.yaml:2: num_to_keep: unknown key at the top level; did you mean checkpoint.num_to_keep?`},
	}, {
		name: "grace_period at the top level",
		src:  "command: [x]\ngrace_period: 2\n",
		want: []string{`experiment.yaml:2: grace_period: unknown key at the top level; did you mean scheduler.grace_period (a parameter of scheduler asha, dehb and median) or stop.plateau.grace_period?`},
	}, {
		name: "max_t at the top level",
		src:  "command: [x]\nmax_t: 20\n",
		want: []string{`experiment.yaml:2: max_t: unknown key at the top level; did you mean scheduler.max_t (a parameter of scheduler asha, auto, dehb, hyperband and hyperband_for_bohb)?`},
	}, {
		name: "a searcher parameter at the top level",
		src:  "command: [x]\nn_startup_trials: 5\n",
		want: []string{`experiment.yaml:2: n_startup_trials: unknown key at the top level; did you mean searcher.n_startup_trials (a parameter of searcher tpe)?`},
	}, {
		name: "cpu at the top level",
		src:  "command: [x]\ncpu: 2\n",
		want: []string{`experiment.yaml:2: cpu: unknown key at the top level; did you mean resources.cpu?`},
	}, {
		name: "gpu at the top level: a close key and a key elsewhere",
		src:  "command: [x]\ngpu: 1\n",
		want: []string{`experiment.yaml:2: gpu: unknown key at the top level; did you mean gpus or resources.gpu?`},
	}, {
		name: "a top-level key in a section",
		src:  "command: [x]\nfailure:\n  num_samples: 3\n",
		want: []string{`experiment.yaml:3: failure.num_samples: unknown key under failure (allowed keys: fail_fast, max_failures); did you mean num_samples at the top level?`},
	}, {
		name: "a key of another section",
		src:  "command: [x]\ncheckpoint:\n  max_failures: 3\n",
		want: []string{`experiment.yaml:3: checkpoint.max_failures: unknown key under checkpoint (allowed keys: at_end, frequency, num_to_keep, score_attribute, score_order); did you mean failure.max_failures?`},
	}, {
		name: "max_concurrent at the top level",
		src:  "command: [x]\nmax_concurrent: 2\n",
		want: []string{`experiment.yaml:2: max_concurrent: unknown key at the top level; did you mean max_concurrent_trials or searcher.max_concurrent?`},
	}, {
		name: "a scheduler parameter under plateau",
		src:  "command: [x]\nmetric: loss\nstop:\n  plateau: {max_t: 3}\n",
		want: []string{`experiment.yaml:4: stop.plateau.max_t: unknown key under stop.plateau (allowed keys: grace_period, metric, num_results, std); did you mean scheduler.max_t (a parameter of scheduler asha, auto, dehb, hyperband and hyperband_for_bohb)?`},
	}, {
		name: "a parameter of another scheduler",
		src:  "command: [x]\nmetric: loss\nscheduler:\n  name: hyperband\n  grace_period: 3\n",
		want: []string{`experiment.yaml:5: scheduler.grace_period: unknown key for scheduler hyperband (allowed keys: max_t, metric, mode, name, reduction_factor, stop_last_trials, time_attr); it is a parameter of scheduler asha, dehb and median; did you mean stop.plateau.grace_period?`},
	}, {
		name: "a scheduler parameter under searcher",
		src:  "command: [x]\nsearcher:\n  name: random\n  reduction_factor: 3\n",
		want: []string{`experiment.yaml:4: searcher.reduction_factor: unknown key for searcher random (allowed keys: max_concurrent, name); did you mean scheduler.reduction_factor (a parameter of scheduler asha, dehb, hyperband and hyperband_for_bohb)?`},
	}, {
		name: "Ray Tune's names",
		src:  "command: [x]\nconfig: {}\nkeep_checkpoints_num: 2\nsearch_alg: tpe\n",
		want: []string{
			`experiment.yaml:2: config: unknown key at the top level; hone calls it search_space`,
			`experiment.yaml:3: keep_checkpoints_num: unknown key at the top level; hone calls it checkpoint.num_to_keep`,
			`experiment.yaml:4: search_alg: unknown key at the top level; hone calls it searcher`,
		},
	}, {
		name: "a threshold's keys stay plain",
		src:  "command: [x]\nstop:\n  loss: {metric: 1}\n",
		want: []string{`experiment.yaml:3: stop.loss.metric: unknown key; allowed keys: above, below`},
	}, {
		name: "time_budget_s twice, different",
		src:  "command: [x]\ntime_budget_s: 60\nstop: {time_budget_s: 90}\n",
		want: []string{`experiment.yaml:2: time_budget_s: is 60 but stop.time_budget_s is 90: they are the same setting; give it once`},
	}, {
		name: "time_budget_s not positive",
		src:  "command: [x]\ntime_budget_s: 0\n",
		want: []string{`experiment.yaml:2: time_budget_s: must be > 0 (seconds), got 0`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, tc.src)
			if got := messages(t, err); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestTopLevelTimeBudget checks that time_budget_s at the top level is
// stop.time_budget_s.
func TestTopLevelTimeBudget(t *testing.T) {
	for _, src := range []string{
		"command: [x]\ntime_budget_s: 90\n",
		"command: [x]\ntime_budget_s: 90\nstop: {time_budget_s: 90}\n",
		"command: [x]\nstop: {time_budget_s: 90}\ntime_budget_s: 90.0\n",
		"command: [x]\nstop: {time_budget_s: 90}\ntime_budget_s:\n",
	} {
		s, err := parse(t, src)
		if err != nil {
			t.Errorf("%q: %v", src, err)
			continue
		}
		if s.Stop.TimeBudget != 90*time.Second {
			t.Errorf("%q: budget %v", src, s.Stop.TimeBudget)
		}
		plan, err := Build(s, t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if plan.Experiment.TimeBudget != 90*time.Second {
			t.Errorf("%q: experiment budget %v", src, plan.Experiment.TimeBudget)
		}
	}
}

// TestPendingAndTimeouts checks max_pending_trials, trial_timeout and
// report_timeout from the spec to the experiment.
func TestPendingAndTimeouts(t *testing.T) {
	s, err := parse(t, "command: [x]\nmax_pending_trials: 8\ntrial_timeout: 2h\nreport_timeout: 90\n")
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxPendingTrials != 8 || s.TrialTimeout != 2*time.Hour || s.ReportTimeout != 90*time.Second {
		t.Errorf("spec: pending %d, trial timeout %v, report timeout %v", s.MaxPendingTrials, s.TrialTimeout, s.ReportTimeout)
	}
	plan, err := Build(s, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := plan.Experiment; e.MaxPendingTrials != 8 || e.TrialTimeout != 2*time.Hour || e.ReportTimeout != 90*time.Second {
		t.Errorf("experiment: pending %d, trial timeout %v, report timeout %v", e.MaxPendingTrials, e.TrialTimeout, e.ReportTimeout)
	}

	// Left out, hone chooses (0) and there is no limit.
	s, err = parse(t, "command: [x]\nmax_pending_trials:\n")
	if err != nil {
		t.Fatal(err)
	}
	if plan, err = Build(s, t.TempDir(), nil); err != nil {
		t.Fatal(err)
	}
	if e := plan.Experiment; e.MaxPendingTrials != 0 || e.TrialTimeout != 0 || e.ReportTimeout != 0 {
		t.Errorf("defaults: pending %d, trial timeout %v, report timeout %v", e.MaxPendingTrials, e.TrialTimeout, e.ReportTimeout)
	}

	_, err = parse(t, "command: [x]\nmax_pending_trials: 0\ntrial_timeout: -5s\nreport_timeout: soon\n")
	want := []string{
		`experiment.yaml:2: max_pending_trials: must be >= 1 (leave it out to let hone choose), got 0`,
		`experiment.yaml:3: trial_timeout: must be > 0 (leave it out for no limit), got -5s`,
		`experiment.yaml:4: report_timeout: want a duration such as "10s" or "1m30s", or a number of seconds, got "soon"`,
	}
	if got := messages(t, err); !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n got %q\nwant %q", got, want)
	}
	_, err = parse(t, "command: [x]\nmax_pending_trials: 1.5\nreport_timeout: 0\n")
	want = []string{
		`experiment.yaml:2: max_pending_trials: want an integer, got 1.5`,
		`experiment.yaml:3: report_timeout: must be > 0 (leave it out for no limit), got 0s`,
	}
	if got := messages(t, err); !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n got %q\nwant %q", got, want)
	}
	g := Default()
	g.WorkingDir, g.Command, g.Name = t.TempDir(), []string{"true"}, "x"
	g.MaxPendingTrials, g.TrialTimeout, g.ReportTimeout = -1, -time.Second, -time.Second
	want = []string{
		`max_pending_trials: must be >= 1, or 0 to let hone choose, got -1`,
		`trial_timeout: must be > 0, or 0 for no limit, got -1s`,
		`report_timeout: must be > 0, or 0 for no limit, got -1s`,
	}
	if got := messages(t, g.Validate()); !reflect.DeepEqual(got, want) {
		t.Errorf("Go spec errors:\n got %q\nwant %q", got, want)
	}
}

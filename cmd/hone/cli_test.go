package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/spec"
	"github.com/hone-tune/hone/trial"
)

// cli runs hone in-process with a custom executor (nil: the process
// executor) and returns its exit code and output.
type cli struct {
	t    *testing.T
	exec func(spec.Process) (hone.Executor, error)
	ctx  context.Context
}

func (c cli) run(args ...string) (code int, stdout, stderr string) {
	c.t.Helper()
	var out, errb bytes.Buffer
	a := newApp(&out, &errb)
	if c.exec != nil {
		a.newExecutor = c.exec
	}
	ctx := c.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	code = a.execute(ctx, args)
	return code, out.String(), errb.String()
}

// goTrainer is a stand-in for the process executor: every trial reports
// score = x * iteration, and fails at once if x is negative.
func goTrainer(hook func(s trial.Session, it int)) func(spec.Process) (hone.Executor, error) {
	return func(spec.Process) (hone.Executor, error) {
		return inproc.NewFunc(func(ctx context.Context, s trial.Session) error {
			x, _ := hone.Number(s.Config()["x"])
			if x < 0 {
				return errors.New("negative x")
			}
			for it := s.Iteration() + 1; ; it++ {
				if hook != nil {
					hook(s, it)
				}
				if err := s.Report(trial.Metrics{"score": x * float64(it)}); err != nil {
					return err
				}
			}
		}), nil
	}
}

// writeSpec writes a spec whose storage is a temporary directory and
// returns its path and the experiment directory.
func writeSpec(t *testing.T, name, body string) (path, dir string) {
	t.Helper()
	root := t.TempDir()
	storage := filepath.Join(root, "results")
	path = filepath.Join(root, name+".yaml")
	src := fmt.Sprintf("storage: %s\n%s", storage, body)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, filepath.Join(storage, name)
}

const gridSpec = `metric: score
mode: max
search_space:
  x: {grid: [1, 3, 2]}
stop: {training_iteration: 4}
max_concurrent_trials: 2
command: [unused]
`

func TestValidateCommand(t *testing.T) {
	c := cli{t: t}
	good, _ := writeSpec(t, "good", gridSpec)
	code, out, errOut := c.run("validate", good)
	if code != exitOK || !strings.Contains(out, good+": ok") || errOut != "" {
		t.Errorf("validate good: %d %q %q", code, out, errOut)
	}

	bad, _ := writeSpec(t, "bad", "metric: score\nmode: maximum\nschedular: fifo\nnum_samples: 0\n")
	code, out, errOut = c.run("validate", bad)
	want := []string{
		bad + `:1: command: required: the program each trial runs and its arguments, as a list, e.g. [python3, train.py]`,
		bad + `:3: mode: allowed values are min and max, got "maximum"`,
		bad + `:4: schedular: unknown key (did you mean "scheduler"?); allowed keys: checkpoint, command, constraints, custom_resources, env, executor, failure, gpus, max_concurrent_trials, max_pending_trials, metric, mode, name, num_samples, objectives, points_to_evaluate, report_timeout, resources, scheduler, search_space, searcher, seed, stop, stop_grace, storage, time_budget_s, trainable, trial_timeout, working_dir`,
		bad + `:5: num_samples: must be -1 (until a stop condition ends the experiment) or >= 1, got 0`,
		`hone: 4 problems in the spec`,
	}
	if code != exitUsage || out != "" || errOut != strings.Join(want, "\n")+"\n" {
		t.Errorf("validate bad: code %d, stdout %q, stderr:\n%s\nwant:\n%s", code, out, errOut, strings.Join(want, "\n"))
	}

	// searcher: auto and scheduler: auto say what they chose, and why.
	auto, _ := writeSpec(t, "auto", "metric: loss\nnum_samples: 200\nsearch_space: {lr: {loguniform: [0.001, 1]}, d: {randint: [1, 9]}}\nsearcher: auto\nscheduler: auto\nstop: {training_iteration: 81}\nmax_concurrent_trials: 8\ncommand: [unused]\n")
	code, out, errOut = c.run("validate", auto)
	wantOut := auto + ": ok (searcher auto, scheduler auto, experiment directory " + filepath.Join(filepath.Dir(auto), "results", "auto") + ")\n" +
		"  searcher auto: tpe: num_samples 200 leaves the model at least 182 suggestions; TPE with a joint density over the 2 parameters, pending trials as liars, so trials suggested together do not repeat each other, fed at asha's rungs, with the fidelity check\n" +
		"  scheduler auto: asha (time_attr training_iteration, max_t 81, grace_period 3, reduction_factor 3, promotion top): trials report training_iteration up to max_t 81 (from stop.training_iteration): ASHA with grace_period 3 (max_t/27, so that its top rung is max_t itself), reduction_factor 3 and promotion top stops weak trials early, without waiting for others\n"
	if code != exitOK || out != wantOut || errOut != "" {
		t.Errorf("validate auto: %d\n%s\nwant\n%s\nstderr %q", code, out, wantOut, errOut)
	}

	code, _, errOut = c.run("validate", filepath.Join(t.TempDir(), "missing.yaml"))
	if code != exitUsage || !strings.Contains(errOut, "no such file") {
		t.Errorf("validate missing: %d %q", code, errOut)
	}

	// An object store is named as a URL, and not contacted.
	remote := filepath.Join(t.TempDir(), "rem.yaml")
	if err := os.WriteFile(remote, []byte("name: run1\nstorage: \"s3://bucket/p?endpoint=http://127.0.0.1:1&region=r\"\n"+gridSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = c.run("validate", remote)
	if code != exitOK || !strings.Contains(out, "experiment at s3://bucket/p/run1?endpoint=http://127.0.0.1:1&region=r)") {
		t.Errorf("validate with s3 storage: %d %q %q", code, out, errOut)
	}
}

func TestRunStatusResults(t *testing.T) {
	c := cli{t: t, exec: goTrainer(nil)}
	path, dir := writeSpec(t, "grid", gridSpec)
	code, out, errOut := c.run("run", path)
	if code != exitOK {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "Experiment finished") || !strings.Contains(out, "Best trial") {
		t.Errorf("run printed no final table:\n%s", out)
	}
	if !strings.Contains(errOut, "hone: done; see hone results "+dir) {
		t.Errorf("run stderr:\n%s", errOut)
	}
	saved, err := os.ReadFile(filepath.Join(dir, specCopy))
	src, _ := os.ReadFile(path)
	if err != nil || !bytes.Equal(saved, src) {
		t.Errorf("spec.yaml not copied: %v", err)
	}

	code, out, _ = c.run("status", dir)
	if code != exitOK || !strings.Contains(out, "3 trials (3 TERMINATED)") {
		t.Errorf("status: %d\n%s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[1], "Trial") || !strings.Contains(lines[1], "score") {
		t.Errorf("status table:\n%s", out)
	}

	// Results, best first: x=3 scores 12.
	code, out, _ = c.run("results", dir)
	lines = strings.Split(strings.TrimSpace(out), "\n")
	if code != exitOK || len(lines) != 6 || !strings.Contains(lines[3], " 3 ") || !strings.Contains(lines[3], "12") {
		t.Errorf("results: %d\n%s", code, out)
	}

	code, out, _ = c.run("results", dir, "--best", "--csv")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != exitOK || err != nil || len(rows) != 2 {
		t.Fatalf("results --best --csv: %d %v\n%s", code, err, out)
	}
	col := map[string]string{}
	for i, h := range rows[0] {
		col[h] = rows[1][i]
	}
	if col["config/x"] != "3" || col["score"] != "12" || col["status"] != "TERMINATED" || col["training_iteration"] != "4" {
		t.Errorf("best CSV row: %v", col)
	}

	code, out, _ = c.run("results", dir, "--best", "--metric", "score", "--mode", "min", "--scope", "avg")
	if code != exitOK || !strings.Contains(out, "with score=2.5 (min, scope avg)") || !strings.Contains(out, `"x": 1`) {
		t.Errorf("results --best min avg: %d\n%s", code, out)
	}
	code, out, _ = c.run("results", dir, "--csv")
	if rows, err := csv.NewReader(strings.NewReader(out)).ReadAll(); code != exitOK || err != nil || len(rows) != 4 {
		t.Errorf("results --csv: %d %v\n%s", code, err, out)
	}
	code, _, errOut = c.run("results", dir, "--best", "--metric", "nope")
	if code != exitFailed || !strings.Contains(errOut, `metric "nope" is in no result`) {
		t.Errorf("results with an unknown metric: %d %q", code, errOut)
	}

	// A second run without --resume is an error and changes nothing.
	code, _, errOut = c.run("run", path)
	if code != exitUsage || !strings.Contains(errOut, dir+" already holds an experiment; resume it with --resume") {
		t.Errorf("second run: %d %q", code, errOut)
	}
	// With --resume it resumes, and there is nothing left to do.
	code, _, errOut = c.run("run", "--resume", path)
	if code != exitOK || !strings.Contains(errOut, "resuming the experiment in "+dir) {
		t.Errorf("run --resume: %d %q", code, errOut)
	}
	e, err := results.Open(dir)
	if err != nil || len(e.Trials) != 3 {
		t.Errorf("after resume: %v, %d trials", err, len(e.Trials))
	}
}

func TestRunOverrides(t *testing.T) {
	c := cli{t: t, exec: goTrainer(nil)}
	path, _ := writeSpec(t, "grid", gridSpec)
	storage := t.TempDir()
	code, _, errOut := c.run("run", path, "--storage", storage, "--name", "other")
	if code != exitOK {
		t.Fatalf("run: %d %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(storage, "other", specCopy)); err != nil {
		t.Error(err)
	}
	code, _, errOut = c.run("run", path, "--name", "a/b")
	if code != exitUsage || !strings.Contains(errOut, `name: names a directory under storage, so it cannot contain a slash, got "a/b"`) {
		t.Errorf("bad --name: %d %q", code, errOut)
	}
	// A name needs a visible character, and no control characters.
	for name, want := range map[string]string{
		" ":             `--name " ": names the experiment's directory, so it needs a visible character`,
		" \u200b\u00a0": "needs a visible character",
		"":              "needs a visible character",
		"a\x01b":        `--name "a\x01b": must not contain control characters such as '\x01'`,
		"a\nb":          "must not contain control characters",
		"\xff":          "not valid UTF-8",
	} {
		code, _, errOut := c.run("run", path, "--storage", storage, "--name", name)
		if code != exitUsage || !strings.Contains(errOut, want) {
			t.Errorf("--name %q: exit %d, %q; want %d and %q", name, code, errOut, exitUsage, want)
		}
	}
	entries, err := os.ReadDir(storage)
	if err != nil || len(entries) != 1 || entries[0].Name() != "other" {
		t.Errorf("storage holds %v (%v), want only other", entries, err)
	}
	// A name with a space inside is fine.
	if code, _, errOut := c.run("run", path, "--storage", storage, "--name", "my run"); code != exitOK {
		t.Errorf("--name \"my run\": %d %s", code, errOut)
	}
}

func TestTrialErrors(t *testing.T) {
	c := cli{t: t, exec: goTrainer(nil)}
	path, dir := writeSpec(t, "errs", strings.Replace(gridSpec, "[1, 3, 2]", "[1, -1]", 1))
	code, _, errOut := c.run("run", path)
	if code != exitTrialErrors || !strings.Contains(errOut, "1 of 2 trials ended in ERROR") ||
		!strings.Contains(errOut, "hone resume "+dir+" --resume-errored") {
		t.Errorf("run: %d\n%s", code, errOut)
	}
	code, out, _ := c.run("status", dir)
	if code != exitOK || !strings.Contains(out, "negative x") || !strings.Contains(out, "1 TERMINATED, 1 ERROR") {
		t.Errorf("status: %d\n%s", code, out)
	}
	code, _, errOut = c.run("resume", dir, "--resume-errored")
	if code != exitTrialErrors {
		t.Errorf("resume --resume-errored: %d\n%s", code, errOut)
	}

	path, _ = writeSpec(t, "fast", strings.Replace(gridSpec, "[1, 3, 2]", "[-1, 1]", 1)+"failure: {fail_fast: true}\n")
	code, _, errOut = c.run("run", path)
	if code != exitFailed || !strings.Contains(errOut, "experiment failed") {
		t.Errorf("fail_fast: %d\n%s", code, errOut)
	}
}

// TestInterruptInProcess cancels a run's context, as the first Ctrl-C
// does, then resumes the experiment.
func TestInterruptInProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var reports atomic.Int32
	slowSpec := strings.Replace(gridSpec, "training_iteration: 4", "training_iteration: 50", 1)
	c := cli{t: t, ctx: ctx, exec: goTrainer(func(s trial.Session, it int) {
		if reports.Add(1) == 5 {
			cancel()
		}
	})}
	path, dir := writeSpec(t, "intr", slowSpec)
	code, _, errOut := c.run("run", path)
	if code != exitInterrupted || !strings.Contains(errOut, "hone: interrupted; resume with:\n  hone resume "+dir+"\n") {
		t.Fatalf("interrupted run: %d\n%s", code, errOut)
	}
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	unfinished := 0
	for _, tr := range e.Trials {
		if !tr.Status.Finished() {
			unfinished++
		}
	}
	if unfinished == 0 {
		t.Errorf("nothing left to resume: %+v", e.Trials)
	}
	code, out, _ := c.run("status", dir)
	if code != exitOK || !strings.Contains(out, "Not running; continue it with: hone resume "+dir+"\n") {
		t.Errorf("status after the interrupt: %d\n%s", code, out)
	}
	// The saved spec is enough to resume, from another directory.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	c.ctx = context.Background()
	code, _, errOut = c.run("resume", dir)
	if code != exitOK {
		t.Fatalf("resume: %d\n%s", code, errOut)
	}
	e, err = results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range e.Trials {
		last, _ := tr.Last()
		if tr.Status != hone.StatusTerminated || last == nil {
			t.Errorf("trial %s: %s, last %v", tr.ID, tr.Status, last)
		}
	}
}

func TestResumeWorkingDir(t *testing.T) {
	// A relative working_dir resolves against the original spec's
	// directory on resume too.
	var dirs []string
	c := cli{t: t}
	c.exec = func(p spec.Process) (hone.Executor, error) {
		dirs = append(dirs, p.Dir)
		return goTrainer(nil)(p)
	}
	path, dir := writeSpec(t, "wd", gridSpec+"working_dir: sub\n")
	if err := os.Mkdir(filepath.Join(filepath.Dir(path), "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := c.run("run", path); code != exitOK {
		t.Fatalf("run: %d %s", code, errOut)
	}
	if code, _, errOut := c.run("resume", dir, "--no-unfinished"); code != exitOK {
		t.Fatalf("resume: %d %s", code, errOut)
	}
	want := filepath.Join(filepath.Dir(path), "sub")
	if len(dirs) != 2 || dirs[0] != want || dirs[1] != want {
		t.Errorf("working dirs %q, want %q twice", dirs, want)
	}
}

func TestUsageErrors(t *testing.T) {
	c := cli{t: t, exec: goTrainer(nil)}
	empty := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"run"}, "accepts 1 arg(s), received 0"},
		{[]string{"run", "a.yaml", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"resume", empty}, empty + " holds no experiment"},
		{[]string{"status", empty}, empty + " holds no experiment"},
		{[]string{"results", empty, "--scope", "median"}, `--scope "median": allowed values are last, avg, all, last-5-avg, last-10-avg`},
		{[]string{"results", empty, "--mode", "up"}, `--mode "up": allowed values are min and max`},
		{[]string{"resume", empty, "--resume-errored", "--restart-errored"}, "none of the others can be"},
	} {
		code, _, errOut := c.run(tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("hone %s: exit %d, stderr %q; want 2 and %q", strings.Join(tc.args, " "), code, errOut, tc.want)
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	c := cli{t: t}
	code, out, _ := c.run("--help")
	if code != exitOK || !strings.Contains(out, exitCodesHelp) {
		t.Errorf("help: %d\n%s", code, out)
	}
	code, out, _ = c.run("version")
	if code != exitOK || !strings.HasPrefix(out, "hone ") || !strings.Contains(out, "  random  ") || !strings.Contains(out, "  fifo  ") ||
		!strings.Contains(out, "storage: a local path, file:///abs/path, s3://") {
		t.Errorf("version: %d\n%s", code, out)
	}
	// Each plugin's parameters with their defaults, from the tables.
	for _, want := range []string{"parameters: metric=(the experiment's), mode=(the experiment's), time_attr=training_iteration, max_t=100, grace_period=1, reduction_factor=4,",
		"parameters: n_startup_trials=10, n_ei_candidates=24,", "parameters: mode=auto, partition=\"\",",
		"several objectives: ranks trials by their weighted sum (weights), without constraints"} {
		if !strings.Contains(out, want) {
			t.Errorf("version: no %q in\n%s", want, out)
		}
	}
	first, _, _ := strings.Cut(out, "\n")
	for _, flag := range []string{"--version", "-v"} {
		code, got, errOut := c.run(flag)
		if code != exitOK || got != first+"\n" {
			t.Errorf("hone %s: exit %d, stdout %q, stderr %q; want 0 and %q", flag, code, got, errOut, first+"\n")
		}
	}
}

// TestLock checks that an experiment runs in one hone process at a time.
func TestLock(t *testing.T) {
	c := cli{t: t, exec: goTrainer(nil)}
	path, dir := writeSpec(t, "lock", gridSpec)
	if code, _, errOut := c.run("run", path); code != exitOK {
		t.Fatalf("run: %d %s", code, errOut)
	}
	unlock, err := lockExperiment(dir)
	if err != nil {
		t.Fatal(err)
	}
	holder := fmt.Sprintf(" (pid %d)", os.Getpid())
	for _, args := range [][]string{{"resume", dir}, {"run", "--resume", path}} {
		code, _, errOut := c.run(args...)
		if code != exitUsage || !strings.Contains(errOut, "the experiment in "+dir+" is running in another hone process"+holder) {
			t.Errorf("hone %v while locked: %d %q", args, code, errOut)
		}
	}
	code, out, _ := c.run("status", dir)
	if code != exitOK || !strings.Contains(out, "Running in hone"+holder+".") {
		t.Errorf("status while locked: %d\n%s", code, out)
	}
	unlock()
	if code, _, errOut := c.run("resume", dir); code != exitOK {
		t.Errorf("resume after unlock: %d %s", code, errOut)
	}
	if running, _ := runningIn(dir); running {
		t.Error("still locked after hone resume")
	}
}

// TestAutoRunAndResume runs a spec with searcher: auto and scheduler:
// auto (TPE on ASHA's rungs, the searcher advising ASHA), interrupts it,
// and resumes it: the journal replays through the auto choices, and every
// trial ends, some stopped early by ASHA.
func TestAutoRunAndResume(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var reports atomic.Int32
	c := cli{t: t, ctx: ctx, exec: goTrainer(func(s trial.Session, it int) {
		if reports.Add(1) == 60 {
			cancel()
		}
	})}
	src := "metric: score\nmode: max\nseed: 3\nnum_samples: 30\nsearch_space: {x: {uniform: [0, 1]}, y: {choice: [a, b]}}\n" +
		"searcher: auto\nscheduler: auto\nstop: {training_iteration: 9}\nmax_concurrent_trials: 4\ncommand: [unused]\n"
	path, dir := writeSpec(t, "auto", src)
	if code, out, _ := c.run("validate", path); code != exitOK || !strings.Contains(out, "searcher auto: tpe") || !strings.Contains(out, "scheduler auto: asha") {
		t.Fatalf("validate: %d\n%s", code, out)
	}
	if code, _, errOut := c.run("run", path); code != exitInterrupted {
		t.Fatalf("interrupted run: %d\n%s", code, errOut)
	}
	c.ctx = context.Background()
	if code, _, errOut := c.run("resume", dir); code != exitOK {
		t.Fatalf("resume: %d\n%s", code, errOut)
	}
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Trials) != 30 {
		t.Fatalf("%d trials, want 30", len(e.Trials))
	}
	early := 0
	for _, tr := range e.Trials {
		last, _ := tr.Last()
		if tr.Status != hone.StatusTerminated || last == nil {
			t.Fatalf("trial %s: %s, last %v", tr.ID, tr.Status, last)
		}
		if it, _ := last.Value(hone.FieldTrainingIteration); it < 9 {
			early++
		}
	}
	if early == 0 {
		t.Error("ASHA stopped no trial early")
	}
}

// TestFailureShowsTraceback checks that the summary of a run whose trial
// processes fail shows, under each failed trial, the last lines of its
// stderr: the Python traceback, not only "exit status 1".
func TestFailureShowsTraceback(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	c := cli{t: t}
	path, _ := writeSpec(t, "crash", `metric: loss
search_space:
  lr: {grid: [0.5, 0.25]}
command:
  - python3
  - -c
  - |
    import json, os
    lr = json.loads(os.environ["HONE_CONFIG"])["lr"]
    def train(lr):
        raise ValueError("lr %s diverged" % lr)
    train(lr)
`)
	code, out, errOut := c.run("run", path)
	if code != exitTrialErrors {
		t.Fatalf("run: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitTrialErrors, out, errOut)
	}
	_, summary, ok := strings.Cut(out, "2 trials failed:\n")
	if !ok {
		t.Fatalf("no failures in the summary:\n%s", out)
	}
	for _, lr := range []string{"0.5", "0.25"} {
		want := "    Traceback (most recent call last):\n"
		if !strings.Contains(summary, want) || !strings.Contains(summary, "    ValueError: lr "+lr+" diverged\n") {
			t.Errorf("the summary does not show trial lr=%s's traceback:\n%s", lr, summary)
		}
	}
}

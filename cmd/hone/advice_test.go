package main

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/spec"
	"github.com/hone-tune/hone/trial"
)

// adviceCommand returns the arguments of the hone command that stderr
// advises on its line starting with "  hone ", undoing shellArg's quotes.
func adviceCommand(t *testing.T, stderr string) []string {
	t.Helper()
	for _, l := range strings.Split(stderr, "\n") {
		rest, ok := strings.CutPrefix(l, "  hone ")
		if !ok {
			continue
		}
		var args []string
		var cur strings.Builder
		quoted, started := false, false
		for _, r := range rest {
			switch {
			case r == '\'':
				quoted, started = !quoted, true
			case r == ' ' && !quoted:
				if started {
					args = append(args, cur.String())
					cur.Reset()
					started = false
				}
			default:
				cur.WriteRune(r)
				started = true
			}
		}
		if started {
			args = append(args, cur.String())
		}
		return args
	}
	t.Fatalf("no command advised in:\n%s", stderr)
	return nil
}

// TestFieldTypoAdvice checks the advice after a misspelt metric or stop
// condition: it names the likely field, and following it (fixing the spec,
// then running the command printed) runs the experiment to its end, where
// a plain resume would fail the same way again.
func TestFieldTypoAdvice(t *testing.T) {
	for _, tc := range []struct {
		name, orig, typo, fixed, hint string
	}{
		{"metric", "metric: score\n", "metric: scor\n", "metric: score\n", `Did you mean metric "score"?`},
		{"stop", "stop: {training_iteration: 4}\n", "stop: {training_iteration: 4, scor: 6}\n", "stop: {training_iteration: 4, score: 6}\n",
			`Did you mean stop condition "score"?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cli{t: t, exec: goTrainer(nil)}
			body := strings.Replace(gridSpec, tc.orig, tc.typo, 1)
			path, dir := writeSpec(t, "typo", body)
			code, _, errOut := c.run("run", path)
			if code != exitFailed || !strings.Contains(errOut, tc.hint) {
				t.Fatalf("run: exit %d, want %d and %q in stderr:\n%s", code, exitFailed, tc.hint, errOut)
			}
			// What the message says a resume does: fail the same way.
			if code, _, again := c.run("resume", dir); code != exitFailed || !strings.Contains(again, tc.hint) {
				t.Fatalf("resume: exit %d, stderr:\n%s", code, again)
			}
			args := adviceCommand(t, errOut)
			if err := os.WriteFile(path, []byte(strings.Replace(mustRead(t, path), tc.typo, tc.fixed, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := c.run(args...)
			if code != exitOK || !strings.Contains(out, "Experiment finished") {
				t.Fatalf("hone %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
			}
			e, err := results.Open(dir + "-2")
			if err != nil {
				t.Fatal(err)
			}
			if _, v, err := e.Best(hone.Objective{Metric: "score", Mode: hone.Max}, results.ScopeLast); err != nil || v < 6 {
				t.Errorf("the new experiment's best score: %v %v", v, err)
			}

			// Resuming the failed experiment with the fixed spec is refused
			// (its decisions were made with the wrong field), with the
			// command that runs the fixed spec beside it, which works.
			code, _, errOut = c.run("resume", dir, "--spec", path)
			if code != exitUsage || !strings.Contains(errOut, "resuming with it would mix two experiments") {
				t.Fatalf("resume --spec: exit %d, stderr:\n%s", code, errOut)
			}
			args = adviceCommand(t, errOut)
			if code, out, errOut := c.run(args...); code != exitOK || !strings.Contains(out, "Experiment finished") {
				t.Fatalf("hone %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
			}
			if _, err := results.Open(dir + "-3"); err != nil {
				t.Errorf("the experiment the refusal advised: %v", err)
			}
		})
	}
}

// TestNotANumberAdvice checks the advice after a metric the trials report
// as something other than a number: the program is what to fix, and the
// resume advised then finishes the experiment.
func TestNotANumberAdvice(t *testing.T) {
	var fixed atomic.Bool
	c := cli{t: t, exec: func(spec.Process) (hone.Executor, error) {
		return inproc.NewFunc(func(ctx context.Context, s trial.Session) error {
			x, _ := hone.Number(s.Config()["x"])
			for it := s.Iteration() + 1; ; it++ {
				var v any = x * float64(it)
				if !fixed.Load() {
					v = "high"
				}
				if err := s.Report(trial.Metrics{"score": v}); err != nil {
					return err
				}
			}
		}), nil
	}}
	path, dir := writeSpec(t, "nan", gridSpec)
	code, _, errOut := c.run("run", path)
	if code != exitFailed || !strings.Contains(errOut, `the trials report "score", but not as a number`) {
		t.Fatalf("run: exit %d, stderr:\n%s", code, errOut)
	}
	args := adviceCommand(t, errOut)
	if len(args) != 2 || args[0] != "resume" || args[1] != dir {
		t.Fatalf("advised hone %q, want hone resume %s", args, dir)
	}
	fixed.Store(true)
	if code, out, errOut := c.run(args...); code != exitOK || !strings.Contains(out, "Experiment finished") {
		t.Fatalf("resume: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

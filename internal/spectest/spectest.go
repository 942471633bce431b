// Package spectest runs experiments from spec text to their end, for the
// tests of the packages that read experiments (report, plots).
package spectest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/spec"
	"github.com/hone-tune/hone/trial"
)

// Prepare parses the spec text, saves it in a new experiment directory as
// hone run does, and builds the experiment's plan, which the caller may
// change before Finish runs it.
func Prepare(t testing.TB, body string) (plan *spec.Plan, dir string) {
	t.Helper()
	base := t.TempDir()
	s, err := spec.Parse([]byte(body), filepath.Join(base, "exp.yaml"), base)
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(base, "exp")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, report.SpecFile), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if plan, err = spec.Build(s, dir, nil); err != nil {
		t.Fatal(err)
	}
	return plan, dir
}

// Finish runs plan's experiment to its end with exec's trials.
func Finish(t testing.TB, plan *spec.Plan, exec hone.Executor) {
	t.Helper()
	plan.Options.Executor, plan.Options.Log = exec, io.Discard
	_, err := runner.Run(context.Background(), plan.Experiment, plan.Options)
	if err := errors.Join(err, plan.Close()); err != nil {
		t.Fatal(err)
	}
}

// Run runs the experiment of the spec text to its end with exec's trials
// and returns its directory.
func Run(t testing.TB, body string, exec hone.Executor) string {
	t.Helper()
	plan, dir := Prepare(t, body)
	Finish(t, plan, exec)
	return dir
}

// CurveSpec returns the text of a spec for the sim executor's learning
// curves (sim.Curve, whose parameters are rate and asymptote) minimising
// loss, with the seed and number of samples given, and rest (the
// scheduler, searcher and other lines) after its search space.
func CurveSpec(seed, samples int, rest string) string {
	return fmt.Sprintf(`metric: loss
mode: min
seed: %d
num_samples: %d
command: [unused]
search_space:
  rate: {uniform: [0.05, 0.5]}
  asymptote: {uniform: [0, 0.5]}
`, seed, samples) + rest
}

// Curves is a Go trainable reporting iterations results: loss falls from
// (1+x)/2 towards x, x the configuration's; a trial with x = 0.5 fails
// before its first result.
func Curves(iterations int) hone.Executor {
	return inproc.NewFunc(func(ctx context.Context, s trial.Session) error {
		x, _ := hone.Number(s.Config()["x"])
		if x == 0.5 {
			return errors.New("x = 0.5 fails")
		}
		for i := 1; i <= iterations; i++ {
			if err := s.Report(trial.Metrics{"loss": x + (1-x)*math.Pow(0.5, float64(i))}); err != nil {
				return err
			}
		}
		return nil
	})
}

// TradeOffSpec is the text of a spec of n trials with two objectives,
// accuracy (max) and latency_ms (min), for TradeOff's trials; rest (a
// constraint, say) follows it.
func TradeOffSpec(seed, n int, rest string) string {
	return fmt.Sprintf(`objectives:
  - {metric: accuracy, mode: max}
  - {metric: latency_ms, mode: min}
seed: %d
num_samples: %d
command: [unused]
search_space:
  width: {uniform: [1, 100]}
  quality: {uniform: [0, 1]}
`, seed, n) + rest
}

// TradeOff is a Go trainable with two objectives at odds: over
// iterations results, a wider model (width) is more accurate and slower,
// and quality scales its accuracy, so that a low-quality trial is
// dominated by one as wide of higher quality. It reports accuracy,
// latency_ms and memory_mb (10 per unit of width).
func TradeOff(iterations int) hone.Executor {
	return inproc.NewFunc(func(ctx context.Context, s trial.Session) error {
		w, _ := hone.Number(s.Config()["width"])
		q, _ := hone.Number(s.Config()["quality"])
		for i := 1; i <= iterations; i++ {
			acc := (0.5 + 0.5*q) * (1 - math.Exp(-w/30)) * float64(i) / float64(iterations)
			if err := s.Report(trial.Metrics{"accuracy": acc, "latency_ms": 2 + w*(1.5-q/2), "memory_mb": 10 * w}); err != nil {
				return err
			}
		}
		return nil
	})
}

package mfbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/hone-tune/hone"
)

// ErrCrash is the error CrashAfter ends a run with, as a crash would.
var ErrCrash = errors.New("simulated crash")

// CrashAfter is an executor that fails the runner (ErrCrash) once N
// events have passed through it: a crash midway through an experiment,
// for resume tests. It forwards the inner executor's virtual clock.
type CrashAfter struct {
	hone.Executor
	N int
}

// Next returns the inner executor's next event, or ErrCrash once N events
// have been returned.
func (c *CrashAfter) Next(ctx context.Context) (hone.Event, error) {
	if c.N <= 0 {
		return hone.Event{}, ErrCrash
	}
	c.N--
	return c.Executor.Next(ctx)
}

// Clock returns the inner executor's clock (it must be hone.Clocked).
func (c *CrashAfter) Clock() hone.Clock { return c.Executor.(hone.Clocked).Clock() }

// ConfigKey returns cfg as JSON, a key that identifies a configuration.
func ConfigKey(cfg hone.Config) (string, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return "", fmt.Errorf("mfbench: config key: %w", err)
	}
	return string(b), nil
}

// Summary is what a run decided: every trial's configuration, status and
// last iteration, in creation order, and with ids its id.
func Summary(trials []*hone.Trial, ids bool) ([]string, error) {
	var out []string
	for _, tr := range trials {
		it := 0
		if tr.LastResult != nil {
			it = tr.LastResult.TrainingIteration
		}
		k, err := ConfigKey(tr.Config)
		if err != nil {
			return nil, err
		}
		line := fmt.Sprintf("%s %s %d", k, tr.Status, it)
		if ids {
			line = tr.ID + " " + line
		}
		out = append(out, line)
	}
	return out, nil
}

// CheckEnded returns the problems of a run that should have created n
// trials with distinct configurations, all ended, one at least at full
// fidelity; nil when there are none.
func (o *Outcome) CheckEnded(n int) []error {
	var errs []error
	if len(o.Trials) != n {
		errs = append(errs, fmt.Errorf("%d trials, want %d", len(o.Trials), n))
	}
	seen := map[string]string{}
	for _, tr := range o.Trials {
		if !tr.Status.Finished() {
			errs = append(errs, fmt.Errorf("trial %s ended %s", tr.ID, tr.Status))
		}
		k, err := ConfigKey(tr.Config)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if other, dup := seen[k]; dup {
			errs = append(errs, fmt.Errorf("trials %s and %s have the same configuration %s", other, tr.ID, k))
		}
		seen[k] = tr.ID
	}
	if math.IsInf(o.Regret, 0) {
		errs = append(errs, errors.New("no trial reached full fidelity"))
	}
	return errs
}

// MustSummary is Summary for tests: it fails t on an error.
func MustSummary(t testing.TB, trials []*hone.Trial, ids bool) []string {
	t.Helper()
	s, err := Summary(trials, ids)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// MustConfigKey is ConfigKey for tests: it fails t on an error.
func MustConfigKey(t testing.TB, cfg hone.Config) string {
	t.Helper()
	k, err := ConfigKey(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// CheckDeterministic runs the experiment exp(seed) builds with each
// number of workers: twice with seed 7, which must decide the same trials
// with the same ids, and once with seed 8, which must not.
func CheckDeterministic(t testing.TB, exp func(seed uint64) *hone.Experiment, budget int, workers ...int) {
	t.Helper()
	for _, w := range workers {
		run := func(seed uint64) []string {
			o, err := Run(context.Background(), exp(seed), budget, w)
			if err != nil {
				t.Fatal(err)
			}
			return MustSummary(t, o.Trials, true)
		}
		a, b := run(7), run(7)
		if !slices.Equal(a, b) {
			t.Fatalf("concurrency %d: two runs with seed 7 differ", w)
		}
		if c := run(8); slices.Equal(a, c) {
			t.Fatalf("concurrency %d: seeds 7 and 8 gave the same run", w)
		}
	}
}

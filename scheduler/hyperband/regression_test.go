package hyperband_test

import (
	"context"
	"errors"
	"io"

	"path/filepath"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/mfbench"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/hyperband"
	"github.com/hone-tune/hone/search/bohb"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
)

// bohbExperiment is BOHB on the sim executor: HyperBand for BOHB with the
// BOHB searcher, whose max_concurrent counts only unpaused trials.
func bohbExperiment(t *testing.T, samples, maxConcurrent int) *hone.Experiment {
	t.Helper()
	sp := space.Space{"rate": space.LogUniform(0.01, 1), "asymptote": space.Uniform(0, 1)}
	sr, err := bohb.New(sp, bohb.Options{Metric: "loss", Mode: hone.Min, NumSamples: samples, Seed: 4, MaxConcurrent: maxConcurrent})
	if err != nil {
		t.Fatal(err)
	}
	cfg := hyperband.DefaultConfig()
	cfg.MaxT, cfg.ReductionFactor = 27, 3
	sched, err := hyperband.NewForBOHB(cfg, sr)
	if err != nil {
		t.Fatal(err)
	}
	return &hone.Experiment{Name: "bohb", Metric: "loss", Mode: hone.Min, Searcher: sr, Scheduler: sched, Seed: 4,
		MaxConcurrentTrials: maxConcurrent}
}

func simOptions(t *testing.T, dir string, e hone.Executor) runner.Options {
	st, err := local.New(dir, local.NoSync())
	if err != nil {
		t.Fatal(err)
	}
	return runner.Options{Dir: dir, Store: st, Log: io.Discard, Executor: e}
}

func curve() hone.Executor {
	return sim.New(sim.Curve{Noise: 0.02, CheckpointEvery: 1}.New)
}

// TestBOHBNeverAllPausedNonePending is the regression test for Ray's BOHB
// "all trials paused, none pending": with a concurrency limit smaller than
// the brackets and a searcher that runs out before a bracket fills, the
// experiment still ends with every trial finished.
func TestBOHBNeverAllPausedNonePending(t *testing.T) {
	for _, c := range []struct{ samples, conc int }{{5, 2}, {13, 4}, {40, 3}, {7, 7}} {
		dir := filepath.Join(t.TempDir(), "bohb")
		out, err := runner.Run(context.Background(), bohbExperiment(t, c.samples, c.conc), simOptions(t, dir, curve()))
		if err != nil {
			t.Fatalf("samples=%d conc=%d: %v", c.samples, c.conc, err)
		}
		for _, tr := range out.Trials {
			if !tr.Status.Finished() {
				t.Fatalf("samples=%d conc=%d: trial %s ended %s", c.samples, c.conc, tr.ID, tr.Status)
			}
		}
		if len(out.Trials) != c.samples {
			t.Fatalf("samples=%d: %d trials", c.samples, len(out.Trials))
		}
	}
}

// TestHyperBandTrialsAlwaysResumed is the regression test for Ray's
// HyperBand leaving trials paused for some (max_t, η): every kept trial is
// resumed and every trial ends, for each (max_t, η) in a grid that
// includes the shapes where Ray's milestone arithmetic failed.
func TestHyperBandTrialsAlwaysResumed(t *testing.T) {
	for _, maxT := range []float64{1, 2, 5, 8, 10, 27, 50, 81, 100} {
		for _, eta := range []float64{2, 3, 4, 5} {
			cfg := hyperband.DefaultConfig()
			cfg.MaxT, cfg.ReductionFactor = maxT, eta
			sched, _ := hyperband.New(cfg)
			exp := &hone.Experiment{Name: "hb", Metric: "loss", Searcher: bohbFree(t, 30), Scheduler: sched, Seed: 1, MaxConcurrentTrials: 4}
			dir := filepath.Join(t.TempDir(), "hb")
			out, err := runner.Run(context.Background(), exp, simOptions(t, dir, curve()))
			if err != nil {
				t.Fatalf("max_t=%v η=%v: %v", maxT, eta, err)
			}
			for _, tr := range out.Trials {
				if tr.Status != hone.StatusTerminated {
					t.Fatalf("max_t=%v η=%v: trial %s ended %s", maxT, eta, tr.ID, tr.Status)
				}
			}
		}
	}
}

// TestResumeBOHBDoesNotRestartFinishedTrials is the regression test for
// Ray's BOHB resume restarting finished trials: crash a BOHB experiment
// midway, resume it, and no trial that had finished runs again.
func TestResumeBOHBDoesNotRestartFinishedTrials(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bohb")
	crash := &mfbench.CrashAfter{Executor: curve(), N: 60}
	if _, err := runner.Run(context.Background(), bohbExperiment(t, 20, 3), simOptions(t, dir, crash)); !errors.Is(err, mfbench.ErrCrash) {
		t.Fatalf("crashing run: %v", err)
	}
	before, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	finished := map[string]bool{}
	for _, tr := range before.Trials {
		if tr.Status.Finished() {
			finished[tr.ID] = true
		}
	}
	if len(finished) == 0 || len(finished) == len(before.Trials) && len(before.Trials) == 20 {
		t.Fatalf("%d of %d trials finished before the crash; the test needs some but not all", len(finished), len(before.Trials))
	}
	rec := &startRecorder{Executor: curve()}
	out, err := runner.Resume(context.Background(), bohbExperiment(t, 20, 3), simOptions(t, dir, rec), hone.ResumeFlags{Unfinished: true})
	if err != nil {
		t.Fatal(err)
	}
	for id := range rec.started {
		if finished[id] {
			t.Errorf("trial %s had finished before the crash and was started again", id)
		}
	}
	for _, tr := range out.Trials {
		if !tr.Status.Finished() {
			t.Errorf("trial %s ended %s", tr.ID, tr.Status)
		}
	}
	if len(out.Trials) != 20 {
		t.Errorf("%d trials after resume, want 20", len(out.Trials))
	}
}

type startRecorder struct {
	hone.Executor
	started map[string]bool
}

func (r *startRecorder) Start(spec hone.StartSpec) error {
	if r.started == nil {
		r.started = map[string]bool{}
	}
	r.started[spec.TrialID] = true
	return r.Executor.Start(spec)
}

func (r *startRecorder) Clock() hone.Clock { return r.Executor.(hone.Clocked).Clock() }

// bohbFree is a plain random searcher over the curve's parameters.
func bohbFree(t *testing.T, n int) hone.Searcher {
	sr, err := bohb.New(space.Space{"rate": space.Uniform(0.05, 0.5)}, bohb.Options{Metric: "loss", Mode: hone.Min, NumSamples: n, Seed: 2, RandomFraction: 1})
	if err != nil {
		t.Fatal(err)
	}
	return sr
}

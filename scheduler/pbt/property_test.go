package pbt_test

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/scratch"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/pbt"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
	"pgregory.net/rapid"
)

// checkingExecutor fails the test if a trial is ever started from a
// checkpoint directory that does not exist (or is incomplete).
type checkingExecutor struct {
	hone.Executor
	t        *rapid.T
	restores int
	events   int
}

// maxEvents bounds a run. PBT need not finish quickly: with a short
// perturbation interval and scores dominated by noise, exploits keep
// sending trials back to their donors' iterations (in Ray as here). The
// property is about restores, so a long run is cut off.
const maxEvents = 6000

var errEnough = errors.New("enough events")

func (c *checkingExecutor) Next(ctx context.Context) (hone.Event, error) {
	if c.events++; c.events > maxEvents {
		return hone.Event{}, errEnough
	}
	return c.Executor.Next(ctx)
}

func (c *checkingExecutor) Start(spec hone.StartSpec) error {
	if spec.RestoreDir != "" {
		c.restores++
		if _, err := os.Stat(filepath.Join(spec.RestoreDir, sim.StateFile)); err != nil {
			c.t.Fatalf("trial %s restores from a missing checkpoint: %v", spec.TrialID, err)
		}
	}
	return c.Executor.Start(spec)
}

func (c *checkingExecutor) Clock() hone.Clock { return c.Executor.(hone.Clocked).Clock() }

// TestNumToKeepOneNeverLosesARestorePoint is docs/SEMANTICS.md §2's pinning
// property under PBT: with num_to_keep = 1, a 16-trial population on the
// sim executor, random seeds, step times, save durations and concurrency,
// no trial ever restores a checkpoint that retention deleted (nor fails).
func TestNumToKeepOneNeverLosesARestorePoint(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		cfg := pbt.DefaultConfig()
		cfg.TimeAttr = hone.FieldTrainingIteration
		cfg.PerturbationInterval = float64(rapid.IntRange(1, 4).Draw(t, "interval"))
		cfg.Synch = rapid.Bool().Draw(t, "synch")
		cfg.Mutations = map[string]any{"rate": func(r *rand.Rand) any { return 0.01 + 0.5*r.Float64() }}
		sched, err := pbt.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sr, err := random.New(space.Space{"rate": space.Uniform(0.01, 0.5), "asymptote": space.Uniform(0, 1),
			"step_seconds": space.Uniform(0.5, 3)}, 16, nil, seed)
		if err != nil {
			t.Fatal(err)
		}
		exp := &hone.Experiment{Name: "pbt", Metric: "loss", Mode: hone.Min, Searcher: sr, Scheduler: sched, Seed: seed,
			MaxConcurrentTrials: rapid.IntRange(1, 16).Draw(t, "concurrency"),
			Checkpoint:          hone.CheckpointConfig{NumToKeep: 1}}
		var opts []sim.Option
		opts = append(opts, sim.WithSaveDuration(time.Duration(rapid.IntRange(0, 3000).Draw(t, "save_ms"))*time.Millisecond))
		ckptEvery := rapid.IntRange(0, 3).Draw(t, "ckpt_every")
		if rapid.Bool().Draw(t, "function_style") {
			// A function trainable cannot save on demand; time-multiplexed
			// by PBT, it makes progress only if it checkpoints at least as
			// often as it is paused (else every pause loses the work since
			// its last checkpoint, in hone as in Ray).
			opts = append(opts, sim.CannotSaveOnDemand())
			ckptEvery = 1
		}
		model := sim.Curve{Noise: 0.05, MaxIterations: 20, CheckpointEvery: ckptEvery}.New
		ex := &checkingExecutor{Executor: sim.New(model, opts...), t: t}
		dir, err := os.MkdirTemp(scratch.Dir(), "hone-pbt-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		st, _ := local.New(dir, local.NoSync())
		out, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Store: st, Log: io.Discard, Executor: ex})
		if err != nil && !errors.Is(err, errEnough) {
			t.Fatalf("run: %v", err)
		}
		for _, tr := range out.Trials {
			if tr.Status == hone.StatusError || (err == nil && tr.Status != hone.StatusTerminated) {
				t.Fatalf("trial %s ended %s (%s)", tr.ID, tr.Status, tr.Error)
			}
		}
		if len(out.Trials) != 16 {
			t.Fatalf("%d trials", len(out.Trials))
		}
		t.Logf("restores: %d, exploits: %d", ex.restores, sched.Stats().Perturbations)
	})
}

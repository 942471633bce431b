package perf

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
)

// seed seeds every experiment of the suite.
const seed = 1

// resultCounter counts the results the runner hands to callbacks. The
// runner calls it from its one goroutine. The measured runs count results
// from the journal instead (countResults): a callback makes the runner
// flush the journal before every result it reports.
type resultCounter struct {
	hone.NopCallback
	n int64
}

// OnTrialResult counts one result.
func (c *resultCounter) OnTrialResult(*hone.Trial, *hone.Result) { c.n++ }

// countResults counts the results hone received in the experiment in dir:
// the result inputs of its journal (read after the run, outside the
// timing).
func countResults(dir string) (int64, error) {
	n, err := countInputs(dir, hone.EventResult)
	if err != nil {
		return 0, fmt.Errorf("count results: %w", err)
	}
	return n, nil
}

// countInputs counts the journaled inputs of kind k in the experiment in
// dir.
func countInputs(dir string, k hone.EventKind) (int64, error) {
	c, err := journal.Read(filepath.Join(dir, journal.FileName))
	if err != nil {
		return 0, err
	}
	var n int64
	for _, l := range c.Lines {
		if l.Event != nil && l.Event.Kind == k {
			n++
		}
	}
	return n, nil
}

// countingModel wraps a sim model so that every step a trainable computes
// is counted in n: what the trials reported, to check against what the
// runner saw.
func countingModel(m sim.Model, n *atomic.Int64) sim.Model {
	return func(cfg hone.Config, id string) (sim.Trainable, error) {
		t, err := m(cfg, id)
		if err != nil {
			return nil, err
		}
		return &countingTrainable{Trainable: t, n: n}, nil
	}
}

// countingTrainable counts the steps of a sim trainable.
type countingTrainable struct {
	sim.Trainable
	n *atomic.Int64
}

// Step counts and takes one step.
func (t *countingTrainable) Step() (sim.Step, error) {
	t.n.Add(1)
	return t.Trainable.Step()
}

// curveSpace is the search space of sim curve trials: a rate per trial,
// one virtual second per step.
func curveSpace() space.Space {
	return space.Space{"rate": space.Uniform(0.01, 0.5), "step_seconds": 1}
}

// simExperiment is n sim trials of a learning curve with iters results
// each, conc at a time, random search, the given scheduler (nil: FIFO).
func simExperiment(name string, n, conc int, sched hone.Scheduler, cb hone.Callback) (*hone.Experiment, error) {
	sr, err := random.New(curveSpace(), n, nil, seed)
	if err != nil {
		return nil, fmt.Errorf("searcher: %w", err)
	}
	exp := &hone.Experiment{Name: name, Metric: "loss", Mode: hone.Min, Searcher: sr, Scheduler: sched,
		MaxConcurrentTrials: conc, Seed: seed}
	if cb != nil {
		exp.Callbacks = []hone.Callback{cb}
	}
	return exp, nil
}

// runOpts returns the runner options of an experiment in dir: a local
// store (durable or not), a pool of conc CPUs, no log.
func runOpts(dir string, ex hone.Executor, conc int, durable bool) (runner.Options, error) {
	var opts []local.Option
	if !durable {
		opts = append(opts, local.NoSync())
	}
	st, err := local.New(dir, opts...)
	if err != nil {
		return runner.Options{}, err
	}
	return runner.Options{Dir: dir, Executor: ex, Store: st, Pool: hone.Resources{CPU: float64(conc)}, Log: io.Discard}, nil
}

// runTimed runs exp to the end and returns its outcome and wall time. Every
// trial must end TERMINATED.
func runTimed(ctx context.Context, exp *hone.Experiment, opts runner.Options) (*runner.Outcome, time.Duration, error) {
	start := time.Now()
	out, err := runner.Run(ctx, exp, opts)
	d := time.Since(start)
	if err != nil {
		return nil, 0, fmt.Errorf("run %s: %w", exp.Name, err)
	}
	if err := allTerminated(out); err != nil {
		return nil, 0, fmt.Errorf("run %s: %w", exp.Name, err)
	}
	return out, d, nil
}

// allTerminated checks that the experiment ended normally with every trial
// TERMINATED.
func allTerminated(out *runner.Outcome) error {
	if out.Interrupted {
		return fmt.Errorf("interrupted")
	}
	for _, t := range out.Trials {
		if t.Status != hone.StatusTerminated {
			return fmt.Errorf("trial %s ended %s: %s", t.ID, t.Status, t.Error)
		}
	}
	return nil
}

// freshDir returns a new empty directory in the scratch directory.
func (b *bench) freshDir(name string) (string, error) {
	d, err := os.MkdirTemp(b.scratch, name+"-")
	if err != nil {
		return "", fmt.Errorf("scratch: %w", err)
	}
	return d, nil
}

// removeDir removes a scratch directory and lets the filesystem settle
// (outside any timing).
func removeDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("clean up %s: %w", filepath.Base(dir), err)
	}
	settle()
	return nil
}

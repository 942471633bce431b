package process

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/callback"
	hproc "github.com/hone-tune/hone/executor/process"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
)

// HoneResults runs an experiment of k trials of argv at once through the
// process executor and the runner, each trial reporting perTrial results
// as fast as hone answers, and returns results per second over the whole
// run. With listen set ("127.0.0.1:0"), the trials connect over TCP to
// the executor's TCP server (process.Options.Listen) instead of their
// Unix sockets. tmp is a scratch directory.
func HoneResults(ctx context.Context, tmp string, argv []string, k, perTrial int, listen string) (float64, error) {
	d, results, err := honeExperiment(ctx, tmp, argv, k, k, perTrial, listen)
	if err != nil {
		return 0, err
	}
	return float64(results) / d.Seconds(), nil
}

// honeLaunches runs an experiment of n trials of argv (each reporting one
// result and exiting), LaunchConcurrency at a time, and returns trials per
// second.
func honeLaunches(ctx context.Context, tmp string, argv []string, n int) (float64, error) {
	d, _, err := honeExperiment(ctx, tmp, argv, n, LaunchConcurrency, 1, "")
	if err != nil {
		return 0, err
	}
	return float64(n) / d.Seconds(), nil
}

// honeResults runs an experiment of k trials of argv at once, each
// reporting perTrial results, and returns results per second.
func honeResults(ctx context.Context, tmp string, argv []string, k, perTrial int) (float64, error) {
	return HoneResults(ctx, tmp, argv, k, perTrial, "")
}

// honeExperiment runs n trials of argv through the process executor and
// the runner, concurrent at a time: random search, FIFO, a local store and
// the per-trial files (params.json, result.json, progress.csv) without
// fsync, no log. Each trial must end TERMINATED after perTrial results.
// listen, when set, is the executor's Options.Listen (trials connect over
// TCP). It returns the wall time of the run and the number of results.
func honeExperiment(ctx context.Context, tmp string, argv []string, n, concurrent, perTrial int, listen string) (time.Duration, int, error) {
	dir, err := os.MkdirTemp(tmp, "exp-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	sr, err := random.New(space.Space{"u": space.Uniform(0, 1)}, n, nil, 1)
	if err != nil {
		return 0, 0, err
	}
	st, err := local.New(dir, local.NoSync())
	if err != nil {
		return 0, 0, err
	}
	ex, err := hproc.New(hproc.Options{Command: argv, Dir: dir, Listen: listen})
	if err != nil {
		return 0, 0, err
	}
	files := callback.NewTrialFiles(dir, callback.NoSync())
	exp := &hone.Experiment{
		Name:                filepath.Base(dir),
		Metric:              "loss",
		Mode:                hone.Min,
		Searcher:            sr,
		MaxConcurrentTrials: concurrent,
		Seed:                1,
		Callbacks:           []hone.Callback{files},
	}
	start := time.Now()
	out, err := runner.Run(ctx, exp, runner.Options{
		Dir:      dir,
		Executor: ex,
		Store:    st,
		Pool:     hone.Resources{CPU: float64(concurrent)},
		Log:      io.Discard,
	})
	elapsed := time.Since(start)
	if cerr := files.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return 0, 0, fmt.Errorf("hone experiment: %w", err)
	}
	if out.Interrupted {
		return 0, 0, fmt.Errorf("hone experiment: interrupted")
	}
	if len(out.Trials) != n {
		return 0, 0, fmt.Errorf("hone experiment: %d trials, want %d", len(out.Trials), n)
	}
	results := 0
	for _, t := range out.Trials {
		if t.LastResult != nil {
			results += t.LastResult.TrainingIteration
		}
		if t.Status != hone.StatusTerminated {
			return 0, 0, fmt.Errorf("hone experiment: trial %s ended %s: %s (see %s)", t.ID, t.Status, t.Error,
				filepath.Join(t.Dir, hproc.StderrLog))
		}
	}
	if results != n*perTrial {
		return 0, 0, fmt.Errorf("hone experiment: %d results, want %d", results, n*perTrial)
	}
	return elapsed, results, nil
}

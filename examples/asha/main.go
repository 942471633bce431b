// Command asha tunes the spirals network with ASHA: random configurations,
// stopped early at rungs 1, 3, 9 epochs when below the top third there,
// so the budget goes to the promising ones. ASHA never pauses; rerun with
// the same -dir to resume after a stop.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/callback"
	"github.com/hone-tune/hone/examples/internal/spirals"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/progress"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/asha"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/trial"
)

func main() {
	dir := flag.String("dir", filepath.Join("hone_results", "asha_go"), "experiment directory; an existing one is resumed")
	samples := flag.Int("samples", 24, "number of trials")
	maxT := flag.Float64("max-t", 27, "most epochs a trial gets")
	size := flag.Int("train-size", 4000, "training set size")
	flag.Parse()
	if err := run(*dir, *samples, *maxT, *size); err != nil {
		fmt.Fprintln(os.Stderr, "asha:", err)
		os.Exit(1)
	}
}

func run(dir string, samples int, maxT float64, size int) error {
	sp := spirals.Space()
	searcher, err := random.New(sp, samples, nil, 3)
	if err != nil {
		return err
	}
	cfg := asha.DefaultConfig()
	cfg.MaxT, cfg.GracePeriod, cfg.ReductionFactor = maxT, 1, 3
	sched, err := asha.New(cfg)
	if err != nil {
		return err
	}
	exp := &hone.Experiment{
		Name: "asha", Trainable: "spirals_mlp", Metric: "val_accuracy", Mode: hone.Max,
		Searcher: searcher, Scheduler: sched, MaxConcurrentTrials: 2, Seed: 3,
		Checkpoint: hone.CheckpointConfig{NumToKeep: 1},
		Callbacks: []hone.Callback{callback.NewTrialFiles(dir),
			progress.New(os.Stdout, progress.WithMetric("val_accuracy", hone.Max))},
	}
	opts := runner.Options{Dir: dir, Executor: inproc.NewClass(func() trial.Trainable { return &spirals.Trainable{Size: size} })}
	return spirals.Tune(exp, opts)
}

// Command bohb tunes the spirals network with BOHB: HyperBand for BOHB
// decides which trials get more epochs, and the BOHB searcher's KDE model,
// fed at each milestone, proposes new configurations. Every pause is a
// checkpoint on disk; rerun with the same -dir to resume after a stop.
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
	"github.com/hone-tune/hone/scheduler/hyperband"
	"github.com/hone-tune/hone/search/bohb"
	"github.com/hone-tune/hone/trial"
)

func main() {
	dir := flag.String("dir", filepath.Join("hone_results", "bohb_go"), "experiment directory; an existing one is resumed")
	samples := flag.Int("samples", 49, "number of trials (49 fill one band of brackets for max_t 27, η 3)")
	maxT := flag.Float64("max-t", 27, "most epochs a trial gets")
	size := flag.Int("train-size", 4000, "training set size")
	flag.Parse()
	if err := run(*dir, *samples, *maxT, *size); err != nil {
		fmt.Fprintln(os.Stderr, "bohb:", err)
		os.Exit(1)
	}
}

func run(dir string, samples int, maxT float64, size int) error {
	sp := spirals.Space()
	searcher, err := bohb.New(sp, bohb.Options{Metric: "val_accuracy", Mode: hone.Max, NumSamples: samples, Seed: 3, MaxConcurrent: 2})
	if err != nil {
		return err
	}
	cfg := hyperband.DefaultConfig()
	cfg.MaxT, cfg.ReductionFactor = maxT, 3
	sched, err := hyperband.NewForBOHB(cfg, searcher)
	if err != nil {
		return err
	}
	exp := &hone.Experiment{
		Name: "bohb", Trainable: "spirals_mlp", Metric: "val_accuracy", Mode: hone.Max,
		Searcher: searcher, Scheduler: sched, MaxConcurrentTrials: 2, Seed: 3,
		Checkpoint: hone.CheckpointConfig{NumToKeep: 1},
		Callbacks: []hone.Callback{callback.NewTrialFiles(dir),
			progress.New(os.Stdout, progress.WithMetric("val_accuracy", hone.Max))},
	}
	opts := runner.Options{Dir: dir, Executor: inproc.NewClass(func() trial.Trainable { return &spirals.Trainable{Size: size} })}
	return spirals.Tune(exp, opts)
}

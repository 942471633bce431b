// Command quickstart tunes a small neural network, trained in Go, on a
// two-spirals classification task. It runs 12 trials of up to 30 epochs,
// two at a time, checkpoints every 5 epochs, prints a live table of trials
// and, at the end, the best configuration.
//
// Run it again with the same -dir after stopping it (Ctrl-C, or even
// kill -9) and it resumes: finished trials are not redone and running ones
// continue from their latest checkpoint.
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
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/stopper"
	"github.com/hone-tune/hone/trial"
)

func main() {
	dir := flag.String("dir", filepath.Join("hone_results", "quickstart_go"), "experiment directory; an existing one is resumed")
	samples := flag.Int("samples", 12, "number of trials")
	epochs := flag.Int("epochs", 30, "epochs per trial")
	size := flag.Int("train-size", 16000, "training set size")
	flag.Parse()
	if err := run(*dir, *samples, *epochs, *size); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(dir string, samples, epochs, size int) error {
	sp := spirals.Space()
	search, err := random.New(sp, samples, nil, 7)
	if err != nil {
		return err
	}
	exp := &hone.Experiment{
		Name:                "quickstart",
		Trainable:           "spirals_mlp",
		Metric:              "val_accuracy",
		Mode:                hone.Max,
		Searcher:            search,
		Stoppers:            []hone.Stopper{stopper.MaxIterations(epochs), stopper.Threshold{Field: "val_accuracy", Value: 0.99}},
		MaxConcurrentTrials: 2,
		Checkpoint:          hone.CheckpointConfig{NumToKeep: 2, Frequency: 10, AtEnd: true},
		Failure:             hone.FailureConfig{MaxFailures: 2},
		Seed:                7,
		Callbacks: []hone.Callback{
			callback.NewTrialFiles(dir),
			progress.New(os.Stdout, progress.WithMetric("val_accuracy", hone.Max)),
		},
	}
	opts := runner.Options{Dir: dir, Executor: inproc.NewClass(func() trial.Trainable { return &spirals.Trainable{Size: size} })}

	return spirals.Tune(exp, opts)
}

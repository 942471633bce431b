// Command pbt trains a population of spirals networks with Population Based
// Training and prints the learning-rate schedule it discovered.
//
// A population of 8 trials (hidden layer and batch size fixed, lr and
// momentum sampled) trains two at a time, so PBT time-multiplexes: every 4
// epochs a trial is ranked against the others, and it pauses to let a
// waiting one run. A trial in the top quarter saves its weights; a trial in
// the bottom quarter clones a top one — its checkpoint and its
// configuration, explored: lr multiplied by 1.2 or 0.8, or redrawn from its
// log-uniform range with probability 1/4, and momentum moved to a
// neighbouring value of its list. The clone goes on training from the
// donor's weights with the new lr and momentum.
//
// At the end it prints the best trial (by its last val_accuracy, as the
// live table does), its lineage — which trial cloned which, at which epoch —
// and the hyperparameters its weights were trained with per epoch segment,
// read back from the experiment directory with the results API: that is
// the schedule PBT found. For example (go run ./examples/pbt):
//
//	best trial 025a1600: val_accuracy=0.9535 config=map[batch_size:32 hidden:32 lr:0.15208238594027054 momentum:0.9]
//	lineage of trial 3 (025a1600), oldest first:
//	  at epoch 16 trial 1 cloned trial 7 as of its epoch 12
//	  at epoch 24 trial 3 cloned trial 1 as of its epoch 24
//	schedule of trial 3 (lr and momentum per epoch segment):
//	  epochs   1-12  lr=0.1584   momentum=0.9   (trial 7's configuration)
//	  epochs  13-24  lr=0.1267   momentum=0.8
//	  epochs  25-32  lr=0.1521   momentum=0.9
//
// The sampled configurations depend on -seed only; which trial clones which
// also depends on the order in which the two running trials report, so
// runs may differ. Stop it with Ctrl-C and run the same command again: it
// resumes, finished trials are not redone, and paused or running ones
// continue from their checkpoints. pbt_global.txt in the experiment
// directory logs every exploit, each trial's pbt_policy_<id>.txt its
// lineage.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/callback"
	"github.com/hone-tune/hone/examples/internal/spirals"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/progress"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/pbt"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/stopper"
	"github.com/hone-tune/hone/trial"
)

// lr is drawn log-uniformly from [lrMin, lrMax] (momentum from momenta);
// the width of the hidden layer and the batch size are fixed.
const (
	lrMin, lrMax = 0.01, 1.0
	hidden       = 32
	batchSize    = 32
)

// momenta are the momentum values PBT moves between.
func momenta() []any { return []any{0.0, 0.5, 0.8, 0.9} }

// options are the example's parameters; main fills them from flags.
type options struct {
	dir        string
	population int
	epochs     int
	interval   int // perturbation interval, in epochs
	trainSize  int
	keep       int // checkpoints kept per trial; 0 keeps all
	seed       uint64
	out        io.Writer // live table and the final report
	log        io.Writer // experiment log (PBT's exploits); nil = stderr
}

func main() {
	o := options{out: os.Stdout}
	flag.StringVar(&o.dir, "dir", filepath.Join("hone_results", "pbt_go"), "experiment directory; an existing one is resumed")
	flag.IntVar(&o.population, "population", 8, "number of trials in the population")
	flag.IntVar(&o.epochs, "epochs", 32, "epochs per trial")
	flag.IntVar(&o.interval, "interval", 4, "perturbation interval, in epochs")
	flag.IntVar(&o.trainSize, "train-size", 4000, "training set size")
	flag.IntVar(&o.keep, "keep", 1, "checkpoints kept per trial, 0 = all (PBT pins those it still needs)")
	flag.Uint64Var(&o.seed, "seed", 5, "seed of every random choice (keep it when resuming)")
	flag.Parse()
	ctx, stop := spirals.SignalContext()
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "pbt:", err)
		os.Exit(1)
	}
}

// searchSpace returns the population's search space: lr and momentum are
// sampled once per trial and then mutated by PBT; the network's width and
// the batch size are fixed.
func searchSpace() space.Space {
	return space.Space{
		"lr":         space.LogUniform(lrMin, lrMax),
		"momentum":   space.Choice(momenta()...),
		"hidden":     hidden,
		"batch_size": batchSize,
	}
}

// experiment builds the experiment; extra callbacks are told what happens
// too. Resume needs it built the same way as the run it continues.
func experiment(o options, extra ...hone.Callback) (*hone.Experiment, error) {
	searcher, err := random.New(searchSpace(), o.population, nil, o.seed)
	if err != nil {
		return nil, fmt.Errorf("searcher: %w", err)
	}
	sched, err := pbt.New(pbt.Config{
		TimeAttr:             hone.FieldTrainingIteration,
		PerturbationInterval: float64(o.interval),
		QuantileFraction:     new(0.25),
		ResampleProbability:  new(0.25),
		PerturbationFactors:  []float64{1.2, 0.8},
		Mutations: map[string]any{
			"lr":       space.LogUniform(lrMin, lrMax),
			"momentum": momenta(),
		},
		LogConfig:    new(true),
		RequireAttrs: new(true),
	})
	if err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	return &hone.Experiment{
		Name: "pbt", Trainable: "spirals_mlp", Metric: "val_accuracy", Mode: hone.Max,
		Searcher: searcher, Scheduler: sched,
		Stoppers:            []hone.Stopper{stopper.MaxIterations(o.epochs)},
		MaxConcurrentTrials: 2,
		// PBT pins a donor's checkpoint until its clones restored it, so
		// keeping one per trial is safe. Saves happen on demand (pause,
		// exploit) and every interval, so even kill -9 loses little.
		Checkpoint: hone.CheckpointConfig{NumToKeep: o.keep, Frequency: o.interval, AtEnd: true},
		Failure:    hone.FailureConfig{MaxFailures: 2},
		Seed:       o.seed,
		Callbacks: append([]hone.Callback{callback.NewTrialFiles(o.dir),
			progress.New(o.out, progress.WithMetric("val_accuracy", hone.Max))}, extra...),
	}, nil
}

// run runs (or resumes) the experiment in o.dir until it ends or ctx is
// cancelled, then reports the best trial and its schedule.
func run(ctx context.Context, o options, extra ...hone.Callback) error {
	switch {
	case o.population < 2:
		return fmt.Errorf("population = %d: PBT needs at least 2 trials", o.population)
	case o.epochs < 1 || o.interval < 1 || o.trainSize < 1:
		return fmt.Errorf("epochs = %d, interval = %d, train-size = %d: each must be at least 1", o.epochs, o.interval, o.trainSize)
	case o.keep < 0:
		return fmt.Errorf("keep = %d: must be 0 (keep all) or more", o.keep)
	}
	exp, err := experiment(o, extra...)
	if err != nil {
		return err
	}
	opts := runner.Options{Dir: o.dir, Log: o.log, Executor: inproc.NewClass(func() trial.Trainable {
		return &spirals.Trainable{Size: o.trainSize, ReportConfig: true}
	})}
	done, err := spirals.RunOrResume(ctx, o.out, exp, opts)
	if err != nil || !done {
		return err
	}
	// The best by its last result, as in the table above: the network a
	// trial ends with is what its schedule produced.
	_, best, err := spirals.PrintBest(o.out, o.dir, results.ScopeLast)
	if err != nil {
		return err
	}
	return report(o.out, best)
}

// report writes the lineage of best and its hyperparameter schedule over
// epochs, as the results API reads them from the experiment directory.
func report(w io.Writer, best *results.Trial) error {
	lin, err := best.Lineage()
	if err != nil {
		return err
	}
	steps, err := best.Schedule()
	if err != nil {
		return err
	}
	last, err := best.Last()
	if err != nil {
		return err
	}
	end, _ := last.Value(hone.FieldTrainingIteration)
	name := trialName(best.Tag)
	if len(lin) == 0 {
		fmt.Fprintf(w, "trial %s (%s) never cloned another trial\n", name, best.ID)
	} else {
		fmt.Fprintf(w, "lineage of trial %s (%s), oldest first:\n", name, best.ID)
		for _, e := range lin {
			fmt.Fprintf(w, "  at epoch %d trial %s cloned trial %s as of its epoch %d\n",
				e.TargetIteration, trialName(e.Target), trialName(e.Donor), e.DonorIteration)
		}
	}
	fmt.Fprintf(w, "schedule of trial %s (lr and momentum per epoch segment):\n", name)
	for i, s := range steps {
		to := int(end)
		if i+1 < len(steps) {
			to = steps[i+1].From
		}
		if to <= s.From {
			continue // replaced at once: no epoch trained with it
		}
		lr, _ := hone.Number(s.Config["lr"])
		mom, _ := hone.Number(s.Config["momentum"])
		line := fmt.Sprintf("  epochs %3d-%-3d lr=%-8.4g momentum=%-5.3g", s.From+1, to, lr, mom)
		if i == 0 && len(lin) > 0 {
			line += fmt.Sprintf(" (trial %s's configuration)", trialName(lin[0].Donor))
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	return nil
}

// trialName names a trial by the index that starts its tag: tags are
// "<index>_<config>", with "@perturbed[...]" appended by exploits.
func trialName(tag string) string {
	if i := strings.IndexByte(tag, '_'); i > 0 {
		if _, err := strconv.Atoi(tag[:i]); err == nil {
			return tag[:i]
		}
	}
	return strconv.Quote(tag)
}

// Command mobudget measures how much budget hone's multi-fidelity
// experiment methods (package mobench: mo-asha and mo-hyperband, random
// search with MO-ASHA and with HyperBand ranking by every objective, and
// tpe-mo-asha, multi-objective TPE with MO-ASHA) need to reach a
// baseline's hypervolume: the baseline (Optuna's
// NSGA-II at full fidelity by default) runs every seed at the full budget,
// and its median final hypervolume is the target; each experiment method
// runs every seed at the same budget, and the command reports the first
// budget at which its median hypervolume over the seeds reaches the
// target, and that budget's ratio to the full one. A run with less budget
// is the prefix of one with more, so one run per seed gives the whole
// curve (mobench.HypervolumeAt).
//
// Usage, from the bench module:
//
//	go run ./cmd/mobudget                       # dtlz2-mf, 10 seeds, budget 200
//	go run ./cmd/mobudget -seeds 3 -budget 50
//
// The baseline needs Debian's python3-optuna; -baseline random uses hone's
// random searcher instead.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/hone-tune/hone/bench/internal/benchutil"
	"github.com/hone-tune/hone/bench/mobench"
	"github.com/hone-tune/hone/bench/mofunctions"
)

func main() { benchutil.Main("mobudget", run) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mobudget", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seeds := fs.Int("seeds", 10, "seeds per method (1..seeds)")
	budget := fs.Float64("budget", 200, "the full budget, in full-fidelity evaluations")
	problem := fs.String("problem", "dtlz2-mf", "the problem")
	methods := fs.String("methods", "", "comma-separated experiment methods (default: all)")
	baseline := fs.String("baseline", "optuna-nsga2", "the method whose median final hypervolume is the target (optuna-nsga2, optuna-motpe or random)")
	python := fs.String("python", mobench.DefaultPython, "the interpreter that runs the Optuna driver")
	verbose := fs.Bool("v", false, "log every run")
	if status, ok := benchutil.ParseFlags(fs, args, stderr); !ok {
		if status == 0 {
			return nil
		}
		return flag.ErrHelp
	}
	if *seeds < 1 || *budget < 1 {
		return fmt.Errorf("-seeds %d and -budget %g: both must be at least 1", *seeds, *budget)
	}
	exps := mobench.AllExperiments()
	if *methods != "" {
		exps = nil
		for _, n := range strings.Split(*methods, ",") {
			i := slices.IndexFunc(mobench.AllExperiments(), func(e mobench.Experiment) bool { return e.Name == n })
			if i < 0 {
				return fmt.Errorf("unknown method %q", n)
			}
			exps = append(exps, mobench.AllExperiments()[i])
		}
	}
	p := mofunctions.ByName(*problem)
	if p == nil {
		return errors.New("unknown problem " + *problem)
	}
	base, err := mobench.Select(append([]mobench.Method{mobench.Random()}, mobench.Optuna(*python)...), *baseline)
	if err != nil {
		return err
	}
	cfg := mobench.Config{Problems: []*mofunctions.Problem{p}, Methods: base, Seeds: *seeds, Budget: *budget}
	if *verbose {
		cfg.Log = stderr
	}
	rep, err := mobench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	target := rep.Cells[0].Median()
	fmt.Fprintf(stdout, "%s, %d seeds: target %.4f, the median final hypervolume of %s at a budget of %g full-fidelity evaluations.\n\n",
		p.Name, *seeds, target, *baseline, *budget)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "method\tbudget to target\tratio\tmedian HV at 1/4\tat 1/2\tat full\t")
	for _, e := range exps {
		var runs [][]mobench.Arrival
		for seed := uint64(1); seed <= uint64(*seeds); seed++ {
			tr, arr, err := e.Run(ctx, p, seed, *budget)
			if err != nil {
				return err
			}
			if err := mobench.Check(p, tr); err != nil {
				return fmt.Errorf("%s, seed %d: %w", e.Name, seed, err)
			}
			if *verbose {
				fmt.Fprintf(stderr, "mobudget: %s seed %d: %d trials, %d at full fidelity, spent %.4g, hypervolume %.6g\n",
					e.Name, seed, len(tr.Evals), len(arr), tr.Spent, tr.Hypervolume(p))
			}
			runs = append(runs, arr)
		}
		c := mobench.MedianCurve(p, runs)
		reach := c.Reach(target)
		reachText, ratio := "never", "-"
		if !math.IsNaN(reach) {
			reachText, ratio = fmt.Sprintf("%.4g", reach), fmt.Sprintf("%.3f", reach / *budget)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.4f\t%.4f\t%.4f\t\n", e.Name, reachText, ratio, c.At(*budget/4), c.At(*budget/2), c.At(*budget))
	}
	return tw.Flush()
}

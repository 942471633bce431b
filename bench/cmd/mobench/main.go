// Command mobench compares multi-objective search methods on ZDT1, ZDT2,
// ZDT3, DTLZ2 and the multi-fidelity DTLZ2 (bench/mofunctions) by the
// median hypervolume of their evaluations over several seeds at an equal
// budget: hone's random, nsga2 and multi-objective tpe searchers, hone's
// experiments on the simulated executor (mo-asha and mo-hyperband: random
// search with MO-ASHA and with HyperBand ranking by every objective;
// tpe-mo-asha: multi-objective TPE with MO-ASHA), and
// Optuna's NSGAIISampler and multi-objective TPESampler (see package
// mobench).
//
// Usage, from the bench module:
//
//	go run ./cmd/mobench                          # 10 seeds, 200 trials, every problem and method
//	go run ./cmd/mobench -seeds 3 -budget 50 -methods random,optuna-nsga2 -problems zdt1
//
// The Optuna methods need Debian's python3-optuna (apt-get install -y
// python3-optuna); without it the command says so and leaves them out.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hone-tune/hone/bench/internal/benchutil"
	"github.com/hone-tune/hone/bench/mobench"
	"github.com/hone-tune/hone/bench/mofunctions"
)

func main() { benchutil.Main("mobench", run) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mobench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seeds := fs.Int("seeds", 10, "seeds per method and problem (1..seeds)")
	budget := fs.Float64("budget", 200, "budget of each run, in full-fidelity evaluations")
	problems := fs.String("problems", "", "comma-separated problems (default: all)")
	methods := fs.String("methods", "", "comma-separated methods (default: all available)")
	python := fs.String("python", mobench.DefaultPython, "the interpreter that runs the Optuna driver")
	verbose := fs.Bool("v", false, "log every run")
	quality := fs.String("quality", "", "also write the results as docs/QUALITY.md's section of several objectives, in this file (e.g. ../docs/QUALITY.md)")
	if status, ok := benchutil.ParseFlags(fs, args, stderr); !ok {
		if status == 0 {
			return nil
		}
		return flag.ErrHelp
	}
	if *seeds < 1 || *budget < 1 {
		return fmt.Errorf("-seeds %d and -budget %g: both must be at least 1", *seeds, *budget)
	}
	all := append(mobench.HoneMethods(), mobench.Experiments()...)
	optuna := "Optuna did not run"
	if v, err := mobench.OptunaVersion(ctx, *python); err != nil {
		fmt.Fprintf(stderr, "mobench: leaving the Optuna methods out: %v\n", err)
		optuna = "Optuna did not run: " + err.Error()
	} else {
		fmt.Fprintf(stderr, "mobench: Optuna %s\n", v)
		optuna = "Optuna " + v + " ran"
		all = append(all, mobench.Optuna(*python)...)
	}
	ms, err := mobench.Select(all, *methods)
	if err != nil {
		return err
	}
	ps := mofunctions.Problems()
	if *problems != "" {
		ps = nil
		for _, name := range strings.Split(*problems, ",") {
			p := mofunctions.ByName(name)
			if p == nil {
				return errors.New("unknown problem " + name)
			}
			ps = append(ps, p)
		}
	}
	cfg := mobench.Config{Problems: ps, Methods: ms, Seeds: *seeds, Budget: *budget}
	if *verbose {
		cfg.Log = stderr
	}
	start := time.Now()
	rep, err := mobench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if *quality != "" {
		var b strings.Builder
		rep.WriteQuality(&b, mobench.QualityInfo{Command: "cd bench && go run ./cmd/mobench " + strings.Join(args, " "), When: start, Optuna: optuna})
		if err := mobench.ReplaceQuality(*quality, b.String()); err != nil {
			return err
		}
	}
	return rep.Write(stdout)
}

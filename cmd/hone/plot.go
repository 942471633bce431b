package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/plots"
	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/results"
)

// plotsDir is where hone plot writes the plots of a local experiment by
// default, inside its directory.
const plotsDir = "plots"

func (a *app) plotCmd() *cobra.Command {
	var o struct {
		out, metric, mode string
		reference         string
		maxTrials         int
	}
	cmd := &cobra.Command{
		Use:   "plot DIR|URL",
		Short: "Write the charts of an experiment as PNG and SVG files",
		Long: `Write the charts of the experiment in DIR (or at an object-store URL), each
as a PNG and an SVG file, into --out (default: DIR/plots; for a URL,
NAME-plots in the current directory, NAME the experiment's name):

  learning_curves       the metric of every trial against the time attribute,
                        the best trial's line thick and black
  best_so_far           the best value so far against the time since the
                        experiment began, and against the budget spent (the
                        sum of the time attribute over trials)
  pbt_lineage           PBT and PB2: which trial cloned which, and when
  pbt_schedules         PBT and PB2: each trial's hyperparameters over time
  rungs                 ASHA, HyperBand and BOHB: the trials at each rung,
                        promoted, stopped or completed there
  parallel_coordinates  configuration against metric, a line per trial
  pareto_front          several objectives: every finished trial at its
                        objectives' values, the Pareto front red and
                        joined, infeasible trials crosses, the reference
                        point of the hypervolume a plus; a panel per pair
                        of objectives (--reference gives the point, one
                        value per objective, else it is derived)

A chart the experiment has no data for is left out, with the reason. The
metric and mode default to the spec's (--metric and --mode choose others).
Charts of many trials draw the best --max-trials. The same experiment gives
the same files, byte for byte; a running experiment is drawn as it is.
docs/PLOTS.md says how each chart is derived.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.mode != "" && !hone.Mode(o.mode).Valid() {
				return withCode(exitUsage, fmt.Errorf("--mode %q: allowed values are min and max", o.mode))
			}
			if o.maxTrials < 1 {
				return withCode(exitUsage, fmt.Errorf("--max-trials %d: must be at least 1", o.maxTrials))
			}
			arg := args[0]
			if !isRemote(arg) {
				if _, err := os.Stat(arg); errors.Is(err, fs.ErrNotExist) {
					return withCode(exitUsage, fmt.Errorf("%s: no such directory", arg))
				}
			}
			src, err := a.dashboardSource(cmd.Context(), arg) // a usage error without a journal
			if err != nil {
				return err
			}
			defer src.close()
			e, err := results.Open(src.dir)
			if err != nil {
				return withCode(exitFailed, err)
			}
			info, err := report.ReadInfo(src.dir)
			if err != nil {
				return withCode(exitFailed, err)
			}
			// --metric and --mode override the spec's, each on its own.
			info.Objective = hone.Objective{Metric: o.metric, Mode: hone.Mode(o.mode)}.Or(info.Objective)
			if info.Metric == "" {
				return withCode(exitUsage, fmt.Errorf("%s: the experiment's spec names no metric; pass --metric", src.shown))
			}
			if info.Reference, err = parseReference(o.reference, info.FrontObjectives()); err != nil {
				return withCode(exitUsage, err)
			}
			sample, n, err := resultFields(e)
			if err != nil {
				return withCode(exitFailed, err)
			}
			if n == 0 {
				return withCode(exitFailed, fmt.Errorf("%s has no results yet (%s): nothing to plot", src.shown, plural(len(e.Trials), "trial")))
			}
			figs, skipped, err := plots.Figures(e, info, plots.Options{MaxTrials: o.maxTrials})
			if err != nil {
				return withCode(exitFailed, err)
			}
			if len(figs) == 0 {
				return withCode(exitFailed, fmt.Errorf("no result of %s has the metric %q: nothing to plot (a result has %s)",
					src.shown, info.Metric, strings.Join(sample, ", ")))
			}
			out := o.out
			if out == "" {
				out = filepath.Join(src.dir, plotsDir)
				if isRemote(arg) {
					out = e.Name + "-plots"
				}
			}
			paths, err := plots.Write(out, figs, plots.Formats())
			if err != nil {
				return withCode(exitFailed, err)
			}
			w := cmd.OutOrStdout()
			for _, p := range paths {
				fmt.Fprintln(w, p)
			}
			for _, f := range figs {
				if f.Note != "" {
					fmt.Fprintf(a.stderr, "hone: %s: %s\n", f.Name, f.Note)
				}
			}
			for _, s := range skipped {
				fmt.Fprintf(a.stderr, "hone: no %s: %s\n", s.Name, s.Reason)
			}
			if src.running() {
				fmt.Fprintf(a.stderr, "hone: %s is running: the plots show it as it is now\n", src.shown)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.out, "out", "", "the directory to write the files into (default: DIR/plots; for a URL, NAME-plots)")
	f.StringVar(&o.metric, "metric", "", "the metric to plot (default: the spec's)")
	f.StringVar(&o.mode, "mode", "", "min or max (default: the spec's, else min)")
	f.StringVar(&o.reference, "reference", "", "the front's reference point: one value per objective, comma-separated, in the metrics' units (default: derived)")
	f.IntVar(&o.maxTrials, "max-trials", plots.DefaultMaxTrials, "the most trials a chart draws: the best ones")
	return cmd
}

// resultFields returns the fields of one result of e, sorted, without
// the configuration, and how many results e has.
func resultFields(e *results.Experiment) ([]string, int, error) {
	var sample []string
	n := 0
	for _, t := range e.Trials {
		rows, err := t.Results()
		if err != nil {
			return nil, 0, err
		}
		n += len(rows)
		if len(rows) > 0 && sample == nil {
			for k := range rows[len(rows)-1] {
				if k != hone.FieldConfig {
					sample = append(sample, k)
				}
			}
			sort.Strings(sample)
		}
	}
	return sample, n, nil
}

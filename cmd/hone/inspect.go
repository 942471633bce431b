package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/progress"
	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/runner"
)

func (a *app) statusCmd() *cobra.Command {
	var notStarted bool
	var reference string
	cmd := &cobra.Command{
		Use:   "status DIR",
		Short: "Print the trials of a running or finished experiment",
		Long: `Print the trials of the experiment in DIR, running or finished: status,
the configuration values that differ between trials, the metric of the
last result, its iteration and the training time so far.

A trial shown STOPPED was running when the experiment stopped (Ctrl-C, a
signal, a crash); hone resume continues it from its latest checkpoint.
Trials that never started (queued, or left over when a stop condition
ended the experiment) are counted as "not started" and listed only with
--not-started.

With several objectives or a constraint, it also prints the Pareto front's
size and its hypervolume; --reference gives the reference point, one value
per objective, comma-separated, in the metrics' own units and order, else
it is derived from the front.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			x, err := inspect(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer x.close()
			e, running, holder := x.Experiment, x.running, x.holder
			objs, cons := storedObjectives(x.local)
			obj := objs.Primary()
			rows, err := trialRows(e, obj, results.ScopeLast, running)
			if err != nil {
				return withCode(exitFailed, err)
			}
			metric := obj.Metric
			ref, err := parseReference(reference, objs)
			if err != nil {
				return withCode(exitUsage, err)
			}
			var front *report.Front
			var extra []string
			if ref != nil && !severalObjectives(objs, cons) {
				return withCode(exitUsage, errors.New("--reference: the experiment has one objective and no constraint, so there is no front to measure"))
			}
			if severalObjectives(objs, cons) {
				if front, err = report.ParetoFront(e, objs, cons, ref); err != nil {
					return withCode(exitFailed, err)
				}
				extra, metric = addObjectives(rows, front), ""
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Experiment %s in %s: %s (%s)\n", e.Name, e.Dir, plural(len(rows), "trial"), statusCounts(rows))
			unfinished := slices.ContainsFunc(rows, func(r *row) bool { return !r.trial.Status.Finished() })
			switch {
			case running:
				fmt.Fprintf(w, "Running in hone%s.\n", holder)
			case unfinished || len(rows) == 0:
				fmt.Fprintf(w, "Not running; continue it with: hone resume %s\n", e.Dir)
			}
			if slices.ContainsFunc(rows, func(r *row) bool { return r.status == statusStopped }) {
				fmt.Fprintf(w, "%s: was running when the experiment stopped; hone resume continues it from its latest checkpoint.\n", statusStopped)
			}
			if front != nil {
				fmt.Fprintln(w, frontLine(front))
				fmt.Fprintln(w, hypervolumeLine(front))
			}
			shown, hidden := splitNotStarted(rows, notStarted)
			writeTable(w, shown, metric, "", extra)
			writeNotStarted(w, hidden)
			return nil
		},
	}
	cmd.Flags().BoolVar(&notStarted, "not-started", false, "also list the trials that never started")
	cmd.Flags().StringVar(&reference, "reference", "", "with several objectives, the hypervolume's reference point: one value per objective, comma-separated, in the metrics' units (default: derived from the front)")
	return cmd
}

func (a *app) resultsCmd() *cobra.Command {
	var o struct {
		best        bool
		pareto      bool
		reference   string
		format      string
		metric      string
		mode, scope string
		csv         bool
		notStarted  bool
	}
	cmd := &cobra.Command{
		Use:   "results DIR",
		Short: "Print the results of an experiment, its best trial or its Pareto front",
		Long: `Print every trial of the experiment in DIR with its score, best first, or with
--best only the best trial. The metric and mode default to the spec's. The
scope says which results of a trial count: last (the last result), avg (the
mean of all), all (the best of all), last-5-avg, last-10-avg.

With several objectives (or constraints) in the spec, there is no single
best trial: the table has a column per objective (each trial's last
result) and a column saying which trials are on the Pareto front (those
no other finished trial beats on every objective; with constraints,
feasible trials first: an infeasible trial is on the front only when no
trial is feasible), the front first. Above it, the front's size and its
hypervolume. --metric ranks by one metric instead.

--pareto prints only the front: each trial's objectives, feasibility
(with constraints) and configuration, under the front's size and its
hypervolume: the volume the front dominates up to a reference point.
--reference gives that point, one value per objective, comma-separated, in
the metrics' own units and order (--reference 0.5,100 for accuracy (max)
and latency_ms (min): accuracy at least 0.5, latency at most 100 count);
without it, the point is derived from the front (each objective's worst
value on it, moved a tenth of the front's range further) and the output
says so. With one objective the front is the best trial, or the trials
tied for best. The front compares the last result of each TERMINATED
trial.

--format csv (or --csv) writes CSV instead: one row per trial (only the
best with --best, the front with --pareto) with trial_id, status, the
configuration (config/...) and the fields of its last result (with
--pareto: trial_id, the objectives, feasible with constraints, then the
configuration). A result field whose name is trial_id or status, or starts
with config/ or metrics/, is in a column named metrics/ and the field's
name (a metric config/x is in metrics/config/x), so no two columns share a
name. Numbers are written as result.json writes them: the shortest form
that reads back as the same value (5e-324, 0.1).

--format json writes JSON: the trials in the table's order, each with its
status as shown, configuration, score (and with several objectives each
objective's value and whether it is on the front or infeasible), its
last iteration and training time; with --best the best trial, its
directory and latest checkpoint; with --pareto the front: the
objectives, constraints, counts, hypervolume, reference point and the
front's trials. A number JSON cannot hold (NaN, an infinity) is written
as the string result.json writes.

Trials that never started (queued, or left over when a stop condition
ended the experiment) have no results: they are counted as "not started"
and left out of the table and the CSV unless --not-started is given. A
trial shown STOPPED was running when the experiment stopped; hone resume
continues it. The CSV's status column holds the status the journal
records (RUNNING for such a trial).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch o.scope {
			case results.ScopeLast, results.ScopeAvg, results.ScopeAll, results.ScopeLast5Avg, results.ScopeLast10Avg:
			default:
				return withCode(exitUsage, fmt.Errorf("--scope %q: allowed values are last, avg, all, last-5-avg, last-10-avg", o.scope))
			}
			if o.mode != "" && !hone.Mode(o.mode).Valid() {
				return withCode(exitUsage, fmt.Errorf("--mode %q: allowed values are min and max", o.mode))
			}
			switch o.format {
			case formatTable, formatCSV, formatJSON:
			default:
				return withCode(exitUsage, fmt.Errorf("--format %q: allowed values are table, csv and json", o.format))
			}
			if o.csv {
				if cmd.Flags().Changed("format") && o.format != formatCSV {
					return withCode(exitUsage, fmt.Errorf("--csv and --format %s: give one", o.format))
				}
				o.format = formatCSV
			}
			switch {
			case o.best && o.pareto:
				return withCode(exitUsage, errors.New("--best and --pareto: give one (with several objectives the best trials are the front)"))
			case o.pareto && cmd.Flags().Changed("scope") && o.scope != results.ScopeLast:
				return withCode(exitUsage, fmt.Errorf("--scope %s with --pareto: the front compares each trial's last result; leave --scope out", o.scope))
			}
			x, err := inspect(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer x.close()
			e := x.Experiment
			objs, cons := storedObjectives(x.local)
			obj := hone.Objective{Metric: o.metric, Mode: hone.Mode(o.mode)}.Or(objectiveOf(objs, o.metric))
			several := severalObjectives(objs, cons)
			if o.metric != "" {
				// Ranked by the metric given alone; --pareto keeps the
				// constraints.
				objs, several = obj.AsList(), false
			}
			w := cmd.OutOrStdout()
			running := x.running
			if (o.pareto || several) && len(objs) == 0 {
				return withCode(exitUsage, errors.New("the experiment's spec names no metric; pass --metric"))
			}
			ref, err := parseReference(o.reference, objs)
			if err != nil {
				return withCode(exitUsage, err)
			}
			if ref != nil && !o.pareto && !several {
				return withCode(exitUsage, errors.New("--reference: the experiment has one objective and no constraint, so there is no front to measure; pass --pareto"))
			}
			if o.pareto {
				f, err := report.ParetoFront(e, objs, cons, ref)
				if err != nil {
					return withCode(exitFailed, err)
				}
				return withCode(exitFailed, writePareto(w, f, o.format))
			}
			if o.best {
				if obj.Metric == "" {
					return withCode(exitUsage, fmt.Errorf("the experiment's spec names no metric; pass --metric"))
				}
				if several {
					return withCode(exitUsage, fmt.Errorf("--best: the experiment has several objectives or constraints (%s), so its best trials are its Pareto front: pass --pareto, or --metric to rank by one", objectiveList(objs)))
				}
				best, v, err := e.Best(obj, o.scope)
				if err != nil {
					return withCode(exitFailed, err)
				}
				if o.format == formatCSV {
					one := *e
					one.Trials = []*results.Trial{best}
					return withCode(exitFailed, one.WriteCSV(w))
				}
				st := string(best.Status)
				if best.Status == hone.StatusRunning && !running {
					st = statusStopped
				}
				if o.format == formatJSON {
					return withCode(exitFailed, writeBestJSON(w, best, st, obj, o.scope, v))
				}
				return withCode(exitFailed, writeBest(w, best, st, obj, o.scope, v))
			}
			if o.format == formatCSV {
				some := *e
				some.Trials = nil
				for _, t := range e.Trials {
					if o.notStarted || !t.NotStarted() {
						some.Trials = append(some.Trials, t)
					}
				}
				return withCode(exitFailed, some.WriteCSV(w))
			}
			rows, err := trialRows(e, obj, o.scope, running)
			if err != nil {
				return withCode(exitFailed, err)
			}
			metric, scope := obj.Metric, o.scope
			var extra []string
			var front *report.Front
			if several {
				if front, err = report.ParetoFront(e, objs, cons, ref); err != nil {
					return withCode(exitFailed, err)
				}
				extra, metric, scope = addObjectives(rows, front), "", ""
				sortByFront(rows, objs[0])
			} else {
				sortByScore(rows, obj)
			}
			if o.format == formatJSON {
				shown, _ := splitNotStarted(rows, o.notStarted)
				return withCode(exitFailed, writeResultsJSON(w, e, shown, obj, o.scope, front))
			}
			fmt.Fprintf(w, "Experiment %s in %s: %s (%s)\n", e.Name, e.Dir, plural(len(rows), "trial"), statusCounts(rows))
			switch {
			case front != nil:
				fmt.Fprintln(w, frontLine(front))
				fmt.Fprintln(w, hypervolumeLine(front))
				fmt.Fprintln(w, "Sorted by front rank, then by "+objs[0].String()+"; hone results --pareto lists the front.")
			case obj.Metric != "":
				fmt.Fprintf(w, "Sorted by %s (%s, scope %s).\n", obj.Metric, obj.Mode, o.scope)
			}
			shown, hidden := splitNotStarted(rows, o.notStarted)
			writeTable(w, shown, metric, scope, extra)
			writeNotStarted(w, hidden)
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.best, "best", false, "print only the best trial")
	f.BoolVar(&o.pareto, "pareto", false, "print only the Pareto front of the finished trials, with its hypervolume")
	f.StringVar(&o.reference, "reference", "", "the hypervolume's reference point: one value per objective, comma-separated, in the metrics' units (default: derived from the front)")
	f.StringVar(&o.format, "format", formatTable, "table, csv or json")
	f.StringVar(&o.metric, "metric", "", "the metric to rank trials by (default: the spec's metric)")
	f.StringVar(&o.mode, "mode", "", "min or max (default: the spec's mode, else min)")
	f.StringVar(&o.scope, "scope", results.ScopeLast, "which results count: last, avg, all, last-5-avg, last-10-avg")
	f.BoolVar(&o.csv, "csv", false, "write CSV (--format csv)")
	f.BoolVar(&o.notStarted, "not-started", false, "also list the trials that never started")
	return cmd
}

// inspected is an experiment opened for status or results.
type inspected struct {
	*results.Experiment
	local   string // the local directory holding its spec copy
	running bool   // a hone process runs it
	holder  string // which, as " (pid N)", or ""
	close   func()
}

// inspect opens the experiment in the directory or at the object-store URL
// arg for status and results.
func inspect(ctx context.Context, arg string) (*inspected, error) {
	if !isRemote(arg) {
		e, err := openExperiment(arg)
		if err != nil {
			return nil, err
		}
		running, holder := runningIn(e.Dir)
		return &inspected{Experiment: e, local: e.Dir, running: running, holder: holder, close: func() {}}, nil
	}
	return openRemoteExperiment(ctx, arg)
}

// openExperiment opens the experiment in dir; a directory without a
// journal is a usage error.
func openExperiment(dir string) (*results.Experiment, error) {
	if !runner.Exists(dir) {
		return nil, withCode(exitUsage, fmt.Errorf("%s holds no experiment (no journal)", dir))
	}
	e, err := results.Open(dir)
	var corrupt *journal.CorruptError
	if errors.As(err, &corrupt) {
		return nil, withCode(exitFailed, fmt.Errorf("%w; hone resume --truncate-journal %s continues the experiment from the lines before it (the rest is kept beside the journal)", err, dir))
	}
	if err != nil {
		return nil, withCode(exitFailed, err)
	}
	return e, nil
}

// storedObjective reads the objective from the spec saved in an
// experiment directory, without validating the rest of it (the spec's
// command or working directory need not exist any more); an invalid mode
// is left out. It is the zero Objective if there is no readable spec.
func storedObjective(dir string) hone.Objective {
	data, err := os.ReadFile(filepath.Join(dir, specCopy))
	if err != nil {
		return hone.Objective{}
	}
	var o hone.Objective
	if yaml.Unmarshal(data, &o) != nil {
		return hone.Objective{}
	}
	if !o.Mode.Valid() {
		o.Mode = ""
	}
	return o.WithDefaults()
}

// statusStopped is how status and results show a trial recorded RUNNING
// in an experiment that no hone process runs: it was stopped (or hone
// crashed) while it ran, and a resume continues it.
const statusStopped = "STOPPED"

// statusNotStarted counts the trials that never started.
const statusNotStarted = "not started"

// row is one trial in a table.
type row struct {
	trial    *results.Trial
	status   string // as shown: the trial's status, STOPPED or not started
	config   map[string]string
	score    float64
	hasScore bool
	iter     string
	total    string
	where    string // where its last result came from, on a cluster
	// extra are the cells of the columns addObjectives adds, with several
	// objectives; rank is the trial's rank in the front (-1: none).
	extra []string
	rank  int
}

// trialRows reads each trial's results and computes its score. running
// says whether a hone process runs the experiment; if not, RUNNING trials
// are shown STOPPED.
func trialRows(e *results.Experiment, obj hone.Objective, scope string, running bool) ([]*row, error) {
	rows := make([]*row, 0, len(e.Trials))
	for _, t := range e.Trials {
		r := &row{trial: t, status: string(t.Status), config: map[string]string{}}
		switch {
		case t.NotStarted():
			r.status = statusNotStarted
		case t.Status == hone.StatusRunning && !running:
			r.status = statusStopped
		}
		hone.Flatten("", map[string]any(t.Config), func(k string, leaf any) { r.config[k] = progress.Display(leaf) })
		last, err := t.Last()
		if err != nil {
			return nil, err
		}
		if last != nil {
			if v, ok := last.Value(hone.FieldTrainingIteration); ok {
				r.iter = progress.Display(v)
			}
			if v, ok := last.Value(hone.FieldTimeTotal); ok {
				r.total = strconv.FormatFloat(v, 'f', 1, 64)
			}
			if h, ok := last[hone.FieldHostname].(string); ok && strings.Contains(h, "(slurm ") {
				r.where = h
			}
		}
		if obj.Metric != "" {
			v, ok, err := t.Score(obj, scope)
			if err != nil {
				return nil, err
			}
			r.score, r.hasScore = v, ok
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// sortByScore orders rows best first; trials without a score come last,
// in creation order.
func sortByScore(rows []*row, obj hone.Objective) {
	slices.SortStableFunc(rows, func(a, b *row) int { return obj.Compare(a.score, a.hasScore, b.score, b.hasScore) })
}

// writeTable prints rows: trial, status, the configuration values that
// vary, the metric (headed "metric (scope)" when scope is set), the
// columns extra heads (each row's extra cells), iteration, time, and the
// first line of any error.
func writeTable(w io.Writer, rows []*row, metric, scope string, extra []string) {
	if len(rows) == 0 {
		return
	}
	keys := varyingKeys(rows)
	head := append([]string{"Trial", "Status"}, keys...)
	if metric != "" {
		h := metric
		if scope != "" {
			h += " (" + scope + ")"
		}
		head = append(head, h)
	}
	head = append(head, extra...)
	head = append(head, "iter", "total time (s)")
	// On a cluster: the node and Slurm job (or step) of each trial.
	hasWhere := slices.ContainsFunc(rows, func(r *row) bool { return r.where != "" })
	if hasWhere {
		head = append(head, "where")
	}
	hasErr := slices.ContainsFunc(rows, func(r *row) bool { return r.trial.Error != "" })
	if hasErr {
		head = append(head, "error")
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		st := r.status
		if st == statusNotStarted {
			st = string(r.trial.Status) + " (" + statusNotStarted + ")"
		}
		cells := []string{r.trial.ID, st}
		for _, k := range keys {
			cells = append(cells, r.config[k])
		}
		if metric != "" {
			v := ""
			if r.hasScore {
				v = progress.Display(r.score)
			}
			cells = append(cells, v)
		}
		if len(extra) > 0 {
			cells = append(cells, r.extra...)
		}
		cells = append(cells, r.iter, r.total)
		if hasWhere {
			cells = append(cells, r.where)
		}
		if hasErr {
			msg, _, _ := strings.Cut(r.trial.Error, "\n")
			if len(msg) > 80 {
				msg = msg[:77] + "..."
			}
			cells = append(cells, msg)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	_ = tw.Flush() // writes to a strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		fmt.Fprintln(w, strings.TrimRight(l, " "))
	}
}

// writeBest prints the best trial: its status as shown, score, directory,
// latest kept checkpoint and configuration.
func writeBest(w io.Writer, t *results.Trial, status string, obj hone.Objective, scope string, v float64) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Best trial: %s (%s) with %s=%s (%s, scope %s)\n", t.ID, status, obj.Metric, progress.Display(v), obj.Mode, scope)
	fmt.Fprintf(&b, "Directory: %s\n", t.Dir)
	if n := len(t.Checkpoints); n > 0 {
		fmt.Fprintf(&b, "Checkpoint: %s\n", t.Checkpoints[n-1])
	}
	cfg, err := json.MarshalIndent(t.Config, "", "  ")
	if err != nil {
		return fmt.Errorf("render config: %w", err)
	}
	fmt.Fprintf(&b, "Config: %s\n", cfg)
	_, err = io.WriteString(w, b.String())
	return err
}

// varyingKeys returns, sorted, the configuration keys whose values differ
// between rows (a key missing from some row differs). With one row, every
// key is shown.
func varyingKeys(rows []*row) []string {
	seen := map[string]bool{}
	var keys []string
	for _, r := range rows {
		for k := range r.config {
			if seen[k] {
				continue
			}
			seen[k] = true
			v, ok := rows[0].config[k]
			if len(rows) == 1 {
				keys = append(keys, k)
				continue
			}
			for _, o := range rows[1:] {
				if ov, ook := o.config[k]; ook != ok || ov != v {
					keys = append(keys, k)
					break
				}
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// splitNotStarted returns the rows to list and the trials that never
// started left out of the list (none when all is set).
func splitNotStarted(rows []*row, all bool) (shown, hidden []*row) {
	for _, r := range rows {
		if r.status == statusNotStarted && !all {
			hidden = append(hidden, r)
		} else {
			shown = append(shown, r)
		}
	}
	return shown, hidden
}

// writeNotStarted says how many trials that never started the table left
// out.
func writeNotStarted(w io.Writer, hidden []*row) {
	if len(hidden) == 0 {
		return
	}
	verb := "are"
	if len(hidden) == 1 {
		verb = "is"
	}
	fmt.Fprintf(w, "%s never started (no results) and %s not listed; --not-started lists them.\n", plural(len(hidden), "trial"), verb)
}

// statusCounts renders "3 TERMINATED, 1 RUNNING, 2 not started" in
// lifecycle order, with trials that never started last.
func statusCounts(rows []*row) string {
	n := map[string]int{}
	for _, r := range rows {
		n[r.status]++
	}
	var parts []string
	for _, s := range []string{string(hone.StatusRunning), statusStopped, string(hone.StatusPending), string(hone.StatusPaused),
		string(hone.StatusTerminated), string(hone.StatusError), statusNotStarted} {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	if len(parts) == 0 {
		return "none yet"
	}
	return strings.Join(parts, ", ")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

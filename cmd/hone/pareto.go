package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"gopkg.in/yaml.v3"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/progress"
	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/results"
)

// The output formats of hone results (--format).
const (
	formatTable = "table"
	formatCSV   = "csv"
	formatJSON  = "json"
)

// storedObjectives reads the objectives and constraints from the spec
// saved in an experiment directory, as storedObjective reads the one
// objective: the spec's objectives, else its metric and mode as a list of
// one (none without a metric), with the defaults. Objectives with an
// invalid mode get the default one.
func storedObjectives(dir string) (hone.Objectives, hone.Constraints) {
	data, err := os.ReadFile(filepath.Join(dir, specCopy))
	if err != nil {
		return nil, nil
	}
	var s struct {
		Objectives  hone.Objectives  `yaml:"objectives"`
		Constraints hone.Constraints `yaml:"constraints"`
	}
	if yaml.Unmarshal(data, &s) != nil {
		return storedObjective(dir).AsList(), nil
	}
	if len(s.Objectives) == 0 {
		return storedObjective(dir).AsList(), s.Constraints
	}
	for i := range s.Objectives {
		if !s.Objectives[i].Mode.Valid() {
			s.Objectives[i].Mode = ""
		}
	}
	return s.Objectives.WithDefaults(), s.Constraints
}

// objectiveOf returns the objective of objs whose metric is metric, or
// the primary one when metric is "": what a --metric (and no --mode)
// falls back to. A metric that is no objective's gets the primary
// objective's mode, as the spec's mode is the default of --mode.
func objectiveOf(objs hone.Objectives, metric string) hone.Objective {
	if metric == "" {
		return objs.Primary()
	}
	for _, o := range objs {
		if o.Metric == metric {
			return o
		}
	}
	return hone.Objective{Mode: objs.Primary().Mode}
}

// severalObjectives reports whether an experiment's results are a Pareto
// front rather than a best trial: several objectives, or a constraint.
func severalObjectives(objs hone.Objectives, cs hone.Constraints) bool {
	return len(objs) > 1 || len(cs) > 0
}

// parseReference reads --reference: one number per objective,
// comma-separated, in the metrics' own units; nil when not given.
func parseReference(s string, objs hone.Objectives) ([]float64, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != len(objs) {
		return nil, fmt.Errorf("--reference %q: %d values for %d objectives: give one per objective, comma-separated, in order (%s)",
			s, len(parts), len(objs), strings.Join(objs.Metrics(), ", "))
	}
	ref := make([]float64, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("--reference %q: %q (%s) is not a finite number", s, p, objs[i].Metric)
		}
		ref[i] = v
	}
	return ref, nil
}

// frontLine says in one line what the front is: its size among the
// finished trials, and how many of them are feasible.
func frontLine(f *report.Front) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Pareto front (%s): %d of %s", objectiveList(f.Objectives), f.Size, plural(f.Finished, "finished trial"))
	if f.Incomplete > 0 {
		fmt.Fprintf(&b, " (%d without every objective, left out)", f.Incomplete)
	}
	if len(f.Constraints) > 0 {
		fmt.Fprintf(&b, "; %d feasible under %s", f.Feasible, strings.Join(f.Constraints, ", "))
		if f.Feasible == 0 && f.Size > 0 {
			b.WriteString(": none, so the front is of the least infeasible")
		}
	}
	return b.String()
}

// hypervolumeLine says the front's hypervolume, the reference point and
// where it came from.
func hypervolumeLine(f *report.Front) string {
	switch {
	case f.Size == 0:
		return "Hypervolume: none yet (no finished trial with every objective)"
	case f.Hypervolume == nil:
		return "Hypervolume: none (no feasible trial on the front)"
	}
	ref := make([]string, len(f.Reference))
	for i, v := range f.Reference {
		ref[i] = f.Objectives[i].Metric + "=" + progress.Display(v)
	}
	from := "given with --reference"
	if f.ReferenceDerived {
		from = "derived from the front: each objective's worst value on it, moved a tenth of its range further"
	}
	return fmt.Sprintf("Hypervolume: %s against the reference point %s (%s)", progress.Display(*f.Hypervolume), strings.Join(ref, ", "), from)
}

// objectiveList renders "accuracy (max), latency_ms (min)".
func objectiveList(objs hone.Objectives) string {
	s := make([]string, len(objs))
	for i, o := range objs {
		s[i] = o.String()
	}
	return strings.Join(s, ", ")
}

// writePareto writes the front's trials in format: a table under lines
// saying the front's size and hypervolume, a CSV row per trial, or the
// front as JSON.
func writePareto(w io.Writer, f *report.Front, format string) error {
	on := f.OnFront()
	switch format {
	case formatJSON:
		out := struct {
			*report.Front
			Trials []report.FrontPoint `json:"trials"`
		}{Front: f, Trials: on}
		all := f.Points
		f.Points = nil
		defer func() { f.Points = all }()
		if out.Trials == nil {
			out.Trials = []report.FrontPoint{}
		}
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return fmt.Errorf("write the front as JSON: %w", err)
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case formatCSV:
		return writeParetoCSV(w, f, on)
	}
	var b strings.Builder
	fmt.Fprintln(&b, frontLine(f))
	fmt.Fprintln(&b, hypervolumeLine(f))
	if len(on) == 0 {
		_, err := io.WriteString(w, b.String())
		return err
	}
	keys := frontConfigKeys(on)
	head := []string{"Trial"}
	for _, o := range f.Objectives {
		head = append(head, o.String())
	}
	if len(f.Constraints) > 0 {
		head = append(head, "feasible")
	}
	head = append(head, keys...)
	var tb strings.Builder
	tw := tabwriter.NewWriter(&tb, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, p := range on {
		cells := []string{p.ID}
		for _, v := range p.Values {
			cells = append(cells, progress.Display(v))
		}
		if len(f.Constraints) > 0 {
			cells = append(cells, feasibleText(p))
		}
		for _, k := range keys {
			cells = append(cells, configText(p.Config, k))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	_ = tw.Flush() // writes to a strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(tb.String(), "\n"), "\n") {
		fmt.Fprintln(&b, strings.TrimRight(l, " "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// feasibleText is "yes", or "no: " and the constraints the trial breaks.
func feasibleText(p report.FrontPoint) string {
	if p.Feasible {
		return "yes"
	}
	return "no: breaks " + strings.Join(p.Broken, ", ")
}

// configText renders a configuration leaf, "" when missing.
func configText(cfg map[string]any, k string) string {
	v, ok := cfg[k]
	if !ok {
		return ""
	}
	return progress.Display(v)
}

// frontConfigKeys returns the configuration keys whose values differ
// between the front's trials, sorted; with one trial, all of its keys.
func frontConfigKeys(on []report.FrontPoint) []string {
	rows := make([]*row, len(on))
	for i, p := range on {
		rows[i] = &row{config: map[string]string{}}
		for k, v := range p.Config {
			rows[i].config[k] = progress.Display(v)
		}
	}
	return varyingKeys(rows)
}

// writeParetoCSV writes a row per trial on the front: trial_id, each
// objective's value (in a column named as hone results --csv names that
// field), feasible (with constraints), then the whole configuration
// (config/...). Numbers are written as result.json writes them.
func writeParetoCSV(w io.Writer, f *report.Front, on []report.FrontPoint) error {
	keys := map[string]bool{}
	for _, p := range on {
		for k := range p.Config {
			keys[k] = true
		}
	}
	ck := make([]string, 0, len(keys))
	for k := range keys {
		ck = append(ck, k)
	}
	slices.Sort(ck)
	head := []string{"trial_id"}
	for _, o := range f.Objectives {
		head = append(head, results.ResultColumn(o.Metric))
	}
	if len(f.Constraints) > 0 {
		head = append(head, "feasible")
	}
	for _, k := range ck {
		head = append(head, "config/"+k)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(head); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	for _, p := range on {
		rec := []string{p.ID}
		for _, v := range p.Values {
			rec = append(rec, results.FormatNumber(v))
		}
		if len(f.Constraints) > 0 {
			rec = append(rec, strconv.FormatBool(p.Feasible))
		}
		for _, k := range ck {
			rec = append(rec, csvCell(p.Config, k))
		}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("write csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// csvCell renders a configuration leaf for CSV: numbers as result.json
// writes them, strings as they are, anything else as JSON.
func csvCell(cfg map[string]any, k string) string {
	v, ok := cfg[k]
	if !ok {
		return ""
	}
	switch x := v.(type) {
	case float64:
		return results.FormatNumber(x)
	case string:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// addObjectives gives rows a column per objective (each trial's last
// value) and one saying whether it is on the front, and returns the
// columns' headers.
func addObjectives(rows []*row, f *report.Front) []string {
	rank := map[string]report.FrontPoint{}
	for _, p := range f.Points {
		rank[p.ID] = p
	}
	head := make([]string, 0, len(f.Objectives)+1)
	for _, o := range f.Objectives {
		head = append(head, o.String())
	}
	head = append(head, "front")
	for _, r := range rows {
		last, _ := r.trial.Last() // read by trialRows already
		for _, o := range f.Objectives {
			cell := ""
			if v, ok := last.Value(o.Metric); ok {
				cell = progress.Display(v)
			}
			r.extra = append(r.extra, cell)
		}
		p, ok := rank[r.trial.ID]
		switch {
		case !ok:
			r.extra = append(r.extra, "")
			r.rank = -1
		case p.OnFront && !p.Feasible:
			r.extra = append(r.extra, "yes (infeasible)")
		case p.OnFront:
			r.extra = append(r.extra, "yes")
		case !p.Feasible:
			r.extra = append(r.extra, "infeasible")
		default:
			r.extra = append(r.extra, "")
		}
		if ok {
			r.rank = p.Rank
		}
	}
	return head
}

// sortByFront orders rows as addObjectives ranked them: the front first,
// then by rank, then the trials with no rank, each group by the primary
// objective, then by creation.
func sortByFront(rows []*row, primary hone.Objective) {
	slices.SortStableFunc(rows, func(a, b *row) int {
		ra, rb := a.rank, b.rank
		if ra < 0 {
			ra = math.MaxInt
		}
		if rb < 0 {
			rb = math.MaxInt
		}
		if ra != rb {
			if ra < rb {
				return -1
			}
			return 1
		}
		return primary.Compare(a.score, a.hasScore, b.score, b.hasScore)
	})
}

// jsonNumber is f for JSON: the number, or for NaN and infinities the
// string result.json writes.
func jsonNumber(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return results.FormatNumber(f)
	}
	return f
}

// trialJSON is one trial in hone results --format json.
type trialJSON struct {
	ID     string         `json:"id"`
	Status string         `json:"status"`
	Config map[string]any `json:"config"`
	// Score is its score under the metric and scope, nil without one.
	Score any `json:"score"`
	// Values are, with several objectives, each objective's value in its
	// last result (nil where it has none); Front and Infeasible place it
	// in the front.
	Values     []any    `json:"values,omitempty"`
	Front      bool     `json:"front,omitempty"`
	Infeasible bool     `json:"infeasible,omitempty"`
	Iteration  *float64 `json:"iter"`
	TimeTotal  any      `json:"time_total_s"`
	Error      string   `json:"error,omitempty"`
}

// writeResultsJSON writes rows, in their order, as JSON: the experiment,
// its objective (or objectives, with front) and its trials.
func writeResultsJSON(w io.Writer, e *results.Experiment, rows []*row, obj hone.Objective, scope string, front *report.Front) error {
	out := struct {
		Name       string          `json:"name"`
		Dir        string          `json:"dir"`
		Metric     string          `json:"metric,omitempty"`
		Mode       hone.Mode       `json:"mode,omitempty"`
		Scope      string          `json:"scope,omitempty"`
		Objectives hone.Objectives `json:"objectives,omitempty"`
		// Front is the front's counts and hypervolume, without its
		// points.
		Front  *report.Front `json:"front,omitempty"`
		Trials []trialJSON   `json:"trials"`
	}{Name: e.Name, Dir: e.Dir, Trials: []trialJSON{}}
	if front != nil {
		summary := *front
		summary.Points = nil
		out.Objectives, out.Front = front.Objectives, &summary
	} else if obj.Metric != "" {
		out.Metric, out.Mode, out.Scope = obj.Metric, obj.Mode, scope
	}
	place := map[string]report.FrontPoint{}
	if front != nil {
		for _, p := range front.Points {
			place[p.ID] = p
		}
	}
	for _, r := range rows {
		t := r.trial
		j := trialJSON{ID: t.ID, Status: r.status, Config: map[string]any{}}
		j.Error, _, _ = strings.Cut(t.Error, "\n")
		hone.Flatten("", map[string]any(t.Config), func(k string, leaf any) { j.Config[k] = leaf })
		if r.hasScore && front == nil {
			j.Score = jsonNumber(r.score)
		}
		last, err := t.Last()
		if err != nil {
			return err
		}
		if v, ok := last.Value(hone.FieldTrainingIteration); ok {
			j.Iteration = &v
		}
		if v, ok := last.Value(hone.FieldTimeTotal); ok {
			j.TimeTotal = jsonNumber(v)
		}
		if front != nil {
			for _, o := range front.Objectives {
				var cell any
				if v, ok := last.Value(o.Metric); ok {
					cell = jsonNumber(v)
				}
				j.Values = append(j.Values, cell)
			}
			if p, ok := place[t.ID]; ok {
				j.Front, j.Infeasible = p.OnFront, !p.Feasible
			}
		}
		out.Trials = append(out.Trials, j)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return fmt.Errorf("write the results as JSON: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// writeBestJSON writes the best trial as JSON: its id, status as shown,
// score with its metric, mode and scope, directory, latest kept
// checkpoint and configuration.
func writeBestJSON(w io.Writer, t *results.Trial, status string, obj hone.Objective, scope string, v float64) error {
	out := struct {
		ID         string      `json:"id"`
		Status     string      `json:"status"`
		Metric     string      `json:"metric"`
		Mode       hone.Mode   `json:"mode"`
		Scope      string      `json:"scope"`
		Score      any         `json:"score"`
		Dir        string      `json:"dir"`
		Checkpoint string      `json:"checkpoint,omitempty"`
		Config     hone.Config `json:"config"`
	}{ID: t.ID, Status: status, Metric: obj.Metric, Mode: obj.Mode, Scope: scope, Score: jsonNumber(v), Dir: t.Dir, Config: t.Config}
	if n := len(t.Checkpoints); n > 0 {
		out.Checkpoint = t.Checkpoints[n-1]
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return fmt.Errorf("write the best trial as JSON: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

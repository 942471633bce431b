// Package report computes what an experiment's dashboard and plots show,
// from an experiment as package results reads it: a summary, the trial
// table, learning curves, parallel coordinates, the rungs of ASHA and
// HyperBand and the exploits of PBT. Every value is plain data that
// encodes to JSON; the functions only read, and are safe to call on an
// experiment nothing changes meanwhile.
package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/scheduler/asha"
	"github.com/hone-tune/hone/scheduler/pbt"
	"github.com/hone-tune/hone/search/dehb"
	"github.com/hone-tune/hone/spec"
)

// Status names beyond the trial statuses: how a report shows a trial.
const (
	// StatusStopped is a trial recorded RUNNING in an experiment that no
	// hone process runs: it was stopped, or hone crashed, while it ran.
	StatusStopped = "STOPPED"
	// StatusNotStarted is a trial that never ran.
	StatusNotStarted = "not started"
)

// SpecFile is the spec hone run saves in the experiment directory.
const SpecFile = "spec.yaml"

// Info is what a report needs to know about an experiment beyond its
// journal: the objective and the budget, from its spec when it has one.
type Info struct {
	// Objective is the experiment's objective: metric and mode; with
	// several objectives, the primary one.
	hone.Objective
	// Objectives are the experiment's objectives when it has several
	// (its spec's objectives), nil when it has one: the front then takes
	// the place of the best trial (ParetoFront).
	Objectives hone.Objectives `json:"objectives,omitempty"`
	// Constraints are the experiment's constraints.
	Constraints hone.Constraints `json:"constraints,omitempty"`
	// Reference is the hypervolume's reference point, one value per
	// objective in the metrics' units; nil: derived from the front.
	Reference []float64 `json:"reference,omitempty"`
	// Scope says which results of a trial count for its score
	// (results.ScopeLast and the others).
	Scope string `json:"scope"`
	// TimeAttr is the result field the scheduler measures progress by;
	// training_iteration when it has none.
	TimeAttr  string `json:"time_attr"`
	Scheduler string `json:"scheduler,omitempty"`
	Searcher  string `json:"searcher,omitempty"`
	// NumSamples is how many trials the searcher makes (-1: until a
	// stop condition ends the experiment; 0: not known).
	NumSamples int `json:"num_samples,omitempty"`
	// TimeBudget is the experiment's time budget in seconds, 0 for none.
	TimeBudget float64 `json:"time_budget_s,omitempty"`
	// MaxIterations is stop.training_iteration, 0 for none.
	MaxIterations int `json:"max_iterations,omitempty"`
	// Running says whether a hone process runs the experiment.
	Running bool `json:"running"`
	// Rungs are the scheduler's milestones, when it has any (ASHA,
	// HyperBand, HyperBand for BOHB; DEHB's budget levels).
	Rungs *RungPlan `json:"rungs,omitempty"`
	// Brackets are which trials ran in which bracket, from a Replay of
	// the experiment; nil when not known. The rungs are then shown per
	// bracket.
	Brackets *Assignment `json:"-"`
}

// Several reports whether the experiment has several objectives, or a
// constraint: the Pareto front then takes the place of the best trial.
func (info Info) Several() bool { return len(info.Objectives) > 1 || len(info.Constraints) > 0 }

// FrontObjectives returns the objectives a front ranks: Objectives, or
// the one objective when there are not several.
func (info Info) FrontObjectives() hone.Objectives {
	if len(info.Objectives) > 0 {
		return info.Objectives
	}
	return info.Objective.AsList()
}

// RungPlan is the rung structure a scheduler was built with.
type RungPlan struct {
	TimeAttr string `json:"time_attr"`
	// Milestones are every rung of every bracket, ascending.
	Milestones []float64 `json:"milestones"`
	// Brackets are each bracket's milestones, when the scheduler says
	// (ASHA); HyperBand's depend on the trials it took.
	Brackets [][]float64 `json:"brackets,omitempty"`
	// MaxT is the time at which trials stop, the last milestone.
	MaxT float64 `json:"max_t"`
}

// ReadInfo reads the objective and the budget from the spec saved in the
// experiment directory dir, and the rungs of its scheduler. Without a
// spec (an experiment run from Go), Info has the defaults: no metric,
// training_iteration. A spec that cannot be read is an error.
func ReadInfo(dir string) (Info, error) {
	info := Info{Scope: results.ScopeLast, TimeAttr: hone.FieldTrainingIteration}
	path := filepath.Join(dir, SpecFile)
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return info, nil
	}
	if err != nil {
		return info, fmt.Errorf("read the experiment's spec: %w", err)
	}
	s, err := spec.Decode(data, path, dir)
	if err != nil {
		return info, fmt.Errorf("read the experiment's spec: %w", err)
	}
	objs := s.ResolvedObjectives()
	info.Objective = objs.Primary()
	if len(objs) > 1 {
		info.Objectives = objs
	}
	info.Constraints = s.Constraints
	if info.Metric != "" && !info.Mode.Valid() { // a spec decoded without its checks
		info.Mode = hone.Min
	}
	info.Scheduler, info.Searcher = s.Scheduler.Name, s.Searcher.Name
	info.NumSamples = s.NumSamples
	info.TimeBudget = s.Stop.TimeBudget.Seconds()
	info.MaxIterations = s.Stop.TrainingIteration
	sc, err := s.BuildScheduler()
	if err != nil {
		// The dashboard still shows the rest; the rungs need the
		// scheduler.
		return info, nil
	}
	if r, ok := sc.(interface{ Rungs() (string, []float64) }); ok {
		attr, ms := r.Rungs()
		plan := &RungPlan{TimeAttr: attr, Milestones: ms}
		if len(ms) > 0 {
			plan.MaxT = ms[len(ms)-1]
		}
		if a, ok := sc.(*asha.Scheduler); ok {
			for b := range a.Config().Brackets {
				plan.Brackets = append(plan.Brackets, a.Milestones(b))
			}
		}
		info.Rungs, info.TimeAttr = plan, attr
	}
	if d, ok := sc.(*dehb.Scheduler); ok {
		ms := d.Budgets()
		attr := d.Config().TimeAttr
		info.Rungs = &RungPlan{TimeAttr: attr, Milestones: ms, MaxT: ms[len(ms)-1]}
		info.TimeAttr = attr
	}
	if p, ok := sc.(*pbt.Scheduler); ok {
		info.TimeAttr = p.Config().TimeAttr
	}
	return info, nil
}

// DisplayStatus is how a report shows a trial's status: STOPPED for a
// trial recorded RUNNING when no hone process runs the experiment, "not
// started" for one that never ran.
func DisplayStatus(t *results.Trial, running bool) string {
	switch {
	case t.NotStarted():
		return StatusNotStarted
	case t.Status == hone.StatusRunning && !running:
		return StatusStopped
	}
	return string(t.Status)
}

// Summary is the experiment at a glance.
type Summary struct {
	// Name and Dir are the experiment's name and directory.
	Name string `json:"name"`
	Dir  string `json:"dir"`
	// Info is what the summary was computed with.
	Info Info `json:"info"`
	// Trials counts the trials, whether or not they started.
	Trials int `json:"trials"`
	// Counts are the trials by status as shown (DisplayStatus).
	Counts map[string]int `json:"counts"`
	// Results counts the results the journal records.
	Results int `json:"results"`
	// Best is the best trial by the metric, nil without a metric or a
	// result that has it, and nil with several objectives.
	Best *Best `json:"best,omitempty"`
	// Front is, with several objectives (Info.Objectives), the Pareto
	// front's size and hypervolume in place of the best trial, without
	// its points.
	Front *Front `json:"front,omitempty"`
	// Began and LastResult are unix milliseconds, 0 when not known.
	Began      int64 `json:"began_ms"`
	LastResult int64 `json:"last_result_ms"`
	// Elapsed is the seconds from Began to now while the experiment runs,
	// else to its last result.
	Elapsed float64 `json:"elapsed_s"`
}

// Best is the best trial and its score.
type Best struct {
	ID string `json:"id"`
	// Value is its score under Info's metric, mode and scope.
	Value  float64        `json:"value"`
	Config map[string]any `json:"config"`
}

// Summarize returns the summary of e. now is the time elapsed is measured
// to while the experiment runs.
func Summarize(e *results.Experiment, info Info, now time.Time) (Summary, error) {
	s := Summary{Name: e.Name, Dir: e.Dir, Info: info, Trials: len(e.Trials), Counts: map[string]int{},
		Began: e.Began / 1e6, LastResult: e.LastResult / 1e6}
	for _, t := range e.Trials {
		s.Counts[DisplayStatus(t, info.Running)]++
		s.Results += t.Reported
	}
	if e.Began > 0 {
		end := e.LastResult
		if info.Running {
			end = now.UnixNano()
		}
		s.Elapsed = max(0, float64(end-e.Began)/1e9)
	}
	if info.Several() {
		f, err := ParetoFront(e, info.FrontObjectives(), info.Constraints, info.Reference)
		if err != nil {
			return s, err
		}
		f.Points = nil
		s.Front = f
		return s, nil
	}
	if info.Metric != "" {
		best, v, err := bestTrial(e, info)
		if err != nil {
			return s, err
		}
		if best != nil {
			s.Best = &Best{ID: best.ID, Value: v, Config: best.Config}
		}
	}
	return s, nil
}

// bestTrial is results.Experiment.Best, with no trial (rather than an
// error) when no result has the metric yet.
func bestTrial(e *results.Experiment, info Info) (*results.Trial, float64, error) {
	var best *results.Trial
	var bestV float64
	for _, t := range e.Trials {
		v, ok, err := t.Score(info.Objective, info.Scope)
		if err != nil {
			return nil, 0, err
		}
		if ok && (best == nil || info.Mode.Better(v, bestV)) {
			best, bestV = t, v
		}
	}
	return best, bestV, nil
}

// Row is one trial in the table.
type Row struct {
	ID string `json:"id"`
	// Index is the trial's place in the order of creation.
	Index int `json:"index"`
	// Status is as DisplayStatus shows it.
	Status string `json:"status"`
	// Config holds the configuration's leaves by key path ("model/width").
	Config map[string]any `json:"config"`
	// Value is the trial's score, nil when no result has the metric.
	Value *float64 `json:"value"`
	// Iteration and TimeTotal are the last result's training_iteration
	// and time_total_s, nil without them.
	Iteration *float64 `json:"iter"`
	TimeTotal *float64 `json:"time_total_s"`
	// Results counts the trial's results; Failures its failures so far.
	Results  int `json:"results"`
	Failures int `json:"failures,omitempty"`
	// Error is the first line of the trial's error.
	Error string `json:"error,omitempty"`
	// OnFront says the trial is on the Pareto front, and Infeasible that
	// it breaks a constraint, with several objectives or a constraint
	// (ParetoFront; both false for a trial not finished).
	OnFront    bool `json:"front,omitempty"`
	Infeasible bool `json:"infeasible,omitempty"`
}

// Query selects, orders and pages the table.
type Query struct {
	// Sort is id, index, status, value, iter, time_total_s, results or
	// config/<key>; "" sorts by index. value sorts best first. Rows
	// without a value for the key come last either way; ties keep the
	// order of creation.
	Sort string
	// Desc reverses the order.
	Desc bool
	// Status keeps the trials whose shown status is one of these; empty
	// keeps all.
	Status []string
	// Offset and Limit page the matching rows; Limit 0 means 100.
	Offset, Limit int
}

// Table is one page of the trial table.
type Table struct {
	Total   int `json:"total"`   // trials in the experiment
	Matched int `json:"matched"` // trials the status filter keeps
	Offset  int `json:"offset"`  // of the first row of the page
	// ConfigKeys are every configuration key of any trial, sorted.
	ConfigKeys []string `json:"config_keys"`
	// Rows are the page's rows.
	Rows []Row `json:"rows"`
}

// MaxLimit bounds a table page.
const MaxLimit = 1000

// TrialTable returns the page of the table q asks for. An unknown sort key
// is an error.
func TrialTable(e *results.Experiment, info Info, q Query) (Table, error) {
	if q.Limit <= 0 {
		q.Limit = 100
	}
	q.Limit = min(q.Limit, MaxLimit)
	q.Offset = max(q.Offset, 0)
	keep := map[string]bool{}
	for _, s := range q.Status {
		keep[s] = true
	}
	keys := map[string]bool{}
	rows := make([]Row, 0, len(e.Trials))
	var front map[string]FrontPoint
	if info.Several() {
		f, err := ParetoFront(e, info.FrontObjectives(), info.Constraints, nil)
		if err != nil {
			return Table{}, err
		}
		front = make(map[string]FrontPoint, len(f.Points))
		for _, p := range f.Points {
			front[p.ID] = p
		}
	}
	for _, t := range e.Trials {
		r, err := trialRow(t, info)
		if err != nil {
			return Table{}, err
		}
		if p, ok := front[t.ID]; ok {
			r.OnFront, r.Infeasible = p.OnFront, !p.Feasible
		}
		for k := range r.Config {
			keys[k] = true
		}
		if len(keep) > 0 && !keep[r.Status] {
			continue
		}
		rows = append(rows, r)
	}
	order, missing, err := rowOrder(q.Sort, info.Mode)
	if err != nil {
		return Table{}, err
	}
	slices.SortStableFunc(rows, func(a, b Row) int {
		ma, mb := missing(a), missing(b)
		switch {
		case ma && !mb:
			return 1
		case mb && !ma:
			return -1
		}
		c := 0
		if !ma {
			c = order(a, b)
		}
		if q.Desc {
			c = -c
		}
		if c == 0 {
			c = cmp.Compare(a.Index, b.Index)
		}
		return c
	})
	tb := Table{Total: len(e.Trials), Matched: len(rows), Offset: q.Offset, ConfigKeys: sortedKeys(keys)}
	if q.Offset < len(rows) {
		tb.Rows = rows[q.Offset:min(len(rows), q.Offset+q.Limit)]
	}
	if tb.Rows == nil {
		tb.Rows = []Row{}
	}
	return tb, nil
}

func trialRow(t *results.Trial, info Info) (Row, error) {
	r := Row{ID: t.ID, Index: t.Index, Status: DisplayStatus(t, info.Running), Config: map[string]any{},
		Results: t.Reported, Failures: t.Failures}
	r.Error, _, _ = strings.Cut(t.Error, "\n")
	hone.Flatten("", map[string]any(t.Config), func(k string, leaf any) { r.Config[k] = leaf })
	last, err := t.Last()
	if err != nil {
		return r, err
	}
	if rows, _ := t.Results(); len(rows) > r.Results {
		r.Results = len(rows)
	}
	if v, ok := last.Value(hone.FieldTrainingIteration); ok {
		r.Iteration = &v
	}
	if v, ok := last.Value(hone.FieldTimeTotal); ok {
		r.TimeTotal = finite(v)
	}
	if info.Metric != "" {
		v, ok, err := t.Score(info.Objective, info.Scope)
		if err != nil {
			return r, err
		}
		if ok {
			r.Value = finite(v)
		}
	}
	return r, nil
}

// finite returns a pointer to v, or nil for NaN and infinities (JSON has
// no such numbers).
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// rowOrder returns the comparison for a sort key, and which rows have no
// value for it: those sort after the others, in either direction. value
// sorts best first.
func rowOrder(key string, mode hone.Mode) (order func(a, b Row) int, missing func(Row) bool, err error) {
	none := func(Row) bool { return false }
	num := func(get func(Row) *float64, better bool) (func(a, b Row) int, func(Row) bool, error) {
		return func(a, b Row) int {
				c := cmp.Compare(*get(a), *get(b))
				if better && mode == hone.Max {
					c = -c
				}
				return c
			}, func(r Row) bool {
				return get(r) == nil
			}, nil
	}
	switch key {
	case "", "index":
		return func(a, b Row) int { return cmp.Compare(a.Index, b.Index) }, none, nil
	case "id":
		return func(a, b Row) int { return cmp.Compare(a.ID, b.ID) }, none, nil
	case "status":
		return func(a, b Row) int { return cmp.Compare(a.Status, b.Status) }, none, nil
	case "value":
		return num(func(r Row) *float64 { return r.Value }, true)
	case "iter":
		return num(func(r Row) *float64 { return r.Iteration }, false)
	case "time_total_s":
		return num(func(r Row) *float64 { return r.TimeTotal }, false)
	case "results":
		return func(a, b Row) int { return cmp.Compare(a.Results, b.Results) }, none, nil
	}
	if k, ok := strings.CutPrefix(key, "config/"); ok && k != "" {
		return func(a, b Row) int { return compareLeaves(a.Config[k], b.Config[k]) },
			func(r Row) bool { return r.Config[k] == nil }, nil
	}
	return nil, nil, fmt.Errorf("sort by %q: allowed keys are id, index, status, value, iter, time_total_s, results and config/<key>", key)
}

// compareLeaves orders configuration values: numbers by value before
// anything else, the rest by their text.
func compareLeaves(a, b any) int {
	x, xok := hone.Number(a)
	y, yok := hone.Number(b)
	switch {
	case xok && yok:
		return cmp.Compare(x, y)
	case xok:
		return -1
	case yok:
		return 1
	}
	return cmp.Compare(Text(a), Text(b))
}

// Text renders a configuration value for display and comparison: strings
// as they are, numbers in their shortest form, anything else as JSON.
func Text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

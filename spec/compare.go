package spec

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/space"
)

// Compare compares the spec an experiment ran with (old) to the spec it is
// to be resumed with (new) and returns their differences, each as
// `key: old -> new` (e.g. `mode: "min" -> "max"`), sorted by key, in two
// lists:
//
// refused holds the differences that change what the experiment decides,
// so that the resumed run would not continue the run it resumes: metric,
// mode, seed, num_samples, search_space (per parameter), points_to_evaluate,
// the searcher (name, max_concurrent and every parameter), the scheduler
// (name and every parameter), what searcher: auto and scheduler: auto
// resolve to (which may depend on max_concurrent_trials), the stop
// conditions (training_iteration, the
// result thresholds, plateau, time_budget_s), checkpoint scoring and
// timing (score_attribute, score_order, frequency, at_end), and trainable,
// which names the trial directories.
//
// allowed holds the differences a resume may bring: name and storage
// (where the experiment is), command, env, working_dir, resources, gpus,
// custom_resources, max_concurrent_trials, max_pending_trials,
// checkpoint.num_to_keep, failure.max_failures, failure.fail_fast,
// trial_timeout, report_timeout, stop_grace, and the executor and its
// parameters (where trials run).
//
// Values are compared as decoded, with defaults filled in: reformatting
// the YAML, writing a default out, or giving 100 as 100.0 is no
// difference. A plugin's parameters are compared only when both specs name
// the same plugin; a scheduler's metric and mode left out are the
// experiment's. Both specs must be non-nil; they need not validate (see
// Decode).
func Compare(old, new *Spec) (refused, allowed []string) {
	a, b := old.settings(), new.settings()
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		// Another plugin has other parameters: its name is the difference.
		if (old.Searcher.Name != new.Searcher.Name && isParam(k, "searcher", searcherKeys)) ||
			(old.Scheduler.Name != new.Scheduler.Name && isParam(k, "scheduler", schedulerKeys)) {
			continue
		}
		x, inA := a[k]
		y, inB := b[k]
		if inA && inB && x.val == y.val {
			continue
		}
		if !inA {
			x = setting{val: "none", refused: y.refused}
		}
		if !inB {
			y = setting{val: "none", refused: x.refused}
		}
		line := k + ": " + x.val + " -> " + y.val
		if x.refused || y.refused {
			refused = append(refused, line)
		} else {
			allowed = append(allowed, line)
		}
	}
	return refused, allowed
}

// isParam reports whether key path k is a plugin parameter of section
// kind (not one of the section's own keys).
func isParam(k, kind string, own []string) bool {
	rest, ok := strings.CutPrefix(k, kind+".")
	return ok && !slices.Contains(own, rest)
}

// setting is one compared value of a spec, rendered.
type setting struct {
	val     string
	refused bool // a change is refused on resume
}

// settings flattens s into its compared values by key path. Values that
// can be absent (a threshold, an environment variable, a search space
// parameter) are left out when absent.
func (s *Spec) settings() map[string]setting {
	out := map[string]setting{}
	ref := func(k, v string) { out[k] = setting{val: v, refused: true} }
	ok := func(k, v string) { out[k] = setting{val: v} }

	// What the experiment decides.
	trainable := s.Trainable
	if trainable == "" {
		trainable = "trainable"
	}
	ref("trainable", strconv.Quote(trainable))
	obj := hone.Objective{Metric: s.Metric, Mode: s.Mode}.WithDefaults()
	ref("metric", strconv.Quote(obj.Metric))
	ref("mode", strconv.Quote(string(obj.Mode)))
	if len(s.Objectives) > 0 {
		ref("objectives", strconv.Quote(objectivesString(s.Objectives)))
	}
	for i, k := range s.Constraints {
		ref(index("constraints", i), strconv.Quote(k.String()))
	}
	ref("seed", strconv.FormatUint(s.Seed, 10))
	ref("num_samples", strconv.Itoa(s.NumSamples))
	flattenSpace(map[string]any(s.SearchSpace), "search_space", ref)
	if len(s.PointsToEvaluate) > 0 {
		pts := make([]any, len(s.PointsToEvaluate))
		for i, p := range s.PointsToEvaluate {
			pts[i] = p
		}
		ref("points_to_evaluate", render(pts))
	}
	ref("searcher.name", strconv.Quote(s.Searcher.Name))
	ref("searcher.max_concurrent", strconv.Itoa(s.Searcher.MaxConcurrent))
	for k, v := range s.pluginParams("searcher", s.Searcher) {
		ref("searcher."+k, render(v))
	}
	ref("scheduler.name", strconv.Quote(s.Scheduler.Name))
	for k, v := range s.pluginParams("scheduler", s.Scheduler) {
		ref("scheduler."+k, render(v))
	}
	// What auto resolves to depends on settings a resume may change
	// (max_concurrent_trials): a resume must resolve it the same way.
	if s.Searcher.Name == "auto" || s.Scheduler.Name == "auto" {
		ch := s.auto()
		if s.Searcher.Name == "auto" {
			ref("searcher.auto", strconv.Quote(ch.Searcher))
		}
		if s.Scheduler.Name == "auto" {
			ref("scheduler.auto", strconv.Quote(ch.schedulerText()))
		}
	}
	st := s.Stop
	if st.TrainingIteration > 0 {
		ref("stop."+hone.FieldTrainingIteration, strconv.Itoa(st.TrainingIteration))
	}
	for _, th := range st.Thresholds {
		op := ">="
		if th.Mode == hone.Min {
			op = "<="
		}
		ref("stop."+th.Field, op+" "+formatNum(th.Value))
	}
	if pl := st.Plateau; pl != nil {
		metric := pl.Metric
		if metric == "" {
			metric = s.Metric
		}
		ref("stop."+stopPlateau, fmt.Sprintf("{metric: %q, std: %s, num_results: %d, grace_period: %d}",
			metric, formatNum(pl.Std), pl.NumResults, pl.GracePeriod))
	}
	if st.TimeBudget > 0 {
		ref("stop."+stopTimeBudget, formatNum(st.TimeBudget.Seconds()))
	}
	cp := s.Checkpoint
	ref("checkpoint.score_attribute", strconv.Quote(cp.ScoreAttribute))
	order := cp.ScoreOrder
	if order == "" {
		order = hone.Max
	}
	ref("checkpoint.score_order", strconv.Quote(string(order)))
	ref("checkpoint.frequency", strconv.Itoa(cp.Frequency))
	ref("checkpoint.at_end", strconv.FormatBool(cp.AtEnd))

	// How it runs.
	ok("name", strconv.Quote(s.Name))
	ok("storage", strconv.Quote(s.Storage))
	ok("command", render(anySlice(s.Command)))
	for k, v := range s.Env {
		ok("env."+k, strconv.Quote(v))
	}
	ok("working_dir", strconv.Quote(s.WorkingDir))
	r := s.Resources
	ok("resources.cpu", formatNum(r.CPU))
	ok("resources.gpu", formatNum(r.GPU))
	ok("resources.memory", sizeText(r.Memory))
	for k, v := range r.Custom {
		ok("resources.custom."+k, formatNum(v))
	}
	ok("gpus", strconv.Itoa(s.GPUs))
	for k, v := range s.CustomResources {
		ok("custom_resources."+k, formatNum(v))
	}
	ok("max_concurrent_trials", strconv.Itoa(s.MaxConcurrentTrials))
	if s.MaxPendingTrials > 0 {
		ok("max_pending_trials", strconv.Itoa(s.MaxPendingTrials))
	} else {
		ok("max_pending_trials", "hone's choice")
	}
	ok("checkpoint.num_to_keep", strconv.Itoa(cp.NumToKeep))
	ok("failure.max_failures", strconv.Itoa(s.Failure.MaxFailures))
	ok("failure.fail_fast", strconv.FormatBool(s.Failure.FailFast))
	ok("trial_timeout", limitText(s.TrialTimeout))
	ok("report_timeout", limitText(s.ReportTimeout))
	ok("stop_grace", s.StopGrace.String())
	ok("executor.name", strconv.Quote(s.Executor.Name))
	for k, v := range s.pluginParams("executor", s.Executor) {
		ok("executor."+k, render(v))
	}
	return out
}

// pluginParams returns the parameters of a searcher or scheduler as they
// resolve, defaults included, by running its Read on a recording Params;
// a metric or mode left empty is the experiment's. For a plugin not in its
// table, the parameters are the section's keys as written.
func (s *Spec) pluginParams(kind string, pl Plugin) map[string]any {
	p := recordingParams(kind, pl.Node)
	if !readPlugin(kind, pl.Name, p) {
		for _, k := range p.order {
			p.lookup(k)
		}
	}
	out := p.resolved
	// A plugin's metric and mode default to the experiment's: written out
	// the same or left out, they are the experiment's (whose own change is
	// reported at the top level).
	if v, ok := out["metric"]; ok && (v == nil || v == "" || v == s.Metric) {
		out["metric"] = inherited{}
	}
	if v, ok := out["mode"]; ok && (v == nil || v == "" || v == string(s.Mode) || s.Mode == "" && v == string(hone.Min)) {
		out["mode"] = inherited{}
	}
	return out
}

// inherited is a plugin parameter that takes the experiment's value.
type inherited struct{}

// flattenSpace records each parameter of a search space under its key
// path: domains and constants as written; non-empty mappings are
// sub-spaces.
func flattenSpace(m map[string]any, path string, set func(k, v string)) {
	for k, v := range m {
		p := join(path, k)
		switch x := v.(type) {
		case space.Space:
			if len(x) > 0 {
				flattenSpace(map[string]any(x), p, set)
				continue
			}
		case map[string]any:
			if len(x) > 0 {
				flattenSpace(x, p, set)
				continue
			}
		case hone.Config:
			if len(x) > 0 {
				flattenSpace(map[string]any(x), p, set)
				continue
			}
		}
		set(p, render(v))
	}
}

// render writes a decoded value in YAML flow style with sorted keys and
// numbers in their shortest form, so equal values render equally.
func render(v any) string {
	var b strings.Builder
	writeRendered(&b, v, 0)
	return b.String()
}

func writeRendered(b *strings.Builder, v any, depth int) {
	if depth > maxDepth {
		b.WriteString("...")
		return
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		b.WriteString(strconv.Quote(x))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int:
		b.WriteString(formatNum(float64(x)))
	case int64:
		b.WriteString(formatNum(float64(x)))
	case uint64:
		b.WriteString(formatNum(float64(x)))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		} else {
			b.WriteString(formatNum(x))
		}
	case space.Domain:
		b.WriteString(x.String())
	case inherited:
		b.WriteString("the experiment's")
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRendered(b, e, depth+1)
		}
		b.WriteByte(']')
	case space.Space:
		writeMap(b, map[string]any(x), depth)
	case hone.Config:
		writeMap(b, map[string]any(x), depth)
	case map[string]any:
		writeMap(b, x, depth)
	default:
		fmt.Fprintf(b, "%v", x)
	}
}

func writeMap(b *strings.Builder, m map[string]any, depth int) {
	b.WriteByte('{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k)
		b.WriteString(": ")
		writeRendered(b, m[k], depth+1)
	}
	b.WriteByte('}')
}

func anySlice(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// sizeText renders a byte count exactly: in the largest binary unit that
// divides it (2GiB), else in bytes.
func sizeText(b int64) string {
	if b == 0 {
		return "0"
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB"}
	unit, n := "", b
	for _, u := range units {
		if n%1024 != 0 {
			break
		}
		n /= 1024
		unit = u
	}
	if unit == "" {
		return strconv.FormatInt(b, 10) + " bytes"
	}
	return strconv.FormatInt(n, 10) + unit
}

// limitText renders a time limit, 0 being none.
func limitText(d time.Duration) string {
	if d <= 0 {
		return "none"
	}
	return d.String()
}

// objectivesString lists objectives as "acc (max), latency_ms (min)".
func objectivesString(objs hone.Objectives) string {
	parts := make([]string, len(objs))
	for i, o := range objs {
		parts[i] = o.String()
	}
	return strings.Join(parts, ", ")
}

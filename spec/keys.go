package spec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hone-tune/hone"
)

// The spec's top-level keys, in the order examples/reference.yaml
// documents them.
var topKeys = []string{
	"name", "storage", "trainable", "metric", "mode", "objectives", "constraints", "seed", "num_samples",
	"search_space", "points_to_evaluate", "searcher", "scheduler", "stop",
	"time_budget_s", "resources", "max_concurrent_trials", "max_pending_trials",
	"checkpoint", "failure", "trial_timeout", "report_timeout",
	"command", "env", "working_dir", "stop_grace", "gpus", "custom_resources",
	"executor",
}

// The keys of the fixed sections. The stop section's other keys are result
// fields; the searcher's and scheduler's other keys are their plugins'
// parameters (see pluginsTaking).
var (
	stopKeys       = []string{hone.FieldTrainingIteration, stopTimeBudget, stopPlateau}
	plateauKeys    = []string{"metric", "std", "num_results", "grace_period"}
	resourceKeys   = []string{"cpu", "gpu", "memory", "custom"}
	checkpointKeys = []string{"num_to_keep", "score_attribute", "score_order", "frequency", "at_end"}
	failureKeys    = []string{"max_failures", "fail_fast"}
	searcherKeys   = []string{"name", "max_concurrent"}
	schedulerKeys  = []string{"name"}
	executorKeys   = []string{"name"}
)

// sections returns the fixed sections by key path, with their keys, in the
// order a message lists them.
func sections() []struct {
	path string
	keys []string
} {
	return []struct {
		path string
		keys []string
	}{
		{"", topKeys}, {"searcher", searcherKeys}, {"scheduler", schedulerKeys}, {"executor", executorKeys},
		{"stop", stopKeys}, {"stop.plateau", plateauKeys}, {"resources", resourceKeys},
		{"checkpoint", checkpointKeys}, {"failure", failureKeys},
	}
}

// rayNames maps keys of Ray Tune's Tuner, TuneConfig, RunConfig,
// CheckpointConfig and FailureConfig (and tune.run's older names) to
// where the same setting is in a hone spec.
var rayNames = map[string]string{
	"config":                     "search_space",
	"param_space":                "search_space",
	"search_alg":                 "searcher",
	"resources_per_trial":        "resources",
	"storage_path":               "storage",
	"local_dir":                  "storage",
	"keep_checkpoints_num":       "checkpoint.num_to_keep",
	"checkpoint_score_attr":      "checkpoint.score_attribute",
	"checkpoint_score_attribute": "checkpoint.score_attribute",
	"checkpoint_score_order":     "checkpoint.score_order",
	"checkpoint_freq":            "checkpoint.frequency",
	"checkpoint_frequency":       "checkpoint.frequency",
	"checkpoint_at_end":          "checkpoint.at_end",
}

// pluginsTaking returns the names, sorted, of the plugins of a kind
// ("searcher" or "scheduler") that take parameter key.
func pluginsTaking(kind, key string) []string {
	var names []string
	ask := func(read func(p *Params)) bool {
		p := newParams(&collector{lines: map[string]pos{}}, kind, nil)
		read(p)
		return slices.Contains(p.asked, key)
	}
	if kind == "searcher" {
		for _, n := range sortedKeys(searchers) {
			if ask(func(p *Params) { searchers[n].Read(p) }) {
				names = append(names, n)
			}
		}
	} else {
		for _, n := range sortedKeys(schedulers) {
			if ask(func(p *Params) { schedulers[n].Read(p) }) {
				names = append(names, n)
			}
		}
	}
	return names
}

// elsewhere returns where else in a spec key is a key: the top level, a
// fixed section, or a plugin's parameters, each described for a "did you
// mean" clause. It leaves out section, where key was found unknown, and
// the plugins of that section's kind, which plugin messages name apart.
func elsewhere(key, section string) []string {
	var out []string
	for _, sec := range sections() {
		if sec.path != section && slices.Contains(sec.keys, key) {
			if sec.path == "" {
				out = append(out, key+" at the top level")
			} else {
				out = append(out, sec.path+"."+key)
			}
		}
		if kind := sec.path; (kind == "searcher" || kind == "scheduler") && kind != section {
			if names := pluginsTaking(kind, key); len(names) > 0 {
				out = append(out, fmt.Sprintf("%s.%s (a parameter of %s %s)", kind, key, kind, andList(names)))
			}
		}
	}
	return out
}

// pluginNames are the names a plugin's original library gives its
// parameters, by "<section> <plugin>", and what hone calls them.
var pluginNames = map[string]map[string]string{
	"scheduler dehb": {"min_budget": "grace_period", "min_fidelity": "grace_period",
		"max_budget": "max_t", "max_fidelity": "max_t", "eta": "reduction_factor"},
}

// unknownKeyAt renders the message for a key not allowed in section (a
// key path, "" for the top level). If the key is a key elsewhere in a spec
// (or Ray Tune's name for one), the message says where; otherwise it is
// unknownKey's. plugin names the searcher or scheduler whose section it
// is, if it is one.
func unknownKeyAt(key, section, plugin string, allowed []string) string {
	if !slices.ContainsFunc(sections(), func(sec struct {
		path string
		keys []string
	}) bool {
		return sec.path == section
	}) {
		return unknownKey(key, allowed) // inside a value, such as a threshold
	}
	var notes []string
	if section == "searcher" || section == "scheduler" {
		others := slices.DeleteFunc(pluginsTaking(section, key), func(n string) bool { return n == plugin })
		if len(others) > 0 {
			notes = append(notes, fmt.Sprintf("it is a parameter of %s %s", section, andList(others)))
		}
	}
	if places := elsewhere(key, section); len(places) > 0 {
		if near := closest(key, allowed); near != "" {
			places = append([]string{near}, places...)
		}
		notes = append(notes, "did you mean "+orList(places)+"?")
	}
	if to, ok := rayNames[key]; ok && section == "" {
		notes = append(notes, "hone calls it "+to)
	}
	if to, ok := pluginNames[section+" "+plugin][key]; ok {
		notes = append(notes, "hone calls it "+to)
	}
	if len(notes) == 0 {
		return unknownKey(key, allowed)
	}
	var msg string
	switch section {
	case "":
		msg = "unknown key at the top level"
	case "searcher", "scheduler":
		msg = fmt.Sprintf("unknown key for %s %s", section, plugin)
	default:
		msg = "unknown key under " + section
	}
	switch {
	case section == "":
		// The top-level keys are many; examples/reference.yaml lists them.
	case len(allowed) == 0:
		msg += " (this section takes no keys)"
	default:
		msg += " (allowed keys: " + strings.Join(sorted(allowed), ", ") + ")"
	}
	return msg + "; " + strings.Join(notes, "; ")
}

// andList renders "a", "a and b", "a, b and c".
func andList(xs []string) string { return list(xs, " and ") }

// orList renders "a", "a or b", "a, b or c".
func orList(xs []string) string { return list(xs, " or ") }

func list(xs []string, last string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + last + xs[len(xs)-1]
}

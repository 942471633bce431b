package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/hone-tune/hone/spec"
)

// compareSpecs returns the differences between the spec an experiment ran
// with (old) and the one it is to be resumed with (new): refused lists
// those that change the decisions hone makes (the objective, the seed, the
// search space and samples, the searcher and scheduler and their
// parameters, the stop conditions, checkpoint scoring and timing, the
// trainable that names trial directories), allowed those that do not (the
// command, environment and working directory of trials, resources,
// concurrency, checkpoint.num_to_keep, failure, stop_grace). Each entry
// names the key and both values, as `key: was OLD, now NEW`; both lists
// are sorted.
func compareSpecs(old, new *spec.Spec) (refused, allowed []string) {
	type section struct {
		key      string
		old, new any
		refuse   bool
	}
	stop := func(s *spec.Spec) any {
		m := map[string]any{}
		if s.Stop.TrainingIteration != 0 {
			m["training_iteration"] = s.Stop.TrainingIteration
		}
		if s.Stop.TimeBudget != 0 {
			m["time_budget_s"] = s.Stop.TimeBudget.Seconds()
		}
		if len(s.Stop.Thresholds) > 0 {
			var ths []any
			for _, th := range s.Stop.Thresholds {
				ths = append(ths, map[string]any{"field": th.Field, "value": th.Value, "mode": th.Mode})
			}
			m["thresholds"] = ths
		}
		if p := s.Stop.Plateau; p != nil {
			m["plateau"] = map[string]any{"metric": p.Metric, "std": p.Std, "num_results": p.NumResults, "grace_period": p.GracePeriod}
		}
		return m
	}
	sections := []section{
		{"metric", old.Metric, new.Metric, true},
		{"mode", string(old.Mode), string(new.Mode), true},
		{"seed", old.Seed, new.Seed, true},
		{"num_samples", old.NumSamples, new.NumSamples, true},
		{"search_space", old.SearchSpace, new.SearchSpace, true},
		{"points_to_evaluate", old.PointsToEvaluate, new.PointsToEvaluate, true},
		{"searcher", plugin(old.Searcher, true), plugin(new.Searcher, true), true},
		{"scheduler", plugin(old.Scheduler, false), plugin(new.Scheduler, false), true},
		{"stop", stop(old), stop(new), true},
		{"checkpoint", checkpoint(old), checkpoint(new), true},
		{"trainable", old.Trainable, new.Trainable, true},

		{"command", old.Command, new.Command, false},
		{"env", old.Env, new.Env, false},
		{"working_dir", old.WorkingDir, new.WorkingDir, false},
		{"resources", old.Resources, new.Resources, false},
		{"max_concurrent_trials", old.MaxConcurrentTrials, new.MaxConcurrentTrials, false},
		{"stop_grace", old.StopGrace.String(), new.StopGrace.String(), false},
		{"failure.max_failures", old.Failure.MaxFailures, new.Failure.MaxFailures, false},
		{"failure.fail_fast", old.Failure.FailFast, new.Failure.FailFast, false},
		{"checkpoint.num_to_keep", old.Checkpoint.NumToKeep, new.Checkpoint.NumToKeep, false},
		{"gpus", old.GPUs, new.GPUs, false},
		{"custom_resources", old.CustomResources, new.CustomResources, false},
	}
	for _, s := range sections {
		var diffs []string
		diff(s.key, normalize(s.old), normalize(s.new), &diffs)
		if s.refuse {
			refused = append(refused, diffs...)
		} else {
			allowed = append(allowed, diffs...)
		}
	}
	slices.Sort(refused)
	slices.Sort(allowed)
	return refused, allowed
}

// checkpoint renders a spec's checkpoint section with every key.
func checkpoint(s *spec.Spec) map[string]any {
	c := s.Checkpoint
	return map[string]any{"score_attribute": c.ScoreAttribute,
		"score_order": string(c.ScoreOrder), "frequency": c.Frequency, "at_end": c.AtEnd}
}

// plugin renders a searcher or scheduler section as a map: its name, its
// parameters as written and, for searchers, max_concurrent.
func plugin(p spec.Plugin, searcher bool) map[string]any {
	m := map[string]any{}
	if p.Node != nil {
		var v any
		if err := p.Node.Decode(&v); err == nil {
			if params, ok := v.(map[string]any); ok {
				maps := normalize(params)
				if mm, ok := maps.(map[string]any); ok {
					m = mm
				}
			}
		}
	}
	m["name"] = p.Name
	if searcher {
		m["max_concurrent"] = p.MaxConcurrent
	} else {
		delete(m, "max_concurrent")
	}
	return m
}

// normalize turns v into plain JSON values (maps, slices, strings, float64,
// bools, nil), so that equal settings compare equal however they were
// typed.
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return string(b)
	}
	return out
}

// diff appends to out one entry per differing leaf of a and b under key:
// maps are compared key by key, anything else as a whole.
func diff(key string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			av, ain := am[k]
			bv, bin := bm[k]
			switch {
			case !ain:
				*out = append(*out, fmt.Sprintf("%s.%s: was not set, now %s", key, k, render(bv)))
			case !bin:
				*out = append(*out, fmt.Sprintf("%s.%s: was %s, now not set", key, k, render(av)))
			default:
				diff(key+"."+k, av, bv, out)
			}
		}
		return
	}
	if ja, jb := jsonText(a), jsonText(b); ja != jb {
		*out = append(*out, fmt.Sprintf("%s: was %s, now %s", key, shorten(ja), shorten(jb)))
	}
}

// jsonText writes a normalized value as compact JSON (object keys sorted).
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// render writes a value for a message: compact JSON, shortened.
func render(v any) string { return shorten(jsonText(v)) }

// shorten cuts a long value for a message.
func shorten(s string) string {
	if len(s) > 200 {
		return s[:197] + "..."
	}
	return s
}

package pbt

import (
	"math/rand/v2"
	"reflect"

	"github.com/hone-tune/hone"
)

type randRand = rand.Rand

// Explorer is a replacement for PBT's mutation-based explore step, set as
// Config.Explorer (PB2's GP bandit is one). PBT calls it on the
// controller's goroutine only, so it needs no locking; it must be
// deterministic given the calls and the random source, because resume
// replays them.
type Explorer interface {
	// Observe is told of each perturbation check of trial t: a result
	// past the burn-in period, at least perturbation_interval after t's
	// last check. time is the result's time attr, score its metric (negated
	// when minimising, so higher is better) and cfg t's configuration, read
	// only. It is called before t is checkpointed or exploited.
	Observe(t *hone.Trial, time, score float64, cfg hone.Config)
	// Explore returns the configuration trial t takes when it clones
	// donor, whose configuration is donorCfg (read only: return a new
	// map). r is the scheduler's seeded random source. Config.Explore, if
	// set, runs on the result.
	Explore(r *rand.Rand, t, donor *hone.Trial, donorCfg hone.Config) hone.Config
}

// newConfig is the configuration t takes when it clones donor: the
// Explorer's if there is one, else PBT's explore of the donor's.
func (s *Scheduler) newConfig(r *rand.Rand, t, donor *hone.Trial) hone.Config {
	if s.cfg.Explorer == nil {
		return s.explore(donor.Config, r)
	}
	out := s.cfg.Explorer.Explore(r, t, donor, donor.Config)
	if s.cfg.Explore != nil {
		out = s.cfg.Explore(out)
	}
	return out
}

// explore returns a perturbed copy of cfg (docs/SEMANTICS.md §4 "Explore"): per
// mutated key, with probability resample_probability — or when a list's
// current value is not in the list — draw afresh; else a list moves to a
// neighbouring index (clamped) and a number is multiplied by a random
// perturbation factor (ints stay ints, and so do the values of an integer
// domain whatever type they arrive as). Nested maps recurse. Then the
// custom explore function, if any.
func (s *Scheduler) explore(cfg hone.Config, r *rand.Rand) hone.Config {
	out := cfg.Clone()
	if out == nil {
		out = hone.Config{}
	}
	s.perturb(map[string]any(out), s.cfg.Mutations, r)
	if s.cfg.Explore != nil {
		out = s.cfg.Explore(out)
	}
	return out
}

func (s *Scheduler) perturb(cfg map[string]any, muts map[string]any, r *rand.Rand) {
	for _, k := range sortedKeys(muts) {
		m := muts[k]
		if sub, ok := asMap(m); ok {
			inner, ok := asMap(cfg[k])
			if !ok {
				inner = map[string]any{}
				cfg[k] = inner
			}
			s.perturb(inner, sub, r)
			continue
		}
		cur := cfg[k]
		if list, ok := m.([]any); ok {
			idx := indexOf(list, cur)
			if r.Float64() < s.resample || idx < 0 {
				cfg[k] = list[r.IntN(len(list))]
				continue
			}
			shift := 1
			if r.IntN(2) == 0 {
				shift = -1
			}
			cfg[k] = list[min(max(idx+shift, 0), len(list)-1)]
			continue
		}
		if r.Float64() < s.resample {
			cfg[k] = sample(m, r)
			continue
		}
		f := s.cfg.PerturbationFactors[r.IntN(len(s.cfg.PerturbationFactors))]
		if integer(m) {
			if n, ok := hone.Number(cur); ok {
				cfg[k] = int(n * f) // also when cur is an integral float64 read back from JSON
				continue
			}
		}
		cfg[k] = scale(cur, f)
	}
}

// integer reports whether mutation m is a distribution of ints, such as
// space's integer domains: one with an Integer() bool method that says so.
func integer(m any) bool {
	d, ok := m.(interface{ Integer() bool })
	return ok && d.Integer()
}

// scale multiplies a number by f; ints (of any Go integer type) stay ints
// of that type (truncated, as Ray does); anything else is returned
// unchanged.
func scale(v any, f float64) any {
	switch x := v.(type) {
	case int:
		return int(float64(x) * f)
	case float64:
		return x * f
	case float32:
		return float32(float64(x) * f)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		out := reflect.New(rv.Type()).Elem()
		out.SetInt(int64(float64(rv.Int()) * f))
		return out.Interface()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		out := reflect.New(rv.Type()).Elem()
		out.SetUint(uint64(max(0, float64(rv.Uint())*f)))
		return out.Interface()
	}
	if n, ok := hone.Number(v); ok {
		return n * f
	}
	return v
}

func sample(m any, r *rand.Rand) any {
	switch x := m.(type) {
	case func(*rand.Rand) any:
		return x(r)
	case interface{ Sample(*rand.Rand) any }:
		return x.Sample(r)
	case []any:
		return x[r.IntN(len(x))]
	}
	return nil
}

func indexOf(list []any, v any) int {
	for i, x := range list {
		if reflect.DeepEqual(x, v) {
			return i
		}
		a, ok1 := hone.Number(x)
		b, ok2 := hone.Number(v)
		if ok1 && ok2 && a == b {
			return i
		}
	}
	return -1
}

package pbt

import (
	"flag"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/scenario"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of the scenario scripts in testdata/")

// factory: time attr training_iteration; mutation of x by a factor of 2
// (resample 0), so explores are deterministic.
func factory(args map[string]string) (hone.Scheduler, error) {
	cfg := DefaultConfig()
	cfg.TimeAttr = hone.FieldTrainingIteration
	cfg.ResampleProbability = 0
	cfg.PerturbationFactors = []float64{2}
	cfg.Mutations = map[string]any{"x": func(*rand.Rand) any { return 100.0 }}
	if v, ok := args["interval"]; ok {
		cfg.PerturbationInterval, _ = strconv.ParseFloat(v, 64)
	}
	if v, ok := args["quantile"]; ok {
		cfg.QuantileFraction, _ = strconv.ParseFloat(v, 64)
	}
	if v, ok := args["burn_in"]; ok {
		cfg.BurnInPeriod, _ = strconv.ParseFloat(v, 64)
	}
	cfg.Synch = args["synch"] == "true"
	return New(cfg)
}

// TestScenarios pins SEMANTICS §4 PBT with scripts in testdata/.
func TestScenarios(t *testing.T) {
	scenario.Run(t, "testdata/*.txt", *rewrite, map[string]scenario.SchedulerFactory{
		"pbt":    factory,
		"replay": func(map[string]string) (hone.Scheduler, error) { return NewReplay("testdata/replay.policy") },
	})
}

// quantileControl serves trials to quantiles.
type quantileControl struct {
	hone.Control
	trials []*hone.Trial
}

func (q quantileControl) Trial(id string) *hone.Trial {
	for _, t := range q.trials {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// TestQuantiles pins k = ceil(N·q) capped at floor(N/2), for N = 1..10,
// over trials with a score that are not finished, sorted by score.
func TestQuantiles(t *testing.T) {
	for _, q := range []float64{0, 0.1, 0.25, 0.5} {
		for n := 1; n <= 10; n++ {
			s, _ := New(Config{QuantileFraction: q, Mutations: map[string]any{"x": []any{1}}})
			var ts []*hone.Trial
			for i := 0; i < n+2; i++ {
				tr := &hone.Trial{ID: strconv.Itoa(i), Status: hone.StatusRunning}
				ts = append(ts, tr)
				s.state[tr.ID] = &trialState{}
				s.order = append(s.order, tr.ID)
				if i < n {
					// scores descending by id: trial 0 is the best
					s.state[tr.ID].lastScore, s.state[tr.ID].hasScore = float64(-i), true
				}
			}
			ts[n].Status = hone.StatusTerminated // no score and finished: ignored
			lower, upper := s.quantiles(quantileControl{trials: ts})
			k := 0
			if n > 1 {
				k = int(mathCeil(float64(n) * q))
				if k > n/2 {
					k = n / 2
				}
			}
			if len(lower) != k || len(upper) != k {
				t.Fatalf("q=%v N=%d: %d lower, %d upper; want %d", q, n, len(lower), len(upper), k)
			}
			for i := 0; i < k; i++ {
				if upper[len(upper)-1-i].ID != strconv.Itoa(i) || lower[i].ID != strconv.Itoa(n-1-i) {
					t.Fatalf("q=%v N=%d: lower %v upper %v", q, n, ids(lower), ids(upper))
				}
			}
		}
	}
}

func mathCeil(x float64) float64 {
	i := float64(int(x))
	if i < x {
		return i + 1
	}
	return i
}

func ids(ts []*hone.Trial) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return strings.Join(out, ",")
}

type uniform struct{ lo, hi float64 }

func (u uniform) Sample(r *rand.Rand) any { return u.lo + r.Float64()*(u.hi-u.lo) }

// TestExplore pins SEMANTICS §4 explore for each kind of mutation.
func TestExplore(t *testing.T) {
	muts := map[string]any{
		"list":   []any{1, 2, 3, 4},
		"dist":   uniform{10, 20},
		"fn":     func(*rand.Rand) any { return "fresh" },
		"int":    uniform{0, 1},
		"nested": map[string]any{"lr": uniform{0, 1}},
	}
	base := hone.Config{"list": 2, "dist": 15.0, "fn": 8.0, "int": 10, "nested": map[string]any{"lr": 0.5}, "keep": "me"}

	// resample 0, factor 1.2: lists move one index, numbers scale, ints stay ints.
	s, err := New(Config{Mutations: muts, ResampleProbability: 0, PerturbationFactors: []float64{1.2}})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	seen := map[any]bool{}
	for i := 0; i < 200; i++ {
		out := s.explore(base, r)
		seen[out["list"]] = true
		if out["dist"] != 15.0*1.2 || out["fn"] != 8.0*1.2 || out["int"] != 12 || out["keep"] != "me" {
			t.Fatalf("explore: %v", out)
		}
		if lr := out["nested"].(map[string]any)["lr"]; lr != 0.5*1.2 {
			t.Fatalf("nested: %v", lr)
		}
	}
	if len(seen) != 2 || !seen[1] || !seen[3] {
		t.Fatalf("list moved to %v, want the neighbours 1 and 3", seen)
	}
	if base["dist"] != 15.0 || base["nested"].(map[string]any)["lr"] != 0.5 {
		t.Fatal("explore modified its input")
	}
	// At the ends, a list index is clamped.
	for i := 0; i < 50; i++ {
		if v := s.explore(hone.Config{"list": 4}, r)["list"]; v != 3 && v != 4 {
			t.Fatalf("clamped move from 4 gave %v", v)
		}
	}
	// resample 1: every value is drawn afresh.
	s2, _ := New(Config{Mutations: muts, ResampleProbability: 1, PerturbationFactors: []float64{1.2}})
	out := s2.explore(base, r)
	if d := out["dist"].(float64); d < 10 || d > 20 || out["fn"] != "fresh" {
		t.Fatalf("resample: %v", out)
	}
	// A list whose current value is not in the list is resampled.
	if v := s.explore(hone.Config{"list": 99}, r)["list"]; indexOf(muts["list"].([]any), v) < 0 {
		t.Fatalf("value outside the list stayed: %v", v)
	}
	// The custom explore function runs last.
	s3, _ := New(Config{Mutations: muts, PerturbationFactors: []float64{1.2}, Explore: func(c hone.Config) hone.Config {
		c["list"] = 4
		return c
	}})
	if v := s3.explore(base, r)["list"]; v != 4 {
		t.Fatalf("custom explore not applied: %v", v)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "hyperparam_mutations or custom_explore_fn is required"},
		{Config{Mutations: map[string]any{"x": []any{1}}, QuantileFraction: 0.6}, "quantile_fraction = 0.6: must be in [0, 0.5]"},
		{Config{Mutations: map[string]any{"x": 3}}, "hyperparam_mutations.x: int is not a mutation"},
		{Config{Mutations: map[string]any{"x": []any{}}}, "hyperparam_mutations.x: an empty list"},
	} {
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

// TestReplayChain pins which log lines a replay keeps.
func TestReplayChain(t *testing.T) {
	r, err := NewReplay("testdata/replay.policy")
	if err != nil {
		t.Fatal(err)
	}
	at, cfgs := r.Changes()
	if len(at) != 2 || at[0] != 4 || at[1] != 6 || cfgs[0]["x"] != 10.0 || cfgs[1]["x"] != 30.0 || r.Config()["x"] != 0.0 {
		t.Fatalf("schedule %v %v from %v", at, cfgs, r.Config())
	}
	for _, bad := range []string{"", "not json\n", "[1,2,3]\n"} {
		if _, err := ParseReplay([]byte(bad)); err == nil {
			t.Errorf("ParseReplay(%q) accepted", bad)
		}
	}
}

package pbt

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/scenario"
	"github.com/hone-tune/hone/space"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of the scenario scripts in testdata/")

// factory: time attr training_iteration; mutation of x by a factor of 2
// (resample 0), so explores are deterministic.
func factory(args map[string]string) (hone.Scheduler, error) {
	cfg := DefaultConfig()
	cfg.TimeAttr = hone.FieldTrainingIteration
	cfg.ResampleProbability = new(0.0)
	cfg.PerturbationFactors = []float64{2}
	cfg.Mutations = map[string]any{"x": func(*rand.Rand) any { return 100.0 }}
	if v, ok := args["interval"]; ok {
		cfg.PerturbationInterval, _ = strconv.ParseFloat(v, 64)
	}
	if v, ok := args["quantile"]; ok {
		q, _ := strconv.ParseFloat(v, 64)
		cfg.QuantileFraction = &q
	}
	if v, ok := args["burn_in"]; ok {
		cfg.BurnInPeriod, _ = strconv.ParseFloat(v, 64)
	}
	cfg.Synch = args["synch"] == "true"
	if v, ok := args["time_attr"]; ok {
		cfg.TimeAttr = v
	}
	if args["require_attrs"] == "false" {
		cfg.RequireAttrs = new(false)
	}
	if v, ok := args["weights"]; ok {
		for _, w := range strings.Split(v, ",") {
			x, _ := strconv.ParseFloat(w, 64)
			cfg.Weights = append(cfg.Weights, x)
		}
	}
	return New(cfg)
}

// TestScenarios pins docs/SEMANTICS.md §4 PBT with scripts in testdata/.
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
			s, _ := New(Config{QuantileFraction: &q, Mutations: map[string]any{"x": []any{1}}})
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

// TestExplore pins docs/SEMANTICS.md §4 explore for each kind of mutation.
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
	s, err := New(Config{Mutations: muts, ResampleProbability: new(0.0), PerturbationFactors: []float64{1.2}})
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
	s2, _ := New(Config{Mutations: muts, ResampleProbability: new(1.0), PerturbationFactors: []float64{1.2}})
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
		{Config{Mutations: map[string]any{"x": []any{1}}, QuantileFraction: new(0.6)}, "quantile_fraction = 0.6: must be in [0, 0.5]"},
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

// TestZeroConfigMeansDefaults pins that every zero-valued field of Config
// stands for its documented default: Config{Mutations: m} is PBT with Ray
// Tune's defaults, and in particular it exploits (a zero quantile
// fraction used to mean "never") and resamples.
func TestZeroConfigMeansDefaults(t *testing.T) {
	muts := map[string]any{"x": uniform{10, 20}}
	s, err := New(Config{Mutations: muts})
	if err != nil {
		t.Fatal(err)
	}
	if s.quantile != 0.25 || s.resample != 0.25 || !s.logConfig || !s.requireAttrs ||
		s.cfg.PerturbationInterval != 60 || s.cfg.TimeAttr != hone.FieldTimeTotal ||
		len(s.cfg.PerturbationFactors) != 2 || s.cfg.PerturbationFactors[0] != 1.2 || s.cfg.PerturbationFactors[1] != 0.8 ||
		s.cfg.BurnInPeriod != 0 || s.cfg.Synch {
		t.Fatalf("zero config: quantile %v resample %v log %v require %v, %+v", s.quantile, s.resample, s.logConfig, s.requireAttrs, s.cfg)
	}
	d := DefaultConfig()
	if *d.QuantileFraction != 0.25 || *d.ResampleProbability != 0.25 || !*d.LogConfig || !*d.RequireAttrs {
		t.Fatalf("DefaultConfig: %+v", d)
	}
	// Four scored trials: the zero config has a lower and an upper trial.
	var ts []*hone.Trial
	for i := range 4 {
		tr := &hone.Trial{ID: strconv.Itoa(i), Status: hone.StatusRunning}
		ts = append(ts, tr)
		s.state[tr.ID] = &trialState{lastScore: float64(i), hasScore: true}
		s.order = append(s.order, tr.ID)
	}
	lower, upper := s.quantiles(quantileControl{trials: ts})
	if ids(lower) != "0" || ids(upper) != "3" {
		t.Fatalf("zero config quantiles: lower %q upper %q, want 0 and 3", ids(lower), ids(upper))
	}
	// About a quarter of the explores resample; the others scale by 1.2 or 0.8.
	r := rand.New(rand.NewPCG(3, 3))
	resampled := 0
	for range 400 {
		x := s.explore(hone.Config{"x": 15.0}, r)["x"].(float64)
		if x != 15.0*1.2 && x != 15.0*0.8 {
			resampled++
		}
	}
	if resampled < 60 || resampled > 140 {
		t.Fatalf("%d of 400 explores resampled, want about 100", resampled)
	}
	// Explicit zeros are kept: never resample, never exploit.
	s0, err := New(Config{Mutations: muts, QuantileFraction: new(0.0), ResampleProbability: new(0.0)})
	if err != nil {
		t.Fatal(err)
	}
	if s0.quantile != 0 || s0.resample != 0 {
		t.Fatalf("explicit zeros: quantile %v resample %v", s0.quantile, s0.resample)
	}
	// Validate takes the zero value as the defaults too.
	if err := (Config{Mutations: muts}).Validate(); err != nil {
		t.Fatalf("Validate of the zero config: %v", err)
	}
}

// intDomain is an integer distribution, as space's integer domains are:
// it reports Integer.
type intDomain struct{ lo, hi int }

func (d intDomain) Sample(r *rand.Rand) any { return d.lo + r.IntN(d.hi-d.lo) }
func (intDomain) Integer() bool             { return true }

// TestExploreKeepsIntegersInt pins that resampling an integer domain gives
// an int, and that perturbing a value of an integer domain gives an int
// (truncated, as Ray does) also when the value arrives as an integral
// float64, as configurations read back from JSON do (on resume).
func TestExploreKeepsIntegersInt(t *testing.T) {
	muts := map[string]any{"n": space.RandInt(1, 100), "m": intDomain{1, 100}, "f": uniform{0, 10}}
	r := rand.New(rand.NewPCG(4, 4))
	resample, err := New(Config{Mutations: muts, ResampleProbability: new(1.0)})
	if err != nil {
		t.Fatal(err)
	}
	perturb, err := New(Config{Mutations: muts, ResampleProbability: new(0.0), PerturbationFactors: []float64{1.25}})
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		out := resample.explore(hone.Config{"n": 10, "m": 10, "f": 3.0}, r)
		if _, ok := out["n"].(int); !ok {
			t.Fatalf("resampled randint: %T %v", out["n"], out["n"])
		}
		if _, ok := out["m"].(int); !ok {
			t.Fatalf("resampled int domain: %T %v", out["m"], out["m"])
		}
	}
	for _, in := range []hone.Config{{"n": 10, "m": 10, "f": 3.0}, {"n": 10.0, "m": 10.0, "f": 3.0}, {"n": int64(10), "m": int32(10), "f": 3.0}} {
		out := perturb.explore(in, r)
		if n, ok := out["n"].(int); !ok || n != 12 {
			t.Errorf("perturbed randint from %T: %T %v, want int 12", in["n"], out["n"], out["n"])
		}
		if m, ok := out["m"].(int); !ok || m != 12 {
			t.Errorf("perturbed int domain from %T: %T %v, want int 12", in["m"], out["m"], out["m"])
		}
		if f, ok := out["f"].(float64); !ok || f != 3.75 {
			t.Errorf("perturbed float: %T %v, want 3.75", out["f"], out["f"])
		}
	}
	// An integer value stays an integer of its type whatever the mutation.
	for _, v := range []any{3, int32(3), int64(3), uint8(3)} {
		got := perturb.explore(hone.Config{"f": v}, r)["f"]
		if reflect.TypeOf(got) != reflect.TypeOf(v) || fmt.Sprint(got) != "3" {
			t.Errorf("%T value under a float domain: %T %v, want %T 3", v, got, got, v)
		}
	}
}

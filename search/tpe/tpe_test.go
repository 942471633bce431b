package tpe

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/motest"
	"github.com/hone-tune/hone/space"
)

func mustNew(t *testing.T, sp space.Space, opts Options) *Searcher {
	t.Helper()
	s, err := New(sp, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func result(metric string, v any) *hone.Result {
	return &hone.Result{Metrics: map[string]any{metric: v}}
}

// run suggests n configurations one after another, completing each at once
// with metric "loss" = f(cfg), and returns them.
func run(t *testing.T, s *Searcher, n int, f func(hone.Config) float64) []hone.Config {
	t.Helper()
	var out []hone.Config
	for range n {
		id := fmt.Sprintf("t%04d", s.Suggested())
		cfg, err := s.Suggest(id)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, cfg)
		s.OnTrialComplete(id, result("loss", f(cfg)), false)
	}
	return out
}

func num(t *testing.T, v any) float64 {
	t.Helper()
	x, ok := hone.Number(v)
	if !ok {
		t.Fatalf("%#v is not a number", v)
	}
	return x
}

func median(xs []float64) float64 {
	xs = slices.Clone(xs)
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

func TestOptionsValidation(t *testing.T) {
	sp := space.Space{"x": space.Uniform(0, 1), "m": space.Space{"w": space.Choice(1, 2)}}
	ok := Options{Metric: "loss", NumSamples: 10}
	for _, tc := range []struct {
		name string
		sp   space.Space
		edit func(*Options)
		want string
	}{
		{"space", space.Space{"x": space.Uniform(1, 0)}, nil, "space: x.uniform"},
		{"metric", sp, func(o *Options) { o.Metric = "" }, "metric is required"},
		{"mode", sp, func(o *Options) { o.Mode = "maximize" }, `mode = "maximize"`},
		{"num_samples 0", sp, func(o *Options) { o.NumSamples = 0 }, "num_samples = 0"},
		{"num_samples -2", sp, func(o *Options) { o.NumSamples = -2 }, "num_samples = -2"},
		{"n_startup_trials", sp, func(o *Options) { o.NStartupTrials = -1 }, "n_startup_trials = -1"},
		{"n_ei_candidates", sp, func(o *Options) { o.NEICandidates = -3 }, "n_ei_candidates = -3"},
		{"prior_weight", sp, func(o *Options) { o.PriorWeight = -1 }, "prior_weight = -1"},
		{"prior_weight NaN", sp, func(o *Options) { o.PriorWeight = math.NaN() }, "prior_weight = NaN"},
		{"prior_weight Inf", sp, func(o *Options) { o.PriorWeight = math.Inf(1) }, "prior_weight = +Inf"},
		{"points key", sp, func(o *Options) {
			o.Points = []map[string]any{{"x": 0.5}, {"m": map[string]any{"v": 1}}}
		}, `points_to_evaluate[1]: key "m.v" is not in the search space`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := ok
			if tc.edit != nil {
				tc.edit(&o)
			}
			_, err := New(tc.sp, o)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "tpe: ") {
				t.Fatalf("New = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	s := mustNew(t, sp, ok)
	if s.obj.Mode != hone.Min || s.startup != 10 || s.nEI != 24 || s.priorWeight != 1 || s.gamma(30) != 3 || s.endpoints {
		t.Errorf("defaults: mode %q startup %d candidates %d prior %v gamma(30) %d endpoints %v",
			s.obj.Mode, s.startup, s.nEI, s.priorWeight, s.gamma(30), s.endpoints)
	}
	if s.Total() != 10 {
		t.Errorf("Total = %d", s.Total())
	}
}

func TestDoneAfterNumSamples(t *testing.T) {
	sp := space.Space{"x": space.Uniform(0, 1)}
	s := mustNew(t, sp, Options{Metric: "loss", NumSamples: 15, NStartupTrials: 5})
	run(t, s, 15, func(c hone.Config) float64 { return c["x"].(float64) })
	for range 2 {
		if _, err := s.Suggest("more"); !errors.Is(err, hone.ErrSearchDone) {
			t.Fatalf("Suggest after NumSamples = %v, want ErrSearchDone", err)
		}
	}
	// -1 does not end.
	s = mustNew(t, sp, Options{Metric: "loss", NumSamples: -1, NStartupTrials: 5})
	run(t, s, 40, func(c hone.Config) float64 { return c["x"].(float64) })
	if s.Total() != -1 || s.Suggested() != 40 || s.Observed() != 40 {
		t.Errorf("Total %d Suggested %d Observed %d", s.Total(), s.Suggested(), s.Observed())
	}
}

func TestPoints(t *testing.T) {
	sp := space.Space{"x": space.Uniform(0, 1), "m": space.Space{"w": space.Choice(1, 2), "a": space.Choice("p", "q")}}
	points := []map[string]any{
		{"x": 0.25, "m": map[string]any{"w": 2, "a": "q"}},
		{"x": 2.5}, // outside the domain: used as given
		{"m": map[string]any{"w": 1}},
	}
	s := mustNew(t, sp, Options{Metric: "loss", NumSamples: 2, Points: points})
	points[0]["x"] = 0.99 // New copied them
	a, _ := s.Suggest("a")
	b, _ := s.Suggest("b")
	if !reflect.DeepEqual(a, hone.Config{"x": 0.25, "m": map[string]any{"w": 2, "a": "q"}}) {
		t.Errorf("first = %v", a)
	}
	if b["x"] != 2.5 || sp.Check(map[string]any{"x": 0.5, "m": b["m"]}) != nil {
		t.Errorf("second = %v", b)
	}
	if _, err := s.Suggest("c"); !errors.Is(err, hone.ErrSearchDone) {
		t.Errorf("third point suggested past NumSamples: %v", err)
	}
	// Out-of-domain values are clamped into the model; values that are not
	// categories are left out.
	s = mustNew(t, sp, Options{Metric: "loss", NumSamples: 5, Points: []map[string]any{{"x": 2.5, "m": map[string]any{"w": 7}}}})
	if _, err := s.Suggest("a"); err != nil {
		t.Fatal(err)
	}
	x := s.pending["a"].x // dims in path order: m.a, m.w, x
	if !math.IsNaN(x[1]) || x[2] != 1 {
		t.Errorf("coordinates of the point = %v", x)
	}
}

// allKinds has a domain of every kind, nested, with constants and a
// conditional function.
func allKinds() space.Space {
	return space.Space{
		"u":    space.Uniform(-2, 3),
		"qu":   space.QUniform(0.05, 1, 0.1),
		"lu":   space.LogUniform(1e-4, 1e-1),
		"qlu":  space.QLogUniform(0.1, 10, 0.1),
		"ri":   space.RandInt(1, 10),
		"qri":  space.QRandInt(0, 100, 10),
		"lri":  space.LogRandInt(1, 1000),
		"qlri": space.QLogRandInt(8, 512, 8),
		"n":    space.Normal(5, 2),
		"qn":   space.QNormal(0, 1, 0.5),
		"c":    space.Choice("a", 2, map[string]any{"k": []any{1.0}}),
		"g":    space.GridSearch(16, 32, 64),
		"nest": space.Space{"w": space.Choice(64, 128), "act": "relu", "k": space.Const(map[string]any{"uniform": []any{0, 1}})},
		"f": space.Func(func(c hone.Config) any {
			u, _ := c.Lookup("u")
			w, _ := c.Lookup("nest", "w")
			return fmt.Sprint(u, "/", w)
		}),
	}
}

func TestBoundsAndTypes(t *testing.T) {
	sp := allKinds()
	s := mustNew(t, sp, Options{Metric: "loss", NumSamples: 120, Seed: 3, NStartupTrials: 8})
	r := rand.New(rand.NewPCG(9, 9))
	cfgs := run(t, s, 120, func(c hone.Config) float64 {
		v := math.Abs(c["u"].(float64)-1) + math.Abs(math.Log(c["lu"].(float64))+5) + float64(c["ri"].(int))/10
		if c["c"] == "a" {
			v -= 1
		}
		return v + 0.1*r.Float64()
	})
	if s.Observed() != 120 {
		t.Fatalf("Observed = %d", s.Observed())
	}
	ints := []string{"ri", "qri", "lri", "qlri"}
	floats := []string{"u", "qu", "lu", "qlu", "n", "qn"}
	for i, c := range cfgs {
		if err := sp.Check(c); err != nil {
			t.Fatalf("suggestion %d %v: %v", i, c, err)
		}
		for _, k := range ints {
			if _, ok := c[k].(int); !ok {
				t.Fatalf("suggestion %d: %s = %#v, want an int", i, k, c[k])
			}
		}
		for _, k := range floats {
			if _, ok := c[k].(float64); !ok {
				t.Fatalf("suggestion %d: %s = %#v, want a float64", i, k, c[k])
			}
		}
		nest := c["nest"].(map[string]any)
		if nest["act"] != "relu" || !reflect.DeepEqual(nest["k"], map[string]any{"uniform": []any{0, 1}}) {
			t.Fatalf("suggestion %d: constants %v", i, nest)
		}
		if want := fmt.Sprint(c["u"], "/", nest["w"]); c["f"] != want {
			t.Fatalf("suggestion %d: f = %v, want %v", i, c["f"], want)
		}
	}
	// The model phase produced varied values (not stuck on one kernel),
	// and handed out copies of map categories.
	later := cfgs[60:]
	seen := map[string]map[any]bool{}
	for _, c := range later {
		for _, k := range []string{"qu", "qri", "qlri", "qn", "g"} {
			if seen[k] == nil {
				seen[k] = map[any]bool{}
			}
			seen[k][c[k]] = true
		}
		if m, ok := c["c"].(map[string]any); ok {
			m["k"].([]any)[0] = -1.0
		}
	}
	for k, vs := range seen {
		if len(vs) < 2 {
			t.Errorf("%s took a single value in 60 model suggestions: %v", k, vs)
		}
	}
	if got := sp["c"].(space.Domain).Contains(map[string]any{"k": []any{1.0}}); !got {
		t.Error("a suggestion shared a map category with the space")
	}
}

// Quantized log domains whose ends are a single value each side, and a
// domain with one value.
func TestTinyDomains(t *testing.T) {
	sp := space.Space{
		"one":  space.QRandInt(3, 5, 4), // only 4
		"two":  space.RandInt(0, 2),
		"qlog": space.QLogUniform(0.5, 1.5, 1), // only 1
		"c":    space.Choice("only"),
	}
	s := mustNew(t, sp, Options{Metric: "loss", NumSamples: 40, NStartupTrials: 3})
	cfgs := run(t, s, 40, func(c hone.Config) float64 { return float64(c["two"].(int)) })
	ones := 0
	for i, c := range cfgs {
		if err := sp.Check(c); err != nil {
			t.Fatalf("suggestion %d: %v", i, err)
		}
		if c["one"] != 4 || c["qlog"] != 1.0 || c["c"] != "only" {
			t.Fatalf("suggestion %d = %v", i, c)
		}
		if i >= 20 && c["two"] == 1 {
			ones++
		}
	}
	if ones > 5 {
		t.Errorf("the worse integer came %d times in 20 model suggestions", ones)
	}
}

func drive(t *testing.T, seed uint64) []hone.Config {
	s := mustNew(t, allKinds(), Options{Metric: "score", Mode: hone.Max, NumSamples: 40, Seed: seed, NStartupTrials: 5})
	var out []hone.Config
	for i := range 40 {
		id := fmt.Sprintf("t%d", i)
		cfg, err := s.Suggest(id)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, cfg)
		s.OnResult(id, result("score", cfg["n"]))
		s.OnTrialComplete(id, result("score", -math.Abs(cfg["u"].(float64))), i%7 == 3)
	}
	return out
}

func TestDeterministic(t *testing.T) {
	a, b, c := drive(t, 1), drive(t, 1), drive(t, 2)
	for i := range a {
		if fmt.Sprint(a[i]) != fmt.Sprint(b[i]) {
			t.Fatalf("suggestion %d differs for the same seed:\n%v\n%v", i, a[i], b[i])
		}
	}
	if fmt.Sprint(a) == fmt.Sprint(c) {
		t.Fatal("seeds 1 and 2 gave the same suggestions")
	}
}

// Until NStartupTrials observations have arrived the searcher samples the
// space at random; failed trials do not count.
func TestStartupIsRandom(t *testing.T) {
	sp := space.Space{"x": space.Uniform(0, 1), "c": space.Choice("a", "b", "c"), "n": space.RandInt(0, 50)}
	const seed = 11
	ref := rand.New(rand.NewPCG(seed, stream))
	s := mustNew(t, sp, Options{Metric: "loss", NumSamples: 30, Seed: seed, NStartupTrials: 6})
	for i := range 14 {
		id := fmt.Sprint(i)
		cfg, err := s.Suggest(id)
		if err != nil {
			t.Fatal(err)
		}
		want := sp.Sample(ref)
		if !reflect.DeepEqual(map[string]any(cfg), want) {
			t.Fatalf("suggestion %d = %v, want the random %v", i, cfg, want)
		}
		// Even trials fail, so only 7 observations arrive: the 6th after
		// suggestion 10.
		s.OnTrialComplete(id, result("loss", cfg["x"]), i%2 == 0 && i < 10)
		if i == 9 && s.Observed() != 5 {
			t.Fatalf("Observed = %d after 10 trials, want 5", s.Observed())
		}
		if s.Observed() >= 6 {
			break
		}
	}
	if s.Observed() != 6 || s.Suggested() != 11 {
		t.Fatalf("Observed %d Suggested %d", s.Observed(), s.Suggested())
	}
	// The next suggestion comes from the model, and so differs from the
	// random one.
	cfg, _ := s.Suggest("model")
	if reflect.DeepEqual(map[string]any(cfg), sp.Sample(ref)) {
		t.Fatal("the first model suggestion equals the random one")
	}
}

func TestObservations(t *testing.T) {
	sp := space.Space{"x": space.Uniform(0, 1)}
	s := mustNew(t, sp, Options{Metric: "acc", Mode: hone.Max, NumSamples: 20})
	for i := range 8 {
		if _, err := s.Suggest(fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	noMetric := &hone.Result{Metrics: map[string]any{"other": 1.0}}
	s.OnResult("0", result("acc", 0.5))
	s.OnTrialComplete("0", result("acc", 0.75), false) // the last result counts
	s.OnResult("1", result("acc", 0.25))
	s.OnResult("1", noMetric)
	s.OnTrialComplete("1", noMetric, false) // last reported value: 0.25
	s.OnResult("2", result("acc", 0.9))
	s.OnTrialComplete("2", result("acc", 0.95), true) // failed
	s.OnTrialComplete("3", noMetric, false)           // never reported
	s.OnResult("4", result("acc", 0.6))
	s.OnTrialComplete("4", result("acc", math.NaN()), false) // NaN
	s.OnResult("5", result("acc", 0.3))
	s.OnTrialComplete("5", nil, false) // no last result: 0.3
	s.OnTrialComplete("6", result("acc", math.Inf(-1)), false)
	s.OnTrialComplete("zzz", result("acc", 1.0), false) // not ours
	s.OnTrialComplete("0", result("acc", 1.0), false)   // twice
	s.OnTrialComplete("7", result("acc", true), false)  // booleans are numbers

	got := map[int]float64{}
	for _, o := range s.obs {
		got[o.seq] = o.loss
	}
	want := map[int]float64{0: -0.75, 1: -0.25, 5: -0.3, 6: math.Inf(1), 7: -1}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("observations (seq: loss) = %v, want %v", got, want)
	}
	if len(s.pending) != 0 {
		t.Fatalf("pending = %v", s.pending)
	}
}

// runTwoD minimises (x−0.7)² + (y−0.2)² on [0, 1]² and returns the distances
// to the optimum of suggestions 61 to 100.
func runTwoD(t *testing.T, seed uint64, random bool) []float64 {
	sp := space.Space{"x": space.Uniform(0, 1), "y": space.Uniform(0, 1)}
	startup := 10
	if random {
		startup = 1000
	}
	s := mustNew(t, sp, Options{Metric: "loss", NumSamples: 100, Seed: seed, NStartupTrials: startup})
	dist := func(c hone.Config) float64 {
		return math.Hypot(c["x"].(float64)-0.7, c["y"].(float64)-0.2)
	}
	cfgs := run(t, s, 100, func(c hone.Config) float64 { d := dist(c); return d * d })
	var ds []float64
	for _, c := range cfgs[60:] {
		ds = append(ds, dist(c))
	}
	return ds
}

func TestFindsGoodRegion(t *testing.T) {
	for seed := range uint64(5) {
		tpe, rnd := median(runTwoD(t, seed, false)), median(runTwoD(t, seed, true))
		t.Logf("seed %d: median distance to the optimum %.3f (random %.3f)", seed, tpe, rnd)
		if !(tpe < rnd/2) {
			t.Errorf("seed %d: median distance %.3f, random %.3f: want less than half", seed, tpe, rnd)
		}
	}
}

// A log-scale learning rate, maximised.
func TestFindsGoodLogRegion(t *testing.T) {
	sp := space.Space{"lr": space.LogUniform(1e-6, 1), "bs": space.QLogRandInt(8, 1024, 8)}
	for seed := range uint64(3) {
		errs := map[bool][]float64{}
		for _, random := range []bool{false, true} {
			startup := 10
			if random {
				startup = 1000
			}
			s := mustNew(t, sp, Options{Metric: "acc", Mode: hone.Max, NumSamples: 100, Seed: seed, NStartupTrials: startup})
			for i := range 100 {
				id := fmt.Sprint(i)
				cfg, err := s.Suggest(id)
				if err != nil {
					t.Fatal(err)
				}
				e := math.Abs(math.Log10(cfg["lr"].(float64)) + 3)
				acc := 1 - e*e - 0.01*math.Abs(math.Log2(float64(cfg["bs"].(int)))-6)
				s.OnTrialComplete(id, result("acc", acc), false)
				if i >= 60 {
					errs[random] = append(errs[random], e)
				}
			}
		}
		tpe, rnd := median(errs[false]), median(errs[true])
		t.Logf("seed %d: median |log10 lr + 3| %.3f (random %.3f)", seed, tpe, rnd)
		if !(tpe < rnd/2) {
			t.Errorf("seed %d: median error %.3f, random %.3f: want less than half", seed, tpe, rnd)
		}
	}
}

// In a mixed space the best category comes to dominate, and the integer
// parameter concentrates near its best value.
func TestMixedSpace(t *testing.T) {
	sp := space.Space{
		"opt":   space.Choice("sgd", "adam", "rmsprop", "adagrad"),
		"x":     space.Uniform(0, 1),
		"depth": space.RandInt(1, 21),
	}
	offset := map[string]float64{"sgd": 0.6, "adam": 0, "rmsprop": 0.4, "adagrad": 0.8}
	for seed := range uint64(3) {
		s := mustNew(t, sp, Options{Metric: "loss", NumSamples: 100, Seed: seed})
		cfgs := run(t, s, 100, func(c hone.Config) float64 {
			d := float64(c["depth"].(int) - 6)
			return offset[c["opt"].(string)] + (c["x"].(float64)-0.3)*(c["x"].(float64)-0.3) + 0.01*d*d
		})
		adam, near := 0, 0
		for _, c := range cfgs[60:] {
			if c["opt"] == "adam" {
				adam++
			}
			if d := c["depth"].(int); d >= 4 && d <= 8 {
				near++
			}
		}
		t.Logf("seed %d: adam %d/40, depth in 4..8 %d/40", seed, adam, near)
		if adam < 28 { // random: 10 of 40
			t.Errorf("seed %d: the best category came %d times in the last 40 suggestions, want >= 28", seed, adam)
		}
		if near < 20 { // random: 10 of 40
			t.Errorf("seed %d: depth within 2 of the best %d times in the last 40, want >= 20", seed, near)
		}
	}
}

func TestStateRoundTrip(t *testing.T) {
	sp := allKinds()
	opts := Options{Metric: "loss", NumSamples: 60, Seed: 5, NStartupTrials: 6, Points: []map[string]any{{"u": 1.5}}}
	loss := func(c hone.Config) float64 { return math.Abs(c["u"].(float64)) + float64(c["ri"].(int)) }
	a := mustNew(t, sp, opts)
	run(t, a, 20, loss)
	// Leave three trials in flight, one of them with a reported value.
	var inflight []hone.Config
	for _, id := range []string{"p0", "p1", "p2"} {
		cfg, err := a.Suggest(id)
		if err != nil {
			t.Fatal(err)
		}
		inflight = append(inflight, cfg)
	}
	a.OnResult("p1", result("loss", -7.0))
	a.OnTrialComplete("t0003", result("loss", math.Inf(1)), false) // an already-complete id: ignored
	data, err := a.MarshalState()
	if err != nil {
		t.Fatal(err)
	}

	bOpts := opts
	bOpts.Seed = 99
	b := mustNew(t, sp, bOpts)
	if err := b.UnmarshalState(data); err != nil {
		t.Fatal(err)
	}
	again, err := b.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(data) {
		t.Fatalf("state changed across a round trip:\n%s\n%s", data, again)
	}
	for _, s := range []*Searcher{a, b} {
		s.OnTrialComplete("p0", result("loss", loss(inflight[0])), false)
		s.OnTrialComplete("p1", &hone.Result{}, false) // uses the reported -7
		s.OnTrialComplete("p2", nil, true)
	}
	if a.Observed() != 22 || b.Observed() != 22 {
		t.Fatalf("Observed = %d, %d; want 22", a.Observed(), b.Observed())
	}
	ca, cb := run(t, a, 37, loss), run(t, b, 37, loss)
	for i := range ca {
		if fmt.Sprint(ca[i]) != fmt.Sprint(cb[i]) {
			t.Fatalf("suggestion %d after restore differs:\n%v\n%v", i, ca[i], cb[i])
		}
	}
	if _, err := b.Suggest("end"); !errors.Is(err, hone.ErrSearchDone) {
		t.Fatalf("restored searcher did not end: %v", err)
	}
}

func TestUnmarshalStateErrors(t *testing.T) {
	sp := space.Space{"x": space.Uniform(0, 1), "c": space.Choice(1, 2)}
	opts := Options{Metric: "loss", NumSamples: 30, NStartupTrials: 3}
	a := mustNew(t, sp, opts)
	run(t, a, 5, func(c hone.Config) float64 { return c["x"].(float64) })
	data, err := a.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	edit := func(fn func(map[string]any)) string {
		var st map[string]any
		if err := json.Unmarshal(data, &st); err != nil {
			t.Fatal(err)
		}
		fn(st)
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	other := func(sp space.Space, edit func(*Options)) *Searcher {
		o := opts
		if edit != nil {
			edit(&o)
		}
		return mustNew(t, sp, o)
	}
	for _, tc := range []struct {
		name string
		s    *Searcher
		data string
		want string
	}{
		{"garbage", other(sp, nil), "{", "unmarshal state"},
		{"version", other(sp, nil), `{"version": 2}`, "unknown version 2"},
		{"num_samples", other(sp, func(o *Options) { o.NumSamples = 31 }), string(data), "30 trials"},
		{"points", other(sp, func(o *Options) { o.Points = []map[string]any{{"x": 0.1}} }), string(data), "0 points"},
		{"space", other(space.Space{"x": space.Uniform(0, 1), "c": space.Choice(1, 2, 3)}, nil), string(data), "parameters"},
		{"coordinate", other(sp, nil), edit(func(st map[string]any) {
			st["observations"].([]any)[0].(map[string]any)["x"].([]any)[1] = 7
		}), "x: coordinate 7 out of range"},
		{"category", other(sp, nil), edit(func(st map[string]any) {
			st["observations"].([]any)[1].(map[string]any)["x"].([]any)[0] = 2
		}), "c: category 2 out of range"},
		{"length", other(sp, nil), edit(func(st map[string]any) {
			st["observations"].([]any)[0].(map[string]any)["x"] = []any{0}
		}), "1 coordinates, want 2"},
		{"seq", other(sp, nil), edit(func(st map[string]any) {
			st["observations"].([]any)[0].(map[string]any)["seq"] = 5
		}), "bad seq"},
		{"rng", other(sp, nil), edit(func(st map[string]any) { st["rng"] = "AAAA" }), "rng"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := tc.s.MarshalState()
			err := tc.s.UnmarshalState([]byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("UnmarshalState = %v, want an error containing %q", err, tc.want)
			}
			if after, _ := tc.s.MarshalState(); string(after) != string(before) {
				t.Fatal("a failed UnmarshalState changed the searcher")
			}
		})
	}
}

// BenchmarkSuggest measures one model suggestion in a 6-parameter space
// with 500 observations.
func BenchmarkSuggest(b *testing.B) {
	sp := space.Space{
		"a": space.Uniform(0, 1), "b": space.LogUniform(1e-5, 1), "c": space.RandInt(0, 100),
		"d": space.QUniform(0, 10, 0.5), "e": space.Choice("x", "y", "z"), "f": space.Normal(0, 1),
	}
	s, err := New(sp, Options{Metric: "loss", NumSamples: -1})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	for i := range 500 {
		id := fmt.Sprint(i)
		if _, err := s.Suggest(id); err != nil {
			b.Fatal(err)
		}
		s.OnTrialComplete(id, result("loss", r.Float64()), false)
	}
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.Suggest(fmt.Sprint("b", i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSuggestMulti measures one model suggestion with two objectives
// (ZDT1 over six floats) after 1000 observations: the largest run auto
// gives multi-objective TPE (num_samples < 1000).
func BenchmarkSuggestMulti(b *testing.B) {
	s, err := New(motest.ZDTSpace(), Options{Objectives: motest.Objectives(), NumSamples: -1})
	if err != nil {
		b.Fatal(err)
	}
	motest.Run(b, s, 1000, motest.ZDT1)
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.Suggest(fmt.Sprint("b", i)); err != nil {
			b.Fatal(err)
		}
	}
}

package nsga2

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/motest"
	"github.com/hone-tune/hone/pareto"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
)

func newSearcher(t *testing.T, sp space.Space, mod func(*Options)) *Searcher {
	t.Helper()
	o := DefaultOptions()
	o.Objectives = motest.Objectives()
	o.Seed = 1
	if mod != nil {
		mod(&o)
	}
	s, err := New(sp, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestImprovesOverRandom: on ZDT1 at 300 trials, NSGA-II's median
// hypervolume over five seeds is above the best random run's.
func TestImprovesOverRandom(t *testing.T) {
	ref := []float64{1.1, 11}
	var ga, rnd []float64
	for seed := range uint64(5) {
		s := newSearcher(t, motest.ZDTSpace(), func(o *Options) { o.Seed, o.PopulationSize = seed, 30 })
		ga = append(ga, pareto.Hypervolume(motest.Run(t, s, 300, motest.ZDT1), ref))
		r, err := random.New(motest.ZDTSpace(), -1, nil, seed)
		if err != nil {
			t.Fatal(err)
		}
		rnd = append(rnd, pareto.Hypervolume(motest.Run(t, r, 300, motest.ZDT1), ref))
	}
	t.Logf("nsga2 %v, random %v", ga, rnd)
	if median(ga) <= slices.Max(rnd) {
		t.Errorf("nsga2's median hypervolume %v is not above random's best %v", median(ga), slices.Max(rnd))
	}
}

// TestDeterministic: the same seed and calls give the same suggestions;
// another seed others.
func TestDeterministic(t *testing.T) {
	sp := motest.ZDTSpace()
	sp["act"] = space.Choice("relu", "tanh")
	sp["layers"] = space.RandInt(1, 5)
	f := func(cfg hone.Config) []float64 { return motest.ZDT1(cfg) }
	configs := func(seed uint64) []hone.Config {
		s := newSearcher(t, sp, func(o *Options) { o.Seed, o.PopulationSize = seed, 6 })
		var out []hone.Config
		for i := range 40 {
			id := fmt.Sprint(i)
			cfg, err := s.Suggest(id)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, cfg)
			s.OnTrialComplete(id, motest.Result(f(cfg)), i%7 == 3)
		}
		return out
	}
	a, b, c := configs(3), configs(3), configs(4)
	if !reflect.DeepEqual(a, b) {
		t.Error("the same seed gave different suggestions")
	}
	if reflect.DeepEqual(a, c) {
		t.Error("seeds 3 and 4 gave the same suggestions")
	}
}

// TestGenerations: points first, then random; a generation closes when
// PopulationSize of its trials completed, failed and incomplete ones not
// counting; trials suggested meanwhile belong to it; the children of the
// next generation take every gene from a parent (no mutation).
func TestGenerations(t *testing.T) {
	sp := space.Space{"a": space.Uniform(0, 1), "b": space.Choice("x", "y", "z"), "c": space.RandInt(0, 100)}
	point := map[string]any{"a": 0.25}
	s := newSearcher(t, sp, func(o *Options) {
		o.PopulationSize, o.MutationProb, o.Points = 3, 0, []map[string]any{point}
	})
	cfg, _ := s.Suggest("p")
	if cfg["a"] != 0.25 {
		t.Fatalf("first suggestion %v: not the point", cfg)
	}
	for i := range 5 {
		if _, err := s.Suggest(fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	s.OnTrialComplete("0", nil, true)                                             // failed
	s.OnTrialComplete("1", &hone.Result{Metrics: map[string]any{"f1": 1}}, false) // lacks f2
	s.OnTrialComplete("p", motest.Result([]float64{1, 1}), false)
	s.OnTrialComplete("2", motest.Result([]float64{0, 2}), false)
	if g, n := s.Generation(); g != 0 || n != 2 {
		t.Fatalf("generation %d with %d completed, want 0 with 2", g, n)
	}
	s.OnResult("3", motest.Result([]float64{2, 0}))
	s.OnTrialComplete("3", &hone.Result{}, false) // its OnResult counts
	if g, n := s.Generation(); g != 1 || n != 0 {
		t.Fatalf("generation %d with %d completed, want 1 with 0", g, n)
	}
	if got := s.Parents(); !slices.Equal(got, []string{"p", "2", "3"}) {
		t.Fatalf("parents %v", got)
	}
	// Trial 4, of generation 0, completes late: it joins the next
	// selection, and dominates p.
	s.OnTrialComplete("4", motest.Result([]float64{0.5, 0.5}), false)
	genes := map[string][]float64{}
	for _, p := range s.parents {
		genes[p.id] = p.x
	}
	for i := range 3 {
		id := fmt.Sprint("g1-", i)
		cfg, err := s.Suggest(id)
		if err != nil {
			t.Fatal(err)
		}
		x := s.encode(cfg)
		for k, v := range x {
			if !slices.ContainsFunc(s.parents, func(m *member) bool { return m.x[k] == v }) {
				t.Errorf("child %v: gene %d = %v is no parent's", cfg, k, v)
			}
		}
		s.OnTrialComplete(id, motest.Result([]float64{3, 3}), false)
	}
	if g, _ := s.Generation(); g != 2 {
		t.Fatalf("generation %d, want 2", g)
	}
	if got := s.Parents(); !slices.Equal(got, []string{"2", "3", "4"}) {
		t.Fatalf("parents %v, want 2, 3 and the late 4", got)
	}
}

// TestSelection: whole fronts first, then the members of the next front
// of largest crowding distance; with constraints, feasible ones before
// infeasible ones, these by violation.
func TestSelection(t *testing.T) {
	s := newSearcher(t, motest.ZDTSpace(), func(o *Options) { o.PopulationSize = 4 })
	ms := func(pts [][]float64, viol []float64) []*member {
		out := make([]*member, len(pts))
		for i, p := range pts {
			out[i] = &member{id: fmt.Sprint(i), seq: i, loss: p}
			if viol != nil {
				out[i].viol = viol[i]
			}
		}
		return out
	}
	ids := func(pop []*member) []string {
		var out []string
		for _, m := range pop {
			out = append(out, m.id)
		}
		return out
	}
	// Front 0: 0, 1; front 1: 2, 3, 4, 5 with 3 in the middle of the
	// crowded pair 3, 4 (crowding: 2 and 5 infinite, 3 and 4 finite; 4
	// has the larger gap).
	pts := [][]float64{{0, 1}, {1, 0}, {0.5, 2}, {1, 1.5}, {1.1, 1.4}, {3, 1}, {5, 5}}
	got := s.selectElite(ms(pts, nil))
	if !slices.Equal(ids(got), []string{"0", "1", "2", "5"}) {
		t.Errorf("selected %v, want the front and the extremes of the next", ids(got))
	}
	for _, m := range got {
		if want := map[string]int{"0": 0, "1": 0, "2": 1, "5": 1}[m.id]; m.rank != want {
			t.Errorf("%s: rank %d, want %d", m.id, m.rank, want)
		}
	}
	// Constrained: 0 and 1 are infeasible, so the feasible 2..6 come
	// first, and 1 (violation 0.5) before 0 (violation 2).
	s.opts.PopulationSize = 6
	got = s.selectElite(ms(pts, []float64{2, 0.5, 0, 0, 0, 0, 0}))
	if !slices.Equal(ids(got), []string{"1", "2", "3", "4", "5", "6"}) {
		t.Errorf("constrained selection %v", ids(got))
	}
}

// TestTournament: the parent of lower rank wins; of equal rank, the one
// of larger crowding distance.
func TestTournament(t *testing.T) {
	a := &member{rank: 0, crowd: 0.1}
	b := &member{rank: 1, crowd: math.Inf(1)}
	c := &member{rank: 0, crowd: 0.5}
	if !crowdedBetter(a, b) || crowdedBetter(b, a) {
		t.Error("rank 0 does not beat rank 1")
	}
	if !crowdedBetter(c, a) || crowdedBetter(a, c) {
		t.Error("the larger crowding distance does not win")
	}
	// Among two parents, the second draw excludes the first: both are
	// chosen.
	s := newSearcher(t, motest.ZDTSpace(), func(o *Options) { o.PopulationSize = 2 })
	s.parents = []*member{a, b}
	for range 20 {
		p0 := s.tournament(-1)
		if p1 := s.tournament(p0); p1 == p0 {
			t.Fatal("the second parent is the first")
		}
	}
}

// TestCrossoverAndMutation: with swapping 0 or 1 a child takes every gene
// from one parent (the tournament decides which comes first), with 0.5
// it mixes them, and mutation resamples each gene with its probability.
func TestCrossoverAndMutation(t *testing.T) {
	p := []*member{{x: []float64{0.1, 0.1, 0.1, 0.1}}, {x: []float64{0.9, 0.9, 0.9, 0.9}}}
	sp := space.Space{"a": space.Uniform(0, 1), "b": space.Uniform(0, 1), "c": space.Uniform(0, 1), "d": space.Uniform(0, 1)}
	// count breeds 500 children and returns how many took genes from
	// both parents, and the fraction of genes resampled.
	count := func(swap, mut float64) (mixed int, resampled float64) {
		s := newSearcher(t, sp, func(o *Options) { o.CrossoverProb, o.SwappingProb, o.MutationProb = 1, swap, mut })
		s.parents = p
		rankPopulation(s.parents)
		other := 0
		for range 500 {
			var first, second int
			for _, v := range s.encode(s.space.Resolve(s.breed(), s.rng)) {
				switch v {
				case 0.1:
					first++
				case 0.9:
					second++
				default:
					other++
				}
			}
			if first > 0 && second > 0 {
				mixed++
			}
		}
		return mixed, float64(other) / 2000
	}
	for _, swap := range []float64{0, 1} {
		if mixed, res := count(swap, 0); mixed != 0 || res != 0 {
			t.Errorf("swapping %v: %d children mixed, %v resampled: want none", swap, mixed, res)
		}
	}
	// With 4 genes and swapping 0.5, 14 of 16 children mix.
	if mixed, _ := count(0.5, 0); math.Abs(float64(mixed)/500-14.0/16) > 0.06 {
		t.Errorf("swapping 0.5: %d of 500 children mixed", mixed)
	}
	if _, res := count(0.5, 0.25); math.Abs(res-0.25) > 0.04 {
		t.Errorf("mutation 0.25 resampled %.3f of the genes", res)
	}
	// The default mutation probability is 1/number of parameters.
	if s := newSearcher(t, sp, nil); s.mutation != 0.25 {
		t.Errorf("default mutation %v, want 1/4", s.mutation)
	}
}

// TestNewErrors: every invalid option is a *hone.ParamError naming it.
func TestNewErrors(t *testing.T) {
	for _, c := range []struct {
		param string
		mod   func(*Options)
	}{
		{"metric", func(o *Options) { o.Objectives = nil }},
		{"objectives", func(o *Options) { o.Objectives = hone.Objectives{{Metric: "a", Mode: "up"}} }},
		{"constraints", func(o *Options) { o.Constraints = hone.Constraints{{Metric: "m"}} }},
		{"num_samples", func(o *Options) { o.NumSamples = 0 }},
		{"population_size", func(o *Options) { o.PopulationSize = 1 }},
		{"mutation_prob", func(o *Options) { o.MutationProb = 1.5 }},
		{"crossover_prob", func(o *Options) { o.CrossoverProb = -0.1 }},
		{"swapping_prob", func(o *Options) { o.SwappingProb = math.NaN() }},
		{"points_to_evaluate", func(o *Options) { o.Points = []map[string]any{{"nope": 1}} }},
	} {
		o := DefaultOptions()
		o.Objectives = motest.Objectives()
		c.mod(&o)
		_, err := New(motest.ZDTSpace(), o)
		var pe *hone.ParamError
		if !errors.As(err, &pe) || pe.Param != c.param || pe.Plugin != "nsga2" {
			t.Errorf("%s: error %v, want a ParamError naming it", c.param, err)
		}
	}
}

// TestCheckObjectives: the experiment's objectives and constraints must
// be the searcher's.
func TestCheckObjectives(t *testing.T) {
	below := 1.0
	cs := hone.Constraints{{Metric: "mem", Below: &below}}
	s := newSearcher(t, motest.ZDTSpace(), func(o *Options) { o.Constraints = cs })
	if err := s.CheckObjectives(motest.Objectives(), cs); err != nil {
		t.Errorf("its own objectives: %v", err)
	}
	var pe *hone.ParamError
	if err := s.CheckObjectives(motest.Objectives()[:1], cs); !errors.As(err, &pe) || pe.Param != "objectives" {
		t.Errorf("other objectives: %v", err)
	}
	if err := s.CheckObjectives(motest.Objectives(), nil); !errors.As(err, &pe) || pe.Param != "constraints" {
		t.Errorf("other constraints: %v", err)
	}
}

// TestNumSamples: after NumSamples suggestions the search is done.
func TestNumSamples(t *testing.T) {
	s := newSearcher(t, motest.ZDTSpace(), func(o *Options) { o.NumSamples = 3 })
	for i := range 3 {
		if _, err := s.Suggest(fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Suggest("x"); !errors.Is(err, hone.ErrSearchDone) {
		t.Errorf("fourth suggestion: %v", err)
	}
}

// TestStateRoundTrip: a searcher restored from a snapshot taken with
// trials pending, candidates waiting and parents chosen suggests what the
// original does; a snapshot of another configuration is refused.
func TestStateRoundTrip(t *testing.T) {
	below := 3.0
	mod := func(o *Options) {
		o.PopulationSize = 5
		o.Constraints = hone.Constraints{{Metric: "f2", Below: &below}}
	}
	a := newSearcher(t, motest.ZDTSpace(), mod)
	step := func(s *Searcher, i int) hone.Config {
		id := fmt.Sprint(i)
		cfg, err := s.Suggest(id)
		if err != nil {
			t.Fatal(err)
		}
		if i >= 2 {
			prev := fmt.Sprint(i - 2) // two trials in flight
			s.OnResult(prev, motest.Result([]float64{float64(i % 5), float64(i % 3)}))
			s.OnTrialComplete(prev, nil, i%11 == 0)
		}
		return cfg
	}
	for i := range 23 {
		step(a, i)
	}
	data, err := a.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	b := newSearcher(t, motest.ZDTSpace(), func(o *Options) { mod(o); o.Seed = 99 })
	if err := b.UnmarshalState(data); err != nil {
		t.Fatal(err)
	}
	for i := 23; i < 60; i++ {
		if ca, cb := step(a, i), step(b, i); !reflect.DeepEqual(ca, cb) {
			t.Fatalf("suggestion %d: %v, restored %v", i, ca, cb)
		}
	}
	if !slices.Equal(a.Parents(), b.Parents()) {
		t.Errorf("parents %v, restored %v", a.Parents(), b.Parents())
	}
	other := newSearcher(t, motest.ZDTSpace(), func(o *Options) { mod(o); o.PopulationSize = 6 })
	if err := other.UnmarshalState(data); err == nil {
		t.Error("a snapshot of population 5 restored into population 6")
	}
}

// TestMaxPending: a generation's children do not wait for results, so
// the controller sizes the pending bound (hone.PendingAuto).
func TestMaxPending(t *testing.T) {
	if got := newSearcher(t, motest.ZDTSpace(), nil).MaxPending(); got != hone.PendingAuto {
		t.Errorf("MaxPending() = %d, want hone.PendingAuto", got)
	}
}

package random

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/space"
)

var _ interface {
	hone.Searcher
	hone.Stateful
} = (*Searcher)(nil)

func mustNew(t *testing.T, s space.Space, n int, points []map[string]any, seed uint64) *Searcher {
	t.Helper()
	sr, err := New(s, n, points, seed)
	if err != nil {
		t.Fatal(err)
	}
	return sr
}

// drain suggests until the searcher is done (or limit suggestions).
func drain(t *testing.T, sr *Searcher, limit int) []hone.Config {
	t.Helper()
	var out []hone.Config
	for i := 0; i < limit; i++ {
		cfg, err := sr.Suggest(fmt.Sprintf("t%d", i))
		if errors.Is(err, hone.ErrSearchDone) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, cfg)
	}
	return out
}

func gridSpace() space.Space {
	return space.Space{
		"a": space.GridSearch(1, 2),
		"b": space.GridSearch("x", "y", "z"),
		"u": space.Uniform(0, 1),
	}
}

func TestGridTimesSamples(t *testing.T) {
	sr := mustNew(t, gridSpace(), 4, nil, 1)
	if sr.Total() != 24 {
		t.Fatalf("Total = %d, want 24", sr.Total())
	}
	got := drain(t, sr, 100)
	if len(got) != 24 {
		t.Fatalf("%d suggestions, want 24", len(got))
	}
	// Each repeat walks the whole grid in Ray's order, with fresh u.
	us := map[float64]bool{}
	for i, cfg := range got {
		j := i % 6
		if cfg["a"] != []int{1, 2}[j%2] || cfg["b"] != []string{"x", "y", "z"}[j/2] {
			t.Fatalf("suggestion %d = %v", i, cfg)
		}
		us[cfg["u"].(float64)] = true
	}
	if len(us) != 24 {
		t.Fatalf("%d distinct u values, want 24", len(us))
	}
	// Done stays done.
	if _, err := sr.Suggest("again"); !errors.Is(err, hone.ErrSearchDone) {
		t.Fatalf("Suggest after the end = %v", err)
	}
	if sr.Suggested() != 24 {
		t.Fatalf("Suggested = %d", sr.Suggested())
	}
}

func TestNoGrid(t *testing.T) {
	sr := mustNew(t, space.Space{"u": space.Uniform(0, 1)}, 3, nil, 1)
	if got := drain(t, sr, 100); len(got) != 3 || sr.Total() != 3 {
		t.Fatalf("%d suggestions, Total %d; want 3", len(got), sr.Total())
	}
	sr = mustNew(t, space.Space{"u": space.Uniform(0, 1)}, 0, nil, 1)
	if got := drain(t, sr, 100); len(got) != 0 || sr.Total() != 0 {
		t.Fatalf("num_samples 0: %d suggestions, Total %d", len(got), sr.Total())
	}
}

func TestPointsComeFirstAndCount(t *testing.T) {
	points := []map[string]any{
		{"a": 2, "b": "z", "u": 0.5}, // full point: one trial
		{"a": 1},                     // b expands: three trials, u sampled
	}
	sr := mustNew(t, gridSpace(), 3, points, 1)
	// Two point repeats (1 + 3 trials) and one random repeat (6).
	if sr.Total() != 10 {
		t.Fatalf("Total = %d, want 10", sr.Total())
	}
	got := drain(t, sr, 100)
	if len(got) != 10 {
		t.Fatalf("%d suggestions, want 10", len(got))
	}
	if !reflect.DeepEqual(got[0], hone.Config{"a": 2, "b": "z", "u": 0.5}) {
		t.Fatalf("first = %v", got[0])
	}
	for i, b := range []string{"x", "y", "z"} {
		cfg := got[1+i]
		if cfg["a"] != 1 || cfg["b"] != b {
			t.Fatalf("point 2, grid %d = %v", i, cfg)
		}
		if u, ok := cfg["u"].(float64); !ok || u < 0 || u > 1 {
			t.Fatalf("u not sampled: %v", cfg)
		}
	}
	for i, cfg := range got[4:] {
		if cfg["a"] != []int{1, 2}[i%2] || cfg["b"] != []string{"x", "y", "z"}[i/2] {
			t.Fatalf("random repeat %d = %v", i, cfg)
		}
	}
	// The searcher copied the points.
	got[0]["a"] = 99
	points[0]["a"] = 98
	sr2 := mustNew(t, gridSpace(), 3, points, 1)
	if cfg, _ := sr2.Suggest("t"); cfg["a"] != 98 {
		t.Fatalf("points not taken at New: %v", cfg)
	}
}

func TestMorePointsThanSamples(t *testing.T) {
	s := space.Space{"u": space.Uniform(0, 1)}
	points := []map[string]any{{"u": 0.1}, {"u": 0.2}, {"u": 0.3}}
	sr := mustNew(t, s, 1, points, 1)
	got := drain(t, sr, 100)
	if sr.Total() != 3 || len(got) != 3 || got[2]["u"] != 0.3 {
		t.Fatalf("Total %d, got %v", sr.Total(), got)
	}
}

func TestInfinite(t *testing.T) {
	sr := mustNew(t, gridSpace(), -1, []map[string]any{{"a": 1, "b": "x"}}, 1)
	if sr.Total() != -1 {
		t.Fatalf("Total = %d, want -1", sr.Total())
	}
	got := drain(t, sr, 1000)
	if len(got) != 1000 {
		t.Fatalf("stopped after %d", len(got))
	}
	if got[0]["a"] != 1 || got[0]["b"] != "x" || got[1]["a"] != 1 || got[2]["a"] != 2 {
		t.Fatalf("order: %v %v %v", got[0], got[1], got[2])
	}
}

func TestDeterministic(t *testing.T) {
	s := space.Space{"u": space.Uniform(0, 1), "n": space.RandInt(0, 100), "c": space.GridSearch(1, 2)}
	a := drain(t, mustNew(t, s, 5, nil, 7), 100)
	b := drain(t, mustNew(t, s, 5, nil, 7), 100)
	c := drain(t, mustNew(t, s, 5, nil, 8), 100)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different suggestions")
	}
	if reflect.DeepEqual(a, c) {
		t.Fatal("different seeds, same suggestions")
	}
}

func TestStateRoundTrip(t *testing.T) {
	s := space.Space{"u": space.Uniform(0, 1), "c": space.GridSearch(1, 2, 3), "m": space.Space{"n": space.Normal(0, 1)}}
	points := []map[string]any{{"u": 0.5}, {"c": 2}}
	want := drain(t, mustNew(t, s, 4, points, 3), 100)
	if len(want) != 3+1+6 {
		t.Fatalf("%d suggestions", len(want))
	}
	// Save at every position, restore into a fresh searcher built with
	// another seed, and check it continues identically.
	for cut := 0; cut <= len(want); cut++ {
		sr := mustNew(t, s, 4, points, 3)
		drain(t, sr, cut)
		st, err := sr.MarshalState()
		if err != nil {
			t.Fatal(err)
		}
		restored := mustNew(t, s, 4, points, 999)
		if err := restored.UnmarshalState(st); err != nil {
			t.Fatal(err)
		}
		rest := drain(t, restored, 100)
		if !reflect.DeepEqual(rest, want[cut:]) && !(len(rest) == 0 && cut == len(want)) {
			t.Fatalf("cut %d: restored searcher suggested\n%v\nwant\n%v", cut, rest, want[cut:])
		}
		if restored.Suggested() != len(want) {
			t.Fatalf("cut %d: Suggested = %d", cut, restored.Suggested())
		}
	}
}

func TestStateErrors(t *testing.T) {
	s := space.Space{"u": space.Uniform(0, 1)}
	st, err := mustNew(t, s, 4, nil, 1).MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	other := mustNew(t, s, 5, nil, 1)
	err = other.UnmarshalState(st)
	want := "random: unmarshal state: saved for a search of 4 trials with 0 points, this one has 5 trials and 0 points"
	if err == nil || err.Error() != want {
		t.Fatalf("UnmarshalState = %v, want %q", err, want)
	}
	for _, bad := range []string{`{`, `{"version": 2}`, `{"version": 1, "total": 5, "rng": "AAAA"}`} {
		if err := other.UnmarshalState([]byte(bad)); err == nil {
			t.Errorf("UnmarshalState(%s) succeeded", bad)
		}
	}
}

func TestNewErrors(t *testing.T) {
	s := space.Space{"u": space.Uniform(0, 1), "m": space.Space{"x": space.Uniform(0, 1)}, "c": space.Choice(1)}
	for _, tt := range []struct {
		s      space.Space
		n      int
		points []map[string]any
		want   string
	}{
		{s, -2, nil, "random: num_samples = -2: must be -1 (until stopped) or >= 0"},
		{space.Space{"u": space.Uniform(1, 0)}, 1, nil, "random: space: u.uniform: want [low, high] with low < high, got [1, 0]"},
		{s, 1, []map[string]any{{"u": 1}, {"v": 1}}, `random: points_to_evaluate[1]: key "v" is not in the search space`},
		{s, 1, []map[string]any{{"m": map[string]any{"y": 1}}}, `random: points_to_evaluate[0]: key "m.y" is not in the search space`},
	} {
		_, err := New(tt.s, tt.n, tt.points, 1)
		if err == nil || err.Error() != tt.want {
			t.Errorf("New = %v, want %q", err, tt.want)
		}
	}
	// Replacing a sub-space or a choice with any value is allowed.
	if _, err := New(s, 1, []map[string]any{{"m": "flat", "c": map[string]any{"k": 1}}}, 1); err != nil {
		t.Fatal(err)
	}
}

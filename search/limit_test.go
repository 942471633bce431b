package search

import (
	"errors"
	"reflect"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
)

// recorder is a searcher that counts and records what it is told.
type recorder struct {
	next     int
	limit    int // suggestions before ErrSearchDone
	results  []string
	complete []string
}

func (r *recorder) Suggest(id string) (hone.Config, error) {
	if r.next >= r.limit {
		return nil, hone.ErrSearchDone
	}
	r.next++
	return hone.Config{"n": r.next}, nil
}

func (r *recorder) OnResult(id string, _ *hone.Result) { r.results = append(r.results, id) }

func (r *recorder) OnTrialComplete(id string, _ *hone.Result, failed bool) {
	r.complete = append(r.complete, id)
}

func TestLimit(t *testing.T) {
	rec := &recorder{limit: 4}
	s := Limit(rec, 2)
	l, ok := s.(*Limiter)
	if !ok {
		t.Fatalf("Limit returned %T, want *Limiter", s)
	}
	if _, ok := s.(hone.Stateful); ok {
		t.Fatal("limiter of a stateless searcher claims to be Stateful")
	}
	for _, id := range []string{"a", "b"} {
		if _, err := s.Suggest(id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Suggest("c"); !errors.Is(err, hone.ErrNotNow) {
		t.Fatalf("third Suggest = %v, want ErrNotNow", err)
	}
	if rec.next != 2 {
		t.Fatalf("inner asked %d times, want 2", rec.next)
	}
	s.OnResult("a", &hone.Result{})
	s.OnResult("stranger", &hone.Result{})
	if !reflect.DeepEqual(rec.results, []string{"a"}) {
		t.Fatalf("results passed: %v", rec.results)
	}
	s.OnTrialComplete("a", nil, true) // a failed trial frees its slot too
	s.OnTrialComplete("stranger", nil, false)
	s.OnTrialComplete("a", nil, false) // twice: ignored
	if !reflect.DeepEqual(rec.complete, []string{"a"}) || l.Live() != 1 {
		t.Fatalf("complete passed: %v, live %d", rec.complete, l.Live())
	}
	cfg, err := s.Suggest("c")
	if err != nil || cfg["n"] != 3 {
		t.Fatalf("Suggest after a completion = %v, %v", cfg, err)
	}
	s.OnTrialComplete("b", nil, false)
	if _, err := s.Suggest("d"); err != nil {
		t.Fatal(err)
	}
	// The inner searcher's end passes through, and takes no slot.
	s.OnTrialComplete("c", nil, false)
	if _, err := s.Suggest("e"); !errors.Is(err, hone.ErrSearchDone) {
		t.Fatalf("Suggest at the end = %v", err)
	}
	if l.Live() != 1 || l.Inner() != hone.Searcher(rec) {
		t.Fatalf("live %d", l.Live())
	}
}

func TestLimitUnlimited(t *testing.T) {
	s := Limit(&recorder{limit: 100}, 0)
	for i := range 50 {
		if _, err := s.Suggest(string(rune('a' + i))); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLimitState(t *testing.T) {
	sp := space.Space{"u": space.Uniform(0, 1)}
	newLimited := func(seed uint64) hone.Searcher {
		inner, err := random.New(sp, 10, nil, seed)
		if err != nil {
			t.Fatal(err)
		}
		return Limit(inner, 2)
	}
	s := newLimited(1)
	st, ok := s.(hone.Stateful)
	if !ok {
		t.Fatalf("Limit(stateful) = %T, not Stateful", s)
	}
	if _, ok := s.(*StatefulLimiter); !ok {
		t.Fatalf("Limit(stateful) = %T, want *StatefulLimiter", s)
	}
	for _, id := range []string{"b", "a", "c"} {
		if _, err := s.Suggest(id); err != nil && !errors.Is(err, hone.ErrNotNow) {
			t.Fatal(err)
		}
	}
	s.OnTrialComplete("a", nil, false)
	if _, err := s.Suggest("d"); err != nil {
		t.Fatal(err)
	}
	data, err := st.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	// The restored limiter has the same live set (b, d) and continues
	// the inner sequence.
	want, _ := s.Suggest("x") // ErrNotNow: full
	if want != nil {
		t.Fatal("limit not enforced")
	}
	s.OnTrialComplete("b", nil, false)
	wantCfg, err := s.Suggest("e")
	if err != nil {
		t.Fatal(err)
	}
	r := newLimited(42)
	if err := r.(hone.Stateful).UnmarshalState(data); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Suggest("x"); !errors.Is(err, hone.ErrNotNow) {
		t.Fatalf("restored limiter forgot its live set: %v", err)
	}
	r.OnTrialComplete("b", nil, false)
	got, err := r.Suggest("e")
	if err != nil || !reflect.DeepEqual(got, wantCfg) {
		t.Fatalf("restored Suggest = %v, %v; want %v", got, err, wantCfg)
	}
	if err := r.(hone.Stateful).UnmarshalState([]byte("{")); err == nil {
		t.Fatal("bad state accepted")
	}
}

// TestLimitMaxPending: the limiter caps a searcher's own pending limit at
// its concurrency, passes hone.PendingAuto through (its own cap bounds the
// suggestions), and gives 1 for searchers without a limit.
func TestLimitMaxPending(t *testing.T) {
	sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, -1, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := sr.MaxPending(); got != hone.PendingAuto {
		t.Errorf("random: MaxPending = %d, want hone.PendingAuto", got)
	}
	cases := []struct {
		inner hone.Searcher
		max   int
		want  int
	}{
		{sr, 4, hone.PendingAuto},
		{sr, 0, hone.PendingAuto},
		{&recorder{limit: 1}, 4, 1},
	}
	for i, c := range cases {
		if got := Limit(c.inner, c.max).(hone.PendingLimit).MaxPending(); got != c.want {
			t.Errorf("case %d: MaxPending = %d, want %d", i, got, c.want)
		}
	}
}

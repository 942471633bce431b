package stopper

import (
	"math"
	"testing"

	"github.com/hone-tune/hone"
)

func res(iter int, m map[string]any) *hone.Result {
	return &hone.Result{TrainingIteration: iter, Metrics: m}
}

func TestMaxIterations(t *testing.T) {
	s := MaxIterations(3)
	for i, want := range []bool{false, false, true, true} {
		if got := s.ShouldStop("a", res(i+1, nil)); got != want {
			t.Errorf("iter %d: got %v want %v", i+1, got, want)
		}
	}
}

func TestThreshold(t *testing.T) {
	hi := Threshold{Field: "acc", Value: 0.9}
	lo := Threshold{Field: "loss", Value: 0.1, Mode: hone.Min}
	cases := []struct {
		s    Threshold
		m    map[string]any
		want bool
	}{
		{hi, map[string]any{"acc": 0.89}, false},
		{hi, map[string]any{"acc": 0.9}, true},
		{hi, map[string]any{"acc": math.NaN()}, false},
		{hi, map[string]any{}, false},
		{lo, map[string]any{"loss": 0.2}, false},
		{lo, map[string]any{"loss": 0.05}, true},
	}
	for i, c := range cases {
		if got := c.s.ShouldStop("a", res(1, c.m)); got != c.want {
			t.Errorf("case %d: got %v want %v", i, got, c.want)
		}
	}
}

func TestPlateau(t *testing.T) {
	p := NewPlateau("loss")
	vals := []float64{1, 0.5, 0.3, 0.300, 0.301, 0.300, 0.301}
	var stoppedAt int
	for i, v := range vals {
		if p.ShouldStop("a", res(i+1, map[string]any{"loss": v})) {
			stoppedAt = i + 1
			break
		}
	}
	if stoppedAt != 6 {
		t.Fatalf("stopped at %d, want 6 (last 4 values within std 0.01 only from result 6)", stoppedAt)
	}
	// Another trial's history is separate.
	if p.ShouldStop("b", res(5, map[string]any{"loss": 0.3})) {
		t.Fatal("trial b stopped with a single value")
	}
	if err := (&Plateau{Metric: "x", NumResults: 1}).Validate(); err == nil {
		t.Fatal("num_results=1 accepted")
	}
}

func TestFunc(t *testing.T) {
	f := Func(func(id string, r *hone.Result) bool { return id == "x" })
	if !f.ShouldStop("x", res(1, nil)) || f.ShouldStop("y", res(1, nil)) || f.ShouldStopAll() {
		t.Fatal("Func did not follow its function")
	}
}

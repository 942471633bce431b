package asha

import (
	"slices"
	"testing"
)

// rayRungs are ASHA's milestones as Ray Tune's formula gives them in
// float64: bracket s has grace·rf^(k+s) for k < int(log(max_t/grace)/
// log(rf) − s + 1), int() truncating. Where the logarithms' quotient falls
// a hair below an integer, Ray has one rung fewer than exact arithmetic:
// log(1000)/log(10) = 2.9999999999999996, so (1000, 1, 10) has no rung at
// 1000; likewise log(1e6)/log(10) = 5.999999999999999 and log(243)/log(3)
// = 4.999999999999999.
var rayRungs = []struct {
	maxT, grace, rf float64
	brackets        int
	want            [][]float64
}{
	{1000, 1, 10, 1, [][]float64{{1, 10, 100}}},
	{100, 1, 4, 1, [][]float64{{1, 4, 16, 64}}},
	{81, 1, 3, 1, [][]float64{{1, 3, 9, 27, 81}}},
	{729, 1, 3, 1, [][]float64{{1, 3, 9, 27, 81, 243, 729}}},
	{10, 1, 2, 1, [][]float64{{1, 2, 4, 8}}},
	{1000, 10, 10, 1, [][]float64{{10, 100, 1000}}},
	{100, 1, 10, 1, [][]float64{{1, 10, 100}}},
	{125, 1, 5, 1, [][]float64{{1, 5, 25, 125}}},
	{243, 3, 3, 1, [][]float64{{3, 9, 27, 81, 243}}},
	{64, 1, 4, 1, [][]float64{{1, 4, 16, 64}}},
	{1000000, 1, 10, 1, [][]float64{{1, 10, 100, 1000, 10000, 100000}}},
	{100, 1, 4, 3, [][]float64{{1, 4, 16, 64}, {4, 16, 64}, {16, 64}}},
	{81, 1, 3, 3, [][]float64{{1, 3, 9, 27, 81}, {3, 9, 27, 81}, {9, 27, 81}}},
	{1000, 1, 10, 3, [][]float64{{1, 10, 100}, {10, 100}, {100}}},
	{200, 2, 3, 2, [][]float64{{2, 6, 18, 54, 162}, {6, 18, 54, 162}}},
	{1, 1, 2, 1, [][]float64{{1}}},
	{50, 1, 2.5, 2, [][]float64{{1, 2.5, 6.25, 15.625, 39.0625}, {2.5, 6.25, 15.625, 39.0625}}},
	{216, 1, 6, 1, [][]float64{{1, 6, 36, 216}}},
	{343, 1, 7, 1, [][]float64{{1, 7, 49, 343}}},
	{100000, 1, 10, 1, [][]float64{{1, 10, 100, 1000, 10000, 100000}}},
	{4096, 1, 8, 1, [][]float64{{1, 8, 64, 512, 4096}}},
	{243, 1, 3, 1, [][]float64{{1, 3, 9, 27, 81}}},
	{1000000, 1, 10, 2, [][]float64{{1, 10, 100, 1000, 10000, 100000}, {10, 100, 1000, 10000, 100000}}},
}

// TestRayRungs pins every bracket's milestones to rayRungs, exactly.
func TestRayRungs(t *testing.T) {
	for _, c := range rayRungs {
		cfg := DefaultConfig()
		cfg.MaxT, cfg.GracePeriod, cfg.ReductionFactor, cfg.Brackets = c.maxT, c.grace, c.rf, c.brackets
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for b, want := range c.want {
			if got := s.Milestones(b); !slices.Equal(got, want) {
				t.Errorf("max_t=%v grace=%v rf=%v bracket %d: milestones %v; Ray: %v", c.maxT, c.grace, c.rf, b, got, want)
			}
		}
	}
}

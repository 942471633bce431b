// Package motest holds what the tests of the multi-objective searchers
// share: two minimised objectives, ZDT1 over a six-dimensional space, and
// a sequential run of a searcher against it.
package motest

import (
	"fmt"
	"math"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/space"
)

// Objectives returns f1 and f2, both minimised.
func Objectives() hone.Objectives {
	return hone.Objectives{{Metric: "f1", Mode: hone.Min}, {Metric: "f2", Mode: hone.Min}}
}

// ZDTSpace returns ZDT1's space with n = 6: x0 … x5 uniform in [0, 1].
func ZDTSpace() space.Space {
	sp := space.Space{}
	for i := range 6 {
		sp[fmt.Sprintf("x%d", i)] = space.Uniform(0, 1)
	}
	return sp
}

// ZDT1 is Zitzler, Deb and Thiele's first problem over ZDTSpace.
func ZDT1(cfg hone.Config) []float64 {
	x := make([]float64, 6)
	for i := range x {
		x[i], _ = hone.Number(cfg[fmt.Sprintf("x%d", i)])
	}
	g := 0.0
	for _, v := range x[1:] {
		g += v
	}
	g = 1 + 9*g/5
	return []float64{x[0], g * (1 - math.Sqrt(x[0]/g))}
}

// Result is a done result with f1, f2 and, if given, mem.
func Result(f []float64, mem ...float64) *hone.Result {
	m := map[string]any{"f1": f[0], "f2": f[1]}
	if len(mem) > 0 {
		m["mem"] = mem[0]
	}
	return &hone.Result{Metrics: m, Done: true}
}

// Run suggests n trials one at a time, completing each with f, and
// returns the objective vectors.
func Run(t testing.TB, s hone.Searcher, n int, f func(hone.Config) []float64) [][]float64 {
	t.Helper()
	var out [][]float64
	for i := range n {
		id := fmt.Sprintf("t%d", i)
		cfg, err := s.Suggest(id)
		if err != nil {
			t.Fatalf("suggest %s: %v", id, err)
		}
		v := f(cfg)
		s.OnTrialComplete(id, Result(v), false)
		out = append(out, v)
	}
	return out
}

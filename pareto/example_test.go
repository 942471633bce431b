package pareto_test

import (
	"fmt"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/pareto"
)

// Two objectives, accuracy maximised and latency minimised, mapped to
// losses with Objective.Loss before the front is taken.
func Example() {
	objectives := hone.Objectives{{Metric: "accuracy", Mode: hone.Max}, {Metric: "latency", Mode: hone.Min}}
	trials := [][]float64{ // accuracy, latency
		{0.90, 30},
		{0.95, 80},
		{0.85, 40}, // worse than the first in both
		{0.80, 10},
	}
	losses := make([][]float64, len(trials))
	for i, v := range trials {
		losses[i] = []float64{objectives[0].Loss(v[0]), objectives[1].Loss(v[1])}
	}
	fmt.Println("front:", pareto.Front(losses))
	fmt.Println("ranks:", pareto.Sort(losses))
	ref := pareto.Reference(losses)
	fmt.Printf("reference: %.3f\n", ref)
	fmt.Printf("hypervolume: %.3f\n", pareto.Hypervolume(losses, ref))
	// The first point's contribution, 3, is what removing it loses: the
	// third point, which it dominates, then covers part of its box.
	fmt.Printf("contributions: %.3f\n", pareto.HypervolumeContributions(losses, ref))
	// Output:
	// front: [0 1 3]
	// ranks: [0 0 1 0]
	// reference: [-0.785 87.000]
	// hypervolume: 7.205
	// contributions: [3.000 0.350 0.000 0.300]
}

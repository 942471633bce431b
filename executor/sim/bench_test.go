package sim_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
)

// BenchmarkSim10kTrials100Steps runs 10,000 curve trials of 100 steps
// (1,000,000 results, a simulated 100 s per trial) side by side, the
// runner answering every result at once. It reports the results the
// executor delivers per second of wall time; compare with
// BenchmarkChannelBaseline, one buffered channel send and receive per
// result, the least an in-process event could cost.
func BenchmarkSim10kTrials100Steps(b *testing.B) {
	const trials, steps = 10_000, 100
	ctx := context.Background()
	specs := make([]hone.StartSpec, trials)
	for i := range specs {
		specs[i] = hone.StartSpec{
			TrialID: fmt.Sprintf("%08x", i),
			Config:  hone.Config{"rate": 0.01 + float64(i%100)/1000, "asymptote": float64(i%7) / 10},
		}
	}
	model := sim.Curve{Noise: 0.01, MaxIterations: steps}.New
	results := 0
	for b.Loop() {
		ex := sim.New(model)
		for _, s := range specs {
			if err := ex.Start(s); err != nil {
				b.Fatal(err)
			}
		}
		for {
			ev, err := ex.Next(ctx)
			if errors.Is(err, hone.ErrIdle) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if ev.Kind != hone.EventResult {
				continue
			}
			results++
			d := hone.DirectContinue
			if ev.Done {
				d = hone.DirectStop
			}
			if err := ex.Direct(ev.TrialID, d); err != nil {
				b.Fatal(err)
			}
		}
	}
	if results != b.N*trials*steps && b.N > 0 {
		b.Fatalf("%d results in %d runs, want %d per run", results, b.N, trials*steps)
	}
	b.ReportMetric(float64(results)/b.Elapsed().Seconds(), "results/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(results), "ns/result")
}

// BenchmarkChannelBaseline is the yardstick of BenchmarkSim10kTrials100Steps:
// one buffered channel send and receive per result.
func BenchmarkChannelBaseline(b *testing.B) {
	ch := make(chan hone.Event, 1)
	n := 0
	for b.Loop() {
		ch <- hone.Event{Kind: hone.EventResult}
		<-ch
		n++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/result")
}

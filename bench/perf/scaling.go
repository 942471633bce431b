package perf

import (
	"context"
	"fmt"
	"time"
)

// Variants of the scaling shape.
const (
	scalingSimTrials     = "sim-trials"     // trials/s, 1 result per trial, sim executor
	scalingSimResults    = "sim-results"    // results/s, ScalingResultsPerTrial per trial, sim executor
	scalingInprocResults = "inproc-results" // the same on the inproc executor
)

// scalingPoint is what the scaling shape measured for one variant at one
// number of trials: hone's rates and the floor's beside them.
type scalingPoint struct {
	variant    string
	trials     int
	hone, base []float64
}

// scaling measures throughput against the number of trials, with FIFO:
// trials/s of one-result sim trials against the floor loop of the
// bookkeeping shape, and results/s of sim trials (and inproc ones, up to
// ScalingInprocMax trials) reporting ScalingResultsPerTrial results each
// against the channel baseline of the results shape, every point with
// its own baseline measured beside it. It reuses those shapes'
// measurements, so every point checks what it counted as they do.
func (b *bench) scaling(ctx context.Context) error {
	for _, variant := range []string{scalingSimTrials, scalingSimResults, scalingInprocResults} {
		if !b.want(ShapeScaling, variant) {
			continue
		}
		for _, n := range b.cfg.ScalingTrials {
			if variant == scalingInprocResults && n > b.cfg.ScalingInprocMax {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := b.scalingPoint(ctx, variant, n); err != nil {
				return fmt.Errorf("%s, %d trials: %w", variant, n, err)
			}
		}
	}
	return nil
}

// scalingPoint measures one variant at n trials, hone and its baseline
// alternately, and adds its row.
func (b *bench) scalingPoint(ctx context.Context, variant string, n int) error {
	conc, per := b.cfg.Concurrency, b.cfg.ScalingResultsPerTrial
	pt := scalingPoint{variant: variant, trials: n}
	var observed, expected int64
	var wall time.Duration
	for rep := range b.cfg.Reps {
		b.logf("scaling %s: repetition %d of %d: %d trials", variant, rep+1, b.cfg.Reps, n)
		if variant == scalingSimTrials {
			rate, obs, exp, err := b.simBookkeeping(ctx, n, conc, false)
			if err != nil {
				return err
			}
			floor, err := floorRate(n)
			if err != nil {
				return err
			}
			pt.hone, pt.base = append(pt.hone, rate), append(pt.base, floor)
			observed, expected = obs, exp
			continue
		}
		ex := execSim
		if variant == scalingInprocResults {
			ex = execInproc
		}
		r, err := b.resultsExperiment(ctx, ex, schedFIFO, n, per, false, false)
		if err != nil {
			return err
		}
		pt.hone = append(pt.hone, float64(r.results)/r.wall.Seconds())
		pt.base = append(pt.base, channelSends(int(r.results)))
		observed, expected, wall = r.results, r.reported, r.wall
	}
	row := Row{
		Shape: ShapeScaling, Higher: true,
		Value: median(pt.hone), Samples: pt.hone,
		Base: median(pt.base), BaseSamples: pt.base,
		Observed: observed, Expected: expected,
	}
	if variant == scalingSimTrials {
		row.Name = fmt.Sprintf("sim executor, fifo, %d trials × 1 result, %d at a time", n, conc)
		row.Unit = "trials/s"
		row.BaseName = "floor: per trial a map insert + channel send/receive + map update"
	} else {
		row.Name = fmt.Sprintf("%s, fifo, %d trials × %s, %d at a time", executorName(variant), n, plural(per, "result"), conc)
		row.Unit = "results/s"
		row.BaseName = "an empty struct sent over a buffered channel to another goroutine, per result"
		row.Notes = []string{fmt.Sprintf("%d results in %v (last repetition)", observed, wall.Round(time.Millisecond))}
	}
	b.add(row)
	b.scalingPoints = append(b.scalingPoints, pt)
	return nil
}

// executorName names the executor of a scaling variant as the results
// shape's rows do.
func executorName(variant string) string {
	if variant == scalingInprocResults {
		return execInproc + " executor"
	}
	return execSim + " executor"
}

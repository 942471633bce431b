package perf

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
)

// rayBookkeeping is Ray's bookkeeping release test.
const rayBookkeeping = "10,000 trials × 1 result of 1 s on 16 CPUs: ideal 625 s, bar 800 s, observed 715 s " +
	"(≈110 trials/s of overhead budget)"

// bookkeeping measures shape 1: n trials × 1 result through runner.Run on
// the sim executor, against the floor loop.
func (b *bench) bookkeeping(ctx context.Context) error {
	n, conc := b.cfg.Trials, b.cfg.Concurrency
	var honeRates, floorRates, aloneRates []float64
	var observed, expected int64
	for rep := range b.cfg.Reps {
		b.logf("bookkeeping: repetition %d of %d: %d sim trials", rep+1, b.cfg.Reps, n)
		rate, obs, exp, err := b.simBookkeeping(ctx, n, conc, rep == 0)
		if err != nil {
			return err
		}
		honeRates = append(honeRates, rate)
		observed, expected = obs, exp

		floor, err := floorRate(n)
		if err != nil {
			return err
		}
		floorRates = append(floorRates, floor)

		start := time.Now()
		results, err := driveAlone(ctx, sim.New(sim.Curve{MaxIterations: 1}.New), n, conc, hone.Config{"rate": 0.1}, b.scratch)
		if err != nil {
			return fmt.Errorf("sim alone: %w", err)
		}
		if results != n {
			return fmt.Errorf("sim alone: %d results, want %d", results, n)
		}
		aloneRates = append(aloneRates, float64(n)/time.Since(start).Seconds())
	}
	b.add(Row{
		Shape: ShapeBookkeeping, Name: fmt.Sprintf("sim, %d trials × 1 result, %d at a time", n, conc), Unit: "trials/s",
		Value: median(honeRates), Samples: honeRates, Higher: true,
		BaseName: "floor: per trial a map insert + channel send/receive + map update", Base: median(floorRates), BaseSamples: floorRates,
		Target:   atLeast("≥ 20,000 trials/s", 20_000),
		Ray:      rayBookkeeping,
		Observed: observed, Expected: expected,
		Notes: []string{
			fmt.Sprintf("the sim executor driven alone by the simplest loop (no controller, journal or directories): %s trials/s",
				formatNum(median(aloneRates))),
			"hone's figure is everything runner.Run does per trial: the searcher's sample, the controller's steps and the " +
				"scheduler's choice, the journal (fsynced once a second), the executor, and whatever files they create",
		},
	})
	return nil
}

// simBookkeeping runs one experiment of n one-result sim trials and
// returns trials per second, the results hone saw and the results the
// trials reported.
func (b *bench) simBookkeeping(ctx context.Context, n, conc int, first bool) (float64, int64, int64, error) {
	dir, err := b.freshDir("bookkeeping")
	if err != nil {
		return 0, 0, 0, err
	}
	defer removeDir(dir)
	var steps atomic.Int64
	exp, err := simExperiment("bookkeeping", n, conc, nil, nil)
	if err != nil {
		return 0, 0, 0, err
	}
	opts, err := runOpts(dir, sim.New(countingModel(sim.Curve{MaxIterations: 1}.New, &steps)), conc, false)
	if err != nil {
		return 0, 0, 0, err
	}
	var d time.Duration
	err = b.prof.profiled("bookkeeping", first, func() error {
		out, dd, err := runTimed(ctx, exp, opts)
		if err != nil {
			return err
		}
		if len(out.Trials) != n {
			return fmt.Errorf("%d trials, want %d", len(out.Trials), n)
		}
		d = dd
		return nil
	})
	if err != nil {
		return 0, 0, 0, err
	}
	seen, err := countResults(dir)
	if err != nil {
		return 0, 0, 0, err
	}
	if seen != steps.Load() || seen != int64(n) {
		return 0, 0, 0, fmt.Errorf("hone saw %d results, the trials reported %d, want %d", seen, steps.Load(), n)
	}
	return float64(n) / d.Seconds(), seen, steps.Load(), nil
}

// floorRecord is the least a controller must keep per trial.
type floorRecord struct {
	id     string
	status uint8
	iter   int
	last   float64
}

// floorEvent is a trial's one result.
type floorEvent struct {
	id   string
	loss float64
}

// floorBookkeeping is the physical floor of shape 1: for each of n trials,
// a fresh id, a map insert of its record, one buffered channel send and
// receive of its result, and a map lookup to update the record.
func floorBookkeeping(n int) error {
	recs := make(map[string]*floorRecord)
	ch := make(chan floorEvent, 16)
	for i := range n {
		// 8 hex digits, like trial ids; an odd multiplier modulo 2³² is a
		// bijection, so the ids are distinct.
		id := strconv.FormatUint(uint64(uint32(i)*0x9e3779b1)|1<<32, 16)[1:]
		recs[id] = &floorRecord{id: id}
		ch <- floorEvent{id: id, loss: float64(i)}
		ev := <-ch
		r := recs[ev.id]
		r.iter++
		r.last = ev.loss
		r.status = 2
	}
	if len(recs) != n {
		return fmt.Errorf("floor loop: %d records, want %d", len(recs), n)
	}
	return nil
}

// floorRate times floorBookkeeping over n trials and returns trials per
// second.
func floorRate(n int) (float64, error) {
	start := time.Now()
	if err := floorBookkeeping(n); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// driveAlone runs n trials on ex, conc at a time, with the simplest loop
// that answers its events (continue, stop after the last result): what the
// executor alone costs. Trials start from config and dir. It returns the
// number of results.
func driveAlone(ctx context.Context, ex hone.Executor, n, conc int, config hone.Config, dir string) (int, error) {
	defer ex.Close()
	started := 0
	start := func() error {
		id := strconv.Itoa(started)
		started++
		return ex.Start(hone.StartSpec{TrialID: id, Config: config.Clone(), Dir: dir})
	}
	for started < conc && started < n {
		if err := start(); err != nil {
			return 0, err
		}
	}
	results := 0
	for {
		ev, err := ex.Next(ctx)
		if errors.Is(err, hone.ErrIdle) {
			break
		}
		if err != nil {
			return 0, err
		}
		switch ev.Kind {
		case hone.EventResult:
			results++
			d := hone.DirectContinue
			if ev.Done {
				d = hone.DirectStop
			}
			if err := ex.Direct(ev.TrialID, d); err != nil {
				return 0, err
			}
		case hone.EventExited:
			if ev.Cause != nil {
				return 0, fmt.Errorf("trial %s: %w", ev.TrialID, ev.Cause)
			}
			if started < n {
				if err := start(); err != nil {
					return 0, err
				}
			}
		}
	}
	return results, nil
}

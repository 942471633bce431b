package perf

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/bench/internal/benchutil"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/scheduler/fifo"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/trial"
)

// rayPausing is Ray's frequent-pausing release test.
const rayPausing = "a scheduler that always PAUSEs, an 80 MB checkpoint per report: must survive 10 min (no rate published)"

// pausingConcurrency is how many trials of the pausing shape run at once;
// the others wait PAUSED, so every pause is followed by a resume.
const pausingConcurrency = 2

// alwaysPause pauses every trial after every result; FIFO brings the
// oldest paused trial back.
type alwaysPause struct{ fifo.Scheduler }

// OnResult returns PAUSE.
func (alwaysPause) OnResult(hone.Control, *hone.Trial, *hone.Result) hone.Decision { return hone.Pause }

// pausing measures shape 6: pause/resume cycles per second with a
// checkpoint of PauseBytes per report and a durable store, against
// writing and fsyncing the same bytes.
func (b *bench) pausing(ctx context.Context) error {
	size, trials, reports := b.cfg.PauseBytes, b.cfg.PauseTrials, b.cfg.PauseReports
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i*7 + i>>8)
	}
	cycles := int64(trials * reports)
	rawCount := int(min(cycles, 10))
	var honeRates, rawRates []float64
	var observed, expected int64
	for rep := range b.cfg.Reps {
		b.logf("pausing: repetition %d of %d: %d trials × %d reports of %s", rep+1, b.cfg.Reps, trials, reports, mb(size))
		rate, obs, exp, err := b.pausingOnce(ctx, rep == 0, buf)
		if err != nil {
			return err
		}
		honeRates = append(honeRates, rate)
		observed, expected = obs, exp

		raw, err := b.pausingRaw(size, rawCount, buf)
		if err != nil {
			return err
		}
		rawRates = append(rawRates, raw)
	}
	b.add(Row{
		Shape: ShapePausing, Name: fmt.Sprintf("always PAUSE, a %s checkpoint per report, durable store, %d trials × %d reports, %d at a time",
			mb(size), trials, reports, pausingConcurrency), Unit: "cycles/s",
		Value: median(honeRates), Samples: honeRates, Higher: true,
		BaseName: fmt.Sprintf("write %s to a new file + fsync, %d writers at once", mb(size), pausingConcurrency), Base: median(rawRates), BaseSamples: rawRates,
		Target:   Target{Text: "none set"},
		Ray:      rayPausing,
		Observed: observed, Expected: expected,
		Notes: []string{fmt.Sprintf("a cycle: the trial writes the checkpoint and reports it, hone commits it (fsync), stops the trial, "+
			"restarts it, and the trial reads the checkpoint back; %s MB/s of checkpoints", formatNum(median(honeRates)*float64(size)/(1<<20)))},
	})
	return nil
}

// pausingRaw writes count files of size bytes, each fsynced,
// pausingConcurrency at a time, and returns files per second.
func (b *bench) pausingRaw(size int64, count int, buf []byte) (float64, error) {
	dir, err := b.freshDir("pausing-raw")
	if err != nil {
		return 0, err
	}
	defer removeDir(dir)
	var next atomic.Int64
	errs := make([]error, pausingConcurrency)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range pausingConcurrency {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(count) {
					return
				}
				if err := writeFile(filepath.Join(dir, strconv.FormatInt(i, 10)), size, buf, true); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	rate := float64(count) / time.Since(start).Seconds()
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return rate, nil
}

// pausingOnce runs the pausing experiment once and returns cycles per
// second, the results hone saw, and the results the trials reported.
func (b *bench) pausingOnce(ctx context.Context, first bool, buf []byte) (float64, int64, int64, error) {
	size, trials, reports := b.cfg.PauseBytes, b.cfg.PauseTrials, b.cfg.PauseReports
	dir, err := b.freshDir("pausing")
	if err != nil {
		return 0, 0, 0, err
	}
	defer removeDir(dir)
	sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, trials, nil, seed)
	if err != nil {
		return 0, 0, 0, err
	}
	exp := &hone.Experiment{Name: "pausing", Metric: "loss", Mode: hone.Min, Searcher: sr, Scheduler: alwaysPause{},
		MaxConcurrentTrials: pausingConcurrency, Seed: seed,
		Checkpoint: hone.CheckpointConfig{NumToKeep: 2}}
	var reported, restores atomic.Int64
	opts, err := runOpts(dir, inproc.NewFunc(pausingFunc(size, reports, buf, &reported, &restores)), pausingConcurrency, true)
	if err != nil {
		return 0, 0, 0, err
	}
	var d time.Duration
	err = b.prof.profiled("pausing", first, func() error {
		out, dd, err := runTimed(ctx, exp, opts)
		if err != nil {
			return err
		}
		for _, t := range out.Trials {
			if t.LastResult == nil || t.LastResult.TrainingIteration != reports {
				return fmt.Errorf("trial %s ended before iteration %d", t.ID, reports)
			}
		}
		d = dd
		return nil
	})
	if err != nil {
		return 0, 0, 0, err
	}
	want := int64(trials * reports)
	seen, err := countResults(dir)
	if err != nil {
		return 0, 0, 0, err
	}
	if seen != reported.Load() || seen != want {
		return 0, 0, 0, fmt.Errorf("hone saw %d results, the trials reported %d, want %d", seen, reported.Load(), want)
	}
	if got, wantR := restores.Load(), int64(trials*(reports-1)); got != wantR {
		return 0, 0, 0, fmt.Errorf("%d restores from a checkpoint, want %d (one after every pause)", got, wantR)
	}
	return float64(seen) / d.Seconds(), seen, reported.Load(), nil
}

// pausingFunc is the trainable of the pausing shape: each report carries a
// checkpoint of size bytes whose first 8 bytes are the iteration; a
// restored trial reads its whole checkpoint back and checks that
// iteration against the one hone restores it at.
func pausingFunc(size int64, reports int, buf []byte, reported, restores *atomic.Int64) trial.Func {
	return func(ctx context.Context, s trial.Session) error {
		start := s.Iteration()
		if cp := s.Checkpoint(); cp != "" {
			it, err := readCheckpoint(filepath.Join(cp, checkpointFile), size)
			if err != nil {
				return err
			}
			if it != start {
				return fmt.Errorf("restored at iteration %d from a checkpoint of iteration %d", start, it)
			}
			restores.Add(1)
		}
		for i := start + 1; i <= reports; i++ {
			dir, err := s.StagingDir()
			if err != nil {
				return fmt.Errorf("staging: %w", err)
			}
			if err := writeCheckpoint(filepath.Join(dir, checkpointFile), i, size, buf); err != nil {
				return fmt.Errorf("checkpoint: %w", err)
			}
			opts := []trial.ReportOption{trial.WithCheckpoint(dir)}
			if i == reports {
				opts = append(opts, trial.Done())
			}
			reported.Add(1)
			if err := s.Report(trial.Metrics{"loss": 1 / float64(i)}, opts...); err != nil {
				return err
			}
		}
		return nil
	}
}

// writeCheckpoint writes a checkpoint file of size bytes: the iteration
// (8 bytes, little endian), then buf repeated.
func writeCheckpoint(p string, iter int, size int64, buf []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	var head [8]byte
	binary.LittleEndian.PutUint64(head[:], uint64(iter))
	return benchutil.WriteClose(f, false, func(f *os.File) error {
		if _, err := f.Write(head[:]); err != nil {
			return err
		}
		return benchutil.Repeat(f, size-8, buf)
	})
}

// readCheckpoint reads a whole checkpoint file, checks its size and
// returns its iteration.
func readCheckpoint(p string, size int64) (int, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var head [8]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return 0, fmt.Errorf("read checkpoint: %w", err)
	}
	rest, err := io.Copy(io.Discard, f)
	if err != nil {
		return 0, fmt.Errorf("read checkpoint: %w", err)
	}
	if rest+8 != size {
		return 0, fmt.Errorf("checkpoint of %d bytes, want %d", rest+8, size)
	}
	return int(binary.LittleEndian.Uint64(head[:])), nil
}

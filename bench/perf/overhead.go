package perf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/bench/process"
	hproc "github.com/hone-tune/hone/executor/process"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/wire"
)

// rayOverhead is Ray's bookkeeping release test, as an overhead over the
// ideal time.
const rayOverhead = "bookkeeping release test, 10,000 trials × 1 s on 16 CPUs: ideal 625 s, bar 800 s (28% overhead), " +
	"observed 715 s (14%)"

// overhead measures the process executor's overhead on one-second trials:
// n subprocess trials (proctrial sleep), each sleeping for
// Config.OverheadSleep and reporting one result, conc at a time, through
// runner.Run with FIFO; against the same program run by hand conc at a
// time with os/exec. Both figures are (wall − ideal) ÷ ideal in percent,
// ideal being ceil(n/conc) sleeps.
func (b *bench) overhead(ctx context.Context) error {
	n, conc, sleep := b.cfg.OverheadTrials, b.cfg.OverheadConcurrency, b.cfg.OverheadSleep
	bin := filepath.Join(b.scratch, "proctrial")
	b.logf("overhead: building the trial program")
	if err := process.BuildTrial(ctx, "", bin); err != nil {
		return fmt.Errorf("build the trial program: %w", err)
	}
	argv := []string{bin, "sleep", sleep.String()}
	ideal := time.Duration((n+conc-1)/conc) * sleep
	pct := func(wall time.Duration) float64 { return 100 * (wall - ideal).Seconds() / ideal.Seconds() }

	var honePct, basePct []float64
	var honeWalls, baseWalls []time.Duration
	var observed int64
	for rep := range b.cfg.OverheadReps {
		b.logf("overhead: repetition %d of %d: %d trials of %v through hone, %d at a time (ideal %v)",
			rep+1, b.cfg.OverheadReps, n, sleep, conc, ideal)
		wall, seen, err := b.processSleepers(ctx, argv, n, conc, rep == 0)
		if err != nil {
			return err
		}
		honeWalls, honePct, observed = append(honeWalls, wall), append(honePct, pct(wall)), seen

		b.logf("overhead: repetition %d of %d: the same %d trials run by hand, %d at a time", rep+1, b.cfg.OverheadReps, n, conc)
		wall, err = runByHand(ctx, argv, n, conc)
		if err != nil {
			return err
		}
		baseWalls, basePct = append(baseWalls, wall), append(basePct, pct(wall))
	}
	hw, bw := medianDuration(honeWalls), medianDuration(baseWalls)
	b.add(Row{
		Shape: ShapeOverhead,
		Name:  fmt.Sprintf("process executor, %d trials × %v sleep + 1 result, %d at a time (ideal %v)", n, sleep, conc, ideal),
		Unit:  "% over ideal",
		Value: median(honePct), Samples: honePct,
		BaseName: "the trial program run by hand with os/exec, as many at a time",
		Base:     median(basePct), BaseSamples: basePct,
		Target:   atMost("≤ 1% of ideal", 1),
		Ray:      rayOverhead,
		Observed: observed, Expected: int64(n),
		Notes: []string{
			fmt.Sprintf("wall: hone %.2f s, by hand %.2f s, ideal %.2f s; hone ÷ by hand %.4f (wall)",
				hw.Seconds(), bw.Seconds(), ideal.Seconds(), hw.Seconds()/bw.Seconds()),
			fmt.Sprintf("hone's overhead beyond the by-hand run: %.2f%% of ideal (%.1f ms per wave of %d trials)",
				100*(hw-bw).Seconds()/ideal.Seconds(), float64((hw-bw).Microseconds())/1000/float64(ideal/sleep), conc),
			fmt.Sprintf("figures are medians of %s (-overhead-reps; default %d, as each run takes about its ideal time)",
				plural(b.cfg.OverheadReps, "repetition"), DefaultConfig().OverheadReps),
			"hone runs every trial through runner.Run: random search, FIFO, the journal, a local store without fsync, the process " +
				"executor (a process group, a socket, stdout and stderr logs per trial)",
		},
	})
	return nil
}

// processSleepers runs one experiment of n trials of argv on the process
// executor, conc at a time, with FIFO. Every trial must end TERMINATED
// with exactly one result. It returns the wall time of runner.Run and the
// results hone received.
func (b *bench) processSleepers(ctx context.Context, argv []string, n, conc int, first bool) (time.Duration, int64, error) {
	dir, err := b.freshDir("overhead")
	if err != nil {
		return 0, 0, err
	}
	defer removeDir(dir)
	sr, err := random.New(space.Space{"u": space.Uniform(0, 1)}, n, nil, seed)
	if err != nil {
		return 0, 0, fmt.Errorf("searcher: %w", err)
	}
	ex, err := hproc.New(hproc.Options{Command: argv, Dir: dir})
	if err != nil {
		return 0, 0, fmt.Errorf("process executor: %w", err)
	}
	opts, err := runOpts(dir, ex, conc, false)
	if err != nil {
		return 0, 0, err
	}
	exp := &hone.Experiment{Name: "overhead", Metric: "loss", Mode: hone.Min, Searcher: sr, MaxConcurrentTrials: conc, Seed: seed}
	var wall time.Duration
	err = b.prof.profiled("overhead", first, func() error {
		out, d, err := runTimed(ctx, exp, opts)
		if err != nil {
			return err
		}
		if len(out.Trials) != n {
			return fmt.Errorf("%d trials, want %d", len(out.Trials), n)
		}
		for _, t := range out.Trials {
			if t.LastResult == nil || t.LastResult.TrainingIteration != 1 || !t.LastResult.Done {
				return fmt.Errorf("trial %s: last result %+v, want its one result, done", t.ID, t.LastResult)
			}
		}
		wall = d
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	seen, err := countResults(dir)
	if err != nil {
		return 0, 0, err
	}
	if seen != int64(n) {
		return 0, 0, fmt.Errorf("hone saw %d results, want %d", seen, n)
	}
	return wall, seen, nil
}

// runByHand runs argv n times, conc at a time, with os/exec and without
// hone (no HONE_* variables in the environment, so a trial.Main program
// prints its report as a wire.ReportPrefix line), and returns the wall
// time. Every run must exit with status 0 after printing exactly one
// report.
func runByHand(ctx context.Context, argv []string, n, conc int) (time.Duration, error) {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HONE_") {
			env = append(env, kv)
		}
	}
	var next atomic.Int64
	errs := make([]error, conc)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range conc {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
				cmd.Env = env
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Run(); err != nil {
					errs[w] = fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, bytes.TrimSpace(stderr.Bytes()))
					return
				}
				if got := strings.Count(stdout.String(), wire.ReportPrefix); got != 1 {
					errs[w] = fmt.Errorf("%s printed %d reports, want 1:\n%s", strings.Join(argv, " "), got, &stdout)
					return
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return 0, fmt.Errorf("by hand: %w", err)
	}
	return wall, nil
}

// medianDuration returns the median of s (0 when empty).
func medianDuration(s []time.Duration) time.Duration {
	if len(s) == 0 {
		return 0
	}
	f := make([]float64, len(s))
	for i, d := range s {
		f[i] = float64(d)
	}
	return time.Duration(median(f))
}

package perf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/scheduler/asha"
	"github.com/hone-tune/hone/scheduler/pbt"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/trial"
)

// rayResults is Ray's guidance and bar for result throughput on one node.
const rayResults = "about 1,000 results/s on one node; single-node release test 96 trials × 50 results/s × 100 s " +
	"in ≤ 120 s (ideal 100 s), i.e. ≥ 4,000 results/s"

// Scheduler names of the results shape.
const (
	schedFIFO = "fifo"
	schedASHA = "asha"
	schedPBT  = "pbt"
)

// Executor names of the results shape.
const (
	execInproc = "inproc"
	execSim    = "sim"
)

// results measures shape 2: every executor × scheduler variant that is
// selected.
func (b *bench) results(ctx context.Context) error {
	for _, ex := range []string{execInproc, execSim} {
		for _, sc := range []string{schedFIFO, schedASHA, schedPBT} {
			variant := ex + "-" + sc
			if !b.want(ShapeResults, variant) {
				continue
			}
			if err := b.resultsVariant(ctx, ex, sc); err != nil {
				return fmt.Errorf("%s: %w", variant, err)
			}
		}
	}
	return nil
}

// executorAlone drives the executor of the FIFO variant alone and returns
// results per second.
func (b *bench) executorAlone(ctx context.Context, ex string, n, per, conc int) (float64, error) {
	var reported atomic.Int64
	var executor hone.Executor
	if ex == execSim {
		executor = sim.New(countingModel(sim.Curve{MaxIterations: per}.New, &reported))
	} else {
		executor = inproc.NewFunc(reportingFunc(per, 0, &reported))
	}
	start := time.Now()
	results, err := driveAlone(ctx, executor, n, conc, hone.Config{"x": 0.5, "rate": 0.1}, b.scratch)
	if err != nil {
		return 0, fmt.Errorf("%s alone: %w", ex, err)
	}
	rate := float64(results) / time.Since(start).Seconds()
	if int64(results) != reported.Load() || results != n*per {
		return 0, fmt.Errorf("%s alone: %d results, %d reported, want %d", ex, results, reported.Load(), n*per)
	}
	return rate, nil
}

// trialsFor returns the number of trials of the results shape with
// scheduler sc.
func (b *bench) trialsFor(sc string) int {
	if sc == schedPBT {
		return b.cfg.PBTTrials
	}
	return b.cfg.ResultTrials
}

// resultsRun is what one run of a results variant measured.
type resultsRun struct {
	results  int64 // results hone saw
	reported int64 // results the trainables reported
	saves    int64 // checkpoints the trials saved
	wall     time.Duration
	notes    []string
}

// resultsVariant measures one executor × scheduler variant, alternating
// with the channel baseline.
func (b *bench) resultsVariant(ctx context.Context, ex, sc string) error {
	n, per, conc := b.trialsFor(sc), b.cfg.ResultsPerTrial, b.cfg.Concurrency
	variant := ex + "-" + sc
	var honeRates, chanRates, aloneRates, cbRates, floorRates []float64
	var last resultsRun
	for rep := range b.cfg.Reps {
		b.logf("results %s: repetition %d of %d: %d trials × up to %d results", variant, rep+1, b.cfg.Reps, n, per)
		r, err := b.resultsOnce(ctx, ex, sc, rep == 0, false)
		if err != nil {
			return err
		}
		honeRates = append(honeRates, float64(r.results)/r.wall.Seconds())
		last = r
		chanRates = append(chanRates, channelSends(int(r.results)))
		if r.saves > 0 {
			d, err := b.savesByHand(n, r.saves, saveWorkers(ex, conc))
			if err != nil {
				return err
			}
			floorRates = append(floorRates, float64(r.results)/d.Seconds())
		}
		if sc == schedFIFO {
			rate, err := b.executorAlone(ctx, ex, n, per, conc)
			if err != nil {
				return err
			}
			aloneRates = append(aloneRates, rate)
			cb, err := b.resultsOnce(ctx, ex, sc, false, true)
			if err != nil {
				return err
			}
			cbRates = append(cbRates, float64(cb.results)/cb.wall.Seconds())
		}
	}
	target := atLeast("≥ 1,000,000 results/s", 1e6)
	if sc != schedFIFO {
		target = atLeast("≥ 200,000 results/s", 2e5)
	}
	name := fmt.Sprintf("%s executor, %s, %d trials × up to %d results, %d at a time", ex, sc, n, per, conc)
	notes := append([]string{fmt.Sprintf("%d results in %v (last repetition)", last.results, last.wall.Round(time.Millisecond))}, last.notes...)
	if len(aloneRates) > 0 {
		notes = append(notes, fmt.Sprintf("the %s executor driven alone by the simplest loop (no controller, journal or trial directories), "+
			"same trials and results: %s results/s", ex, formatNum(median(aloneRates))),
			fmt.Sprintf("the same experiment with one callback (counting results): %s results/s (the runner hands the journal "+
				"to the operating system before it calls callbacks, so each result then costs a write(2))", formatNum(median(cbRates))))
	}
	if len(floorRates) > 0 {
		notes = append(notes, fmt.Sprintf("the run's %d checkpoint saves alone, done by hand over %d trial directories from %s "+
			"(mkdir a staging directory, write the state file, rename it into the trial directory; no fsync, as in the run): "+
			"its results in that time would be %s results/s, the most any controller saving these checkpoints on this disk could reach; hone ÷ that: %s",
			last.saves, n, plural(saveWorkers(ex, conc), "goroutine"), formatNum(median(floorRates)), formatRatio(median(honeRates)/median(floorRates))))
	}
	b.add(Row{
		Shape: ShapeResults, Name: name, Unit: "results/s",
		Value: median(honeRates), Samples: honeRates, Higher: true,
		BaseName: "an empty struct sent over a buffered channel to another goroutine, per result", Base: median(chanRates), BaseSamples: chanRates,
		Target: target, Ray: rayResults,
		Observed: last.results, Expected: last.reported,
		Notes: notes,
	})
	return nil
}

// resultsOnce runs one experiment of the variant at the sizes of the
// configuration and checks that hone saw (journaled) every result the
// trainables reported. withCallback adds a callback counting results,
// which must see them all too; the CPU profile is of the first run without
// one.
func (b *bench) resultsOnce(ctx context.Context, ex, sc string, first, withCallback bool) (resultsRun, error) {
	return b.resultsExperiment(ctx, ex, sc, b.trialsFor(sc), b.cfg.ResultsPerTrial, first, withCallback)
}

// resultsExperiment runs one experiment of n trials × up to per results
// on executor ex with scheduler sc, Concurrency at a time, as resultsOnce
// describes.
func (b *bench) resultsExperiment(ctx context.Context, ex, sc string, n, per int, first, withCallback bool) (resultsRun, error) {
	conc := b.cfg.Concurrency
	dir, err := b.freshDir("results-" + ex + "-" + sc)
	if err != nil {
		return resultsRun{}, err
	}
	defer removeDir(dir)

	// The mutated key: x for inproc trials, the curve's rate for sim ones.
	sp, key := space.Space{"x": space.Uniform(0, 1)}, "x"
	if ex == execSim {
		sp, key = curveSpace(), "rate"
	}
	var sched hone.Scheduler
	var pbtSched *pbt.Scheduler
	ckEvery := 0
	switch sc {
	case schedASHA:
		s, err := asha.New(ashaConfig(per))
		if err != nil {
			return resultsRun{}, err
		}
		sched = s
	case schedPBT:
		pc := pbtConfig(per, key)
		s, err := pbt.New(pc)
		if err != nil {
			return resultsRun{}, err
		}
		sched, pbtSched = s, s
		ckEvery = int(pc.PerturbationInterval)
	}
	sr, err := random.New(sp, n, nil, seed)
	if err != nil {
		return resultsRun{}, fmt.Errorf("searcher: %w", err)
	}
	exp := &hone.Experiment{Name: "results", Metric: "loss", Mode: hone.Min, Searcher: sr, Scheduler: sched,
		MaxConcurrentTrials: conc, Seed: seed}
	var cnt *resultCounter
	if withCallback {
		cnt = &resultCounter{}
		exp.Callbacks = []hone.Callback{cnt}
	}
	var reported atomic.Int64
	var executor hone.Executor
	if ex == execSim {
		executor = sim.New(countingModel(sim.Curve{MaxIterations: per}.New, &reported))
	} else {
		executor = inproc.NewFunc(reportingFunc(per, ckEvery, &reported))
	}
	opts, err := runOpts(dir, executor, conc, false)
	if err != nil {
		return resultsRun{}, err
	}
	var r resultsRun
	err = b.prof.profiled("results-"+ex+"-"+sc, first, func() error {
		_, d, err := runTimed(ctx, exp, opts)
		r.wall = d
		return err
	})
	if err != nil {
		return resultsRun{}, err
	}
	r.reported = reported.Load()
	if r.results, err = countResults(dir); err != nil {
		return resultsRun{}, err
	}
	if r.saves, err = countInputs(dir, hone.EventSaved); err != nil {
		return resultsRun{}, fmt.Errorf("count saves: %w", err)
	}
	if cnt != nil && cnt.n != r.results {
		return resultsRun{}, fmt.Errorf("the callback saw %d results, the journal has %d", cnt.n, r.results)
	}
	if r.results != r.reported {
		return resultsRun{}, fmt.Errorf("hone saw %d results, the trainables reported %d", r.results, r.reported)
	}
	if sc == schedFIFO && r.results != int64(n*per) {
		return resultsRun{}, fmt.Errorf("FIFO: %d results, want %d trials × %d", r.results, n, per)
	}
	if pbtSched != nil {
		st := pbtSched.Stats()
		r.notes = append(r.notes, fmt.Sprintf("PBT: population %d (every trial, time-multiplexed on %d slots), perturbation every %d iterations; "+
			"%d checkpoints scheduled, %d exploits, %d skipped", n, conc, ckEvery, st.Checkpoints, st.Perturbations, st.Skipped))
		if n < b.cfg.ResultTrials {
			r.notes = append(r.notes, fmt.Sprintf("fewer trials than FIFO and ASHA (%d): -pbt-trials sets the population", b.cfg.ResultTrials))
		}
	}
	return r, nil
}

// ashaConfig is ASHA over per iterations: grace period per/10, η = 3, one
// bracket (rungs at 10, 30, 90 of 100), so that a trial reports at least
// a tenth of its results before it can be stopped.
func ashaConfig(per int) asha.Config {
	return asha.Config{TimeAttr: hone.FieldTrainingIteration, MaxT: float64(per), GracePeriod: float64(max(1, per/10)),
		ReductionFactor: 3, Brackets: 1, StopLastTrials: true}
}

// pbtConfig is PBT with Ray's defaults but for the time attribute
// (training_iteration) and the perturbation interval (a quarter of the
// trial), mutating key. The whole population is every trial, time-
// multiplexed on the free slots.
func pbtConfig(per int, key string) pbt.Config {
	c := pbt.DefaultConfig()
	c.TimeAttr = hone.FieldTrainingIteration
	c.PerturbationInterval = float64(max(1, per/4))
	lo, hi := 0.0, 1.0
	if key == "rate" {
		lo, hi = 0.01, 0.5
	}
	c.Mutations = map[string]any{key: space.Uniform(lo, hi)}
	return c
}

// reportingFunc is a function trainable that reports per results as fast
// as it can, loss = (1 + x) / iteration, counting each report in
// reported. With ckEvery > 0 it reports a tiny checkpoint (one small file)
// every ckEvery iterations, so that a paused or exploited trial restarts
// from there (PBT needs it).
func reportingFunc(per, ckEvery int, reported *atomic.Int64) trial.Func {
	return func(ctx context.Context, s trial.Session) error {
		x, _ := hone.Number(s.Config()["x"])
		for i := s.Iteration() + 1; i <= per; i++ {
			var opts []trial.ReportOption
			if i == per {
				opts = append(opts, trial.Done())
			} else if ckEvery > 0 && i%ckEvery == 0 {
				dir, err := s.StagingDir()
				if err != nil {
					return fmt.Errorf("staging: %w", err)
				}
				if err := os.WriteFile(filepath.Join(dir, "iteration"), []byte(strconv.Itoa(i)), 0o644); err != nil {
					return fmt.Errorf("checkpoint: %w", err)
				}
				opts = append(opts, trial.WithCheckpoint(dir))
			}
			reported.Add(1)
			if err := s.Report(trial.Metrics{"loss": (1 + x) / float64(i)}, opts...); err != nil {
				return err
			}
		}
		return nil
	}
}

// channelSends returns how many empty-struct sends per second a buffered
// channel carries from one goroutine to another, over n sends.
func channelSends(n int) float64 {
	n = max(n, 1)
	ch := make(chan struct{}, 128)
	done := make(chan struct{})
	go func() {
		for range ch {
		}
		close(done)
	}()
	start := time.Now()
	for range n {
		ch <- struct{}{}
	}
	close(ch)
	<-done
	return float64(n) / time.Since(start).Seconds()
}

// savesByHand times the least saving k checkpoints of n trials costs on
// the scratch disk, from the given number of goroutines at once: save i
// goes to trial i mod n, whose directory and staging directory are made on
// its first save; each save makes a staging directory, writes a small
// state file into it and renames it into the trial directory, which is
// what an executor and the store do per save (without the fsyncs, as the
// results shape runs with local.NoSync).
func (b *bench) savesByHand(n int, k int64, workers int) (time.Duration, error) {
	dir, err := b.freshDir("saves-by-hand")
	if err != nil {
		return 0, err
	}
	defer removeDir(dir)
	state := []byte("12345678")
	save := func(i int64, first bool) error {
		t := strconv.FormatInt(i%int64(n), 10)
		td := filepath.Join(dir, "trial_"+t)
		staging := filepath.Join(td, ".staging")
		if first {
			if err := os.MkdirAll(staging, 0o755); err != nil {
				return err
			}
		}
		s := filepath.Join(staging, strconv.FormatInt(i, 10))
		if err := os.Mkdir(s, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(s, "state"), state, 0o644); err != nil {
			return err
		}
		return os.Rename(s, filepath.Join(td, "checkpoint_"+strconv.FormatInt(i, 10)))
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Worker w saves for the trials t ≡ w (mod workers), in
			// order, so that it alone touches their directories.
			for i := int64(0); i < k && errs[w] == nil; i++ {
				if int(i%int64(n))%workers == w {
					errs[w] = save(i, i < int64(n))
				}
			}
		}()
	}
	wg.Wait()
	d := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return 0, fmt.Errorf("saves by hand: %w", err)
	}
	return d, nil
}

// saveWorkers is how many goroutines save checkpoints at once on executor
// ex: the sim executor runs every trial in one; inproc trials save from
// their own.
func saveWorkers(ex string, conc int) int {
	if ex == execInproc {
		return conc
	}
	return 1
}

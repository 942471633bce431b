package perf

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/callback"
	hproc "github.com/hone-tune/hone/executor/process"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
	"github.com/hone-tune/hone/wire"
)

// cpuRun is what one experiment of the cpu variant measured.
type cpuRun struct {
	trials int
	// driver is hone's process's CPU over the window, fleet the
	// simulated trials' process's (NaN where /proc is not there).
	driver, fleet time.Duration
	window        time.Duration
	// results is how many results the runner handed to callbacks in the
	// window; journaled and reported count every result of the run.
	results             int64
	journaled, reported int64
}

// perTrial is the driver's CPU per trial and second of the window, in
// µs/s.
func (r cpuRun) perTrial() float64 {
	return float64(r.driver.Microseconds()) / r.window.Seconds() / float64(r.trials)
}

// clusterCPU measures the driver's CPU per running trial at every number
// of simulated trials, in turns, each against the next smaller number of
// trials of the same repetitions: flat means that no step up in the
// number of trials raises the cost per trial (the smallest experiment is
// the reference, its own baseline).
func (b *bench) clusterCPU(ctx context.Context) error {
	fleetBin, err := b.helper(ctx, "./cmd/simtrials")
	if err != nil {
		return err
	}
	c := b.cfg.Cluster
	sizes := slices.Sorted(slices.Values(c.CPUTrials))
	sizes = slices.Compact(sizes)
	runs := make(map[int][]cpuRun)
	for rep := range b.cfg.Reps {
		for _, n := range sizes {
			b.logf("cluster/cpu: repetition %d of %d: %d simulated trials reporting every %v, measured over %v", rep+1, b.cfg.Reps, n, c.CPUEvery, c.CPUWindow)
			r, err := b.cpuExperiment(ctx, fleetBin, n, rep == 0)
			if err != nil {
				return fmt.Errorf("%d trials: %w", n, err)
			}
			b.logf("  driver %v CPU over %v: %.1f µs/s per trial; %d results in the window", r.driver, r.window, r.perTrial(), r.results)
			runs[n] = append(runs[n], r)
		}
	}
	perTrial := func(n int) []float64 {
		var out []float64
		for _, r := range runs[n] {
			out = append(out, r.perTrial())
		}
		return out
	}
	for i, n := range sizes {
		base := sizes[max(i-1, 0)]
		baseSamples := perTrial(base)
		var samples, cores, fleet, rates []float64
		var journaled, reported int64
		for _, r := range runs[n] {
			samples = append(samples, r.perTrial())
			cores = append(cores, r.driver.Seconds()/r.window.Seconds())
			fleet = append(fleet, r.fleet.Seconds()/r.window.Seconds())
			rates = append(rates, float64(r.results)/r.window.Seconds())
			journaled += r.journaled
			reported += r.reported
		}
		notes := []string{
			fmt.Sprintf("hone's process used %.3f of a core in all (median), for %.0f results/s in the window (want %.0f: %d trials every %v)",
				median(cores), median(rates), float64(n)/c.CPUEvery.Seconds(), n, c.CPUEvery),
			fmt.Sprintf("the simulated trials' own process (not counted): %.3f of a core", median(fleet)),
			fmt.Sprintf("per result: %.0f µs of the driver's CPU", median(samples)*c.CPUEvery.Seconds()),
		}
		if n == base {
			notes = append(notes, "the reference of the flatness rows: the smallest experiment")
		} else {
			notes = append(notes, "median of the paired ratios (each beside the next smaller experiment of the same repetition): "+
				formatRatio(median(pairedRatios(samples, baseSamples))),
				fmt.Sprintf("against the smallest experiment (%d trials, %s µs CPU/s per trial): %s", sizes[0],
					formatNum(median(perTrial(sizes[0]))), formatRatio(median(samples)/median(perTrial(sizes[0])))))
		}
		files := "the per-trial files as `hone run` keeps them (at most 256 trials' files open at once)"
		if c.CPUFilesMaxOpen > 0 {
			files = fmt.Sprintf("the per-trial files with at most %d trials' files open at once (callback.WithMaxOpen; `hone run` keeps 256)", c.CPUFilesMaxOpen)
		}
		notes = append(notes, "the driver: runner.Run (random search, FIFO, the journal, a durable local store, "+files+
			") and the process executor with its TCP server; each simulated trial is a goroutine of "+
			"bench/cmd/simtrials, a process of its own, that dials hone with its token, says hello and reports every interval")
		name := fmt.Sprintf("driver CPU per running trial, %d simulated cluster trials reporting every %v over TCP (getrusage over %v)",
			n, c.CPUEvery, c.CPUWindow)
		if c.CPUFilesMaxOpen > 0 {
			name += fmt.Sprintf(", per-trial files open for up to %d trials", c.CPUFilesMaxOpen)
		}
		b.add(Row{
			Shape: ShapeCluster,
			Name:  name,
			Unit:  "µs CPU/s per trial",
			Value: median(samples), Samples: samples,
			BaseName: fmt.Sprintf("the same with %d trials, same repetitions", base),
			Base:     median(baseSamples), BaseSamples: baseSamples,
			Target:   ratioAtMost("flat: ≤ 1.25× the next smaller experiment's per trial", 1.25),
			Observed: journaled, Expected: reported,
			Notes: notes,
		})
	}
	return nil
}

// cpuExperiment runs n simulated trials through runner.Run until every
// one was welcomed, lets them report for CPUSettle, measures hone's CPU
// over CPUWindow, then has every trial send its last report and waits for
// the run to end. Every trial must end TERMINATED, and the journal must
// hold every result the trials reported.
func (b *bench) cpuExperiment(ctx context.Context, fleetBin string, n int, first bool) (cpuRun, error) {
	c := b.cfg.Cluster
	dir, err := b.freshDir("cpu")
	if err != nil {
		return cpuRun{}, err
	}
	defer removeDir(dir)
	f, err := startFleet(ctx, fleetBin, c.CPUEvery)
	if err != nil {
		return cpuRun{}, err
	}
	defer f.close()
	sr, err := random.New(space.Space{"u": space.Uniform(0, 1)}, n, nil, seed)
	if err != nil {
		return cpuRun{}, fmt.Errorf("searcher: %w", err)
	}
	st, err := local.New(dir)
	if err != nil {
		return cpuRun{}, err
	}
	ex, err := hproc.New(hproc.Options{Command: []string{"simulated-trial"}, Dir: dir, Listen: "127.0.0.1:0", Launch: f})
	if err != nil {
		return cpuRun{}, err
	}
	var fileOpts []callback.Option
	if c.CPUFilesMaxOpen > 0 {
		fileOpts = append(fileOpts, callback.WithMaxOpen(c.CPUFilesMaxOpen))
	}
	files := callback.NewTrialFiles(dir, fileOpts...)
	counter := &atomicCounter{}
	exp := &hone.Experiment{Name: "cpu", Metric: "loss", Mode: hone.Min, Searcher: sr, MaxConcurrentTrials: n, Seed: seed,
		Resources: hone.Resources{CPU: 1}, Callbacks: []hone.Callback{files, counter}}
	opts := runner.Options{Dir: dir, Executor: ex, Store: st, Pool: hone.Resources{CPU: float64(n)}, Log: io.Discard}

	done := make(chan runResult, 1)
	var r cpuRun
	err = func() error {
		go func() {
			out, err := runner.Run(ctx, exp, opts)
			if cerr := files.Close(); err == nil && cerr != nil {
				err = cerr
			}
			done <- runResult{out, err}
		}()
		// Every trial welcomed, then CPUSettle for the reports to spread
		// over their phases.
		if err := f.waitReady(ctx, n, done); err != nil {
			return err
		}
		select {
		case <-time.After(c.CPUSettle):
		case <-ctx.Done():
			return ctx.Err()
		}
		// The profile (-cpuprofile) covers the window alone: the
		// steady state, not the trials' starts.
		stop := func() error { return nil }
		if first {
			if stop, err = b.prof.startCPU(fmt.Sprintf("cluster-cpu-%d", n)); err != nil {
				return err
			}
		}
		cpu0, fleet0, res0, t0 := selfCPU(), procCPU(f.pid()), counter.n.Load(), time.Now()
		select {
		case <-time.After(c.CPUWindow):
		case <-ctx.Done():
			_ = stop()
			return ctx.Err()
		}
		cpu1, fleet1, res1, t1 := selfCPU(), procCPU(f.pid()), counter.n.Load(), time.Now()
		if err := stop(); err != nil {
			return err
		}
		r = cpuRun{trials: n, driver: cpu1 - cpu0, fleet: fleet1 - fleet0, window: t1.Sub(t0), results: res1 - res0}
		if err := f.finish(); err != nil {
			return err
		}
		res := <-done
		if res.err != nil {
			return res.err
		}
		if err := allTerminated(res.out); err != nil {
			return err
		}
		if len(res.out.Trials) != n {
			return fmt.Errorf("%d trials, want %d", len(res.out.Trials), n)
		}
		return nil
	}()
	if err != nil {
		return cpuRun{}, err
	}
	if err := f.close(); err != nil {
		return cpuRun{}, err
	}
	r.reported = f.reported.Load()
	if r.journaled, err = countResults(dir); err != nil {
		return cpuRun{}, err
	}
	if r.journaled != r.reported {
		return cpuRun{}, fmt.Errorf("the journal holds %d results, the simulated trials reported %d", r.journaled, r.reported)
	}
	return r, nil
}

// runResult is what runner.Run returned.
type runResult struct {
	out *runner.Outcome
	err error
}

// atomicCounter counts the results the runner hands to callbacks, for
// another goroutine to read.
type atomicCounter struct {
	hone.NopCallback
	n atomic.Int64
}

// OnTrialResult counts one result.
func (c *atomicCounter) OnTrialResult(*hone.Trial, *hone.Result) { c.n.Add(1) }

// selfCPU returns the CPU time (user and system) this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// childrenCPU returns the CPU time (user and system) of this process's
// children that have ended and been waited for.
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fleet is a running bench/cmd/simtrials and the process.Launcher that
// hands it the trials hone launches.
type fleet struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	read   chan struct{} // closed when its output ended

	inMu sync.Mutex
	in   io.WriteCloser

	mu     sync.Mutex
	trials map[string]*fleetTrial
	ready  int
	wake   chan struct{} // capacity 1: ready grew
	err    error         // the first unexpected line or failure

	reported atomic.Int64
	closed   sync.Once
	closeErr error
}

// startFleet starts the simulated trials' process.
func startFleet(ctx context.Context, bin string, every time.Duration) (*fleet, error) {
	cmd := exec.CommandContext(ctx, bin, "-every", every.String(), "-seed", strconv.Itoa(seed))
	f := &fleet{cmd: cmd, stderr: &bytes.Buffer{}, read: make(chan struct{}), trials: map[string]*fleetTrial{}, wake: make(chan struct{}, 1)}
	cmd.Stderr = f.stderr
	var err error
	if f.in, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go f.readEvents(out)
	return f, nil
}

// pid is the simulated trials' process id.
func (f *fleet) pid() int { return f.cmd.Process.Pid }

// send writes one command line.
func (f *fleet) send(line string) error {
	f.inMu.Lock()
	defer f.inMu.Unlock()
	_, err := io.WriteString(f.in, line+"\n")
	return err
}

// readEvents reads the fleet's events until its output ends.
func (f *fleet) readEvents(r io.Reader) {
	defer close(f.read)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), " ", 5)
		f.mu.Lock()
		switch {
		case len(fields) == 2 && fields[0] == "ready":
			f.ready++
			select {
			case f.wake <- struct{}{}:
			default:
			}
		case len(fields) >= 4 && fields[0] == "exit":
			t := f.trials[fields[1]]
			delete(f.trials, fields[1])
			n, _ := strconv.Atoi(fields[2])
			f.reported.Add(int64(n))
			if t != nil {
				if fields[3] != "ok" {
					t.err = fmt.Errorf("simulated trial %s: %s", fields[1], strings.Join(fields[3:], " "))
				}
				close(t.done)
			}
		default:
			if f.err == nil {
				f.err = fmt.Errorf("simulated trials: unexpected line %q", sc.Text())
			}
		}
		f.mu.Unlock()
	}
}

// waitReady waits until n trials were welcomed, or the run ended.
func (f *fleet) waitReady(ctx context.Context, n int, run <-chan runResult) error {
	deadline := time.NewTimer(2*time.Minute + time.Duration(n)*20*time.Millisecond)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		ready, err := f.ready, f.err
		f.mu.Unlock()
		if err != nil {
			return err
		}
		if ready >= n {
			return nil
		}
		select {
		case <-f.wake:
		case res := <-run:
			return fmt.Errorf("the run ended with %d of %d trials welcomed: %v", ready, n, res.err)
		case <-f.read:
			return fmt.Errorf("the simulated trials' process ended with %d of %d trials welcomed: %s", ready, n, f.stderr)
		case <-deadline.C:
			return fmt.Errorf("only %d of %d trials were welcomed in time", ready, n)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// finish has every trial send its last report.
func (f *fleet) finish() error { return f.send("finish") }

// close ends the process (every trial still running is killed) and waits
// for it; it returns the first failure seen.
func (f *fleet) close() error {
	f.closed.Do(func() {
		f.inMu.Lock()
		f.in.Close()
		f.inMu.Unlock()
		<-f.read
		err := f.cmd.Wait()
		f.mu.Lock()
		defer f.mu.Unlock()
		f.closeErr = errors.Join(f.err, err)
		if err != nil {
			f.closeErr = fmt.Errorf("simulated trials: %w: %s", f.closeErr, bytes.TrimSpace(f.stderr.Bytes()))
		}
	})
	return f.closeErr
}

// Launch hands the trial to the fleet: it implements process.Launcher.
func (f *fleet) Launch(spec hproc.LaunchSpec) (hproc.Launched, error) {
	env := map[string]string{}
	for _, kv := range spec.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "HONE_") {
			env[k] = v
		}
	}
	id, sock, token := env[wire.EnvTrialID], env[wire.EnvSocket], env[wire.EnvToken]
	if id != spec.TrialID || sock == "" || token == "" {
		return nil, fmt.Errorf("launch %s: the environment lacks %s, %s or %s", spec.TrialID, wire.EnvTrialID, wire.EnvSocket, wire.EnvToken)
	}
	t := &fleetTrial{f: f, id: id, done: make(chan struct{})}
	f.mu.Lock()
	f.trials[id] = t
	f.mu.Unlock()
	if err := f.send(strings.Join([]string{"start", id, sock, token}, " ")); err != nil {
		f.mu.Lock()
		delete(f.trials, id)
		f.mu.Unlock()
		return nil, fmt.Errorf("launch %s: %w", id, err)
	}
	return t, nil
}

// fleetTrial is one trial handed to the fleet: it implements
// process.Launched.
type fleetTrial struct {
	f    *fleet
	id   string
	done chan struct{} // closed when the fleet said it exited
	err  error         // set before done is closed
}

// Signal ends the trial at once, whatever the signal.
func (t *fleetTrial) Signal(syscall.Signal) error {
	select {
	case <-t.done:
		return nil
	default:
	}
	return t.f.send("kill " + t.id)
}

// Wait waits until the fleet says the trial exited, or the fleet ended.
func (t *fleetTrial) Wait() error {
	select {
	case <-t.done:
		return t.err
	case <-t.f.read:
		select {
		case <-t.done:
			return t.err
		default:
			return fmt.Errorf("simulated trial %s: the simulated trials' process ended", t.id)
		}
	}
}

// Where says the trial is simulated.
func (t *fleetTrial) Where() (node, id string) { return "simulated", "" }

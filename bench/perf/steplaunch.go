package perf

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/bench/internal/benchutil"
	hproc "github.com/hone-tune/hone/executor/process"
	"github.com/hone-tune/hone/executor/slurm"
	"github.com/hone-tune/hone/executor/slurm/slurmcmd"
	"github.com/hone-tune/hone/wire"
)

// What the launch measurements of StepLaunchMain are, in the "what" of
// their lines.
const (
	launchHone        = "hone"
	launchHoneTrue    = "hone-true"
	launchSrunTrue    = "srun-true"
	launchSrunTrial   = "srun-trial"
	launchSrunChecked = "srun-checked"
)

// storageCheck is the script job mode runs every trial's command behind,
// and step mode ran every trial's behind until it checked each node once
// at Prepare instead (executor/slurm's checked): it checks that the node
// sees the trial's staging directory, then execs the command.
const storageCheck = `test -d "$HONE_STAGING_DIR" || { echo "hone: $HONE_STAGING_DIR does not exist on $(hostname): ` +
	`the experiment's storage is not shared with this node" >&2; exit 97; }; exec "$@"`

// launchLine is one line StepLaunchMain prints: a launch measurement
// (Kind "launch"), trials with and without memory (Kind "memory"), or the
// CPU and memory of idle sruns (Kind "idle-srun").
type launchLine struct {
	Kind string `json:"kind"`
	// A launch measurement: What ran (launchHone …), Trials of them
	// Concurrency at a time, in repetition Rep, at Rate launches per
	// second over Wall seconds.
	What        string  `json:"what,omitempty"`
	Trials      int     `json:"trials,omitempty"`
	Concurrency int     `json:"concurrency,omitempty"`
	Rep         int     `json:"rep,omitempty"`
	Rate        float64 `json:"rate,omitempty"`
	Wall        float64 `json:"wall_s,omitempty"`
	// SelfMs and ChildMs are the CPU, per launch, of this process (hone's
	// executor, or the goroutines that run srun by hand) and of its
	// children reaped meanwhile (srun, and squeue for hone), on the
	// driver's machine.
	SelfMs  float64 `json:"self_ms,omitempty"`
	ChildMs float64 `json:"child_ms,omitempty"`
	// Idle sruns (Kind "idle-srun"): the CPU each used, in µs per
	// second, over Window seconds, and its resident memory (with its
	// descendants') in KiB, whole and its share of pages shared with
	// other processes.
	PerSecondUS []float64 `json:"per_second_us,omitempty"`
	RSSKB       []float64 `json:"rss_kb,omitempty"`
	PSSKB       []float64 `json:"pss_kb,omitempty"`
	Window      float64   `json:"window_s,omitempty"`
	// Memory (Kind "memory"): the wall time, in seconds, of Concurrency
	// trials sleeping a second each, started at once through hone, when
	// the trials need no memory (WithoutMem) and when they need some
	// (WithMem).
	WithoutMem float64 `json:"without_mem_s,omitempty"`
	WithMem    float64 `json:"with_mem_s,omitempty"`
}

// StepLaunchMain is the part of the cluster shape's launch variant that
// runs inside a Slurm allocation (bench/cmd/steplaunch, started by
// perfbench under salloc): it measures step mode's launches through the
// slurm executor against srun by hand, then the CPU and memory of idle
// sruns, and prints one JSON line per measurement (launchLine) to stdout,
// progress to stderr. It returns the process's exit status.
//
// The kinds of launch (hone's of the trial program and of the command
// true, and the baselines by hand: srun of true, of the trial program,
// and of the trial program behind the storage check) take turns in
// blocks: one launch at a time, a block is a single launch, so that
// hone's launches and the baselines' alternate one by one and a drift of
// the machine's speed (which here doubles within a day) touches them
// alike; k at a time, a block is 3k launches, k running at once until
// the block's last ones end. Which kind goes first rotates from one
// round of blocks to the next.
func StepLaunchMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("steplaunch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	trialBin := fs.String("trial", "", "the trial program, bench/process's proctrial (required)")
	trials := fs.Int("trials", 30, "launches of each kind per repetition")
	conc := fs.String("concurrency", "1,4", "comma-separated numbers of trials at a time")
	reps := fs.Int("reps", 5, "repetitions")
	dir := fs.String("dir", "", "scratch directory, on storage every node sees (required)")
	mem := fs.Int("mem", 100, "memory of each step in MB (--mem)")
	idleSruns := fs.Int("idle-sruns", 4, "idle steps whose srun's CPU is measured")
	idle := fs.Duration("idle", 10*time.Second, "how long the idle sruns are measured")
	noSqueue := fs.Bool("squeue-noop", false, "diagnosis: hone's squeue calls (step mode's lookup of each step's id and node) "+
		"run a no-op squeue put first in PATH, so that what they cost drops out")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the whole run (this process: hone's executor and the goroutines that run srun by hand) to this file")
	quiet := fs.Bool("q", false, "no progress notes on stderr")
	if status, ok := benchutil.ParseFlags(fs, args, stderr); !ok {
		return status
	}
	var ks []int
	for _, s := range strings.Split(*conc, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || k < 1 {
			fmt.Fprintf(stderr, "steplaunch: -concurrency %q: want positive integers separated by commas\n", *conc)
			return 2
		}
		ks = append(ks, k)
	}
	if *trialBin == "" || *dir == "" || *trials < 1 || *reps < 1 || *mem < 1 || *idleSruns < 1 || *idle <= 0 {
		fmt.Fprintln(stderr, "steplaunch: -trial and -dir are required, and every size must be positive")
		return 2
	}
	if !slurm.InAllocation() {
		fmt.Fprintln(stderr, "steplaunch: not inside a Slurm allocation (SLURM_JOB_ID is not set): run it under salloc or sbatch")
		return 2
	}
	s := &stepLaunch{trial: *trialBin, dir: *dir, n: *trials, mem: *mem, enc: json.NewEncoder(stdout)}
	if !*quiet {
		s.log = stderr
	}
	if *noSqueue {
		// Only hone calls squeue: the baselines run srun alone.
		shim := filepath.Join(*dir, "noop-squeue")
		err := os.MkdirAll(shim, 0o755)
		if err == nil {
			err = os.WriteFile(filepath.Join(shim, "squeue"), []byte("#!/bin/sh\nexit 0\n"), 0o755)
		}
		if err == nil {
			err = os.Setenv("PATH", shim+string(os.PathListSeparator)+os.Getenv("PATH"))
		}
		if err != nil {
			fmt.Fprintln(stderr, "steplaunch: -squeue-noop:", err)
			return 1
		}
		s.logf("diagnosis: squeue is a no-op for hone (%s first in PATH)", shim)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(stderr, "steplaunch: -cpuprofile:", err)
			return 1
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if err := s.run(ctx, ks, *reps, *idleSruns, *idle); err != nil {
		fmt.Fprintln(stderr, "steplaunch:", err)
		return 1
	}
	return 0
}

// stepLaunch is one run of StepLaunchMain.
type stepLaunch struct {
	trial string // proctrial
	dir   string
	n     int
	mem   int // MB per step
	enc   *json.Encoder
	log   io.Writer
	seq   atomic.Int64 // names scratch directories and trials
}

func (s *stepLaunch) logf(format string, args ...any) {
	if s.log != nil {
		fmt.Fprintf(s.log, "steplaunch: "+format+"\n", args...)
	}
}

// launcher runs blocks of launches of one kind.
type launcher interface {
	// block launches n trials, k at a time, and returns the wall time
	// from the first start to the last end.
	block(ctx context.Context, n, k int) (time.Duration, error)
	close() error
}

// run measures every concurrency reps times, then the idle sruns.
func (s *stepLaunch) run(ctx context.Context, ks []int, reps, idleSruns int, idle time.Duration) error {
	s.logf("allocation %s on %s; %d launches of each kind per repetition", os.Getenv("SLURM_JOB_ID"), os.Getenv("SLURM_JOB_NODELIST"), s.n)
	kinds := []string{launchSrunTrue, launchSrunTrial, launchSrunChecked, launchHone, launchHoneTrue}
	for rep := range reps {
		for _, k := range ks {
			costs, err := s.interleaved(ctx, kinds, k)
			if err != nil {
				return fmt.Errorf("%d at a time: %w", k, err)
			}
			for _, what := range kinds {
				c := costs[what]
				rate := float64(s.n) / c.wall.Seconds()
				perLaunch := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(s.n) }
				s.logf("repetition %d: %s, %d at a time: %.2f launches/s (%.0f ms a launch; CPU per launch: %.1f ms here, %.1f ms in children)",
					rep+1, what, k, rate, 1000*c.wall.Seconds()*float64(k)/float64(s.n), perLaunch(c.self), perLaunch(c.children))
				if err := s.enc.Encode(launchLine{Kind: "launch", What: what, Trials: s.n, Concurrency: k, Rep: rep, Rate: rate,
					Wall: c.wall.Seconds(), SelfMs: perLaunch(c.self), ChildMs: perLaunch(c.children)}); err != nil {
					return err
				}
			}
		}
	}
	k := slices.Max(ks)
	without, with, err := s.memoryConcurrency(ctx, k)
	if err != nil {
		return fmt.Errorf("trials with and without memory: %w", err)
	}
	s.logf("%d trials sleeping 1 s, at once through hone: %.1f s without a memory resource, %.1f s with %d MB", k, without.Seconds(), with.Seconds(), s.mem)
	if err := s.enc.Encode(launchLine{Kind: "memory", Concurrency: k, WithoutMem: without.Seconds(), WithMem: with.Seconds()}); err != nil {
		return err
	}
	per, rss, pss, window, err := s.idleSruns(ctx, idleSruns, idle)
	if err != nil {
		return fmt.Errorf("idle sruns: %w", err)
	}
	return s.enc.Encode(launchLine{Kind: "idle-srun", PerSecondUS: per, RSSKB: rss, PSSKB: pss, Window: window.Seconds()})
}

// launchCost is what a kind's blocks took, summed: wall time, and the CPU
// of this process and of its children reaped meanwhile.
type launchCost struct {
	wall, self, children time.Duration
}

// interleaved launches s.n trials of every kind, k at a time, in blocks
// that take turns, and returns each kind's summed costs.
func (s *stepLaunch) interleaved(ctx context.Context, kinds []string, k int) (map[string]launchCost, error) {
	bs := 1
	if k > 1 {
		bs = 3 * k
	}
	ls := map[string]launcher{}
	defer func() {
		for _, l := range ls {
			_ = l.close()
		}
	}()
	for _, what := range kinds {
		dir := filepath.Join(s.dir, what+"-"+strconv.FormatInt(s.seq.Add(1), 10))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		l, err := s.launcher(ctx, what, dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		ls[what] = l
	}
	costs := map[string]launchCost{}
	for round, done := 0, 0; done < s.n; round++ {
		n := min(bs, s.n-done)
		for i := range kinds {
			what := kinds[(i+round)%len(kinds)]
			self0, children0 := selfCPU(), childrenCPU()
			wall, err := ls[what].block(ctx, n, k)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			c := costs[what]
			c.wall += wall
			c.self += selfCPU() - self0
			c.children += childrenCPU() - children0
			costs[what] = c
		}
		done += n
	}
	for _, what := range kinds {
		err := ls[what].close()
		delete(ls, what)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	return costs, nil
}

// launcher returns the launcher of kind what, working in dir.
func (s *stepLaunch) launcher(ctx context.Context, what, dir string) (launcher, error) {
	switch what {
	case launchHone:
		return s.newHoneLauncher(ctx, dir, []string{s.trial, "report", "1"}, s.mem, 1)
	case launchHoneTrue:
		return s.newHoneLauncher(ctx, dir, []string{"true"}, s.mem, 0)
	case launchSrunTrue:
		argv := []string{"srun", "--exclusive", "-N1", "-n1", "--cpus-per-task=1", "--mem=" + strconv.Itoa(s.mem) + "M", "true"}
		return cmdLauncher(func(int) *exec.Cmd { return exec.CommandContext(ctx, argv[0], argv[1:]...) }), nil
	case launchSrunTrial:
		return s.newTrialLauncher(ctx, dir, false)
	case launchSrunChecked:
		return s.newTrialLauncher(ctx, dir, true)
	}
	return nil, fmt.Errorf("unknown launch %q", what)
}

// cmdLauncher runs the command it returns for each launch (numbered from
// 0 within a block) by hand.
type cmdLauncher func(i int) *exec.Cmd

func (l cmdLauncher) block(ctx context.Context, n, k int) (time.Duration, error) {
	return byHand(ctx, n, k, l)
}

func (l cmdLauncher) close() error { return nil }

// byHand runs the command cmd(i) returns for i = 0 … n-1, k at a time,
// and returns the wall time. Every command must exit with status 0.
func byHand(ctx context.Context, n, k int, cmd func(i int) *exec.Cmd) (time.Duration, error) {
	var next atomic.Int64
	errs := make([]error, k)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range min(k, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				c := cmd(i)
				var stderr bytes.Buffer
				c.Stderr = &stderr
				if err := c.Run(); err != nil {
					errs[w] = fmt.Errorf("%s: %w: %s", strings.Join(c.Args, " "), err, bytes.TrimSpace(stderr.Bytes()))
					return
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	return wall, errors.Join(errs...)
}

// honeLauncher launches trials of a command (the trial program's "report
// 1", or true) through the slurm executor in step mode, driving the
// executor directly: each result is answered with continue, and the next
// trial of a block starts as soon as one exits. The executor is made,
// and its Prepare (which asks squeue once for steps an earlier run left
// and checks once on every node of the allocation that it sees the
// storage) runs, before any timing, as a run's are once per experiment.
// Every trial must send its results and exit well.
type honeLauncher struct {
	ex      *hproc.Executor
	dir     string
	mem     int // MB per trial; 0: the trials need no memory
	results int // results each trial sends
	next    int // the next trial's number
}

// newHoneLauncher returns a launcher of argv through the slurm executor
// in step mode, each trial needing one CPU and mem MB (none when 0) and
// sending results results.
func (s *stepLaunch) newHoneLauncher(ctx context.Context, dir string, argv []string, mem, results int) (*honeLauncher, error) {
	ex, err := slurm.New(ctx, slurm.Options{
		Process: hproc.Options{Command: argv, Dir: dir},
		Mode:    slurm.Step,
		Key:     slurm.ExperimentKey(dir),
	})
	if err != nil {
		return nil, err
	}
	if err := ex.Prepare(dir); err != nil {
		ex.Close()
		return nil, err
	}
	return &honeLauncher{ex: ex, dir: dir, mem: mem, results: results}, nil
}

func (l *honeLauncher) block(ctx context.Context, n, k int) (time.Duration, error) {
	res := hone.Resources{CPU: 1, Memory: int64(l.mem) << 20} // Memory 0: none
	started, exited, results := 0, 0, 0
	startNext := func() error {
		id := fmt.Sprintf("%08x", l.next)
		l.next++
		started++
		return l.ex.Start(hone.StartSpec{TrialID: id, Config: hone.Config{"u": 0.5}, Dir: filepath.Join(l.dir, "trial_"+id), Resources: res})
	}
	start := time.Now()
	for started < min(k, n) {
		if err := startNext(); err != nil {
			return 0, err
		}
	}
	for exited < n {
		ev, err := l.ex.Next(ctx)
		if err != nil {
			return 0, err
		}
		switch ev.Kind {
		case hone.EventStarted: // the step runs: nothing to answer
		case hone.EventResult:
			results++
			if err := l.ex.Direct(ev.TrialID, hone.DirectContinue); err != nil {
				return 0, err
			}
		case hone.EventExited:
			if ev.Cause != nil {
				return 0, fmt.Errorf("trial %s: %w", ev.TrialID, ev.Cause)
			}
			exited++
			if started < n {
				if err := startNext(); err != nil {
					return 0, err
				}
			}
		default:
			return 0, fmt.Errorf("trial %s: unexpected %v event", ev.TrialID, ev.Kind)
		}
	}
	wall := time.Since(start)
	if results != n*l.results {
		return 0, fmt.Errorf("%d results from %d trials, want %d each", results, n, l.results)
	}
	return wall, nil
}

func (l *honeLauncher) close() error { return l.ex.Close() }

// trialLauncher runs the trial program by hand as steps, with the
// arguments hone's step mode gives srun, behind its storage check or not
// (checked), each reporting once to a minimal TCP server that answers as
// hone does (welcome, then continue): the same work as hone's launches,
// without hone.
type trialLauncher struct {
	s       *stepLaunch
	dir     string
	srv     *miniServer
	base    []string
	checked bool
	next    int
}

func (s *stepLaunch) newTrialLauncher(ctx context.Context, dir string, checked bool) (*trialLauncher, error) {
	srv, err := newMiniServer()
	if err != nil {
		return nil, err
	}
	return &trialLauncher{s: s, dir: dir, srv: srv, base: os.Environ(), checked: checked}, nil
}

func (l *trialLauncher) block(ctx context.Context, n, k int) (time.Duration, error) {
	ids := make([]string, n)
	tokens := make([]string, n)
	for i := range n {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return 0, err
		}
		ids[i], tokens[i] = fmt.Sprintf("%08x", l.next), hex.EncodeToString(b[:])
		l.next++
		l.srv.expect(ids[i], tokens[i])
	}
	argv := []string{l.s.trial, "report", "1"}
	if l.checked {
		argv = append([]string{"/bin/sh", "-c", storageCheck, "hone-trial"}, argv...)
	}
	return byHand(ctx, n, k, func(i int) *exec.Cmd {
		args := slurmcmd.StepArgs(slurmcmd.StepOptions{Name: "hone-bench-" + ids[i],
			Resources: slurmcmd.Resources{CPUs: 1, MemMB: l.s.mem}, Chdir: l.dir}, argv)
		c := exec.CommandContext(ctx, "srun", args...)
		c.Env = append(l.base[:len(l.base):len(l.base)], wire.EnvProtocol+"="+strconv.Itoa(wire.Version),
			wire.EnvSocket+"="+l.srv.advertise, wire.EnvToken+"="+tokens[i], wire.EnvTrialID+"="+ids[i],
			wire.EnvStagingDir+"="+l.dir)
		return c
	})
}

// close stops the server and checks that every trial reported once.
func (l *trialLauncher) close() error {
	l.srv.close()
	return l.srv.check()
}

// miniServer is the least a driver does for trials that connect over
// TCP: it accepts each connection, reads the hello and checks its token,
// welcomes it, and answers the one report with continue.
type miniServer struct {
	ln        net.Listener
	advertise string // HONE_SOCKET
	wg        sync.WaitGroup

	mu      sync.Mutex
	tokens  map[string]string // by trial id
	reports map[string]int
	err     error
}

// newMiniServer listens as the slurm executor does by default: every
// interface, a free port, advertised as this machine's address.
func newMiniServer() (*miniServer, error) {
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		return nil, err
	}
	host, err := hproc.HostAddress()
	if err != nil {
		ln.Close()
		return nil, err
	}
	s := &miniServer{ln: ln, advertise: wire.TCPScheme + net.JoinHostPort(host, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)),
		tokens: map[string]string{}, reports: map[string]int{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// expect admits trial id with token.
func (s *miniServer) expect(id, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[id] = token
}

func (s *miniServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			if err := s.serve(c); err != nil {
				s.mu.Lock()
				s.err = errors.Join(s.err, err)
				s.mu.Unlock()
			}
		}()
	}
}

// serve speaks with one trial until it closes the connection.
func (s *miniServer) serve(c net.Conn) error {
	r := wire.NewReader(c)
	w := bufio.NewWriter(c)
	send := func(m wire.Message) error {
		line, err := wire.Encode(m)
		if err != nil {
			return err
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
		return w.Flush()
	}
	line, err := r.ReadLine()
	if err != nil {
		return fmt.Errorf("read hello: %w", err)
	}
	hello, err := wire.Decode(line)
	if err != nil {
		return err
	}
	s.mu.Lock()
	token, ok := s.tokens[hello.TrialID]
	s.mu.Unlock()
	if hello.Type != wire.TypeHello || !ok || hello.Token != token {
		return fmt.Errorf("a connection said %s for trial %q with a token not its own", hello.Type, hello.TrialID)
	}
	if err := send(wire.Message{Type: wire.TypeWelcome, V: wire.Version}); err != nil {
		return err
	}
	for {
		line, err := r.ReadLine()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		m, err := wire.Decode(line)
		if err != nil {
			return err
		}
		if m.Type != wire.TypeReport {
			return fmt.Errorf("trial %s sent %s, want report", hello.TrialID, m.Type)
		}
		s.mu.Lock()
		s.reports[hello.TrialID]++
		s.mu.Unlock()
		if err := send(wire.Message{Type: wire.TypeDirective, Action: wire.ActionContinue}); err != nil {
			return err
		}
	}
}

// close stops accepting and waits for the connections to end.
func (s *miniServer) close() {
	s.ln.Close()
	s.wg.Wait()
}

// check fails unless every expected trial reported exactly once and no
// connection failed.
func (s *miniServer) check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	for id := range s.tokens {
		if s.reports[id] != 1 {
			return fmt.Errorf("trial %s reported %d times, want once", id, s.reports[id])
		}
	}
	return nil
}

// memoryConcurrency starts k trials that sleep a second (proctrial sleep
// 1s) at once through hone's step mode, first needing one CPU and no
// memory, then one CPU and s.mem MB, and returns the wall time of each.
// Slurm gives a step that asks for no memory all the allocation's memory
// on its node, so that such steps run one per node whatever the CPUs,
// unless the executor asks for a share of it on their behalf.
func (s *stepLaunch) memoryConcurrency(ctx context.Context, k int) (without, with time.Duration, err error) {
	for _, mem := range []int{0, s.mem} {
		dir := filepath.Join(s.dir, "memory-"+strconv.FormatInt(s.seq.Add(1), 10))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return 0, 0, err
		}
		l, err := s.newHoneLauncher(ctx, dir, []string{s.trial, "sleep", "1s"}, mem, 1)
		if err != nil {
			return 0, 0, err
		}
		wall, err := l.block(ctx, k, k)
		if cerr := l.close(); err == nil {
			err = cerr
		}
		os.RemoveAll(dir)
		if err != nil {
			return 0, 0, err
		}
		if mem == 0 {
			without = wall
		} else {
			with = wall
		}
	}
	return without, with, nil
}

// idleSruns starts n steps that sleep by hand and returns the CPU each
// one's srun (its process and every descendant on this machine: the
// watcher it forks) used per second over window, once every step runs.
func (s *stepLaunch) idleSruns(ctx context.Context, n int, window time.Duration) (perSecondUS, rssKB, pssKB []float64, _ time.Duration, _ error) {
	const warmup = 2 * time.Second
	sleep := strconv.Itoa(int((warmup + window + 3*time.Second).Seconds()))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		cmds[i] = exec.CommandContext(ctx, "srun", "--exclusive", "-N1", "-n1", "--cpus-per-task=1", "--mem="+strconv.Itoa(s.mem)+"M",
			"--job-name=hone-bench-idle", "sleep", sleep)
		if err := cmds[i].Start(); err != nil {
			return nil, nil, nil, 0, err
		}
	}
	defer func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}()
	s.logf("idle sruns: %d steps sleeping %s s; measuring their sruns over %v", n, sleep, window)
	select {
	case <-time.After(warmup):
	case <-ctx.Done():
		return nil, nil, nil, 0, ctx.Err()
	}
	trees := make([][]int, n)
	before := make([]time.Duration, n)
	for i, c := range cmds {
		trees[i] = processTree(c.Process.Pid)
		for _, p := range trees[i] {
			before[i] += threadsCPU(p)
		}
	}
	t0 := time.Now()
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return nil, nil, nil, 0, ctx.Err()
	}
	elapsed := time.Since(t0)
	per := make([]float64, n)
	rss := make([]float64, n)
	pss := make([]float64, n)
	for i := range cmds {
		var after time.Duration
		for _, p := range trees[i] {
			after += threadsCPU(p)
			r, ps := procMemKB(p)
			rss[i] += float64(r)
			pss[i] += float64(ps)
		}
		per[i] = float64((after - before[i]).Microseconds()) / elapsed.Seconds()
	}
	return per, rss, pss, elapsed, nil
}

// processTree returns pid and its descendants.
func processTree(pid int) []int {
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, procChildren(out[i])...)
	}
	return out
}

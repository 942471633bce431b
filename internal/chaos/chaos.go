// Package chaos runs real hone experiments with process trials and breaks
// them the way machines and users do: hone killed at random moments
// (SIGKILL mostly, also SIGTERM, SIGINT and SIGHUP), the disk filling up,
// the journal cut mid-record, a trial failing under fail_fast, resumes
// with a changed spec. It resumes each experiment until it ends and then
// checks what hone guarantees: every trial in its right state, every
// result the journal holds exactly once and in order in result.json and
// progress.csv, every checkpoint the journal names on disk, no trial
// process and no temporary directory left behind. scripts/chaos is its
// command; docs/RELIABILITY.md describes the guarantees.
package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hone-tune/hone/store/blob"
)

// Config is what Run needs.
type Config struct {
	// Hone is the hone binary to run.
	Hone string
	// Python runs the trainer (python3).
	Python string
	// Client is clients/python/hone.py, copied next to the trainer.
	Client string
	// Work is an empty directory for experiments, trainers and temporary
	// directories. It should have a short path: the trials' sockets live
	// in its temporary directory.
	Work string
	// Kills is the least number of kills (signals sent to hone, disk fills
	// included) over all experiments; rounds of one experiment of each
	// kind run until it is reached.
	Kills int
	// Seed seeds every random choice of the harness (when to kill, which
	// signal, where to cut the journal, the experiments' seeds).
	Seed uint64
	// S3 is the URL of an S3 bucket (s3://BUCKET?endpoint=...) for the
	// experiments on object storage, which run under a fresh prefix of it
	// with the credentials of the environment (AWS_ACCESS_KEY_ID, ...).
	// Empty: those experiments are skipped.
	S3 string
	// Kinds, if not empty, limits the experiments to these kinds.
	Kinds []string
	// Log receives progress lines.
	Log io.Writer
}

// Failure is one invariant that did not hold.
type Failure struct {
	Experiment string
	Invariant  string
	Detail     string
}

func (f Failure) String() string {
	return fmt.Sprintf("%s: %s: %s", f.Experiment, f.Invariant, f.Detail)
}

// KindStats counts what happened to the experiments of one kind.
type KindStats struct {
	Experiments int
	Kills       map[string]int // by signal name
	Resumes     int
	Faults      map[string]int // injected faults by name
	Checks      int            // invariant checks evaluated
	Failures    int
	Skipped     []string // why an experiment of this kind did not run
	// Unshipped is, on object storage, the most journal lines a SIGKILL
	// found in the killed run's local journal and not yet in the bucket
	// (the results a crash there loses).
	Unshipped int
}

// Summary is what Run found.
type Summary struct {
	Seed     uint64
	Kinds    map[string]*KindStats
	Failures []Failure
	Checked  map[string]int // evaluations by invariant
	Elapsed  time.Duration
}

// TotalKills returns the number of kills over every kind.
func (s *Summary) TotalKills() int {
	n := 0
	for _, k := range s.Kinds {
		for _, c := range k.Kills {
			n += c
		}
	}
	return n
}

// experiments returns how many experiments ran so far.
func (h *harness) experiments() int {
	n := 0
	for _, k := range h.sum.Kinds {
		n += k.Experiments
	}
	return n
}

// fnv64 hashes s (FNV-1a).
func fnv64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// harness holds what every experiment shares.
type harness struct {
	cfg     Config
	trainer string
	tmp     string // TMPDIR of every hone process
	sum     *Summary
	// s3Storage is the storage URL of the experiments on object storage:
	// a fresh prefix of cfg.S3.
	s3Storage string
}

// Run runs rounds of chaos experiments until cfg.Kills kills were made and
// returns what it found. An error means the harness itself could not work
// (not an invariant that failed).
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	start := time.Now()
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	h := &harness{
		cfg: cfg,
		tmp: filepath.Join(cfg.Work, "t"),
		sum: &Summary{Seed: cfg.Seed, Kinds: map[string]*KindStats{}, Checked: map[string]int{}},
	}
	run := kinds
	if len(cfg.Kinds) > 0 {
		run = nil
		for _, k := range cfg.Kinds {
			if !slices.Contains(kinds, k) {
				return nil, fmt.Errorf("unknown kind of experiment %q (the kinds: %s)", k, strings.Join(kinds, ", "))
			}
			if !slices.Contains(run, k) {
				run = append(run, k)
			}
		}
	}
	for _, k := range run {
		h.sum.Kinds[k] = &KindStats{Kills: map[string]int{}, Faults: map[string]int{}}
	}
	if err := h.setup(); err != nil {
		return nil, err
	}
	if cfg.S3 != "" {
		// A prefix of its own in the bucket: runs sharing a server (or a
		// seed) never meet.
		s, err := s3Storage(cfg.S3, fmt.Sprintf("chaos-%d-%x", cfg.Seed, time.Now().UnixNano()))
		if err != nil {
			return nil, err
		}
		h.s3Storage = s
		if err := h.checkS3(); err != nil {
			return nil, err
		}
	}
	idle := 0 // rounds in a row in which no experiment ran
	for round := 1; ; round++ {
		before, ran := h.sum.TotalKills(), h.experiments()
		for _, kind := range run {
			if !runsIn(kind, round) {
				continue
			}
			if err := ctx.Err(); err != nil {
				h.sum.Elapsed = time.Since(start)
				return h.sum, err
			}
			if err := h.experiment(ctx, kind, round); err != nil {
				return h.sum, err
			}
		}
		if h.sum.TotalKills() >= cfg.Kills {
			break
		}
		if h.experiments() == ran {
			// Every kind asked for was skipped (or takes turns).
			if idle++; idle == 2 {
				break
			}
			continue
		}
		idle = 0
		if h.sum.TotalKills() == before {
			h.sum.Elapsed = time.Since(start)
			return h.sum, fmt.Errorf("round %d made no kill: every experiment ended before a fault could be injected (see the logs in %s)", round, cfg.Work)
		}
	}
	h.sum.Elapsed = time.Since(start)
	return h.sum, nil
}

func (h *harness) setup() error {
	bin := filepath.Join(h.cfg.Work, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(h.tmp, 0o755); err != nil {
		return err
	}
	client, err := os.ReadFile(h.cfg.Client)
	if err != nil {
		return fmt.Errorf("read the python client: %w", err)
	}
	if err := os.WriteFile(filepath.Join(bin, "hone.py"), client, 0o644); err != nil {
		return err
	}
	h.trainer = filepath.Join(bin, "chaos_trainer.py")
	return os.WriteFile(h.trainer, []byte(trainerSource), 0o644)
}

func (h *harness) logf(format string, args ...any) {
	fmt.Fprintf(h.cfg.Log, format+"\n", args...)
}

// signal names, as the summary prints them.
var sigNames = map[syscall.Signal]string{
	syscall.SIGKILL: "SIGKILL", syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT", syscall.SIGHUP: "SIGHUP",
}

// fault is what happens to a running hone at a planned moment.
type fault struct {
	sig  syscall.Signal // 0 with fill
	fill bool           // fill the disk instead of sending a signal
	// then, if set, is sent after a graceful sig when hone is still
	// stopping thenAfter later: SIGKILL, or a second stop signal (which
	// makes hone quit at once, exit 130).
	then      syscall.Signal
	thenAfter time.Duration
}

// plan is what an experiment suffers, decided up front from the seed.
type plan struct {
	faults []fault
	// before resume number i (1-based, after the i-th fault): variants.
	tornAt    map[int]bool
	allowedAt int // resume --spec with an allowed change, in place
	refuseAt  int // resume --spec with mode flipped, on a copy
	concAt    int // resume --spec with max_concurrent_trials changed, on a copy
}

// randomSignal draws SIGKILL mostly, else one of the graceful ones.
func randomSignal(rng *rand.Rand) syscall.Signal {
	switch x := rng.IntN(100); {
	case x < 76:
		return syscall.SIGKILL
	case x < 84:
		return syscall.SIGTERM
	case x < 92:
		return syscall.SIGINT
	default:
		return syscall.SIGHUP
	}
}

func makePlan(kind string, rng *rand.Rand) plan {
	// The object-storage kinds suffer signals only: a cut journal or a
	// full disk of a working copy that the next run (on a fresh machine)
	// never sees would test nothing.
	p := plan{tornAt: map[int]bool{}}
	n := 3
	if kind == KindFailFast || kind == KindDiskFull {
		n = 2
	}
	for i := 0; i < n; i++ {
		p.faults = append(p.faults, fault{sig: randomSignal(rng)})
	}
	// Every round sends each graceful signal at least once.
	switch kind {
	case KindASHA:
		p.faults[2].sig = syscall.SIGTERM
		p.allowedAt = 1
		p.concAt = 2
		p.tornAt[2+rng.IntN(2)] = true
	case KindBOHB:
		p.faults[1].sig = syscall.SIGINT
		p.refuseAt = 1
		p.tornAt[1+2*rng.IntN(2)] = true
	case KindPBT:
		p.faults[0].sig = syscall.SIGHUP
		p.tornAt[2] = true
	case KindFailFast:
		p.faults[0].sig = syscall.SIGKILL
	case KindDiskFull:
		p.faults = append([]fault{{fill: true}}, p.faults...)
	case KindPBTS3:
		p.faults[1].sig = syscall.SIGTERM
	case KindASHAS3:
		p.faults[1].sig = syscall.SIGINT
	}
	if s3Base(kind) != "" {
		// A second signal while hone stops: the graceful stop (its saves,
		// its last sync) cut short.
		f := &p.faults[2]
		f.sig = []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP}[rng.IntN(3)]
		f.then = syscall.SIGKILL
		if rng.IntN(2) == 0 {
			f.then = f.sig
		}
		f.thenAfter = time.Duration(30+rng.IntN(470)) * time.Millisecond
	}
	return p
}

// exp is one experiment being run.
type exp struct {
	h        *harness
	kind     string
	name     string // kind-round, the experiment's name
	dir      string // experiment directory
	specPath string
	params   specParams
	stats    *KindStats
	log      *os.File // hone's output, every run
	disk     *smallDisk
	lastErr  string // the last lines of the last run's stderr
	s3       *s3exp // set on object storage
	cuts     int    // journal cuts so far
	seen     map[Failure]bool
	rng      *rand.Rand
	failed   bool
}

func (e *exp) fail(invariant, format string, args ...any) {
	f := Failure{Experiment: e.name, Invariant: invariant, Detail: fmt.Sprintf(format, args...)}
	if e.seen[f] {
		return // the same again (a resume that fails the same way): said once
	}
	if e.seen == nil {
		e.seen = map[Failure]bool{}
	}
	e.seen[f] = true
	e.h.sum.Failures = append(e.h.sum.Failures, f)
	e.stats.Failures++
	e.failed = true
	e.h.logf("  FAIL %s", f)
}

// check counts one evaluated invariant and fails it when ok is false.
func (e *exp) check(ok bool, invariant, format string, args ...any) bool {
	e.stats.Checks++
	e.h.sum.Checked[invariant]++
	if !ok {
		e.fail(invariant, format, args...)
	}
	return ok
}

// run is one hone process.
type run struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	done   chan struct{}
	err    error
}

// start starts hone with args, its environment marked with mark; on
// object storage, on a fresh machine (see machine).
func (e *exp) start(mark string, args ...string) (*run, error) {
	cmd := exec.Command(e.h.cfg.Hone, args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+e.h.tmp, markerEnv+"="+mark)
	cache, err := e.onMachine(cmd)
	if err != nil {
		return nil, err
	}
	if e.s3 != nil {
		e.s3.runCache = cache
	}
	r := &run{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan struct{})}
	fmt.Fprintf(e.log, "\n$ hone %s\n", strings.Join(args, " "))
	if cache != "" {
		fmt.Fprintf(e.log, "(HONE_CACHE_DIR=%s, in %s)\n", cache, cmd.Dir)
	}
	cmd.Stdout = e.log
	cmd.Stderr = io.MultiWriter(e.log, r.stderr)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start hone: %w", err)
	}
	go func() { r.err = cmd.Wait(); close(r.done) }()
	return r, nil
}

// exited waits up to d for the run to end.
func (r *run) exited(d time.Duration) bool {
	select {
	case <-r.done:
		return true
	case <-time.After(d):
		return false
	}
}

// status describes how the run ended: its exit code, or -1 and the signal
// that killed it.
func (r *run) status() (code int, sig syscall.Signal) {
	ws, ok := r.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return -1, ws.Signal()
	}
	return r.cmd.ProcessState.ExitCode(), 0
}

func (r *run) describe() string {
	code, sig := r.status()
	if sig != 0 {
		return "killed by " + sig.String()
	}
	return fmt.Sprintf("exit %d", code)
}

// tail returns the last lines of the run's stderr.
func (r *run) tail() string {
	lines := strings.Split(strings.TrimSpace(r.stderr.String()), "\n")
	if len(lines) > 4 {
		lines = lines[len(lines)-4:]
	}
	return strings.Join(lines, " | ")
}

// maxRuns bounds the hone runs of one experiment beyond its planned
// faults: an experiment that does not end within them fails "ends".
const maxRuns = 8

// experiment runs one experiment of kind through its planned faults,
// resuming until it ends, then checks it.
func (h *harness) experiment(ctx context.Context, kind string, round int) error {
	stats := h.sum.Kinds[kind]
	e := &exp{h: h, kind: kind, name: fmt.Sprintf("%s-%d", kind, round), stats: stats}
	// Each experiment draws from its own stream, so that its choices do not
	// depend on how many draws the timing of earlier ones took.
	e.rng = rand.New(rand.NewPCG(h.cfg.Seed, fnv64(e.name)))
	storage := filepath.Join(h.cfg.Work, "x")
	if s3Base(kind) != "" && h.s3Storage == "" {
		msg := fmt.Sprintf("SKIPPED %s: HONE_TEST_S3_URL is not set, so there is no S3 server for the object-storage experiment (scripts/test.sh starts one and sets it)", e.name)
		stats.Skipped = append(stats.Skipped, msg)
		h.logf("%s", msg)
		return nil
	}
	if kind == KindDiskFull {
		d, err := mountSmallDisk(filepath.Join(h.cfg.Work, fmt.Sprintf("disk%d", round)))
		if err != nil {
			msg := fmt.Sprintf("SKIPPED %s: no small filesystem for the disk-full experiment: %v", e.name, err)
			stats.Skipped = append(stats.Skipped, msg)
			h.logf("%s", msg)
			return nil
		}
		e.disk = d
		storage = d.Dir
		defer func() {
			if err := d.unmount(); err != nil {
				h.logf("  warning: %v", err)
			}
		}()
	}
	if err := os.MkdirAll(storage, 0o755); err != nil {
		return err
	}
	stats.Experiments++
	e.dir = filepath.Join(storage, e.name)
	if s3Base(kind) != "" {
		// e.dir is the harness's download of the bucket.
		storage = h.s3Storage
		e.s3 = &s3exp{url: joinURL(storage, e.name)}
		st, err := blob.Open(ctx, e.s3.url, filepath.Join(h.cfg.Work, "s3cache", e.name))
		if err != nil {
			return fmt.Errorf("open %s: %w", blob.Redact(e.s3.url), err)
		}
		defer st.Close()
		e.s3.store = st
	}
	mark := fmt.Sprintf("%x-%s", h.cfg.Seed, e.name)
	e.params = specParams{
		kind: kind, name: e.name, storage: storage, seed: e.rng.Uint64() % 1000000,
		python: h.cfg.Python, trainer: h.trainer, mark: mark, mode: "max", grace: "10s", maxConc: 2,
		setupSecs: 1.2, stepSecs: 0.1,
	}
	if kind == KindFailFast {
		e.params.failX = "2"
	}
	if e.s3 != nil {
		// A checkpoint every third iteration (at PBT's perturbations): a
		// checkpoint deleted ships the journal first, so with one every
		// iteration the journal would reach the bucket at nearly every
		// result, and the second between the mirror's syncs, the window
		// a crash may lose, would go untested.
		e.params.ckptEvery = 3
	}
	e.specPath = filepath.Join(h.cfg.Work, e.name+".yaml")
	if err := os.WriteFile(e.specPath, []byte(specYAML(e.params)), 0o644); err != nil {
		return err
	}
	lf, err := os.Create(filepath.Join(h.cfg.Work, e.name+".log"))
	if err != nil {
		return err
	}
	defer lf.Close()
	e.log = lf
	p := makePlan(kind, e.rng)
	h.logf("%s: %d faults planned, experiment in %s (hone output: %s)", e.name, len(p.faults), blob.Redact(e.target()), lf.Name())

	defer killMarked(mark)
	ended := e.drive(ctx, p, mark)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	e.check(ended, "ends", "the experiment did not end within %d runs of hone beyond its planned faults; last run: %s%s", maxRuns, e.lastErr, e.cutNote())
	e.finalChecks(ended, mark)
	if !e.failed {
		h.logf("  ok")
	}
	return nil
}

// drive runs and resumes the experiment through the plan's faults and
// until it ends; it reports whether it ended (exit 0).
func (e *exp) drive(ctx context.Context, p plan, mark string) bool {
	args := []string{"run", e.specPath}
	next, errored, fails := 0, 0, 0
	for runs := 0; runs < len(p.faults)+maxRuns; runs++ {
		if ctx.Err() != nil {
			return false
		}
		r, err := e.start(mark, args...)
		if err != nil {
			e.fail("exit", "%v", err)
			return false
		}
		resumeSpec := len(args) > 3 && args[2] == "--spec"
		var injected *fault
		if next < len(p.faults) {
			delay := time.Duration(200+e.rng.IntN(3300)) * time.Millisecond
			if e.s3 != nil && args[0] == "run" {
				e.waitJournal(r)
			}
			if resumeSpec {
				// Past the start, so that hone has taken the new spec.
				delay += 1500 * time.Millisecond
			}
			if !r.exited(delay) {
				injected = &p.faults[next]
				next++
				e.inject(r, *injected, mark)
			}
		}
		if injected == nil {
			if !r.exited(3 * time.Minute) {
				_ = r.cmd.Process.Kill()
				<-r.done
				e.fail("exit", "hone ran for 3 minutes without ending; killed it")
			}
			if e.s3 != nil {
				e.afterRun(r)
			}
		}
		e.lastErr = r.describe() + ": " + r.tail()
		if resumeSpec && strings.Contains(r.stderr.String(), "resuming the experiment") {
			e.checkAdopted(args[3])
		}
		code, sig := r.status()
		switch {
		case injected != nil:
			// Judged by inject.
		case sig != 0:
			e.fail("exit", "hone was killed by %v without a fault: %s", sig, r.tail())
		case code == 0:
			return true
		case code == 4 && errored < 2:
			// Trials failed (the deliberate fail_fast failure, or a trial
			// the full disk broke): retry them from their checkpoints.
			errored++
			e.checkFailFastStop(code)
			args = []string{"resume", e.target(), "--resume-errored"}
			e.stats.Resumes++
			continue
		case code == 1 && (e.kind == KindFailFast || e.kind == KindDiskFull) && fails < 2:
			fails++
			e.checkFailFastStop(code)
		case code == 2:
			e.fail("exit", "hone refused to resume (exit 2): %s%s", r.tail(), e.cutNote())
			return false
		default:
			fails++
			e.fail("exit", "hone ended with %s without a fault: %s%s", r.describe(), r.tail(), e.cutNote())
			if fails > 3 {
				return false
			}
		}
		// hone is down: the variants planned before this resume.
		n := next
		args = []string{"resume", e.target()}
		if injected != nil {
			if p.tornAt[n] {
				e.cutJournal()
			}
			if p.refuseAt == n {
				e.refusedChange(mark)
			}
			if p.concAt == n {
				e.concurrencyChange(mark)
			}
			if p.allowedAt == n {
				args = append(args, "--spec", e.allowedSpec())
				e.stats.Faults["resume --spec (allowed change)"]++
			}
		}
		e.stats.Resumes++
	}
	return false
}

// inject applies f to the running hone and judges how hone took it.
func (e *exp) inject(r *run, f fault, mark string) {
	if f.fill {
		e.fillDisk(r, mark)
		return
	}
	name := sigNames[f.sig]
	e.stats.Kills[name]++
	e.h.logf("  %s at a random moment", name)
	_ = r.cmd.Process.Signal(f.sig)
	if f.then != 0 && !r.exited(f.thenAfter) {
		e.secondSignal(r, f, mark)
		return
	}
	if f.sig == syscall.SIGKILL {
		<-r.done
		// Trials die with hone: Linux's parent-death signal ends them
		// within half a second; allow a second.
		left := waitGone(mark, time.Second)
		e.check(len(left) == 0, "no-trial-left", "%d trial processes outlived a SIGKILLed hone by more than a second: %v", len(left), left)
		if e.s3 != nil {
			e.afterRun(r)
		}
		return
	}
	if !r.exited(90 * time.Second) {
		_ = r.cmd.Process.Kill()
		<-r.done
		e.fail("graceful-stop", "hone did not exit within 90 s of %s; killed it", name)
		return
	}
	if e.s3 != nil {
		e.afterRun(r) // leaves the bucket's journal in e.dir
	}
	code, sig := r.status()
	if e.kind == KindFailFast && sig == 0 && code == 1 && strings.Contains(r.stderr.String(), "fail_fast") {
		// The deliberate failure came first: fail_fast stopped hone.
		e.stats.Checks++
		e.checkFailFastStop(code)
		return
	}
	if !e.check(sig == 0 && (code == 3 || code == 0 || code == 4), "graceful-stop",
		"after %s hone ended with %s, not exit 3 (interrupted, resumable): %s", name, r.describe(), r.tail()) {
		return
	}
	left := waitGone(mark, 2*time.Second)
	e.check(len(left) == 0, "no-trial-left", "%d trial processes still run after hone stopped on %s: %v", len(left), name, left)
	if code == 3 {
		e.checkProgressKept(name)
	}
}

// secondSignal sends f.then to a hone stopping on f.sig and judges how it
// took it: a SIGKILL as any other; a second stop signal must make it quit
// at once (exit 130), its trials gone, resumable as after a kill.
func (e *exp) secondSignal(r *run, f fault, mark string) {
	name := sigNames[f.then]
	e.stats.Kills[name]++
	e.stats.Faults["second signal while stopping"]++
	e.h.logf("  then %s %s later, while hone stops", name, f.thenAfter)
	_ = r.cmd.Process.Signal(f.then)
	if f.then != syscall.SIGKILL {
		if !r.exited(30 * time.Second) {
			_ = r.cmd.Process.Kill()
			<-r.done
			e.fail("second-signal", "hone did not exit within 30 s of a second %s; killed it", name)
			return
		}
		// Exit 130; or, when the signal came as hone was exiting anyway,
		// the end of the graceful stop, or the signal's own default
		// action once hone no longer handles it.
		code, sig := r.status()
		e.check(sig == 0 && (code == 130 || code == 3 || code == 0 || code == 4) || sig == f.then, "second-signal",
			"after a second %s hone ended with %s, not exit 130 (quit at once): %s", name, r.describe(), r.tail())
	}
	<-r.done
	window := time.Second
	if f.then != syscall.SIGKILL {
		window = 2 * time.Second
	}
	left := waitGone(mark, window)
	e.check(len(left) == 0, "no-trial-left", "%d trial processes outlived hone by more than %s after %s then %s: %v", len(left), window, sigNames[f.sig], name, left)
	if e.s3 != nil {
		e.afterRun(r)
	}
}

// checkProgressKept checks, after a graceful stop, that every unfinished
// trial that reported in the stopped run has its latest checkpoint at its
// last reported iteration (it was asked to save before it stopped),
// unless an exploit assigned it another trial's checkpoint. A trial that
// had not reported yet in that run (still starting) had nothing new to
// save: where checkpoints are not taken at every iteration, what it
// reported before a crash may be in no checkpoint.
func (e *exp) checkProgressKept(signal string) {
	st, err := readState(e.dir)
	if !e.check(err == nil, "journal", "after %s: %v", signal, err) {
		return
	}
	var lost []string
	for _, t := range st.trials {
		if t.replayStatus.Finished() || len(t.results) == 0 || t.donor || !t.reportedLast {
			continue
		}
		if t.savedIter < t.lastIter {
			lost = append(lost, fmt.Sprintf("%s (%s) reported iteration %d, latest checkpoint at %d", t.id, t.replayStatus, t.lastIter, t.savedIter))
		}
	}
	e.check(len(lost) == 0, "graceful-progress", "after %s, trials stopped without saving their progress: %s", signal, strings.Join(lost, "; "))
}

// checkFailFastStop checks, after hone stopped with failed trials, that
// no trial was TERMINATED short of its stopping condition (fail_fast must
// stop the others as an interrupt does, resumable).
func (e *exp) checkFailFastStop(code int) {
	if e.kind != KindFailFast {
		return
	}
	st, err := readState(e.dir)
	if !e.check(err == nil, "journal", "after the fail_fast stop (exit %d): %v", code, err) {
		return
	}
	var bad []string
	for _, t := range st.trials {
		if t.status == "TERMINATED" {
			if n := len(t.results); n == 0 || !t.results[n-1].done {
				bad = append(bad, fmt.Sprintf("%s at iteration %s of %d", t.id, lastIter(t), epochs))
			}
		}
	}
	e.check(len(bad) == 0, "fail-fast", "after a trial failed under fail_fast (exit %d), trials were TERMINATED short of their last epoch: %s", code, strings.Join(bad, ", "))
}

func lastIter(t *trialState) string {
	if len(t.results) == 0 {
		return "0"
	}
	return fmt.Sprint(t.results[len(t.results)-1].iter)
}

// fillDisk fills the small filesystem under the running hone, waits for
// hone to notice (or kills it), and makes room again.
func (e *exp) fillDisk(r *run, mark string) {
	e.stats.Faults["disk full"]++
	slack := int64(4<<10) * int64(1+e.rng.IntN(16))
	filler, n, err := e.disk.fill(slack)
	e.h.logf("  disk full (%s, filler %d bytes, %d bytes left)", e.disk.Kind, n, slack)
	if err != nil {
		e.fail("disk-full", "%v", err)
	}
	if !r.exited(8 * time.Second) {
		e.stats.Kills["SIGKILL"]++
		e.h.logf("  SIGKILL while the disk is full")
		_ = r.cmd.Process.Kill()
		<-r.done
	}
	waitGone(mark, time.Second)
	if err := os.Remove(filler); err != nil {
		e.fail("disk-full", "remove filler: %v", err)
	}
	// What hone said: its log, or a trial's error.txt.
	said := strings.Contains(r.stderr.String(), "no space left")
	_ = filepath.WalkDir(e.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "error.txt" {
			b, _ := os.ReadFile(p)
			said = said || bytes.Contains(b, []byte("no space left"))
		}
		return nil
	})
	code, sig := r.status()
	if sig == 0 && code != 0 { // exit 0: it wrote everything before the disk ran out
		e.check(said, "disk-full-reported", "hone ended (exit %d) on a full disk without saying so in its log or an error.txt: %s", code, r.tail())
	}
}

// cutJournal truncates the journal inside one of its last records.
func (e *exp) cutJournal() {
	jp := filepath.Join(e.dir, "experiment_state.jsonl")
	data, err := os.ReadFile(jp)
	if err != nil {
		e.fail("torn-journal", "read journal: %v", err)
		return
	}
	var starts []int // line starts after the header
	for i := 0; i < len(data); i++ {
		if data[i] == '\n' && i+1 < len(data) {
			starts = append(starts, i+1)
		}
	}
	if len(starts) < 2 {
		return
	}
	k := len(starts) - 1 - e.rng.IntN(min(8, len(starts)-1))
	end := len(data) - 1
	if k+1 < len(starts) {
		end = starts[k+1] - 1
	}
	if end-starts[k] < 2 {
		return
	}
	off := starts[k] + 1 + e.rng.IntN(end-starts[k]-1)
	if err := os.Truncate(jp, int64(off)); err != nil {
		e.fail("torn-journal", "truncate: %v", err)
		return
	}
	e.stats.Faults["journal cut mid-record"]++
	e.cuts++
	e.h.logf("  journal cut at byte %d of %d (inside line %d of %d)", off, len(data), k+2, len(starts)+1)
}

// changedSpec writes a variant of the experiment's spec.
func (e *exp) changedSpec(suffix string, change func(*specParams)) string {
	p := e.params
	change(&p)
	path := filepath.Join(e.h.cfg.Work, e.name+"-"+suffix+".yaml")
	if err := os.WriteFile(path, []byte(specYAML(p)), 0o644); err != nil {
		e.fail("spec-change", "%v", err)
	}
	return path
}

// allowedSpec returns a spec that differs in settings that do not change
// decisions (stop_grace and env).
func (e *exp) allowedSpec() string {
	return e.changedSpec("allowed", func(p *specParams) {
		p.grace = "12s"
		p.extraEnv = "CHAOS_NOTE: changed"
	})
}

// checkAdopted checks that a resume with --spec made that spec the
// experiment's, for every later resume.
func (e *exp) checkAdopted(path string) {
	want, _ := os.ReadFile(path)
	got, _ := os.ReadFile(filepath.Join(e.dir, "spec.yaml"))
	e.check(bytes.Equal(want, got), "spec-adopted", "after hone resume --spec %s, %s still holds another spec: a later plain resume would go back to it", filepath.Base(path), filepath.Join(e.dir, "spec.yaml"))
}

// copyExperiment copies the experiment directory for a variant that must
// not touch the experiment itself.
func (e *exp) copyExperiment(suffix string) (string, error) {
	dst := e.dir + "-" + suffix
	if out, err := exec.Command("cp", "-a", e.dir, dst).CombinedOutput(); err != nil {
		return "", fmt.Errorf("copy the experiment: %v: %s", err, out)
	}
	return dst, nil
}

// refusedChange resumes a copy of the experiment with the mode flipped:
// hone must refuse (exit 2, naming mode) and leave the copy as it was.
func (e *exp) refusedChange(mark string) {
	e.stats.Faults["resume --spec (mode flipped)"]++
	dir, err := e.copyExperiment("flipped")
	if err != nil {
		e.fail("spec-change-refused", "%v", err)
		return
	}
	defer os.RemoveAll(dir)
	spec := e.changedSpec("flipped", func(p *specParams) { p.mode = "min"; p.mark = mark + "-copy" })
	jp := filepath.Join(dir, "experiment_state.jsonl")
	before, _ := os.ReadFile(jp)
	specBefore, _ := os.ReadFile(filepath.Join(dir, "spec.yaml"))
	r, err := e.start(mark+"-copy", "resume", dir, "--spec", spec)
	if err != nil {
		e.fail("spec-change-refused", "%v", err)
		return
	}
	if !r.exited(15 * time.Second) {
		_ = r.cmd.Process.Kill()
		<-r.done
		killMarked(mark + "-copy")
		e.fail("spec-change-refused", "hone resume --spec with mode flipped (max to min) was accepted: it was still running after 15 s")
		return
	}
	killMarked(mark + "-copy")
	code, _ := r.status()
	msg := r.stderr.String()
	e.check(code == 2 && strings.Contains(msg, "mode"), "spec-change-refused",
		"hone resume --spec with mode flipped (max to min) ended with %s, not exit 2 with an error naming mode: %s", r.describe(), r.tail())
	after, _ := os.ReadFile(jp)
	specAfter, _ := os.ReadFile(filepath.Join(dir, "spec.yaml"))
	e.check(bytes.Equal(before, after) && bytes.Equal(specBefore, specAfter), "spec-change-refused",
		"the refused resume changed the experiment (journal %d -> %d bytes, spec.yaml changed: %v)", len(before), len(after), !bytes.Equal(specBefore, specAfter))
}

// concurrencyChange resumes a copy of the experiment with
// max_concurrent_trials changed: hone must accept it and go on running.
func (e *exp) concurrencyChange(mark string) {
	e.stats.Faults["resume --spec (max_concurrent_trials changed)"]++
	dir, err := e.copyExperiment("conc")
	if err != nil {
		e.fail("spec-change-accepted", "%v", err)
		return
	}
	defer os.RemoveAll(dir)
	spec := e.changedSpec("conc", func(p *specParams) { p.maxConc = 1; p.mark = mark + "-copy" })
	r, err := e.start(mark+"-copy", "resume", dir, "--spec", spec)
	if err != nil {
		e.fail("spec-change-accepted", "%v", err)
		return
	}
	running := !r.exited(4 * time.Second)
	if running {
		_ = r.cmd.Process.Kill()
		<-r.done
	}
	killMarked(mark + "-copy")
	code, _ := r.status()
	e.check(running || code == 0, "spec-change-accepted",
		"hone resume --spec with max_concurrent_trials 2 -> 1 (a setting that may change) ended with %s: %s", r.describe(), r.tail())
}

// finalChecks checks the ended (or given up) experiment.
func (e *exp) finalChecks(ended bool, mark string) {
	left := waitGone(mark, 2*time.Second)
	e.check(len(left) == 0, "no-trial-left", "%d processes of the experiment still run after hone ended: %v", len(left), left)
	tmp := dirEntries(e.h.tmp)
	e.check(len(tmp) == 0, "no-temp-left", "hone's temporary directory %s holds %v", e.h.tmp, tmp)
	for _, n := range tmp {
		_ = os.RemoveAll(filepath.Join(e.h.tmp, n)) // judged once
	}
	if e.s3 != nil {
		lo := e.workLeftovers()
		e.check(len(lo) == 0, "no-temp-left", "the last run's working copy (under %s) holds leftovers: %v", e.s3.runCache, lo)
		if err := e.pull(true); !e.check(err == nil, "journal", "download the experiment from the bucket: %v", err) {
			return
		}
	} else {
		lo := leftovers(e.dir)
		e.check(len(lo) == 0, "no-temp-left", "the experiment directory holds leftovers: %v", lo)
	}

	if e.kind == KindFailFast {
		if m, _ := filepath.Glob(filepath.Join(e.dir, "*", "chaos_failed_once")); len(m) > 0 {
			e.stats.Faults["fail_fast failure"]++
		}
	}
	st, err := readState(e.dir)
	if !e.check(err == nil, "journal", "%v", err) {
		return
	}
	e.checkStates(st, ended)
	e.checkRecords(st)
	e.checkRows(st)
	if e.s3 != nil {
		e.checkBucketCheckpoints(st, ended)
	} else {
		e.checkCheckpoints(st)
	}
	e.checkStatus(st)
	if ended {
		e.checkSecondResume(st, mark)
	}
}

// checkStates: every trial ended TERMINATED, and was TERMINATED by a
// stopper, the scheduler or the trial itself: in a step on a result (or
// a save, or its own exit), and, where the scheduler never stops trials
// (FIFO, PBT), only at its last epoch.
func (e *exp) checkStates(st *state, ended bool) {
	var bad []string
	for _, t := range st.trials {
		switch {
		case t.status == "TERMINATED":
			n := len(t.results)
			switch {
			case t.endedBy != "":
				bad = append(bad, fmt.Sprintf("%s TERMINATED at iteration %s by the %s, not by a stopper, the scheduler or the trial", t.id, lastIter(t), t.endedBy))
			case n == 0:
				bad = append(bad, t.id+" TERMINATED without a result")
			case !t.results[n-1].done && (baseKind(e.kind) == KindPBT || e.kind == KindFailFast):
				bad = append(bad, fmt.Sprintf("%s TERMINATED at iteration %d of %d; nothing stops trials early here", t.id, t.results[n-1].iter, epochs))
			}
		case ended && t.status == "ERROR":
			bad = append(bad, fmt.Sprintf("%s ERROR after resume --resume-errored: %.200s", t.id, t.err))
		case ended:
			bad = append(bad, fmt.Sprintf("%s ended %s", t.id, t.status))
		}
	}
	e.check(len(st.trials) > 0, "trial-state", "the journal holds no trial")
	e.check(len(bad) == 0, "trial-state", "%s", strings.Join(bad, "; "))
}

// checkRecords: the journal's records (what hone status and the results
// package read) agree with a replay of its inputs (what hone resume
// rebuilds): statuses and registered checkpoints.
func (e *exp) checkRecords(st *state) {
	var bad []string
	for _, t := range st.trials {
		if t.status != t.replayStatus {
			bad = append(bad, fmt.Sprintf("%s is %s in the records, %s in the replay", t.id, t.status, t.replayStatus))
		}
		for _, p := range t.unregistered {
			bad = append(bad, fmt.Sprintf("%s: the records name checkpoint %s, the replay does not hold it", t.id, p))
		}
	}
	e.check(len(bad) == 0, "records-match-replay", "%s%s", strings.Join(bad, "; "), e.cutNote())
}

// cutNote is said with a failure that a journal cut may explain.
func (e *exp) cutNote() string {
	if e.stats.Faults["journal cut mid-record"] > 0 && e.cuts > 0 {
		return fmt.Sprintf(" (the journal of this experiment was cut %d time(s): a cut removes records of things hone had already done)", e.cuts)
	}
	return ""
}

// checkRows: each trial's result.json and progress.csv hold exactly the
// results the journal holds, once each, in order; hone's
// training_iteration is the trainer's own count, and where it goes back
// the trial restored a checkpoint.
func (e *exp) checkRows(st *state) {
	for _, t := range st.trials {
		got, err := readResultFile(filepath.Join(t.dir, "result.json"))
		if e.check(err == nil, "rows-exactly-once", "trial %s result.json: %v", t.id, err) {
			if d := compareRows(t.results, got); !e.check(d == "", "rows-exactly-once", "trial %s result.json: %s%s", t.id, d, e.cutNote()) {
				continue
			}
		}
		prog, err := readProgressFile(filepath.Join(t.dir, "progress.csv"))
		if e.check(err == nil, "progress-rows", "trial %s progress.csv: %v", t.id, err) {
			e.check(compareRows(t.results, prog) == "", "progress-rows", "trial %s progress.csv: %s", t.id, compareRows(t.results, prog))
		}
		var bad string
		for i, r := range t.results {
			switch {
			case r.iter != r.step:
				bad = fmt.Sprintf("result %d: hone's training_iteration %d, the trial's own count %d (restored the wrong checkpoint, or counted wrong)", i+1, r.iter, r.step)
			case i > 0 && r.iter != t.results[i-1].iter+1 && r.iter != 1 && !st.ckptIters[r.iter-1]:
				bad = fmt.Sprintf("result %d: iteration %d after %d, and no checkpoint at %d to restore from (a gap)", i+1, r.iter, t.results[i-1].iter, r.iter-1)
			}
			if bad != "" {
				break
			}
		}
		e.check(bad == "", "iteration", "trial %s: %s; journal iterations %s", t.id, bad, iters(t.results))
	}
}

// checkCheckpoints: every checkpoint the journal names (registered, not
// deleted) is on disk, complete.
func (e *exp) checkCheckpoints(st *state) {
	var missing []string
	for _, t := range st.trials {
		for p, it := range t.ckpts {
			if _, err := os.Stat(filepath.Join(e.dir, filepath.FromSlash(p), "state.json")); err != nil {
				missing = append(missing, fmt.Sprintf("%s (iteration %d)", p, it))
			}
		}
	}
	e.check(len(missing) == 0, "checkpoints", "checkpoints the journal names are missing: %s%s", strings.Join(missing, ", "), e.cutNote())
}

// checkStatus: hone status reads the journal and shows every trial (on
// object storage: reads the bucket, from a fresh machine).
func (e *exp) checkStatus(st *state) {
	cmd := exec.Command(e.h.cfg.Hone, "status", e.target())
	if _, err := e.onMachine(cmd); err != nil {
		e.fail("status", "%v", err)
		return
	}
	out, err := cmd.CombinedOutput()
	first, _, _ := strings.Cut(string(out), "\n")
	want := fmt.Sprintf(": %d trial", len(st.trials))
	e.check(err == nil && strings.Contains(first, want), "status", "hone status shows %q (%v); the journal holds %d trials", first, err, len(st.trials))
}

// checkSecondResume: resuming an ended experiment again changes nothing.
func (e *exp) checkSecondResume(st *state, mark string) {
	before := rowFiles(st)
	r, err := e.start(mark, "resume", e.target())
	if err != nil {
		e.fail("second-resume", "%v", err)
		return
	}
	if !r.exited(2 * time.Minute) {
		_ = r.cmd.Process.Kill()
		<-r.done
		e.fail("second-resume", "resuming the ended experiment again ran for 2 minutes")
		return
	}
	code, _ := r.status()
	e.check(code == 0, "second-resume", "resuming the ended experiment again ended with %s: %s", r.describe(), r.tail())
	if e.s3 != nil {
		e.afterRun(r)
	}
	if err := e.refresh(); !e.check(err == nil, "second-resume", "after resuming again: %v", err) {
		return
	}
	st2, err := readState(e.dir)
	if !e.check(err == nil, "second-resume", "after resuming again: %v", err) {
		return
	}
	var changed []string
	after := rowFiles(st2)
	for k, v := range after {
		if before[k] != v {
			changed = append(changed, k)
		}
	}
	for _, t := range st.trials {
		if t2 := st2.byID[t.id]; t2 == nil || t2.status != t.status {
			changed = append(changed, t.id+" status")
		}
	}
	e.check(len(changed) == 0 && len(st2.trials) == len(st.trials), "second-resume", "resuming the ended experiment again changed %v (trials %d -> %d)", changed, len(st.trials), len(st2.trials))
}

// ErrFailed is returned by the command when an invariant failed.
var ErrFailed = errors.New("invariants failed")

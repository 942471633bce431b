// Package runner is the one goroutine around the controller: it takes
// events from the executor, journals them, steps the controller, and carries
// out the controller's actions through the executor and the store. Run
// starts an experiment; Resume continues one from its journal after a stop
// or a crash.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/controller"
	"github.com/hone-tune/hone/internal/fsutil"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/store/local"
)

// Options says where and with what an experiment runs.
type Options struct {
	// Dir is the experiment directory (storage root joined with the
	// experiment name). Required.
	Dir string
	// Executor runs the trials. Required.
	Executor hone.Executor
	// Store keeps checkpoints. Default: a durable local store in Dir.
	Store hone.Store
	// Pool is the resources trials share. Default: one CPU per core.
	Pool hone.Resources
	// Clock stamps inputs that are not executor events. Default: the
	// executor's clock if it has one, else the wall clock.
	Clock hone.Clock
	// Log receives the experiment log, one line per entry. Default:
	// os.Stderr. Use io.Discard to silence it.
	Log io.Writer
	// Tick is how often the controller sees the time pass while no event
	// arrives (for time budgets). Default 1 s.
	Tick time.Duration
	// StopGrace is how long an interrupted experiment waits for trials to
	// checkpoint and stop before the executor is closed. Default 30 s.
	StopGrace time.Duration
	// TruncateJournal lets Resume continue from the valid prefix of a
	// journal with a corrupt record in the middle, cutting the rest;
	// without it such a journal is an error naming the line.
	TruncateJournal bool

	// flushEvery overrides flushResultsEvery (tests).
	flushEvery time.Duration
}

// Outcome is how an experiment ended.
type Outcome struct {
	// Trials are every trial in creation order.
	Trials []*hone.Trial
	// Interrupted is true when ctx was cancelled: running trials were asked
	// to checkpoint and stop, and Resume continues the experiment.
	Interrupted bool
}

// Run starts a new experiment in opts.Dir and runs it to the end, or until
// ctx is cancelled (a graceful stop that Resume can continue). It fails if
// opts.Dir already holds an experiment. The returned error is the
// experiment's failure (fail_fast, a searcher error, a metric in no result,
// a stuck experiment) or an I/O failure; the Outcome is returned either way.
func Run(ctx context.Context, exp *hone.Experiment, opts Options) (*Outcome, error) {
	r, err := newRunner(exp, opts)
	if err != nil {
		return nil, err
	}
	jp := filepath.Join(opts.Dir, journal.FileName)
	if _, err := os.Stat(jp); err == nil {
		return nil, fmt.Errorf("run: %s already holds an experiment; resume it or choose another directory", opts.Dir)
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("run: create experiment directory: %w", err)
	}
	if err := r.prepareExecutor(); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	r.jw, err = journal.Create(jp, journal.Header{Name: exp.Name, Seed: exp.Seed, Created: r.clock.Now().UnixNano()})
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	return r.loop(ctx, controller.Input{Kind: controller.InBegin})
}

// Resume continues the experiment in opts.Dir. exp must be built the way
// the original was (same searcher, scheduler and seed): its state is
// rebuilt by replaying the journal. Trials that were RUNNING restart from
// their latest checkpoint; uncommitted and unregistered checkpoint
// directories are removed.
func Resume(ctx context.Context, exp *hone.Experiment, opts Options, flags controller.ResumeFlags) (*Outcome, error) {
	r, err := newRunner(exp, opts)
	if err != nil {
		return nil, err
	}
	if err := r.prepareExecutor(); err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	jp := filepath.Join(opts.Dir, journal.FileName)
	j, err := journal.Read(jp)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	if j.Header.Seed != exp.Seed {
		return nil, fmt.Errorf("resume: the experiment was run with seed %d, not %d; resume needs the same seed", j.Header.Seed, exp.Seed)
	}
	var from int
	var seqs map[string]int // results so far of the trials in recover
	var recover []recovered
	if len(r.buffered) > 0 {
		from, seqs = resultsToRecover(j.Lines)
	}
	for i, l := range j.Lines {
		if l.In == nil {
			continue
		}
		r.ctl.Step(*l.In)
		acts := r.ctl.Ready()
		if err := sameTrials(j.Lines[i+1:], acts, i+2); err != nil {
			return nil, fmt.Errorf("resume: %s holds a different experiment: %w; resume it with the spec it was started with, or start a new experiment directory", opts.Dir, err)
		}
		if len(seqs) == 0 {
			continue
		}
		for k := range acts {
			a := &acts[k]
			if a.Kind != controller.ActNotify || a.Note != controller.NoteResult {
				continue
			}
			if n, ok := seqs[a.Trial.ID]; ok {
				seqs[a.Trial.ID] = n + 1
				if i >= from {
					recover = append(recover, recovered{a.Trial, a.Result, n})
				}
			}
		}
	}
	if j.Torn {
		r.logf("journal had a torn last line from a crash; ignored it")
	}
	if err := r.cleanStorage(); err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	r.jw, err = journal.Append(jp, j.Size)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	if len(recover) > 0 {
		// Rows a kill kept from the per-trial files (or any buffered
		// callback): the callbacks keep what they hold and take the rest.
		for _, rc := range recover {
			for _, cb := range r.buffered {
				cb.RecoverResult(rc.t, rc.r, rc.seq)
			}
		}
		if err := r.flushResults(); err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
	}
	return r.loop(ctx, controller.Input{Kind: controller.InResume, Resume: &flags})
}

// sameTrials checks, while resume replays the journal, that the trials
// the replayed controller adds are the ones the original run added (same
// ids, indexes, configurations and tags), so that resuming with a changed
// search space, number of samples or searcher fails clearly instead of
// diverging. following holds the journal lines after the input at journal
// line lineNo; acts are the actions its replay produced. A journal that
// ends early (a crash) may lack the last input's records.
func sameTrials(following []journal.Line, acts []controller.Action, lineNo int) error {
	var journaled []*controller.Record
	end := true // no input follows: the tail of the journal
	for _, l := range following {
		if l.In != nil {
			end = false
			break
		}
		if l.Rec.Op == "trial" {
			journaled = append(journaled, l.Rec)
		}
	}
	n := 0
	for i := range acts {
		a := &acts[i]
		if a.Kind != controller.ActRecord || a.Record.Op != "trial" {
			continue
		}
		if n == len(journaled) {
			if end {
				return nil
			}
			return fmt.Errorf("after journal line %d it adds trial %s (config %v), which the original run did not", lineNo, a.Record.Trial, map[string]any(a.Record.Config))
		}
		if want := journaled[n]; !journal.SameRecord(a.Record, want) {
			return fmt.Errorf("after journal line %d the original run added trial %s with config %v, this one adds %s with config %v",
				lineNo, want.Trial, map[string]any(want.Config), a.Record.Trial, map[string]any(a.Record.Config))
		}
		n++
	}
	if n < len(journaled) {
		return fmt.Errorf("after journal line %d the original run added trial %s (config %v), this one does not", lineNo, journaled[n].Trial, map[string]any(journaled[n].Config))
	}
	return nil
}

type runner struct {
	exp   *hone.Experiment
	opts  Options
	ctl   *controller.Controller
	exec  hone.Executor
	store hone.Store
	clock hone.Clock
	log   io.Writer
	jw    *journal.Writer

	deferred []controller.Input
	lastSync time.Time // wall time of the last journal fsync

	// buffered are the callbacks that buffer results (hone.BufferedCallback);
	// unbuffered counts the others.
	buffered   []hone.BufferedCallback
	unbuffered int
	// filesDue is when buffered results must be flushed; zero when none is
	// waiting.
	filesDue time.Time
	// contained: the executor's trials cannot outlive this process.
	contained bool
}

// syncEvery is how often the journal is fsynced while an experiment runs.
// Every line reaches the operating system before the runner acts on it,
// which is what a killed process needs; fsyncs, which only a power loss
// needs, are batched.
const syncEvery = time.Second

// flushResultsEvery is how long a result may wait in a buffered callback
// (the per-trial files) before the runner flushes it, so that a trial
// reporting thousands of results a second costs a few writes, not one per
// result, and a reader of result.json still sees rows promptly.
const flushResultsEvery = 100 * time.Millisecond

// opResultsFlushed is the journal record written after buffered callbacks
// flushed every result journaled before it; resume recovers only the
// results after the last one.
const opResultsFlushed = "flushed"

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func newRunner(exp *hone.Experiment, opts Options) (*runner, error) {
	if opts.Dir == "" {
		return nil, errors.New("runner: Options.Dir is required")
	}
	if opts.Executor == nil {
		return nil, errors.New("runner: Options.Executor is required")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	opts.Dir = dir
	if opts.Pool.CPU == 0 && opts.Pool.GPU == 0 && len(opts.Pool.Custom) == 0 {
		opts.Pool.CPU = float64(runtime.NumCPU())
	}
	if opts.Tick <= 0 {
		opts.Tick = time.Second
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = 30 * time.Second
	}
	if opts.flushEvery <= 0 {
		opts.flushEvery = flushResultsEvery
	}
	ctl, err := controller.New(exp, opts.Pool)
	if err != nil {
		return nil, err
	}
	r := &runner{exp: exp, opts: opts, ctl: ctl, exec: opts.Executor, store: opts.Store, clock: opts.Clock, log: opts.Log}
	if c, ok := opts.Executor.(hone.Contained); ok {
		r.contained = c.Contained()
	}
	for _, cb := range exp.Callbacks {
		if b, ok := cb.(hone.BufferedCallback); ok {
			r.buffered = append(r.buffered, b)
		} else {
			r.unbuffered++
		}
	}
	if r.clock == nil {
		if c, ok := opts.Executor.(hone.Clocked); ok {
			r.clock = c.Clock()
		} else {
			r.clock = wallClock{}
		}
	}
	if r.log == nil {
		r.log = os.Stderr
	}
	if r.store == nil {
		st, err := local.New(dir)
		if err != nil {
			return nil, fmt.Errorf("runner: %w", err)
		}
		r.store = st
	}
	return r, nil
}

func (r *runner) logf(format string, args ...any) {
	fmt.Fprintf(r.log, "hone: "+format+"\n", args...)
}

// loop steps the first input, then events until the controller is done.
func (r *runner) loop(ctx context.Context, first controller.Input) (out *Outcome, err error) {
	defer func() {
		cerr := r.exec.Close()
		var ferr error
		if !r.filesDue.IsZero() {
			ferr = r.flushResults()
		}
		jerr := r.jw.Close()
		if err == nil {
			err = errors.Join(cerr, ferr, jerr)
		}
		out = &Outcome{Trials: r.ctl.Trials(), Interrupted: r.ctl.Interrupted()}
	}()
	first.Time = r.clock.Now().UnixNano()
	if err := r.step(first); err != nil {
		return nil, err
	}
	var graceEnd time.Time
	tick := &tickDeadline{d: r.opts.Tick}
	defer tick.stop()
	for !r.ctl.Done() {
		if ctx.Err() != nil && !r.ctl.Interrupted() {
			if err := r.step(controller.Input{Kind: controller.InInterrupt, Time: r.clock.Now().UnixNano()}); err != nil {
				return nil, err
			}
			r.interruptExecutor()
			graceEnd = time.Now().Add(r.opts.StopGrace)
			continue
		}
		if !graceEnd.IsZero() && time.Now().After(graceEnd) {
			r.logf("trials did not stop within %v; closing the executor", r.opts.StopGrace)
			return nil, nil
		}
		wait := ctx
		if r.ctl.Interrupted() {
			wait = context.Background()
		}
		wctx := tick.context(wait, r.filesDue)
		ev, err := r.exec.Next(wctx)
		tickDue := false
		if err != nil && wctx.Err() != nil {
			// The deadline passed, or ctx was cancelled: the next wait
			// gets a new deadline.
			tickDue = tick.passed() || errors.Is(wctx.Err(), context.Canceled)
		}
		switch {
		case errors.Is(err, hone.ErrIdle):
			if stuck, why := r.ctl.Stuck(); stuck {
				return nil, fmt.Errorf("experiment stuck: %s", why)
			}
			if r.ctl.Done() {
				break
			}
			return nil, fmt.Errorf("experiment stuck: the executor has nothing running but the controller has %d live trials", r.ctl.Alive())
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
			if !r.filesDue.IsZero() && !time.Now().Before(r.filesDue) {
				if err := r.flushResults(); err != nil {
					return nil, err
				}
			}
			if !tickDue {
				break // the wait ended to flush results, not for a tick
			}
			if err := r.step(controller.Input{Kind: controller.InTick, Time: r.clock.Now().UnixNano()}); err != nil {
				return nil, err
			}
		case err != nil:
			return nil, fmt.Errorf("executor: %w", err)
		default:
			if err := r.step(r.input(ev)); err != nil {
				return nil, err
			}
		}
	}
	return nil, r.ctl.Err()
}

// tickDeadline hands every wait for an event the same deadline until it
// passes (a context per event would cost a timer per event), so the
// controller sees a tick at least every Tick, whether events keep coming
// or none do. A wait also ends when buffered results are due a flush.
type tickDeadline struct {
	d      time.Duration
	tickAt time.Time // when the controller is due a tick; zero: a new period
	at     time.Time // ctx's deadline
	parent context.Context
	ctx    context.Context
	cancel context.CancelFunc
}

// context returns a context that ends at the next tick or at due (if not
// zero), whichever comes first, or when parent ends.
func (t *tickDeadline) context(parent context.Context, due time.Time) context.Context {
	if t.parent != parent || t.tickAt.IsZero() {
		t.stop()
		t.parent, t.tickAt = parent, time.Now().Add(t.d)
	}
	at := t.tickAt
	if !due.IsZero() && due.Before(at) {
		at = due
	}
	if t.ctx == nil || !at.Equal(t.at) {
		t.drop()
		t.at = at
		t.ctx, t.cancel = context.WithDeadline(parent, at)
	}
	return t.ctx
}

// passed is called when a wait's context ended. It reports whether the
// tick is due, and if so starts a new period.
func (t *tickDeadline) passed() bool {
	t.drop()
	if time.Now().Before(t.tickAt) {
		return false
	}
	t.tickAt = time.Time{}
	return true
}

func (t *tickDeadline) drop() {
	if t.cancel != nil {
		t.cancel()
	}
	t.ctx, t.cancel = nil, nil
}

func (t *tickDeadline) stop() {
	t.drop()
	t.tickAt = time.Time{}
}

// input converts an executor event, committing its staged checkpoint first.
func (r *runner) input(ev hone.Event) controller.Input {
	var ref *controller.CheckpointRef
	var commitErr error
	if ev.CheckpointDir != "" {
		idx, dest, err := r.ctl.NextCheckpointPath(ev.TrialID)
		if err == nil {
			err = r.store.Commit(ev.CheckpointDir, dest)
		}
		if err != nil {
			commitErr = fmt.Errorf("commit checkpoint: %w", err)
		} else {
			ref = &controller.CheckpointRef{Index: idx, Path: dest}
		}
	}
	in := controller.FromEvent(ev, ref)
	if commitErr != nil && in.Err == "" {
		in.Err = commitErr.Error()
	}
	return in
}

// step journals one input, steps the controller and carries out its
// actions; inputs produced while acting (a trial that failed to start)
// follow in order.
func (r *runner) step(in controller.Input) error {
	r.deferred = append(r.deferred, in)
	for len(r.deferred) > 0 {
		in := r.deferred[0]
		r.deferred = r.deferred[1:]
		if err := r.jw.AppendInput(&in); err != nil {
			return err
		}
		r.ctl.Step(in)
		if err := r.apply(r.ctl.Ready()); err != nil {
			return err
		}
	}
	now := time.Now()
	if !r.filesDue.IsZero() && !now.Before(r.filesDue) {
		if err := r.flushResults(); err != nil {
			return err
		}
	}
	if now.Sub(r.lastSync) >= syncEvery {
		r.lastSync = now
		if err := r.jw.Sync(); err != nil {
			return err
		}
	}
	return nil
}

// apply journals the records among acts and carries out the rest. The
// journal is handed to the operating system before any action with an
// effect outside this process — starting a trial (unless the executor is
// hone.Contained), deleting a checkpoint, writing a file, calling a
// callback — so that nothing outside ever runs ahead of the journal;
// directives and log lines need no flush (the journal's group commit hands
// them over within journal.FlushDelay).
func (r *runner) apply(acts []controller.Action) error {
	flush := false
	for i := range acts {
		switch acts[i].Kind {
		case controller.ActRecord:
			if err := r.jw.AppendRecord(acts[i].Record); err != nil {
				return err
			}
		case controller.ActDirect, controller.ActLog:
		case controller.ActStart:
			flush = flush || !r.contained
		case controller.ActNotify:
			// A buffered callback's result changes nothing outside until
			// flushResults, which flushes the journal first.
			flush = flush || r.unbuffered > 0 || (len(r.buffered) > 0 && acts[i].Note != controller.NoteResult)
		default:
			flush = true
		}
	}
	if flush {
		if err := r.jw.Flush(); err != nil {
			return err
		}
	}
	for i := range acts {
		a := &acts[i]
		switch a.Kind {
		case controller.ActStart:
			if err := r.start(a); err != nil {
				r.deferred = append(r.deferred, controller.Input{Kind: controller.InStartFailed,
					Trial: a.Trial.ID, Time: r.clock.Now().UnixNano(), Err: err.Error()})
			}
		case controller.ActDirect:
			if err := r.exec.Direct(a.Trial.ID, a.Directive); err != nil {
				r.logf("trial %s: %s: %v", a.Trial.ID, a.Directive, err)
			}
		case controller.ActDelete:
			if err := r.store.Delete(a.Checkpoint.Path); err != nil {
				r.logf("delete checkpoint %s: %v", a.Checkpoint.Path, err)
			}
		case controller.ActNotify:
			r.notify(a)
		case controller.ActLog:
			r.logf("%s", a.Text)
		case controller.ActAppend:
			if err := appendLine(filepath.Join(r.opts.Dir, filepath.FromSlash(a.Path)), a.Text); err != nil {
				r.logf("append to %s: %v", a.Path, err)
			}
		case controller.ActCopy:
			if err := copyFile(filepath.Join(r.opts.Dir, filepath.FromSlash(a.Src)), filepath.Join(r.opts.Dir, filepath.FromSlash(a.Path))); err != nil {
				r.logf("copy %s to %s: %v", a.Src, a.Path, err)
			}
		}
	}
	return nil
}

func (r *runner) start(a *controller.Action) error {
	t := a.Trial
	// The executor creates the directory when it writes there: a simulated
	// trial that never checkpoints costs no mkdir.
	dir := filepath.Join(r.opts.Dir, filepath.FromSlash(t.Dir))
	spec := hone.StartSpec{TrialID: t.ID, Config: t.Config, Dir: dir, Iteration: a.Iteration, Resources: t.Resources}
	if a.Checkpoint != nil {
		d, err := r.store.LocalDir(a.Checkpoint.Path)
		if err != nil {
			return fmt.Errorf("restore from %s: %w", a.Checkpoint.Path, err)
		}
		spec.RestoreDir = d
	}
	if err := r.exec.Start(spec); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	return nil
}

func (r *runner) notify(a *controller.Action) {
	if a.Note == controller.NoteResult && len(r.buffered) > 0 && r.filesDue.IsZero() {
		r.filesDue = time.Now().Add(r.opts.flushEvery)
	}
	for _, cb := range r.exp.Callbacks {
		switch a.Note {
		case controller.NoteStart:
			cb.OnTrialStart(a.Trial)
		case controller.NoteResult:
			cb.OnTrialResult(a.Trial, a.Result)
		case controller.NoteCheckpoint:
			cb.OnCheckpoint(a.Trial, a.Checkpoint)
		case controller.NoteComplete:
			cb.OnTrialComplete(a.Trial)
		case controller.NoteError:
			cb.OnTrialError(a.Trial, errors.New(a.Err))
		case controller.NoteEnd:
			cb.OnExperimentEnd(r.ctl.Trials())
		}
	}
}

// flushResults hands the journal to the operating system, then has every
// buffered callback flush its results, then journals that it did.
func (r *runner) flushResults() error {
	r.filesDue = time.Time{}
	if err := r.jw.Flush(); err != nil {
		return err
	}
	for _, cb := range r.buffered {
		cb.FlushResults()
	}
	return r.jw.AppendRecord(&controller.Record{Op: opResultsFlushed})
}

// recovered is a result a buffered callback may have lost to a kill.
type recovered struct {
	t   *hone.Trial
	r   *hone.Result
	seq int // the result's position among the trial's results
}

// resultsToRecover prepares what resume hands buffered callbacks: the
// results of the journal inputs after the last opResultsFlushed record.
// It returns the index of the first such line and the trials they belong
// to, whose results take part in the count (recovered.seq).
func resultsToRecover(lines []journal.Line) (from int, trials map[string]int) {
	for i := len(lines) - 1; i >= 0; i-- {
		if l := lines[i]; l.Rec != nil && l.Rec.Op == opResultsFlushed {
			from = i + 1
			break
		}
	}
	trials = map[string]int{}
	for _, l := range lines[from:] {
		if l.In != nil && l.In.Kind == controller.InResult {
			trials[l.In.Trial] = 0
		}
	}
	return from, trials
}

// cleanStorage removes what a crash left behind: uncommitted staging and
// temporary directories, and committed checkpoints the journal never
// registered (no one was told of them).
func (r *runner) cleanStorage() error {
	var exists map[string]bool // top-level entries, when the store can tell
	if l, ok := r.store.(hone.TopLister); ok {
		names, err := l.ListTop()
		if err != nil {
			return fmt.Errorf("list the experiment directory: %w", err)
		}
		exists = make(map[string]bool, len(names))
		for _, n := range names {
			exists[n] = true
		}
	}
	for _, t := range r.ctl.Trials() {
		if top, _, _ := strings.Cut(path.Clean(t.Dir), "/"); exists != nil && !exists[top] {
			continue // no directory: nothing to clean
		}
		committed, leftovers, err := r.store.List(t.Dir)
		if err != nil {
			return fmt.Errorf("list checkpoints of %s: %w", t.ID, err)
		}
		for _, p := range leftovers {
			if err := r.store.Delete(p); err != nil {
				return fmt.Errorf("remove leftover %s: %w", p, err)
			}
		}
		for _, p := range committed {
			if !r.ctl.Registered(p) {
				r.logf("removing checkpoint %s: committed but never registered before the crash", p)
				if err := r.store.Delete(p); err != nil {
					return fmt.Errorf("remove unregistered %s: %w", p, err)
				}
			}
		}
	}
	return nil
}

// Exists reports whether dir holds an experiment (a journal), which Resume
// can continue.
func Exists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, journal.FileName))
	return err == nil
}

// appendLine appends line and a newline to the file at p, creating it and
// its directory if needed.
func appendLine(p, line string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// copyFile makes dst an atomic copy of src; a missing src makes dst empty.
func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return fsutil.WriteFileAtomicNoSync(dst, data, 0o644)
}

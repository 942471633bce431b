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
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
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
	// Pool is the resources trials share. Default: one CPU per core; for
	// an executor on a virtual clock (the simulated executor), which has
	// no cores, VirtualPool, so that MaxConcurrentTrials (or the
	// searcher) sets how many trials run at once, the same on every
	// machine. A pool in which a trial of Experiment.Resources does not
	// fit is an error before anything starts.
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
	// checkpoint and stop before the executor is closed, and how long the
	// end of an experiment waits for the checkpoint commits and deletes
	// still running before cancelling them (the context given to the
	// store ends then, so a stuck upload cannot hold up the end). Default
	// 30 s.
	StopGrace time.Duration
	// TruncateJournal lets Resume continue from the valid prefix of a
	// journal with a corrupt record in the middle, cutting the rest (kept,
	// durably, in <journal>.corrupt-<n> beside it); without it such a
	// journal is an error naming the line, and nothing is changed. A torn last line (a crash during a write) needs
	// no option: Resume always cuts it off before appending.
	TruncateJournal bool
	// BeforeDelete, if set, is called before each checkpoint the
	// experiment deletes (one the retention policy pruned, or one a
	// stopped trial committed that nobody registered), after the journal
	// holding the reason for the delete has been handed to the operating
	// system. If it returns an error the checkpoint is kept and the error
	// is logged ("kept checkpoint X: ..."). It runs on the runner's store
	// pool, so it may be called from several goroutines at once and
	// concurrently with the runner appending to the journal; its ctx ends
	// when the runner gives up on its store operations (see StopGrace).
	// Resume's cleanup of what a crash left does not call it.
	BeforeDelete func(ctx context.Context) error

	// NoSnapshots: the runner neither writes journal snapshots nor
	// resumes from them (a resume replays the whole journal). For
	// measurements and tests; snapshots never change what a resume
	// rebuilds, only how fast.
	NoSnapshots bool

	// flushEvery overrides flushResultsEvery (tests).
	flushEvery time.Duration
	// markEvery overrides markEvery (tests).
	markEvery time.Duration
	// snapEvery, when positive, takes a snapshot whenever the journal has
	// grown by that many bytes and one can be taken, written before the
	// runner goes on, and snapKeep keeps that many (tests).
	snapEvery int64
	snapKeep  int
}

// Outcome is how an experiment ended.
type Outcome struct {
	// Trials are every trial in creation order.
	Trials []*hone.Trial
	// Interrupted is true when ctx was cancelled: running trials were asked
	// to checkpoint and stop, and Resume continues the experiment.
	Interrupted bool
	// Stopped says why an experiment-wide stop (a time budget, a stopper,
	// fail_fast, a full disk) ended the experiment before its trials did,
	// or is empty. Unfinished trials are left resumable either way.
	Stopped string
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
	settings := r.ctl.Settings()
	r.jw, err = journal.Create(jp, journal.Header{Name: exp.Name, Seed: exp.Seed, Created: r.clock.Now().UnixNano(), Settings: &settings})
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	return r.loop(ctx, hone.Event{Kind: hone.EventBegin})
}

// Resume continues the experiment in opts.Dir. exp must be built the way
// the original was (same searcher, scheduler and seed): its state is
// rebuilt by replaying the journal. Trials that were RUNNING restart from
// their latest checkpoint (or, if it was deleted, the newest one that
// exists, or scratch); uncommitted and unregistered checkpoint
// directories are removed. A torn last journal line is cut off (durably)
// before anything is appended, records of the last input that the journal
// lost are written again, and the buffered callbacks (the per-trial files)
// are made to hold exactly the journal's results.
func Resume(ctx context.Context, exp *hone.Experiment, opts Options, flags hone.ResumeFlags) (*Outcome, error) {
	r, err := newRunner(exp, opts)
	if err != nil {
		return nil, err
	}
	if err := r.prepareExecutor(); err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	jp := r.jpath()
	// The journal is replayed with the settings each session ran with; this
	// session's, from exp and opts, take over at the resume input.
	settings := r.ctl.Settings()
	flags.Settings = &settings
	j, snapCounts, err := r.fromSnapshot(settings)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	snapped := j != nil
	if !snapped {
		if j, err = journal.ReadPrefix(jp); err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
	}
	if j.Corrupt != nil && !opts.TruncateJournal {
		return nil, fmt.Errorf("resume: %w (%d complete lines before it); nothing was changed. "+
			"To continue from those lines on purpose, resume with Options.TruncateJournal (hone resume --truncate-journal): "+
			"the lines from %d on are then kept in %s%sN and cut", j.Corrupt, j.Corrupt.Line-1, j.Corrupt.Line, journal.FileName, journal.CorruptSuffix)
	}
	if j.Header.Seed != exp.Seed {
		return nil, fmt.Errorf("resume: the experiment was run with seed %d, not %d; resume needs the same seed", j.Header.Seed, exp.Seed)
	}
	// A snapshot holds the settings its session ran with; a replay from
	// the start takes those of the header.
	if !snapped {
		if err := replaySettings(r.ctl, j.Header, settings); err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
	}
	var from int
	var seqs map[string]int // results so far of the trials in recover
	var recover []recovered
	counts := map[string]int{} // results of every trial in the journal
	if len(r.buffered) > 0 {
		from, seqs = resultsToRecover(j.Lines)
		// A snapshot's results are all safe in the files (see
		// snapshot.go); it counts those of the trials that may report.
		for id, n := range snapCounts {
			counts[id] = n
			if _, ok := seqs[id]; ok {
				seqs[id] = n
			}
		}
	}
	var missing []*controller.Record // the last input's records that a cut took
	last := lastInput(j.Lines)
	for i, l := range j.Lines {
		if l.Event == nil {
			continue
		}
		r.ctl.Step(*l.Event)
		acts := r.ctl.Ready()
		if err := sameTrials(j.Lines[i+1:], acts, func() int { return j.LineNumber(i) }); err != nil {
			return nil, fmt.Errorf("resume: %s holds a different experiment: %w; resume it with the spec and the hone version it was started with (another version may decide otherwise: the choices of searcher and scheduler auto and the fidelity check have changed between versions), or start a new experiment directory", opts.Dir, err)
		}
		if i == last {
			missing = missingRecords(j.Lines[i+1:], acts)
		}
		if len(r.buffered) == 0 {
			continue
		}
		for k := range acts {
			a := &acts[k]
			if a.Kind != controller.ActNotify || a.Note != controller.NoteResult {
				continue
			}
			counts[a.Trial.ID]++
			if n, ok := seqs[a.Trial.ID]; ok {
				seqs[a.Trial.ID] = n + 1
				if i >= from {
					recover = append(recover, recovered{a.Trial, a.Result, n})
				}
			}
		}
	}
	if j.Corrupt != nil {
		kept, err := journal.Cut(jp, j.Size)
		if err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
		r.logf("%v: continuing from the %d lines before it as asked; the lines cut are kept in %s", j.Corrupt, j.Corrupt.Line-1, kept)
	} else if j.Torn {
		r.logf("journal had a torn last line from a crash; cut it off")
	}
	if err := r.cleanStorage(); err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	r.jw, err = journal.Append(jp, j.Size)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	if err := r.rejournal(missing); err != nil {
		return nil, fmt.Errorf("resume: %w", errors.Join(err, r.jw.Close()))
	}
	if r.results != nil {
		r.results = counts
	}
	if err := r.recoverResults(counts, seqs, recover); err != nil {
		return nil, fmt.Errorf("resume: %w", errors.Join(err, r.jw.Close()))
	}
	for _, cb := range exp.Callbacks {
		if rc, ok := cb.(hone.ResumeCallback); ok {
			rc.OnExperimentResume(r.ctl.Trials())
		}
	}
	// This resume's input, and those of earlier resumes in the replayed
	// tail, count towards the next snapshot (see resumeWeight).
	resumes := int64(1)
	for _, l := range j.Lines {
		if l.Event != nil && l.Event.Kind == hone.EventResume {
			resumes++
		}
	}
	r.snapDebt = resumes * resumeWeight * int64(len(r.ctl.Trials()))
	return r.loop(ctx, hone.Event{Kind: hone.EventResume, Resume: &flags})
}

// replaySettings gives ctl, before a replay of the journal from its
// start, the settings of the journal's first session: those of its header,
// or for a journal from before hone recorded them, this session's
// (settings) as they were then.
func replaySettings(ctl *controller.Controller, h journal.Header, settings hone.Settings) error {
	if h.Settings != nil {
		if err := ctl.ApplySettings(*h.Settings); err != nil {
			return fmt.Errorf("the journal's header: %w", err)
		}
		return nil
	}
	// A journal from before hone recorded settings: it ran with this
	// session's settings, except that its executor announced no starts
	// and its ids were drawn for every suggestion asked for (hone did
	// neither then).
	old := settings
	old.StartsAnnounced, old.SpareIDs = false, false
	return ctl.ApplySettings(old)
}

// rejournal appends, durably, the records of the journal's last input that
// a cut took (missingRecords), so that readers of the journal and the next
// resume see the trials and states this run continues from.
func (r *runner) rejournal(missing []*controller.Record) error {
	if len(missing) == 0 {
		return nil
	}
	r.logf("journal ended inside the records of its last input; wrote the %d missing records again", len(missing))
	for _, rec := range missing {
		if err := r.jw.AppendRecord(rec); err != nil {
			return err
		}
	}
	return r.jw.Sync()
}

// recoverResults makes the buffered callbacks hold exactly the results of
// the journal: each trial that may hold more (a journal cut short) drops
// the rest, then the results journaled after the last safe point are
// handed back (the callbacks keep what they hold and take the rest).
// counts are every trial's results in the journal; after holds the trials
// with results after the last safe point.
func (r *runner) recoverResults(counts, after map[string]int, recover []recovered) error {
	if len(r.buffered) == 0 {
		return nil
	}
	var errs []error
	for _, t := range r.ctl.Trials() {
		// A TERMINATED trial never reports again, so the journal cannot
		// have lost results of it past the last safe point; any other
		// trial (unfinished, or ERROR and retried by a later resume) may.
		if _, ok := after[t.ID]; t.Status == hone.StatusTerminated && !ok {
			continue
		}
		for _, cb := range r.buffered {
			if err := cb.KeepResults(t, counts[t.ID]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, rc := range recover {
		for _, cb := range r.buffered {
			cb.RecoverResult(rc.t, rc.r, rc.seq)
		}
	}
	for _, cb := range r.fallible {
		errs = append(errs, cb.TakeErrors()...)
	}
	for _, cb := range r.buffered {
		if err := cb.FlushResults(true); err != nil {
			errs = append(errs, err)
		}
	}
	if err := r.recoveryErrors(errs); err != nil {
		return err
	}
	if len(errs) == 0 {
		return r.jw.AppendRecord(&controller.Record{Op: opResultsFlushed})
	}
	return nil
}

// recoveryErrors acts on the callbacks' errors while resume recovers
// results, before any trial runs: a full disk (or an error that is no
// trial's) is returned; a trial's error is logged (the trial fails when it
// next runs and its files still cannot be written).
func (r *runner) recoveryErrors(errs []error) error {
	errs = flatten(errs)
	if len(errs) == 0 {
		return nil
	}
	r.flushFailed = true
	var fatal []error
	for _, err := range errs {
		var te *hone.TrialError
		if !isDiskFull(err) && errors.As(err, &te) {
			r.logf("trial %s: recovering result rows: %v", te.TrialID, te.Err)
			continue
		}
		fatal = append(fatal, err)
	}
	if len(fatal) > 0 {
		return fmt.Errorf("recover result rows: %w", errors.Join(fatal...))
	}
	return nil
}

// lastInput returns the index of the last input line, or -1.
func lastInput(lines []journal.Line) int {
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i].Event != nil {
			return i
		}
	}
	return -1
}

// missingRecords returns the records the replay of the journal's last input
// produced that the journal does not hold: a journal cut short loses the
// end of them. following are the journal lines after that input; the
// records it holds are the first of acts' records (sameTrials has checked
// the trials among them; the others may differ when a resume changed a
// setting such as max_failures, and the replay's are then the ones this
// run continues from).
func missingRecords(following []journal.Line, acts []controller.Action) []*controller.Record {
	held := 0
	for _, l := range following {
		if l.Rec != nil && l.Rec.Op != opResultsFlushed {
			held++
		}
	}
	var missing []*controller.Record
	for i := range acts {
		if acts[i].Kind != controller.ActRecord {
			continue
		}
		if held > 0 {
			held--
			continue
		}
		rec := *acts[i].Record
		missing = append(missing, &rec)
	}
	return missing
}

// sameTrials checks, while resume replays the journal, that the trials
// the replayed controller adds are the ones the original run added (same
// ids, indexes, configurations and tags), so that resuming with a changed
// search space, number of samples or searcher fails clearly instead of
// diverging. following holds the journal lines after the input at journal
// line lineNo(); acts are the actions its replay produced. A journal that
// ends early (a crash) may lack the last input's records.
func sameTrials(following []journal.Line, acts []controller.Action, lineNo func() int) error {
	var journaled []*controller.Record
	end := true // no input follows: the tail of the journal
	for _, l := range following {
		if l.Event != nil {
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
			return fmt.Errorf("after journal line %d it adds trial %s (config %v), which the original run did not", lineNo(), a.Record.Trial, map[string]any(a.Record.Config))
		}
		if want := journaled[n]; !journal.SameRecord(a.Record, want) {
			return fmt.Errorf("after journal line %d the original run added trial %s, this one adds %s",
				lineNo(), describeTrial(want, a.Record), describeTrial(a.Record, want))
		}
		n++
	}
	if n < len(journaled) {
		return fmt.Errorf("after journal line %d the original run added trial %s (config %v), this one does not", lineNo(), journaled[n].Trial, map[string]any(journaled[n].Config))
	}
	return nil
}

// describeTrial names trial record r for a replay mismatch with other:
// its id and config, and whichever of its index, tag, directory and
// resources differ from other's.
func describeTrial(r, other *controller.Record) string {
	d := fmt.Sprintf("%s with config %v", r.Trial, map[string]any(r.Config))
	if r.Index != other.Index {
		d += fmt.Sprintf(", index %d", r.Index)
	}
	if r.Tag != other.Tag {
		d += fmt.Sprintf(", tag %q", r.Tag)
	}
	if r.Dir != other.Dir {
		d += fmt.Sprintf(", directory %s", r.Dir)
	}
	if rs, ors := fmt.Sprint(r.Resources), fmt.Sprint(other.Resources); rs != ors {
		d += ", resources " + rs
	}
	return d
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

	deferred []hone.Event
	lastSync time.Time // wall time of the last journal fsync
	lastMark time.Time // wall time of the last synced flush of results

	// buffered are the callbacks that buffer results (hone.BufferedCallback);
	// unbuffered counts the others.
	buffered   []hone.BufferedCallback
	unbuffered int
	// fallible are the callbacks that report errors (hone.FallibleCallback).
	fallible []hone.FallibleCallback
	// unmarked: results were notified since the last opResultsFlushed.
	unmarked bool
	// flushFailed: a callback failed in this session, so no result is
	// recorded safe any more (a resume takes every one it may lack).
	flushFailed bool
	// fresh holds the trials created in this session that have not started
	// yet: a directory they find is not theirs (see start).
	fresh map[string]bool
	// filesDue is when buffered results must be flushed; zero when none is
	// waiting.
	filesDue time.Time
	// contained: the executor's trials cannot outlive this process.
	contained bool
	// remoteCommits: the executor's trials commit their checkpoints and
	// download their restore points themselves (hone.RemoteCommitter).
	remoteCommits bool

	// async: checkpoint commits and deletes run on the store pool, off
	// this goroutine (every executor but one on virtual time, whose order
	// of events must not depend on how long a commit takes).
	async bool
	// sctx is the context of every store operation; scancel ends it once
	// the end of the experiment has waited the stop grace for the pool.
	sctx    context.Context
	scancel context.CancelFunc
	// sem bounds the store operations running at once on the pool.
	sem chan struct{}
	// held has an entry for each trial whose checkpoint is being
	// committed: the event carrying it, then the trial's later events,
	// which wait for it in order.
	held map[string][]hone.Event
	// inflight counts the commits started and not yet finished (taken
	// from done by the loop).
	inflight int
	// pool waits for every goroutine of the store pool (commits and
	// deletes).
	pool sync.WaitGroup
	// tails orders the pool's operations on each checkpoint path: the
	// channel of the last one issued, closed when it ends. Only the
	// runner's goroutine issues operations; pmu guards tails, which the
	// pool's goroutines clear.
	pmu   sync.Mutex
	tails map[string]chan struct{}
	// cmu guards done and wake, which the commit goroutines touch.
	cmu sync.Mutex
	// done are the finished commits the loop has not taken yet.
	done []commitDone
	// wake ends the loop's current wait for an event, if set.
	wake context.CancelFunc
	// lmu serializes writes to the log, which the pool writes too.
	lmu sync.Mutex

	// snapAt is the journal offset of the newest snapshot (0 for none),
	// snapSize its size; snapBroken: the controller cannot be saved, so
	// no snapshot is tried again in this session (see snapshot.go).
	snapAt, snapSize int64
	snapBroken       bool
	// snapDebt is what the journal's tail costs to replay beyond its
	// size, in bytes (resume inputs: resumeWeight per trial).
	snapDebt int64
	// snapWriting is closed when the snapshot being written is; nil when
	// none is.
	snapWriting chan struct{}
	// results counts the results each trial has reported in the journal
	// (kept when there are buffered callbacks, for snapshots; trials that
	// are TERMINATED are dropped at each snapshot).
	results map[string]int
}

// jpath is the journal's path.
func (r *runner) jpath() string { return filepath.Join(r.opts.Dir, journal.FileName) }

// poolWorkers is how many checkpoint commits and deletes run at once.
const poolWorkers = 4

// commitDone is a finished commit of ev's checkpoint to dest (index idx).
type commitDone struct {
	ev   hone.Event
	idx  int
	dest string
	err  error
}

// syncEvery is how often the journal is fsynced while an experiment runs.
// Every line reaches the operating system before the runner acts on it,
// which is what a killed process needs; fsyncs, which only a power loss
// needs, are batched.
const syncEvery = time.Second

// markEvery is how often the buffered callbacks' results are fsynced and
// recorded safe (opResultsFlushed) while an experiment runs: a resume
// recovers the results since, so this bounds its work, while the fsyncs
// of every trial's files stay rare.
const markEvery = 10 * time.Second

// flushResultsEvery is how long a result may wait in a buffered callback
// (the per-trial files) before the runner flushes it, so that a trial
// reporting thousands of results a second costs a few writes, not one per
// result, and a reader of result.json still sees rows promptly.
const flushResultsEvery = 100 * time.Millisecond

// opResultsFlushed is the journal record written after buffered callbacks
// flushed and synced every result journaled before it, without an error
// in the session; resume recovers only the results after the last one.
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
		if virtualTime(opts.Executor) {
			opts.Pool = VirtualPool(exp)
		} else {
			opts.Pool.CPU = float64(runtime.NumCPU())
		}
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
	if opts.markEvery <= 0 {
		opts.markEvery = markEvery
	}
	if opts.snapKeep <= 0 {
		opts.snapKeep = journal.KeepSnapshots
	}
	ctl, err := controller.New(exp, opts.Pool)
	if err != nil {
		return nil, err
	}
	r := &runner{exp: exp, opts: opts, ctl: ctl, exec: opts.Executor, store: opts.Store, clock: opts.Clock, log: opts.Log}
	if c, ok := opts.Executor.(hone.Contained); ok {
		r.contained = c.Contained()
	}
	if c, ok := opts.Executor.(hone.RemoteCommitter); ok {
		r.remoteCommits = c.CommitsRemotely()
	}
	if a, ok := opts.Executor.(hone.StartAnnouncer); ok && a.AnnouncesStarts() {
		// Its trials may be queued after Start: their limits count from
		// their EventStarted. The session's settings journal this.
		ctl.SetStartsAnnounced(true)
	}
	r.sctx, r.scancel = context.WithCancel(context.Background())
	if !virtualTime(opts.Executor) {
		r.async = true
		r.sem = make(chan struct{}, poolWorkers)
		r.held = map[string][]hone.Event{}
		r.tails = map[string]chan struct{}{}
	}
	for _, cb := range exp.Callbacks {
		if b, ok := cb.(hone.BufferedCallback); ok {
			r.results = map[string]int{}
			r.buffered = append(r.buffered, b)
		} else {
			r.unbuffered++
		}
		if f, ok := cb.(hone.FallibleCallback); ok {
			r.fallible = append(r.fallible, f)
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

// virtualTime reports whether the executor's clock is virtual
// (hone.VirtualClock).
// VirtualSlots is how many trials the default pool of an executor on a
// virtual clock holds when Experiment.MaxConcurrentTrials is smaller.
const VirtualSlots = 1024

// VirtualPool is the default pool of an executor on a virtual clock: room
// for max(MaxConcurrentTrials, VirtualSlots) trials of exp.Resources (1
// CPU when unset), so that the pool, unlike the machine's cores, never
// caps MaxConcurrentTrials.
func VirtualPool(exp *hone.Experiment) hone.Resources {
	need := exp.Resources
	if need.CPU == 0 && need.GPU == 0 && need.Memory == 0 && len(need.Custom) == 0 {
		need = hone.Resources{CPU: 1}
	}
	n := max(exp.MaxConcurrentTrials, VirtualSlots)
	pool := hone.Resources{CPU: need.CPU * float64(n), GPU: need.GPU * float64(n), Memory: need.Memory * int64(n)}
	if need.Memory > math.MaxInt64/int64(n) {
		pool.Memory = math.MaxInt64
	}
	for k, v := range need.Custom {
		if pool.Custom == nil {
			pool.Custom = map[string]float64{}
		}
		pool.Custom[k] = v * float64(n)
	}
	return pool
}

func virtualTime(e hone.Executor) bool {
	c, ok := e.(hone.Clocked)
	if !ok {
		return false
	}
	v, ok := c.Clock().(hone.VirtualClock)
	return ok && v.Virtual()
}

func (r *runner) logf(format string, args ...any) {
	r.lmu.Lock()
	defer r.lmu.Unlock()
	fmt.Fprintf(r.log, "hone: "+format+"\n", args...)
}

// loop steps the first input, then events until the controller is done.
func (r *runner) loop(ctx context.Context, first hone.Event) (out *Outcome, err error) {
	defer func() {
		r.waitPool()
		cerr := r.exec.Close()
		var ferr error
		if r.unmarked || !r.filesDue.IsZero() {
			ferr = r.flushResults(true)
		}
		var serr error
		// The controller's state follows the journal unless the journal
		// failed: an error of the experiment's own (fail_fast, say) is
		// not the journal's.
		whole := err == nil || (r.ctl.Err() != nil && err == r.ctl.Err())
		if whole && cerr == nil && ferr == nil && len(r.deferred) == 0 && r.snapshotDue(snapEndBytes, true) {
			serr = r.writeSnapshot(true)
		}
		r.waitSnapshot()
		jerr := r.jw.Close()
		if err == nil {
			err = errors.Join(cerr, ferr, serr, jerr)
		}
		if isDiskFull(err) {
			r.logf("stopped: the disk is full (%v); the journal is intact and the experiment resumes where it stopped once there is space", err)
		}
		out = &Outcome{Trials: r.ctl.Trials(), Interrupted: r.ctl.Interrupted()}
		if !out.Interrupted {
			out.Stopped = r.ctl.StopReason()
		}
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
			if err := r.step(hone.Event{Kind: hone.EventInterrupt, Time: r.clock.Now().UnixNano()}); err != nil {
				return nil, err
			}
			r.interruptExecutor()
			graceEnd = time.Now().Add(r.opts.StopGrace)
			continue
		}
		if graceEnd.IsZero() && r.ctl.Stopping() {
			// fail_fast, the time budget, a stopper: trials save and stop
			// as on an interrupt, signalled the same way, within the same
			// grace.
			r.interruptExecutor()
			graceEnd = time.Now().Add(r.opts.StopGrace)
		}
		if !graceEnd.IsZero() && time.Now().After(graceEnd) {
			r.logf("trials did not stop within %v; closing the executor", r.opts.StopGrace)
			return nil, r.ctl.Err()
		}
		wait := ctx
		if r.ctl.Interrupted() {
			wait = context.Background()
		}
		wctx := tick.context(wait, r.filesDue)
		nctx, woken := wctx, context.CancelFunc(nil)
		if r.inflight > 0 {
			r.cmu.Lock()
			done := r.done
			r.done = nil
			if len(done) == 0 {
				nctx, woken = context.WithCancel(wctx)
				r.wake = woken
			}
			r.cmu.Unlock()
			if len(done) > 0 {
				for _, d := range done {
					if err := r.finish(d); err != nil {
						return nil, err
					}
				}
				continue
			}
		}
		ev, err := r.exec.Next(nctx)
		if woken != nil {
			if errors.Is(err, hone.ErrIdle) {
				// Nothing runs but commits: wait for one (or the tick).
				<-nctx.Done()
				err = nctx.Err()
			}
			r.cmu.Lock()
			r.wake = nil
			r.cmu.Unlock()
			woken()
			if errors.Is(err, context.Canceled) && wctx.Err() == nil {
				continue // a commit finished
			}
		}
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
				if err := r.flushResults(false); err != nil {
					return nil, err
				}
				if err := r.drain(); err != nil {
					return nil, err
				}
			}
			if !tickDue {
				break // the wait ended to flush results, not for a tick
			}
			if err := r.step(hone.Event{Kind: hone.EventTick, Time: r.clock.Now().UnixNano()}); err != nil {
				return nil, err
			}
		case err != nil:
			return nil, fmt.Errorf("executor: %w", err)
		default:
			if err := r.arrive(ev); err != nil {
				return nil, err
			}
		}
	}
	return nil, r.ctl.Err()
}

// arrive takes an event from the executor: it waits behind its trial's
// checkpoint being committed, if any, or is delivered now.
func (r *runner) arrive(ev hone.Event) error {
	if q, ok := r.held[ev.TrialID]; ok {
		r.held[ev.TrialID] = append(q, ev)
		return nil
	}
	return r.deliver(ev)
}

// deliver steps ev, the oldest event of its trial not yet stepped. With
// the commit pool, an event carrying a checkpoint starts its commit and
// is held (with the trial's later events) until finish steps it; its path
// is taken now, after every earlier checkpoint of the trial was stepped,
// so no two commits of a trial share an index.
func (r *runner) deliver(ev hone.Event) error {
	if err := trialDiskFull(ev); err != nil {
		return err
	}
	if ev.Kind == hone.EventExited && errors.Is(ev.Cause, hone.ErrStopExperiment) {
		return fmt.Errorf("trial %s: %w", ev.TrialID, ev.Cause)
	}
	if !r.async || !hasCheckpoint(ev) {
		in, err := r.input(ev)
		if err != nil {
			return err
		}
		return r.step(in)
	}
	idx, dest, err := r.ctl.NextCheckpointPath(ev.TrialID)
	if err != nil {
		in, err := r.committed(ev, 0, "", err)
		if err != nil {
			return err
		}
		return r.step(in)
	}
	r.held[ev.TrialID] = []hone.Event{ev}
	r.inflight++
	after, release := r.claim(dest)
	r.pool.Add(1)
	go r.commit(ev, idx, dest, after, release)
	return nil
}

// claim reserves the checkpoint path p for a pool operation issued now,
// on the runner's goroutine: after is closed once every operation on p
// issued before has ended, and release ends this one. So a delete never
// overtakes a commit of the same path still pending, nor a commit a
// delete.
func (r *runner) claim(p string) (after <-chan struct{}, release func()) {
	mine := make(chan struct{})
	r.pmu.Lock()
	prev := r.tails[p]
	r.tails[p] = mine
	r.pmu.Unlock()
	if prev == nil {
		prev = make(chan struct{})
		close(prev)
	}
	return prev, func() {
		r.pmu.Lock()
		if r.tails[p] == mine {
			delete(r.tails, p)
		}
		r.pmu.Unlock()
		close(mine)
	}
}

// commit runs on a goroutine of its own: once the operations on dest
// issued before it ended and the pool has room, it commits ev's
// checkpoint to dest, then hands the outcome to the loop and wakes it.
func (r *runner) commit(ev hone.Event, idx int, dest string, after <-chan struct{}, release func()) {
	defer r.pool.Done()
	<-after
	r.sem <- struct{}{}
	err := r.commitNow(ev, dest)
	<-r.sem
	release()
	r.cmu.Lock()
	r.done = append(r.done, commitDone{ev: ev, idx: idx, dest: dest, err: err})
	if r.wake != nil {
		r.wake()
		r.wake = nil
	}
	r.cmu.Unlock()
}

// remove deletes the checkpoint p: on the pool (after the operations on
// p issued before it), or at once with an executor on virtual time. The
// caller has handed the journal to the operating system first.
func (r *runner) remove(p string) {
	if !r.async {
		r.deleteNow(p)
		return
	}
	after, release := r.claim(p)
	r.pool.Add(1)
	go func() {
		defer r.pool.Done()
		<-after
		r.sem <- struct{}{}
		r.deleteNow(p)
		<-r.sem
		release()
	}()
}

// deleteNow calls BeforeDelete, then deletes the checkpoint p. A failure
// of either is logged: the checkpoint stays, and a later resume or the
// user removes it.
func (r *runner) deleteNow(p string) {
	if f := r.opts.BeforeDelete; f != nil {
		if err := f(r.sctx); err != nil {
			r.logf("kept checkpoint %s: %v", p, err)
			return
		}
	}
	if err := r.store.Delete(r.sctx, p); err != nil {
		r.logf("delete checkpoint %s: %v", p, err)
	}
}

// finish steps the event whose commit d finished, then delivers its
// trial's events that waited behind it, in order, until one starts a
// commit again.
func (r *runner) finish(d commitDone) error {
	r.inflight--
	id := d.ev.TrialID
	rest := r.held[id][1:]
	delete(r.held, id)
	in, err := r.committed(d.ev, d.idx, d.dest, d.err)
	if err != nil {
		return err
	}
	if err := r.step(in); err != nil {
		return err
	}
	if m := r.ctl.Manager(id); in.Checkpoint != nil && (m == nil || !m.Has(d.dest)) {
		// The controller ignored the event (its trial was told to stop
		// while the commit ran), as an executor drops the events a
		// stopped trial had queued: the checkpoint is nobody's. The
		// journal, which holds the event, goes to the operating system
		// first, as before any delete.
		if err := r.jw.Flush(); err != nil {
			return err
		}
		r.remove(d.dest)
	}
	for i, ev := range rest {
		if err := r.deliver(ev); err != nil {
			return err
		}
		if _, ok := r.held[id]; ok {
			r.held[id] = append(r.held[id], rest[i+1:]...)
			break
		}
	}
	return nil
}

// waitPool waits for the pool's commits and deletes still running, at
// most the stop grace, then cancels the context they run with and waits
// for them to give up, so that no store operation outlives Run or
// Resume. The events of unfinished commits are not journaled: a resume
// removes the checkpoints they committed, as after a crash.
func (r *runner) waitPool() {
	defer r.scancel()
	all := make(chan struct{})
	go func() {
		r.pool.Wait()
		close(all)
	}()
	select {
	case <-all:
		return
	default:
	}
	t := time.NewTimer(r.opts.StopGrace)
	defer t.Stop()
	select {
	case <-all:
	case <-t.C:
		r.logf("checkpoint commits and deletes did not finish within %v; cancelled them (a resume removes what they leave)", r.opts.StopGrace)
		r.scancel()
		<-all
	}
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

// input makes an executor event ready to journal: it commits the event's
// staged checkpoint first (see committed). A commit that fails because the
// disk is full stops the experiment (the event is not journaled: resume
// continues from the checkpoint before); any other commit failure fails
// the trial.
func (r *runner) input(ev hone.Event) (hone.Event, error) {
	var idx int
	var dest string
	var err error
	if hasCheckpoint(ev) {
		idx, dest, err = r.ctl.NextCheckpointPath(ev.TrialID)
		if err == nil {
			err = r.commitNow(ev, dest)
		}
	}
	return r.committed(ev, idx, dest, err)
}

// hasCheckpoint reports whether ev carries a checkpoint, staged or
// already stored.
func hasCheckpoint(ev hone.Event) bool { return ev.CheckpointDir != "" || ev.CheckpointStored != "" }

// commitNow makes ev's checkpoint the checkpoint at dest: it commits the
// staged directory, or links the checkpoint the trial's side stored (a
// server-side copy on an object store) and deletes that one. A failed
// commit discards what it was given: its trial fails and restarts from
// its latest registered checkpoint.
func (r *runner) commitNow(ev hone.Event, dest string) error {
	if ev.CheckpointDir != "" {
		err := r.store.Commit(r.sctx, ev.CheckpointDir, dest)
		r.discardStaged(ev.CheckpointDir, err)
		return err
	}
	err := r.store.Link(r.sctx, ev.CheckpointStored, dest)
	if err != nil {
		err = fmt.Errorf("link %s: %w", ev.CheckpointStored, err)
	}
	if derr := r.store.Delete(r.sctx, ev.CheckpointStored); derr != nil {
		// A leftover under the trial's upload directory, which a
		// resume removes.
		r.logf("delete the uploaded checkpoint %s: %v", ev.CheckpointStored, derr)
	}
	return err
}

// discardStaged removes the staged checkpoint directory of a commit that
// failed, which fails its trial: the trial restarts from its latest
// registered checkpoint, so the staged copy is nobody's, and a trial
// retried many times would otherwise pile copies up on local disk. After
// a full disk (the experiment stops) it stays for resume's cleanup, as
// does a directory outside the experiment directory, which is not the
// runner's to remove.
func (r *runner) discardStaged(staged string, err error) {
	if err == nil || isDiskFull(err) {
		return
	}
	if rel, rerr := filepath.Rel(r.opts.Dir, staged); rerr != nil || !filepath.IsLocal(rel) {
		return
	}
	if rerr := os.RemoveAll(staged); rerr != nil {
		r.logf("remove the staged checkpoint %s of a failed commit: %v", staged, rerr)
	}
}

// committed makes an executor event whose staged checkpoint (if any) was
// committed to dest with the outcome err (see input) ready to journal: it
// sets the event's Checkpoint to what was committed, no longer staged,
// and its Err to the text of its Cause ("error" if that is empty) or else
// of a failed commit.
func (r *runner) committed(ev hone.Event, idx int, dest string, err error) (hone.Event, error) {
	var commitErr error
	if hasCheckpoint(ev) {
		if isDiskFull(err) {
			return hone.Event{}, fmt.Errorf("trial %s: commit checkpoint: %w", ev.TrialID, err)
		}
		if err != nil {
			commitErr = fmt.Errorf("commit checkpoint: %w", err)
		} else {
			ev.Checkpoint = &hone.CheckpointRef{Index: idx, Path: dest}
		}
	}
	ev.CheckpointDir, ev.CheckpointStored = "", ""
	if ev.Cause != nil {
		ev.Err = ev.Cause.Error()
		if ev.Err == "" {
			ev.Err = "error"
		}
	}
	if commitErr != nil && ev.Err == "" {
		ev.Err, ev.Cause = commitErr.Error(), commitErr
	}
	return ev, nil
}

// step journals one event, steps the controller and carries out its
// actions; events produced while acting (a trial that failed to start)
// follow in order.
func (r *runner) step(in hone.Event) error {
	r.deferred = append(r.deferred, in)
	return r.drain()
}

// drain steps the deferred events, in order, then flushes results and
// syncs the journal when they are due.
func (r *runner) drain() error {
	for len(r.deferred) > 0 {
		in := r.deferred[0]
		r.deferred[0] = hone.Event{}
		if len(r.deferred) == 1 {
			// The queue's array is kept for the next event: most steps
			// defer exactly one.
			r.deferred = r.deferred[:0]
		} else {
			r.deferred = r.deferred[1:]
		}
		if err := r.jw.AppendEvent(&in); err != nil {
			return err
		}
		r.ctl.Step(in)
		if err := r.apply(r.ctl.Ready()); err != nil {
			return err
		}
	}
	now := time.Now()
	sync := now.Sub(r.lastSync) >= syncEvery
	mark := r.unmarked && now.Sub(r.lastMark) >= r.opts.markEvery
	if sync || mark || (!r.filesDue.IsZero() && !now.Before(r.filesDue)) {
		if mark || !r.filesDue.IsZero() {
			if mark {
				r.lastMark = now
			}
			if err := r.flushResults(mark); err != nil {
				return err
			}
		}
		if sync {
			r.lastSync = now
			if err := r.jw.Sync(); err != nil {
				return err
			}
		}
		if len(r.deferred) > 0 { // trials whose files failed
			return r.drain()
		}
	}
	if r.snapshotDue(snapMinBytes, false) {
		// Tests that ask for a snapshot at every step have each written
		// before the next, so that they all exist.
		return r.writeSnapshot(r.opts.snapEvery > 0)
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
			if rec := acts[i].Record; rec.Op == "trial" {
				if r.fresh == nil {
					r.fresh = map[string]bool{}
				}
				r.fresh[rec.Trial] = true
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
			if err := r.start(a); errors.Is(err, errCheckpointMissing) {
				r.deferred = append(r.deferred, hone.Event{Kind: hone.EventCheckpointMissing,
					TrialID: a.Trial.ID, Time: r.clock.Now().UnixNano(), Checkpoint: &hone.CheckpointRef{Index: a.Checkpoint.Index, Path: a.Checkpoint.Path}})
			} else if err != nil {
				r.deferred = append(r.deferred, hone.Event{Kind: hone.EventStartFailed,
					TrialID: a.Trial.ID, Time: r.clock.Now().UnixNano(), Err: err.Error()})
			}
		case controller.ActDirect:
			if err := r.exec.Direct(a.Trial.ID, a.Directive); err != nil {
				r.logf("trial %s: %s: %v", a.Trial.ID, a.Directive, err)
			}
		case controller.ActDelete:
			r.remove(a.Checkpoint.Path)
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
	return r.takeErrors()
}

// errCheckpointMissing is start's error for a restore checkpoint that does
// not exist.
var errCheckpointMissing = errors.New("checkpoint missing")

// takeErrors takes the errors of the fallible callbacks and acts on them
// (callbackErrors).
func (r *runner) takeErrors() error {
	var errs []error
	for _, cb := range r.fallible {
		errs = append(errs, cb.TakeErrors()...)
	}
	if len(errs) == 0 {
		return nil
	}
	return r.callbackErrors(errs)
}

// callbackErrors acts on callback errors (hone.FallibleCallback): a full
// disk, or an error that is no trial's, is returned and stops the
// experiment; a trial's error fails that trial (a hone.EventTrialFailed input,
// deferred). Either way no result is recorded safe for the rest of the
// session.
func (r *runner) callbackErrors(errs []error) error {
	r.flushFailed = true
	var fatal []error
	for _, err := range flatten(errs) {
		var te *hone.TrialError
		switch {
		case isDiskFull(err):
			fatal = append(fatal, err)
		case errors.As(err, &te):
			r.deferred = append(r.deferred, hone.Event{Kind: hone.EventTrialFailed,
				TrialID: te.TrialID, Time: r.clock.Now().UnixNano(), Err: te.Err.Error()})
		default:
			fatal = append(fatal, err)
		}
	}
	if len(fatal) > 0 {
		return fmt.Errorf("callback: %w", errors.Join(fatal...))
	}
	return nil
}

// flatten expands joined errors.
func flatten(errs []error) []error {
	var out []error
	for _, err := range errs {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			out = append(out, flatten(j.Unwrap())...)
		} else if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// isDiskFull reports whether err says a file system is full (or a quota
// is used up).
func isDiskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// trialDiskFull returns an error wrapping ENOSPC when ev is a trial that
// failed because a disk is full: its error is ENOSPC or EDQUOT, or (from
// another process) says "No space left on device" or "Disk quota
// exceeded". Such a trial is not failed: the experiment stops, as when the
// runner's own writes meet a full disk, and resumes from the trial's
// latest checkpoint once there is space.
func trialDiskFull(ev hone.Event) error {
	if ev.Cause == nil {
		return nil
	}
	msg := ev.Cause.Error()
	low := strings.ToLower(msg)
	if isDiskFull(ev.Cause) || strings.Contains(low, "no space left on device") || strings.Contains(low, "disk quota exceeded") {
		return fmt.Errorf("trial %s failed on a full disk: %w (%s)", ev.TrialID, syscall.ENOSPC, msg)
	}
	return nil
}

func (r *runner) start(a *controller.Action) error {
	t := a.Trial
	// The executor creates the directory when it writes there: a simulated
	// trial that never checkpoints costs no mkdir.
	dir := filepath.Join(r.opts.Dir, filepath.FromSlash(t.Dir))
	if r.fresh[t.ID] {
		delete(r.fresh, t.ID)
		if err := r.moveAside(t.ID, dir); err != nil {
			return err
		}
	}
	spec := hone.StartSpec{TrialID: t.ID, Config: t.Config, Dir: dir, Iteration: a.Iteration, Resources: t.Resources, GPUs: a.GPUs}
	if a.Checkpoint != nil {
		spec.Restore = a.Checkpoint.Path
	}
	if a.Checkpoint != nil && !r.remoteCommits {
		d, err := r.store.LocalDir(r.sctx, a.Checkpoint.Path)
		if errors.Is(err, fs.ErrNotExist) {
			// The controller forgets the checkpoint, so nothing would
			// delete what is left of it: on object storage a file
			// deleted by hand leaves the other objects, manifest too.
			if derr := r.store.Delete(r.sctx, a.Checkpoint.Path); derr != nil {
				r.logf("remove what is left of the missing checkpoint %s: %v", a.Checkpoint.Path, derr)
			}
			return fmt.Errorf("restore from %s: %w", a.Checkpoint.Path, errCheckpointMissing)
		}
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

// moveAside renames dir, the directory of a trial created in this session,
// out of the way if it exists: the journal holds no trial that owns it, so
// it is what a run whose journal lost its end left (the same trial,
// created again at the same second), and its files and checkpoints must
// not mix with the new trial's.
func (r *runner) moveAside(id, dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	for n := 1; ; n++ {
		lost := fmt.Sprintf("%s.lost-%d", dir, n)
		if _, err := os.Lstat(lost); err == nil {
			continue
		}
		if err := os.Rename(dir, lost); err != nil {
			return fmt.Errorf("move aside a directory no journaled trial owns: %w", err)
		}
		r.logf("trial %s: its directory %s existed, but no trial in the journal owns it (the journal lost its end?); moved it to %s", id, dir, lost)
		return nil
	}
}

func (r *runner) notify(a *controller.Action) {
	if a.Note == controller.NoteResult && len(r.buffered) > 0 {
		r.results[a.Trial.ID]++
		r.unmarked = true
		if r.filesDue.IsZero() {
			r.filesDue = time.Now().Add(r.opts.flushEvery)
		}
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
			cb.OnTrialError(a.Trial, &hone.TrialFailedError{TrialID: a.Trial.ID, Msg: a.Err, Err: a.Cause})
		case controller.NoteEnd:
			cb.OnExperimentEnd(r.ctl.Trials())
		}
	}
}

// flushResults hands the journal to the operating system, then has every
// buffered callback flush its results (and, with sync, make them durable).
// After a synced flush without an error in the session it journals that
// the results are safe. A callback's error fails its trial (deferred
// inputs, for drain) or, for a full disk, is returned.
func (r *runner) flushResults(sync bool) error {
	r.filesDue = time.Time{}
	if err := r.jw.Flush(); err != nil {
		return err
	}
	var errs []error
	for _, cb := range r.buffered {
		if err := cb.FlushResults(sync); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return r.callbackErrors(errs)
	}
	if !sync || r.flushFailed || !r.unmarked {
		return nil
	}
	r.unmarked = false
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
		if l.Event != nil && l.Event.Kind == hone.EventResult {
			trials[l.Event.TrialID] = 0
		}
	}
	return from, trials
}

// listEachUpTo is how many trials a resume's cleanup lists one by one on
// a store that can list its whole tree at once; beyond it, one listing of
// the tree costs fewer requests.
const listEachUpTo = 32

// cleanStorage removes what a crash left behind: uncommitted staging and
// temporary directories, and committed checkpoints the journal never
// registered (no one was told of them).
func (r *runner) cleanStorage() error {
	if tl, ok := r.store.(hone.TreeLister); ok {
		// An object store, where listing costs requests: only trials
		// that may run again are cleaned. A TERMINATED trial never
		// commits again, so what a crash left of it is never in the way,
		// and never registered.
		var live []*hone.Trial
		for _, t := range r.ctl.Trials() {
			if t.Status != hone.StatusTerminated {
				live = append(live, t)
			}
		}
		if len(live) <= listEachUpTo {
			for _, t := range live {
				committed, leftovers, err := r.store.List(r.sctx, t.Dir)
				if err != nil {
					return fmt.Errorf("list checkpoints of %s: %w", t.ID, err)
				}
				if err := r.clean(t, committed, leftovers); err != nil {
					return err
				}
			}
			return nil
		}
		tree, err := tl.ListTree(r.sctx)
		if err != nil {
			return fmt.Errorf("list the experiment's checkpoints: %w", err)
		}
		for _, t := range live {
			l := tree[path.Clean(t.Dir)]
			if err := r.clean(t, l.Committed, l.Leftovers); err != nil {
				return err
			}
		}
		return nil
	}
	var exists map[string]bool // top-level entries, when the store can tell
	if l, ok := r.store.(hone.TopLister); ok {
		names, err := l.ListTop(r.sctx)
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
		committed, leftovers, err := r.store.List(r.sctx, t.Dir)
		if err != nil {
			return fmt.Errorf("list checkpoints of %s: %w", t.ID, err)
		}
		if err := r.clean(t, committed, leftovers); err != nil {
			return err
		}
	}
	return nil
}

// clean removes the leftovers of trial t, and those of its committed
// checkpoints that the journal never registered.
func (r *runner) clean(t *hone.Trial, committed, leftovers []string) error {
	for _, p := range leftovers {
		if err := r.store.Delete(r.sctx, p); err != nil {
			return fmt.Errorf("remove leftover %s of %s: %w", p, t.ID, err)
		}
	}
	for _, p := range committed {
		if !r.ctl.Registered(p) {
			r.logf("removing checkpoint %s: committed but never registered before the crash", p)
			if err := r.store.Delete(r.sctx, p); err != nil {
				return fmt.Errorf("remove unregistered %s: %w", p, err)
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

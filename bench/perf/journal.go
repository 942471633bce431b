package perf

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/controller"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/runner"
)

// syncEvery is the runner's journal fsync period (runner.syncEvery): after
// a step, the journal is fsynced when a second has passed since the last
// fsync.
const syncEvery = time.Second

// journal measures shape 4: the per-event cost of appending a real
// experiment's journal with the runner's flush and fsync policy against raw
// writes of the same bytes with the same cadence, and runner.Resume of the
// finished experiment against reading its journal.
func (b *bench) journal(ctx context.Context) error {
	n, conc := b.cfg.Trials, b.cfg.Concurrency
	dir, err := b.freshDir("journal")
	if err != nil {
		return err
	}
	defer removeDir(dir)
	expDir := filepath.Join(dir, "experiment")
	b.logf("journal: running the %d-trial sim experiment to journal and resume", n)
	var steps atomic.Int64
	exp, err := simExperiment("journal", n, conc, nil, nil)
	if err != nil {
		return err
	}
	opts, err := runOpts(expDir, sim.New(countingModel(sim.Curve{MaxIterations: 1}.New, &steps)), conc, false)
	if err != nil {
		return err
	}
	if _, _, err := runTimed(ctx, exp, opts); err != nil {
		return err
	}
	jpath := filepath.Join(expDir, journal.FileName)
	if b.want(ShapeJournal, "append") {
		if err := b.journalAppend(dir, jpath); err != nil {
			return fmt.Errorf("append: %w", err)
		}
	}
	if b.want(ShapeJournal, "resume") {
		if err := b.journalResume(ctx, expDir, jpath, n); err != nil {
			return fmt.Errorf("resume: %w", err)
		}
	}
	return nil
}

// replayPlan is what a journaled replay did per input: how many lines it
// appended and whether it flushed after them.
type replayPlan struct {
	lines   []int
	flushed []bool
}

// replay steps a fresh controller for the journal experiment through
// inputs, as the runner does, and returns the wall time. With w set it
// also journals like runner.step and runner.apply: the input, then the
// step's records, then a Flush if the step has an effect outside the
// process (a trial start, unless the executor is contained; a callback,
// of which this experiment has none; a delete, an appended or copied
// file), then a Sync if a second has passed since the last; and it fills
// plan. The writer's own group commit hands unflushed lines to the
// operating system within journal.FlushDelay.
func (b *bench) replay(inputs []hone.Event, contained bool, w *journal.Writer, plan *replayPlan) (time.Duration, error) {
	exp, err := simExperiment("journal", b.cfg.Trials, b.cfg.Concurrency, nil, nil)
	if err != nil {
		return 0, err
	}
	ctl, err := controller.New(exp, hone.Resources{CPU: float64(b.cfg.Concurrency)})
	if err != nil {
		return 0, err
	}
	start := time.Now()
	var lastSync time.Time
	for i := range inputs {
		in := inputs[i]
		if w != nil {
			if err := w.AppendEvent(&in); err != nil {
				return 0, err
			}
		}
		ctl.Step(in)
		acts := ctl.Ready()
		if w == nil {
			continue
		}
		lines, flush := 1, false
		for j := range acts {
			switch acts[j].Kind {
			case controller.ActRecord:
				if err := w.AppendRecord(acts[j].Record); err != nil {
					return 0, err
				}
				lines++
			case controller.ActDirect, controller.ActLog, controller.ActNotify:
			case controller.ActStart:
				flush = flush || !contained
			default:
				flush = true
			}
		}
		if flush {
			if err := w.Flush(); err != nil {
				return 0, err
			}
		}
		plan.lines = append(plan.lines, lines)
		plan.flushed = append(plan.flushed, flush)
		if now := time.Now(); now.Sub(lastSync) >= syncEvery {
			lastSync = now
			if err := w.Sync(); err != nil {
				return 0, err
			}
		}
	}
	if w != nil {
		if err := w.Close(); err != nil {
			return 0, err
		}
	}
	d := time.Since(start)
	if got := len(ctl.Trials()); got != b.cfg.Trials {
		return 0, fmt.Errorf("replay rebuilt %d trials, want %d", got, b.cfg.Trials)
	}
	return d, nil
}

// journalAppend times journaling the experiment's inputs again through a
// fresh controller with the runner's policy, minus the same replay without
// a journal, against writing the same bytes with the same flushes and
// fsyncs.
func (b *bench) journalAppend(dir, jpath string) error {
	c, err := journal.Read(jpath)
	if err != nil {
		return err
	}
	var inputs []hone.Event
	for _, l := range c.Lines {
		if l.Event != nil {
			inputs = append(inputs, *l.Event)
		}
	}
	if len(inputs) == 0 {
		return fmt.Errorf("journal %s has no inputs", jpath)
	}
	contained := false
	if ce, ok := hone.Executor(sim.New(nil)).(hone.Contained); ok {
		contained = ce.Contained()
	}
	data, err := os.ReadFile(jpath)
	if err != nil {
		return err
	}
	raw := bytes.SplitAfter(data[:c.Size], []byte("\n"))
	if len(raw) > 0 && len(raw[len(raw)-1]) == 0 {
		raw = raw[:len(raw)-1]
	}
	var honeNs, rawNs, aloneMs, withMs []float64
	var plan replayPlan
	for rep := range b.cfg.Reps {
		b.logf("journal: append, repetition %d of %d: %d events in %d lines", rep+1, b.cfg.Reps, len(inputs), len(c.Lines))
		alone, err := b.replay(inputs, contained, nil, nil)
		if err != nil {
			return err
		}
		p := filepath.Join(dir, "append.jsonl")
		plan = replayPlan{}
		var with time.Duration
		err = b.prof.profiled("journal-append", rep == 0, func() error {
			w, err := journal.Create(p, c.Header)
			if err != nil {
				return err
			}
			with, err = b.replay(inputs, contained, w, &plan)
			return err
		})
		if err != nil {
			return err
		}
		if err := sameFile(p, jpath); err != nil {
			return err
		}
		if err := os.Remove(p); err != nil {
			return err
		}
		aloneMs = append(aloneMs, float64(alone.Microseconds())/1000)
		withMs = append(withMs, float64(with.Microseconds())/1000)
		honeNs = append(honeNs, max(float64((with-alone).Nanoseconds()), 1)/float64(len(inputs)))

		d, err := appendRaw(p, raw, plan)
		if err != nil {
			return err
		}
		rawNs = append(rawNs, float64(d.Nanoseconds())/float64(len(inputs)))
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	flushes := 0
	for _, f := range plan.flushed {
		if f {
			flushes++
		}
	}
	b.add(Row{
		Shape: ShapeJournal, Name: fmt.Sprintf("append, amortised per event (a %d-trial sim experiment's journal, the runner's policy)", b.cfg.Trials),
		Unit: "ns/event", Value: median(honeNs), Samples: honeNs,
		BaseName: "the same bytes through a 64 KiB bufio.Writer, the same explicit flushes and fsyncs", Base: median(rawNs), BaseSamples: rawNs,
		Target: atMost("≤ 2,000 ns/event", 2000),
		Notes: []string{
			fmt.Sprintf("hone's figure = (controller replay with the journal − the same replay without it) ÷ events: median %s ms − %s ms",
				formatNum(median(withMs)), formatNum(median(aloneMs))),
			fmt.Sprintf("%d events (inputs), %.2f lines and %.0f bytes per event; %d explicit flushes (steps with effects outside the process), "+
				"the rest handed over by the writer's group commit; an fsync when 1 s has passed",
				len(inputs), float64(len(c.Lines))/float64(len(inputs)), float64(len(data))/float64(len(inputs)), flushes),
		},
	})
	return nil
}

// appendRaw is journalAppend's baseline: the lines of raw (a header, then
// the lines of each input as plan says), already encoded, through a
// bufio.Writer of the journal's buffer size, flushed where the replay
// flushed and fsynced when a second has passed, as the runner does.
func appendRaw(p string, raw [][]byte, plan replayPlan) (time.Duration, error) {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if _, err := f.Write(raw[0]); err != nil {
		return 0, err
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	start := time.Now()
	var lastSync time.Time
	next := 1
	for i, n := range plan.lines {
		if next+n > len(raw) {
			return 0, fmt.Errorf("the journal has %d lines, the replay wrote more", len(raw))
		}
		for _, l := range raw[next : next+n] {
			if _, err := w.Write(l); err != nil {
				return 0, err
			}
		}
		next += n
		if plan.flushed[i] {
			if err := w.Flush(); err != nil {
				return 0, err
			}
		}
		if now := time.Now(); now.Sub(lastSync) >= syncEvery {
			lastSync = now
			if err := w.Flush(); err != nil {
				return 0, err
			}
			if err := f.Sync(); err != nil {
				return 0, err
			}
		}
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// sameFile checks that the rewritten journal a is byte for byte the
// original b (so the append measured writes what the runner wrote).
func sameFile(a, b string) error {
	x, err := os.ReadFile(a)
	if err != nil {
		return err
	}
	y, err := os.ReadFile(b)
	if err != nil {
		return err
	}
	if !bytes.Equal(x, y) {
		return fmt.Errorf("the rewritten journal (%d bytes) differs from the runner's (%d bytes)", len(x), len(y))
	}
	return nil
}

// journalResume times runner.Resume of the finished experiment in expDir,
// which restores the run's last snapshot and replays the journal after
// it, against reading that snapshot; and, once, the resume that replays
// the whole journal instead (Options.NoSnapshots), broken down.
func (b *bench) journalResume(ctx context.Context, expDir, jpath string, n int) error {
	var resumeS, readS []float64
	var decodeS, replayS, wholeS float64
	var snapBytes int
	for rep := range b.cfg.Reps {
		b.logf("journal: resume, repetition %d of %d", rep+1, b.cfg.Reps)
		offs, err := journal.Snapshots(jpath)
		if err != nil {
			return err
		}
		if len(offs) == 0 {
			return fmt.Errorf("the run left no snapshot of its journal")
		}
		start := time.Now()
		data, err := os.ReadFile(journal.SnapshotPath(jpath, offs[0]))
		if err != nil {
			return err
		}
		readS = append(readS, time.Since(start).Seconds())
		snapBytes = len(data)

		var log bytes.Buffer
		d, out, err := b.resumeJournal(ctx, expDir, n, &log, false, rep == 0)
		if err != nil {
			return err
		}
		if !strings.Contains(log.String(), "resume: restored ") {
			return fmt.Errorf("the resume did not restore a snapshot:\n%s", log.String())
		}
		if err := resumedWhole(out, n); err != nil {
			return err
		}
		resumeS = append(resumeS, d.Seconds())
	}
	// The whole replay, once, after the resumes from the snapshot, so
	// that its far larger heap is not in their way.
	d, out, err := b.resumeJournal(ctx, expDir, n, io.Discard, true, false)
	if err != nil {
		return err
	}
	if err := resumedWhole(out, n); err != nil {
		return err
	}
	wholeS = d.Seconds()
	if decodeS, replayS, err = replayParts(jpath, n, b.cfg.Concurrency); err != nil {
		return err
	}
	b.add(Row{
		Shape: ShapeJournal, Name: fmt.Sprintf("runner.Resume of a finished %d-trial sim experiment", n), Unit: "s",
		Value: median(resumeS), Samples: resumeS,
		BaseName: fmt.Sprintf("os.ReadFile of its snapshot, %s MB", formatNum(float64(snapBytes)/1e6)), Base: median(readS), BaseSamples: readS,
		Target:   atMost("≤ 0.2 s", 0.2),
		Observed: int64(n), Expected: int64(n),
		Notes: []string{
			"the resume restores the snapshot the run wrote at its end and replays the journal's lines after it (the resume inputs of earlier repetitions)",
			fmt.Sprintf("the same resume replaying the whole journal instead (Options.NoSnapshots): %s s; its parts: journal.Read (read + JSON decode) %s s, controller replay of the inputs %s s",
				formatNum(wholeS), formatNum(decodeS), formatNum(replayS)),
		},
	})
	return nil
}

// resumeJournal resumes the finished experiment in expDir and returns how
// long runner.Resume took.
func (b *bench) resumeJournal(ctx context.Context, expDir string, n int, log io.Writer, whole, profile bool) (time.Duration, *runner.Outcome, error) {
	exp, err := simExperiment("journal", n, b.cfg.Concurrency, nil, nil)
	if err != nil {
		return 0, nil, err
	}
	opts, err := runOpts(expDir, sim.New(sim.Curve{MaxIterations: 1}.New), b.cfg.Concurrency, false)
	if err != nil {
		return 0, nil, err
	}
	opts.Log, opts.NoSnapshots = log, whole
	var out *runner.Outcome
	var d time.Duration
	err = b.prof.profiled("journal-resume", profile, func() error {
		start := time.Now()
		var err error
		out, err = runner.Resume(ctx, exp, opts, hone.ResumeFlags{Unfinished: true})
		d = time.Since(start)
		return err
	})
	return d, out, err
}

// resumedWhole checks that a resume brought back every trial with its
// result.
func resumedWhole(out *runner.Outcome, n int) error {
	if err := allTerminated(out); err != nil {
		return err
	}
	if len(out.Trials) != n {
		return fmt.Errorf("resume brought back %d trials, want %d", len(out.Trials), n)
	}
	for _, t := range out.Trials {
		if t.LastResult == nil || t.LastResult.TrainingIteration != 1 {
			return fmt.Errorf("resumed trial %s lost its result", t.ID)
		}
	}
	return nil
}

// replayParts times journal.Read of jpath and the controller's replay of
// its inputs (what Resume does before cleaning storage).
func replayParts(jpath string, n, conc int) (decode, replay float64, err error) {
	start := time.Now()
	c, err := journal.Read(jpath)
	if err != nil {
		return 0, 0, err
	}
	decode = time.Since(start).Seconds()
	exp, err := simExperiment("journal", n, conc, nil, nil)
	if err != nil {
		return 0, 0, err
	}
	start = time.Now()
	ctl, err := controller.New(exp, hone.Resources{CPU: float64(conc)})
	if err != nil {
		return 0, 0, err
	}
	for _, l := range c.Lines {
		if l.Event != nil {
			ctl.Step(*l.Event)
			ctl.Ready()
		}
	}
	replay = time.Since(start).Seconds()
	if got := len(ctl.Trials()); got != n {
		return 0, 0, fmt.Errorf("replay rebuilt %d trials, want %d", got, n)
	}
	return decode, replay, nil
}

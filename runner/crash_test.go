package runner_test

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/scratch"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
	"pgregory.net/rapid"
)

var errCrash = errors.New("simulated crash")

// crashing wraps an executor and fails Next after n events, as if the
// process died there: the runner returns without acting on anything more.
type crashing struct {
	hone.Executor
	n int
}

func (c *crashing) Next(ctx context.Context) (hone.Event, error) {
	if c.n <= 0 {
		return hone.Event{}, errCrash
	}
	c.n--
	return c.Executor.Next(ctx)
}

func (c *crashing) Clock() hone.Clock { return c.Executor.(hone.Clocked).Clock() }

func (c *crashing) AnnouncesStarts() bool { return announces(c.Executor) }

// announces reports whether e announces starts (hone.StartAnnouncer).
func announces(e hone.Executor) bool {
	a, ok := e.(hone.StartAnnouncer)
	return ok && a.AnnouncesStarts()
}

// announcing makes an executor announce starts, as a cluster's does: an
// EventStarted for each trial, taken by Next before anything else after
// its Start (the trial left the queue at once), unless it is stopped
// first.
type announcing struct {
	hone.Executor
	started []hone.Event
}

func (a *announcing) AnnouncesStarts() bool { return true }

func (a *announcing) Clock() hone.Clock { return a.Executor.(hone.Clocked).Clock() }

func (a *announcing) Start(spec hone.StartSpec) error {
	if err := a.Executor.Start(spec); err != nil {
		return err
	}
	a.started = append(a.started, hone.Event{Kind: hone.EventStarted, TrialID: spec.TrialID, Time: a.Clock().Now().UnixNano(), Hostname: "n1"})
	return nil
}

func (a *announcing) Direct(id string, d hone.Directive) error {
	if d == hone.DirectStop {
		a.started = slices.DeleteFunc(a.started, func(ev hone.Event) bool { return ev.TrialID == id })
	}
	return a.Executor.Direct(id, d)
}

func (a *announcing) Next(ctx context.Context) (hone.Event, error) {
	if len(a.started) > 0 {
		ev := a.started[0]
		a.started = a.started[1:]
		return ev, nil
	}
	return a.Executor.Next(ctx)
}

// recording remembers the first StartSpec of each trial.
type recording struct {
	hone.Executor
	starts map[string]hone.StartSpec
}

func (r *recording) Start(spec hone.StartSpec) error {
	if r.starts == nil {
		r.starts = map[string]hone.StartSpec{}
	}
	if _, ok := r.starts[spec.TrialID]; !ok {
		r.starts[spec.TrialID] = spec
	}
	return r.Executor.Start(spec)
}

func (r *recording) Clock() hone.Clock { return r.Executor.(hone.Clocked).Clock() }

func (r *recording) AnnouncesStarts() bool { return announces(r.Executor) }

type simCase struct {
	samples, iters, ckptEvery, concurrency, numToKeep int
	// announce: the executors of the run, and of the resume, announce
	// starts (announcing).
	announce, announceResume bool
	// snap: the runs write a snapshot at nearly every step.
	snap bool
}

func (sc simCase) experiment(t *rapid.T) *hone.Experiment {
	sr, err := random.New(space.Space{
		"rate":      space.Uniform(0.05, 0.5),
		"asymptote": space.Uniform(0, 1),
	}, sc.samples, nil, 11)
	if err != nil {
		t.Fatal(err)
	}
	return &hone.Experiment{Name: "crash", Metric: "loss", Mode: hone.Min, Searcher: sr, Seed: 11,
		MaxConcurrentTrials: sc.concurrency, Checkpoint: hone.CheckpointConfig{NumToKeep: sc.numToKeep}}
}

func (sc simCase) executor() hone.Executor {
	return sc.executorAnnouncing(sc.announce)
}

func (sc simCase) executorAnnouncing(announce bool) hone.Executor {
	ex := sim.New(sim.Curve{Noise: 0.01, Seed: 5, MaxIterations: sc.iters, CheckpointEvery: sc.ckptEvery}.New)
	if announce {
		return &announcing{Executor: ex}
	}
	return ex
}

func (sc simCase) options(dir string, e hone.Executor) runner.Options {
	st, _ := local.New(dir, local.NoSync())
	o := runner.Options{Dir: dir, Executor: e, Store: st, Log: io.Discard}
	if sc.snap {
		runner.SetSnapshotEvery(&o, 1, 1<<20, time.Nanosecond)
	}
	return o
}

type final struct {
	status hone.Status
	iter   int
	loss   float64
}

func finals(trials []*hone.Trial) map[string]final {
	out := map[string]final{}
	for _, tr := range trials {
		f := final{status: tr.Status}
		if tr.LastResult != nil {
			f.iter = tr.LastResult.TrainingIteration
			f.loss, _ = tr.LastResult.Value("loss")
		}
		out[tr.ID] = f
	}
	return out
}

// TestCrashAtAnyEventThenResume is the docs/SEMANTICS.md §3 property: a crash at a
// random event followed by a resume ends with the same completed results as
// an uninterrupted run, and leaves no unregistered checkpoint behind. The
// executor may announce starts (its started events are journaled and
// replayed), and the resume's may differ from the run's.
func TestCrashAtAnyEventThenResume(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sc := simCase{
			samples:     rapid.IntRange(1, 8).Draw(t, "samples"),
			iters:       rapid.IntRange(1, 8).Draw(t, "iters"),
			ckptEvery:   rapid.IntRange(1, 3).Draw(t, "ckptEvery"),
			concurrency: rapid.IntRange(1, 4).Draw(t, "concurrency"),
			numToKeep:   rapid.IntRange(0, 2).Draw(t, "numToKeep"),
			announce:    rapid.Bool().Draw(t, "announce"),
			snap:        rapid.Bool().Draw(t, "snap"),
		}
		sc.announceResume = rapid.Bool().Draw(t, "announceResume")
		root, err := os.MkdirTemp(scratch.Dir(), "hone-crash-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(root)

		a := filepath.Join(root, "a")
		want, err := runner.Run(context.Background(), sc.experiment(t), sc.options(a, sc.executor()))
		if err != nil {
			t.Fatalf("uninterrupted run: %v", err)
		}
		events := sc.samples * (sc.iters + 1)
		if sc.announce {
			events += sc.samples
		}
		crashAt := rapid.IntRange(0, events).Draw(t, "crashAt")

		b := filepath.Join(root, "b")
		_, err = runner.Run(context.Background(), sc.experiment(t), sc.options(b, &crashing{Executor: sc.executor(), n: crashAt}))
		if err != nil && !errors.Is(err, errCrash) {
			t.Fatalf("crashing run: %v", err)
		}
		crashed, err := results.Open(b)
		if err != nil {
			t.Fatalf("open crashed experiment: %v", err)
		}
		rec := &recording{Executor: sc.executorAnnouncing(sc.announceResume)}
		got, err := runner.Resume(context.Background(), sc.experiment(t), sc.options(b, rec), hone.ResumeFlags{Unfinished: true})
		if err != nil {
			t.Fatalf("resume: %v", err)
		}
		wf, gf := finals(want.Trials), finals(got.Trials)
		if len(wf) != len(gf) {
			t.Fatalf("%d trials after resume, want %d", len(gf), len(wf))
		}
		for id, w := range wf {
			g, ok := gf[id]
			if !ok {
				t.Fatalf("trial %s missing after resume", id)
			}
			if g.status != w.status || g.iter != w.iter || math.Abs(g.loss-w.loss) > 1e-12 {
				t.Fatalf("trial %s: got %+v, want %+v", id, g, w)
			}
		}
		// Finished trials are not started again; unfinished ones restart
		// from their latest registered checkpoint when they have one.
		for _, tr := range crashed.Trials {
			spec, started := rec.starts[tr.ID]
			if tr.Status == hone.StatusTerminated && started {
				t.Fatalf("trial %s finished before the crash but was started again", tr.ID)
			}
			if started && (spec.RestoreDir != "") != (len(tr.Checkpoints) > 0) {
				t.Fatalf("trial %s restarted with restore dir %q; registered checkpoints before the crash: %v", tr.ID, spec.RestoreDir, tr.Checkpoints)
			}
			if started && len(tr.Checkpoints) > 0 && filepath.Base(spec.RestoreDir) != filepath.Base(tr.Checkpoints[len(tr.Checkpoints)-1]) {
				t.Fatalf("trial %s restored from %s, not its latest checkpoint %s", tr.ID, spec.RestoreDir, tr.Checkpoints[len(tr.Checkpoints)-1])
			}
		}
		// Every checkpoint directory on disk is a registered one.
		for _, tr := range got.Trials {
			dirs, _ := filepath.Glob(filepath.Join(b, tr.Dir, "checkpoint_*"))
			if sc.numToKeep > 0 && len(dirs) > sc.numToKeep {
				t.Fatalf("trial %s keeps %d checkpoints, num_to_keep=%d", tr.ID, len(dirs), sc.numToKeep)
			}
			if left, _ := filepath.Glob(filepath.Join(b, tr.Dir, ".staging", "*")); len(left) > 0 {
				t.Fatalf("trial %s: leftover staging dirs %v", tr.ID, left)
			}
		}
	})
}

// Package snaptest is the property test of plugin state (hone.Stateful):
// drive an experiment's searcher, scheduler and stoppers through the real
// controller with a seeded random sequence of trial events, snapshot them,
// restore the snapshots into fresh plugins, and feed the same next events
// to both: every action of the controller (trials created with the
// searcher's suggestions, starts chosen by ChooseTrialToRun, directives
// carrying the decisions, Control actions, records and log lines) must be
// the same.
//
// Two controllers run side by side on the same inputs: one with the
// plugins that ran from the start, one whose plugins are swapped, at the
// snapshot, for fresh ones restored from the first's snapshots. The
// second controller's trials are other objects than the first's, so a
// restored state that held a trial by pointer instead of by id shows.
package snaptest

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/controller"
)

// T is the part of testing.TB the harness uses.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
}

// Options shape a run.
type Options struct {
	// Seed seeds the sequence of events.
	Seed uint64
	// Before is the number of events before the snapshot, After the
	// number after it.
	Before, After int
	// MaxIter is the iteration whose result is done (default 12).
	MaxIter int
	// Pool is the controller's pool (default 4 CPUs).
	Pool hone.Resources
	// Metric is the metric the trials report (default "loss"): a value
	// that falls with the iteration, from a level set by the trial's
	// configuration, with noise; NaN now and then. Results also hold
	// "acc" (1 − the metric) and "cost", which falls as the level rises.
	Metric string
	// Crashes makes trials fail now and then (a process error; with
	// Controller, also a hone.EventTrialFailed), and Interrupts makes the
	// experiment stop and resume now and then.
	Crashes, Interrupts bool
	// Controller snapshots the whole controller instead of its plugins:
	// at the snapshot, the second twin is replaced by a controller that
	// controller.Restore builds from the first's MarshalState, with fresh
	// plugins; at the end both controllers' snapshots must be the same
	// bytes.
	Controller bool
	// Binary, with Controller, restores the second twin from the
	// controller's binary snapshot (MarshalBinaryState, RestoreBinary)
	// instead of its JSON one. Either way both forms are checked at the
	// snapshot: each restores to a controller whose JSON snapshot is the
	// original's.
	Binary bool
	// Announced makes the executor announce starts
	// (hone.Settings.StartsAnnounced): a started trial waits in a
	// queue until its hone.EventStarted input.
	Announced bool
}

func (o *Options) defaults() {
	if o.MaxIter == 0 {
		o.MaxIter = 12
	}
	if o.Pool.CPU == 0 {
		o.Pool = hone.Resources{CPU: 4}
	}
	if o.Metric == "" {
		o.Metric = "loss"
	}
}

// Stats says what a run exercised.
type Stats struct {
	Events, Results, Starts, Saves, Trials int
}

// phase is what a simulated trial process does next.
type phase int

const (
	computing phase = iota // will report, or fail
	queued                 // started, not yet announced as running
	waiting                // waits for a directive
	saving                 // was told to save
	stopping               // was told to stop
	ending                 // reported its done result and was told to go on: exits
)

// proc is a simulated trial process.
type proc struct {
	phase phase
	iter  int
	level float64
}

// twin is one of the two controllers with its plugins.
type twin struct {
	c      *controller.Controller
	sched  *swapScheduler
	search *swapSearcher
	stops  []hone.Stopper
	exp    *hone.Experiment
}

// Run runs the property for the experiments build makes: each call must
// return an experiment with fresh plugins of the same configuration. Its
// scheduler and searcher must implement hone.Stateful, and so must its
// stoppers that keep state (those are restored too; the others are
// shared by neither twin).
func Run(t T, build func() (*hone.Experiment, error), o Options) Stats {
	t.Helper()
	o.defaults()
	var st Stats
	mk := func() *twin {
		exp, err := build()
		if err != nil {
			t.Fatalf("build: %v", err)
		}
		if exp.Scheduler == nil {
			t.Fatalf("build: the experiment has no scheduler")
		}
		tw := &twin{exp: exp, sched: &swapScheduler{exp.Scheduler}, search: &swapSearcher{exp.Searcher}}
		if o.Controller {
			// The controller's snapshot holds its plugins' own: no
			// wrappers between them.
			c, err := controller.New(exp, o.Pool)
			if err != nil {
				t.Fatalf("controller: %v", err)
			}
			c.SetStartsAnnounced(o.Announced)
			tw.c = c
			return tw
		}
		e := *exp
		e.Scheduler, e.Searcher = tw.sched, tw.search
		e.Stoppers = nil
		for _, s := range exp.Stoppers {
			w := wrapStopper(s)
			tw.stops = append(tw.stops, w)
			e.Stoppers = append(e.Stoppers, w)
		}
		c, err := controller.New(&e, o.Pool)
		if err != nil {
			t.Fatalf("controller: %v", err)
		}
		c.SetStartsAnnounced(o.Announced)
		tw.c = c
		return tw
	}
	a, b := mk(), mk()
	rng := rand.New(rand.NewPCG(o.Seed, 0x5a9))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	procs := map[string]*proc{}
	var log []string // the last inputs, for failure messages

	step := func(in hone.Event) {
		st.Events++
		log = append(log, fmt.Sprintf("%s %s %v err=%q", in.Kind, in.TrialID, in.Metrics, in.Err))
		if len(log) > 12 {
			log = log[1:]
		}
		a.c.Step(in)
		b.c.Step(in)
		actsA, actsB := a.c.Ready(), b.c.Ready()
		ra, rb := render(actsA), render(actsB)
		if ra != rb {
			t.Fatalf("seed %d, event %d (%s %s): the twins' actions differ\nwith the plugins that ran throughout:\n%s\nwith the restored plugins:\n%s\nlast inputs:\n%s",
				o.Seed, st.Events, in.Kind, in.TrialID, ra, rb, strings.Join(log, "\n"))
		}
		for _, act := range actsA {
			switch act.Kind {
			case controller.ActStart:
				st.Starts++
				ph := computing
				if o.Announced {
					ph = queued
				}
				procs[act.Trial.ID] = &proc{phase: ph, iter: act.Iteration, level: level(act.Trial.Config)}
			case controller.ActDirect:
				p := procs[act.Trial.ID]
				if p == nil {
					continue
				}
				switch act.Directive {
				case hone.DirectContinue:
					if p.iter >= o.MaxIter {
						p.phase = ending
					} else {
						p.phase = computing
					}
				case hone.DirectCheckpoint:
					p.phase = saving
				case hone.DirectStop:
					p.phase = stopping
				}
			case controller.ActRecord:
				if act.Record.Op == "trial" {
					st.Trials++
				}
			}
		}
	}
	at := func() int64 {
		now = now.Add(time.Duration(1+rng.IntN(3000)) * time.Millisecond)
		return now.UnixNano()
	}

	event := func() bool {
		ids := make([]string, 0, len(procs))
		for id, p := range procs {
			if p.phase != waiting {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			if a.c.Done() {
				return false
			}
			if a.c.Stopping() && len(procs) == 0 {
				if !o.Interrupts {
					return false
				}
				now = now.Add(time.Hour)
				step(hone.Event{Kind: hone.EventResume, Time: now.UnixNano(),
					Resume: &hone.ResumeFlags{Unfinished: true, Errored: rng.IntN(2) == 0}})
				return true
			}
			step(hone.Event{Kind: hone.EventTick, Time: at()})
			return !a.c.Done() && len(procs) > 0
		}
		sort.Strings(ids)
		if o.Interrupts && !a.c.Stopping() && rng.IntN(150) == 0 {
			step(hone.Event{Kind: hone.EventInterrupt, Time: at()})
			return true
		}
		id := ids[rng.IntN(len(ids))]
		p := procs[id]
		in := hone.Event{TrialID: id, Time: at()}
		if o.Controller && o.Crashes && rng.IntN(120) == 0 {
			// The runner fails the trial (its files could not be
			// written); the controller tells its process to stop.
			in.Kind, in.Err = hone.EventTrialFailed, "disk full"
			step(in)
			return true
		}
		switch p.phase {
		case queued:
			in.Kind = hone.EventStarted
			p.phase = computing
		case computing:
			if o.Crashes && rng.IntN(60) == 0 {
				in.Kind, in.Err = hone.EventExited, "crashed"
				delete(procs, id)
				break
			}
			p.iter++
			v := p.level*(1+4/float64(p.iter)) + 0.05*rng.NormFloat64()
			if rng.IntN(80) == 0 {
				v = math.NaN()
			}
			in.Kind = hone.EventResult
			in.Metrics = map[string]any{o.Metric: v, "acc": 1 - v}
			// cost falls as the level rises: a second objective that
			// conflicts with the first, for several objectives.
			in.Metrics["cost"] = 1.2 - p.level + 0.01*float64(p.iter)
			in.Done = p.iter >= o.MaxIter
			if rng.IntN(3) == 0 {
				i, path, _ := a.c.NextCheckpointPath(id)
				in.Checkpoint = &hone.CheckpointRef{Index: i, Path: path}
			}
			p.phase = waiting
			st.Results++
		case saving:
			in.Kind = hone.EventSaved
			st.Saves++
			switch k := rng.IntN(20); {
			case k == 0 && o.Crashes:
				in.Err = "disk full"
			case k < 2:
				// a trial that cannot save on demand: no checkpoint
			default:
				i, path, _ := a.c.NextCheckpointPath(id)
				in.Checkpoint = &hone.CheckpointRef{Index: i, Path: path}
			}
			p.phase = waiting
		case stopping, ending:
			in.Kind = hone.EventExited
			delete(procs, id)
		}
		step(in)
		return true
	}

	step(hone.Event{Kind: hone.EventBegin, Time: now.UnixNano()})
	for range o.Before {
		if !event() {
			break
		}
	}

	if o.Controller {
		b = restoreController(t, a, build, o.Pool, o.Binary)
		for range o.After {
			if !event() {
				break
			}
		}
		da, err := a.c.MarshalState()
		if err != nil {
			t.Fatalf("seed %d: controller: MarshalState at the end: %v", o.Seed, err)
		}
		db, err := b.c.MarshalState()
		if err != nil {
			t.Fatalf("seed %d: restored controller: MarshalState at the end: %v", o.Seed, err)
		}
		if !bytes.Equal(da, db) {
			t.Fatalf("seed %d: at the end the restored controller's state differs:\n%s\nwant\n%s", o.Seed, db, da)
		}
		return st
	}

	// The snapshot: fresh plugins restored from a's take b's place.
	fresh, err := build()
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	b.sched.inner = restore(t, "scheduler", a.exp.Scheduler, fresh.Scheduler)
	b.search.inner = restore(t, "searcher", a.exp.Searcher, fresh.Searcher)
	if len(fresh.Stoppers) != len(a.stops) {
		t.Fatalf("build made %d stoppers, then %d", len(a.stops), len(fresh.Stoppers))
	}
	for i, s := range a.exp.Stoppers {
		if _, ok := s.(hone.Stateful); ok {
			setStopper(b.stops[i], restore(t, "stopper", s, fresh.Stoppers[i]))
		}
	}

	for range o.After {
		if !event() {
			break
		}
	}
	// Both ends hold the same state.
	same(t, "scheduler", a.exp.Scheduler, b.sched.inner)
	same(t, "searcher", a.exp.Searcher, b.search.inner)
	for i, s := range a.exp.Stoppers {
		if _, ok := s.(hone.Stateful); ok {
			same(t, "stopper", s, innerStopper(b.stops[i]))
		}
	}
	return st
}

// restoreController snapshots a's controller and restores it into a
// controller with fresh plugins, whose own snapshot must be the same
// bytes; with binary, from its binary snapshot. The other form must
// restore to the same snapshot too.
func restoreController(t T, a *twin, build func() (*hone.Experiment, error), pool hone.Resources, binary bool) *twin {
	t.Helper()
	data, err := a.c.MarshalState()
	if err != nil {
		t.Fatalf("controller: MarshalState: %v", err)
	}
	bin, err := a.c.MarshalBinaryState()
	if err != nil {
		t.Fatalf("controller: MarshalBinaryState: %v", err)
	}
	restore := func(form string, f func(*hone.Experiment, hone.Resources, []byte) (*controller.Controller, error), snap []byte) *twin {
		fresh, err := build()
		if err != nil {
			t.Fatalf("build: %v", err)
		}
		c, err := f(fresh, pool, snap)
		if err != nil {
			t.Fatalf("controller: restore of its own %s snapshot: %v\n%s", form, err, data)
		}
		again, err := c.MarshalState()
		if err != nil {
			t.Fatalf("restored controller: MarshalState: %v", err)
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("the controller restored from the %s snapshot has another snapshot:\n%s\nwant\n%s", form, again, data)
		}
		return &twin{c: c, exp: fresh}
	}
	fromJSON := restore("JSON", controller.Restore, data)
	fromBinary := restore("binary", controller.RestoreBinary, bin)
	if binary {
		return fromBinary
	}
	return fromJSON
}

// restore snapshots from, restores the snapshot into to, and checks that
// to's snapshot is the same bytes.
func restore[P any](t T, what string, from, to P) P {
	t.Helper()
	sf, ok := any(from).(hone.Stateful)
	if !ok {
		t.Fatalf("the %s %T does not implement hone.Stateful", what, from)
	}
	data, err := sf.MarshalState()
	if err != nil {
		t.Fatalf("%s %T: MarshalState: %v", what, from, err)
	}
	st, ok := any(to).(hone.Stateful)
	if !ok {
		t.Fatalf("the fresh %s %T does not implement hone.Stateful", what, to)
	}
	if err := st.UnmarshalState(data); err != nil {
		t.Fatalf("%s %T: UnmarshalState of its own snapshot: %v\n%s", what, to, err, data)
	}
	again, err := st.MarshalState()
	if err != nil {
		t.Fatalf("%s %T: MarshalState after restore: %v", what, to, err)
	}
	if !bytes.Equal(again, data) {
		t.Fatalf("%s %T: the restored state's snapshot differs from the one it was restored from:\n%s\nwant\n%s", what, to, again, data)
	}
	return to
}

func same(t T, what string, a, b any) {
	t.Helper()
	da, err := a.(hone.Stateful).MarshalState()
	if err != nil {
		t.Fatalf("%s: MarshalState: %v", what, err)
	}
	db, err := b.(hone.Stateful).MarshalState()
	if err != nil {
		t.Fatalf("%s: MarshalState: %v", what, err)
	}
	if !bytes.Equal(da, db) {
		t.Fatalf("%s: at the end the restored %T's state differs:\n%s\nwant\n%s", what, b, db, da)
	}
}

// level is a trial's loss level, from its configuration: a hash of its
// numbers and strings, so that every searcher's configurations differ.
func level(cfg hone.Config) float64 {
	h := fnv.New64a()
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "%s=%v;", k, cfg[k])
	}
	return 0.1 + float64(h.Sum64()%1000)/1000
}

// render describes actions for comparison: everything in them but
// pointers' identities.
func render(acts []controller.Action) string {
	var b strings.Builder
	for _, a := range acts {
		fmt.Fprintf(&b, "%d", a.Kind)
		if a.Trial != nil {
			fmt.Fprintf(&b, " trial=%s", a.Trial.ID)
		}
		switch a.Kind {
		case controller.ActRecord:
			r := *a.Record
			fmt.Fprintf(&b, " record=%+v", r)
			if r.Resources != nil {
				fmt.Fprintf(&b, " res=%+v", *r.Resources)
			}
		case controller.ActStart:
			fmt.Fprintf(&b, " it=%d cfg=%v gpus=%v", a.Iteration, a.Trial.Config, a.GPUs)
		case controller.ActDirect:
			fmt.Fprintf(&b, " %s", a.Directive)
		case controller.ActNotify:
			fmt.Fprintf(&b, " note=%d err=%q", a.Note, a.Err)
			if a.Result != nil {
				fmt.Fprintf(&b, " result=%d", a.Result.TrainingIteration)
			}
		}
		if a.Checkpoint != nil {
			fmt.Fprintf(&b, " cp=%s", a.Checkpoint.Path)
		}
		if a.Text != "" || a.Path != "" || a.Src != "" {
			fmt.Fprintf(&b, " text=%q path=%s src=%s", a.Text, a.Path, a.Src)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

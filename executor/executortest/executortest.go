// Package executortest checks that an implementation of hone.Executor
// follows the executor protocol, as testing/fstest does for file systems.
// Every executor's tests call Run with a Harness that makes executors whose
// trials follow a Script:
//
//	func TestConformance(t *testing.T) {
//		executortest.Run(t, executortest.Harness{
//			New: func(t *testing.T, s executortest.Script) hone.Executor {
//				return inproc.NewFunc(executortest.Func(s))
//			},
//		})
//	}
//
// An executor that announces starts (hone.StartAnnouncer) may emit an
// EventStarted per start, before the trial's first result and not after
// it was told to stop; the suite checks each one and passes over it, and
// fails any from an executor that does not announce starts.
//
// The suite runs its checks as sequential subtests. One of them verifies
// with goleak that Close leaves no goroutine behind, so Run must not run in
// parallel with tests that start goroutines.
package executortest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hone-tune/hone"
)

// Harness tells Run how to make the executor under test and what it can do.
type Harness struct {
	// New returns a fresh executor whose trials all follow s. Run calls it
	// on the test's goroutine, several times per check at most, and closes
	// every executor it gets (Close may thus be called twice if New also
	// registers a cleanup).
	New func(t *testing.T, s Script) hone.Executor
	// SaveOnDemand says the trainables can save when told: DirectCheckpoint
	// yields a staged checkpoint directory (class style). When false,
	// DirectCheckpoint must yield an EventSaved with CheckpointDir "" and no
	// error (function style).
	SaveOnDemand bool
	// VirtualTime says Next never blocks (the sim executor): checks that
	// need Next to wait for a computing trial are skipped.
	VirtualTime bool
}

// eventTimeout bounds every wait for an event, so a broken executor fails
// the test instead of hanging it.
const eventTimeout = 20 * time.Second

// Run runs the conformance checks against h, each as a subtest of t.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.New == nil {
		t.Fatal("executortest: Harness.New is nil")
	}
	checks := []struct {
		name string
		fn   func(t *testing.T, h Harness)
	}{
		{"IdleWhenEmpty", testIdleWhenEmpty},
		{"RunToCompletion", testRunToCompletion},
		{"ContinueAfterDone", testContinueAfterDone},
		{"CheckpointResults", testCheckpointResults},
		{"SaveOnDemand", testSaveOnDemand},
		{"StopWhileWaiting", testStopWhileWaiting},
		{"StopWhileComputing", testStopWhileComputing},
		{"StopRacingResult", testStopRacingResult},
		{"Failure", testFailure},
		{"Panic", testPanic},
		{"RestoreFromResult", testRestoreFromResult},
		{"RestoreFromSave", testRestoreFromSave},
		{"Protocol", testProtocol},
		{"ContextCancelled", testContextCancelled},
		{"CloseWhileRunning", testCloseWhileRunning},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) { c.fn(t, h) })
	}
}

// tester drives one executor and checks every event it returns.
type tester struct {
	t         *testing.T
	h         Harness
	ex        hone.Executor
	announces bool              // the executor announces starts (hone.StartAnnouncer)
	dirs      map[string]string // trial id → trial directory
	live      map[string]bool   // started trials whose EventExited has not come
	started   map[string]bool   // live trials whose EventStarted came
	reported  map[string]bool   // live trials that reported since their start
	stopped   map[string]bool   // live trials told to stop
	last      time.Time         // time of the latest event
	closed    bool
}

func newTester(t *testing.T, h Harness, s Script) *tester {
	t.Helper()
	x := &tester{t: t, h: h, ex: h.New(t, s), dirs: map[string]string{}, live: map[string]bool{},
		started: map[string]bool{}, reported: map[string]bool{}, stopped: map[string]bool{}}
	if a, ok := x.ex.(hone.StartAnnouncer); ok {
		x.announces = a.AnnouncesStarts()
	}
	t.Cleanup(x.close)
	return x
}

// start starts trial id in its own directory (created on first use).
func (x *tester) start(id, restore string, iteration int) {
	x.t.Helper()
	dir, ok := x.dirs[id]
	if !ok {
		dir = x.t.TempDir()
		x.dirs[id] = dir
	}
	spec := hone.StartSpec{
		TrialID:    id,
		Config:     hone.Config{"trial": id},
		Dir:        dir,
		RestoreDir: restore,
		Iteration:  iteration,
		Resources:  hone.Resources{CPU: 1},
	}
	if err := x.ex.Start(spec); err != nil {
		x.t.Fatalf("Start(%s): %v", id, err)
	}
	x.live[id] = true
	delete(x.started, id)
	delete(x.reported, id)
	delete(x.stopped, id)
}

func (x *tester) direct(id string, d hone.Directive) {
	x.t.Helper()
	if err := x.ex.Direct(id, d); err != nil {
		x.t.Fatalf("Direct(%s, %v): %v", id, d, err)
	}
	if d == hone.DirectStop {
		x.stopped[id] = true
	}
}

// next returns the next event after checking it. An EventStarted, which
// nothing answers, is checked and passed over: the checks see the
// protocol's other events as from an executor that announces nothing.
func (x *tester) next() hone.Event {
	x.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
	defer cancel()
	for {
		ev, err := x.ex.Next(ctx)
		if err != nil {
			x.t.Fatalf("Next: %v", err)
		}
		x.check(ev)
		if ev.Kind != hone.EventStarted {
			return ev
		}
	}
}

// check verifies what holds for every event.
func (x *tester) check(ev hone.Event) {
	x.t.Helper()
	if !x.live[ev.TrialID] {
		x.t.Fatalf("%v event for trial %q, which is not running", ev.Kind, ev.TrialID)
	}
	if ev.Time == 0 {
		x.t.Errorf("%v event of %s has no time", ev.Kind, ev.TrialID)
	}
	if ev.At().Before(x.last) {
		x.t.Errorf("%v event of %s at %v, before the previous event at %v", ev.Kind, ev.TrialID, ev.At(), x.last)
	}
	x.last = ev.At()
	switch ev.Kind {
	case hone.EventResult:
		if ev.Cause != nil {
			x.t.Errorf("result of %s has Cause %v", ev.TrialID, ev.Cause)
		}
		x.count(ev)
		if ev.CheckpointDir != "" {
			x.checkStaged(ev.TrialID, ev.CheckpointDir)
		}
	case hone.EventSaved:
		if ev.Cause != nil {
			x.t.Errorf("save of %s failed: %v", ev.TrialID, ev.Cause)
		}
		if x.h.SaveOnDemand {
			x.checkStaged(ev.TrialID, ev.CheckpointDir)
		} else if ev.CheckpointDir != "" {
			x.t.Errorf("trial %s cannot save on demand but saved %s", ev.TrialID, ev.CheckpointDir)
		}
	case hone.EventExited:
		delete(x.live, ev.TrialID)
		delete(x.started, ev.TrialID)
		delete(x.reported, ev.TrialID)
		delete(x.stopped, ev.TrialID)
	case hone.EventStarted:
		switch {
		case !x.announces:
			x.t.Fatalf("started event of %s from an executor that does not announce starts (hone.StartAnnouncer)", ev.TrialID)
		case x.started[ev.TrialID]:
			x.t.Fatalf("a second started event of %s for one start", ev.TrialID)
		case x.reported[ev.TrialID]:
			x.t.Fatalf("started event of %s after it reported", ev.TrialID)
		case x.stopped[ev.TrialID]:
			x.t.Fatalf("started event of %s after it was told to stop", ev.TrialID)
		}
		x.started[ev.TrialID] = true
	default:
		x.t.Fatalf("event of unknown kind %q for %s", ev.Kind, ev.TrialID)
	}
	if ev.Kind == hone.EventResult || ev.Kind == hone.EventSaved {
		if x.announces && !x.started[ev.TrialID] {
			x.t.Errorf("%v event of %s before its started event: an executor that announces starts announces a trial before it reports", ev.Kind, ev.TrialID)
		}
		x.reported[ev.TrialID] = true
	}
}

// count returns a result's "count" metric.
func (x *tester) count(ev hone.Event) int {
	x.t.Helper()
	v, ok := hone.Number(ev.Metrics[MetricCount])
	if !ok {
		x.t.Fatalf("result of %s has no numeric %q metric: %v", ev.TrialID, MetricCount, ev.Metrics)
	}
	return int(v)
}

// checkStaged verifies that dir is a staged checkpoint of trial id: an
// absolute directory under the trial directory, holding files.
func (x *tester) checkStaged(id, dir string) {
	x.t.Helper()
	if dir == "" {
		x.t.Errorf("trial %s: no checkpoint directory", id)
		return
	}
	if !filepath.IsAbs(dir) {
		x.t.Errorf("trial %s: checkpoint directory %q is not absolute", id, dir)
	}
	rel, err := filepath.Rel(x.dirs[id], dir)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		x.t.Errorf("trial %s: checkpoint directory %s is not under the trial directory %s", id, dir, x.dirs[id])
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		x.t.Errorf("trial %s: checkpoint directory: %v", id, err)
		return
	}
	if len(entries) == 0 {
		x.t.Errorf("trial %s: checkpoint directory %s is empty", id, dir)
	}
}

// result returns the next event, which must be trial id's result number n.
func (x *tester) result(id string, n int) hone.Event {
	x.t.Helper()
	ev := x.next()
	if ev.Kind != hone.EventResult || ev.TrialID != id {
		x.t.Fatalf("got %v event of %s (err %v), want result %d of %s", ev.Kind, ev.TrialID, ev.Cause, n, id)
	}
	if got := x.count(ev); got != n {
		x.t.Fatalf("trial %s: got result %d, want %d", id, got, n)
	}
	return ev
}

// saved returns the next event, which must be trial id's EventSaved.
func (x *tester) saved(id string) hone.Event {
	x.t.Helper()
	ev := x.next()
	if ev.Kind != hone.EventSaved || ev.TrialID != id {
		x.t.Fatalf("got %v event of %s, want a saved event of %s", ev.Kind, ev.TrialID, id)
	}
	return ev
}

// exited returns the next event, which must be trial id's EventExited.
func (x *tester) exited(id string) hone.Event {
	x.t.Helper()
	ev := x.next()
	if ev.Kind != hone.EventExited || ev.TrialID != id {
		x.t.Fatalf("got %v event of %s, want the exit of %s", ev.Kind, ev.TrialID, id)
	}
	return ev
}

// exitedOK expects trial id's normal exit.
func (x *tester) exitedOK(id string) {
	x.t.Helper()
	if ev := x.exited(id); ev.Cause != nil {
		x.t.Fatalf("trial %s exited with error, want a normal end: %v", id, ev.Cause)
	}
}

// idle expects Next to report hone.ErrIdle at once.
func (x *tester) idle() {
	x.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
	defer cancel()
	ev, err := x.ex.Next(ctx)
	if !errors.Is(err, hone.ErrIdle) {
		x.t.Fatalf("Next with no trial running: got (%v event of %s, %v), want hone.ErrIdle", ev.Kind, ev.TrialID, err)
	}
}

// close closes the executor once, failing if Close does not return.
func (x *tester) close() {
	if x.closed {
		return
	}
	x.closed = true
	done := make(chan error, 1)
	go func() { done <- x.ex.Close() }()
	select {
	case err := <-done:
		if err != nil {
			x.t.Errorf("Close: %v", err)
		}
	case <-time.After(eventTimeout):
		x.t.Fatalf("Close did not return within %v", eventTimeout)
	}
}

// commit moves a staged checkpoint to <trial dir>/<name>, as a store
// would, and returns the new path.
func (x *tester) commit(id, staged, name string) string {
	x.t.Helper()
	dest := filepath.Join(x.dirs[id], name)
	if err := os.Rename(staged, dest); err != nil {
		x.t.Fatalf("commit checkpoint: %v", err)
	}
	return dest
}

func testIdleWhenEmpty(t *testing.T, h Harness) {
	x := newTester(t, h, Script{Reports: 1})
	x.idle()
}

// testRunToCompletion runs three trials side by side to their last result:
// each reports in order, Done only on its last result, then exits normally
// once, and the executor is idle afterwards.
func testRunToCompletion(t *testing.T, h Harness) {
	const reports = 4
	x := newTester(t, h, Script{Reports: reports})
	ids := []string{"t1", "t2", "t3"}
	for _, id := range ids {
		x.start(id, "", 0)
	}
	got := map[string][]int{}
	for len(x.live) > 0 {
		ev := x.next()
		switch ev.Kind {
		case hone.EventResult:
			n := x.count(ev)
			got[ev.TrialID] = append(got[ev.TrialID], n)
			if ev.Done != (n == reports) {
				t.Errorf("trial %s result %d: Done = %v", ev.TrialID, n, ev.Done)
			}
			if ev.CheckpointDir != "" {
				t.Errorf("trial %s result %d carries checkpoint %s, want none", ev.TrialID, n, ev.CheckpointDir)
			}
			if ev.Done {
				x.direct(ev.TrialID, hone.DirectStop)
			} else {
				x.direct(ev.TrialID, hone.DirectContinue)
			}
		case hone.EventSaved:
			t.Fatalf("unasked-for saved event of %s", ev.TrialID)
		case hone.EventExited:
			if ev.Cause != nil {
				t.Errorf("trial %s exited with error: %v", ev.TrialID, ev.Cause)
			}
		}
	}
	for _, id := range ids {
		if want := []int{1, 2, 3, 4}; !slices.Equal(got[id], want) {
			t.Errorf("trial %s results %v, want %v", id, got[id], want)
		}
	}
	x.idle()
}

// testContinueAfterDone: a trial told to continue after its Done result
// ends normally.
func testContinueAfterDone(t *testing.T, h Harness) {
	x := newTester(t, h, Script{Reports: 2})
	x.start("a", "", 0)
	x.result("a", 1)
	x.direct("a", hone.DirectContinue)
	if ev := x.result("a", 2); !ev.Done {
		t.Fatalf("last result not Done")
	}
	x.direct("a", hone.DirectContinue)
	x.exitedOK("a")
	x.idle()
}

// testCheckpointResults: results carry fresh staged checkpoints where the
// script says.
func testCheckpointResults(t *testing.T, h Harness) {
	x := newTester(t, h, Script{Reports: 4, CheckpointEvery: 2})
	x.start("a", "", 0)
	seen := map[string]bool{}
	for n := 1; n <= 4; n++ {
		ev := x.result("a", n)
		if n%2 == 0 {
			x.checkStaged("a", ev.CheckpointDir)
			if seen[ev.CheckpointDir] {
				t.Errorf("result %d reuses staged directory %s", n, ev.CheckpointDir)
			}
			seen[ev.CheckpointDir] = true
		} else if ev.CheckpointDir != "" {
			t.Errorf("result %d carries checkpoint %s, want none", n, ev.CheckpointDir)
		}
		if n < 4 {
			x.direct("a", hone.DirectContinue)
		}
	}
	x.direct("a", hone.DirectStop)
	x.exitedOK("a")
	x.idle()
}

// testSaveOnDemand: DirectCheckpoint is answered by EventSaved (with a fresh
// staged directory, or "" for a function trainable) and the trial waits
// for another directive, also after its Done result.
func testSaveOnDemand(t *testing.T, h Harness) {
	x := newTester(t, h, Script{Reports: 3})
	x.start("a", "", 0)
	x.result("a", 1)
	x.direct("a", hone.DirectCheckpoint)
	s1 := x.saved("a")
	x.direct("a", hone.DirectCheckpoint)
	s2 := x.saved("a")
	if h.SaveOnDemand && s1.CheckpointDir == s2.CheckpointDir {
		t.Errorf("two saves share the staged directory %s", s1.CheckpointDir)
	}
	x.direct("a", hone.DirectContinue)
	x.result("a", 2)
	x.direct("a", hone.DirectContinue)
	x.result("a", 3)
	x.direct("a", hone.DirectCheckpoint)
	x.saved("a")
	x.direct("a", hone.DirectStop)
	x.exitedOK("a")
	x.idle()
}

// testStopWhileWaiting: DirectStop after a result ends the trial normally
// and no further result comes.
func testStopWhileWaiting(t *testing.T, h Harness) {
	x := newTester(t, h, Script{Reports: 5})
	x.start("a", "", 0)
	x.result("a", 1)
	x.direct("a", hone.DirectContinue)
	x.result("a", 2)
	x.direct("a", hone.DirectStop)
	x.exitedOK("a")
	x.idle()
}

// testStopWhileComputing: DirectStop reaches a trial that computes a
// report forever, right after Start or after a result.
func testStopWhileComputing(t *testing.T, h Harness) {
	t.Run("AtStart", func(t *testing.T) {
		x := newTester(t, h, Script{Reports: 5, BlockAtReport: 1})
		x.start("a", "", 0)
		x.direct("a", hone.DirectStop)
		x.exitedOK("a")
		x.idle()
	})
	t.Run("AfterResult", func(t *testing.T) {
		x := newTester(t, h, Script{Reports: 5, BlockAtReport: 2})
		x.start("a", "", 0)
		x.result("a", 1)
		x.direct("a", hone.DirectContinue)
		x.direct("a", hone.DirectStop)
		x.exitedOK("a")
		x.idle()
	})
}

// testStopRacingResult: DirectStop sent right after DirectContinue, when
// the trial may or may not have produced its next result yet: after
// Direct(DirectStop) returns, the only event for the trial is its exit.
func testStopRacingResult(t *testing.T, h Harness) {
	x := newTester(t, h, Script{Reports: 50})
	// Pauses between Continue and Stop, per trial, so that some trials are
	// still computing and others have already emitted their next result.
	delays := map[string]time.Duration{"ta": 0, "tb": 100 * time.Microsecond, "tc": time.Millisecond, "td": 5 * time.Millisecond}
	for id := range delays {
		x.start(id, "", 0)
	}
	stopped := map[string]bool{}
	for len(x.live) > 0 {
		ev := x.next()
		if stopped[ev.TrialID] && ev.Kind != hone.EventExited {
			t.Fatalf("%v event of %s after it was stopped", ev.Kind, ev.TrialID)
		}
		switch ev.Kind {
		case hone.EventResult:
			x.direct(ev.TrialID, hone.DirectContinue)
			if x.count(ev) == 3 {
				time.Sleep(delays[ev.TrialID])
				x.direct(ev.TrialID, hone.DirectStop)
				stopped[ev.TrialID] = true
			}
		case hone.EventExited:
			if ev.Cause != nil {
				t.Errorf("trial %s exited with error: %v", ev.TrialID, ev.Cause)
			}
		default:
			t.Fatalf("unexpected %v event of %s", ev.Kind, ev.TrialID)
		}
	}
	if len(stopped) != len(delays) {
		t.Errorf("%d trials stopped, want %d", len(stopped), len(delays))
	}
	x.idle()
}

// testFailure: a trial that returns an error exits with an error, at its
// first report or later.
func testFailure(t *testing.T, h Harness) {
	for _, at := range []int{1, 2} {
		x := newTester(t, h, Script{Reports: 5, FailAtReport: at})
		x.start("a", "", 0)
		for n := 1; n < at; n++ {
			x.result("a", n)
			x.direct("a", hone.DirectContinue)
		}
		if ev := x.exited("a"); ev.Cause == nil {
			t.Errorf("failure at report %d: exit without error", at)
		}
		x.idle()
	}
}

// testPanic: a trial that panics exits with an error.
func testPanic(t *testing.T, h Harness) {
	x := newTester(t, h, Script{Reports: 5, PanicAtReport: 2})
	x.start("a", "", 0)
	x.result("a", 1)
	x.direct("a", hone.DirectContinue)
	if ev := x.exited("a"); ev.Cause == nil {
		t.Errorf("panic: exit without error")
	}
	x.idle()
}

// testRestoreFromResult: a trial restarted (same id, as after a pause)
// or a new trial (as after an exploit) restores a checkpoint that a result
// carried, and goes on from there.
func testRestoreFromResult(t *testing.T, h Harness) {
	x := newTester(t, h, Script{Reports: 6, CheckpointEvery: 3})
	x.start("a", "", 0)
	var staged string
	for n := 1; n <= 3; n++ {
		staged = x.result("a", n).CheckpointDir
		if n < 3 {
			x.direct("a", hone.DirectContinue)
		}
	}
	x.direct("a", hone.DirectStop)
	x.exitedOK("a")
	cp := x.commit("a", staged, "checkpoint_000000")

	x.start("a", cp, 3)
	x.result("a", 4)
	x.direct("a", hone.DirectStop)
	x.exitedOK("a")

	x.start("b", cp, 3)
	for n := 4; n <= 6; n++ {
		ev := x.result("b", n)
		if n == 6 {
			if !ev.Done {
				t.Errorf("last result of b not Done")
			}
			x.direct("b", hone.DirectStop)
		} else {
			x.direct("b", hone.DirectContinue)
		}
	}
	x.exitedOK("b")
	x.idle()
}

// testRestoreFromSave: a checkpoint saved on demand restores the state at
// the save.
func testRestoreFromSave(t *testing.T, h Harness) {
	if !h.SaveOnDemand {
		t.Skip("trainables cannot save on demand")
	}
	x := newTester(t, h, Script{Reports: 4})
	x.start("a", "", 0)
	x.result("a", 1)
	x.direct("a", hone.DirectContinue)
	x.result("a", 2)
	x.direct("a", hone.DirectCheckpoint)
	staged := x.saved("a").CheckpointDir
	x.direct("a", hone.DirectStop)
	x.exitedOK("a")
	cp := x.commit("a", staged, "checkpoint_000000")

	x.start("a", cp, 2)
	x.result("a", 3)
	x.direct("a", hone.DirectContinue)
	x.result("a", 4)
	x.direct("a", hone.DirectStop)
	x.exitedOK("a")
	x.idle()
}

// testProtocol: directives that break the protocol are refused, a second
// stop is harmless, and a trial id is free again once its exit was seen.
func testProtocol(t *testing.T, h Harness) {
	x := newTester(t, h, Script{Reports: 5, BlockAtReport: 2})
	for _, d := range []hone.Directive{hone.DirectContinue, hone.DirectCheckpoint, hone.DirectStop} {
		if err := x.ex.Direct("nosuch", d); err == nil {
			t.Errorf("Direct(nosuch, %v) = nil, want an error", d)
		}
	}
	x.start("a", "", 0)
	x.result("a", 1)
	x.direct("a", hone.DirectContinue) // a now computes report 2 until stopped
	if err := x.ex.Start(hone.StartSpec{TrialID: "a", Dir: x.dirs["a"]}); err == nil {
		t.Errorf("second Start of running trial a = nil, want an error")
	}
	for _, d := range []hone.Directive{hone.DirectContinue, hone.DirectCheckpoint} {
		if err := x.ex.Direct("a", d); err == nil {
			t.Errorf("Direct(a, %v) while a computes = nil, want an error", d)
		}
	}
	x.direct("a", hone.DirectStop)
	x.direct("a", hone.DirectStop)
	x.exitedOK("a")
	if err := x.ex.Direct("a", hone.DirectStop); err == nil {
		t.Errorf("Direct(a, stop) after its exit = nil, want an error")
	}
	x.start("a", "", 0)
	x.result("a", 1)
	x.direct("a", hone.DirectStop)
	x.exitedOK("a")
	x.idle()
}

// testContextCancelled: Next returns the context's error when it is done.
func testContextCancelled(t *testing.T, h Harness) {
	x := newTester(t, h, Script{Reports: 5, BlockAtReport: 1})
	x.start("a", "", 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ev, err := x.ex.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Next(cancelled ctx) = (%v event, %v), want context.Canceled", ev.Kind, err)
	}
	if !h.VirtualTime {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		for {
			ev, err := x.ex.Next(ctx)
			if err == nil && ev.Kind == hone.EventStarted {
				x.check(ev) // the trial began to run: the one event it may give meanwhile
				continue
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Next(ctx with deadline) while a trial computes = (%v event, %v), want context.DeadlineExceeded", ev.Kind, err)
			}
			break
		}
	}
	x.direct("a", hone.DirectStop)
	x.exitedOK("a")
	x.idle()
}

// testCloseWhileRunning: Close with trials waiting after a result,
// computing, and waiting after a save returns, and leaves no goroutine.
func testCloseWhileRunning(t *testing.T, h Harness) {
	leaks := goleak.IgnoreCurrent()
	x := newTester(t, h, Script{Reports: 5, BlockAtReport: 3})
	x.start("waiting", "", 0)
	x.result("waiting", 1)

	x.start("computing", "", 0)
	x.result("computing", 1)
	x.direct("computing", hone.DirectContinue)
	x.result("computing", 2)
	x.direct("computing", hone.DirectContinue)

	x.start("saving", "", 0)
	x.result("saving", 1)
	x.direct("saving", hone.DirectCheckpoint)
	x.saved("saving")

	x.close()
	goleak.VerifyNone(t, leaks)
}

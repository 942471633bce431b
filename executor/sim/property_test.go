package sim_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
)

// TestProtocolProperty drives the executor with random calls and checks it
// against a model of the protocol: Direct fails exactly when the protocol
// says so, every event is one the trial could emit, virtual time never goes
// back, Next is idle exactly when nothing is scheduled, and every started
// trial exits exactly once.
func TestProtocolProperty(t *testing.T) {
	root := t.TempDir()
	runs := 0
	rapid.Check(t, func(rt *rapid.T) {
		runs++
		dir := filepath.Join(root, fmt.Sprint(runs))
		fm := &sim.FailingModel{
			Model: sim.Curve{
				MaxIterations:   rapid.IntRange(0, 6).Draw(rt, "max_iterations"),
				CheckpointEvery: rapid.IntRange(0, 3).Draw(rt, "checkpoint_every"),
			}.New,
			Iteration: rapid.IntRange(0, 6).Draw(rt, "fail_at"),
		}
		var opts []sim.Option
		if rapid.Bool().Draw(rt, "cannot_save") {
			opts = append(opts, sim.CannotSaveOnDemand())
		}
		opts = append(opts, sim.WithSaveDuration(time.Duration(rapid.IntRange(0, 3).Draw(rt, "save_s"))*time.Second))
		ex := sim.New(fm.New, opts...)
		defer ex.Close()

		// expect is what each live trial emits next: "result", "saved",
		// "exit", or "" while it waits for a directive.
		expect := map[string]string{}
		done := map[string]bool{}
		exits := map[string]int{}
		starts := map[string]int{}
		var last time.Time
		ids := []string{"a", "b", "c"}

		pop := func(rt *rapid.T) (hone.Event, bool) {
			scheduled := slices.ContainsFunc(ids, func(id string) bool { return expect[id] != "" })
			ev, err := ex.Next(context.Background())
			if errors.Is(err, hone.ErrIdle) {
				if scheduled {
					rt.Fatalf("Next idle with events scheduled: %v", expect)
				}
				return ev, false
			}
			if err != nil {
				rt.Fatalf("Next: %v", err)
			}
			if ev.At().Before(last) {
				rt.Fatalf("time went back from %v to %v", last, ev.At())
			}
			last = ev.At()
			want, live := expect[ev.TrialID]
			switch {
			case !live:
				rt.Fatalf("%v event of %s, which is not running", ev.Kind, ev.TrialID)
			case ev.Kind == hone.EventExited:
				if want != "exit" && !(want == "result" && errors.Is(ev.Cause, sim.ErrInjected)) {
					rt.Fatalf("unexpected exit of %s (err %v), expected %q", ev.TrialID, ev.Cause, want)
				}
				delete(expect, ev.TrialID)
				exits[ev.TrialID]++
			case ev.Kind == hone.EventResult && want == "result", ev.Kind == hone.EventSaved && want == "saved":
				expect[ev.TrialID] = ""
				if ev.Kind == hone.EventResult {
					done[ev.TrialID] = ev.Done
				}
			default:
				rt.Fatalf("%v event of %s, expected %q", ev.Kind, ev.TrialID, want)
			}
			return ev, true
		}

		rt.Repeat(map[string]func(*rapid.T){
			"start": func(rt *rapid.T) {
				id := rapid.SampledFrom(ids).Draw(rt, "id")
				_, live := expect[id]
				err := ex.Start(hone.StartSpec{TrialID: id, Dir: filepath.Join(dir, id)})
				if live != (err != nil) {
					rt.Fatalf("Start(%s) with live = %v: %v", id, live, err)
				}
				if !live {
					expect[id] = "result"
					starts[id]++
				}
			},
			"direct": func(rt *rapid.T) {
				id := rapid.SampledFrom(ids).Draw(rt, "id")
				d := rapid.SampledFrom([]hone.Directive{hone.DirectContinue, hone.DirectCheckpoint, hone.DirectStop}).Draw(rt, "directive")
				want, live := expect[id]
				err := ex.Direct(id, d)
				ok := live && (d == hone.DirectStop || want == "")
				if ok != (err == nil) {
					rt.Fatalf("Direct(%s, %v) with live = %v, expecting %q: %v", id, d, live, want, err)
				}
				switch {
				case !ok:
				case d == hone.DirectStop, d == hone.DirectContinue && done[id]:
					expect[id] = "exit"
				case d == hone.DirectContinue:
					expect[id] = "result"
				case d == hone.DirectCheckpoint:
					expect[id] = "saved"
				}
			},
			"next": func(rt *rapid.T) { pop(rt) },
		})

		for _, id := range ids {
			if _, live := expect[id]; live {
				if err := ex.Direct(id, hone.DirectStop); err != nil {
					rt.Fatalf("final stop of %s: %v", id, err)
				}
				expect[id] = "exit"
			}
		}
		for {
			if _, ok := pop(rt); !ok {
				break
			}
		}
		for _, id := range ids {
			if exits[id] != starts[id] {
				rt.Fatalf("trial %s started %d times, exited %d times", id, starts[id], exits[id])
			}
		}
	})
}

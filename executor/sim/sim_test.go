package sim_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
)

var bg = context.Background()

func next(t testing.TB, ex *sim.Executor) hone.Event {
	t.Helper()
	ev, err := ex.Next(bg)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return ev
}

func direct(t testing.TB, ex *sim.Executor, id string, d hone.Directive) {
	t.Helper()
	if err := ex.Direct(id, d); err != nil {
		t.Fatalf("Direct(%s, %v): %v", id, d, err)
	}
}

func start(t testing.TB, ex *sim.Executor, spec hone.StartSpec) {
	t.Helper()
	if err := ex.Start(spec); err != nil {
		t.Fatalf("Start(%s): %v", spec.TrialID, err)
	}
}

// drive runs an experiment-like sequence of calls — 20 curve trials with
// noise, random saves, pauses and resumes, and injected failures retried
// from the latest checkpoint — and returns every event as a line of text,
// checkpoint paths relative to root.
func drive(t *testing.T, root string) []string {
	fm := &sim.FailingModel{
		Model:     sim.Curve{Noise: 0.05, Seed: 7, MaxIterations: 30, CheckpointEvery: 5}.New,
		Iteration: 12,
		Trials:    []string{"t03", "t07", "t11"},
		Times:     1,
	}
	ex := sim.New(fm.New, sim.WithStartDuration(30*time.Second), sim.WithSaveDuration(5*time.Second))
	defer ex.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	type state struct {
		spec    hone.StartSpec
		commits int
		paused  bool
	}
	trials := map[string]*state{}
	commit := func(s *state, staged string, iter int) {
		dest := filepath.Join(s.spec.Dir, hone.CheckpointDirName(s.commits))
		if err := os.Rename(staged, dest); err != nil {
			t.Fatal(err)
		}
		s.commits++
		s.spec.RestoreDir, s.spec.Iteration = dest, iter
	}
	for i := range 20 {
		id := fmt.Sprintf("t%02d", i)
		s := &state{spec: hone.StartSpec{
			TrialID: id,
			Dir:     filepath.Join(root, id),
			Config: hone.Config{
				"rate":         rng.Float64(),
				"asymptote":    rng.Float64(),
				"step_seconds": 1 + rng.IntN(100),
			},
		}}
		trials[id] = s
		start(t, ex, s.spec)
	}
	var lines []string
	iters := map[string]int{}
	for {
		ev, err := ex.Next(bg)
		if errors.Is(err, hone.ErrIdle) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rel := ""
		if ev.CheckpointDir != "" {
			rel, _ = filepath.Rel(root, ev.CheckpointDir)
		}
		lines = append(lines, fmt.Sprintf("%s %v %s %v done=%v cp=%s err=%v",
			ev.At().Format(time.RFC3339Nano), ev.Kind, ev.TrialID, ev.Metrics, ev.Done, rel, ev.Cause))
		s := trials[ev.TrialID]
		switch ev.Kind {
		case hone.EventResult:
			iters[ev.TrialID]++
			if ev.CheckpointDir != "" {
				commit(s, ev.CheckpointDir, iters[ev.TrialID])
			}
			switch r := rng.Float64(); {
			case ev.Done:
				direct(t, ex, ev.TrialID, hone.DirectStop)
			case r < 0.05:
				s.paused = true
				direct(t, ex, ev.TrialID, hone.DirectStop)
			case r < 0.15:
				direct(t, ex, ev.TrialID, hone.DirectCheckpoint)
			default:
				direct(t, ex, ev.TrialID, hone.DirectContinue)
			}
		case hone.EventSaved:
			commit(s, ev.CheckpointDir, iters[ev.TrialID])
			direct(t, ex, ev.TrialID, hone.DirectContinue)
		case hone.EventExited:
			if ev.Cause != nil || s.paused {
				s.paused = false
				iters[ev.TrialID] = s.spec.Iteration
				start(t, ex, s.spec)
			}
		}
	}
	return lines
}

func TestDeterministic(t *testing.T) {
	a := drive(t, t.TempDir())
	b := drive(t, t.TempDir())
	if len(a) < 600 {
		t.Fatalf("only %d events; the scenario is too small", len(a))
	}
	for _, want := range []string{"saved", "injected failure", "cp=t05/"} {
		if !strings.Contains(strings.Join(a, "\n"), want) {
			t.Errorf("the scenario never produced %q", want)
		}
	}
	if !slices.Equal(a, b) {
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Fatalf("runs differ at event %d:\n%s\n%s", i, a[i], b[i])
			}
		}
		t.Fatalf("runs differ in length: %d and %d events", len(a), len(b))
	}
}

// TestRestoreIsExact: a trial restarted from a checkpoint reports what it
// reported the first time, noise included.
func TestRestoreIsExact(t *testing.T) {
	ex := sim.New(sim.Curve{Noise: 0.1, Seed: 3, CheckpointEvery: 5}.New)
	defer ex.Close()
	dir := t.TempDir()
	start(t, ex, hone.StartSpec{TrialID: "a", Dir: dir, Config: hone.Config{"rate": 0.3}})
	var first []any
	var cp string
	for i := 1; i <= 10; i++ {
		ev := next(t, ex)
		if i == 5 {
			cp = ev.CheckpointDir
		}
		if i > 5 {
			first = append(first, ev.Metrics["loss"])
		}
		direct(t, ex, "a", hone.DirectContinue)
	}
	direct(t, ex, "a", hone.DirectStop)
	for ev := next(t, ex); ev.Kind != hone.EventExited; ev = next(t, ex) {
	}
	start(t, ex, hone.StartSpec{TrialID: "a", Dir: dir, Config: hone.Config{"rate": 0.3}, RestoreDir: cp, Iteration: 5})
	var again []any
	for range 5 {
		again = append(again, next(t, ex).Metrics["loss"])
		direct(t, ex, "a", hone.DirectContinue)
	}
	if !slices.Equal(first, again) {
		t.Errorf("after restore: %v, first time: %v", again, first)
	}
}

// TestVirtualTime pins when each kind of event happens.
func TestVirtualTime(t *testing.T) {
	t0 := time.Date(2020, 5, 1, 12, 0, 0, 0, time.UTC)
	ex := sim.New(sim.Curve{}.New, sim.WithStart(t0), sim.WithStartDuration(30*time.Second), sim.WithSaveDuration(5*time.Second))
	defer ex.Close()
	if got := ex.Clock().Now(); !got.Equal(t0) {
		t.Fatalf("clock starts at %v, want %v", got, t0)
	}
	start(t, ex, hone.StartSpec{TrialID: "a", Dir: t.TempDir(), Config: hone.Config{"step_seconds": 2}})
	want := func(ev hone.Event, kind hone.EventKind, after time.Duration) {
		t.Helper()
		if ev.Kind != kind || !ev.At().Equal(t0.Add(after)) {
			t.Fatalf("got %v at %v, want %v at %v", ev.Kind, ev.At().Sub(t0), kind, after)
		}
		if now := ex.Clock().Now(); !now.Equal(ev.At()) {
			t.Fatalf("clock at %v after an event at %v", now, ev.At())
		}
	}
	want(next(t, ex), hone.EventResult, 32*time.Second)
	direct(t, ex, "a", hone.DirectCheckpoint)
	want(next(t, ex), hone.EventSaved, 37*time.Second)
	direct(t, ex, "a", hone.DirectContinue)
	want(next(t, ex), hone.EventResult, 39*time.Second)
	direct(t, ex, "a", hone.DirectContinue)
	direct(t, ex, "a", hone.DirectStop) // cancels the step due at 41 s
	want(next(t, ex), hone.EventExited, 39*time.Second)
	if _, err := ex.Next(bg); !errors.Is(err, hone.ErrIdle) {
		t.Fatalf("Next after the exit: %v, want ErrIdle", err)
	}
}

// TestTiesInStartOrder: events due at the same time come in the order
// they were scheduled.
func TestTiesInStartOrder(t *testing.T) {
	ex := sim.New(sim.Curve{}.New)
	defer ex.Close()
	ids := []string{"c", "a", "d", "b"}
	for _, id := range ids {
		start(t, ex, hone.StartSpec{TrialID: id})
	}
	var got []string
	for range ids {
		got = append(got, next(t, ex).TrialID)
	}
	if !slices.Equal(got, ids) {
		t.Errorf("results in order %v, want %v", got, ids)
	}
}

// TestWaitingIsIdle: with every trial waiting for a directive nothing can
// happen, and Next says so instead of blocking.
func TestWaitingIsIdle(t *testing.T) {
	ex := sim.New(sim.Curve{}.New)
	defer ex.Close()
	start(t, ex, hone.StartSpec{TrialID: "a"})
	next(t, ex)
	if _, err := ex.Next(bg); !errors.Is(err, hone.ErrIdle) {
		t.Fatalf("Next with the only trial waiting: %v, want ErrIdle", err)
	}
	direct(t, ex, "a", hone.DirectContinue)
	if ev := next(t, ex); ev.Kind != hone.EventResult {
		t.Fatalf("got %v, want a result", ev.Kind)
	}
}

// TestStopCancelsScheduledFailure: a trial stopped before its failure is
// due ends normally.
func TestStopCancelsScheduledFailure(t *testing.T) {
	fm := &sim.FailingModel{Model: sim.Curve{}.New, Iteration: 2}
	ex := sim.New(fm.New)
	defer ex.Close()
	start(t, ex, hone.StartSpec{TrialID: "a"})
	next(t, ex)
	direct(t, ex, "a", hone.DirectContinue) // fails, due now: the failure has happened
	direct(t, ex, "a", hone.DirectStop)
	if ev := next(t, ex); ev.Kind != hone.EventExited || !errors.Is(ev.Cause, sim.ErrInjected) {
		t.Fatalf("got %v (err %v), want the injected failure", ev.Kind, ev.Cause)
	}

	ex2 := sim.New(func(cfg hone.Config, id string) (sim.Trainable, error) {
		return slowFail{}, nil
	})
	defer ex2.Close()
	start(t, ex2, hone.StartSpec{TrialID: "b"}) // fails an hour from now
	direct(t, ex2, "b", hone.DirectStop)
	if ev := next(t, ex2); ev.Kind != hone.EventExited || ev.Cause != nil || !ev.At().Equal(ex2.Clock().Now()) {
		t.Fatalf("got %v (err %v), want a normal exit now", ev.Kind, ev.Cause)
	}
}

// slowFail is a trainable whose step fails after an hour.
type slowFail struct{}

func (slowFail) Step() (sim.Step, error) {
	return sim.Step{Duration: time.Hour}, errors.New("slow failure")
}
func (slowFail) Save() ([]byte, error)   { return nil, nil }
func (slowFail) Load(state []byte) error { return nil }

// TestDoneThenContinue: after a Done result, DirectContinue ends the trial.
func TestDoneThenContinue(t *testing.T) {
	ex := sim.New(sim.Curve{MaxIterations: 1}.New)
	defer ex.Close()
	start(t, ex, hone.StartSpec{TrialID: "a"})
	if ev := next(t, ex); !ev.Done {
		t.Fatal("first result not Done with MaxIterations 1")
	}
	direct(t, ex, "a", hone.DirectContinue)
	if ev := next(t, ex); ev.Kind != hone.EventExited || ev.Cause != nil {
		t.Fatalf("got %v (err %v), want a normal exit", ev.Kind, ev.Cause)
	}
}

// TestModelErrors: failures to make, restore, step or save a trainable
// are trial errors; a panic carries its stack.
func TestModelErrors(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		name  string
		model sim.Model
		spec  hone.StartSpec
		want  string
	}{
		{"ModelError", func(hone.Config, string) (sim.Trainable, error) { return nil, boom }, hone.StartSpec{}, "create trainable: boom"},
		{"ModelPanic", func(hone.Config, string) (sim.Trainable, error) { panic("kaput") }, hone.StartSpec{}, "panic: kaput"},
		{"BadConfig", sim.Curve{}.New, hone.StartSpec{Config: hone.Config{"rate": "fast"}}, "config rate = fast: not a number"},
		{"MissingCheckpoint", sim.Curve{}.New, hone.StartSpec{RestoreDir: "/nonexistent/checkpoint"}, "load checkpoint /nonexistent/checkpoint"},
		{"StepPanic", func(hone.Config, string) (sim.Trainable, error) { return panicky{}, nil }, hone.StartSpec{}, "panic: step exploded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ex := sim.New(c.model, sim.WithStartDuration(time.Minute))
			defer ex.Close()
			c.spec.TrialID = "a"
			start(t, ex, c.spec)
			ev := next(t, ex)
			if ev.Kind != hone.EventExited || ev.Cause == nil || !strings.Contains(ev.Cause.Error(), c.want) {
				t.Fatalf("got %v (err %v), want an exit with %q", ev.Kind, ev.Cause, c.want)
			}
			if strings.Contains(c.want, "panic") && !strings.Contains(ev.Cause.Error(), "sim_test.") {
				t.Errorf("panic error has no stack:\n%v", ev.Cause)
			}
		})
	}
}

// panicky panics in Step.
type panicky struct{}

func (panicky) Step() (sim.Step, error) { panic("step exploded") }
func (panicky) Save() ([]byte, error)   { return nil, nil }
func (panicky) Load(state []byte) error { return nil }

func TestFailingModel(t *testing.T) {
	// ckpt runs trial id to its result number at, which must carry a
	// checkpoint, stops it there and returns the checkpoint.
	ckpt := func(t *testing.T, ex *sim.Executor, id string, at int) string {
		t.Helper()
		for i := 1; ; i++ {
			ev := next(t, ex)
			if ev.Kind != hone.EventResult {
				t.Fatalf("got %v (err %v) at step %d", ev.Kind, ev.Cause, i)
			}
			if i == at {
				if ev.CheckpointDir == "" {
					t.Fatalf("result %d has no checkpoint", i)
				}
				direct(t, ex, id, hone.DirectStop)
				next(t, ex)
				return ev.CheckpointDir
			}
			direct(t, ex, id, hone.DirectContinue)
		}
	}
	failsAt := func(t *testing.T, ex *sim.Executor, spec hone.StartSpec) int {
		t.Helper()
		start(t, ex, spec)
		for i := spec.Iteration + 1; ; i++ {
			ev := next(t, ex)
			if ev.Kind == hone.EventExited {
				if !errors.Is(ev.Cause, sim.ErrInjected) {
					t.Fatalf("exit at step %d with %v, want the injected failure", i, ev.Cause)
				}
				return i
			}
			if ev.Done {
				direct(t, ex, spec.TrialID, hone.DirectStop)
				next(t, ex)
				return 0
			}
			direct(t, ex, spec.TrialID, hone.DirectContinue)
		}
	}
	curve := sim.Curve{MaxIterations: 8, CheckpointEvery: 4}.New

	t.Run("Always", func(t *testing.T) {
		fm := &sim.FailingModel{Model: curve, Iteration: 6}
		ex := sim.New(fm.New)
		spec := hone.StartSpec{TrialID: "a", Dir: t.TempDir()}
		if got := failsAt(t, ex, spec); got != 6 {
			t.Fatalf("from scratch: failed at %d, want 6", got)
		}
		if got := failsAt(t, ex, spec); got != 6 {
			t.Fatalf("from scratch again: failed at %d, want 6", got)
		}
		start(t, ex, spec)
		cp := ckpt(t, ex, "a", 4)
		if got := failsAt(t, ex, hone.StartSpec{TrialID: "a", Dir: spec.Dir, RestoreDir: cp, Iteration: 4}); got != 6 {
			t.Fatalf("from the checkpoint at 4: failed at %d, want 6", got)
		}
	})
	t.Run("Once", func(t *testing.T) {
		fm := &sim.FailingModel{Model: curve, Iteration: 2, Times: 1, Trials: []string{"a"}}
		ex := sim.New(fm.New)
		if got := failsAt(t, ex, hone.StartSpec{TrialID: "b", Dir: t.TempDir()}); got != 0 {
			t.Fatalf("trial b failed at %d, but only a fails", got)
		}
		if got := failsAt(t, ex, hone.StartSpec{TrialID: "a", Dir: t.TempDir()}); got != 2 {
			t.Fatalf("failed at %d, want 2", got)
		}
		if got := failsAt(t, ex, hone.StartSpec{TrialID: "a", Dir: t.TempDir()}); got != 0 {
			t.Fatalf("failed again at %d, want once only", got)
		}
	})
	t.Run("RestorePastTheFailure", func(t *testing.T) {
		// The donor does not fail; its checkpoint at 8 records the wrapped
		// iteration count, so a failing trial restored from it goes on.
		fm := &sim.FailingModel{Model: sim.Curve{MaxIterations: 12, CheckpointEvery: 4}.New, Iteration: 6, Trials: []string{"a"}}
		ex := sim.New(fm.New)
		start(t, ex, hone.StartSpec{TrialID: "donor", Dir: t.TempDir()})
		cp := ckpt(t, ex, "donor", 8)
		if got := failsAt(t, ex, hone.StartSpec{TrialID: "a", Dir: t.TempDir(), RestoreDir: cp, Iteration: 8}); got != 0 {
			t.Fatalf("restored at 8, failed at %d", got)
		}
		if got := failsAt(t, ex, hone.StartSpec{TrialID: "a", Dir: t.TempDir()}); got != 6 {
			t.Fatalf("from scratch: failed at %d, want 6", got)
		}
	})
}

func TestConfigCurveParams(t *testing.T) {
	cases := []struct {
		cfg  hone.Config
		want sim.CurveParams
		err  string
	}{
		{hone.Config{}, sim.CurveParams{Initial: 1, Asymptote: 0, Rate: 0.1, StepTime: time.Second}, ""},
		{hone.Config{"initial": 5, "asymptote": 0.5, "rate": 1.5, "step_seconds": 0.25, "other": "x"},
			sim.CurveParams{Initial: 5, Asymptote: 0.5, Rate: 1.5, StepTime: 250 * time.Millisecond}, ""},
		{hone.Config{"asymptote": "low"}, sim.CurveParams{}, "config asymptote = low: not a number"},
		{hone.Config{"step_seconds": -1}, sim.CurveParams{}, "config step_seconds = -1: must be a finite number >= 0"},
	}
	for _, c := range cases {
		got, err := sim.ConfigCurveParams(c.cfg)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("ConfigCurveParams(%v) error = %v, want %q", c.cfg, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ConfigCurveParams(%v) = %+v, %v; want %+v", c.cfg, got, err, c.want)
		}
	}
}

// TestCurve: without noise the metric falls from Initial toward the
// asymptote; with noise it stays near the curve.
func TestCurve(t *testing.T) {
	for _, noise := range []float64{0, 0.01} {
		tr, err := sim.Curve{Metric: "err", Noise: noise, MaxIterations: 50}.New(hone.Config{"initial": 2, "asymptote": 0.5, "rate": 0.2}, "x")
		if err != nil {
			t.Fatal(err)
		}
		prev := 2.0
		for i := 1; i <= 50; i++ {
			st, err := tr.Step()
			if err != nil {
				t.Fatal(err)
			}
			v := st.Metrics["err"].(float64)
			exact := 0.5 + 1.5*math.Exp(-0.2*float64(i))
			if noise == 0 && (v >= prev || v != exact) {
				t.Fatalf("step %d: %v after %v, want %v", i, v, prev, exact)
			}
			if math.Abs(v-exact) > 10*noise+1e-12 {
				t.Fatalf("step %d: %v is far from the curve %v", i, v, exact)
			}
			if st.Done != (i == 50) {
				t.Fatalf("step %d: Done = %v", i, st.Done)
			}
			prev = v
		}
	}
}

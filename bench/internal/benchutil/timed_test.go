package benchutil

import (
	"bytes"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/scheduler/asha"
	"github.com/hone-tune/hone/search/nsga2"
	"github.com/hone-tune/hone/space"
)

// oneSearcher is a searcher with none of the optional abilities.
type oneSearcher struct{}

func (oneSearcher) Suggest(string) (hone.Config, error)        { return hone.Config{}, nil }
func (oneSearcher) OnResult(string, *hone.Result)              {}
func (oneSearcher) OnTrialComplete(string, *hone.Result, bool) {}

// oneScheduler is a scheduler with none of the optional abilities.
type oneScheduler struct{}

func (oneScheduler) OnTrialAdd(hone.Control, *hone.Trial) {}
func (oneScheduler) OnResult(hone.Control, *hone.Trial, *hone.Result) hone.Decision {
	return hone.Continue
}
func (oneScheduler) OnTrialComplete(hone.Control, *hone.Trial, *hone.Result) {}
func (oneScheduler) OnTrialError(hone.Control, *hone.Trial)                  {}
func (oneScheduler) OnTrialRemove(hone.Control, *hone.Trial)                 {}
func (oneScheduler) ChooseTrialToRun(hone.Control) *hone.Trial               { return nil }

func twoObjectives() hone.Objectives {
	return hone.Objectives{{Metric: "f1", Mode: hone.Min}, {Metric: "f2", Mode: hone.Min}}
}

// TestTimedMultiObjective: timed wrappers of a searcher and a scheduler
// that take several objectives pass Experiment.Validate with two, and
// wrappers of plugins that take one are refused as the plain ones are.
func TestTimedMultiObjective(t *testing.T) {
	objs := twoObjectives()
	o := nsga2.DefaultOptions()
	o.Objectives, o.Seed = objs, 1
	sr, err := nsga2.New(space.Space{"x": space.Uniform(0, 1), "y": space.Uniform(0, 1)}, o)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := asha.New(asha.Config{TimeAttr: "step", MaxT: 9, GracePeriod: 1, ReductionFactor: 3})
	if err != nil {
		t.Fatal(err)
	}
	m := &CPUMeter{}
	exp := &hone.Experiment{Name: "timed", Objectives: objs, Searcher: TimeSearcher(sr, m), Scheduler: TimeScheduler(sc, m)}
	if err := exp.Validate(); err != nil {
		t.Fatalf("timed nsga2 and asha with two objectives: %v", err)
	}

	plain := &hone.Experiment{Name: "plain", Objectives: objs, Searcher: oneSearcher{}}
	timed := &hone.Experiment{Name: "timed", Objectives: objs, Searcher: TimeSearcher(oneSearcher{}, m)}
	if err := plain.Validate(); !errors.Is(err, hone.ErrOneObjective) {
		t.Fatalf("plain one-objective searcher: %v", err)
	}
	if err := timed.Validate(); !errors.Is(err, hone.ErrOneObjective) {
		t.Errorf("timed one-objective searcher: %v, want an error wrapping hone.ErrOneObjective", err)
	}
	timed = &hone.Experiment{Name: "timed", Objectives: objs, Searcher: TimeSearcher(sr, m), Scheduler: TimeScheduler(oneScheduler{}, m)}
	if err := timed.Validate(); !errors.Is(err, hone.ErrOneObjective) {
		t.Errorf("timed one-objective scheduler: %v, want an error wrapping hone.ErrOneObjective", err)
	}
}

// TestTimedForwards: the wrappers are hone.Stateful exactly when the
// inner plugin is, with its state, and forward the pending limit.
func TestTimedForwards(t *testing.T) {
	o := nsga2.DefaultOptions()
	o.Objectives, o.Seed = twoObjectives(), 1
	sr, err := nsga2.New(space.Space{"x": space.Uniform(0, 1)}, o)
	if err != nil {
		t.Fatal(err)
	}
	m := &CPUMeter{}
	w := TimeSearcher(sr, m)
	st, ok := w.(hone.Stateful)
	if !ok {
		t.Fatal("timed nsga2 is not hone.Stateful")
	}
	got, err := st.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	want, err := sr.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("timed nsga2's state differs from the plain one's")
	}
	if err := st.UnmarshalState(want); err != nil {
		t.Errorf("restore: %v", err)
	}
	if w.(hone.PendingLimit).MaxPending() != sr.MaxPending() {
		t.Errorf("MaxPending %d, plain %d", w.(hone.PendingLimit).MaxPending(), sr.MaxPending())
	}
	if _, ok := TimeSearcher(oneSearcher{}, m).(hone.Stateful); ok {
		t.Error("a timed searcher without state is hone.Stateful")
	}
	if _, ok := TimeScheduler(oneScheduler{}, m).(hone.Stateful); ok {
		t.Error("a timed scheduler without state is hone.Stateful")
	}
	sc, err := asha.New(asha.Config{TimeAttr: "step", MaxT: 9, GracePeriod: 1, ReductionFactor: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := TimeScheduler(sc, m).(hone.Stateful); !ok {
		t.Error("timed asha is not hone.Stateful")
	}
}

// TestCPUMeterGrows: every call through a timed wrapper is counted, and
// the total grows with the calls' work.
func TestCPUMeterGrows(t *testing.T) {
	o := nsga2.DefaultOptions()
	o.Objectives, o.Seed = twoObjectives(), 1
	sr, err := nsga2.New(space.Space{"x": space.Uniform(0, 1)}, o)
	if err != nil {
		t.Fatal(err)
	}
	m := &CPUMeter{}
	w := TimeSearcher(sr, m)
	var last time.Duration
	for i := range 20 {
		id := "t" + strconv.Itoa(i)
		cfg, err := w.Suggest(id)
		if err != nil {
			t.Fatal(err)
		}
		x, _ := hone.Number(cfg["x"])
		r := &hone.Result{TrialID: id, Metrics: map[string]any{"f1": x, "f2": 1 - x}, Done: true}
		w.OnResult(id, r)
		w.OnTrialComplete(id, r, false)
		if m.Total() < last {
			t.Fatalf("after %d trials the total went down from %v to %v", i+1, last, m.Total())
		}
		last = m.Total()
	}
	if m.Calls() != 60 {
		t.Errorf("%d calls timed, want 60", m.Calls())
	}
	if m.Total() <= 0 {
		t.Errorf("60 calls took %v", m.Total())
	}
	// A call that works for 2 ms of wall time adds CPU time.
	before := m.Total()
	m.Time(func() {
		for start := time.Now(); time.Since(start) < 2*time.Millisecond; {
		}
	})
	if m.Total() <= before {
		t.Errorf("a busy call added %v", m.Total()-before)
	}
	if d := TimerOverhead(); d < 0 || d > time.Millisecond {
		t.Errorf("timer overhead %v", d)
	}
}

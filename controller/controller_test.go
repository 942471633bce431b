package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone"
)

func step(t testing.TB, c *Controller, in hone.Event) []Action {
	t.Helper()
	c.Step(in)
	return c.Ready()
}

// TestAutoFields pins docs/SEMANTICS.md §2's auto-filled result fields, including
// time and iteration counting across a restore from a checkpoint.
func TestAutoFields(t *testing.T) {
	exp := &hone.Experiment{Searcher: &listSearcher{n: 1}, Metric: "loss", Failure: hone.FailureConfig{MaxFailures: 1}}
	c, err := New(exp, hone.Resources{CPU: 1})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) int64 { return t0.Add(time.Duration(s * float64(time.Second))).UnixNano() }
	step(t, c, hone.Event{Kind: hone.EventBegin, Time: at(0)})
	tr := c.Trials()[0]
	step(t, c, hone.Event{Kind: hone.EventResult, TrialID: tr.ID, Time: at(2), Metrics: map[string]any{"loss": 1.0}, PID: 7, Hostname: "h"})
	r := tr.LastResult
	if r.TrainingIteration != 1 || r.TimeThisIter != 2 || r.TimeTotal != 2 || r.IterationsSinceRestore != 1 ||
		r.TimeSinceRestore != 2 || !r.Timestamp.Equal(t0.Add(2*time.Second)) || r.PID != 7 || r.Hostname != "h" || r.Done {
		t.Fatalf("first result: %+v", r)
	}
	idx, p, _ := c.NextCheckpointPath(tr.ID)
	step(t, c, hone.Event{Kind: hone.EventResult, TrialID: tr.ID, Time: at(5), Metrics: map[string]any{"loss": 0.5},
		Checkpoint: &hone.CheckpointRef{Index: idx, Path: p}})
	r = tr.LastResult
	if r.TrainingIteration != 2 || r.TimeThisIter != 3 || r.TimeTotal != 5 || r.Checkpoint == nil || r.Checkpoint.Iteration != 2 || r.Checkpoint.TimeTotal != 5 {
		t.Fatalf("second result: %+v (checkpoint %+v)", r, r.Checkpoint)
	}
	if !strings.HasSuffix(r.Checkpoint.Path, "/checkpoint_000000") || !strings.HasPrefix(r.Checkpoint.Path, tr.Dir) {
		t.Fatalf("checkpoint path %q not under trial dir %q", r.Checkpoint.Path, tr.Dir)
	}
	// A third result, then a crash: the retry restores iteration 2 and
	// time_total 5 from the checkpoint.
	step(t, c, hone.Event{Kind: hone.EventResult, TrialID: tr.ID, Time: at(6), Metrics: map[string]any{"loss": 0.4}})
	acts := step(t, c, hone.Event{Kind: hone.EventExited, TrialID: tr.ID, Time: at(7), Err: "boom"})
	var started *Action
	for i := range acts {
		if acts[i].Kind == ActStart {
			started = &acts[i]
		}
	}
	if started == nil || started.Iteration != 2 || started.Checkpoint == nil || started.Checkpoint.Path != p {
		t.Fatalf("retry start: %+v", started)
	}
	step(t, c, hone.Event{Kind: hone.EventResult, TrialID: tr.ID, Time: at(10), Metrics: map[string]any{"loss": 0.3, "done": true}})
	r = tr.LastResult
	if r.TrainingIteration != 3 || r.TimeThisIter != 3 || r.TimeTotal != 8 || r.IterationsSinceRestore != 1 || r.TimeSinceRestore != 3 || !r.Done {
		t.Fatalf("result after restore: %+v", r)
	}
	if got, _ := r.Value(hone.FieldTimeTotal); got != 8 {
		t.Fatalf("Value(time_total_s) = %v", got)
	}
}

// TestTrialDirName pins the trial directory layout of docs/SEMANTICS.md §2.
func TestTrialDirName(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	got := trialDirName("my trainable!", "0a1b2c3d", 3, "3_lr=0.01,model/act=relu", at)
	want := "my_trainable_0a1b2c3d_3_lr=0.01,model_act=relu_2026-03-04_05-06-07"
	if got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	long := trialDirName(strings.Repeat("t", 200), "0a1b2c3d", 12345, "12345_"+strings.Repeat("k=v,", 100), at)
	if len(long) > 135 || strings.ContainsAny(long, " /!") {
		t.Fatalf("long name %q (%d chars)", long, len(long))
	}
}

// TestValidation: bad experiment settings are errors naming the field.
func TestValidation(t *testing.T) {
	cases := []struct {
		exp  hone.Experiment
		want string
	}{
		{hone.Experiment{Searcher: &listSearcher{}, Checkpoint: hone.CheckpointConfig{NumToKeep: -1}}, "checkpoint.num_to_keep = -1"},
		{hone.Experiment{Searcher: &listSearcher{}, Mode: "maximize", Metric: "x"}, `mode = "maximize": allowed values are "min" and "max"`},
		{hone.Experiment{}, "searcher is required"},
		{hone.Experiment{Searcher: &listSearcher{}, Failure: hone.FailureConfig{MaxFailures: -2}}, "failure.max_failures = -2"},
		{hone.Experiment{Searcher: &listSearcher{}, TrialTimeout: -time.Second}, "trial_timeout = -1s: must be >= 0"},
		{hone.Experiment{Searcher: &listSearcher{}, ReportTimeout: -time.Minute}, "report_timeout = -1m0s: must be >= 0"},
	}
	for _, c := range cases {
		_, err := New(&c.exp, hone.Resources{CPU: 1})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
}

// TestResourcePool pins the resource arithmetic: CPU, GPU, memory and
// custom resources must all fit; a pool without memory set does not limit
// memory.
func TestResourcePool(t *testing.T) {
	pool := hone.Resources{CPU: 4, GPU: 1, Memory: 8 << 30, Custom: map[string]float64{"tpu": 2}}
	cases := []struct {
		need hone.Resources
		want bool
	}{
		{hone.Resources{CPU: 4}, true},
		{hone.Resources{CPU: 4.5}, false},
		{hone.Resources{CPU: 1, GPU: 0.5}, true},
		{hone.Resources{CPU: 1, GPU: 2}, false},
		{hone.Resources{Memory: 9 << 30}, false},
		{hone.Resources{Custom: map[string]float64{"tpu": 2}}, true},
		{hone.Resources{Custom: map[string]float64{"tpu": 3}}, false},
		{hone.Resources{Custom: map[string]float64{"fpga": 1}}, false},
	}
	for i, c := range cases {
		if got := fits(c.need, pool); got != c.want {
			t.Errorf("case %d: fits(%s) = %v, want %v", i, c.need, got, c.want)
		}
	}
	if !fits(hone.Resources{Memory: 1 << 40}, hone.Resources{CPU: 1}) {
		t.Error("a pool without memory limited memory")
	}
	used := add(hone.Resources{CPU: 1, GPU: 0.5, Custom: map[string]float64{"tpu": 1}}, hone.Resources{CPU: 2, Custom: map[string]float64{"tpu": 1}})
	if fits(add(used, hone.Resources{Custom: map[string]float64{"tpu": 1}}), pool) {
		t.Error("three tpus fit in a pool of two")
	}
	back := sub(used, hone.Resources{CPU: 2, Custom: map[string]float64{"tpu": 1}})
	if back.CPU != 1 || back.GPU != 0.5 || back.Custom["tpu"] != 1 {
		t.Errorf("sub: %+v", back)
	}
}

// TestGPUTrialsShareThePool runs the controller with GPU trials: two trials
// of one GPU each on a one-GPU pool run one after the other.
func TestGPUTrialsShareThePool(t *testing.T) {
	exp := &hone.Experiment{Searcher: &listSearcher{n: 2}, Resources: hone.Resources{CPU: 1, GPU: 1}}
	c, err := New(exp, hone.Resources{CPU: 8, GPU: 1})
	if err != nil {
		t.Fatal(err)
	}
	step(t, c, hone.Event{Kind: hone.EventBegin, Time: 1})
	if c.Alive() != 1 {
		t.Fatalf("%d trials alive on one GPU, want 1", c.Alive())
	}
	first := c.Trials()[0]
	step(t, c, hone.Event{Kind: hone.EventExited, TrialID: first.ID, Time: 2})
	if c.Alive() != 1 || c.Trials()[1].Status != hone.StatusRunning {
		t.Fatalf("second trial did not start after the first freed the GPU")
	}
}

// TestGPUsHandedOut: the controller, the one ledger of the pool, gives
// each started trial the lowest free GPUs of the pool by index, and a
// trial's exit frees them for the next.
func TestGPUsHandedOut(t *testing.T) {
	exp := &hone.Experiment{Searcher: &listSearcher{n: 4}, Resources: hone.Resources{CPU: 1, GPU: 1}}
	c, err := New(exp, hone.Resources{CPU: 8, GPU: 3})
	if err != nil {
		t.Fatal(err)
	}
	gpus := map[string][]int{}
	record := func(acts []Action) {
		for _, a := range acts {
			if a.Kind == ActStart {
				gpus[a.Trial.ID] = a.GPUs
			}
		}
	}
	record(step(t, c, hone.Event{Kind: hone.EventBegin, Time: 1}))
	tr := c.Trials()
	if len(gpus) != 3 {
		t.Fatalf("%d trials started on 3 GPUs, want 3", len(gpus))
	}
	for i := range 3 {
		if g := gpus[tr[i].ID]; len(g) != 1 || g[0] != i {
			t.Errorf("trial %d got GPUs %v, want [%d]", i, g, i)
		}
	}
	record(step(t, c, hone.Event{Kind: hone.EventExited, TrialID: tr[1].ID, Time: 2}))
	if g := gpus[c.Trials()[3].ID]; len(g) != 1 || g[0] != 1 {
		t.Errorf("the fourth trial got GPUs %v, want [1], freed by the second", g)
	}
	// Two trials of half a GPU share one device, as in Ray.
	exp = &hone.Experiment{Searcher: &listSearcher{n: 2}, Resources: hone.Resources{GPU: 0.5}}
	if c, err = New(exp, hone.Resources{CPU: 1, GPU: 1}); err != nil {
		t.Fatal(err)
	}
	gpus = map[string][]int{}
	record(step(t, c, hone.Event{Kind: hone.EventBegin, Time: 1}))
	if len(gpus) != 2 {
		t.Fatalf("%d trials of half a GPU started on one GPU, want 2", len(gpus))
	}
	for id, g := range gpus {
		if len(g) != 1 || g[0] != 0 {
			t.Errorf("trial %s needing half a GPU got %v, want [0]", id, g)
		}
	}
}

// listSearcher suggests {"x": i} for i < n, then finishes.
type listSearcher struct{ n, i int }

func (s *listSearcher) Suggest(string) (hone.Config, error) {
	if s.i >= s.n {
		return nil, hone.ErrSearchDone
	}
	s.i++
	return hone.Config{"x": float64(s.i - 1)}, nil
}
func (s *listSearcher) OnResult(string, *hone.Result)              {}
func (s *listSearcher) OnTrialComplete(string, *hone.Result, bool) {}

// autoSearcher is a listSearcher that does not learn: hone.PendingAuto.
type autoSearcher struct{ listSearcher }

func (*autoSearcher) MaxPending() int { return hone.PendingAuto }

// fixedSearcher asks for a fixed pending limit.
type fixedSearcher struct {
	listSearcher
	limit int
}

func (s *fixedSearcher) MaxPending() int { return s.limit }

// TestPendingBound pins docs/SEMANTICS.md §3's bound on PENDING trials: for a
// searcher that does not learn, max(16, ceil(1.1 × the trials that can run
// at once)), the slots counted from the pool, each trial's resources and
// MaxConcurrentTrials; a searcher's own positive limit; 1 for the others;
// MaxPendingTrials overrides them all. The controller suggests up to the
// bound and no further.
func TestPendingBound(t *testing.T) {
	cpu := func(n float64) hone.Resources { return hone.Resources{CPU: n} }
	cases := []struct {
		name   string
		exp    hone.Experiment
		pool   hone.Resources
		slots  int
		bound  int
		search hone.Searcher
	}{
		{"one cpu", hone.Experiment{}, cpu(1), 1, 16, nil},
		{"15 cpus", hone.Experiment{}, cpu(15), 15, 17, nil},
		{"10 cpus: 1.1 × 10 is 11, not 12", hone.Experiment{}, cpu(10), 10, 16, nil},
		{"20 cpus", hone.Experiment{}, cpu(20), 20, 22, nil},
		{"64 cpus", hone.Experiment{}, cpu(64), 64, 71, nil},
		{"100 cpus", hone.Experiment{}, cpu(100), 100, 110, nil},
		{"half a cpu each", hone.Experiment{Resources: cpu(0.5)}, cpu(40), 80, 88, nil},
		{"concurrency caps", hone.Experiment{MaxConcurrentTrials: 30}, cpu(64), 30, 33, nil},
		{"gpus bound", hone.Experiment{Resources: hone.Resources{CPU: 1, GPU: 1}}, hone.Resources{CPU: 64, GPU: 20}, 20, 22, nil},
		{"memory bounds", hone.Experiment{Resources: hone.Resources{CPU: 1, Memory: 4 << 30}}, hone.Resources{CPU: 64, Memory: 100 << 30}, 25, 28, nil},
		{"custom resource", hone.Experiment{Resources: hone.Resources{CPU: 1, Custom: map[string]float64{"tpu": 1}}},
			hone.Resources{CPU: 64, Custom: map[string]float64{"tpu": 30}}, 30, 33, nil},
		{"nothing fits", hone.Experiment{Resources: cpu(4)}, cpu(2), 0, 16, nil},
		{"explicit override", hone.Experiment{MaxPendingTrials: 3}, cpu(64), 64, 3, nil},
		{"searcher's own limit", hone.Experiment{}, cpu(64), 64, 5, &fixedSearcher{listSearcher{n: 1000}, 5}},
		{"a learning searcher", hone.Experiment{}, cpu(64), 64, 1, &listSearcher{n: 1000}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			exp := tc.exp
			exp.Searcher = tc.search
			if exp.Searcher == nil {
				exp.Searcher = &autoSearcher{listSearcher{n: 1000}}
			}
			if got := Slots(&exp, tc.pool); got != tc.slots {
				t.Errorf("Slots = %d, want %d", got, tc.slots)
			}
			c, err := New(&exp, tc.pool)
			if tc.slots == 0 {
				// No trial fits: the experiment is refused at once.
				if err == nil || !strings.Contains(err.Error(), "no trial could ever start") {
					t.Fatalf("New with no room for a trial: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.MaxPending(); got != tc.bound {
				t.Fatalf("MaxPending = %d, want %d", got, tc.bound)
			}
			// After begin the slots are full and the bound of trials
			// waits PENDING.
			step(t, c, hone.Event{Kind: hone.EventBegin, Time: 1})
			pending := 0
			for _, tr := range c.Trials() {
				if tr.Status == hone.StatusPending {
					pending++
				}
			}
			if pending != tc.bound {
				t.Errorf("%d trials PENDING after begin (%d running), want the bound %d", pending, c.Alive(), tc.bound)
			}
		})
	}
}

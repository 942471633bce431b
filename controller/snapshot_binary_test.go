package controller

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/stopper"
)

// typedSearcher suggests max configurations with values of every type a
// snapshot keeps (int, int64, float64, string, bool, nil, lists, maps),
// each drawn from the seed and its number; its state is the number.
type typedSearcher struct {
	seed   uint64
	n, max int
}

func (s *typedSearcher) Suggest(string) (hone.Config, error) {
	if s.n >= s.max {
		return nil, hone.ErrSearchDone
	}
	r := rand.New(rand.NewPCG(s.seed, uint64(s.n)))
	s.n++
	cfg := hone.Config{"lr": r.Float64(), "layers": 1 + r.IntN(5)}
	switch r.IntN(5) {
	case 0:
		cfg["opt"] = map[string]any{"name": "adam", "betas": []any{0.9, 0.999}, "n": int64(3)}
	case 1:
		cfg["flag"], cfg["none"] = true, nil
	case 2:
		cfg["act"], cfg["widths"] = "relu", []any{16, 32.5, "x", false, nil, []any{}, math.Copysign(0, -1)}
	case 3:
		cfg["nested"] = hone.Config{"a": map[string]any{}, "big": math.MaxInt64, "small": math.MinInt64}
	}
	return cfg, nil
}
func (s *typedSearcher) OnResult(string, *hone.Result)              {}
func (s *typedSearcher) OnTrialComplete(string, *hone.Result, bool) {}
func (s *typedSearcher) MarshalState() ([]byte, error)              { return json.Marshal(s.n) }
func (s *typedSearcher) UnmarshalState(b []byte) error              { return json.Unmarshal(b, &s.n) }

// codecExp returns an experiment with a typedSearcher, per-trial limits
// (so that runs are in the deadline queue), retries, checkpoint retention
// by score, trials of half a GPU and a stopper with state.
func codecExp(seed uint64) *hone.Experiment {
	return &hone.Experiment{
		Searcher: &typedSearcher{seed: seed, max: 30}, Metric: "loss", Mode: hone.Min, Seed: seed,
		Stoppers:     []hone.Stopper{stopper.MaxIterations(9)},
		Resources:    hone.Resources{CPU: 1, GPU: 0.5},
		TrialTimeout: 40 * time.Second, ReportTimeout: 8 * time.Second,
		Failure:    hone.FailureConfig{MaxFailures: 2},
		Checkpoint: hone.CheckpointConfig{NumToKeep: 2, ScoreAttribute: "acc"},
	}
}

var codecPool = hone.Resources{CPU: 3, GPU: 2}

// codecMetrics returns a result's metrics: the loss (NaN or infinite now
// and then) and values of the other types.
func codecMetrics(r *rand.Rand, iter int) map[string]any {
	loss := 1/float64(iter) + 0.1*r.Float64()
	switch r.IntN(12) {
	case 0:
		loss = math.NaN()
	case 1:
		loss = math.Inf(1)
	case 2:
		loss = math.Inf(-1)
	}
	m := map[string]any{"loss": loss, "acc": 1 - loss, "steps": iter * 10}
	switch r.IntN(4) {
	case 0:
		m["note"], m["ok"], m["none"] = "x\x00y", true, nil
	case 1:
		m["hist"], m["big"] = []any{1, 2.5, "x", map[string]any{"k": []any{}}}, int64(1)<<40
	case 2:
		m["nested"] = map[string]any{"a": 1, "b": []any{false}}
	}
	return m
}

// A codecRun drives a controller (and, once there is one, a twin fed the
// same inputs) with a seeded sequence of trial events, as trial processes
// would: results with checkpoints, saves, exits, crashes, failures the
// runner reports, ticks long enough for the per-trial limits, pauses,
// interrupts and resumes.
type codecRun struct {
	t     testing.TB
	c, b  *Controller // b is the twin, or nil
	rng   *rand.Rand
	now   time.Time
	procs map[string]*codecProc
	steps int

	resumes int
}

type codecProc struct{ phase, iter int }

// Phases of a simulated trial process.
const (
	pComputing = iota
	pWaiting
	pSaving
	pStopping
	pEnding
)

func newCodecRun(t testing.TB, seed uint64) *codecRun {
	c, err := New(codecExp(seed), codecPool)
	if err != nil {
		t.Fatal(err)
	}
	r := &codecRun{t: t, c: c, rng: rand.New(rand.NewPCG(seed, 7)),
		now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), procs: map[string]*codecProc{}}
	r.step(hone.Event{Kind: hone.EventBegin, Time: r.now.UnixNano()})
	return r
}

// step feeds in to the controller and its twin, checks that they act the
// same, and follows the actions.
func (r *codecRun) step(in hone.Event) {
	r.t.Helper()
	r.steps++
	r.c.Step(in)
	acts := r.c.Ready()
	if r.b != nil {
		r.b.Step(in)
		if a, b := renderActions(acts), renderActions(r.b.Ready()); a != b {
			r.t.Fatalf("step %d (%s %s): the restored controller acts otherwise:\n%s\nwant\n%s", r.steps, in.Kind, in.TrialID, b, a)
		}
	}
	r.follow(acts)
}

func (r *codecRun) follow(acts []Action) {
	for _, a := range acts {
		switch a.Kind {
		case ActStart:
			r.procs[a.Trial.ID] = &codecProc{iter: a.Iteration}
		case ActDirect:
			p := r.procs[a.Trial.ID]
			if p == nil {
				continue
			}
			switch a.Directive {
			case hone.DirectContinue:
				p.phase = pComputing
				if p.iter >= 12 {
					p.phase = pEnding
				}
			case hone.DirectCheckpoint:
				p.phase = pSaving
			case hone.DirectStop:
				p.phase = pStopping
			}
		}
	}
}

func (r *codecRun) at(max time.Duration) int64 {
	r.now = r.now.Add(time.Millisecond + time.Duration(r.rng.Int64N(int64(max))))
	return r.now.UnixNano()
}

// event makes the next input, or says there is none.
func (r *codecRun) event() bool {
	var ids []string
	for id, p := range r.procs {
		if p.phase != pWaiting {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	unfinished := slices.ContainsFunc(r.c.Trials(), func(t *hone.Trial) bool { return !t.Status.Finished() })
	switch {
	case len(ids) == 0 && r.c.Stopping() && len(r.procs) == 0 && r.c.Alive() == 0 && unfinished && r.resumes < 3:
		r.resumes++
		r.now = r.now.Add(time.Hour)
		r.step(hone.Event{Kind: hone.EventResume, Time: r.now.UnixNano(), Resume: &hone.ResumeFlags{Unfinished: true, Errored: r.rng.IntN(2) == 0}})
		return true
	case len(ids) == 0 && r.c.Done():
		return false
	case len(ids) == 0 || r.rng.IntN(30) == 0:
		r.step(hone.Event{Kind: hone.EventTick, Time: r.at(12 * time.Second)})
		return true
	case !r.c.Stopping() && r.rng.IntN(150) == 0:
		r.step(hone.Event{Kind: hone.EventInterrupt, Time: r.at(time.Second)})
		return true
	}
	id := ids[r.rng.IntN(len(ids))]
	p := r.procs[id]
	in := hone.Event{TrialID: id, Time: r.at(3 * time.Second)}
	switch {
	case r.rng.IntN(100) == 0:
		in.Kind, in.Err = hone.EventTrialFailed, "disk full"
	case p.phase == pComputing && r.rng.IntN(50) == 0:
		in.Kind, in.Err = hone.EventExited, "crashed"
		delete(r.procs, id)
	case p.phase == pComputing:
		p.iter++
		in.Kind, in.Metrics, in.Done = hone.EventResult, codecMetrics(r.rng, p.iter), p.iter >= 12
		in.PID, in.Hostname = 100+p.iter, []string{"", "node-a", "node-b"}[r.rng.IntN(3)]
		if r.rng.IntN(2) == 0 {
			i, path, _ := r.c.NextCheckpointPath(id)
			in.Checkpoint = &hone.CheckpointRef{Index: i, Path: path}
		}
		p.phase = pWaiting
	case p.phase == pSaving:
		in.Kind = hone.EventSaved
		if r.rng.IntN(8) > 0 {
			i, path, _ := r.c.NextCheckpointPath(id)
			in.Checkpoint = &hone.CheckpointRef{Index: i, Path: path}
		}
		p.phase = pWaiting
	default:
		in.Kind = hone.EventExited
		delete(r.procs, id)
	}
	r.step(in)
	return true
}

// pause asks a running trial to pause, as a scheduler may between inputs.
func (r *codecRun) pause() {
	for _, t := range r.c.Trials() {
		if t.Status == hone.StatusRunning && r.rng.IntN(3) == 0 {
			r.c.ctl().PauseTrial(t, r.rng.IntN(2) == 0)
			r.follow(r.c.Ready())
			return
		}
	}
}

func renderActions(acts []Action) string {
	var b strings.Builder
	for _, a := range acts {
		fmt.Fprintf(&b, "%d", a.Kind)
		if a.Trial != nil {
			fmt.Fprintf(&b, " trial=%s %s cfg=%v", a.Trial.ID, a.Trial.Status, a.Trial.Config)
		}
		if a.Record != nil {
			j, _ := json.Marshal(a.Record)
			fmt.Fprintf(&b, " record=%s", j)
		}
		fmt.Fprintf(&b, " dir=%s it=%d gpus=%v note=%d err=%q text=%q path=%s src=%s", a.Directive, a.Iteration, a.GPUs, a.Note, a.Err, a.Text, a.Path, a.Src)
		if a.Checkpoint != nil {
			fmt.Fprintf(&b, " cp=%+v", *a.Checkpoint)
		}
		if a.Result != nil {
			fmt.Fprintf(&b, " result=%d %v", a.Result.TrainingIteration, a.Result.Metrics)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// checkBinary checks c's binary snapshot: a controller restored from it
// has the JSON snapshot of c byte for byte and the same binary snapshot,
// and so does one restored from the JSON snapshot. It returns the
// controller restored from the binary snapshot.
func checkBinary(t *testing.T, c *Controller, mk func() *hone.Experiment) *Controller {
	t.Helper()
	js, err := c.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := c.MarshalBinaryState()
	if err != nil {
		t.Fatalf("MarshalBinaryState: %v", err)
	}
	r, err := RestoreBinary(mk(), hone.Resources{CPU: 64, GPU: 8}, bin)
	if err != nil {
		t.Fatalf("RestoreBinary of its own snapshot: %v", err)
	}
	again, err := r.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, js) {
		t.Fatalf("the JSON snapshot of the controller restored from the binary one differs:\n%s\nwant\n%s", again, js)
	}
	if b2, err := r.MarshalBinaryState(); err != nil || !bytes.Equal(b2, bin) {
		t.Fatalf("the binary snapshot of the restored controller differs (%v)", err)
	}
	kept := bytes.Clone(bin)
	rk, err := RestoreBinaryKeeping(mk(), hone.Resources{CPU: 64, GPU: 8}, kept)
	if err != nil {
		t.Fatalf("RestoreBinaryKeeping of its own snapshot: %v", err)
	}
	if again, err := rk.MarshalState(); err != nil || !bytes.Equal(again, js) {
		t.Fatalf("the JSON snapshot of the controller restored keeping the binary one differs (%v)", err)
	}
	rj, err := Restore(mk(), hone.Resources{CPU: 64, GPU: 8}, js)
	if err != nil {
		t.Fatal(err)
	}
	if b2, err := rj.MarshalBinaryState(); err != nil || !bytes.Equal(b2, bin) {
		t.Fatalf("the binary snapshot of the controller restored from JSON differs (%v)", err)
	}
	return r
}

// TestBinaryRoundTrip: for controllers in many states, the binary
// snapshot restores to a controller with the same snapshots (JSON and
// binary), equal checkpoints shared, saves in flight as unresolved
// futures, metrics and configurations with their types; and the restored
// controller acts as the original on the inputs that follow.
func TestBinaryRoundTrip(t *testing.T) {
	t.Run("snapRun", func(t *testing.T) {
		a := snapRun(t, snapExp(t, 3))
		b := checkBinary(t, a, func() *hone.Experiment { return snapExp(t, 3) })
		ta, tb := a.Trials()[0], b.Trials()[0]
		if tb.Saving == nil || tb.Saving.Done() {
			t.Fatal("the save in flight was not restored as an unresolved future")
		}
		if tb.Checkpoint != tb.RestoreFrom || tb.Checkpoint != tb.LastResult.Checkpoint || tb.Checkpoint != b.Manager(tb.ID).Latest() {
			t.Fatal("equal checkpoints are not one pointer after a restore")
		}
		m := tb.LastResult.Metrics
		if _, ok := m["steps"].(int); !ok || !math.IsNaN(m["odd"].(float64)) || m["tag"] != "x" {
			t.Fatalf("metrics %#v", m)
		}
		if _, ok := tb.Config["layers"].(int); !ok {
			t.Fatalf("config %#v", tb.Config)
		}
		next := hone.Event{Kind: hone.EventSaved, TrialID: ta.ID, Time: time.Date(2026, 1, 1, 0, 0, 3, 0, time.UTC).UnixNano()}
		if ra, rb := renderActions(step(t, a, next)), renderActions(step(t, b, next)); ra != rb {
			t.Fatalf("after the save:\n%s\nwant\n%s", rb, ra)
		}
	})
	t.Run("finished", func(t *testing.T) {
		c, mk := finished(t, 50)
		checkBinary(t, c, mk)
	})
	t.Run("fresh", func(t *testing.T) {
		c, err := New(snapExp(t, 5), hone.Resources{CPU: 2})
		if err != nil {
			t.Fatal(err)
		}
		checkBinary(t, c, func() *hone.Experiment { return snapExp(t, 5) })
	})

	// Seeded runs, with a snapshot after several numbers of events; the
	// restored controller then runs as the original's twin.
	seen := map[string]bool{}
	for seed := range uint64(8) {
		for _, before := range []int{1, 15, 40, 90, 160} {
			r := newCodecRun(t, seed)
			for range before {
				if r.rng.IntN(10) == 0 {
					r.pause()
				}
				if !r.event() {
					break
				}
			}
			// Half the snapshots wait for a save in flight.
			for k := 0; seed%2 == 0 && k < 100 && !saving(r.c); k++ {
				if !r.event() {
					break
				}
			}
			note(seen, r.c)
			mk := func() *hone.Experiment { return codecExp(seed) }
			r.b = checkBinary(t, r.c, mk)
			for range 150 {
				if !r.event() {
					break
				}
			}
			checkBinary(t, r.b, mk)
			if a, b := mustJSON(t, r.c), mustJSON(t, r.b); !bytes.Equal(a, b) {
				t.Fatalf("seed %d: at the end the restored controller's state differs:\n%s\nwant\n%s", seed, b, a)
			}
		}
	}
	// The runs reached the states the snapshot must carry.
	for _, want := range []string{"running", "paused", "pending", "saving", "save in flight", "pins", "gpus",
		"watched", "manager", "nan", "inf", "int metric", "other metric", "failures", "stopping", "error"} {
		if !seen[want] {
			t.Errorf("no snapshot was taken with %s", want)
		}
	}
}

func mustJSON(t *testing.T, c *Controller) []byte {
	t.Helper()
	b, err := c.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// saving reports whether a trial of c has a save in flight.
func saving(c *Controller) bool {
	return slices.ContainsFunc(c.states, func(s *tstate) bool { return s.life == lifeSaving && s.t.Saving != nil })
}

// note records what c's state holds that a snapshot must carry.
func note(seen map[string]bool, c *Controller) {
	seen["pins"] = seen["pins"] || len(c.pins) > 0
	seen["stopping"] = seen["stopping"] || c.stopping
	for i, t := range c.trials {
		s := c.states[i]
		seen[strings.ToLower(string(t.Status))] = true
		seen["saving"] = seen["saving"] || s.life == lifeSaving
		seen["save in flight"] = seen["save in flight"] || t.Saving != nil
		seen["failures"] = seen["failures"] || t.Failures > 0
		seen["manager"] = seen["manager"] || s.mgr != nil && len(s.mgr.entries) > 1
		if s.run != nil {
			seen["gpus"] = seen["gpus"] || len(s.run.gpus) > 0
			seen["watched"] = seen["watched"] || s.run.dlIndex >= 0
		}
		if t.LastResult != nil {
			for _, v := range t.LastResult.Metrics {
				switch v := v.(type) {
				case float64:
					seen["nan"] = seen["nan"] || math.IsNaN(v)
					seen["inf"] = seen["inf"] || math.IsInf(v, 0)
				case int:
					seen["int metric"] = true
				default:
					seen["other metric"] = true
				}
			}
		}
	}
}

// binarySnap returns a controller in the state snapRun makes and its
// binary snapshot.
func binarySnap(t *testing.T) (*Controller, []byte) {
	t.Helper()
	c := snapRun(t, snapExp(t, 3))
	data, err := c.MarshalBinaryState()
	if err != nil {
		t.Fatal(err)
	}
	return c, data
}

// TestBinaryRefusals: a binary snapshot of another experiment, of another
// format version, not binary, truncated anywhere, with bytes after its
// end, or whose state Restore would refuse is refused with an error
// saying so, and never with a panic.
func TestBinaryRefusals(t *testing.T) {
	_, data := binarySnap(t)
	version := len(binaryMagic) // the version's byte
	edit := func(i int, b byte) []byte {
		d := slices.Clone(data)
		d[i] = b
		return d
	}
	otherMetric := snapExp(t, 3)
	otherMetric.Metric = "acc"
	otherMode := snapExp(t, 3)
	otherMode.Mode = hone.Max
	jsonData, err := snapRun(t, snapExp(t, 3)).MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		exp  *hone.Experiment
		data []byte
		want string
	}{
		{"seed", snapExp(t, 4), data, `taken with configuration {"seed":3,"objectives":[{"metric":"loss","mode":"min"}]}, this controller is configured {"seed":4,`},
		{"metric", otherMetric, data, `"metric":"acc"`},
		{"mode", otherMode, data, `"mode":"max"`},
		{"version", nil, edit(version, binaryVersion+1), "binary form version 2, this hone reads version 1"},
		{"magic", nil, edit(0, 'x'), "not the binary form"},
		{"json", nil, jsonData, "JSON? that is Restore's"},
		{"empty", nil, nil, "not the binary form"},
		{"trailing", nil, append(slices.Clone(data), 0), "1 bytes after the last trial"},
		{"stoppers", func() *hone.Experiment { e := snapExp(t, 3); e.Stoppers = nil; return e }(), data, "stoppers"},
		{"stopper config", func() *hone.Experiment {
			e := snapExp(t, 3)
			e.Stoppers = []hone.Stopper{stopper.MaxIterations(6)}
			return e
		}(), data, "max_iterations"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exp := tc.exp
			if exp == nil {
				exp = snapExp(t, 3)
			}
			_, err := RestoreBinary(exp, hone.Resources{CPU: 2}, tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
		})
	}

	t.Run("truncated", func(t *testing.T) {
		for n := range len(data) {
			_, err := RestoreBinary(snapExp(t, 3), hone.Resources{CPU: 2}, data[:n])
			if err == nil {
				t.Fatalf("the first %d of %d bytes restored", n, len(data))
			}
			if !strings.HasPrefix(err.Error(), "controller state: ") {
				t.Fatalf("the first %d bytes: %v", n, err)
			}
		}
	})

	// The checks Restore makes of a state apply to the binary form: a
	// controller whose state is made wrong writes a snapshot that does not
	// restore.
	for _, tc := range []struct {
		name string
		bad  func(c *Controller)
		want string
	}{
		{"life", func(c *Controller) { c.states[0].life = 42 }, "run state 42"},
		{"decision", func(c *Controller) { c.states[0].next = 9 }, "queued decision 9"},
		{"status", func(c *Controller) { c.trials[0].Status = "DONE" }, `status "DONE"`},
		{"no id", func(c *Controller) { c.trials[0].ID = "" }, "no id"},
		{"duplicate", func(c *Controller) { c.trials[1].ID = c.trials[0].ID }, "appears twice"},
		{"index", func(c *Controller) { c.trials[1].Index = 0 }, "has index 0 after index 0"},
		{"live run", func(c *Controller) { c.states[1].run = nil }, "without its run state"},
		{"pins", func(c *Controller) {
			for p := range c.pins {
				c.pins[p] = -1
			}
		}, "pinned -1 times"},
		{"settings", func(c *Controller) { c.exp.Failure.MaxFailures = -5 }, "max_failures"},
		{"pool", func(c *Controller) { c.pool.CPU = -1 }, "resource pool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := binarySnap(t)
			tc.bad(c)
			bad, err := c.MarshalBinaryState()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := RestoreBinary(snapExp(t, 3), hone.Resources{CPU: 2}, bad); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
		})
	}

	// Taking a snapshot: what MarshalState refuses, MarshalBinaryState
	// refuses.
	noState := snapExp(t, 3)
	noState.Searcher = &listSearcher{n: 4}
	if _, err := snapRun(t, noState).MarshalBinaryState(); err == nil || !strings.Contains(err.Error(), "does not implement hone.Stateful") {
		t.Fatalf("a searcher without state: %v", err)
	}
	u := snapRun(t, snapExp(t, 3))
	u.Step(hone.Event{Kind: hone.EventTick, Time: time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC).UnixNano()})
	u.logf("unread")
	if _, err := u.MarshalBinaryState(); err == nil || !strings.Contains(err.Error(), "unread") {
		t.Fatalf("unread actions: %v", err)
	}
	for _, bad := range []any{math.NaN(), []any{math.Inf(1)}, make(chan int), float32(1)} {
		c := snapRun(t, snapExp(t, 3))
		c.trials[0].Config["bad"] = bad
		_, errJ := c.MarshalState()
		_, errB := c.MarshalBinaryState()
		if errJ == nil || errB == nil {
			t.Fatalf("a configuration value %#v: JSON %v, binary %v", bad, errJ, errB)
		}
		delete(c.trials[0].Config, "bad")
		c.trials[0].LastResult.Metrics["bad"] = []any{bad}
		_, errJ = c.MarshalState()
		_, errB = c.MarshalBinaryState()
		if errJ == nil || errB == nil || !strings.Contains(errB.Error(), `metric "bad"`) {
			t.Fatalf("a metric %#v: JSON %v, binary %v", []any{bad}, errJ, errB)
		}
	}
}

// TestBinaryTimes: times, the zero time and those far from the
// snapshot's Now included, read back exactly.
func TestBinaryTimes(t *testing.T) {
	for _, base := range []int64{0, 1767225600000000000, math.MinInt64, math.MaxInt64} {
		for _, n := range []int64{0, 1, -1, 1767225600000000000, math.MinInt64, math.MaxInt64, math.MinInt64 + 1, base ^ math.MinInt64} {
			e := &encoder{base: base}
			e.time(time.Unix(0, n))
			e.time(time.Time{})
			d := &decoder{s: string(e.b), base: base}
			if got := d.time(); got.t.UnixNano() != n || got.t.IsZero() {
				t.Errorf("base %d: time %d read as %v", base, n, got.t)
			}
			if got := d.time(); !got.t.IsZero() || d.err != nil || d.i != len(d.s) {
				t.Errorf("base %d: the zero time read as %v (%v)", base, got.t, d.err)
			}
		}
	}
}

// TestBinaryCoversState fails when a struct the snapshot saves gains or
// loses a field: the binary form (snapshot_binary.go) must then follow,
// with a new binaryVersion.
func TestBinaryCoversState(t *testing.T) {
	for _, tc := range []struct {
		v      any
		fields string
	}{
		{ctlState{}, "Settings IDRng SchedRng SpareID Now LastSeen Began SessionStart Spent EndSent Used GPUFree Live NPending NPaused SearchDone SearchFailed Stopping StopReason BudgetUsed Interrupted MetricSeen Fatal Pins Trials Scheduler Searcher Stoppers"},
		{trialState{}, "ID Index Config Tag Dir Status Resources LastResult Checkpoint RestoreFrom Failures Error Saving Life Next Interrupt WarnedMetric WarnedScratch ExplicitPin RestartedSincePin Manager Run"},
		{managerState{}, "Entries Next"},
		{entryState{}, "Checkpoint Score Seq"},
		{runSnap{}, "GPUs Iter SinceIter TimeTotal LastTime RestoredAt SchedFail StartedAt LastReport Deadline Watched"},
		{checkpoint{}, "TrialID Index Path Iteration TimeTotal cp"},
		{resultState{}, "TrialID Metrics TrainingIteration TimeThisIter TimeTotal TimeSinceRestore IterationsSinceRestore Timestamp Done PID Hostname Checkpoint values"},
		{resources{}, "CPU GPU Memory Custom"},
		{hone.Settings{}, "Pool Resources MaxConcurrentTrials MaxPendingTrials Failure TrialTimeout ReportTimeout StartsAnnounced SpareIDs"},
		{hone.Resources{}, "CPU GPU Memory Custom"},
		{hone.FailureConfig{}, "MaxFailures FailFast"},
		{snapConfig{}, "Seed Objectives"},
		{objConfig{}, "Metric Mode"},
	} {
		typ := reflect.TypeOf(tc.v)
		var got []string
		for i := range typ.NumField() {
			got = append(got, typ.Field(i).Name)
		}
		if strings.Join(got, " ") != tc.fields {
			t.Errorf("%s has the fields %s; the binary form writes %s: update it and binaryVersion", typ, strings.Join(got, " "), tc.fields)
		}
	}
}

// FuzzRestoreBinary: RestoreBinary of any bytes returns a controller or
// an error, never panics; a controller it returns writes both snapshots,
// and its binary snapshot restores to the same one. The seeds are
// snapshots of snapRun's experiment and of a seeded run of codecExp's;
// each input is restored under both experiments.
func FuzzRestoreBinary(f *testing.F) {
	add := func(c *Controller) {
		b, err := c.MarshalBinaryState()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	add(snapRun(f, snapExp(f, 3)))
	c, err := New(snapExp(f, 3), hone.Resources{CPU: 2})
	if err != nil {
		f.Fatal(err)
	}
	add(c)
	r := newCodecRun(f, 1)
	for _, n := range []int{10, 40, 80} {
		for r.steps < n && r.event() {
		}
		add(r.c)
	}
	exps := []func(testing.TB) *hone.Experiment{
		func(t testing.TB) *hone.Experiment { return snapExp(t, 3) },
		func(testing.TB) *hone.Experiment { return codecExp(1) },
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, exp := range exps {
			c, err := RestoreBinary(exp(t), codecPool, data)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "controller state: ") {
					t.Fatalf("error %v", err)
				}
				continue
			}
			if _, err := c.MarshalState(); err != nil {
				t.Fatalf("MarshalState of a restored controller: %v", err)
			}
			b1, err := c.MarshalBinaryState()
			if err != nil {
				t.Fatalf("MarshalBinaryState of a restored controller: %v", err)
			}
			c2, err := RestoreBinary(exp(t), codecPool, b1)
			if err != nil {
				t.Fatalf("RestoreBinary of a restored controller's snapshot: %v", err)
			}
			if b2, err := c2.MarshalBinaryState(); err != nil || !bytes.Equal(b1, b2) {
				t.Fatalf("the snapshot changed on a second restore (%v)", err)
			}
		}
	})
}

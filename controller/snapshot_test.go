package controller

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/stopper"
)

// snapExp returns an experiment whose plugins all implement hone.Stateful.
func snapExp(t testing.TB, seed uint64) *hone.Experiment {
	t.Helper()
	sp, err := space.ParseYAML([]byte("lr: {loguniform: [0.001, 1.0]}\nlayers: {randint: [1, 6]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := random.New(sp, 4, nil, seed)
	if err != nil {
		t.Fatal(err)
	}
	return &hone.Experiment{Searcher: s, Metric: "loss", Mode: hone.Min, Seed: seed,
		Stoppers: []hone.Stopper{stopper.MaxIterations(5)}}
}

// snapRun returns a controller after a few inputs: trials started, one
// reported with a checkpoint and a NaN metric and an int metric, one asked
// to save.
func snapRun(t testing.TB, exp *hone.Experiment) *Controller {
	t.Helper()
	c, err := New(exp, hone.Resources{CPU: 2})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	step(t, c, hone.Event{Kind: hone.EventBegin, Time: t0.UnixNano()})
	tr := c.Trials()[0]
	i, p, _ := c.NextCheckpointPath(tr.ID)
	step(t, c, hone.Event{Kind: hone.EventResult, TrialID: tr.ID, Time: t0.Add(time.Second).UnixNano(),
		Metrics:    map[string]any{"loss": 0.5, "odd": math.NaN(), "steps": 3, "tag": "x"},
		Checkpoint: &hone.CheckpointRef{Index: i, Path: p}})
	c.ctl().PauseTrial(tr, true) // a save in flight
	c.Ready()
	if tr.Saving == nil {
		t.Fatalf("no save in flight: life %s", c.st[tr.ID].life)
	}
	return c
}

// TestSnapshotRoundTrip: a restored controller's snapshot is the same
// bytes, a save in flight survives as one, metrics keep their types, and
// the restored controller carries on as the original.
func TestSnapshotRoundTrip(t *testing.T) {
	a := snapRun(t, snapExp(t, 3))
	data, err := a.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Restore(snapExp(t, 3), hone.Resources{CPU: 1}, data)
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	again, err := b.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, again) {
		t.Fatalf("round trip:\n%s\nwant\n%s", again, data)
	}
	if b.pool.CPU != a.pool.CPU {
		t.Fatalf("pool %v, want the snapshot's %v", b.pool, a.pool)
	}
	ta, tb := a.Trials()[0], b.Trials()[0]
	if tb.Saving == nil || tb.Saving.Done() {
		t.Fatal("the save in flight was not restored as an unresolved future")
	}
	if tb.Checkpoint != tb.RestoreFrom || tb.Checkpoint != tb.LastResult.Checkpoint {
		t.Fatal("equal checkpoints are not one pointer after a restore")
	}
	m := tb.LastResult.Metrics
	if _, ok := m["steps"].(int); !ok || !math.IsNaN(m["odd"].(float64)) || m["tag"] != "x" {
		t.Fatalf("metrics %#v", m)
	}
	next := hone.Event{Kind: hone.EventSaved, TrialID: ta.ID, Time: time.Date(2026, 1, 1, 0, 0, 3, 0, time.UTC).UnixNano()}
	if ra, rb := actionsText(step(t, a, next)), actionsText(step(t, b, next)); ra != rb {
		t.Fatalf("after the save:\n%s\nwant\n%s", rb, ra)
	}
}

func actionsText(acts []Action) string {
	var b strings.Builder
	for _, a := range acts {
		b.WriteString(string(rune('0' + a.Kind)))
		if a.Trial != nil {
			b.WriteString(" " + a.Trial.ID + " " + string(a.Trial.Status))
		}
		if a.Record != nil {
			j, _ := json.Marshal(a.Record)
			b.Write(j)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestSnapshotRefusals: a snapshot of another version, kind or experiment,
// corrupt data, a plugin without state, and unread actions are refused
// with an error saying so.
func TestSnapshotRefusals(t *testing.T) {
	a := snapRun(t, snapExp(t, 3))
	data, err := a.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	// edit changes the snapshot's envelope; its configuration keeps its
	// bytes.
	edit := func(f func(env map[string]any)) []byte {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var env map[string]any
		if err := dec.Decode(&env); err != nil {
			t.Fatal(err)
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatal(err)
		}
		env["config"] = raw["config"]
		f(env)
		b, err := json.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	state := func(env map[string]any) map[string]any { return env["state"].(map[string]any) }
	trial := func(env map[string]any) map[string]any {
		return state(env)["trials"].([]any)[0].(map[string]any)
	}
	noState := snapExp(t, 3)
	noState.Searcher = &listSearcher{n: 4}
	for _, tc := range []struct {
		name string
		exp  *hone.Experiment
		data []byte
		want string
	}{
		{"version", nil, edit(func(e map[string]any) { e["version"] = 2 }), "version 2"},
		{"kind", nil, edit(func(e map[string]any) { e["kind"] = "asha" }), `"asha"`},
		{"seed", snapExp(t, 4), data, "configuration"},
		{"truncated", nil, data[:len(data)/2], "controller state"},
		{"garbage", nil, []byte("not json"), "controller state"},
		{"life", nil, edit(func(e map[string]any) { trial(e)["life"] = 42 }), "run state 42"},
		{"status", nil, edit(func(e map[string]any) { trial(e)["status"] = "DONE" }), `status "DONE"`},
		{"duplicate", nil, edit(func(e map[string]any) {
			s := state(e)
			s["trials"] = append(s["trials"].([]any), s["trials"].([]any)[0])
		}), "appears twice"},
		{"rng", nil, edit(func(e map[string]any) { state(e)["id_rng"] = "AAAA" }), "trial ids"},
		{"searcher", noState, data, "does not implement hone.Stateful"},
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
			_, err := Restore(exp, hone.Resources{CPU: 2}, tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
		})
	}

	// Taking a snapshot: a plugin without state, a stopper function, and
	// actions not yet read.
	c := snapRun(t, noState)
	if _, err := c.MarshalState(); err == nil || !strings.Contains(err.Error(), "does not implement hone.Stateful") {
		t.Fatalf("a searcher without state: %v", err)
	}
	fn := snapExp(t, 3)
	fn.Stoppers = append(fn.Stoppers, stopper.Func(func(string, *hone.Result) bool { return false }))
	if _, err := snapRun(t, fn).MarshalState(); err == nil || !strings.Contains(err.Error(), "stopper 1") {
		t.Fatalf("a stopper function: %v", err)
	}
	u := snapRun(t, snapExp(t, 3))
	u.Step(hone.Event{Kind: hone.EventTick, Time: time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC).UnixNano()})
	u.logf("unread")
	if _, err := u.MarshalState(); err == nil || !strings.Contains(err.Error(), "unread") {
		t.Fatalf("unread actions: %v", err)
	}
}

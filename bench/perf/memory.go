package perf

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/controller"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
)

// heapInUse returns the live heap after two garbage collections.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// memory measures shape 5: the heap of a controller holding n live trials
// (each RUNNING with one result), then n finished ones (TERMINATED),
// against the heap of n minimal records. The controller is driven
// directly, as the runner drives it, without an executor, journal or
// store, so the figure is the controller's alone (with its searcher and
// scheduler).
func (b *bench) memory(context.Context) error {
	n := b.cfg.Trials
	batch := min(n, startBatch)
	b.logf("memory: a controller with %d trials, started %d per step", n, batch)
	live, finished, err := b.controllerHeap(n, batch, true)
	if err != nil {
		return err
	}
	b.logf("memory: a controller with %d trials, all started in one step", n)
	liveOne, finishedOne, err := b.controllerHeap(n, n, false)
	if err != nil {
		return err
	}
	floor, err := floorHeap(n)
	if err != nil {
		return err
	}
	note := fmt.Sprintf("controller + searcher + scheduler state, the trials' configurations and last results, trials started %d per step "+
		"(a searcher gate opened before each tick); measured once (runtime.ReadMemStats after GC, before and after, divided by the trials)", batch)
	oneStep := "with all %d trials started in one step: %s B/trial; the difference is the largest step's action array, which the controller " +
		"keeps for reuse (Ready)"
	if b.want(ShapeMemory, "live") {
		b.add(Row{
			Shape: ShapeMemory, Name: fmt.Sprintf("controller heap per live trial (%d RUNNING, one result each)", n), Unit: "B/trial",
			Value: live, Samples: []float64{live},
			BaseName: "map of minimal records (id, status, config, last metrics)", Base: floor, BaseSamples: []float64{floor},
			Notes: []string{note, fmt.Sprintf(oneStep, n, formatNum(liveOne))},
		})
	}
	if b.want(ShapeMemory, "finished") {
		b.add(Row{
			Shape: ShapeMemory, Name: fmt.Sprintf("controller heap per finished trial (%d TERMINATED)", n), Unit: "B/trial",
			Value: finished, Samples: []float64{finished},
			BaseName: "map of minimal records (id, status, config, last metrics)", Base: floor, BaseSamples: []float64{floor},
			Target: atMost("≤ 4,096 B/trial", 4096),
			Notes:  []string{note, fmt.Sprintf(oneStep, n, formatNum(finishedOne))},
		})
	}
	return nil
}

// startBatch is how many trials the memory shape's controller starts per
// step.
const startBatch = 1000

// gatedSearcher lets its searcher suggest only while it has permits,
// answering ErrNotNow otherwise, so that trials are created a batch at a
// time.
type gatedSearcher struct {
	hone.Searcher
	permits int
	pending int
}

// Suggest suggests if a permit is left.
func (g *gatedSearcher) Suggest(id string) (hone.Config, error) {
	if g.permits == 0 {
		return nil, hone.ErrNotNow
	}
	cfg, err := g.Searcher.Suggest(id)
	if err == nil {
		g.permits--
	}
	return cfg, err
}

// MaxPending implements hone.PendingLimit.
func (g *gatedSearcher) MaxPending() int { return g.pending }

// controllerHeap drives a controller through n trials, all live at once,
// started batch per step, and returns its heap per trial while they are
// live and after they finished. With profile set it writes the heap
// profiles memory-live and memory-finished.
func (b *bench) controllerHeap(n, batch int, profile bool) (live, finished float64, err error) {
	sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, n, nil, seed)
	if err != nil {
		return 0, 0, err
	}
	gate := &gatedSearcher{Searcher: sr, pending: batch}
	exp := &hone.Experiment{Name: "memory", Metric: "loss", Mode: hone.Min, Searcher: gate, MaxConcurrentTrials: n, Seed: seed}
	before := heapInUse()
	ctl, err := controller.New(exp, hone.Resources{CPU: float64(n)})
	if err != nil {
		return 0, 0, err
	}
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	step := func(in hone.Event) []controller.Action {
		now = now.Add(time.Millisecond)
		in.Time = now.UnixNano()
		ctl.Step(in)
		return ctl.Ready()
	}
	var started []string
	collect := func(acts []controller.Action) {
		for _, a := range acts {
			if a.Kind == controller.ActStart {
				started = append(started, a.Trial.ID)
			}
		}
	}
	gate.permits = batch
	collect(step(hone.Event{Kind: hone.EventBegin}))
	for len(started) < n {
		before := len(started)
		gate.permits = batch
		collect(step(hone.Event{Kind: hone.EventTick}))
		if len(started) == before {
			return 0, 0, fmt.Errorf("no trial started after %d", before)
		}
	}
	gate.permits = 1 // lets the searcher say it is done
	step(hone.Event{Kind: hone.EventTick})
	for i := 0; i < len(started); i++ {
		id := started[i]
		collect(step(hone.Event{Kind: hone.EventResult, TrialID: id, Metrics: map[string]any{"loss": 1 / float64(i+1)}}))
	}
	if len(started) != n {
		return 0, 0, fmt.Errorf("%d trials started, want %d", len(started), n)
	}
	if ctl.Alive() != n {
		return 0, 0, fmt.Errorf("%d trials alive, want %d", ctl.Alive(), n)
	}
	atLive := heapInUse()
	if profile {
		if err := b.prof.heap("memory-live"); err != nil {
			return 0, 0, err
		}
	}
	for i, id := range started {
		acts := step(hone.Event{Kind: hone.EventResult, TrialID: id, Done: true, Metrics: map[string]any{"loss": 0.5 / float64(i+1)}})
		stopped := false
		for _, a := range acts {
			stopped = stopped || (a.Kind == controller.ActDirect && a.Directive == hone.DirectStop)
		}
		if !stopped {
			return 0, 0, fmt.Errorf("trial %s: no stop after its last result", id)
		}
		step(hone.Event{Kind: hone.EventExited, TrialID: id})
	}
	if !ctl.Done() {
		return 0, 0, fmt.Errorf("controller not done after every trial finished")
	}
	for _, t := range ctl.Trials() {
		if t.Status != hone.StatusTerminated {
			return 0, 0, fmt.Errorf("trial %s is %s, want TERMINATED", t.ID, t.Status)
		}
	}
	atFinished := heapInUse()
	if profile {
		if err := b.prof.heap("memory-finished"); err != nil {
			return 0, 0, err
		}
	}
	runtime.KeepAlive(ctl)
	return perTrial(atLive, before, n), perTrial(atFinished, before, n), nil
}

// floorRecordFull is a minimal record of a trial: what any controller must
// remember about it.
type floorRecordFull struct {
	id     string
	status uint8
	config map[string]any
	last   map[string]any
}

// floorHeap returns the heap per trial of a map of n minimal records with
// the same id length, configuration and last metrics as the controller's
// trials.
func floorHeap(n int) (float64, error) {
	before := heapInUse()
	recs := make(map[string]*floorRecordFull)
	for i := range n {
		id := fmt.Sprintf("%08x", uint32(i)*0x9e3779b1)
		recs[id] = &floorRecordFull{id: id, status: 1,
			config: map[string]any{"x": float64(i) / float64(n)}, last: map[string]any{"loss": 1 / float64(i+1)}}
	}
	after := heapInUse()
	if len(recs) != n {
		return 0, fmt.Errorf("floor records: %d, want %d", len(recs), n)
	}
	runtime.KeepAlive(recs)
	return perTrial(after, before, n), nil
}

// perTrial is (after − before) / n, 0 if the heap shrank.
func perTrial(after, before uint64, n int) float64 {
	if after < before {
		return 0
	}
	return float64(after-before) / float64(n)
}

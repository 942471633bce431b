package controller

import (
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/snapshot"
)

// A controller's snapshot has two forms that hold the same state:
//
//   - the JSON form (MarshalState, Restore), the readable reference:
//     versioned JSON in the envelope of internal/snapshot, of kind
//     "controller";
//   - the binary form (MarshalBinaryState, RestoreBinary), compact and
//     several times faster to write and read, for the snapshots a runner
//     writes next to the journal (see binaryMagic for its layout).
//
// The JSON form is
//
//	{"kind": "controller", "version": 1,
//	 "config": {"seed": ..., "objectives": [...]},
//	 "state": {...}}
//
// config is what is fixed for the experiment's life and must match the
// experiment a snapshot is restored under. state holds everything the
// controller's future behaviour depends on:
//
//   - its settings (Settings: pool, resources, limits, failure policy,
//     announced starts, spare ids), its random sources (PCG states), the
//     spare id, its clock (the last input's time, the session's start,
//     the time spent in earlier sessions), its flags (began, stopping and
//     why, budget used, interrupted, search done or failed, metric seen,
//     end sent), the text of the session's error, the resources in use,
//     each GPU's free share, the live, pending and paused counts, and the
//     checkpoint pins;
//   - every trial in creation order: the hone.Trial's fields (config with
//     ints and floats kept apart, last result, latest checkpoint, restore
//     point, failures, error) and the controller's private state of it
//     (run lifecycle, queued decision, interrupt, warnings, pins, its
//     checkpoint manager's entries with their scores, and the current
//     run's counters, times, deadline and GPUs);
//   - the snapshots of the scheduler, the searcher and the stoppers, each
//     its own hone.Stateful snapshot.
//
// The binary form holds the same configuration and state, field for field,
// with the plugins' snapshots as their bytes. Both forms go through the
// same two steps: gather (the controller to ctlState, the state as saved)
// on the way out and build (ctlState to a controller, with every check of
// what a snapshot could get wrong) on the way in; the binary form takes
// the trials one at a time, without a slice of them all. A controller
// restored from either form has the same state, and the same snapshots in
// both forms, as the one they were taken of.
//
// What can be derived is rebuilt rather than saved: the trial index by id,
// each manager's index by path, the queues of PENDING and PAUSED trials and
// the deadline queue. Checkpoints are saved by value and shared again on
// restore: equal checkpoints become one pointer, as they were.
//
// # When a snapshot may be taken
//
// MarshalState (and MarshalBinaryState) may be called between two Steps,
// once Ready has taken the actions of the last one: it refuses while
// actions are unread. Between Steps nothing is half done: no scheduler
// call is under way, and every decision is either carried out or queued
// in its trial's state. A save may be in flight there (a trial was sent
// DirectCheckpoint and its hone.EventSaved has not come): the snapshot
// records it as the trial's run being in state saving with a save in
// flight, and Restore (or RestoreBinary) gives the trial a new, unresolved
// hone.SaveFuture that the next hone.EventSaved (or the trial's exit, or a
// resume) resolves as it would have resolved the old one. Nothing but the
// controller holds a SaveFuture (schedulers hear of saves through
// hone.SaveListener and keep their waits as data in their own snapshots),
// so a new future is as good as the old.
//
// The session's error (Err) is saved as its text: a restored controller's
// Err has that text, not its type. A resume clears it anyway.

// stateKind and stateVersion name the JSON form's kind and version.
const (
	stateKind    = "controller"
	stateVersion = 1
)

// snapConfig identifies the experiment a snapshot belongs to.
type snapConfig struct {
	Seed       uint64      `json:"seed"`
	Objectives []objConfig `json:"objectives"`
}

type objConfig struct {
	Metric string    `json:"metric"`
	Mode   hone.Mode `json:"mode"`
}

// ctlState is the controller's state as saved.
type ctlState struct {
	Settings hone.Settings `json:"settings"`
	IDRng    []byte        `json:"id_rng"`
	SchedRng []byte        `json:"sched_rng"`
	SpareID  string        `json:"spare_id,omitempty"`

	Now          stamp         `json:"now"`
	LastSeen     stamp         `json:"last_seen"`
	Began        bool          `json:"began,omitempty"`
	SessionStart stamp         `json:"session_start"`
	Spent        time.Duration `json:"spent,omitempty"`
	EndSent      bool          `json:"end_sent,omitempty"`

	Used     resources         `json:"used"`
	GPUFree  []snapshot.Number `json:"gpu_free,omitempty"`
	Live     int               `json:"live,omitempty"`
	NPending int               `json:"n_pending,omitempty"`
	NPaused  int               `json:"n_paused,omitempty"`

	SearchDone   bool    `json:"search_done,omitempty"`
	SearchFailed bool    `json:"search_failed,omitempty"`
	Stopping     bool    `json:"stopping,omitempty"`
	StopReason   string  `json:"stop_reason,omitempty"`
	BudgetUsed   bool    `json:"budget_used,omitempty"`
	Interrupted  bool    `json:"interrupted,omitempty"`
	MetricSeen   bool    `json:"metric_seen,omitempty"`
	Fatal        *string `json:"fatal,omitempty"`

	Pins map[string]int `json:"pins,omitempty"`

	Trials []trialState `json:"trials"`

	Scheduler json.RawMessage   `json:"scheduler"`
	Searcher  json.RawMessage   `json:"searcher"`
	Stoppers  []json.RawMessage `json:"stoppers,omitempty"`
}

// trialState is one trial as saved.
type trialState struct {
	ID          string          `json:"id"`
	Index       int             `json:"index"`
	Config      snapshot.Config `json:"config"`
	Tag         string          `json:"tag"`
	Dir         string          `json:"dir"`
	Status      hone.Status     `json:"status"`
	Resources   resources       `json:"resources"`
	LastResult  *resultState    `json:"last_result,omitempty"`
	Checkpoint  *checkpoint     `json:"checkpoint,omitempty"`
	RestoreFrom *checkpoint     `json:"restore_from,omitempty"`
	Failures    int             `json:"failures,omitempty"`
	Error       string          `json:"error,omitempty"`
	Saving      bool            `json:"saving,omitempty"`

	Life              uint8 `json:"life"`
	Next              uint8 `json:"next,omitempty"`
	Interrupt         bool  `json:"interrupt,omitempty"`
	WarnedMetric      bool  `json:"warned_metric,omitempty"`
	WarnedScratch     bool  `json:"warned_scratch,omitempty"`
	ExplicitPin       bool  `json:"explicit_pin,omitempty"`
	RestartedSincePin bool  `json:"restarted_since_pin,omitempty"`

	Manager *managerState `json:"manager,omitempty"`
	Run     *runSnap      `json:"run,omitempty"`
}

type managerState struct {
	Entries []entryState `json:"entries,omitempty"`
	Next    int          `json:"next"`
}

type entryState struct {
	Checkpoint checkpoint      `json:"checkpoint"`
	Score      snapshot.Number `json:"score"`
	Seq        int             `json:"seq"`
}

type runSnap struct {
	GPUs       []int           `json:"gpus,omitempty"`
	Iter       int             `json:"iter"`
	SinceIter  int             `json:"since_iter"`
	TimeTotal  snapshot.Number `json:"time_total"`
	LastTime   stamp           `json:"last_time"`
	RestoredAt stamp           `json:"restored_at"`
	SchedFail  string          `json:"sched_fail,omitempty"`
	StartedAt  stamp           `json:"started_at"`
	LastReport stamp           `json:"last_report"`
	Deadline   stamp           `json:"deadline"`
	Watched    bool            `json:"watched,omitempty"` // in the deadline queue
}

type checkpoint struct {
	TrialID   string          `json:"trial"`
	Index     int             `json:"index"`
	Path      string          `json:"path"`
	Iteration int             `json:"iteration"`
	TimeTotal snapshot.Number `json:"time_total"`

	// cp is the restored checkpoint, when the form's reader shares equal
	// checkpoints itself (the binary form); nil otherwise.
	cp *hone.Checkpoint
}

type resultState struct {
	TrialID                string                 `json:"trial"`
	Metrics                map[string]metricValue `json:"metrics,omitempty"`
	TrainingIteration      int                    `json:"training_iteration"`
	TimeThisIter           snapshot.Number        `json:"time_this_iter"`
	TimeTotal              snapshot.Number        `json:"time_total"`
	TimeSinceRestore       snapshot.Number        `json:"time_since_restore"`
	IterationsSinceRestore int                    `json:"iterations_since_restore"`
	Timestamp              stamp                  `json:"timestamp"`
	Done                   bool                   `json:"done,omitempty"`
	PID                    int                    `json:"pid,omitempty"`
	Hostname               string                 `json:"hostname,omitempty"`
	Checkpoint             *checkpoint            `json:"checkpoint,omitempty"`

	// values are the metrics themselves: what gather takes (the
	// result's own map, not a copy), what the binary form writes and
	// reads, and what build restores. The JSON form writes and reads
	// Metrics instead (jsonMetrics, valuesOfJSON).
	values map[string]any
}

// metricValue is one user metric: a float64 (NaN and the infinities
// included) in F, anything else as {"x": value} in V, with its Go type
// kept by snapshot.Config.
type metricValue struct {
	F *snapshot.Number `json:"f,omitempty"`
	V snapshot.Config  `json:"v,omitempty"`
}

// jsonMetrics sets r.Metrics, the JSON form's, from r.values.
func (r *resultState) jsonMetrics() error {
	if len(r.values) == 0 {
		return nil
	}
	r.Metrics = make(map[string]metricValue, len(r.values))
	for k, v := range r.values {
		if f, ok := v.(float64); ok {
			n := snapshot.Number(f)
			r.Metrics[k] = metricValue{F: &n}
			continue
		}
		cfg := snapshot.Config{"x": v}
		if _, err := cfg.MarshalJSON(); err != nil {
			return fmt.Errorf("metric %q: %w", k, err)
		}
		r.Metrics[k] = metricValue{V: cfg}
	}
	return nil
}

// valuesOfJSON sets r.values from r.Metrics, the JSON form's.
func (r *resultState) valuesOfJSON() error {
	if r.Metrics == nil {
		return nil
	}
	r.values = make(map[string]any, len(r.Metrics))
	for k, v := range r.Metrics {
		switch {
		case v.F != nil:
			r.values[k] = float64(*v.F)
		case v.V != nil:
			r.values[k] = v.V["x"]
		default:
			return fmt.Errorf("metric %q has no value", k)
		}
	}
	return nil
}

// resources is hone.Resources with its floats as Numbers.
type resources struct {
	CPU    snapshot.Number            `json:"cpu"`
	GPU    snapshot.Number            `json:"gpu"`
	Memory int64                      `json:"memory,omitempty"`
	Custom map[string]snapshot.Number `json:"custom,omitempty"`
}

// stamp is a time as Unix nanoseconds, null for the zero time. It is
// read back as hone.Event.At makes times, so that a restored controller formats
// and compares them as the one it was taken from.
type stamp struct{ t time.Time }

func (s stamp) MarshalJSON() ([]byte, error) {
	if s.t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(s.t.UnixNano())
}

func (s *stamp) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		s.t = time.Time{}
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("time: %w", err)
	}
	s.t = time.Unix(0, n)
	return nil
}

func toResources(r hone.Resources) resources {
	out := resources{CPU: snapshot.Number(r.CPU), GPU: snapshot.Number(r.GPU), Memory: r.Memory}
	if r.Custom != nil {
		out.Custom = make(map[string]snapshot.Number, len(r.Custom))
		for k, v := range r.Custom {
			out.Custom[k] = snapshot.Number(v)
		}
	}
	return out
}

func (r resources) value() hone.Resources {
	out := hone.Resources{CPU: float64(r.CPU), GPU: float64(r.GPU), Memory: r.Memory}
	if r.Custom != nil {
		out.Custom = make(map[string]float64, len(r.Custom))
		for k, v := range r.Custom {
			out.Custom[k] = float64(v)
		}
	}
	return out
}

// trialParts holds what a trialState points to, for a writer that reuses
// them from one trial to the next. A nil *trialParts allocates them anew.
type trialParts struct {
	res resultState
	cps [3]checkpoint
	mgr managerState
	run runSnap
}

func (p *trialParts) result() *resultState {
	if p == nil {
		return new(resultState)
	}
	return &p.res
}

// checkpoint returns cp as saved, in the ith of the parts' checkpoints.
func (p *trialParts) checkpoint(i int, cp *hone.Checkpoint) *checkpoint {
	if cp == nil {
		return nil
	}
	s := new(checkpoint)
	if p != nil {
		s = &p.cps[i]
	}
	*s = savedCheckpoint(cp)
	return s
}

func savedCheckpoint(cp *hone.Checkpoint) checkpoint {
	return checkpoint{TrialID: cp.TrialID, Index: cp.Index, Path: cp.Path, Iteration: cp.Iteration, TimeTotal: snapshot.Number(cp.TimeTotal)}
}

func (p *trialParts) manager() *managerState {
	if p == nil {
		return new(managerState)
	}
	p.mgr.Entries = p.mgr.Entries[:0]
	return &p.mgr
}

func (p *trialParts) runSnap() *runSnap {
	if p == nil {
		return new(runSnap)
	}
	return &p.run
}

// MarshalState returns the controller's snapshot in the JSON form (see the
// comment on stateKind). It may be called between Steps once Ready has
// taken the last Step's actions; it refuses while actions are unread, and
// when the scheduler, the searcher or a stopper does not implement
// hone.Stateful.
func (c *Controller) MarshalState() ([]byte, error) {
	st, err := c.gather(true)
	if err != nil {
		return nil, err
	}
	return snapshot.Marshal(stateKind, stateVersion, c.snapConfig(), st)
}

// gather is the step both forms share on the way out: the controller's
// state as saved. With trials false it leaves Trials empty, for a caller
// that takes each trial's state itself (trialState) as it writes it.
func (c *Controller) gather(trials bool) (*ctlState, error) {
	if len(c.out) > 0 {
		return nil, fmt.Errorf("controller state: %d actions are unread: take a snapshot after Ready", len(c.out))
	}
	if c.deciding != nil {
		return nil, errors.New("controller state: a decision is under way: take a snapshot between Steps")
	}
	st := &ctlState{
		Settings: c.Settings(), SpareID: c.spareID,
		Now: stamp{c.now}, LastSeen: stamp{c.lastSeen}, Began: c.began, SessionStart: stamp{c.sessionStart},
		Spent: c.spent, EndSent: c.endSent,
		Used: toResources(c.used), GPUFree: snapshot.Numbers(c.gpuFree),
		Live: c.live, NPending: c.nPending, NPaused: c.nPaused,
		SearchDone: c.searchDone, SearchFailed: c.searchFailed, Stopping: c.stopping, StopReason: c.stopReason,
		BudgetUsed: c.budgetUsed, Interrupted: c.interrupted, MetricSeen: c.metricSeen,
	}
	if len(c.pins) > 0 {
		st.Pins = c.pins
	}
	if c.fatal != nil {
		msg := c.fatal.Error()
		st.Fatal = &msg
	}
	var err error
	if st.IDRng, err = snapshot.PCG(c.idSrc); err != nil {
		return nil, fmt.Errorf("controller state: trial ids: %w", err)
	}
	if st.SchedRng, err = snapshot.PCG(c.schedSrc); err != nil {
		return nil, fmt.Errorf("controller state: scheduler's random source: %w", err)
	}
	if trials {
		st.Trials = make([]trialState, len(c.trials))
		for i, t := range c.trials {
			if err := c.trialState(i, &st.Trials[i], nil); err != nil {
				return nil, err
			}
			if r := st.Trials[i].LastResult; r != nil {
				if err := r.jsonMetrics(); err != nil {
					return nil, fmt.Errorf("controller state: trial %s: last result: %w", t.ID, err)
				}
			}
		}
	}
	if st.Scheduler, err = pluginState("scheduler", c.sched); err != nil {
		return nil, err
	}
	if st.Searcher, err = pluginState("searcher", c.search); err != nil {
		return nil, err
	}
	for i, s := range c.exp.Stoppers {
		b, err := pluginState(fmt.Sprintf("stopper %d", i), s)
		if err != nil {
			return nil, err
		}
		st.Stoppers = append(st.Stoppers, b)
	}
	return st, nil
}

func (c *Controller) snapConfig() snapConfig {
	cfg := snapConfig{Seed: c.exp.Seed}
	for _, o := range c.objs {
		cfg.Objectives = append(cfg.Objectives, objConfig{o.Metric, o.Mode})
	}
	return cfg
}

func pluginState(what string, p any) (json.RawMessage, error) {
	s, ok := p.(hone.Stateful)
	if !ok {
		return nil, fmt.Errorf("controller state: the %s %T does not implement hone.Stateful, so its state cannot be saved", what, p)
	}
	b, err := s.MarshalState()
	if err != nil {
		return nil, fmt.Errorf("controller state: %s %T: %w", what, p, err)
	}
	return b, nil
}

func restorePlugin(what string, p any, data json.RawMessage) error {
	s, ok := p.(hone.Stateful)
	if !ok {
		return fmt.Errorf("controller state: the %s %T does not implement hone.Stateful, so it cannot be restored", what, p)
	}
	if err := s.UnmarshalState(data); err != nil {
		return fmt.Errorf("controller state: %s %T: %w", what, p, err)
	}
	return nil
}

// trialState sets *ts to the state as saved of the ith trial, with its
// parts in p. It does not check the last result's metrics (see
// checkMetrics).
func (c *Controller) trialState(i int, ts *trialState, p *trialParts) error {
	t, s := c.trials[i], c.states[i]
	if s.t != t {
		return fmt.Errorf("controller state: trial %s is not where its state is", t.ID)
	}
	*ts = trialState{
		ID: t.ID, Index: t.Index, Config: snapshot.Config(t.Config), Tag: t.Tag, Dir: t.Dir, Status: t.Status,
		Resources: toResources(t.Resources), Checkpoint: p.checkpoint(0, t.Checkpoint), RestoreFrom: p.checkpoint(1, t.RestoreFrom),
		Failures: t.Failures, Error: t.Error, Saving: t.Saving != nil,
		Life: uint8(s.life), Next: uint8(s.next), Interrupt: s.interrupt,
		WarnedMetric: s.warnedMetric, WarnedScratch: s.warnedScratch,
		ExplicitPin: s.explicitPin, RestartedSincePin: s.restartedSincePin,
	}
	if t.Saving != nil && t.Saving.Done() {
		return fmt.Errorf("controller state: trial %s: its save in flight is already resolved", t.ID)
	}
	if r := t.LastResult; r != nil {
		rs := p.result()
		*rs = resultState{
			TrialID: r.TrialID, values: r.Metrics, TrainingIteration: r.TrainingIteration,
			TimeThisIter: snapshot.Number(r.TimeThisIter), TimeTotal: snapshot.Number(r.TimeTotal),
			TimeSinceRestore: snapshot.Number(r.TimeSinceRestore), IterationsSinceRestore: r.IterationsSinceRestore,
			Timestamp: stamp{r.Timestamp}, Done: r.Done, PID: r.PID, Hostname: r.Hostname,
			Checkpoint: p.checkpoint(2, r.Checkpoint),
		}
		if len(r.Metrics) == 0 {
			rs.values = nil
		}
		ts.LastResult = rs
	}
	// A manager with nothing registered yet is the same as none (the
	// controller makes one at first need, a read of NextCheckpointPath
	// included).
	if m := s.mgr; m != nil && (len(m.entries) > 0 || m.next > 0) {
		ms := p.manager()
		ms.Next = m.next
		for _, e := range m.entries {
			ms.Entries = append(ms.Entries, entryState{Checkpoint: savedCheckpoint(e.cp), Score: snapshot.Number(e.score), Seq: e.seq})
		}
		ts.Manager = ms
	}
	if r := s.run; r != nil {
		rs := p.runSnap()
		*rs = runSnap{
			GPUs: r.gpus, Iter: r.iter, SinceIter: r.sinceIter, TimeTotal: snapshot.Number(r.timeTotal),
			LastTime: stamp{r.lastTime}, RestoredAt: stamp{r.restoredAt}, SchedFail: r.schedFail,
			StartedAt: stamp{r.startedAt}, LastReport: stamp{r.lastReport}, Deadline: stamp{r.deadline},
			Watched: r.dlIndex >= 0 && r.dlIndex < c.deadlines.Len() && c.deadlines.ts[r.dlIndex] == t,
		}
		ts.Run = rs
	}
	return nil
}

// Restore returns a controller in the state of a snapshot MarshalState
// took. exp must be the experiment the snapshot was taken under (the same
// seed and objectives; its settings are the snapshot's), with fresh
// plugins: Restore restores its scheduler, searcher and stoppers from the
// snapshot's nested ones. pool is replaced by the snapshot's settings. It
// refuses a snapshot of another version, of another experiment, or that
// does not read, with an error saying why.
func Restore(exp *hone.Experiment, pool hone.Resources, data []byte) (*Controller, error) {
	c, err := New(exp, pool)
	if err != nil {
		return nil, err
	}
	var st ctlState
	if err := snapshot.Unmarshal(data, stateKind, stateVersion, c.snapConfig(), &st); err != nil {
		return nil, err
	}
	// Equal checkpoints are one pointer again.
	shared := map[hone.Checkpoint]*hone.Checkpoint{}
	ckpt := func(s *checkpoint) *hone.Checkpoint {
		if s == nil {
			return nil
		}
		v := hone.Checkpoint{TrialID: s.TrialID, Index: s.Index, Path: s.Path, Iteration: s.Iteration, TimeTotal: float64(s.TimeTotal)}
		if p := shared[v]; p != nil {
			return p
		}
		p := &v
		shared[v] = p
		return p
	}
	i := 0
	next := func() (*trialState, error) {
		ts := &st.Trials[i]
		i++
		if r := ts.LastResult; r != nil {
			if err := r.valuesOfJSON(); err != nil {
				return nil, fmt.Errorf("controller state: trial %q: last result: %w", ts.ID, err)
			}
		}
		return ts, nil
	}
	if err := c.build(&st, len(st.Trials), next, ckpt); err != nil {
		return nil, err
	}
	return c, nil
}

// build is the step both forms share on the way in: it makes c, fresh
// from New, the controller st describes, checking what a snapshot could
// get wrong. st's trials come from next, n of them in creation order, so
// that a form may read each as build takes it (st.Trials is not read).
// ckpt turns a saved checkpoint into the restored one, the same pointer
// for equal checkpoints.
func (c *Controller) build(st *ctlState, n int, next func() (*trialState, error), ckpt func(*checkpoint) *hone.Checkpoint) error {
	if err := c.ApplySettings(st.Settings); err != nil {
		return fmt.Errorf("controller state: %w", err)
	}
	if err := snapshot.SetPCG(c.idSrc, st.IDRng); err != nil {
		return fmt.Errorf("controller state: trial ids: %w", err)
	}
	if err := snapshot.SetPCG(c.schedSrc, st.SchedRng); err != nil {
		return fmt.Errorf("controller state: scheduler's random source: %w", err)
	}
	c.spareID = st.SpareID
	c.now, c.lastSeen, c.began, c.sessionStart = st.Now.t, st.LastSeen.t, st.Began, st.SessionStart.t
	c.spent, c.endSent = st.Spent, st.EndSent
	c.used, c.gpuFree = st.Used.value(), snapshot.Floats(st.GPUFree)
	c.live, c.nPending, c.nPaused = st.Live, st.NPending, st.NPaused
	c.searchDone, c.searchFailed, c.stopping, c.stopReason = st.SearchDone, st.SearchFailed, st.Stopping, st.StopReason
	c.budgetUsed, c.interrupted, c.metricSeen = st.BudgetUsed, st.Interrupted, st.MetricSeen
	if st.Fatal != nil {
		c.fatal = errors.New(*st.Fatal)
	}
	for p, n := range st.Pins {
		if n <= 0 {
			return fmt.Errorf("controller state: checkpoint %s pinned %d times", p, n)
		}
		c.pins[p] = n
	}

	c.trials = make([]*hone.Trial, 0, n)
	c.states = make([]*tstate, 0, n)
	c.st = make(map[string]*tstate, n)
	c.deadlines.st = c.st
	a := newArena(n)
	var watched []*hone.Trial
	for range n {
		ts, err := next()
		if err != nil {
			return err
		}
		t, s, err := c.restoreTrial(ts, ckpt, a)
		if err != nil {
			return fmt.Errorf("controller state: trial %q: %w", ts.ID, err)
		}
		c.trials = append(c.trials, t)
		c.states = append(c.states, s)
		if ts.Run != nil && ts.Run.Watched {
			watched = append(watched, t)
		}
	}
	// The derived indexes: the trials by id (in a loop of their own,
	// whose inserts wait for memory together), the queues of PENDING and
	// PAUSED trials and the deadline queue.
	for i, t := range c.trials {
		if c.st[t.ID] = c.states[i]; len(c.st) != i+1 {
			return fmt.Errorf("controller state: trial %q appears twice", t.ID)
		}
		if i > 0 && c.trials[i-1].Index >= t.Index {
			return fmt.Errorf("controller state: trial %q has index %d after index %d", t.ID, t.Index, c.trials[i-1].Index)
		}
	}
	for _, t := range c.trials {
		c.queueStatus(t, t.Status)
	}
	for _, t := range watched {
		heap.Push(&c.deadlines, t)
	}

	if err := restorePlugin("scheduler", c.sched, st.Scheduler); err != nil {
		return err
	}
	if err := restorePlugin("searcher", c.search, st.Searcher); err != nil {
		return err
	}
	if len(st.Stoppers) != len(c.exp.Stoppers) {
		return fmt.Errorf("controller state: the snapshot has %d stoppers, the experiment %d", len(st.Stoppers), len(c.exp.Stoppers))
	}
	for i, s := range c.exp.Stoppers {
		if err := restorePlugin(fmt.Sprintf("stopper %d", i), s, st.Stoppers[i]); err != nil {
			return err
		}
	}
	return nil
}

// arena allocates a restore's trials and their parts in blocks rather
// than one by one. A block lives as long as any of its parts.
type arena struct {
	trials  block[hone.Trial]
	states  block[tstate]
	results block[hone.Result]
	runs    block[runState]
}

func newArena(n int) *arena {
	size := max(min(n, 1024), 1)
	return &arena{block[hone.Trial]{size: size}, block[tstate]{size: size}, block[hone.Result]{size: size}, block[runState]{size: size}}
}

// block hands out Ts from arrays of size.
type block[T any] struct {
	free []T
	size int
}

func (b *block[T]) new() *T {
	if len(b.free) == 0 {
		b.free = make([]T, b.size)
	}
	p := &b.free[0]
	b.free = b.free[1:]
	return p
}

// restoreTrial rebuilds one trial and the controller's state of it.
func (c *Controller) restoreTrial(ts *trialState, ckpt func(*checkpoint) *hone.Checkpoint, a *arena) (*hone.Trial, *tstate, error) {
	if ts.ID == "" {
		return nil, nil, errors.New("no id")
	}
	if !ts.Status.Valid() {
		return nil, nil, fmt.Errorf("status %q", ts.Status)
	}
	if runLife(ts.Life) >= numLives {
		return nil, nil, fmt.Errorf("run state %d", ts.Life)
	}
	if queuedDecision(ts.Next) > qStop {
		return nil, nil, fmt.Errorf("queued decision %d", ts.Next)
	}
	if runLife(ts.Life).alive() && ts.Run == nil {
		return nil, nil, fmt.Errorf("a live run (%s) without its run state", runLife(ts.Life))
	}
	t := a.trials.new()
	*t = hone.Trial{
		ID: ts.ID, Index: ts.Index, Tag: ts.Tag, Dir: ts.Dir, Status: ts.Status,
		Resources: ts.Resources.value(), Checkpoint: ckpt(ts.Checkpoint), RestoreFrom: ckpt(ts.RestoreFrom),
		Failures: ts.Failures, Error: ts.Error,
	}
	if ts.Config != nil {
		t.Config = hone.Config(ts.Config)
	}
	if ts.Saving {
		t.Saving = hone.NewSaveFuture(t.ID)
	}
	if r := ts.LastResult; r != nil {
		t.LastResult = a.results.new()
		*t.LastResult = hone.Result{
			TrialID: r.TrialID, Metrics: r.values, TrainingIteration: r.TrainingIteration,
			TimeThisIter: float64(r.TimeThisIter), TimeTotal: float64(r.TimeTotal),
			TimeSinceRestore: float64(r.TimeSinceRestore), IterationsSinceRestore: r.IterationsSinceRestore,
			Timestamp: r.Timestamp.t, Done: r.Done, PID: r.PID, Hostname: r.Hostname,
			Checkpoint: ckpt(r.Checkpoint),
		}
	}
	s := a.states.new()
	*s = tstate{
		t: t, life: runLife(ts.Life), next: queuedDecision(ts.Next), interrupt: ts.Interrupt,
		warnedMetric: ts.WarnedMetric, warnedScratch: ts.WarnedScratch,
		explicitPin: ts.ExplicitPin, restartedSincePin: ts.RestartedSincePin,
	}
	if ms := ts.Manager; ms != nil {
		m := c.manager(s)
		m.next = ms.Next
		if len(ms.Entries) > 0 {
			m.entries = make([]*entry, 0, len(ms.Entries))
		}
		for i := range ms.Entries {
			e := &ms.Entries[i]
			cp := ckpt(&e.Checkpoint)
			if m.Has(cp.Path) {
				return nil, nil, fmt.Errorf("checkpoint %s registered twice", cp.Path)
			}
			en := &entry{cp: cp, score: float64(e.Score), seq: e.Seq}
			m.entries = append(m.entries, en)
			if m.byPath == nil {
				m.byPath = make(map[string]*entry, len(ms.Entries))
			}
			m.byPath[cp.Path] = en
		}
	}
	if r := ts.Run; r != nil {
		s.run = a.runs.new()
		*s.run = runState{
			gpus: r.GPUs, iter: r.Iter, sinceIter: r.SinceIter, timeTotal: float64(r.TimeTotal),
			lastTime: r.LastTime.t, restoredAt: r.RestoredAt.t, schedFail: r.SchedFail,
			startedAt: r.StartedAt.t, lastReport: r.LastReport.t, deadline: r.Deadline.t, dlIndex: -1,
		}
	}
	return t, s, nil
}

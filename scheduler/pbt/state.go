package pbt

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/snapshot"
)

// stateVersion is the version of the snapshot form of PBT's state.
const stateVersion = 1

// savedConfig identifies the configuration a snapshot was taken under.
// Mutations are named by their keys; the custom explore function and an
// Explorer by whether they are set (an Explorer's state is in the
// snapshot, under its own kind).
type savedConfig struct {
	Metric               string            `json:"metric"`
	Mode                 string            `json:"mode"`
	TimeAttr             string            `json:"time_attr"`
	PerturbationInterval snapshot.Number   `json:"perturbation_interval"`
	BurnInPeriod         snapshot.Number   `json:"burn_in_period"`
	QuantileFraction     snapshot.Number   `json:"quantile_fraction"`
	ResampleProbability  snapshot.Number   `json:"resample_probability"`
	PerturbationFactors  []snapshot.Number `json:"perturbation_factors"`
	Mutations            []string          `json:"mutations"`
	Explore              bool              `json:"explore,omitempty"`
	Explorer             bool              `json:"explorer,omitempty"`
	Synch                bool              `json:"synch,omitempty"`
	LogConfig            bool              `json:"log_config"`
	RequireAttrs         bool              `json:"require_attrs"`
	Weights              []snapshot.Number `json:"weights,omitempty"`
}

// savedRef is a save PBT asked for (saveRef).
type savedRef struct {
	Seq        uint64           `json:"seq"`
	Done       bool             `json:"done,omitempty"`
	Checkpoint *hone.Checkpoint `json:"checkpoint,omitempty"`
	Err        string           `json:"err,omitempty"`
}

// savedTrial is a trial's state (trialState), trials in add order.
type savedTrial struct {
	ID              string           `json:"id"`
	OrigTag         string           `json:"orig_tag"`
	Score           *snapshot.Number `json:"score,omitempty"` // absent: no score yet
	TrainTime       snapshot.Number  `json:"train_time"`
	PerturbTime     snapshot.Number  `json:"perturb_time"`
	LastCheckpoint  *savedRef        `json:"last_checkpoint,omitempty"`
	InFlight        *savedRef        `json:"in_flight,omitempty"`
	Held            *hone.Checkpoint `json:"held,omitempty"`
	LastIter        int              `json:"last_iter"`
	Gone            bool             `json:"gone,omitempty"`
	Exploiting      bool             `json:"exploiting,omitempty"`
	WaitingOnItSave []savedWait      `json:"waits,omitempty"`
}

// savedWait is what waits on a trial's save in flight (wait).
type savedWait struct {
	Pin   bool   `json:"pin,omitempty"`
	Seq   uint64 `json:"seq,omitempty"`
	Trial string `json:"trial,omitempty"`
}

type savedState struct {
	Trials   []savedTrial    `json:"trials"`
	NextSync snapshot.Number `json:"next_sync"`
	Warned   bool            `json:"warned,omitempty"`
	SaveSeq  uint64          `json:"save_seq"`
	Stats    Stats           `json:"stats"`
	// Explorer is the Explorer's own snapshot.
	Explorer json.RawMessage `json:"explorer,omitempty"`
}

func mutationKeys(prefix string, m map[string]any) []string {
	var out []string
	for _, k := range sortedKeys(m) {
		if sub, ok := asMap(m[k]); ok {
			out = append(out, mutationKeys(prefix+k+"/", sub)...)
			continue
		}
		out = append(out, prefix+k)
	}
	return out
}

func (s *Scheduler) savedConfig() savedConfig {
	c := s.cfg
	return savedConfig{
		Metric: c.Metric, Mode: string(c.Mode), TimeAttr: c.TimeAttr,
		PerturbationInterval: snapshot.Number(c.PerturbationInterval), BurnInPeriod: snapshot.Number(c.BurnInPeriod),
		QuantileFraction: snapshot.Number(s.quantile), ResampleProbability: snapshot.Number(s.resample),
		PerturbationFactors: snapshot.Numbers(c.PerturbationFactors), Mutations: mutationKeys("", c.Mutations),
		Explore: c.Explore != nil, Explorer: c.Explorer != nil, Synch: c.Synch,
		LogConfig: s.logConfig, RequireAttrs: s.requireAttrs, Weights: snapshot.Numbers(c.Weights),
	}
}

func toSavedRef(r *saveRef) *savedRef {
	if r == nil {
		return nil
	}
	return &savedRef{Seq: r.seq, Done: r.done, Checkpoint: r.cp, Err: r.err}
}

// MarshalState implements hone.Stateful: every trial's scores, times and
// saves, the exploits and pins waiting on saves in flight, and the
// Explorer's state. The rankings are rebuilt from them on restore.
func (s *Scheduler) MarshalState() ([]byte, error) {
	st := savedState{NextSync: snapshot.Number(s.nextSync), Warned: s.warned, SaveSeq: s.saveSeq, Stats: s.stats}
	for _, id := range s.order {
		ts := s.state[id]
		t := savedTrial{ID: id, OrigTag: ts.origTag, TrainTime: snapshot.Number(ts.lastTrainTime),
			PerturbTime: snapshot.Number(ts.lastPerturbTime), LastCheckpoint: toSavedRef(ts.lastCheckpoint),
			InFlight: toSavedRef(ts.inFlight), Held: ts.held, LastIter: ts.lastIter, Gone: ts.gone,
			Exploiting: s.exploiting[id]}
		if ts.hasScore {
			n := snapshot.Number(ts.lastScore)
			t.Score = &n
		}
		for _, w := range s.waits[id] {
			t.WaitingOnItSave = append(t.WaitingOnItSave, savedWait{Pin: w.pin, Seq: w.seq, Trial: w.trial})
		}
		st.Trials = append(st.Trials, t)
	}
	if ex := s.cfg.Explorer; ex != nil {
		sf, ok := ex.(hone.Stateful)
		if !ok {
			return nil, fmt.Errorf("pbt state: the explorer %T keeps no snapshot (hone.Stateful)", ex)
		}
		b, err := sf.MarshalState()
		if err != nil {
			return nil, fmt.Errorf("pbt state: explorer: %w", err)
		}
		st.Explorer = b
	}
	return snapshot.Marshal("pbt", stateVersion, s.savedConfig(), st)
}

// UnmarshalState implements hone.Stateful.
func (s *Scheduler) UnmarshalState(data []byte) error {
	var st savedState
	if err := snapshot.Unmarshal(data, "pbt", stateVersion, s.savedConfig(), &st); err != nil {
		return err
	}
	if ex := s.cfg.Explorer; ex != nil {
		sf, ok := ex.(hone.Stateful)
		if !ok {
			return fmt.Errorf("pbt state: the explorer %T keeps no snapshot (hone.Stateful)", ex)
		}
		if err := sf.UnmarshalState(st.Explorer); err != nil {
			return fmt.Errorf("pbt state: explorer: %w", err)
		}
	}
	state := make(map[string]*trialState, len(st.Trials))
	order := make([]string, 0, len(st.Trials))
	exploiting, waits := map[string]bool{}, map[string][]wait{}
	nanTimes := 0
	for _, t := range st.Trials {
		if state[t.ID] != nil {
			return fmt.Errorf("pbt state: trial %s twice", t.ID)
		}
		ts := &trialState{origTag: t.OrigTag, lastTrainTime: float64(t.TrainTime), lastPerturbTime: float64(t.PerturbTime),
			held: t.Held, lastIter: t.LastIter, gone: t.Gone}
		if t.Score != nil {
			ts.lastScore, ts.hasScore = float64(*t.Score), true
		}
		ts.inFlight = fromSavedRef(t.InFlight)
		if t.LastCheckpoint != nil && ts.inFlight != nil && t.LastCheckpoint.Seq == ts.inFlight.seq {
			ts.lastCheckpoint = ts.inFlight // the same save
		} else {
			ts.lastCheckpoint = fromSavedRef(t.LastCheckpoint)
		}
		if math.IsNaN(ts.lastTrainTime) {
			nanTimes++
		}
		if t.Exploiting {
			exploiting[t.ID] = true
		}
		for _, w := range t.WaitingOnItSave {
			waits[t.ID] = append(waits[t.ID], wait{pin: w.Pin, seq: w.Seq, trial: w.Trial})
		}
		state[t.ID] = ts
		order = append(order, t.ID)
	}
	s.state, s.order, s.exploiting, s.waits = state, order, exploiting, waits
	s.nextSync, s.warned, s.saveSeq, s.stats = float64(st.NextSync), st.Warned, st.SaveSeq, st.Stats
	// The rankings and the run queue are rebuilt by catchUp.
	s.rank, s.synced, s.runq, s.parked, s.gen, s.nanTimes = nil, 0, nil, nil, 0, nanTimes
	s.catchUp()
	return nil
}

func fromSavedRef(r *savedRef) *saveRef {
	if r == nil {
		return nil
	}
	return &saveRef{seq: r.Seq, done: r.Done, cp: r.Checkpoint, err: r.Err}
}

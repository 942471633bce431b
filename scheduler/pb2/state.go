package pb2

import (
	"fmt"

	"github.com/hone-tune/hone/internal/snapshot"
)

// stateVersion is the version of the snapshot form of PB2's explorer
// state, which PBT's snapshot holds.
const stateVersion = 1

// savedConfig identifies the explorer's configuration.
type savedConfig struct {
	Keys    []string          `json:"keys"`
	Lo      []snapshot.Number `json:"lo"`
	Hi      []snapshot.Number `json:"hi"`
	Log     []bool            `json:"log"`
	MaxRows int               `json:"max_rows"`
	FitRows int               `json:"fit_rows"`
	Starts  int               `json:"starts"`
}

// savedRecord is one record (a perturbation check, or a clone's start).
type savedRecord struct {
	Trial  string            `json:"trial"`
	Time   snapshot.Number   `json:"time"`
	Vals   []snapshot.Number `json:"vals"`
	Reward snapshot.Number   `json:"reward"`
}

type savedState struct {
	Rows            []savedRecord       `json:"rows"`
	MaxTime         snapshot.Number     `json:"max_time"`
	LastExploration snapshot.Number     `json:"last_exploration"`
	Current         [][]snapshot.Number `json:"current,omitempty"`
	Fallbacks       int                 `json:"fallbacks,omitempty"`
}

func (e *explorer) savedConfig() savedConfig {
	return savedConfig{e.keys, snapshot.Numbers(e.lo), snapshot.Numbers(e.hi), e.log, e.maxRows, e.fitRows, e.starts}
}

// MarshalState implements hone.Stateful: every record, and the round of
// explores in progress. The GP is fit afresh at each explore.
func (e *explorer) MarshalState() ([]byte, error) {
	st := savedState{Rows: make([]savedRecord, len(e.rows)), MaxTime: snapshot.Number(e.maxTime),
		LastExploration: snapshot.Number(e.lastExploration), Fallbacks: e.fallbacks}
	for i, r := range e.rows {
		st.Rows[i] = savedRecord{r.trial, snapshot.Number(r.time), snapshot.Numbers(r.vals), snapshot.Number(r.reward)}
	}
	for _, c := range e.current {
		st.Current = append(st.Current, snapshot.Numbers(c))
	}
	return snapshot.Marshal("pb2_explorer", stateVersion, e.savedConfig(), st)
}

// UnmarshalState implements hone.Stateful.
func (e *explorer) UnmarshalState(data []byte) error {
	var st savedState
	if err := snapshot.Unmarshal(data, "pb2_explorer", stateVersion, e.savedConfig(), &st); err != nil {
		return err
	}
	rows := make([]record, len(st.Rows))
	for i, r := range st.Rows {
		if len(r.Vals) != len(e.keys) {
			return fmt.Errorf("pb2_explorer state: a record of trial %s has %d values for %d keys", r.Trial, len(r.Vals), len(e.keys))
		}
		rows[i] = record{r.Trial, float64(r.Time), snapshot.Floats(r.Vals), float64(r.Reward)}
	}
	var current [][]float64
	for _, c := range st.Current {
		current = append(current, snapshot.Floats(c))
	}
	e.rows, e.maxTime, e.lastExploration = rows, float64(st.MaxTime), float64(st.LastExploration)
	e.current, e.fallbacks = current, st.Fallbacks
	return nil
}

package stopper

import (
	"slices"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/snapshot"
)

// plateauStateVersion is the version of the snapshot form of Plateau's
// state.
const plateauStateVersion = 1

type plateauConfig struct {
	Metric      string          `json:"metric"`
	Std         snapshot.Number `json:"std"`
	NumResults  int             `json:"num_results"`
	GracePeriod int             `json:"grace_period"`
}

type plateauTrial struct {
	ID     string            `json:"id"`
	Values []snapshot.Number `json:"values"`
}

type plateauState struct {
	Trials []plateauTrial `json:"trials,omitempty"`
}

func (p *Plateau) savedConfig() plateauConfig {
	return plateauConfig{p.Metric, snapshot.Number(p.Std), p.NumResults, p.GracePeriod}
}

// MarshalState implements hone.Stateful: the last values of every trial.
func (p *Plateau) MarshalState() ([]byte, error) {
	var st plateauState
	ids := make([]string, 0, len(p.history))
	for id := range p.history {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		st.Trials = append(st.Trials, plateauTrial{id, snapshot.Numbers(p.history[id])})
	}
	return snapshot.Marshal("plateau", plateauStateVersion, p.savedConfig(), st)
}

// UnmarshalState implements hone.Stateful.
func (p *Plateau) UnmarshalState(data []byte) error {
	var st plateauState
	if err := snapshot.Unmarshal(data, "plateau", plateauStateVersion, p.savedConfig(), &st); err != nil {
		return err
	}
	p.history = nil
	if len(st.Trials) > 0 {
		p.history = make(map[string][]float64, len(st.Trials))
	}
	for _, t := range st.Trials {
		p.history[t.ID] = snapshot.Floats(t.Values)
	}
	return nil
}

// Plateau keeps per-trial state, which a snapshot must hold.
var _ hone.Stateful = (*Plateau)(nil)

// stateless is the snapshot of a stopper that keeps no state: its
// configuration only, so that a snapshot is refused by a stopper
// configured otherwise.
const statelessVersion = 1

// MarshalState implements hone.Stateful: MaxIterations keeps no state, its
// snapshot names its limit.
func (n MaxIterations) MarshalState() ([]byte, error) {
	return snapshot.Marshal("max_iterations", statelessVersion, int(n), nil)
}

// UnmarshalState implements hone.Stateful: it checks that the snapshot is
// of a MaxIterations with the same limit.
func (n MaxIterations) UnmarshalState(data []byte) error {
	return snapshot.Unmarshal(data, "max_iterations", statelessVersion, int(n), nil)
}

type thresholdConfig struct {
	Field string          `json:"field"`
	Value snapshot.Number `json:"value"`
	Mode  hone.Mode       `json:"mode,omitempty"`
}

// MarshalState implements hone.Stateful: Threshold keeps no state, its
// snapshot names its field, value and mode.
func (s Threshold) MarshalState() ([]byte, error) {
	return snapshot.Marshal("threshold", statelessVersion, thresholdConfig{s.Field, snapshot.Number(s.Value), s.Mode}, nil)
}

// UnmarshalState implements hone.Stateful: it checks that the snapshot is
// of a Threshold configured the same.
func (s Threshold) UnmarshalState(data []byte) error {
	return snapshot.Unmarshal(data, "threshold", statelessVersion, thresholdConfig{s.Field, snapshot.Number(s.Value), s.Mode}, nil)
}

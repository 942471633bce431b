package median

import (
	"fmt"
	"slices"

	"github.com/hone-tune/hone/internal/snapshot"
)

// stateVersion is the version of the snapshot form of the scheduler's
// state.
const stateVersion = 1

// savedConfig identifies the configuration a snapshot was taken under.
type savedConfig struct {
	Metric             string            `json:"metric"`
	Mode               string            `json:"mode"`
	TimeAttr           string            `json:"time_attr"`
	GracePeriod        snapshot.Number   `json:"grace_period"`
	MinSamplesRequired int               `json:"min_samples_required"`
	MinTimeSlice       snapshot.Number   `json:"min_time_slice"`
	HardStop           bool              `json:"hard_stop"`
	Weights            []snapshot.Number `json:"weights,omitempty"`
}

type savedTrial struct {
	ID string `json:"id"`
	// Time and Score are the history's points, in report order.
	Time    []snapshot.Number `json:"time"`
	Score   []snapshot.Number `json:"score"`
	Stopped bool              `json:"stopped,omitempty"`
	// LastPause is the time of the last pause for want of samples.
	LastPause *snapshot.Number `json:"last_pause,omitempty"`
}

type savedState struct {
	// Trials are those with a history, in first-report order, then those
	// paused or stopped without one.
	Trials []savedTrial `json:"trials"`
	Warned bool         `json:"warned,omitempty"`
}

func (s *Scheduler) savedConfig() savedConfig {
	c := s.cfg
	return savedConfig{c.Metric, string(c.Mode), c.TimeAttr, snapshot.Number(c.GracePeriod),
		c.MinSamplesRequired, snapshot.Number(c.MinTimeSlice), c.HardStop, snapshot.Numbers(c.Weights)}
}

// MarshalState implements hone.Stateful.
func (s *Scheduler) MarshalState() ([]byte, error) {
	st := savedState{Warned: s.warned}
	seen := map[string]bool{}
	add := func(id string) {
		if seen[id] {
			return
		}
		seen[id] = true
		t := savedTrial{ID: id, Stopped: s.stopped[id]}
		for _, p := range s.history[id] {
			t.Time = append(t.Time, snapshot.Number(p.time))
			t.Score = append(t.Score, snapshot.Number(p.score))
		}
		if v, ok := s.lastPause[id]; ok {
			n := snapshot.Number(v)
			t.LastPause = &n
		}
		st.Trials = append(st.Trials, t)
	}
	for _, id := range s.order {
		add(id)
	}
	for _, id := range sortedIDs(s.stopped) {
		add(id)
	}
	for _, id := range sortedIDs(s.lastPause) {
		add(id)
	}
	return snapshot.Marshal("median", stateVersion, s.savedConfig(), st)
}

// UnmarshalState implements hone.Stateful.
func (s *Scheduler) UnmarshalState(data []byte) error {
	var st savedState
	if err := snapshot.Unmarshal(data, "median", stateVersion, s.savedConfig(), &st); err != nil {
		return err
	}
	s.history, s.order = map[string][]point{}, nil
	s.stopped, s.lastPause = map[string]bool{}, map[string]float64{}
	s.warned = st.Warned
	for _, t := range st.Trials {
		if len(t.Time) != len(t.Score) {
			return errBadTrial(t.ID)
		}
		if len(t.Time) > 0 {
			s.order = append(s.order, t.ID)
			h := make([]point, len(t.Time))
			for i := range h {
				h[i] = point{float64(t.Time[i]), float64(t.Score[i])}
			}
			s.history[t.ID] = h
		}
		if t.Stopped {
			s.stopped[t.ID] = true
		}
		if t.LastPause != nil {
			s.lastPause[t.ID] = float64(*t.LastPause)
		}
	}
	return nil
}

func errBadTrial(id string) error {
	return fmt.Errorf("median state: trial %s: as many times as scores are needed", id)
}

func sortedIDs[V any](m map[string]V) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

package hyperband

import (
	"fmt"
	"slices"

	"github.com/hone-tune/hone/internal/snapshot"
)

// stateVersion is the version of the snapshot form of HyperBand's state.
const stateVersion = 1

// savedConfig identifies the configuration a snapshot was taken under.
type savedConfig struct {
	Metric          string          `json:"metric"`
	Mode            string          `json:"mode"`
	TimeAttr        string          `json:"time_attr"`
	MaxT            snapshot.Number `json:"max_t"`
	ReductionFactor snapshot.Number `json:"reduction_factor"`
	StopLastTrials  bool            `json:"stop_last_trials"`
	BOHB            bool            `json:"bohb"`
}

// savedMember is a live trial of a bracket; Losses and Violation only
// with several objectives or a constraint.
type savedMember struct {
	ID        string            `json:"id"`
	Time      snapshot.Number   `json:"time"`
	Score     snapshot.Number   `json:"score"`
	Losses    []snapshot.Number `json:"losses,omitempty"`
	Violation snapshot.Number   `json:"violation,omitempty"`
}

// savedBracket is a bracket's progress; its plan follows from S and the
// configuration.
type savedBracket struct {
	S        int             `json:"s"`
	N        int             `json:"n"`
	Added    int             `json:"added"`
	R        snapshot.Number `json:"r"`
	CumulR   snapshot.Number `json:"cumul_r"`
	Halves   int             `json:"halves"`
	Live     []savedMember   `json:"live"`
	Ready    []string        `json:"ready,omitempty"`
	Progress snapshot.Number `json:"progress"`
	Members  []string        `json:"members"`
}

type savedState struct {
	// Bands holds every band's brackets in the order they were made;
	// null for a bracket skipped.
	Bands [][]*savedBracket `json:"bands"`
	// Current is the band and bracket being filled; absent before the
	// first trial.
	Current []int `json:"current,omitempty"`
	// Pausing lists the trials paused by a decision whose status may not
	// say so yet.
	Pausing []string `json:"pausing,omitempty"`
	Warned  bool     `json:"warned,omitempty"`
}

func (s *Scheduler) kind() string {
	if s.bohb {
		return "hyperband_for_bohb"
	}
	return "hyperband"
}

func (s *Scheduler) savedConfig() savedConfig {
	c := s.cfg
	return savedConfig{c.Metric, string(c.Mode), c.TimeAttr, snapshot.Number(c.MaxT),
		snapshot.Number(c.ReductionFactor), c.StopLastTrials, s.bohb}
}

func sortedSet(m map[string]bool) []string {
	var ids []string
	for id, ok := range m {
		if ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// MarshalState implements hone.Stateful: every bracket's progress and
// live trials. The fidelity advisor and the pauser, if any, are the
// searcher's, which has its own state.
func (s *Scheduler) MarshalState() ([]byte, error) {
	st := savedState{Pausing: sortedSet(s.pausing), Warned: s.warned}
	for i, band := range s.bands {
		out := make([]*savedBracket, len(band))
		for j, b := range band {
			if b == nil {
				continue
			}
			if b == s.current {
				st.Current = []int{i, j}
			}
			sb := &savedBracket{S: b.s, N: b.n, Added: b.added, R: snapshot.Number(b.r), CumulR: snapshot.Number(b.cumulR),
				Halves: b.halves, Ready: sortedSet(b.ready), Progress: snapshot.Number(b.progress),
				Members: slices.Clone(b.members), Live: make([]savedMember, len(b.live))}
			for k, m := range b.live {
				sb.Live[k] = savedMember{ID: m.id, Time: snapshot.Number(m.time), Score: snapshot.Number(m.score), Violation: snapshot.Number(m.violation)}
				for _, l := range m.losses {
					sb.Live[k].Losses = append(sb.Live[k].Losses, snapshot.Number(l))
				}
			}
			out[j] = sb
		}
		st.Bands = append(st.Bands, out)
	}
	return snapshot.Marshal(s.kind(), stateVersion, s.savedConfig(), st)
}

// UnmarshalState implements hone.Stateful.
func (s *Scheduler) UnmarshalState(data []byte) error {
	var st savedState
	if err := snapshot.Unmarshal(data, s.kind(), stateVersion, s.savedConfig(), &st); err != nil {
		return err
	}
	if len(st.Bands) == 0 {
		return fmt.Errorf("%s state: no band", s.kind())
	}
	bands := make([][]*bracket, len(st.Bands))
	of := map[string]*bracket{}
	for i, band := range st.Bands {
		if len(band) > s.sMax1 {
			return fmt.Errorf("%s state: band %d has %d brackets, at most %d", s.kind(), i, len(band), s.sMax1)
		}
		bands[i] = make([]*bracket, len(band))
		for j, sb := range band {
			if sb == nil {
				continue
			}
			if sb.S < 0 || sb.S >= s.sMax1 {
				return fmt.Errorf("%s state: bracket s = %d, want 0 to %d", s.kind(), sb.S, s.sMax1-1)
			}
			b := s.newBracket(sb.S)
			b.n, b.added, b.r, b.cumulR, b.halves = sb.N, sb.Added, float64(sb.R), float64(sb.CumulR), sb.Halves
			b.progress, b.members = float64(sb.Progress), slices.Clone(sb.Members)
			for _, id := range sb.Ready {
				b.ready[id] = true
			}
			for _, m := range sb.Live {
				mb := &member{id: m.ID, time: float64(m.Time), score: float64(m.Score), violation: float64(m.Violation)}
				for _, l := range m.Losses {
					mb.losses = append(mb.losses, float64(l))
				}
				b.live = append(b.live, mb)
				b.byID[m.ID] = mb
				of[m.ID] = b
			}
			bands[i][j] = b
		}
	}
	var current *bracket
	if c := st.Current; c != nil {
		if len(c) != 2 || c[0] < 0 || c[0] >= len(bands) || c[1] < 0 || c[1] >= len(bands[c[0]]) || bands[c[0]][c[1]] == nil {
			return fmt.Errorf("%s state: current bracket %v is not a bracket", s.kind(), c)
		}
		current = bands[c[0]][c[1]]
	}
	s.bands, s.current, s.of = bands, current, of
	s.pausing = map[string]bool{}
	for _, id := range st.Pausing {
		s.pausing[id] = true
	}
	s.warned, s.busy = st.Warned, false
	return nil
}

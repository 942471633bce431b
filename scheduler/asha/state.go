package asha

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/hone-tune/hone/internal/snapshot"
)

// stateVersion is the version of the snapshot form of ASHA's state.
const stateVersion = 1

// savedConfig identifies the configuration a snapshot was taken under.
type savedConfig struct {
	Metric          string          `json:"metric"`
	Mode            string          `json:"mode"`
	TimeAttr        string          `json:"time_attr"`
	MaxT            snapshot.Number `json:"max_t"`
	GracePeriod     snapshot.Number `json:"grace_period"`
	ReductionFactor snapshot.Number `json:"reduction_factor"`
	Brackets        int             `json:"brackets"`
	StopLastTrials  bool            `json:"stop_last_trials"`
	Promotion       string          `json:"promotion"`
	BudgetInfo      bool            `json:"budget_info"`
}

// savedScore is a trial's score recorded at a rung.
type savedScore struct {
	Trial string          `json:"trial"`
	Score snapshot.Number `json:"score"`
}

// savedPoint is a trial's result recorded at a rung with several
// objectives: its losses and its constraints' violation.
type savedPoint struct {
	Trial     string            `json:"trial"`
	Losses    []snapshot.Number `json:"losses"`
	Violation snapshot.Number   `json:"violation"`
}

// savedRung is one rung's recorded scores, by trial id, and its points
// with several objectives, in the order they were recorded (crowding
// distances order equal values by it).
type savedRung struct {
	Milestone snapshot.Number `json:"milestone"`
	Recorded  []savedScore    `json:"recorded"`
	Points    []savedPoint    `json:"points,omitempty"`
}

type savedState struct {
	// Brackets holds each bracket's rungs, highest milestone first.
	Brackets [][]savedRung `json:"brackets"`
	// Trials maps each trial ASHA follows to its bracket's index.
	Trials map[string]int `json:"trials"`
	Warned bool           `json:"warned,omitempty"`
}

func (s *Scheduler) savedConfig() savedConfig {
	c := s.cfg
	p := c.Promotion
	if p == "" {
		p = PromotePercentile
	}
	return savedConfig{c.Metric, string(c.Mode), c.TimeAttr, snapshot.Number(c.MaxT), snapshot.Number(c.GracePeriod),
		snapshot.Number(c.ReductionFactor), c.Brackets, c.StopLastTrials, string(p), c.BudgetInfo}
}

// MarshalState implements hone.Stateful: the scores (or, with several
// objectives, the losses and violations) recorded at every rung and each
// followed trial's bracket. The fidelity advisor, if any,
// is the searcher's, which has its own state.
func (s *Scheduler) MarshalState() ([]byte, error) {
	st := savedState{Trials: map[string]int{}, Warned: s.warned}
	index := map[*bracket]int{}
	for i, b := range s.brackets {
		index[b] = i
		var rungs []savedRung
		for _, g := range b.rungs {
			ids := make([]string, 0, len(g.recorded))
			for id := range g.recorded {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			r := savedRung{Milestone: snapshot.Number(g.milestone), Recorded: make([]savedScore, len(ids))}
			for j, id := range ids {
				r.Recorded[j] = savedScore{id, snapshot.Number(g.recorded[id])}
			}
			for _, p := range g.points {
				sp := savedPoint{Trial: p.id, Losses: make([]snapshot.Number, len(p.losses)), Violation: snapshot.Number(p.violation)}
				for k, l := range p.losses {
					sp.Losses[k] = snapshot.Number(l)
				}
				r.Points = append(r.Points, sp)
			}
			rungs = append(rungs, r)
		}
		st.Brackets = append(st.Brackets, rungs)
	}
	for id, b := range s.trialOf {
		st.Trials[id] = index[b]
	}
	return snapshot.Marshal("asha", stateVersion, s.savedConfig(), st)
}

// UnmarshalState implements hone.Stateful.
func (s *Scheduler) UnmarshalState(data []byte) error {
	var st savedState
	if err := snapshot.Unmarshal(data, "asha", stateVersion, s.savedConfig(), &st); err != nil {
		return err
	}
	if len(st.Brackets) != len(s.brackets) {
		return fmt.Errorf("asha state: %d brackets, this scheduler has %d", len(st.Brackets), len(s.brackets))
	}
	for i, rungs := range st.Brackets {
		b := s.brackets[i]
		if len(rungs) != len(b.rungs) {
			return fmt.Errorf("asha state: bracket %d has %d rungs, this scheduler's has %d", i, len(rungs), len(b.rungs))
		}
		for j, r := range rungs {
			g := b.rungs[j]
			if float64(r.Milestone) != g.milestone {
				return fmt.Errorf("asha state: bracket %d: milestone %v, this scheduler's is %v", i, float64(r.Milestone), g.milestone)
			}
			g.recorded, g.sorted = make(map[string]float64, len(r.Recorded)), nil
			for _, e := range r.Recorded {
				g.recorded[e.Trial] = float64(e.Score)
				if !math.IsNaN(float64(e.Score)) {
					g.sorted = append(g.sorted, float64(e.Score))
				}
			}
			sort.Float64s(g.sorted)
			g.points, g.index = nil, nil
			for _, sp := range r.Points {
				if g.has(sp.Trial) {
					return fmt.Errorf("asha state: bracket %d: trial %s recorded twice at milestone %v", i, sp.Trial, g.milestone)
				}
				p := point{losses: make([]float64, len(sp.Losses)), violation: float64(sp.Violation)}
				for k, l := range sp.Losses {
					p.losses[k] = float64(l)
				}
				if len(g.points) > 0 && len(p.losses) != len(g.points[0].losses) {
					return fmt.Errorf("asha state: bracket %d: trial %s has %d losses at milestone %v, others %d", i, sp.Trial, len(p.losses), g.milestone, len(g.points[0].losses))
				}
				g.add(sp.Trial, value{point: p, multi: true})
			}
		}
	}
	s.trialOf = make(map[string]*bracket, len(st.Trials))
	for id, i := range st.Trials {
		if i < 0 || i >= len(s.brackets) {
			return fmt.Errorf("asha state: trial %s in bracket %d of %d", id, i, len(s.brackets))
		}
		s.trialOf[id] = s.brackets[i]
	}
	s.warned = st.Warned
	return nil
}

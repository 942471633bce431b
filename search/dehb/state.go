package dehb

import (
	"fmt"
	"slices"

	"github.com/hone-tune/hone/internal/snapshot"
)

// stateVersion is the version of the snapshot form of DEHB's state.
const stateVersion = 1

// savedSchedule is the dehb scheduler's configuration.
type savedSchedule struct {
	TimeAttr        string          `json:"time_attr"`
	MaxT            snapshot.Number `json:"max_t"`
	GracePeriod     snapshot.Number `json:"grace_period"`
	ReductionFactor snapshot.Number `json:"reduction_factor"`
}

func toSavedSchedule(c Config) savedSchedule {
	return savedSchedule{c.TimeAttr, snapshot.Number(c.MaxT), snapshot.Number(c.GracePeriod), snapshot.Number(c.ReductionFactor)}
}

// savedConfig identifies the searcher's configuration: its space (by its
// parameters), its options and the schedule it is bound to (absent until
// bound).
type savedConfig struct {
	Params         []string          `json:"params"`
	Metric         string            `json:"metric"`
	Mode           string            `json:"mode"`
	NumSamples     int               `json:"num_samples"`
	Seed           uint64            `json:"seed"`
	MaxConcurrent  int               `json:"max_concurrent"`
	Points         []snapshot.Config `json:"points,omitempty"`
	MutationFactor snapshot.Number   `json:"mutation_factor"`
	CrossoverProb  snapshot.Number   `json:"crossover_prob"`
	Schedule       *savedSchedule    `json:"schedule,omitempty"`
}

type savedMember struct {
	X         []snapshot.Number `json:"x"`
	Config    snapshot.Config   `json:"config,omitempty"`
	Loss      snapshot.Number   `json:"loss"`
	Evaluated bool              `json:"evaluated,omitempty"`
	Issued    bool              `json:"issued,omitempty"`
	Trial     string            `json:"trial,omitempty"`
}

type savedBracket struct {
	ID     int   `json:"id"`
	First  int   `json:"first"`
	N      []int `json:"n"`
	Issued []int `json:"issued"`
	Done   []int `json:"done"`
	Cur    int   `json:"cur"`
	// Active says the bracket is started and not finished; a bracket
	// that is not is kept only while a job of it is in flight.
	Active bool `json:"active"`
}

type savedJob struct {
	Bracket int               `json:"bracket"`
	Rung    int               `json:"rung"`
	Level   int               `json:"level"`
	Slot    int               `json:"slot"`
	X       []snapshot.Number `json:"x"`
	From    snapshot.Number   `json:"from"`
}

type savedTrial struct {
	ID         string            `json:"id"`
	Seq        int               `json:"seq"`
	Job        *savedJob         `json:"job,omitempty"`
	Level      int               `json:"level"`
	X          []snapshot.Number `json:"x"`
	Time       snapshot.Number   `json:"time"`
	Paused     bool              `json:"paused,omitempty"`
	Dispatched bool              `json:"dispatched,omitempty"`
	Jobs       []Job             `json:"jobs,omitempty"`
}

type savedState struct {
	RNG      []byte          `json:"rng"`
	Levels   [][]savedMember `json:"levels,omitempty"`
	Parent   []int           `json:"parent,omitempty"`
	Brackets []savedBracket  `json:"brackets,omitempty"`
	Started  int             `json:"started"`
	N        int             `json:"n"`
	Seen     []string        `json:"seen,omitempty"`
	// Trials are the trials followed, in creation order; Promoted the
	// promoted ones not yet running, in decision order.
	Trials   []savedTrial `json:"trials,omitempty"`
	Promoted []string     `json:"promoted,omitempty"`
	// Reported are the jobs of the trials no longer followed, for
	// reports.
	Reported map[string][]Job `json:"reported,omitempty"`
}

func (s *Searcher) savedConfig() savedConfig {
	o := s.opts
	c := savedConfig{Metric: o.Metric, Mode: string(o.Mode), NumSamples: o.NumSamples, Seed: o.Seed,
		MaxConcurrent: o.MaxConcurrent, MutationFactor: snapshot.Number(o.MutationFactor),
		CrossoverProb: snapshot.Number(o.CrossoverProb)}
	for _, p := range s.space.Params() {
		c.Params = append(c.Params, fmt.Sprintf("%s:%s/%d", p.Name(), p.Kind, p.Dim))
	}
	for _, p := range o.Points {
		c.Points = append(c.Points, snapshot.Config(p))
	}
	if s.sc != nil {
		sc := toSavedSchedule(s.sc.cfg)
		c.Schedule = &sc
	}
	return c
}

// MarshalState implements hone.Stateful: the random source, the
// populations, the brackets, the trials and their jobs. The dehb
// scheduler bound to the searcher keeps its decisions here.
func (s *Searcher) MarshalState() ([]byte, error) {
	rng, err := snapshot.PCG(s.pcg)
	if err != nil {
		return nil, fmt.Errorf("dehb state: %w", err)
	}
	st := savedState{RNG: rng, Parent: slices.Clone(s.parent), Started: s.started, N: s.n}
	for _, pop := range s.levels {
		out := make([]savedMember, len(pop))
		for i, m := range pop {
			out[i] = savedMember{X: snapshot.Numbers(m.x), Config: snapshot.Config(m.cfg), Loss: snapshot.Number(m.loss),
				Evaluated: m.evaluated, Issued: m.issued, Trial: m.trial}
		}
		st.Levels = append(st.Levels, out)
	}
	if s.levels != nil && len(st.Levels) == 0 {
		st.Levels = [][]savedMember{}
	}
	brackets := map[*bracket]bool{}
	addBracket := func(b *bracket, active bool) {
		if brackets[b] {
			return
		}
		brackets[b] = true
		st.Brackets = append(st.Brackets, savedBracket{ID: b.id, First: b.first, N: slices.Clone(b.n),
			Issued: slices.Clone(b.issued), Done: slices.Clone(b.done), Cur: b.cur, Active: active})
	}
	for _, b := range s.active {
		addBracket(b, true)
	}
	trials := make([]*trialRec, 0, len(s.trials))
	for _, t := range s.trials {
		trials = append(trials, t)
	}
	slices.SortFunc(trials, func(a, b *trialRec) int { return a.seq - b.seq })
	for _, t := range trials {
		sv := savedTrial{ID: t.id, Seq: t.seq, Level: t.level, X: snapshot.Numbers(t.x), Time: snapshot.Number(t.time),
			Paused: t.paused, Dispatched: t.dispatched, Jobs: s.jobs[t.id]}
		if j := t.job; j != nil {
			addBracket(j.b, false)
			sv.Job = &savedJob{Bracket: j.b.id, Rung: j.rung, Level: j.level, Slot: j.slot, X: snapshot.Numbers(j.x), From: snapshot.Number(j.from)}
		}
		st.Trials = append(st.Trials, sv)
	}
	for _, t := range s.promoted {
		st.Promoted = append(st.Promoted, t.id)
	}
	for id, jobs := range s.jobs {
		if s.trials[id] == nil {
			if st.Reported == nil {
				st.Reported = map[string][]Job{}
			}
			st.Reported[id] = jobs
		}
	}
	for k := range s.seen {
		st.Seen = append(st.Seen, k)
	}
	slices.Sort(st.Seen)
	return snapshot.Marshal("dehb", stateVersion, s.savedConfig(), st)
}

// UnmarshalState implements hone.Stateful. A searcher bound to a dehb
// scheduler takes the state of one bound to a scheduler configured the
// same.
func (s *Searcher) UnmarshalState(data []byte) error {
	var st savedState
	if err := snapshot.Unmarshal(data, "dehb", stateVersion, s.savedConfig(), &st); err != nil {
		return err
	}
	pcg := *s.pcg
	if err := snapshot.SetPCG(&pcg, st.RNG); err != nil {
		return fmt.Errorf("dehb state: %w", err)
	}
	var levels [][]member
	if st.Levels != nil {
		if s.sc == nil || len(st.Levels) != len(s.sc.levels) {
			return fmt.Errorf("dehb state: %d levels, the schedule has %d", len(st.Levels), s.budgetCount())
		}
		levels = make([][]member, len(st.Levels))
		for l, pop := range st.Levels {
			levels[l] = make([]member, len(pop))
			for i, m := range pop {
				levels[l][i] = member{x: snapshot.Floats(m.X), cfg: map[string]any(m.Config), loss: float64(m.Loss),
					evaluated: m.Evaluated, issued: m.Issued, trial: m.Trial}
			}
		}
		if len(st.Parent) != len(levels) {
			return fmt.Errorf("dehb state: %d round-robin positions for %d levels", len(st.Parent), len(levels))
		}
	}
	byID := map[int]*bracket{}
	var active []*bracket
	for _, sb := range st.Brackets {
		n := len(sb.N)
		if len(sb.Issued) != n || len(sb.Done) != n || sb.Cur < 0 || sb.Cur >= max(n, 1) {
			return fmt.Errorf("dehb state: bracket %d is malformed", sb.ID)
		}
		b := &bracket{id: sb.ID, first: sb.First, n: sb.N, issued: sb.Issued, done: sb.Done, cur: sb.Cur}
		byID[sb.ID] = b
		if sb.Active {
			active = append(active, b)
		}
	}
	trials := make(map[string]*trialRec, len(st.Trials))
	jobs := make(map[string][]Job, len(st.Trials)+len(st.Reported))
	for _, t := range st.Trials {
		rec := &trialRec{id: t.ID, seq: t.Seq, level: t.Level, x: snapshot.Floats(t.X), time: float64(t.Time),
			paused: t.Paused, dispatched: t.Dispatched}
		if sj := t.Job; sj != nil {
			b := byID[sj.Bracket]
			if b == nil || levels == nil || sj.Level < 0 || sj.Level >= len(levels) || sj.Slot < 0 || sj.Slot >= len(levels[sj.Level]) {
				return fmt.Errorf("dehb state: trial %s: its job is not in the state", t.ID)
			}
			rec.job = &job{b: b, rung: sj.Rung, level: sj.Level, slot: sj.Slot, x: snapshot.Floats(sj.X), from: float64(sj.From)}
		}
		trials[t.ID] = rec
		if t.Jobs != nil {
			jobs[t.ID] = t.Jobs
		}
	}
	var promoted []*trialRec
	for _, id := range st.Promoted {
		rec := trials[id]
		if rec == nil {
			return fmt.Errorf("dehb state: promoted trial %s is not followed", id)
		}
		promoted = append(promoted, rec)
	}
	for id, js := range st.Reported {
		jobs[id] = js
	}
	seen := make(map[string]bool, len(st.Seen))
	for _, k := range st.Seen {
		seen[k] = true
	}
	*s.pcg = pcg
	s.levels, s.parent, s.active, s.started, s.n = levels, st.Parent, active, st.Started, st.N
	if levels == nil {
		s.parent = nil
	}
	s.seen, s.trials, s.promoted, s.jobs = seen, trials, promoted, jobs
	return nil
}

func (s *Searcher) budgetCount() int {
	if s.sc == nil {
		return 0
	}
	return len(s.sc.levels)
}

// schedulerStateVersion is the version of the snapshot form of the dehb
// scheduler's state.
const schedulerStateVersion = 1

// MarshalState implements hone.Stateful. The scheduler's decisions live
// in the searcher it is bound to, whose snapshot holds them: its own
// state is whether it warned of a result without the metric.
func (s *Scheduler) MarshalState() ([]byte, error) {
	return snapshot.Marshal("dehb_scheduler", schedulerStateVersion, toSavedSchedule(s.cfg), struct {
		Warned bool `json:"warned"`
	}{s.warned})
}

// UnmarshalState implements hone.Stateful.
func (s *Scheduler) UnmarshalState(data []byte) error {
	var st struct {
		Warned bool `json:"warned"`
	}
	if err := snapshot.Unmarshal(data, "dehb_scheduler", schedulerStateVersion, toSavedSchedule(s.cfg), &st); err != nil {
		return err
	}
	s.warned = st.Warned
	return nil
}

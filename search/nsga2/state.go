package nsga2

import (
	"fmt"
	"math"
	"slices"

	"github.com/hone-tune/hone/internal/snapshot"
)

// stateVersion is the version of the snapshot form of the searcher's state.
const stateVersion = 1

// savedConfig identifies the searcher's configuration: its space (by its
// parameters) and its options.
type savedConfig struct {
	Params         []string          `json:"params"`
	Objectives     []string          `json:"objectives"`
	Constraints    []string          `json:"constraints,omitempty"`
	NumSamples     int               `json:"num_samples"`
	PopulationSize int               `json:"population_size"`
	MutationProb   snapshot.Number   `json:"mutation_prob"`
	CrossoverProb  snapshot.Number   `json:"crossover_prob"`
	SwappingProb   snapshot.Number   `json:"swapping_prob"`
	Points         []snapshot.Config `json:"points,omitempty"`
}

// savedTrial is a pending trial; Loss and Viol are present when it has
// seen a result with every objective.
type savedTrial struct {
	ID   string            `json:"id"`
	Seq  int               `json:"seq"`
	Gen  int               `json:"gen"`
	X    []snapshot.Number `json:"x"`
	Loss []snapshot.Number `json:"loss,omitempty"`
	Viol *snapshot.Number  `json:"viol,omitempty"`
}

// savedMember is a completed trial, a candidate or a parent.
type savedMember struct {
	ID   string            `json:"id"`
	Seq  int               `json:"seq"`
	X    []snapshot.Number `json:"x"`
	Loss []snapshot.Number `json:"loss"`
	Viol snapshot.Number   `json:"viol"`
}

type savedState struct {
	RNG       []byte        `json:"rng"`
	Suggested int           `json:"suggested"`
	Gen       int           `json:"gen"`
	Filled    int           `json:"filled"`
	Pending   []savedTrial  `json:"pending,omitempty"`
	Pool      []savedMember `json:"pool,omitempty"`
	Parents   []savedMember `json:"parents,omitempty"`
}

func (s *Searcher) savedConfig() savedConfig {
	c := savedConfig{NumSamples: s.opts.NumSamples, PopulationSize: s.opts.PopulationSize,
		MutationProb: snapshot.Number(s.mutation), CrossoverProb: snapshot.Number(s.opts.CrossoverProb),
		SwappingProb: snapshot.Number(s.opts.SwappingProb)}
	for _, d := range s.dims {
		c.Params = append(c.Params, fmt.Sprintf("%s:%s/%d", d.p.Name(), d.p.Kind, len(d.cats)))
	}
	for _, o := range s.opts.Objectives {
		c.Objectives = append(c.Objectives, o.String())
	}
	for _, k := range s.opts.Constraints {
		c.Constraints = append(c.Constraints, k.String())
	}
	for _, p := range s.points {
		c.Points = append(c.Points, snapshot.Config(p))
	}
	return c
}

func saveMembers(ms []*member) []savedMember {
	out := make([]savedMember, len(ms))
	for i, m := range ms {
		out[i] = savedMember{ID: m.id, Seq: m.seq, X: snapshot.Numbers(m.x), Loss: snapshot.Numbers(m.loss), Viol: snapshot.Number(m.viol)}
	}
	return out
}

// MarshalState implements hone.Stateful: the random source, the
// generation being filled, the pending trials, the candidates of the next
// selection and the parent population.
func (s *Searcher) MarshalState() ([]byte, error) {
	rng, err := snapshot.PCG(s.pcg)
	if err != nil {
		return nil, fmt.Errorf("nsga2 state: %w", err)
	}
	st := savedState{RNG: rng, Suggested: s.n, Gen: s.gen, Filled: s.filled,
		Pool: saveMembers(s.pool), Parents: saveMembers(s.parents)}
	for _, t := range s.pending {
		sv := savedTrial{ID: t.id, Seq: t.seq, Gen: t.gen, X: snapshot.Numbers(t.x)}
		if t.seen {
			v := snapshot.Number(t.viol)
			sv.Loss, sv.Viol = snapshot.Numbers(t.loss), &v
		}
		st.Pending = append(st.Pending, sv)
	}
	slices.SortFunc(st.Pending, func(a, b savedTrial) int { return a.Seq - b.Seq })
	return snapshot.Marshal("nsga2", stateVersion, s.savedConfig(), st)
}

// UnmarshalState implements hone.Stateful: it restores a snapshot of a
// searcher configured the same (the seed aside) and refuses, leaving the
// searcher unchanged, one of another configuration or a malformed one.
func (s *Searcher) UnmarshalState(data []byte) error {
	var st savedState
	if err := snapshot.Unmarshal(data, "nsga2", stateVersion, s.savedConfig(), &st); err != nil {
		return err
	}
	pcg := *s.pcg
	if err := snapshot.SetPCG(&pcg, st.RNG); err != nil {
		return fmt.Errorf("nsga2 state: %w", err)
	}
	if st.Suggested < 0 || st.Gen < 0 || st.Filled < 0 || st.Filled >= s.opts.PopulationSize {
		return fmt.Errorf("nsga2 state: suggested %d, generation %d, completed %d: out of range", st.Suggested, st.Gen, st.Filled)
	}
	genes := func(xs []snapshot.Number) ([]float64, error) {
		if len(xs) != len(s.dims) {
			return nil, fmt.Errorf("%d genes, want %d", len(xs), len(s.dims))
		}
		x := snapshot.Floats(xs)
		for i, v := range x {
			if d := s.dims[i]; d.cats != nil && !math.IsNaN(v) && (v != math.Trunc(v) || v < 0 || int(v) >= len(d.cats)) {
				return nil, fmt.Errorf("%s: category %v out of range", d.p.Name(), v)
			}
		}
		return x, nil
	}
	objs := len(s.opts.Objectives)
	seen := map[string]bool{}
	members := func(list []savedMember, what string) ([]*member, error) {
		out := make([]*member, len(list))
		for i, m := range list {
			x, err := genes(m.X)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", what, m.ID, err)
			}
			if len(m.Loss) != objs || m.Seq < 0 || m.Seq >= st.Suggested || seen[m.ID] {
				return nil, fmt.Errorf("%s %s: %d losses, seq %d, or listed twice", what, m.ID, len(m.Loss), m.Seq)
			}
			seen[m.ID] = true
			out[i] = &member{id: m.ID, seq: m.Seq, x: x, loss: snapshot.Floats(m.Loss), viol: float64(m.Viol)}
		}
		return out, nil
	}
	pool, err := members(st.Pool, "candidate")
	if err != nil {
		return fmt.Errorf("nsga2 state: %w", err)
	}
	parents, err := members(st.Parents, "parent")
	if err != nil {
		return fmt.Errorf("nsga2 state: %w", err)
	}
	if st.Gen > 0 && len(parents) == 0 || st.Gen == 0 && len(parents) > 0 {
		return fmt.Errorf("nsga2 state: generation %d with %d parents", st.Gen, len(parents))
	}
	pending := make(map[string]*trial, len(st.Pending))
	for _, p := range st.Pending {
		x, err := genes(p.X)
		if err != nil {
			return fmt.Errorf("nsga2 state: pending %s: %w", p.ID, err)
		}
		if pending[p.ID] != nil || p.Seq < 0 || p.Seq >= st.Suggested || p.Gen < 0 || p.Gen > st.Gen {
			return fmt.Errorf("nsga2 state: pending %s: seq %d, generation %d, or listed twice", p.ID, p.Seq, p.Gen)
		}
		t := &trial{id: p.ID, seq: p.Seq, gen: p.Gen, x: x}
		if p.Viol != nil {
			if len(p.Loss) != objs {
				return fmt.Errorf("nsga2 state: pending %s: %d losses, want %d", p.ID, len(p.Loss), objs)
			}
			t.seen, t.loss, t.viol = true, snapshot.Floats(p.Loss), float64(*p.Viol)
		}
		pending[p.ID] = t
	}
	rankPopulation(parents)
	*s.pcg = pcg
	s.n, s.gen, s.filled = st.Suggested, st.Gen, st.Filled
	s.pending, s.pool, s.parents = pending, pool, parents
	return nil
}

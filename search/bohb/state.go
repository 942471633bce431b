package bohb

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/hone-tune/hone/search/fidelity"
)

// state is the searcher's saved form. NumSamples, Points and Dim identify
// the search it belongs to. The model is not saved: it is a function of the
// observations and is refit on restore.
type state struct {
	Version    int                   `json:"version"`
	RNG        []byte                `json:"rng"`
	Suggested  int                   `json:"suggested"`
	NumSamples int                   `json:"num_samples"`
	Points     int                   `json:"points"`
	Dim        int                   `json:"dim"`
	Trials     map[string]trialState `json:"trials"`
	Budgets    []budgetState         `json:"budgets"`
	// Losses holds every trial's loss per budget, with FidelityCheck; a
	// null loss is +Inf.
	Losses []lossState `json:"losses,omitempty"`
}

type lossState struct {
	Trial  string   `json:"trial"`
	Budget float64  `json:"budget"`
	Loss   *float64 `json:"loss"`
}

type trialState struct {
	Seq    int       `json:"seq,omitempty"`
	X      []float64 `json:"x"` // null: no encoding
	Paused bool      `json:"paused,omitempty"`
	Fed    []float64 `json:"fed,omitempty"`
}

// budgetState is one budget's observations; a null loss is +Inf, which
// JSON cannot hold.
type budgetState struct {
	Budget float64     `json:"budget"`
	X      [][]float64 `json:"x"`
	Loss   []*float64  `json:"loss"`
}

// MarshalState returns the searcher's state as JSON: the exact
// random-number generator state, the number of suggestions, the live
// trials (their encodings, pause flags and budgets observed) and every
// observation kept.
func (s *Searcher) MarshalState() ([]byte, error) {
	rng, err := s.pcg.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("bohb: marshal state: %w", err)
	}
	st := state{
		Version: 1, RNG: rng, Suggested: s.n,
		NumSamples: s.opts.NumSamples, Points: len(s.points), Dim: s.dim,
		Trials: make(map[string]trialState, len(s.trials)),
	}
	for id, t := range s.trials {
		st.Trials[id] = trialState{Seq: t.seq, X: t.x, Paused: t.paused, Fed: t.fed}
	}
	budgets := make([]float64, 0, len(s.data))
	for b := range s.data {
		budgets = append(budgets, b)
	}
	slices.Sort(budgets)
	for _, b := range budgets {
		o := s.data[b]
		bs := budgetState{Budget: b, X: o.rows, Loss: make([]*float64, len(o.losses))}
		for i, l := range o.losses {
			if !math.IsInf(l, 1) {
				bs.Loss[i] = &l
			}
		}
		st.Budgets = append(st.Budgets, bs)
	}
	for _, e := range s.mon.Entries() {
		ls := lossState{Trial: e.Trial, Budget: e.Budget}
		if !math.IsInf(e.Loss, 1) {
			ls.Loss = &e.Loss
		}
		st.Losses = append(st.Losses, ls)
	}
	return json.Marshal(st)
}

// UnmarshalState restores a state from MarshalState into a searcher built
// with the same space and options (except, possibly, the seed): afterwards
// it behaves exactly as the saved one would have. A state from a different
// search (other num_samples, number of points or dimensions) or a
// malformed one is an error, and the searcher is left unchanged.
func (s *Searcher) UnmarshalState(data []byte) error {
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("bohb: unmarshal state: %w", err)
	}
	if st.Version != 1 {
		return fmt.Errorf("bohb: unmarshal state: unknown version %d", st.Version)
	}
	if st.NumSamples != s.opts.NumSamples || st.Points != len(s.points) || st.Dim != s.dim {
		return fmt.Errorf("bohb: unmarshal state: saved for a search of %d samples, %d points and %d dimensions; this one has %d, %d and %d",
			st.NumSamples, st.Points, st.Dim, s.opts.NumSamples, len(s.points), s.dim)
	}
	if st.Suggested < 0 {
		return fmt.Errorf("bohb: unmarshal state: suggested = %d", st.Suggested)
	}
	pcg := new(rand.PCG)
	if err := pcg.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("bohb: unmarshal state: rng: %w", err)
	}
	trials := make(map[string]*trial, len(st.Trials))
	paused := 0
	for id, ts := range st.Trials {
		if ts.X != nil {
			if err := s.checkRow(ts.X); err != nil {
				return fmt.Errorf("bohb: unmarshal state: trial %q: %w", id, err)
			}
		}
		for _, b := range ts.Fed {
			if math.IsNaN(b) || math.IsInf(b, 0) {
				return fmt.Errorf("bohb: unmarshal state: trial %q: budget %v", id, b)
			}
		}
		if ts.Seq < 0 || ts.Seq >= st.Suggested {
			return fmt.Errorf("bohb: unmarshal state: trial %q: suggestion number %d of %d", id, ts.Seq, st.Suggested)
		}
		trials[id] = &trial{seq: ts.Seq, x: ts.X, paused: ts.Paused, fed: ts.Fed}
		if ts.Paused {
			paused++
		}
	}
	obs := make(map[float64]*observations, len(st.Budgets))
	var budgets []float64
	for _, bs := range st.Budgets {
		b := bs.Budget
		if math.IsNaN(b) || math.IsInf(b, 0) || obs[b] != nil {
			return fmt.Errorf("bohb: unmarshal state: bad or repeated budget %v", b)
		}
		if len(bs.X) != len(bs.Loss) {
			return fmt.Errorf("bohb: unmarshal state: budget %v: %d rows but %d losses", b, len(bs.X), len(bs.Loss))
		}
		o := &observations{rows: bs.X, losses: make([]float64, len(bs.Loss))}
		for i, row := range bs.X {
			if err := s.checkRow(row); err != nil {
				return fmt.Errorf("bohb: unmarshal state: budget %v: row %d: %w", b, i, err)
			}
			o.losses[i] = math.Inf(1)
			if l := bs.Loss[i]; l != nil {
				o.losses[i] = *l
			}
		}
		obs[b] = o
		budgets = append(budgets, b)
	}
	var mon fidelity.Monitor
	for _, l := range st.Losses {
		if math.IsNaN(l.Budget) || math.IsInf(l.Budget, 0) {
			return fmt.Errorf("bohb: unmarshal state: loss of trial %q at budget %v", l.Trial, l.Budget)
		}
		loss := math.Inf(1)
		if l.Loss != nil {
			loss = *l.Loss
		}
		mon.Observe(l.Trial, l.Budget, loss)
	}
	// The model in use is the one of the largest budget whose data fits
	// one (at or above the floor, with FidelityCheck): every larger budget
	// kept failed to fit, and the data of smaller budgets was dropped when
	// it was set.
	floor := math.Inf(-1)
	if s.opts.FidelityCheck {
		floor = mon.Floor(fidelity.Rule{})
	}
	m := bestModel(obs, floor, s.opts, s.dim)
	*s.pcg = *pcg
	s.n = st.Suggested
	s.trials, s.paused = trials, paused
	s.data, s.model, s.mon = obs, m, mon
	s.lastFromModel = false
	return nil
}

// checkRow reports a model encoding that this searcher cannot have made.
func (s *Searcher) checkRow(x []float64) error {
	if len(x) != s.dim {
		return fmt.Errorf("%d coordinates, want %d", len(x), s.dim)
	}
	for j, v := range x {
		c := s.cats[j]
		switch {
		case c == 0 && !(v >= 0 && v <= 1):
			return fmt.Errorf("coordinate %d = %v: not in [0, 1]", j, v)
		case c > 0 && !(v >= 0 && v < float64(c) && v == math.Trunc(v)):
			return fmt.Errorf("coordinate %d = %v: not a category index below %d", j, v, c)
		}
	}
	return nil
}

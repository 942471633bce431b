package tpe

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/hone-tune/hone/internal/snapshot"
	"github.com/hone-tune/hone/search/fidelity"
)

// state is the searcher's saved form. Total, Points and Params identify the
// search it belongs to.
type state struct {
	Version   int      `json:"version"`
	RNG       []byte   `json:"rng"`
	Suggested int      `json:"suggested"`
	Total     int      `json:"total"`
	Points    int      `json:"points"`
	Params    []string `json:"params"`
	// Objectives names the objectives and constraints when there are
	// several objectives or a constraint; absent otherwise.
	Objectives   []string       `json:"objectives,omitempty"`
	Observations []obsState     `json:"observations"`
	Pending      []pendingState `json:"pending"`
	// With rungs: the budgets (which also identify the search), the
	// completed trials, and every loss observed at a budget.
	Budgets []float64      `json:"budgets,omitempty"`
	Past    []pendingState `json:"past,omitempty"`
	Losses  []lossState    `json:"losses,omitempty"`
	// With the fidelity check: the highest floor index the model has
	// used, and the suggestion number from which trials count as
	// suggested above it (Searcher.freshEnough; whether enough of them
	// reached it is counted again after a restore).
	Floor     int `json:"floor,omitempty"`
	FreshFrom int `json:"fresh_from,omitempty"`
}

// lossState is a trial's loss at a budget.
type lossState struct {
	Trial  string          `json:"trial"`
	Budget float64         `json:"budget"`
	Loss   snapshot.Number `json:"loss"`
}

type obsState struct {
	Seq  int               `json:"seq"`
	Loss snapshot.Number   `json:"loss"`
	X    []snapshot.Number `json:"x"`
	// With several objectives or constraints: the losses and the
	// violation.
	Losses []snapshot.Number `json:"losses,omitempty"`
	Viol   *snapshot.Number  `json:"viol,omitempty"`
}

type pendingState struct {
	Trial string            `json:"trial"`
	Seq   int               `json:"seq"`
	X     []snapshot.Number `json:"x"`
	// Last is the latest metric value seen by OnResult; absent if none,
	// or if it was NaN, which LastNaN says (JSON's null would read back as
	// no value).
	Last    *snapshot.Number `json:"last,omitempty"`
	LastNaN bool             `json:"last_nan,omitempty"`
	// With rungs: the index of the highest budget the trial was observed
	// at (absent: none), and whether it failed (completed trials).
	Top    *int `json:"top,omitempty"`
	Failed bool `json:"failed,omitempty"`
	// With several objectives or constraints: the losses and the
	// violation of the latest result that had every objective, if any.
	Losses []snapshot.Number `json:"losses,omitempty"`
	Viol   *snapshot.Number  `json:"viol,omitempty"`
	// With rungs, several objectives or constraints, and Top: the losses
	// and the violation at the rung Top.
	TopLosses []snapshot.Number `json:"top_losses,omitempty"`
	TopViol   *snapshot.Number  `json:"top_viol,omitempty"`
}

// objectivesSignature names the objectives and constraints of a general
// searcher (several objectives or a constraint), nil otherwise.
func (s *Searcher) objectivesSignature() []string {
	if !s.general() {
		return nil
	}
	var out []string
	for _, o := range s.objs {
		out = append(out, o.String())
	}
	for _, c := range s.cs {
		out = append(out, c.String())
	}
	return out
}

// signature describes the modelled parameters, so that a state is not
// restored into a searcher over another space.
func (s *Searcher) signature() []string {
	sig := make([]string, len(s.dims))
	for i, d := range s.dims {
		sig[i] = d.name + ":" + string(d.kind)
		if d.categorical() {
			sig[i] += "/" + strconv.Itoa(len(d.cats))
		}
	}
	return sig
}

// MarshalState returns the searcher's exact random-number generator state,
// its observations and its pending trials, as JSON.
func (s *Searcher) MarshalState() ([]byte, error) {
	rng, err := s.pcg.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("tpe: marshal state: %w", err)
	}
	st := state{
		Version: 1, RNG: rng, Suggested: s.n, Total: s.total, Points: len(s.points),
		Params:       s.signature(),
		Objectives:   s.objectivesSignature(),
		Observations: make([]obsState, len(s.obs)),
		Pending:      make([]pendingState, 0, len(s.pending)),
	}
	for i, o := range s.obs {
		st.Observations[i] = obsState{Seq: o.seq, Loss: snapshot.Number(o.loss), X: snapshot.Numbers(o.x)}
		if s.general() {
			v := snapshot.Number(o.viol)
			st.Observations[i].Losses, st.Observations[i].Viol = snapshot.Numbers(o.losses), &v
		}
	}
	trials := func(m map[string]*trial) []pendingState {
		out := make([]pendingState, 0, len(m))
		for id, p := range m {
			ps := pendingState{Trial: id, Seq: p.seq, X: snapshot.Numbers(p.x), Failed: p.failed}
			switch {
			case p.seen && math.IsNaN(p.last):
				ps.LastNaN = true
			case p.seen:
				v := snapshot.Number(p.last)
				ps.Last = &v
			}
			if p.top >= 0 {
				top := p.top
				ps.Top = &top
				if p.topLosses != nil {
					v := snapshot.Number(p.topViol)
					ps.TopLosses, ps.TopViol = snapshot.Numbers(p.topLosses), &v
				}
			}
			if p.seenAll {
				v := snapshot.Number(p.viol)
				ps.Losses, ps.Viol = snapshot.Numbers(p.losses), &v
			}
			out = append(out, ps)
		}
		slices.SortFunc(out, func(a, b pendingState) int { return a.Seq - b.Seq })
		return out
	}
	st.Pending = trials(s.pending)
	if s.budgets != nil {
		st.Budgets = s.budgets
		st.Floor, st.FreshFrom = s.maxFloor, s.freshFrom
		st.Past = trials(s.past)
		for _, e := range s.mon.Entries() {
			st.Losses = append(st.Losses, lossState{Trial: e.Trial, Budget: e.Budget, Loss: snapshot.Number(e.Loss)})
		}
	}
	return json.Marshal(st)
}

// UnmarshalState restores a state from MarshalState into a searcher built
// with the same space and options (except, possibly, the seed): afterwards
// it behaves exactly as the saved one would have. A state from a different
// search (other parameters, number of samples or number of points) or a
// malformed one is an error, and the searcher is left unchanged.
func (s *Searcher) UnmarshalState(data []byte) error {
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("tpe: unmarshal state: %w", err)
	}
	if st.Version != 1 {
		return fmt.Errorf("tpe: unmarshal state: unknown version %d", st.Version)
	}
	if st.Total != s.total || st.Points != len(s.points) {
		return fmt.Errorf("tpe: unmarshal state: saved for a search of %d trials with %d points, this one has %d trials and %d points",
			st.Total, st.Points, s.total, len(s.points))
	}
	if sig := s.signature(); !slices.Equal(st.Params, sig) {
		return fmt.Errorf("tpe: unmarshal state: saved for parameters %v, this search has %v", st.Params, sig)
	}
	if sig := s.objectivesSignature(); !slices.Equal(st.Objectives, sig) {
		return fmt.Errorf("tpe: unmarshal state: saved for objectives %v, this search has %v", st.Objectives, sig)
	}
	// general checks the losses and violation of a general searcher's
	// observation or trial (none for another searcher).
	general := func(losses []snapshot.Number, viol *snapshot.Number) ([]float64, float64, error) {
		switch {
		case !s.general() && (losses != nil || viol != nil):
			return nil, 0, fmt.Errorf("losses for one objective")
		case !s.general() || losses == nil && viol == nil:
			return nil, 0, nil
		case len(losses) != len(s.objs) || viol == nil:
			return nil, 0, fmt.Errorf("%d losses for %d objectives", len(losses), len(s.objs))
		}
		return snapshot.Floats(losses), float64(*viol), nil
	}
	if !slices.Equal(st.Budgets, s.budgets) {
		return fmt.Errorf("tpe: unmarshal state: saved for rungs %v, this search has %v", st.Budgets, s.budgets)
	}
	if st.Suggested < 0 {
		return fmt.Errorf("tpe: unmarshal state: suggested = %d", st.Suggested)
	}
	coords := func(xs []snapshot.Number) ([]float64, error) {
		if len(xs) != len(s.dims) {
			return nil, fmt.Errorf("%d coordinates, want %d", len(xs), len(s.dims))
		}
		out := make([]float64, len(xs))
		for i, x := range xs {
			f, d := float64(x), s.dims[i]
			switch {
			case math.IsNaN(f):
			case d.categorical() && (f != math.Trunc(f) || f < 0 || int(f) >= len(d.cats)):
				return nil, fmt.Errorf("%s: category %v out of range", d.name, f)
			case !d.categorical() && (f < d.lo || f > d.hi):
				return nil, fmt.Errorf("%s: coordinate %v out of range", d.name, f)
			}
			out[i] = f
		}
		return out, nil
	}
	seqOK := func(seq int) bool { return seq >= 0 && seq < st.Suggested }
	obs := make([]observation, len(st.Observations))
	for i, o := range st.Observations {
		x, err := coords(o.X)
		if err != nil {
			return fmt.Errorf("tpe: unmarshal state: observation %d: %w", i, err)
		}
		if !seqOK(o.Seq) || math.IsNaN(float64(o.Loss)) {
			return fmt.Errorf("tpe: unmarshal state: observation %d: bad seq or loss", i)
		}
		obs[i] = observation{seq: o.Seq, loss: float64(o.Loss), x: x}
		if obs[i].losses, obs[i].viol, err = general(o.Losses, o.Viol); err != nil {
			return fmt.Errorf("tpe: unmarshal state: observation %d: %w", i, err)
		}
		if s.general() && obs[i].losses == nil {
			return fmt.Errorf("tpe: unmarshal state: observation %d: no losses", i)
		}
	}
	trials := func(list []pendingState, what string) (map[string]*trial, error) {
		out := make(map[string]*trial, len(list))
		for _, p := range list {
			x, err := coords(p.X)
			if err != nil {
				return nil, fmt.Errorf("%s trial %s: %w", what, p.Trial, err)
			}
			if !seqOK(p.Seq) {
				return nil, fmt.Errorf("%s trial %s: bad seq %d", what, p.Trial, p.Seq)
			}
			if _, dup := out[p.Trial]; dup {
				return nil, fmt.Errorf("%s trial %s listed twice", what, p.Trial)
			}
			q := &trial{id: p.Trial, seq: p.Seq, x: x, last: math.NaN(), top: -1, failed: p.Failed}
			if q.losses, q.viol, err = general(p.Losses, p.Viol); err != nil {
				return nil, fmt.Errorf("%s trial %s: %w", what, p.Trial, err)
			}
			q.seenAll = q.losses != nil
			switch {
			case p.Last != nil:
				q.last, q.seen = float64(*p.Last), true
			case p.LastNaN:
				q.seen = true
			}
			if p.Top != nil {
				if *p.Top < 0 || *p.Top >= len(s.budgets) {
					return nil, fmt.Errorf("%s trial %s: rung %d out of range", what, p.Trial, *p.Top)
				}
				q.top = *p.Top
				if q.topLosses, q.topViol, err = general(p.TopLosses, p.TopViol); err != nil {
					return nil, fmt.Errorf("%s trial %s: at its rung: %w", what, p.Trial, err)
				}
				if s.general() && q.topLosses == nil {
					return nil, fmt.Errorf("%s trial %s: no losses at its rung", what, p.Trial)
				}
			}
			out[p.Trial] = q
		}
		return out, nil
	}
	pend, err := trials(st.Pending, "pending")
	if err != nil {
		return fmt.Errorf("tpe: unmarshal state: %w", err)
	}
	var past map[string]*trial
	var all []*trial
	var mon fidelity.Monitor
	if s.budgets != nil {
		if past, err = trials(st.Past, "completed"); err != nil {
			return fmt.Errorf("tpe: unmarshal state: %w", err)
		}
		for id, t := range past {
			if pend[id] != nil {
				return fmt.Errorf("tpe: unmarshal state: trial %s both pending and completed", id)
			}
			t.done = true
			all = append(all, t)
		}
		for _, t := range pend {
			all = append(all, t)
		}
		slices.SortFunc(all, func(a, b *trial) int { return a.seq - b.seq })
		for _, l := range st.Losses {
			if _, ok := slices.BinarySearch(s.budgets, l.Budget); !ok {
				return fmt.Errorf("tpe: unmarshal state: loss of trial %s at budget %v: not a rung", l.Trial, l.Budget)
			}
			if pend[l.Trial] == nil && past[l.Trial] == nil {
				return fmt.Errorf("tpe: unmarshal state: loss of unknown trial %s", l.Trial)
			}
			mon.Observe(l.Trial, l.Budget, float64(l.Loss))
		}
		for _, t := range all {
			if t.top >= 0 {
				var ok bool
				if t.topLoss, ok = mon.Loss(t.id, s.budgets[t.top]); !ok {
					return fmt.Errorf("tpe: unmarshal state: trial %s has no loss at its rung %v", t.id, s.budgets[t.top])
				}
			}
		}
	}
	if st.Floor < 0 || st.Floor > 0 && st.Floor >= len(s.budgets) || st.FreshFrom < 0 || st.FreshFrom > st.Suggested {
		return fmt.Errorf("tpe: unmarshal state: floor index %d, fresh from %d: out of range", st.Floor, st.FreshFrom)
	}
	pcg := new(rand.PCG)
	if err := pcg.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("tpe: unmarshal state: rng: %w", err)
	}
	*s.pcg = *pcg
	s.n, s.obs, s.pending, s.past, s.all, s.mon = st.Suggested, obs, pend, past, all, mon
	s.maxFloor, s.freshFrom, s.freshOK = st.Floor, st.FreshFrom, false
	if s.budgets != nil {
		s.ranked, s.perLevel = nil, make([]int, len(s.budgets))
		for _, t := range all {
			if t.top >= 0 {
				s.rank(t)
			}
		}
	}
	return nil
}

package tpe

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
)

// state is the searcher's saved form. Total, Points and Params identify the
// search it belongs to.
type state struct {
	Version      int            `json:"version"`
	RNG          []byte         `json:"rng"`
	Suggested    int            `json:"suggested"`
	Total        int            `json:"total"`
	Points       int            `json:"points"`
	Params       []string       `json:"params"`
	Observations []obsState     `json:"observations"`
	Pending      []pendingState `json:"pending"`
}

type obsState struct {
	Seq  int      `json:"seq"`
	Loss number   `json:"loss"`
	X    []number `json:"x"`
}

type pendingState struct {
	Trial string   `json:"trial"`
	Seq   int      `json:"seq"`
	X     []number `json:"x"`
	// Last is the latest metric value seen by OnResult; absent if none.
	Last *number `json:"last,omitempty"`
}

// number is a float64 that survives JSON exactly, including NaN (written
// as null) and the infinities (written as "+Inf" and "-Inf").
type number float64

// MarshalJSON writes the shortest decimal that reads back as the same
// float64.
func (n number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	switch {
	case math.IsNaN(f):
		return []byte("null"), nil
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (n *number) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "null":
		*n = number(math.NaN())
		return nil
	case `"+Inf"`:
		*n = number(math.Inf(1))
		return nil
	case `"-Inf"`:
		*n = number(math.Inf(-1))
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("bad number %s", b)
	}
	*n = number(f)
	return nil
}

func toNumbers(xs []float64) []number {
	out := make([]number, len(xs))
	for i, x := range xs {
		out[i] = number(x)
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
		Observations: make([]obsState, len(s.obs)),
		Pending:      make([]pendingState, 0, len(s.pending)),
	}
	for i, o := range s.obs {
		st.Observations[i] = obsState{Seq: o.seq, Loss: number(o.loss), X: toNumbers(o.x)}
	}
	for id, p := range s.pending {
		ps := pendingState{Trial: id, Seq: p.seq, X: toNumbers(p.x)}
		if p.seen {
			v := number(p.last)
			ps.Last = &v
		}
		st.Pending = append(st.Pending, ps)
	}
	slices.SortFunc(st.Pending, func(a, b pendingState) int { return a.Seq - b.Seq })
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
	if st.Suggested < 0 {
		return fmt.Errorf("tpe: unmarshal state: suggested = %d", st.Suggested)
	}
	coords := func(xs []number) ([]float64, error) {
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
	}
	pend := make(map[string]*pending, len(st.Pending))
	for _, p := range st.Pending {
		x, err := coords(p.X)
		if err != nil {
			return fmt.Errorf("tpe: unmarshal state: pending trial %s: %w", p.Trial, err)
		}
		if !seqOK(p.Seq) {
			return fmt.Errorf("tpe: unmarshal state: pending trial %s: bad seq %d", p.Trial, p.Seq)
		}
		if _, dup := pend[p.Trial]; dup {
			return fmt.Errorf("tpe: unmarshal state: pending trial %s listed twice", p.Trial)
		}
		q := &pending{seq: p.Seq, x: x, last: math.NaN()}
		if p.Last != nil {
			q.last, q.seen = float64(*p.Last), true
		}
		pend[p.Trial] = q
	}
	pcg := new(rand.PCG)
	if err := pcg.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("tpe: unmarshal state: rng: %w", err)
	}
	*s.pcg = *pcg
	s.n, s.obs, s.pending = st.Suggested, obs, pend
	return nil
}

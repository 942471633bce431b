// Package random is the random and grid searcher: Ray Tune's
// BasicVariantGenerator.
//
// Trials come in repeats. Each repeat walks the whole grid of the space (see
// space.Grid; one point if the space has no grid domains) and gives every
// grid point fresh samples of the other domains. There are num_samples
// repeats, so num_samples × grid-size trials in all; num_samples = -1 repeats
// until the experiment stops.
//
// Preset points (Ray's points_to_evaluate) come first, one repeat each, and
// count toward num_samples, as in Ray: with 5 samples and 2 points there are
// 2 point repeats and 3 random ones (with more points than samples, every
// point still runs and no random repeat follows). A point fills in whatever
// it leaves unset: missing domains are sampled, and grid keys it does not set
// are expanded, so a point that sets no grid key yields a whole grid's worth
// of trials. Point values are used as given, even outside their domains.
package random

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/space"
)

// stream is the second PCG word; the first is the user's seed.
const stream = 0x686f6e652d726e64 // "hone-rnd"

// Searcher suggests configurations from a space, as described in the
// package documentation. It is deterministic: the same space, num_samples,
// points and seed give the same sequence of suggestions, and a searcher
// restored with UnmarshalState continues exactly where the saved one was.
// Like every hone.Searcher it is called from one goroutine only.
type Searcher struct {
	space      space.Space
	numSamples int
	points     []map[string]any
	grid       space.Grid   // the full grid, for random repeats
	pointGrids []space.Grid // each point's expansion
	total      int

	pcg *rand.PCG
	rng *rand.Rand
	rep int // current repeat
	pos int // next grid index within the repeat
	n   int // suggestions made
}

// New returns a searcher over s that makes numSamples repeats of the grid
// (-1: without end), starting with points, seeded with seed. It validates s
// and checks that every key a point sets exists in s (a point may replace a
// whole sub-space with one value). The points are copied.
func New(s space.Space, numSamples int, points []map[string]any, seed uint64) (*Searcher, error) {
	if err := s.Validate(); err != nil {
		return nil, &hone.ParamError{Plugin: "random", Err: err}
	}
	if numSamples < -1 {
		return nil, invalid("num_samples", "num_samples = %d: must be -1 (until stopped) or >= 0", numSamples)
	}
	sr := &Searcher{space: s, numSamples: numSamples, grid: s.Grid(nil)}
	for i, p := range points {
		if err := space.Space(s).CheckPoint(p); err != nil {
			return nil, invalid("points_to_evaluate", "points_to_evaluate[%d]: %w", i, err)
		}
		sr.points = append(sr.points, map[string]any(hone.Config(p).Clone()))
		sr.pointGrids = append(sr.pointGrids, s.Grid(sr.points[i]))
	}
	if numSamples == -1 {
		sr.total = -1
	} else {
		total := 0
		for _, g := range sr.pointGrids {
			total += g.Len()
		}
		if rest := numSamples - len(points); rest > 0 {
			if rest > (math.MaxInt-total)/sr.grid.Len() {
				return nil, invalid("num_samples", "num_samples = %d with %d grid points: too many trials", numSamples, sr.grid.Len())
			}
			total += rest * sr.grid.Len()
		}
		sr.total = total
	}
	sr.pcg = rand.NewPCG(seed, stream)
	sr.rng = rand.New(sr.pcg)
	return sr, nil
}

// Total returns the number of trials the searcher will suggest, or -1 if it
// never stops.
func (s *Searcher) Total() int { return s.total }

// MaxPending implements hone.PendingLimit: random search does not learn
// from results, so it returns hone.PendingAuto and the controller sizes the
// bound from the trials that can run at once.
func (s *Searcher) MaxPending() int { return hone.PendingAuto }

// CheckObjectives accepts any objectives and constraints: random search
// learns from no result (hone.MultiObjective).
func (s *Searcher) CheckObjectives(hone.Objectives, hone.Constraints) error { return nil }

// repeats returns the number of repeats, or -1 for no end.
func (s *Searcher) repeats() int {
	if s.numSamples == -1 {
		return -1
	}
	return max(s.numSamples, len(s.points))
}

// Suggest returns the next configuration, or hone.ErrSearchDone once Total
// configurations have been suggested. The trial id is not used. The
// returned config is the caller's.
func (s *Searcher) Suggest(trialID string) (hone.Config, error) {
	for {
		if reps := s.repeats(); reps >= 0 && s.rep >= reps {
			return nil, hone.ErrSearchDone
		}
		g := s.grid
		if s.rep < len(s.points) {
			g = s.pointGrids[s.rep]
		}
		if s.pos < g.Len() {
			cfg := s.space.Resolve(g.At(s.pos), s.rng)
			s.pos++
			s.n++
			return hone.Config(cfg), nil
		}
		s.rep++
		s.pos = 0
	}
}

// OnResult does nothing: random search does not learn.
func (s *Searcher) OnResult(trialID string, r *hone.Result) {}

// OnTrialComplete does nothing: random search does not learn.
func (s *Searcher) OnTrialComplete(trialID string, last *hone.Result, failed bool) {}

// state is the searcher's saved form. Total and Points identify the search
// it belongs to.
type state struct {
	Version   int    `json:"version"`
	RNG       []byte `json:"rng"`
	Repeat    int    `json:"repeat"`
	Pos       int    `json:"pos"`
	Suggested int    `json:"suggested"`
	Total     int    `json:"total"`
	Points    int    `json:"points"`
}

// MarshalState returns the searcher's position and exact random-number
// generator state as JSON.
func (s *Searcher) MarshalState() ([]byte, error) {
	rng, err := s.pcg.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("random: marshal state: %w", err)
	}
	return json.Marshal(state{
		Version: 1, RNG: rng, Repeat: s.rep, Pos: s.pos, Suggested: s.n,
		Total: s.total, Points: len(s.points),
	})
}

// UnmarshalState restores a state from MarshalState into a searcher built
// with the same arguments (except, possibly, the seed): afterwards it
// suggests exactly what the saved searcher would have. A state from a
// different search (other total or number of points) is an error, and the
// searcher is left unchanged.
func (s *Searcher) UnmarshalState(data []byte) error {
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("random: unmarshal state: %w", err)
	}
	if st.Version != 1 {
		return fmt.Errorf("random: unmarshal state: unknown version %d", st.Version)
	}
	if st.Total != s.total || st.Points != len(s.points) {
		return fmt.Errorf("random: unmarshal state: saved for a search of %d trials with %d points, this one has %d trials and %d points",
			st.Total, st.Points, s.total, len(s.points))
	}
	if st.Repeat < 0 || st.Pos < 0 || st.Suggested < 0 {
		return fmt.Errorf("random: unmarshal state: negative position")
	}
	pcg := new(rand.PCG)
	if err := pcg.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("random: unmarshal state: rng: %w", err)
	}
	*s.pcg = *pcg
	s.rep, s.pos, s.n = st.Repeat, st.Pos, st.Suggested
	return nil
}

// Suggested returns the number of configurations suggested so far.
func (s *Searcher) Suggested() int { return s.n }

// invalid is the error of New for param: a *hone.ParamError.
func invalid(param, format string, args ...any) error {
	return &hone.ParamError{Plugin: "random", Param: param, Err: fmt.Errorf(format, args...)}
}

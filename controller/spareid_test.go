package controller

import (
	"slices"
	"testing"

	"github.com/hone-tune/hone"
)

// oneAtATimeSearcher suggests {"x": i} while none of its trials is live
// and declines (hone.ErrNotNow) while one is, for n trials.
type oneAtATimeSearcher struct {
	n, i int
	live bool
}

func (s *oneAtATimeSearcher) Suggest(string) (hone.Config, error) {
	if s.i >= s.n {
		return nil, hone.ErrSearchDone
	}
	if s.live {
		return nil, hone.ErrNotNow
	}
	s.live = true
	s.i++
	return hone.Config{"x": float64(s.i - 1)}, nil
}
func (s *oneAtATimeSearcher) OnResult(string, *hone.Result)              {}
func (s *oneAtATimeSearcher) OnTrialComplete(string, *hone.Result, bool) { s.live = false }

// idsWithTicks runs three trials of one result each, one at a time, with
// ticks ticks while each runs, and returns the trials' ids in order. With
// spare false the controller runs as a journal without
// Settings.SpareIDs replays.
func idsWithTicks(t *testing.T, ticks int, spare bool) []string {
	t.Helper()
	s := &oneAtATimeSearcher{n: 3}
	c, err := New(&hone.Experiment{Searcher: s, Metric: "loss", MaxConcurrentTrials: 4}, hone.Resources{CPU: 4})
	if err != nil {
		t.Fatal(err)
	}
	set := c.Settings()
	if !set.SpareIDs {
		t.Fatal("a new controller's settings lack SpareIDs")
	}
	set.SpareIDs = spare
	if err := c.ApplySettings(set); err != nil {
		t.Fatal(err)
	}
	now := int64(1)
	step(t, c, hone.Event{Kind: hone.EventBegin, Time: now})
	for k := 0; k < 3; k++ {
		id := c.Trials()[k].ID
		for range ticks {
			now++
			step(t, c, hone.Event{Kind: hone.EventTick, Time: now})
		}
		now++
		step(t, c, hone.Event{Kind: hone.EventResult, TrialID: id, Time: now, Metrics: map[string]any{"loss": 1.0}, Done: true})
		now++
		step(t, c, hone.Event{Kind: hone.EventExited, TrialID: id, Time: now})
		if k < 2 && len(c.Trials()) != k+2 {
			t.Fatalf("%d trials after trial %d ended, want %d", len(c.Trials()), k, k+2)
		}
	}
	var ids []string
	for _, tr := range c.Trials() {
		ids = append(ids, tr.ID)
	}
	return ids
}

// TestIDsIndependentOfAsks: a trial's id does not depend on how often the
// searcher was asked in vain, so two runs of the same seed whose ticks
// fall differently between results (as wall-clock ticks do) create the
// same trials. A journal written before the rule replays with the ids it
// drew then.
func TestIDsIndependentOfAsks(t *testing.T) {
	base := idsWithTicks(t, 0, true)
	for _, ticks := range []int{1, 3, 10} {
		if got := idsWithTicks(t, ticks, true); !slices.Equal(got, base) {
			t.Errorf("%d ticks per trial: ids %v, with none %v", ticks, got, base)
		}
	}
	// Without SpareIDs every declined suggestion used up an id: the old
	// rule, which replays of old journals keep.
	old0, old3 := idsWithTicks(t, 0, false), idsWithTicks(t, 3, false)
	if slices.Equal(old3, old0) {
		t.Errorf("without SpareIDs, declined suggestions used no ids (%v): the test does not exercise them", old3)
	}
}

// Package search holds wrappers shared by every searcher; the searchers
// themselves live in subpackages (random, ...).
package search

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hone-tune/hone"
)

// Limiter caps the number of live trials a searcher has suggested, like Ray
// Tune's ConcurrencyLimiter. A trial is live from the Suggest that created
// it until its OnTrialComplete (whether it finished or failed). Build one
// with Limit. Like every hone.Searcher it is called from one goroutine only.
type Limiter struct {
	inner hone.Searcher
	max   int
	live  map[string]struct{}
}

// StatefulLimiter is a Limiter around a searcher that implements
// hone.Stateful; its state holds the live set and the inner state.
type StatefulLimiter struct {
	*Limiter
}

// Limit wraps inner so that Suggest returns hone.ErrNotNow, without asking
// inner, while maxConcurrent suggested trials are live; maxConcurrent < 1
// means no limit. The result is a *StatefulLimiter, which implements
// hone.Stateful, when inner implements hone.Stateful, and a *Limiter
// otherwise.
func Limit(inner hone.Searcher, maxConcurrent int) hone.Searcher {
	l := &Limiter{inner: inner, max: maxConcurrent, live: map[string]struct{}{}}
	if _, ok := inner.(hone.Stateful); ok {
		return &StatefulLimiter{l}
	}
	return l
}

// Inner returns the wrapped searcher.
func (l *Limiter) Inner() hone.Searcher { return l.inner }

// MaxPending implements hone.PendingLimit: the inner searcher's limit,
// capped at the concurrency limit (more could never be suggested).
// hone.PendingAuto passes through: the limiter's own cap bounds the
// trials it suggests anyway.
func (l *Limiter) MaxPending() int {
	n := 1
	if p, ok := l.inner.(hone.PendingLimit); ok {
		n = p.MaxPending()
	}
	if n == hone.PendingAuto {
		return n
	}
	if n < 1 {
		n = 1
	}
	if l.max > 0 && n > l.max {
		n = l.max
	}
	return n
}

// Live returns the number of live trials.
func (l *Limiter) Live() int { return len(l.live) }

// Suggest returns hone.ErrNotNow if the limit is reached, and otherwise
// what inner.Suggest returns; a suggested trial becomes live.
func (l *Limiter) Suggest(trialID string) (hone.Config, error) {
	if l.max >= 1 && len(l.live) >= l.max {
		return nil, hone.ErrNotNow
	}
	cfg, err := l.inner.Suggest(trialID)
	if err != nil {
		return nil, err
	}
	l.live[trialID] = struct{}{}
	return cfg, nil
}

// OnResult passes the result of a live trial to inner; results of trials
// the limiter did not suggest are dropped, as in Ray Tune.
func (l *Limiter) OnResult(trialID string, r *hone.Result) {
	if _, ok := l.live[trialID]; ok {
		l.inner.OnResult(trialID, r)
	}
}

// OnTrialComplete frees the trial's slot and tells inner; trials the
// limiter did not suggest are ignored.
func (l *Limiter) OnTrialComplete(trialID string, last *hone.Result, failed bool) {
	if _, ok := l.live[trialID]; !ok {
		return
	}
	delete(l.live, trialID)
	l.inner.OnTrialComplete(trialID, last, failed)
}

type limiterState struct {
	Live  []string `json:"live"`
	Inner []byte   `json:"inner"`
}

// MarshalState saves the live set (sorted) and the inner searcher's state.
func (l *StatefulLimiter) MarshalState() ([]byte, error) {
	inner, err := l.inner.(hone.Stateful).MarshalState()
	if err != nil {
		return nil, fmt.Errorf("search: limiter: marshal inner state: %w", err)
	}
	live := make([]string, 0, len(l.live))
	for id := range l.live {
		live = append(live, id)
	}
	slices.Sort(live)
	return json.Marshal(limiterState{Live: live, Inner: inner})
}

// UnmarshalState restores the live set and the inner searcher's state from
// MarshalState's output.
func (l *StatefulLimiter) UnmarshalState(data []byte) error {
	var st limiterState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("search: limiter: unmarshal state: %w", err)
	}
	if err := l.inner.(hone.Stateful).UnmarshalState(st.Inner); err != nil {
		return fmt.Errorf("search: limiter: unmarshal inner state: %w", err)
	}
	l.live = make(map[string]struct{}, len(st.Live))
	for _, id := range st.Live {
		l.live[id] = struct{}{}
	}
	return nil
}

package pbt

import (
	"cmp"
	"container/heap"
	"math"
	"slices"

	"github.com/hone-tune/hone"
)

// This file keeps the two orderings PBT asks for at every result without
// looking at the whole population each time: the ranking of scored,
// unfinished trials behind the quantiles, and the queue of waiting trials
// behind ChooseTrialToRun. Both give exactly what a scan of s.order gives
// (the reference implementations in rank_test.go); they only avoid the
// scan.
//
// Both rely on the hooks the controller calls (hone.Scheduler's contract):
// a trial that finishes is named by OnTrialComplete or OnTrialRemove just
// after, or, when it fails, by OnTrialError or OnTrialRemove just before it
// turns ERROR (or PENDING again, for a retry); and a trial that comes back
// after one of those (a retry, a resumed ERROR trial) is named by
// OnTrialAdd. Nothing else turns a finished trial into a live one. The
// ranking leaves a trial at the first of those hooks and rejoins at
// OnTrialAdd; the run queue looks at statuses itself and only needs
// OnTrialAdd (and has a guard against a lost trial besides).

// rankEntry is a scored trial in s.rank, with the key it was inserted
// with.
type rankEntry struct {
	score float64
	idx   int // add index: ties keep add order, as the stable sort did
	st    *trialState
}

// cmpRank orders worst first: by score (NaN the worst, equal scores —
// NaNs, or -0 and +0 — tie), then by add index. It is the order of a
// stable sort by less over s.order.
func cmpRank(a, b rankEntry) int {
	switch {
	case less(a.score, b.score):
		return -1
	case less(b.score, a.score):
		return 1
	}
	return a.idx - b.idx
}

// catchUp brings the ranking and the run queue up to date with trials
// appended to s.order since the last call: OnTrialAdd only appends, and
// every reader calls catchUp first. Doing it lazily also keeps the
// structures right for state set up without the hooks (as the package's
// tests do).
func (s *Scheduler) catchUp() {
	for ; s.synced < len(s.order); s.synced++ {
		id := s.order[s.synced]
		st := s.state[id]
		st.id, st.idx = id, s.synced
		if st.hasScore && !st.gone && !st.ranked {
			s.rankInsert(st)
		}
		if st.queued == 0 {
			s.enqueue(st)
		}
	}
}

// rankPos returns where st's entry is (or would go) in s.rank.
func (s *Scheduler) rankPos(st *trialState) (int, bool) {
	return slices.BinarySearchFunc(s.rank, rankEntry{st.lastScore, st.idx, st}, cmpRank)
}

func (s *Scheduler) rankInsert(st *trialState) {
	i, _ := s.rankPos(st)
	s.rank = slices.Insert(s.rank, i, rankEntry{st.lastScore, st.idx, st})
	st.ranked = true
}

func (s *Scheduler) rankRemove(st *trialState) {
	if !st.ranked {
		return
	}
	i, found := s.rankPos(st)
	if !found || s.rank[i].st != st {
		// Only if st's score was changed behind setScore's back; find
		// the entry the slow way rather than corrupt the ranking.
		i = slices.IndexFunc(s.rank, func(e rankEntry) bool { return e.st == st })
	}
	s.rank = slices.Delete(s.rank, i, i+1)
	st.ranked = false
}

// setScore records st's new score and moves it in the ranking.
func (s *Scheduler) setScore(st *trialState, score float64) {
	s.catchUp()
	s.rankRemove(st)
	st.lastScore, st.hasScore = score, true
	if !st.gone {
		s.rankInsert(st)
	}
}

// leave takes t out of the ranking: it finished, or is failing (it comes
// back with OnTrialAdd if retried).
func (s *Scheduler) leave(t *hone.Trial) {
	s.catchUp()
	if st := s.state[t.ID]; st != nil {
		st.gone = true
		s.rankRemove(st)
	}
}

// rejoin puts a trial re-added for a retry back in the ranking and the run
// queue.
func (s *Scheduler) rejoin(t *hone.Trial, st *trialState) {
	s.catchUp()
	st.gone = t.Status.Finished()
	if st.hasScore && !st.gone && !st.ranked {
		s.rankInsert(st)
	}
	s.enqueue(st)
}

// resync repairs both structures after a Control broke the hook contract
// (a trial came back without OnTrialAdd): every live trial is ranked (if
// scored) and queued again.
func (s *Scheduler) resync(c hone.Control) {
	for _, id := range s.order {
		st := s.state[id]
		t := c.Trial(id)
		if t == nil || t.Status.Finished() {
			continue
		}
		if st.gone {
			st.gone = false
			if st.hasScore && !st.ranked {
				s.rankInsert(st)
			}
		}
		if st.queued == 0 {
			s.enqueue(st)
		}
	}
}

// quantileView is the result of view: the worst k and the best k of
// the n ranked trials, read from s.rank without copying them. It is valid
// until the ranking next changes, which no Control call made while it is
// in use does (scores change only in OnResult, membership only in the
// hooks).
type quantileView struct {
	s    *Scheduler
	c    hone.Control
	n, k int
}

// view returns the lower and upper quantile of trials with a score that
// are not finished — k = ceil(N·q) capped at floor(N/2), N ≤ 1 → none —
// without copying them: the asynchronous mode needs no more than
// membership and one donor per result.
func (s *Scheduler) view(c hone.Control) quantileView {
	s.catchUp()
	n, k := len(s.rank), 0
	if n > 1 {
		k = int(math.Ceil(float64(n) * s.quantile))
		if k > n/2 {
			k = n / 2
		}
	}
	return quantileView{s, c, n, k}
}

// pos returns t's rank, or -1 if t is not ranked (or is not the trial the
// Control knows by its ID, which the old pointer comparison excluded too).
func (q quantileView) pos(t *hone.Trial) int {
	st := q.s.state[t.ID]
	if q.k == 0 || st == nil || !st.ranked || q.c.Trial(t.ID) != t {
		return -1
	}
	i, _ := q.s.rankPos(st)
	return i
}

func (q quantileView) inLower(t *hone.Trial) bool {
	i := q.pos(t)
	return i >= 0 && i < q.k
}

func (q quantileView) inUpper(t *hone.Trial) bool {
	i := q.pos(t)
	return i >= 0 && i >= q.n-q.k
}

// upper returns the i-th trial of the upper quantile (worst first).
func (q quantileView) upper(i int) *hone.Trial { return q.c.Trial(q.s.rank[q.n-q.k+i].st.id) }

// lists returns both quantiles as slices.
func (q quantileView) lists() (lower, upper []*hone.Trial) {
	if q.k == 0 {
		return nil, nil
	}
	lower, upper = make([]*hone.Trial, q.k), make([]*hone.Trial, q.k)
	for i := range q.k {
		lower[i], upper[i] = q.c.Trial(q.s.rank[i].st.id), q.upper(i)
	}
	return lower, upper
}

// ---- the run queue ----

// runEntry is a trial in the run queue with the training time it was
// queued with; it is current while gen matches its trial's queued.
type runEntry struct {
	time float64
	idx  int
	st   *trialState
	gen  uint64
}

// runHeap is a min-heap by (training time, add index): the order in which
// ChooseTrialToRun's scan picked, when no time is NaN.
type runHeap []runEntry

func (h runHeap) Len() int { return len(h) }
func (h runHeap) Less(i, j int) bool {
	// cmp.Compare is < on numbers, and also a total order with NaN, so the
	// heap stays a heap while NaN times send ChooseTrialToRun to its scan.
	if c := cmp.Compare(h[i].time, h[j].time); c != 0 {
		return c < 0
	}
	return h[i].idx < h[j].idx
}
func (h runHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)   { *h = append(*h, x.(runEntry)) }
func (h *runHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// The run queue holds every live trial exactly once, with lazy deletion:
// each trial has one current entry (its queued generation), either in
// s.runq or in s.parked. A trial found RUNNING or exploiting at the top of
// s.runq is parked: PBT is not told when a running trial pauses, so parked
// trials are looked at on every ChooseTrialToRun (there are about as many
// as slots) and go back to the heap once they wait again. A trial found
// finished or gone from the Control is dropped; only OnTrialAdd (which
// re-queues) brings such a trial back.

// enqueue gives st a new current entry in the heap, keyed by its training
// time now.
func (s *Scheduler) enqueue(st *trialState) {
	s.gen++
	st.queued, st.parked = s.gen, false
	heap.Push(&s.runq, runEntry{st.lastTrainTime, st.idx, st, s.gen})
	if len(s.runq) > 2*len(s.order)+64 {
		s.compactRunq()
	}
}

// compactRunq drops superseded entries, so that the heap stays within a
// constant factor of the population.
func (s *Scheduler) compactRunq() {
	live := s.runq[:0]
	for _, e := range s.runq {
		if e.gen == e.st.queued {
			live = append(live, e)
		}
	}
	clear(s.runq[len(live):])
	s.runq = live
	heap.Init(&s.runq)
}

// setTrainTime records st's training time, re-keying its queue entry.
func (s *Scheduler) setTrainTime(st *trialState, v float64) {
	if math.IsNaN(st.lastTrainTime) {
		s.nanTimes--
	}
	if math.IsNaN(v) {
		s.nanTimes++
	}
	st.lastTrainTime = v
	if st.queued != 0 && !st.parked {
		s.enqueue(st) // supersedes the entry with the old key
	}
}

// runnable reports whether ChooseTrialToRun may return t.
func (s *Scheduler) runnable(t *hone.Trial) bool {
	return (t.Status == hone.StatusPending || t.Status == hone.StatusPaused) && !s.exploiting[t.ID]
}

// chooseQueued is ChooseTrialToRun from the run queue.
func (s *Scheduler) chooseQueued(c hone.Control) *hone.Trial {
	// Parked trials that wait again go back to the heap; finished ones go.
	kept := s.parked[:0]
	for _, e := range s.parked {
		st := e.st
		if e.gen != st.queued {
			continue // superseded (re-queued by OnTrialAdd)
		}
		switch t := c.Trial(st.id); {
		case t == nil || t.Status.Finished():
			st.queued, st.parked = 0, false
		case s.runnable(t):
			st.parked = false
			s.enqueue(st)
		default:
			kept = append(kept, e)
		}
	}
	clear(s.parked[len(kept):])
	s.parked = kept

	for len(s.runq) > 0 {
		e := s.runq[0]
		st := e.st
		if e.gen != st.queued {
			heap.Pop(&s.runq) // superseded
			continue
		}
		t := c.Trial(st.id)
		switch {
		case t == nil || t.Status.Finished():
			heap.Pop(&s.runq)
			st.queued = 0
			continue
		case !s.runnable(t):
			heap.Pop(&s.runq)
			st.parked = true
			s.parked = append(s.parked, e)
			continue
		}
		// The least (time, index) of all waiting trials: if it is at or
		// past the sync time, so is every other.
		if s.cfg.Synch && st.lastTrainTime >= s.nextSync {
			return nil
		}
		return t
	}
	return nil
}

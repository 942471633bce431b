package controller

import (
	"container/heap"

	"github.com/hone-tune/hone"
)

// statusQueue finds the oldest trial with one status (PENDING or PAUSED)
// without scanning every trial: a min-heap by creation index, with lazy
// deletion. A trial is pushed when it takes the status unless an entry of
// it is still in the heap (that entry becomes valid again); entries of
// trials that left the status, or were dropped, are discarded when they
// reach the top. The heap never holds more entries than there are trials.
type statusQueue []*hone.Trial

func (h statusQueue) Len() int           { return len(h) }
func (h statusQueue) Less(i, j int) bool { return h[i].Index < h[j].Index }
func (h statusQueue) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *statusQueue) Push(x any)        { *h = append(*h, x.(*hone.Trial)) }
func (h *statusQueue) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return t
}

// queueSlot returns which of a trial's queued flags belongs to status s.
func queueSlot(s hone.Status) (int, bool) {
	switch s {
	case hone.StatusPending:
		return 0, true
	case hone.StatusPaused:
		return 1, true
	}
	return 0, false
}

// queueStatus records that t has just taken status s.
func (c *Controller) queueStatus(t *hone.Trial, s hone.Status) {
	i, ok := queueSlot(s)
	if !ok {
		return
	}
	st := c.st[t.ID]
	if st == nil || st.queued[i] {
		return
	}
	st.queued[i] = true
	heap.Push(&c.queues[i], t)
}

// Oldest implements hone.OldestByStatus.
func (c *Controller) Oldest(s hone.Status) *hone.Trial {
	i, ok := queueSlot(s)
	if !ok {
		return nil
	}
	q := &c.queues[i]
	for q.Len() > 0 {
		t := (*q)[0]
		st := c.st[t.ID]
		if c.Trial(t.ID) == t && st != nil && t.Status == s {
			return t
		}
		heap.Pop(q)
		if st != nil && c.Trial(t.ID) == t {
			st.queued[i] = false
		}
	}
	return nil
}

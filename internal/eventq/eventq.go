// Package eventq is the FIFO of executor events that blocking executors
// (inproc, process) hand to Next. It does no locking: its owner guards it.
package eventq

import (
	"context"
	"sync"

	"github.com/hone-tune/hone"
)

// Queue is a FIFO of events. The zero value is empty and ready to use.
type Queue struct {
	items []hone.Event // events not yet popped, from head on
	head  int
}

// Len returns the number of queued events.
func (q *Queue) Len() int { return len(q.items) - q.head }

// Push appends ev.
func (q *Queue) Push(ev hone.Event) { q.items = append(q.items, ev) }

// Pop removes and returns the oldest event; the queue must not be empty.
// Popped slots are cleared and the backing array compacted, so a long run
// neither leaks metrics maps nor grows without bound.
func (q *Queue) Pop() hone.Event {
	ev := q.items[q.head]
	q.items[q.head] = hone.Event{}
	q.head++
	switch {
	case q.head == len(q.items):
		q.items, q.head = q.items[:0], 0
	case q.head >= 64 && q.head*2 >= len(q.items):
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	return ev
}

// DropTrial removes the queued events of trial id other than its exit (a
// trial told to stop reports nothing more) and returns the staged
// checkpoint directories they carried, for the caller to delete.
func (q *Queue) DropTrial(id string) []string {
	var dropped []string
	kept := q.items[:q.head]
	for _, ev := range q.items[q.head:] {
		if ev.TrialID == id && ev.Kind != hone.EventExited {
			if ev.CheckpointDir != "" {
				dropped = append(dropped, ev.CheckpointDir)
			}
			continue
		}
		kept = append(kept, ev)
	}
	clear(q.items[len(kept):])
	q.items = kept
	return dropped
}

// Next is a blocking executor's Next over q, guarded by mu: it pops the
// oldest event, calling exited for an EventExited (with mu held, so the
// trial id is freed before anyone sees the event); it returns hone.ErrIdle
// at once when nothing is queued and idle (called with mu held) reports
// that no trial can queue one; otherwise it waits for wake (signalled
// after each Push) or for ctx.
func Next(ctx context.Context, mu *sync.Mutex, q *Queue, wake <-chan struct{}, idle func() bool, exited func(id string)) (hone.Event, error) {
	for {
		if err := ctx.Err(); err != nil {
			return hone.Event{}, err
		}
		mu.Lock()
		if q.Len() > 0 {
			ev := q.Pop()
			if ev.Kind == hone.EventExited {
				exited(ev.TrialID)
			}
			mu.Unlock()
			return ev, nil
		}
		isIdle := idle()
		mu.Unlock()
		if isIdle {
			return hone.Event{}, hone.ErrIdle
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return hone.Event{}, ctx.Err()
		}
	}
}

package eventq

import (
	"testing"

	"github.com/hone-tune/hone"
)

func TestFIFOAndDrop(t *testing.T) {
	var q Queue
	for i := 0; i < 200; i++ {
		q.Push(hone.Event{TrialID: "a", Kind: hone.EventResult, Done: i%2 == 0})
		if i%3 == 0 {
			q.Pop()
		}
	}
	if q.Len() != 200-67 {
		t.Fatalf("len %d", q.Len())
	}
	q.Push(hone.Event{TrialID: "b", Kind: hone.EventResult, CheckpointDir: "/s/1"})
	q.Push(hone.Event{TrialID: "b", Kind: hone.EventSaved, CheckpointDir: "/s/2"})
	q.Push(hone.Event{TrialID: "b", Kind: hone.EventExited})
	q.Push(hone.Event{TrialID: "c", Kind: hone.EventResult})
	dropped := q.DropTrial("b")
	if len(dropped) != 2 || dropped[0] != "/s/1" || dropped[1] != "/s/2" {
		t.Fatalf("dropped %v", dropped)
	}
	var order []string
	for q.Len() > 0 {
		ev := q.Pop()
		if ev.TrialID != "a" {
			order = append(order, ev.TrialID+ev.Kind.String())
		}
	}
	if len(order) != 2 || order[0] != "bexited" || order[1] != "cresult" {
		t.Fatalf("order after drop: %v", order)
	}
}

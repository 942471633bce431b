package searchbench

import (
	"container/heap"
	"context"
	"fmt"

	"github.com/hone-tune/hone/bench/functions"
)

// askTell is an optimiser driven trial by trial, as Goptuna's and
// Optuna's studies are. simulate calls it from one goroutine.
type askTell interface {
	// ask starts a new trial and returns its configuration.
	ask() (trial int, x []float64, err error)
	// report gives the trial's value at step u < Steps and returns
	// whether the trial is to stop (pruned).
	report(trial, u int, v float64) (prune bool, err error)
	// tell ends a trial: complete with value v at full fidelity, or
	// pruned after its last report.
	tell(trial int, v float64, pruned bool) error
}

// simTrial is a trial of simulate in flight.
type simTrial struct {
	id  int
	x   []float64
	run *functions.Run
}

// simEvent is the end of a trial's next step at virtual time at; seq
// orders events of equal time by when they were scheduled.
type simEvent struct {
	at  float64
	seq int
	t   *simTrial
}

type simQueue []simEvent

func (q simQueue) Len() int { return len(q) }
func (q simQueue) Less(i, j int) bool {
	return q[i].at < q[j].at || q[i].at == q[j].at && q[i].seq < q[j].seq
}
func (q simQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *simQueue) Push(x any)   { *q = append(*q, x.(simEvent)) }
func (q *simQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// simulate runs an ask-and-tell optimiser on p with concurrency trials at
// once, on a virtual clock, as the sim executor runs a hone experiment:
//
//   - at time 0 it asks concurrency trials, one after the other, and
//     schedules the first step of each;
//   - a step u of a trial takes p.StepCost(u) of virtual time; the step
//     that ends first (ties: the one scheduled first) is taken next;
//   - its value is counted by the recorder (the run ends when the step
//     would exceed the budget; trials in flight are dropped) and then
//     reported (tell at full fidelity; report, which may prune, below it,
//     if prune is set, or nothing without a pruner);
//   - a trial that goes on has its next step scheduled; one that ended
//     frees its slot, and a new trial is asked at once, at the same
//     virtual time.
//
// Trial t's randomness comes from functions.Key(seed, keyPrefix+t).
func simulate(ctx context.Context, p *functions.Problem, seed uint64, concurrency int, prune bool, keyPrefix string, at askTell, rec *recorder) (trials int, err error) {
	var q simQueue
	seq := 0
	schedule := func(now float64, t *simTrial) {
		heap.Push(&q, simEvent{at: now + p.StepCost(t.run.At()+1), seq: seq, t: t})
		seq++
	}
	start := func(now float64) error {
		id, x, err := at.ask()
		if err != nil {
			return err
		}
		if err := p.Check(x); err != nil {
			return err
		}
		schedule(now, &simTrial{id: id, x: x, run: p.NewRun(x, functions.Key(seed, fmt.Sprint(keyPrefix, id)))})
		return nil
	}
	for range concurrency {
		if err := start(0); err != nil {
			return 0, err
		}
	}
	counted := map[int]bool{}
	for q.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		ev := heap.Pop(&q).(simEvent)
		t := ev.t
		v := t.run.Step()
		u := t.run.At()
		if !rec.add(u, v, func() []float64 { return t.x }) {
			break
		}
		if !counted[t.id] {
			counted[t.id] = true
			trials++
		}
		ended := false
		switch {
		case u >= p.Steps:
			if err := at.tell(t.id, v, false); err != nil {
				return 0, err
			}
			ended = true
		case prune:
			stop, err := at.report(t.id, u, v)
			if err != nil {
				return 0, err
			}
			if stop {
				if err := at.tell(t.id, v, true); err != nil {
					return 0, err
				}
				ended = true
			}
		}
		if rec.done() {
			break
		}
		if !ended {
			schedule(ev.at, t)
		} else if err := start(ev.at); err != nil {
			return 0, err
		}
	}
	return trials, nil
}

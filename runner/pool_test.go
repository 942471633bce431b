package runner

import (
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hone-tune/hone"
)

// orderStore records the order of its commits and deletes; an operation
// on a path in gate blocks until that gate is closed, and started
// reports each operation as it begins.
type orderStore struct {
	hone.Store
	gate    map[string]chan struct{}
	started chan string

	mu  sync.Mutex
	log []string
}

func (s *orderStore) op(kind, p string) {
	s.started <- kind + " " + p
	if g := s.gate[kind+" "+p]; g != nil {
		<-g
	}
	s.mu.Lock()
	s.log = append(s.log, kind+" "+p)
	s.mu.Unlock()
}

func (s *orderStore) Commit(_ context.Context, _, dest string) error {
	s.op("commit", dest)
	return nil
}

func (s *orderStore) Delete(_ context.Context, p string) error {
	s.op("delete", p)
	return nil
}

// TestPoolOrdersEachPath: on the store pool, a delete of a checkpoint
// waits for a pending commit of the same path, and a commit for a pending
// delete of its path, while operations on other paths go ahead.
func TestPoolOrdersEachPath(t *testing.T) {
	st := &orderStore{started: make(chan string, 16), gate: map[string]chan struct{}{
		"commit a/checkpoint_000001": make(chan struct{}),
		"delete b/checkpoint_000002": make(chan struct{}),
	}}
	r := &runner{store: st, async: true, sem: make(chan struct{}, poolWorkers), tails: map[string]chan struct{}{}, log: io.Discard, opts: Options{StopGrace: 1 << 40}}
	r.sctx, r.scancel = context.WithCancel(context.Background())
	commit := func(p string) {
		after, release := r.claim(p)
		r.pool.Add(1)
		go r.commit(hone.Event{TrialID: "x", CheckpointDir: "/staged"}, 1, p, after, release)
	}
	commit("a/checkpoint_000001") // blocks
	if got := <-st.started; got != "commit a/checkpoint_000001" {
		t.Fatalf("first operation started: %s", got)
	}
	r.remove("a/checkpoint_000001") // must wait for the commit
	r.remove("b/checkpoint_000002") // blocks, on another path
	if got := <-st.started; got != "delete b/checkpoint_000002" {
		t.Fatalf("second operation started: %s, want the delete of another path", got)
	}
	commit("b/checkpoint_000002") // must wait for the delete
	commit("c/checkpoint_000000") // goes ahead
	if got := <-st.started; got != "commit c/checkpoint_000000" {
		t.Fatalf("third operation started: %s, want the commit of a free path", got)
	}
	close(st.gate["delete b/checkpoint_000002"])
	if got := <-st.started; got != "commit b/checkpoint_000002" {
		t.Fatalf("after the delete of b ended, %s started; want the commit of b", got)
	}
	close(st.gate["commit a/checkpoint_000001"])
	if got := <-st.started; got != "delete a/checkpoint_000001" {
		t.Fatalf("after the commit of a ended, %s started; want the delete of a", got)
	}
	r.waitPool()
	// Each path's operations ended in the order they were asked for; the
	// paths' operations interleave as the goroutines run (the commit of b
	// may end before or after the commit of a).
	for path, want := range map[string][]string{
		"a/checkpoint_000001": {"commit a/checkpoint_000001", "delete a/checkpoint_000001"},
		"b/checkpoint_000002": {"delete b/checkpoint_000002", "commit b/checkpoint_000002"},
		"c/checkpoint_000000": {"commit c/checkpoint_000000"},
	} {
		var got []string
		for _, e := range st.log {
			if strings.HasSuffix(e, " "+path) {
				got = append(got, e)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("operations on %s ended in the order %q, want %q (all: %q)", path, got, want, st.log)
		}
	}
	if len(r.tails) != 0 {
		t.Errorf("paths still claimed after the pool drained: %v", r.tails)
	}
	if len(r.done) != 3 {
		t.Errorf("%d commits reported to the loop, want 3", len(r.done))
	}
}

// TestWaitPoolCancels: at the end, a store operation that outlasts the
// stop grace gets its context cancelled, and waitPool returns once it has
// given up, never before.
func TestWaitPoolCancels(t *testing.T) {
	r := &runner{async: true, sem: make(chan struct{}, poolWorkers), tails: map[string]chan struct{}{}, log: io.Discard, opts: Options{StopGrace: 1}}
	r.sctx, r.scancel = context.WithCancel(context.Background())
	var ended bool
	st := &stuckStore{ended: &ended}
	r.store = st
	r.remove("a/checkpoint_000000")
	r.waitPool()
	if !ended {
		t.Error("waitPool returned while the stuck delete was still running")
	}
}

// stuckStore's Delete blocks until its context ends.
type stuckStore struct {
	hone.Store
	ended *bool
}

func (s *stuckStore) Delete(ctx context.Context, _ string) error {
	<-ctx.Done()
	*s.ended = true
	return ctx.Err()
}

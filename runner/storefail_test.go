package runner_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/fifo"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/stopper"
	"github.com/hone-tune/hone/store/blob"
	"github.com/hone-tune/hone/store/local"
	"github.com/hone-tune/hone/store/storetest"
	"github.com/hone-tune/hone/trial"
	cblob "gocloud.dev/blob"
)

// failNth is a store whose nth commit (counted from 1, over the whole
// experiment) goes to bad instead, a store whose commits fail for good.
type failNth struct {
	hone.Store
	bad hone.Store
	n   int

	mu     sync.Mutex
	count  int
	failed string // the trial directory of the failed commit
	err    error
}

func (f *failNth) Commit(ctx context.Context, staged, dest string) error {
	f.mu.Lock()
	f.count++
	nth := f.count == f.n
	f.mu.Unlock()
	if !nth {
		return f.Store.Commit(ctx, staged, dest)
	}
	err := f.bad.Commit(ctx, staged, dest)
	f.mu.Lock()
	f.failed, f.err = path.Dir(dest), err
	f.mu.Unlock()
	if err == nil {
		return errors.New("the failing store committed")
	}
	return err
}

// alwaysFails is a store whose commits fail as a store that ran out of
// retries does.
type alwaysFails struct{ hone.Store }

func (alwaysFails) Commit(context.Context, string, string) error {
	return errors.New("upload trial/checkpoint_000002/state: 8 attempts: server error 503")
}

// iterations records the training iteration of every result, per trial
// directory.
type iterations struct {
	hone.NopCallback
	seen map[string][]int
}

func (it *iterations) OnTrialResult(t *hone.Trial, r *hone.Result) {
	it.seen[t.Dir] = append(it.seen[t.Dir], r.TrainingIteration)
}

// runFailingCommit runs two trials of steps steps, checkpointing every
// step, with max_failures 1, on st; the 5th commit fails.
func runFailingCommit(t *testing.T, dir string, st *failNth, steps int) (*runner.Outcome, *iterations) {
	t.Helper()
	sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, 2, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	it := &iterations{seen: map[string][]int{}}
	exp := &hone.Experiment{Name: "fail", Metric: "loss", Searcher: sr, Scheduler: &fifo.Scheduler{}, Seed: 1, MaxConcurrentTrials: 2,
		Failure:  hone.FailureConfig{MaxFailures: 1},
		Stoppers: []hone.Stopper{stopper.MaxIterations(steps)}, Callbacks: []hone.Callback{it}}
	out, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Store: st, Log: io.Discard,
		Executor: inproc.NewClass(func() trial.Trainable { return &checkpointing{} })})
	if err != nil {
		t.Fatalf("a permanently failed commit failed the experiment: %v", err)
	}
	return out, it
}

// checkRetried checks that the trial whose commit failed was failed once
// and retried from its latest checkpoint (its iterations go on from
// there, no restart from scratch), and the other trial ran through.
func checkRetried(t *testing.T, out *runner.Outcome, it *iterations, st *failNth, steps int) {
	t.Helper()
	if st.failed == "" {
		t.Fatal("no commit went to the failing store")
	}
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s ended %s (%s), want %s", tr.ID, tr.Status, tr.Error, hone.StatusTerminated)
		}
		want := 0
		if tr.Dir == st.failed {
			want = 1
		}
		if tr.Failures != want {
			t.Errorf("trial %s: %d failures, want %d (error %q)", tr.ID, tr.Failures, want, tr.Error)
		}
		got := it.seen[tr.Dir]
		var all []int
		for i := 1; i <= steps; i++ {
			all = append(all, i)
		}
		if tr.Dir != st.failed {
			if !slices.Equal(got, all) {
				t.Errorf("trial %s: iterations %v, want %v", tr.ID, got, all)
			}
			continue
		}
		// The failed save's result is not recorded; the retry restores
		// the checkpoint before it and goes on from the next iteration
		// (a restart from scratch would repeat iterations 1 and 2).
		if !slices.Equal(got, all) {
			t.Errorf("trial %s (failed commit): iterations %v, want %v", tr.ID, got, all)
		}
	}
}

// TestPermanentCommitErrorFailsTrial: a commit that fails for good (a
// store that ran out of retries) fails its trial, which max_failures
// retries from its latest checkpoint; the experiment completes.
func TestPermanentCommitErrorFailsTrial(t *testing.T) {
	const steps = 5
	dir := filepath.Join(t.TempDir(), "fail")
	ls, err := local.New(dir, local.NoSync())
	if err != nil {
		t.Fatal(err)
	}
	st := &failNth{Store: ls, bad: alwaysFails{ls}, n: 5}
	out, it := runFailingCommit(t, dir, st, steps)
	checkRetried(t, out, it, st, steps)
	// The staged copy of the checkpoint that failed is not left on disk.
	for _, tr := range out.Trials {
		if _, left, err := ls.List(context.Background(), tr.Dir); err != nil || len(left) != 0 {
			t.Errorf("trial %s: leftovers after the run: %q, %v; want none", tr.ID, left, err)
		}
	}
}

// planting is a store that, before its nth commit, writes a plain object
// at the key of the checkpoint's own prefix through the raw bucket, so
// that the real S3 server refuses the checkpoint's files for good (409:
// the object's parent already exists as a file).
type planting struct {
	hone.Store
	raw    *cblob.Bucket
	prefix string
	n      int

	mu     sync.Mutex
	count  int
	failed string
	err    error
}

func (p *planting) Commit(ctx context.Context, staged, dest string) error {
	p.mu.Lock()
	p.count++
	nth := p.count == p.n
	p.mu.Unlock()
	if nth {
		if err := p.raw.WriteAll(ctx, p.prefix+"/"+dest, []byte("in the way"), nil); err != nil {
			return fmt.Errorf("plant: %w", err)
		}
	}
	err := p.Store.Commit(ctx, staged, dest)
	if nth {
		// The fault was this commit's: the retry commits the same index.
		if derr := p.raw.Delete(ctx, p.prefix+"/"+dest); derr != nil {
			return fmt.Errorf("unplant: %w (after %v)", derr, err)
		}
		p.mu.Lock()
		p.failed, p.err = path.Dir(dest), err
		p.mu.Unlock()
	}
	return err
}

// TestS3PermanentCommitErrorFailsTrial: on the real S3 server, a commit
// the server refuses for good fails its trial, which max_failures
// retries from its latest checkpoint (downloaded from the server); the
// experiment completes.
func TestS3PermanentCommitErrorFailsTrial(t *testing.T) {
	u, err := url.Parse(storetest.S3URL(t, "exp"))
	if err != nil {
		t.Fatal(err)
	}
	prefix := strings.TrimPrefix(u.Path, "/")
	bucketURL := *u
	bucketURL.Path = ""
	ctx := context.Background()
	rb, err := cblob.OpenBucket(ctx, bucketURL.String())
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Close()
	dir := filepath.Join(t.TempDir(), "fail")
	bs, err := blob.Open(ctx, u.String(), filepath.Join(t.TempDir(), "cache"), blob.LocalRoot(dir),
		blob.WithRetry(blob.Retry{Attempts: 3, Base: 1, Max: 1}))
	if err != nil {
		t.Fatal(err)
	}
	defer bs.Close()
	const steps = 5
	st := &planting{Store: bs, raw: rb, prefix: prefix, n: 5}
	sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, 2, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	it := &iterations{seen: map[string][]int{}}
	exp := &hone.Experiment{Name: "fail", Metric: "loss", Searcher: sr, Scheduler: &fifo.Scheduler{}, Seed: 1, MaxConcurrentTrials: 2,
		Failure:  hone.FailureConfig{MaxFailures: 1},
		Stoppers: []hone.Stopper{stopper.MaxIterations(steps)}, Callbacks: []hone.Callback{it}}
	out, err := runner.Run(ctx, exp, runner.Options{Dir: dir, Store: st, Log: io.Discard,
		Executor: inproc.NewClass(func() trial.Trainable { return &checkpointing{} })})
	if err != nil {
		t.Fatalf("a commit the server refused failed the experiment: %v", err)
	}
	if st.err == nil || blob.Transient(st.err) {
		t.Fatalf("the planted object did not make the commit fail for good: %v", st.err)
	}
	t.Logf("refused commit: %v", st.err)
	checkRetried(t, out, it, &failNth{failed: st.failed}, steps)
	for _, tr := range out.Trials {
		if _, left, err := bs.List(ctx, tr.Dir); err != nil || len(left) != 0 {
			t.Errorf("trial %s: leftovers after the run: %q, %v; want none", tr.ID, left, err)
		}
	}
}

package runner_test

import (
	"context"
	"io"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
)

// concurrency counts the trials running at once and remembers the most.
type concurrency struct {
	hone.NopCallback
	mu        sync.Mutex
	now, most int
	results   int
	cancelAt  int
	cancel    context.CancelFunc
}

func (c *concurrency) OnTrialStart(*hone.Trial) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now++
	c.most = max(c.most, c.now)
}

func (c *concurrency) OnTrialResult(*hone.Trial, *hone.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.results++
	if c.results == c.cancelAt && c.cancel != nil {
		c.cancel()
	}
}

func (c *concurrency) OnTrialComplete(*hone.Trial) { c.done() }

func (c *concurrency) OnTrialError(*hone.Trial, error) { c.done() }

func (c *concurrency) done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now--
}

// TestResumeWithOtherSettings: an experiment interrupted mid-run resumes
// with other resources per trial, another concurrency cap and another
// retry count. The journal replays with the settings the first session ran
// with (so the rebuilt state matches it), and the new ones apply from the
// resume on: more trials run at once, and every trial finishes once.
func TestResumeWithOtherSettings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "settings")
	const iters, samples = 12, 8
	exp := func(cb hone.Callback, cpu float64, conc, retries int) *hone.Experiment {
		sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, samples, nil, 7)
		if err != nil {
			t.Fatal(err)
		}
		return &hone.Experiment{
			Name: "settings", Metric: "loss", Searcher: sr, Seed: 7,
			Resources: hone.Resources{CPU: cpu}, MaxConcurrentTrials: conc,
			Failure: hone.FailureConfig{MaxFailures: retries}, Callbacks: []hone.Callback{cb},
		}
	}
	opts := func() runner.Options {
		return runner.Options{Dir: dir, Log: io.Discard, Pool: hone.Resources{CPU: 2},
			Executor: sim.New(sim.Curve{MaxIterations: iters, CheckpointEvery: 1}.New)}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := &concurrency{cancelAt: 10, cancel: cancel}
	out, err := runner.Run(ctx, exp(first, 1, 0, 0), opts())
	if err != nil {
		t.Fatal(err)
	}
	if !out.Interrupted {
		t.Fatal("the first session was not interrupted")
	}
	if first.most != 2 {
		t.Fatalf("the first session ran %d trials at once, want 2 (1 CPU each on 2)", first.most)
	}

	second := &concurrency{}
	out, err = runner.Resume(context.Background(), exp(second, 0.5, 3, 2), opts(), hone.ResumeFlags{Unfinished: true})
	if err != nil {
		t.Fatalf("resume with other resources, concurrency and retries: %v", err)
	}
	if second.most != 3 {
		t.Errorf("the resumed session ran %d trials at once, want 3 (its cap; 0.5 CPU each on 2)", second.most)
	}
	if len(out.Trials) != samples {
		t.Fatalf("%d trials, want %d", len(out.Trials), samples)
	}
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusTerminated || iterOf(tr) != iters {
			t.Errorf("trial %s: %s at iteration %d, want TERMINATED at %d", tr.ID, tr.Status, iterOf(tr), iters)
		}
		if tr.Resources.CPU != 0.5 {
			t.Errorf("trial %s needs %v CPU after the resume, want 0.5", tr.ID, tr.Resources.CPU)
		}
	}

	// A third session, with the first session's spec again, replays both
	// earlier sessions with their own settings and finds nothing to do.
	third := &concurrency{}
	out, err = runner.Resume(context.Background(), exp(third, 1, 0, 0), opts(), hone.ResumeFlags{Unfinished: true})
	if err != nil {
		t.Fatalf("resume of the finished experiment: %v", err)
	}
	if third.most != 0 {
		t.Errorf("resuming the finished experiment started %d trials", third.most)
	}
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s: %s after the third session", tr.ID, tr.Status)
		}
	}
}

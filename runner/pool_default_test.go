package runner_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
)

// liveCounter is a callback that records the most trials running at once.
type liveCounter struct {
	hone.NopCallback
	live, most int
}

func (l *liveCounter) OnTrialStart(*hone.Trial) {
	l.live++
	l.most = max(l.most, l.live)
}
func (l *liveCounter) OnTrialComplete(*hone.Trial)     { l.live-- }
func (l *liveCounter) OnTrialError(*hone.Trial, error) { l.live-- }

// mostAtOnce runs n simulated trials of 5 iterations each with the
// default pool and returns the most that ran at once.
func mostAtOnce(t *testing.T, n, maxConcurrent int) int {
	t.Helper()
	sr, err := random.New(space.Space{"rate": space.Uniform(0.1, 0.5)}, n, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	lc := &liveCounter{}
	exp := &hone.Experiment{Name: "pool", Metric: "loss", Mode: hone.Min, Searcher: sr, Seed: 1,
		MaxConcurrentTrials: maxConcurrent, Callbacks: []hone.Callback{lc}}
	dir := filepath.Join(t.TempDir(), "pool")
	out, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Executor: sim.New(sim.Curve{MaxIterations: 5}.New), Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusTerminated {
			t.Fatalf("trial %s: %s", tr.ID, tr.Status)
		}
	}
	return lc.most
}

// TestVirtualPoolDefault checks that the simulated executor, which has no
// cores, is not capped by the machine's: with the default pool every trial
// runs at once unless MaxConcurrentTrials says otherwise, on any machine.
func TestVirtualPoolDefault(t *testing.T) {
	if got := mostAtOnce(t, 12, 0); got != 12 {
		t.Errorf("12 simulated trials, no limit: %d ran at once, want 12", got)
	}
	if got := mostAtOnce(t, 12, 5); got != 5 {
		t.Errorf("12 simulated trials, max_concurrent_trials 5: %d ran at once, want 5", got)
	}
	p := runner.VirtualPool(&hone.Experiment{MaxConcurrentTrials: 4000, Resources: hone.Resources{CPU: 2, GPU: 0.5, Custom: map[string]float64{"tpu": 1}}})
	if p.CPU != 8000 || p.GPU != 2000 || p.Custom["tpu"] != 4000 {
		t.Errorf("VirtualPool for 4000 trials of cpu=2 gpu=0.5 tpu=1: %s", p)
	}
}

// TestResourcesBeyondPool checks that trials that can never get their
// resources are an error before the experiment starts: nothing is
// written, no trial runs.
func TestResourcesBeyondPool(t *testing.T) {
	sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, 2, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	exp := &hone.Experiment{Name: "big", Metric: "loss", Searcher: sr, Seed: 1, Resources: hone.Resources{CPU: 4, GPU: 1}}
	dir := filepath.Join(t.TempDir(), "big")
	_, err = runner.Run(context.Background(), exp, runner.Options{Dir: dir, Executor: sim.New(sim.Curve{MaxIterations: 5}.New),
		Pool: hone.Resources{CPU: 8}, Log: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "each trial needs cpu=4 gpu=1 but the whole resource pool has cpu=8") {
		t.Fatalf("run: %v; want an error naming the trial's needs and the pool", err)
	}
	if _, serr := os.Stat(dir); !os.IsNotExist(serr) {
		t.Errorf("the refused experiment left %s: %v", dir, serr)
	}
}

package runner_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/fifo"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/stopper"
	"github.com/hone-tune/hone/store/local"
	"github.com/hone-tune/hone/trial"
)

// alwaysPause pauses every trial after every result (Ray's "frequent
// pausing" release test); FIFO brings paused trials back.
type alwaysPause struct{ fifo.Scheduler }

func (alwaysPause) OnResult(hone.Control, *hone.Trial, *hone.Result) hone.Decision { return hone.Pause }

// counter is a class-style trainable with a 64 KiB checkpoint.
type counter struct{ n int }

func (c *counter) Setup(hone.Config) error { return nil }
func (c *counter) Step(context.Context) (trial.Metrics, error) {
	c.n++
	return trial.Metrics{"loss": 1 / float64(c.n)}, nil
}
func (c *counter) Save(dir string) error {
	b := make([]byte, 64<<10)
	b[0] = byte(c.n)
	b[1] = byte(c.n >> 8)
	return os.WriteFile(filepath.Join(dir, "state"), b, 0o644)
}
func (c *counter) Load(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "state"))
	if err != nil {
		return err
	}
	c.n = int(b[0]) | int(b[1])<<8
	return nil
}

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// TestFrequentPausing: a scheduler that pauses on every report, a
// checkpoint per pause, thousands of pause/resume cycles: every trial
// finishes with the right count, no files beyond num_to_keep are left,
// and goroutines and file descriptors return to where they started.
func TestFrequentPausing(t *testing.T) {
	const trials, steps = 4, 300
	fds, goroutines := openFDs(t), runtime.NumGoroutine()
	dir := filepath.Join(t.TempDir(), "pausing")
	sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, trials, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	exp := &hone.Experiment{Name: "pausing", Metric: "loss", Searcher: sr, Scheduler: alwaysPause{},
		Stoppers: []hone.Stopper{stopper.MaxIterations(steps)}, MaxConcurrentTrials: 2, Seed: 1,
		Checkpoint: hone.CheckpointConfig{NumToKeep: 2}}
	st, err := local.New(dir, local.NoSync())
	if err != nil {
		t.Fatal(err)
	}
	out, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Store: st, Log: io.Discard,
		Executor: inproc.NewClass(func() trial.Trainable { return &counter{} })})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusTerminated || tr.LastResult.TrainingIteration != steps {
			t.Fatalf("trial %s: %s at %d", tr.ID, tr.Status, tr.LastResult.TrainingIteration)
		}
		if loss, _ := tr.LastResult.Value("loss"); loss != 1/float64(steps) {
			t.Fatalf("trial %s lost progress across pauses: loss %v, want %v", tr.ID, loss, 1/float64(steps))
		}
		cps, _ := filepath.Glob(filepath.Join(dir, tr.Dir, "checkpoint_*"))
		staged, _ := filepath.Glob(filepath.Join(dir, tr.Dir, ".staging", "*"))
		if len(cps) > 2 || len(staged) > 0 {
			t.Fatalf("trial %s left %d checkpoints and %d staging dirs", tr.ID, len(cps), len(staged))
		}
	}
	if n := openFDs(t); n > fds {
		t.Errorf("%d file descriptors open after the run, %d before", n, fds)
	}
	runtime.GC()
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Errorf("%d goroutines after the run, %d before", n, goroutines)
	}
}

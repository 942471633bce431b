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

// heapSampler records the live heap, after a collection, when the
// experiment has processed each of the given numbers of results.
type heapSampler struct {
	hone.NopCallback
	at      map[int]bool
	results int
	heap    map[int]uint64
}

func (h *heapSampler) OnTrialResult(*hone.Trial, *hone.Result) {
	h.results++
	if h.at[h.results] {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		h.heap[h.results] = ms.HeapAlloc
	}
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
// goroutines and file descriptors return to where they started, and the
// live heap stays flat from the first thousand cycles to the last.
func TestFrequentPausing(t *testing.T) {
	const trials, steps = 4, 750
	const early, late = 1000, trials * steps
	mem := &heapSampler{at: map[int]bool{early: true, late: true}, heap: map[int]uint64{}}
	fds, goroutines := openFDs(t), runtime.NumGoroutine()
	dir := filepath.Join(t.TempDir(), "pausing")
	sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, trials, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	exp := &hone.Experiment{Name: "pausing", Metric: "loss", Searcher: sr, Scheduler: alwaysPause{},
		Stoppers: []hone.Stopper{stopper.MaxIterations(steps)}, MaxConcurrentTrials: 2, Seed: 1,
		Checkpoint: hone.CheckpointConfig{NumToKeep: 2}, Callbacks: []hone.Callback{mem}}
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
	// A leak of 512 bytes per pause/resume cycle would add 1 MiB here.
	grown := int64(mem.heap[late]) - int64(mem.heap[early])
	t.Logf("live heap after %d cycles: %d bytes; after %d: %d bytes", early, mem.heap[early], late, mem.heap[late])
	if len(mem.heap) != 2 || grown > 1<<20 {
		t.Errorf("live heap grew by %d bytes over %d pause/resume cycles (samples %v)", grown, late-early, mem.heap)
	}
	if n := openFDs(t); n > fds {
		t.Errorf("%d file descriptors open after the run, %d before", n, fds)
	}
	runtime.GC()
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Errorf("%d goroutines after the run, %d before", n, goroutines)
	}
}

package runner_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/callback"
	"github.com/hone-tune/hone/controller"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
	"github.com/hone-tune/hone/trial"
)

// fullSteps is how many results each trial of the disk-full experiments
// reports; each checkpoints once, at step 2, before the disk fills.
const fullSteps = 40

func fullStepper(ctx context.Context, s trial.Session) error {
	step, err := restoredStep(s)
	if err != nil {
		return err
	}
	for step < fullSteps {
		step++
		var opts []trial.ReportOption
		if step == 2 {
			if opts, err = savedStep(s, step); err != nil {
				return err
			}
		}
		if err := s.Report(trial.Metrics{"loss": 1 / float64(step), "step": step}, opts...); err != nil {
			return err
		}
	}
	return nil
}

func fullExperiment(cbs ...hone.Callback) *hone.Experiment {
	// The large constant makes each result.json row (which holds the
	// configuration) far longer than its journal line, so on a full disk
	// the rows fail to be written while the journal still has room.
	sr, err := random.New(space.Space{"x": space.Uniform(0, 6), "blob": strings.Repeat("b", 3000)}, 3, nil, 8)
	if err != nil {
		panic(err)
	}
	return &hone.Experiment{Name: "full", Metric: "loss", Mode: hone.Min, Searcher: sr, Seed: 8,
		MaxConcurrentTrials: 3, Callbacks: cbs}
}

func fullOptions(t *testing.T, dir string, log io.Writer) runner.Options {
	st, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	o := runner.Options{Dir: dir, Executor: inproc.NewFunc(fullStepper), Store: st, Log: log, Pool: hone.Resources{CPU: 3}}
	runner.SetFlushEvery(&o, time.Nanosecond) // rows are written as they come, not after the journal's lines
	return o
}

// checkFullRows checks that every trial ended TERMINATED and that its
// result.json and progress.csv hold exactly the journal's results, in
// order.
func checkFullRows(t *testing.T, dir string, out *runner.Outcome) {
	t.Helper()
	j, err := journal.Read(filepath.Join(dir, journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := controller.New(fullExperiment(), hone.Resources{CPU: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	for _, l := range j.Lines {
		if l.Event == nil {
			continue
		}
		ctl.Step(*l.Event)
		for _, a := range ctl.Ready() {
			if a.Kind == controller.ActNotify && a.Note == controller.NoteResult {
				step, _ := hone.Number(a.Result.Metrics["step"])
				want[a.Trial.ID] = append(want[a.Trial.ID], fmt.Sprintf("%d/%d", int(step), a.Result.TrainingIteration))
			}
		}
	}
	if len(out.Trials) != 3 {
		t.Fatalf("%d trials, want 3", len(out.Trials))
	}
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s ended %s (%s), want TERMINATED", tr.ID, tr.Status, tr.Error)
		}
		js, cs := fileRows(t, filepath.Join(dir, tr.Dir))
		w := want[tr.ID]
		if strings.Join(js, " ") != strings.Join(w, " ") || strings.Join(cs, " ") != strings.Join(w, " ") {
			t.Errorf("trial %s: the journal has results %v;\nresult.json holds %v\nprogress.csv holds %v", tr.ID, w, js, cs)
		}
		if len(w) == 0 || !strings.HasPrefix(w[len(w)-1], strconv.Itoa(fullSteps)+"/") {
			t.Errorf("trial %s did not reach step %d: %v", tr.ID, fullSteps, w)
		}
	}
}

// filler fills the file system at path, from the runner's goroutine, once
// every trial has reported at least three results (all have checkpointed).
type filler struct {
	hone.NopCallback
	path   string
	counts map[string]int
	done   bool
	err    error
}

func (f *filler) OnTrialResult(t *hone.Trial, _ *hone.Result) {
	if f.done {
		return
	}
	f.counts[t.ID]++
	if len(f.counts) < 3 {
		return
	}
	for _, n := range f.counts {
		if n < 3 {
			return
		}
	}
	f.done = true
	f.err = fillFS(f.path)
}

// fillFS writes the file p until its file system is full.
func fillFS(p string) error {
	file, err := os.Create(p)
	if err != nil {
		return err
	}
	defer file.Close()
	for _, size := range []int{1 << 20, 4 << 10, 1} {
		buf := make([]byte, size)
		for {
			if _, err := file.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					return err
				}
				break
			}
		}
	}
	return nil
}

// smallFS mounts a small file system of the kind ("tmpfs" or "ext4", a
// loop-mounted image) on a new directory and returns it; it is unmounted
// at the end of the test. It skips the test, loudly, when not root.
func smallFS(t *testing.T, kind string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED: mounting a small file system needs root; TestFlushFailureStopsAndResumes covers the runner with an injected full disk")
	}
	root := t.TempDir()
	mnt := filepath.Join(root, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	var cmds [][]string
	switch kind {
	case "tmpfs":
		cmds = [][]string{{"mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt}}
	case "ext4":
		img := filepath.Join(root, "img")
		cmds = [][]string{{"truncate", "-s", "16M", img}, {"mkfs.ext4", "-q", "-m", "0", img}, {"mount", "-o", "loop", img, mnt}}
	}
	for _, c := range cmds {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Skipf("SKIPPED: cannot make a small %s (%v): %v: %s", kind, c, err, out)
		}
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	return mnt
}

// TestDiskFullStopsAndResumesWithEveryRow runs an experiment on a real
// small file system (a size-limited tmpfs, and a loop-mounted ext4 image)
// that fills up while trials report. The experiment must stop with the
// full disk as its error and say so in its log, without recording rows it
// could not write as safe; once space is freed, resume completes it with
// every result row in the files exactly once and in order.
func TestDiskFullStopsAndResumesWithEveryRow(t *testing.T) {
	for _, kind := range []string{"tmpfs", "ext4"} {
		t.Run(kind, func(t *testing.T) {
			mnt := smallFS(t, kind)
			dir := filepath.Join(mnt, "exp")
			fill := &filler{path: filepath.Join(mnt, "filler"), counts: map[string]int{}}
			files := callback.NewTrialFiles(dir)
			var log bytes.Buffer
			_, err := runner.Run(context.Background(), fullExperiment(fill, files), fullOptions(t, dir, &log))
			files.Close() // the disk is still full: what it could not write is lost, as in a process that dies now
			if fill.err != nil || !fill.done {
				t.Fatalf("filling the file system: done %v, %v", fill.done, fill.err)
			}
			if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "no space left on device") {
				t.Fatalf("Run on a full disk = %v, want the ENOSPC error", err)
			}
			if !strings.Contains(log.String(), "the disk is full") {
				t.Errorf("the experiment log does not say the disk is full:\n%s", log.String())
			}
			t.Logf("stopped with: %v", err)

			if err := os.Remove(fill.path); err != nil {
				t.Fatal(err)
			}
			files = callback.NewTrialFiles(dir)
			out, err := runner.Resume(context.Background(), fullExperiment(files), fullOptions(t, dir, io.Discard), hone.ResumeFlags{Unfinished: true})
			if err != nil {
				t.Fatalf("resume once there is space: %v", err)
			}
			if err := files.Close(); err != nil {
				t.Fatal(err)
			}
			checkFullRows(t, dir, out)
		})
	}
}

// fullFiles wraps the per-trial files; once full is set every FlushResults
// fails as on a full disk, and writes nothing.
type fullFiles struct {
	*callback.TrialFiles
	results int
	fullAt  int // the result after which the disk is full
}

func (f *fullFiles) OnTrialResult(t *hone.Trial, r *hone.Result) {
	f.results++
	f.TrialFiles.OnTrialResult(t, r)
}

func (f *fullFiles) FlushResults(sync bool) error {
	if f.results >= f.fullAt {
		return &hone.TrialError{TrialID: "any", Err: &fs.PathError{Op: "write", Path: "result.json", Err: syscall.ENOSPC}}
	}
	return f.TrialFiles.FlushResults(sync)
}

// TestFlushFailureStopsAndResumes is the disk-full test without root: the
// per-trial files' flush fails (injected) from the 20th result on, and the
// process then dies with the rows it could not write. The experiment stops
// with the error, and resume writes every row the files lack.
func TestFlushFailureStopsAndResumes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "exp")
	files := &fullFiles{TrialFiles: callback.NewTrialFiles(dir, callback.NoSync()), fullAt: 20}
	var log bytes.Buffer
	_, err := runner.Run(context.Background(), fullExperiment(files), fullOptions(t, dir, &log))
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Run with failing flushes = %v, want the ENOSPC error", err)
	}
	if !strings.Contains(log.String(), "the disk is full") {
		t.Errorf("the experiment log does not say the disk is full:\n%s", log.String())
	}
	// files is dropped unflushed: its buffered rows die with the process.

	resumed := callback.NewTrialFiles(dir, callback.NoSync())
	out, err := runner.Resume(context.Background(), fullExperiment(resumed), fullOptions(t, dir, io.Discard), hone.ResumeFlags{Unfinished: true})
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if err := resumed.Close(); err != nil {
		t.Fatal(err)
	}
	checkFullRows(t, dir, out)
}

// TestTrialOnFullDiskStopsTheExperiment: a trial whose own write fails
// with ENOSPC is not failed (it would end ERROR for want of space): the
// experiment stops, resumably, as when the runner's writes meet a full
// disk, and resume continues the trial from its checkpoint.
func TestTrialOnFullDiskStopsTheExperiment(t *testing.T) {
	testTrialStopsTheExperiment(t, &fs.PathError{Op: "write", Path: "model.bin", Err: syscall.ENOSPC},
		func(err error) bool {
			return errors.Is(err, syscall.ENOSPC) && strings.Contains(err.Error(), "model.bin: no space left on device")
		},
		"the disk is full")
}

// TestTrialStopsTheExperiment: the same for a trial whose executor says
// the cause is where it ran (hone.ErrStopExperiment), as a cluster node
// that does not see the storage.
func TestTrialStopsTheExperiment(t *testing.T) {
	fault := fmt.Errorf("node n7 does not see the storage: %w", hone.ErrStopExperiment)
	testTrialStopsTheExperiment(t, fault,
		func(err error) bool {
			return errors.Is(err, hone.ErrStopExperiment) && strings.Contains(err.Error(), "node n7")
		},
		"")
}

// testTrialStopsTheExperiment runs a trial that fails once with fault
// after its checkpoint at step 2: Run must return an error ok accepts (and
// log want), and a resume must finish the trial with no failure counted.
func testTrialStopsTheExperiment(t *testing.T, fault error, ok func(error) bool, want string) {
	dir := filepath.Join(t.TempDir(), "exp")
	marker := filepath.Join(t.TempDir(), "full-once")
	step := func(ctx context.Context, s trial.Session) error {
		if _, err := os.Stat(marker); errors.Is(err, os.ErrNotExist) {
			if s.Iteration() == 0 {
				// The first run: report twice, checkpoint,
				// then fail to write as on a full disk.
				for i := 1; i <= 2; i++ {
					var opts []trial.ReportOption
					if i == 2 {
						d, err := s.StagingDir()
						if err != nil {
							return err
						}
						if err := os.WriteFile(filepath.Join(d, "step"), []byte("2"), 0o644); err != nil {
							return err
						}
						opts = append(opts, trial.WithCheckpoint(d))
					}
					if err := s.Report(trial.Metrics{"loss": 1 / float64(i), "step": i}, opts...); err != nil {
						return err
					}
				}
				if err := os.WriteFile(marker, nil, 0o644); err != nil {
					return err
				}
				return fault
			}
		}
		return fullStepper(ctx, s)
	}
	sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, 1, nil, 8)
	if err != nil {
		t.Fatal(err)
	}
	exp := func(files hone.Callback) *hone.Experiment {
		return &hone.Experiment{Name: "trialfull", Metric: "loss", Mode: hone.Min, Searcher: sr, Seed: 8, Callbacks: []hone.Callback{files}}
	}
	opts := func(log io.Writer) runner.Options {
		st, err := local.New(dir, local.NoSync())
		if err != nil {
			t.Fatal(err)
		}
		return runner.Options{Dir: dir, Executor: inproc.NewFunc(step), Store: st, Log: log}
	}
	files := callback.NewTrialFiles(dir, callback.NoSync())
	var log bytes.Buffer
	_, err = runner.Run(context.Background(), exp(files), opts(&log))
	files.Close()
	if !ok(err) {
		t.Fatalf("Run = %v, want the trial's %v", err, fault)
	}
	if !strings.Contains(log.String(), want) {
		t.Errorf("the log does not say %q:\n%s", want, log.String())
	}
	sr, err = random.New(space.Space{"x": space.Uniform(0, 1)}, 1, nil, 8)
	if err != nil {
		t.Fatal(err)
	}
	files = callback.NewTrialFiles(dir, callback.NoSync())
	out, err := runner.Resume(context.Background(), exp(files), opts(io.Discard), hone.ResumeFlags{Unfinished: true})
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if err := files.Close(); err != nil {
		t.Fatal(err)
	}
	tr := out.Trials[0]
	if tr.Status != hone.StatusTerminated || tr.Failures != 0 {
		t.Fatalf("trial %s with %d failures (%s), want TERMINATED with none", tr.Status, tr.Failures, tr.Error)
	}
	js, _ := fileRows(t, filepath.Join(dir, tr.Dir))
	if len(js) != fullSteps || js[2] != "3/3" {
		t.Fatalf("rows %v: want steps 1..%d, the resume going on from the checkpoint at 2", js, fullSteps)
	}
}

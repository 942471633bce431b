package runner_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/callback"
	"github.com/hone-tune/hone/controller"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/internal/scratch"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
)

// killCase is one experiment of TestKillKeepsResultRows, and how its first
// process dies.
type killCase struct {
	Samples, Iters, CkptEvery, Concurrency int
	// KillAtEvent kills the process in the executor's Next after that many
	// events; KillAfterFlush kills it right after the per-trial files'
	// k-th FlushResults returns, before the runner journals that they did.
	// Zero: not that way.
	KillAtEvent, KillAfterFlush int
	// FlushEvery is how long results wait in the files' buffers.
	FlushEvery time.Duration
}

func (kc killCase) experiment(files hone.Callback) *hone.Experiment {
	sr, err := random.New(space.Space{
		"rate":      space.Uniform(0.05, 0.5),
		"asymptote": space.Uniform(0, 1),
	}, kc.Samples, nil, 3)
	if err != nil {
		panic(err)
	}
	e := &hone.Experiment{Name: "kill", Metric: "loss", Mode: hone.Min, Searcher: sr, Seed: 3,
		MaxConcurrentTrials: kc.Concurrency}
	if files != nil {
		e.Callbacks = []hone.Callback{files}
	}
	return e
}

func (kc killCase) options(dir string, e hone.Executor) runner.Options {
	st, _ := local.New(dir, local.NoSync())
	o := runner.Options{Dir: dir, Executor: e, Store: st, Log: io.Discard, Pool: hone.Resources{CPU: 4}}
	runner.SetFlushEvery(&o, kc.FlushEvery)
	return o
}

func (kc killCase) executor() hone.Executor {
	return sim.New(sim.Curve{Noise: 0.01, Seed: 5, MaxIterations: kc.Iters, CheckpointEvery: kc.CkptEvery}.New)
}

// killing SIGKILLs its own process in Next after n events: nothing runs
// after it, not even deferred functions.
type killing struct {
	hone.Executor
	n int
}

func (k *killing) Next(ctx context.Context) (hone.Event, error) {
	if k.n == 0 {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	k.n--
	return k.Executor.Next(ctx)
}

func (k *killing) Clock() hone.Clock { return k.Executor.(hone.Clocked).Clock() }

// killingFiles SIGKILLs its own process right after the wrapped files'
// n-th FlushResults.
type killingFiles struct {
	*callback.TrialFiles
	n int
}

func (k *killingFiles) FlushResults(sync bool) error {
	err := k.TrialFiles.FlushResults(sync)
	if k.n--; k.n == 0 {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	return err
}

const killChildEnv = "HONE_TEST_KILL_CHILD"

// runKillChild is the first process of a TestKillKeepsResultRows case.
func runKillChild(spec string) {
	var kc struct {
		killCase
		Dir string
	}
	if err := json.Unmarshal([]byte(spec), &kc); err != nil {
		panic(err)
	}
	files := callback.NewTrialFiles(kc.Dir, callback.NoSync())
	var cb hone.Callback = files
	if kc.KillAfterFlush > 0 {
		cb = &killingFiles{TrialFiles: files, n: kc.KillAfterFlush}
	}
	e := kc.executor()
	if kc.KillAtEvent > 0 {
		e = &killing{Executor: e, n: kc.KillAtEvent}
	}
	if _, err := runner.Run(context.Background(), kc.experiment(cb), kc.options(kc.Dir, e)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	files.Close()
}

// TestKillKeepsResultRows kills a process running an experiment — at an
// event, or between the per-trial files' flush and the journal record that
// it happened — resumes it, and checks that each trial's result.json and
// progress.csv hold exactly the results the journal holds, in order: none
// lost to the buffers, none written twice.
func TestKillKeepsResultRows(t *testing.T) {
	if os.Getenv(killChildEnv) != "" {
		t.Skip("child")
	}
	rng := rand.New(rand.NewPCG(7, 7))
	root, err := os.MkdirTemp(scratch.Dir(), "hone-kill-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)
	killed := 0
	for i := range 24 {
		kc := killCase{
			Samples: 1 + rng.IntN(6), Iters: 1 + rng.IntN(12), CkptEvery: 1 + rng.IntN(4),
			Concurrency: 1 + rng.IntN(3),
			FlushEvery:  []time.Duration{time.Nanosecond, 50 * time.Microsecond, time.Hour}[rng.IntN(3)],
		}
		if i%2 == 0 {
			kc.KillAtEvent = 1 + rng.IntN(kc.Samples*(kc.Iters+1))
		} else {
			kc.KillAfterFlush = 1 + rng.IntN(4)
			if kc.FlushEvery == time.Hour {
				kc.FlushEvery = time.Nanosecond
			}
		}
		dir := filepath.Join(root, strconv.Itoa(i))
		spec, _ := json.Marshal(struct {
			killCase
			Dir string
		}{kc, dir})
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillKeepsResultRows$")
		cmd.Env = append(os.Environ(), killChildEnv+"="+string(spec))
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok && ee.ProcessState.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
			killed++
		} else if err != nil {
			t.Fatalf("case %+v: child: %v\n%s", kc, err, out)
		}

		files := callback.NewTrialFiles(dir, callback.NoSync())
		if _, err := runner.Resume(context.Background(), kc.experiment(files), kc.options(dir, kc.executor()), hone.ResumeFlags{Unfinished: true}); err != nil {
			t.Fatalf("case %+v: resume: %v", kc, err)
		}
		if err := files.Close(); err != nil {
			t.Fatal(err)
		}
		want, dirs := journaledIterations(t, kc, dir)
		for id, iters := range want {
			got := rowIterations(t, filepath.Join(dir, dirs[id]))
			if !slices.Equal(got.json, iters) || !slices.Equal(got.csv, iters) {
				t.Fatalf("case %+v: trial %s: journal has iterations %v; result.json %v, progress.csv %v", kc, id, iters, got.json, got.csv)
			}
		}
	}
	if killed < 12 {
		t.Errorf("only %d of 24 first runs were killed; the cases do not test kills", killed)
	}
}

// journaledIterations replays dir's journal through a fresh controller and
// returns, per trial, the training iteration of every result it notifies,
// and the trials' directories.
func journaledIterations(t *testing.T, kc killCase, dir string) (map[string][]string, map[string]string) {
	j, err := journal.Read(filepath.Join(dir, journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := controller.New(kc.experiment(nil), hone.Resources{CPU: 4})
	if err != nil {
		t.Fatal(err)
	}
	iters, dirs := map[string][]string{}, map[string]string{}
	for _, l := range j.Lines {
		if l.Event == nil {
			continue
		}
		ctl.Step(*l.Event)
		for _, a := range ctl.Ready() {
			if a.Kind == controller.ActNotify && a.Note == controller.NoteResult {
				iters[a.Trial.ID] = append(iters[a.Trial.ID], strconv.Itoa(a.Result.TrainingIteration))
				dirs[a.Trial.ID] = a.Trial.Dir
			}
		}
	}
	return iters, dirs
}

type rowIters struct{ json, csv []string }

// rowIterations reads the training iterations of a trial's result.json and
// progress.csv rows.
func rowIterations(t *testing.T, trialDir string) rowIters {
	var out rowIters
	data, err := os.ReadFile(filepath.Join(trialDir, callback.ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var row map[string]any
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("%s: %q: %v", trialDir, line, err)
		}
		out.json = append(out.json, strconv.Itoa(int(row[hone.FieldTrainingIteration].(float64))))
	}
	f, err := os.Open(filepath.Join(trialDir, callback.ProgressFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(recs[0], hone.FieldTrainingIteration)
	for _, r := range recs[1:] {
		out.csv = append(out.csv, r[col])
	}
	return out
}

package local_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
)

// crashChildEnv holds the crashCase of the process that
// TestCrashAfterCommitRenameThenResume starts and kills.
const crashChildEnv = "HONE_TEST_COMMIT_CRASH_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(crashChildEnv); spec != "" {
		runCrashChild(spec)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// crashCase is an experiment whose process dies inside its CrashAt-th
// checkpoint commit, right after the rename that gives the checkpoint its
// committed name and before the fsyncs of the parent directories.
type crashCase struct {
	Dir     string
	CrashAt int
}

func crashExperiment() *hone.Experiment {
	sr, err := random.New(space.Space{
		"rate":      space.Uniform(0.05, 0.5),
		"asymptote": space.Uniform(0, 1),
	}, 4, nil, 13)
	if err != nil {
		panic(err)
	}
	return &hone.Experiment{Name: "commitcrash", Metric: "loss", Mode: hone.Min, Searcher: sr, Seed: 13,
		MaxConcurrentTrials: 2}
}

func crashExecutor() hone.Executor {
	return sim.New(sim.Curve{Noise: 0.01, Seed: 5, MaxIterations: 5, CheckpointEvery: 1}.New)
}

// runCrashChild runs the experiment of the crashCase spec on a durable
// store whose CrashAt-th commit renames the staged checkpoint into place,
// empties its files and SIGKILLs the process. Emptying them stands for
// anything a crash can leave under a name the journal does not register:
// resume must delete such a checkpoint without reading it.
func runCrashChild(spec string) {
	var c crashCase
	if err := json.Unmarshal([]byte(spec), &c); err != nil {
		panic(err)
	}
	st, err := local.New(c.Dir)
	if err != nil {
		panic(err)
	}
	staging := string(filepath.Separator) + local.StagingDirName + string(filepath.Separator)
	commits := 0
	local.SetRename(st, func(o, n string) error {
		if !strings.Contains(o, staging) {
			return os.Rename(o, n)
		}
		if commits++; commits < c.CrashAt {
			return os.Rename(o, n)
		}
		if err := os.Rename(o, n); err != nil {
			panic(err)
		}
		err := filepath.WalkDir(n, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				err = os.Truncate(p, 0)
			}
			return err
		})
		if err != nil {
			panic(err)
		}
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	})
	_, err = runner.Run(context.Background(), crashExperiment(), runner.Options{Dir: c.Dir, Executor: crashExecutor(), Store: st, Log: io.Discard})
	fmt.Fprintf(os.Stderr, "the run ended (%v) before commit %d\n", err, c.CrashAt)
	os.Exit(1)
}

// firstStarts remembers the first StartSpec of each trial.
type firstStarts struct {
	hone.Executor
	starts map[string]hone.StartSpec
}

func (f *firstStarts) Start(spec hone.StartSpec) error {
	if _, ok := f.starts[spec.TrialID]; !ok {
		f.starts[spec.TrialID] = spec
	}
	return f.Executor.Start(spec)
}

func (f *firstStarts) Clock() hone.Clock { return f.Executor.(hone.Clocked).Clock() }

type outcome struct {
	status hone.Status
	iter   int
	loss   float64
}

func outcomes(trials []*hone.Trial) map[string]outcome {
	out := map[string]outcome{}
	for _, tr := range trials {
		o := outcome{status: tr.Status}
		if tr.LastResult != nil {
			o.iter = tr.LastResult.TrainingIteration
			o.loss, _ = tr.LastResult.Value("loss")
		}
		out[tr.ID] = o
	}
	return out
}

// TestCrashAfterCommitRenameThenResume pins what makes a commit cut short
// harmless: a process killed inside a commit, after the rename and before
// the fsyncs that follow it, leaves a checkpoint under its committed name
// that the journal never registered (the runner journals a checkpoint only
// after Commit returns), so resume deletes it before any trial runs,
// whatever it holds, the trial restarts from its latest registered
// checkpoint, and the experiment ends as an uninterrupted one does. It is
// also what would let Commit rename before it fsyncs the checkpoint's
// content.
func TestCrashAfterCommitRenameThenResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills processes")
	}
	root := t.TempDir()
	plain, err := local.New(filepath.Join(root, "uninterrupted"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := runner.Run(context.Background(), crashExperiment(), runner.Options{Dir: plain.Root(), Executor: crashExecutor(), Store: plain, Log: io.Discard})
	if err != nil {
		t.Fatalf("uninterrupted run: %v", err)
	}
	for _, at := range []int{1, 2, 7, 13} {
		dir := filepath.Join(root, strconv.Itoa(at))
		spec, err := json.Marshal(crashCase{Dir: dir, CrashAt: at})
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashAfterCommitRenameThenResume$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+string(spec))
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("commit %d: the child was not killed in its commit: %v\n%s", at, err, out)
		}

		// The checkpoint whose commit was cut short is on disk under a
		// committed name, emptied, and not in the journal.
		before, err := results.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		registered := map[string]bool{}
		latest := map[string]string{} // trial ID → its latest registered checkpoint
		owner := map[string]string{}  // trial directory → trial ID
		for _, tr := range before.Trials {
			for _, c := range tr.Checkpoints {
				registered[c] = true
			}
			if n := len(tr.Checkpoints); n > 0 {
				latest[tr.ID] = tr.Checkpoints[n-1]
			}
			owner[filepath.Base(tr.Dir)] = tr.ID
		}
		onDisk, err := filepath.Glob(filepath.Join(dir, "*", "checkpoint_*"))
		if err != nil {
			t.Fatal(err)
		}
		// Commits before it may be unregistered too: the kill can take
		// their journal lines with it. Those are complete.
		var unregistered, cut []string
		for _, p := range onDisk {
			if registered[p] {
				continue
			}
			unregistered = append(unregistered, p)
			b, err := os.ReadFile(filepath.Join(p, sim.StateFile))
			if err != nil {
				t.Fatal(err)
			}
			if len(b) == 0 {
				cut = append(cut, p)
			}
		}
		if len(cut) != 1 {
			t.Fatalf("commit %d: emptied unregistered checkpoints after the crash: %q (unregistered: %q), want the one cut short", at, cut, unregistered)
		}
		id := owner[filepath.Base(filepath.Dir(cut[0]))]

		st, err := local.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		rec := &firstStarts{Executor: crashExecutor(), starts: map[string]hone.StartSpec{}}
		got, err := runner.Resume(context.Background(), crashExperiment(), runner.Options{Dir: dir, Executor: rec, Store: st, Log: &log},
			hone.ResumeFlags{Unfinished: true})
		if err != nil {
			t.Fatalf("commit %d: resume: %v\n%s", at, err, log.String())
		}
		for _, p := range unregistered {
			rel, _ := filepath.Rel(dir, p)
			if !strings.Contains(log.String(), "removing checkpoint "+filepath.ToSlash(rel)) {
				t.Errorf("commit %d: resume did not say it removed %s:\n%s", at, rel, log.String())
			}
		}
		spec0, started := rec.starts[id]
		if !started {
			t.Fatalf("commit %d: trial %s, cut short in its commit, was not started again", at, id)
		}
		if spec0.RestoreDir != latest[id] {
			t.Errorf("commit %d: trial %s restarted from %q, want its latest registered checkpoint %q", at, id, spec0.RestoreDir, latest[id])
		}
		wo, go_ := outcomes(want.Trials), outcomes(got.Trials)
		if len(wo) != len(go_) {
			t.Fatalf("commit %d: %d trials after resume, want %d", at, len(go_), len(wo))
		}
		for tid, w := range wo {
			if g := go_[tid]; g != w {
				t.Errorf("commit %d: trial %s ended %+v, want %+v as uninterrupted", at, tid, g, w)
			}
		}

		// What is on disk at the end is registered and complete.
		after, err := results.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		var kept []string
		for _, tr := range after.Trials {
			kept = append(kept, tr.Checkpoints...)
		}
		onDisk, err = filepath.Glob(filepath.Join(dir, "*", "checkpoint_*"))
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(kept)
		if !slices.Equal(onDisk, kept) {
			t.Errorf("commit %d: checkpoints on disk %q, registered %q", at, onDisk, kept)
		}
		for _, p := range onDisk {
			if b, err := os.ReadFile(filepath.Join(p, sim.StateFile)); err != nil || len(b) == 0 {
				t.Errorf("commit %d: %s holds %q (%v)", at, p, b, err)
			}
		}
	}
}

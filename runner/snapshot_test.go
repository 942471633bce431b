package runner_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/fsutil"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/internal/scratch"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/spec"
	"github.com/hone-tune/hone/store/local"
	"pgregory.net/rapid"
)

// snapSpecs are experiments whose schedulers keep state across trials
// (rungs, a population, exploits pinning checkpoints), for the snapshot
// tests.
var snapSpecs = map[string]string{
	"asha": `
num_samples: 12
scheduler: {name: asha, max_t: 8, grace_period: 1, reduction_factor: 2}
`,
	"pbt": `
num_samples: 6
scheduler:
  name: pbt
  time_attr: training_iteration
  perturbation_interval: 2
  hyperparam_mutations:
    rate: {uniform: [0.05, 0.5]}
`,
	"tpe+hyperband": `
num_samples: 14
searcher: tpe
scheduler: {name: hyperband, max_t: 8, reduction_factor: 2}
`,
}

// snapExperiment builds a fresh experiment of the named spec; edit, if
// set, changes the spec's text first.
func snapExperiment(t testing.TB, name string, edit func(string) string) *hone.Experiment {
	t.Helper()
	dir := t.TempDir()
	text := "name: snap\nmetric: loss\nmode: min\nseed: 3\ncommand: [\"true\"]\nmax_concurrent_trials: 3\n" +
		"search_space:\n  rate: {uniform: [0.05, 0.5]}\n  asymptote: {uniform: [0.0, 1.0]}\n" + snapSpecs[name]
	if edit != nil {
		text = edit(text)
	}
	s, err := spec.Parse([]byte(text), filepath.Join(dir, "snap.yaml"), dir)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := spec.Build(s, filepath.Join(dir, "exp"), nil)
	if err != nil {
		t.Fatal(err)
	}
	exp := plan.Experiment
	if err := plan.Close(); err != nil {
		t.Fatal(err)
	}
	exp.Callbacks = nil
	return exp
}

func snapOptions(dir string, e hone.Executor, log io.Writer, every int64) runner.Options {
	st, _ := local.New(dir, local.NoSync())
	// No wall-clock ticks: a tick journaled in one run and not in the
	// other (a slow machine) would tell the journals apart.
	o := runner.Options{Dir: dir, Executor: e, Store: st, Log: log, Tick: time.Hour}
	if every > 0 {
		runner.SetSnapshotEvery(&o, every, 1<<20, time.Nanosecond)
	} else if every < 0 {
		o.NoSnapshots = true
	}
	return o
}

func snapExecutor(n int) hone.Executor {
	ex := sim.New(sim.Curve{Noise: 0.01, Seed: 5, MaxIterations: 8, CheckpointEvery: 2}.New)
	if n < 0 {
		return ex
	}
	return &crashing{Executor: ex, n: n}
}

// TestSnapshotResumeSameAsReplay is the property of journal snapshots: a
// run crashes at a random event, having written snapshots along the way;
// a resume from the newest snapshot and the journal's tail continues
// exactly as a resume that replays the whole journal: the two journals
// are byte for byte the same afterwards, and so are the outcomes.
func TestSnapshotResumeSameAsReplay(t *testing.T) {
	for name := range snapSpecs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rapid.Check(t, func(rt *rapid.T) {
				root, err := os.MkdirTemp(scratch.Dir(), "hone-snap-")
				if err != nil {
					rt.Fatal(err)
				}
				defer os.RemoveAll(root)
				every := rapid.Int64Range(1, 4000).Draw(rt, "every")
				crashAt := rapid.IntRange(0, 150).Draw(rt, "crashAt")
				a := filepath.Join(root, "a")
				_, err = runner.Run(context.Background(), snapExperiment(t, name, nil), snapOptions(a, snapExecutor(crashAt), io.Discard, every))
				if err != nil && !errors.Is(err, errCrash) {
					rt.Fatalf("crashing run: %v", err)
				}
				b := filepath.Join(root, "b")
				if err := fsutil.CopyTree(a, b); err != nil {
					rt.Fatal(err)
				}
				var logA bytes.Buffer
				outA, errA := runner.Resume(context.Background(), snapExperiment(t, name, nil), snapOptions(a, snapExecutor(-1), &logA, 0), hone.ResumeFlags{Unfinished: true})
				outB, errB := runner.Resume(context.Background(), snapExperiment(t, name, nil), snapOptions(b, snapExecutor(-1), io.Discard, -1), hone.ResumeFlags{Unfinished: true})
				if errA != nil || errB != nil {
					rt.Fatalf("resume from a snapshot: %v; by replay: %v\n%s", errA, errB, logA.String())
				}
				ja, err := os.ReadFile(filepath.Join(a, journal.FileName))
				if err != nil {
					rt.Fatal(err)
				}
				jb, err := os.ReadFile(filepath.Join(b, journal.FileName))
				if err != nil {
					rt.Fatal(err)
				}
				if !bytes.Equal(ja, jb) {
					rt.Fatalf("the journals differ after the resumes (from a snapshot: %d bytes, by replay: %d)\n%s", len(ja), len(jb), logA.String())
				}
				if fa, fb := finals(outA.Trials), finals(outB.Trials); fmt.Sprint(fa) != fmt.Sprint(fb) {
					rt.Fatalf("outcomes differ: from a snapshot %v, by replay %v", fa, fb)
				}
			})
		})
	}
}

// TestSnapshotFallbacks checks what a resume does with snapshots that do
// not serve: a damaged newest snapshot gives way to the one before, one
// taken over bytes the journal no longer holds is not used, and one
// restored under an experiment it does not belong to gives way to a
// replay of the whole journal, which then names the difference as it
// always has.
func TestSnapshotFallbacks(t *testing.T) {
	root := t.TempDir()
	orig := filepath.Join(root, "orig")
	if _, err := runner.Run(context.Background(), snapExperiment(t, "asha", nil), snapOptions(orig, snapExecutor(-1), io.Discard, 500)); err != nil {
		t.Fatalf("run: %v", err)
	}
	jp := filepath.Join(orig, journal.FileName)
	offs, err := journal.Snapshots(jp)
	if err != nil || len(offs) < 3 {
		t.Fatalf("snapshots %v (%v): want at least 3", offs, err)
	}
	resume := func(dir string, edit func(string) string) (string, error) {
		var log bytes.Buffer
		_, err := runner.Resume(context.Background(), snapExperiment(t, "asha", edit), snapOptions(dir, snapExecutor(-1), &log, 0), hone.ResumeFlags{Unfinished: true})
		return log.String(), err
	}
	copyOf := func(name string) string {
		d := filepath.Join(root, name)
		if err := fsutil.CopyTree(orig, d); err != nil {
			t.Fatal(err)
		}
		return d
	}

	t.Run("damaged", func(t *testing.T) {
		d := copyOf("damaged")
		p := journal.SnapshotPath(filepath.Join(d, journal.FileName), offs[0])
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)/2] ^= 0x40
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		log, err := resume(d, nil)
		if err != nil {
			t.Fatalf("resume: %v\n%s", err, log)
		}
		if !strings.Contains(log, "checksum") || !strings.Contains(log, filepath.Base(journal.SnapshotPath(journal.FileName, offs[1]))) {
			t.Fatalf("want the damaged snapshot refused and the one before restored; log:\n%s", log)
		}
	})

	t.Run("journal rewritten", func(t *testing.T) {
		d := copyOf("rewritten")
		jd := filepath.Join(d, journal.FileName)
		data, err := os.ReadFile(jd)
		if err != nil {
			t.Fatal(err)
		}
		// A byte before the newest snapshot's offset changes: the journal
		// is not the one it was taken over.
		i := offs[0] - 1
		for data[i] < '0' || data[i] > '9' {
			i--
		}
		data[i] = '0' + (data[i]-'0'+1)%10
		if err := os.WriteFile(jd, data, 0o644); err != nil {
			t.Fatal(err)
		}
		log, _ := resume(d, nil)
		if !strings.Contains(log, "are not those it was taken over") {
			t.Fatalf("want the newest snapshot refused; log:\n%s", log)
		}
	})

	t.Run("another experiment", func(t *testing.T) {
		d := copyOf("another")
		// Another search space: the snapshots would restore (random
		// search keeps no space in its state), so the head of the journal
		// is replayed to find the difference.
		log, err := resume(d, func(s string) string { return strings.Replace(s, "[0.05, 0.5]", "[0.06, 0.5]", 1) })
		if err == nil || !strings.Contains(err.Error(), "holds a different experiment") || !strings.Contains(err.Error(), "journal line 2") {
			t.Fatalf("resume with another search space: %v, want the replay's mismatch error at line 2\n%s", err, log)
		}
		// Another number of samples: found in the head as well.
		d = copyOf("another2")
		log, err = resume(d, func(s string) string { return strings.Replace(s, "num_samples: 12", "num_samples: 13", 1) })
		if err == nil || !strings.Contains(err.Error(), "holds a different experiment") {
			t.Fatalf("resume with another num_samples: %v, want the mismatch error\n%s", err, log)
		}
		// Another ASHA: the head is the same, ASHA's state refuses to
		// restore, every snapshot gives way to a whole replay.
		d = copyOf("another3")
		log, _ = resume(d, func(s string) string { return strings.Replace(s, "reduction_factor: 2", "reduction_factor: 3", 1) })
		if !strings.Contains(log, "not using snapshot") || strings.Contains(log, "resume: restored") {
			t.Fatalf("resume with another reduction factor: want every snapshot refused; log:\n%s", log)
		}
	})
}

// TestSnapshotsByDefault runs an experiment whose journal outgrows the
// default thresholds: the runner writes snapshots by itself (in the
// background while it runs, and at the end), and a resume restores one.
func TestSnapshotsByDefault(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "exp")
	sr, err := random.New(space.Space{"rate": space.Uniform(0.05, 0.5), "asymptote": space.Uniform(0, 1)}, 3000, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	exp := &hone.Experiment{Name: "big", Metric: "loss", Mode: hone.Min, Searcher: sr, Seed: 1, MaxConcurrentTrials: 32}
	ex := sim.New(sim.Curve{Seed: 5, MaxIterations: 5}.New)
	if _, err := runner.Run(context.Background(), exp, snapOptions(dir, ex, io.Discard, 0)); err != nil {
		t.Fatal(err)
	}
	jp := filepath.Join(dir, journal.FileName)
	info, err := os.Stat(jp)
	if err != nil {
		t.Fatal(err)
	}
	offs, err := journal.Snapshots(jp)
	if err != nil {
		t.Fatal(err)
	}
	if len(offs) != journal.KeepSnapshots || offs[0] != info.Size() {
		t.Fatalf("journal of %d bytes, snapshots at %v: want one taken while it ran and one at its end", info.Size(), offs)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	// Resumes of the finished experiment: each restores the snapshot, and
	// each counts 8 bytes per trial (24,000 here) towards the next, which
	// the end of a session writes from 64 KiB: not after the first
	// resume, by the third.
	last := offs[0]
	for i := 1; i <= 3; i++ {
		sr, err := random.New(space.Space{"rate": space.Uniform(0.05, 0.5), "asymptote": space.Uniform(0, 1)}, 3000, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		exp.Searcher = sr
		var log bytes.Buffer
		out, err := runner.Resume(context.Background(), exp, snapOptions(dir, sim.New(sim.Curve{Seed: 5, MaxIterations: 5}.New), &log, 0), hone.ResumeFlags{Unfinished: true})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(log.String(), "resume: restored") || len(out.Trials) != 3000 {
			t.Fatalf("resume %d: %d trials; log:\n%s", i, len(out.Trials), log.String())
		}
		offs, err := journal.Snapshots(jp)
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 && offs[0] != last {
			t.Fatalf("the first resume wrote a snapshot (at %d, the last at %d): its 24,000 bytes are below 64 KiB", offs[0], last)
		}
		if offs[0] != last {
			info, err := os.Stat(jp)
			if err != nil {
				t.Fatal(err)
			}
			if offs[0] != info.Size() {
				t.Fatalf("resume %d wrote a snapshot at %d, not at the journal's end %d", i, offs[0], info.Size())
			}
			return
		}
	}
	t.Fatal("three resumes of 3,000 trials wrote no snapshot at their end")
}

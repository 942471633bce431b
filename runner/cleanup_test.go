package runner_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/store/blob"
	"github.com/hone-tune/hone/trial"
)

// TestResumeCleansLeftovers pins docs/SEMANTICS.md §2/§3: what a crash leaves
// behind — a staging directory, a half-made temporary directory, and a
// checkpoint that was committed but never registered in the journal — is
// removed on resume and never registered; the registered checkpoint stays
// and the trial restarts from it.
func TestResumeCleansLeftovers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "left")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reports := 0
	interrupting := func(c context.Context, s trial.Session) error {
		return quadratic(c, &countingSession{Session: s, onReport: func() {
			reports++ // one trial: no concurrent reports
			if reports == 3 {
				cancel()
			}
		}})
	}
	out, err := runner.Run(ctx, experiment(t, dir, 1), runner.Options{Dir: dir, Log: io.Discard, Executor: inproc.NewFunc(interrupting)})
	if err != nil {
		t.Fatal(err)
	}
	tr := out.Trials[0]
	if !out.Interrupted || tr.Checkpoint == nil {
		t.Fatalf("interrupted=%v checkpoint=%v: the test needs an interrupted trial with a checkpoint", out.Interrupted, tr.Checkpoint)
	}
	kept := tr.Checkpoint.Path
	td := filepath.Join(dir, tr.Dir)
	for _, p := range []string{".staging/17", ".tmp-checkpoint_000041-abc", hone.CheckpointDirName(40)} {
		if err := os.MkdirAll(filepath.Join(td, p), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(td, p, "step"), []byte("99"), 0o644)
	}

	restoredFrom := ""
	resumed := func(c context.Context, s trial.Session) error {
		restoredFrom = s.Checkpoint()
		return quadratic(c, s)
	}
	out, err = runner.Resume(context.Background(), experiment(t, dir, 1), runner.Options{Dir: dir, Log: io.Discard, Executor: inproc.NewFunc(resumed)},
		hone.ResumeFlags{Unfinished: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".staging/17", ".tmp-checkpoint_000041-abc", hone.CheckpointDirName(40)} {
		if _, err := os.Stat(filepath.Join(td, p)); !os.IsNotExist(err) {
			t.Errorf("leftover %s survived resume (%v)", p, err)
		}
	}
	if restoredFrom != filepath.Join(dir, kept) {
		t.Errorf("resumed from %q, want the registered checkpoint %q", restoredFrom, filepath.Join(dir, kept))
	}
	if got := out.Trials[0]; got.Status != hone.StatusTerminated || got.LastResult.TrainingIteration != 6 {
		t.Errorf("trial after resume: %s at iteration %d", got.Status, got.LastResult.TrainingIteration)
	}
}

// TestResumeCleansLeftoversObjectStore is TestResumeCleansLeftovers on an
// object store, whose cleanup lists the whole experiment at once
// (hone.TreeLister): a staged leftover on local disk, an upload cut short
// before its manifest, and a checkpoint committed but never registered
// are removed on resume; the registered checkpoint stays and the trial
// restarts from it.
func TestResumeCleansLeftoversObjectStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "left")
	bucket := filepath.Join(t.TempDir(), "bucket")
	open := func() *blob.Store {
		st, err := blob.Open(context.Background(), "file://"+bucket, filepath.Join(t.TempDir(), "cache"), blob.LocalRoot(dir))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reports := 0
	interrupting := func(c context.Context, s trial.Session) error {
		return quadratic(c, &countingSession{Session: s, onReport: func() {
			reports++
			if reports == 3 {
				cancel()
			}
		}})
	}
	st := open()
	out, err := runner.Run(ctx, experiment(t, dir, 1), runner.Options{Dir: dir, Log: io.Discard, Store: st, Executor: inproc.NewFunc(interrupting)})
	if err != nil {
		t.Fatal(err)
	}
	tr := out.Trials[0]
	if !out.Interrupted || tr.Checkpoint == nil {
		t.Fatalf("interrupted=%v checkpoint=%v: the test needs an interrupted trial with a checkpoint", out.Interrupted, tr.Checkpoint)
	}
	kept := tr.Checkpoint.Path
	// A staged leftover on local disk.
	staged := filepath.Join(dir, tr.Dir, hone.StagingDirName, "17")
	if err := os.MkdirAll(staged, 0o755); err != nil {
		t.Fatal(err)
	}
	// A checkpoint committed but never registered.
	unreg := filepath.Join(t.TempDir(), "unreg")
	os.MkdirAll(unreg, 0o755)
	os.WriteFile(filepath.Join(unreg, "step"), []byte("99"), 0o644)
	if err := st.Commit(context.Background(), unreg, tr.Dir+"/"+hone.CheckpointDirName(40)); err != nil {
		t.Fatal(err)
	}
	// An upload cut short: objects, no manifest.
	half := filepath.Join(bucket, filepath.FromSlash(tr.Dir), hone.CheckpointDirName(41))
	os.MkdirAll(half, 0o755)
	if err := os.WriteFile(filepath.Join(half, "step"), []byte("98"), 0o644); err != nil {
		t.Fatal(err)
	}

	step := ""
	resumed := func(c context.Context, s trial.Session) error {
		b, _ := os.ReadFile(filepath.Join(s.Checkpoint(), "step"))
		step = string(b)
		return quadratic(c, s)
	}
	st = open()
	out, err = runner.Resume(context.Background(), experiment(t, dir, 1), runner.Options{Dir: dir, Log: io.Discard, Store: st, Executor: inproc.NewFunc(resumed)},
		hone.ResumeFlags{Unfinished: true})
	if err != nil {
		t.Fatal(err)
	}
	committed, leftovers, err := st.List(context.Background(), tr.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(committed, leftovers...) {
		if strings.HasSuffix(p, hone.CheckpointDirName(40)) || strings.HasSuffix(p, hone.CheckpointDirName(41)) || strings.Contains(p, hone.StagingDirName) {
			t.Errorf("leftover %s survived resume", p)
		}
	}
	if _, err := os.Stat(staged); !os.IsNotExist(err) {
		t.Errorf("staged leftover survived resume (%v)", err)
	}
	if step == "" || step == "99" || step == "98" {
		t.Errorf("the trial restored step %q; want the registered checkpoint %s's", step, kept)
	}
	if got := out.Trials[0]; got.Status != hone.StatusTerminated || got.LastResult.TrainingIteration != 6 {
		t.Errorf("trial after resume: %s at iteration %d", got.Status, got.LastResult.TrainingIteration)
	}
}

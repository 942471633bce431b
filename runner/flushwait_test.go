package runner_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/callback"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
	"github.com/hone-tune/hone/trial"
)

// TestFilesFlushWhileTrialsWait: a result's row reaches result.json while
// the experiment goes on, even when no other event comes — the runner
// flushes the per-trial files on its own deadline, not only at the end.
func TestFilesFlushWhileTrialsWait(t *testing.T) {
	dir := t.TempDir()
	release := make(chan struct{})
	ex := inproc.NewFunc(func(ctx context.Context, s trial.Session) error {
		if err := s.Report(trial.Metrics{"loss": 1.0}); err != nil {
			return err
		}
		select { // no event until the test has seen the first row
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		return s.Report(trial.Metrics{"loss": 0.5}, trial.Done())
	})
	sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, 1, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	st, err := local.New(dir, local.NoSync())
	if err != nil {
		t.Fatal(err)
	}
	exp := &hone.Experiment{Name: "flush", Metric: "loss", Mode: hone.Min, Searcher: sr, Seed: 1,
		Callbacks: []hone.Callback{callback.NewTrialFiles(dir)}}
	done := make(chan error, 1)
	go func() {
		_, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Executor: ex, Store: st, Log: io.Discard})
		done <- err
	}()

	// Wait for the first row; the bound only turns a hang into a failure.
	bound := time.After(60 * time.Second)
	for resultRows(t, dir) < 1 {
		select {
		case err := <-done:
			t.Fatalf("the run ended (%v) with the trial still waiting", err)
		case <-bound:
			close(release)
			t.Fatal("result.json got no row while the trial waited: the files are flushed only at the end")
		case <-time.After(10 * time.Millisecond):
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := resultRows(t, dir); n != 2 {
		t.Fatalf("result.json has %d rows after the run, want 2", n)
	}
}

// resultRows counts the lines of the result.json files under dir.
func resultRows(t *testing.T, dir string) int {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*", "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			n++
		}
		f.Close()
	}
	return n
}

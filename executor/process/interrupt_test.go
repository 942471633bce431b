//go:build linux

package process_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/process"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
)

// intrTrial, at its first start, runs until it is signalled: with x = 1
// it ignores SIGTERM and never speaks to hone (a hung trial); with x = 2
// it notes SIGTERM in the file term and exits. At its next start it
// reports one result, done.
const intrTrial = `
x=$(printf '%s' "$HONE_CONFIG" | sed -n 's/.*"x": *\([0-9]*\).*/\1/p')
if [ -e "$HONE_TRIAL_DIR/pid" ]; then
  echo 'HONE_REPORT {"metrics":{"score":1},"done":true}'
  exit 0
fi
if [ "$x" = 1 ]; then
  trap '' TERM
  echo $$ > "$HONE_TRIAL_DIR/pid.tmp" && mv "$HONE_TRIAL_DIR/pid.tmp" "$HONE_TRIAL_DIR/pid"
  exec sleep 300
fi
trap 'echo term > "$HONE_TRIAL_DIR/term"; exit 0' TERM
echo $$ > "$HONE_TRIAL_DIR/pid.tmp" && mv "$HONE_TRIAL_DIR/pid.tmp" "$HONE_TRIAL_DIR/pid"
while :; do sleep 0.05; done
`

func intrExperiment(t *testing.T, dir string) (*hone.Experiment, runner.Options) {
	t.Helper()
	sr, err := random.New(space.Space{"x": space.GridSearch(1, 2)}, 1, nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	exp := &hone.Experiment{Name: "intr", Metric: "score", Mode: hone.Max, Searcher: sr, Seed: 5, MaxConcurrentTrials: 2}
	ex, err := process.New(process.Options{Command: []string{"sh", "-c", intrTrial}, StopGrace: 200 * time.Millisecond, Env: testEnv()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The runner's own grace is long: the executor's signals end the
	// trials, not the runner giving up on them.
	return exp, runner.Options{Dir: dir, Executor: ex, Store: st, Log: io.Discard, StopGrace: time.Hour}
}

// TestInterruptSignalsTrials: an interrupted run sends SIGTERM to every
// trial at once and SIGKILL to those still running after the stop grace:
// a hung trial that ignores SIGTERM does not hold the run, which returns
// Interrupted with both trials RUNNING, and resumes to the end.
func TestInterruptSignalsTrials(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "exp")
	exp, opts := intrExperiment(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type ran struct {
		out *runner.Outcome
		err error
	}
	done := make(chan ran, 1)
	go func() {
		out, err := runner.Run(ctx, exp, opts)
		done <- ran{out, err}
	}()
	var pidFiles []string
	deadline := time.Now().Add(time.Minute)
	for len(pidFiles) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("trials did not start within a minute: %v", pidFiles)
		}
		time.Sleep(10 * time.Millisecond)
		pidFiles, _ = filepath.Glob(filepath.Join(dir, "*", "pid"))
	}
	cancel()
	var r ran
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the interrupted run did not return within two minutes")
	}
	if r.err != nil || r.out == nil || !r.out.Interrupted {
		t.Fatalf("Run = %+v, %v; want an interrupted outcome", r.out, r.err)
	}
	for _, f := range pidFiles {
		pid := pids(t, waitFile(t, f))[0]
		waitDead(t, pid, "a trial of the interrupted run")
	}
	var polite []string
	for _, tr := range r.out.Trials {
		if tr.Status != hone.StatusRunning {
			t.Errorf("trial %s (x=%v): %s after the interrupt, want RUNNING (resumable)", tr.ID, tr.Config["x"], tr.Status)
		}
		if x, _ := hone.Number(tr.Config["x"]); x == 2 {
			polite = append(polite, filepath.Join(dir, tr.Dir, "term"))
		}
	}
	if len(polite) != 1 {
		t.Fatalf("%d trials with x=2, want 1", len(polite))
	}
	if _, err := os.Stat(polite[0]); err != nil {
		t.Errorf("the trial that handles SIGTERM did not get it: %v", err)
	}

	exp, opts = intrExperiment(t, dir)
	out, err := runner.Resume(context.Background(), exp, opts, hone.ResumeFlags{Unfinished: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range out.Trials {
		if tr.Status != hone.StatusTerminated || tr.LastResult == nil || !tr.LastResult.Done {
			t.Errorf("trial %s: %s (last result %+v) after resume, want TERMINATED after its done result", tr.ID, tr.Status, tr.LastResult)
		}
	}
}

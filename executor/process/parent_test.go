package process_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/process"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
)

// The test binary, run with parentEnv set, plays the hone process that a
// test kills: parentMain runs instead of the tests.
const (
	parentEnv    = "HONE_TEST_PARENT" // "executor" or "runner"
	parentDirEnv = "HONE_TEST_EXP"    // the experiment directory
	parentCmdEnv = "HONE_TEST_CMD"    // the trial's sh script (executor mode)
)

// parentMain runs as a parent process: in executor mode, an executor
// prepared for the experiment directory starting trial "a" with the
// script of parentCmdEnv and answering its results until killed; in
// runner mode, runner.Run of ckptExperiment.
func parentMain(mode string) int {
	dir := os.Getenv(parentDirEnv)
	switch mode {
	case "executor":
		ex, err := process.New(process.Options{Command: []string{"sh", "-c", os.Getenv(parentCmdEnv)}})
		if err == nil {
			err = ex.Prepare(dir)
		}
		if err == nil {
			err = ex.Start(hone.StartSpec{TrialID: "a", Dir: filepath.Join(dir, "a")})
		}
		for err == nil {
			var ev hone.Event
			if ev, err = ex.Next(context.Background()); err == nil && ev.Kind == hone.EventResult {
				err = ex.Direct(ev.TrialID, hone.DirectContinue)
			}
		}
		fmt.Fprintln(os.Stderr, "parent:", err)
		return 1
	case "runner":
		exp, opts, err := ckptExperiment(dir)
		if err == nil {
			_, err = runner.Run(context.Background(), exp, opts)
		}
		fmt.Fprintln(os.Stderr, "parent: run ended:", err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "parent: unknown mode", mode)
	return 1
}

// startParent starts the test binary as a parent process in mode.
func startParent(t *testing.T, mode, dir string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), append([]string{parentEnv + "=" + mode, parentDirEnv + "=" + dir}, env...)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// ckptTrial reports score = iteration on stdout with a checkpoint every
// iteration, $LAST iterations from where its checkpoint left off, and
// keeps a child running meanwhile (killed with its process group when it
// exits); it appends its pid to pids and its child's to kids in the trial
// directory.
const ckptTrial = `
i=0
if [ -n "$HONE_RESTORE_DIR" ]; then i=$(cat "$HONE_RESTORE_DIR/iter"); fi
echo $$ >> "$HONE_TRIAL_DIR/pids"
sleep 300 &
echo $! >> "$HONE_TRIAL_DIR/kids"
while [ "$i" -lt 30 ]; do
  i=$((i+1))
  d="$HONE_STAGING_DIR/c$i"
  mkdir -p "$d" && echo "$i" > "$d/iter"
  done=false
  if [ "$i" -ge 30 ]; then done=true; fi
  echo "HONE_REPORT {\"metrics\":{\"score\":$i},\"checkpoint\":\"$d\",\"done\":$done}"
  sleep 0.05
done
`

// ckptExperiment is an experiment of two ckptTrial trials in dir.
func ckptExperiment(dir string) (*hone.Experiment, runner.Options, error) {
	sr, err := random.New(space.Space{"x": space.GridSearch(1, 2)}, 1, nil, 3)
	if err != nil {
		return nil, runner.Options{}, err
	}
	exp := &hone.Experiment{Name: "kill", Metric: "score", Mode: hone.Max, Searcher: sr, Seed: 3,
		MaxConcurrentTrials: 2, Checkpoint: hone.CheckpointConfig{NumToKeep: 2}}
	ex, err := process.New(process.Options{Command: []string{"sh", "-c", ckptTrial}, Env: testEnv()})
	if err != nil {
		return nil, runner.Options{}, err
	}
	st, err := local.New(dir)
	if err != nil {
		return nil, runner.Options{}, err
	}
	return exp, runner.Options{Dir: dir, Executor: ex, Store: st, Log: io.Discard}, nil
}

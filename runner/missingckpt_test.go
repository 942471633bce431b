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

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/callback"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
	"github.com/hone-tune/hone/trial"
)

// failOnce counts to 6, checkpointing at steps 2 and 4, and fails at step
// 5 the first time it gets there (it leaves a marker in its directory).
func failOnce(ctx context.Context, s trial.Session) error {
	step, err := restoredStep(s)
	if err != nil {
		return err
	}
	marker := filepath.Join(s.Dir(), "failed-once")
	for step < 6 {
		step++
		if step == 5 {
			if _, err := os.Stat(marker); errors.Is(err, os.ErrNotExist) {
				if err := os.WriteFile(marker, nil, 0o644); err != nil {
					return err
				}
				return errors.New("failing once at step 5")
			}
		}
		var opts []trial.ReportOption
		if step == 2 || step == 4 {
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

func onceExperiment(files hone.Callback) *hone.Experiment {
	sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, 1, nil, 4)
	if err != nil {
		panic(err)
	}
	return &hone.Experiment{Name: "once", Metric: "loss", Mode: hone.Min, Searcher: sr, Seed: 4,
		Callbacks: []hone.Callback{files}}
}

func onceOptions(t *testing.T, dir string, log io.Writer) runner.Options {
	st, err := local.New(dir, local.NoSync())
	if err != nil {
		t.Fatal(err)
	}
	return runner.Options{Dir: dir, Executor: inproc.NewFunc(failOnce), Store: st, Log: log}
}

// TestMissingCheckpointFallsBack deletes checkpoints of an ERROR trial by
// hand (real directories removed) and retries it with resume: it restarts
// from the newest checkpoint that still exists, or from scratch when none
// does, with the iteration count of the checkpoint it really uses, instead
// of failing to start; the experiment log names the trial and the paths.
func TestMissingCheckpointFallsBack(t *testing.T) {
	for _, tc := range []struct {
		name     string
		delete   []string // checkpoints removed by hand
		restart  int      // the first step the retried trial reports
		fallback string   // in the log
	}{
		{"newest deleted", []string{"checkpoint_000001"}, 3, "checkpoint_000000"},
		{"all deleted", []string{"checkpoint_000001", "checkpoint_000000"}, 1, "scratch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "exp")
			files := callback.NewTrialFiles(dir, callback.NoSync())
			out, err := runner.Run(context.Background(), onceExperiment(files), onceOptions(t, dir, io.Discard))
			if err != nil {
				t.Fatal(err)
			}
			files.Close()
			tr := out.Trials[0]
			if tr.Status != hone.StatusError {
				t.Fatalf("the first run ended the trial %s, want ERROR", tr.Status)
			}
			for _, name := range tc.delete {
				if err := os.RemoveAll(filepath.Join(dir, tr.Dir, name)); err != nil {
					t.Fatal(err)
				}
			}

			var log bytes.Buffer
			files = callback.NewTrialFiles(dir, callback.NoSync())
			out, err = runner.Resume(context.Background(), onceExperiment(files), onceOptions(t, dir, &log),
				hone.ResumeFlags{Unfinished: true, Errored: true})
			if err != nil {
				t.Fatalf("resume: %v\n%s", err, log.String())
			}
			if err := files.Close(); err != nil {
				t.Fatal(err)
			}
			tr = out.Trials[0]
			if tr.Status != hone.StatusTerminated {
				t.Fatalf("the retried trial ended %s (%s), want TERMINATED\n%s", tr.Status, tr.Error, log.String())
			}
			for _, name := range tc.delete {
				if want := fmt.Sprintf("trial %s: checkpoint %s/%s is missing", tr.ID, tr.Dir, name); !strings.Contains(log.String(), want) {
					t.Errorf("the log does not say %q:\n%s", want, log.String())
				}
			}
			fb := tr.Dir + "/" + tc.fallback
			if tc.fallback == "scratch" {
				fb = "scratch"
			}
			if !strings.Contains(log.String(), "restarting from "+fb) {
				t.Errorf("the log does not name the fallback %s:\n%s", tc.fallback, log.String())
			}
			// The rows: 1..4 of the first run, then the retry from where
			// the checkpoint it used left off, each row's iteration equal
			// to the step the trainable restored.
			js, cs := fileRows(t, filepath.Join(dir, tr.Dir))
			var want []string
			for s := 1; s <= 4; s++ {
				want = append(want, fmt.Sprintf("%d/%d", s, s))
			}
			for s := tc.restart; s <= 6; s++ {
				want = append(want, fmt.Sprintf("%d/%d", s, s))
			}
			if strings.Join(js, " ") != strings.Join(want, " ") || strings.Join(cs, " ") != strings.Join(want, " ") {
				t.Errorf("rows (step/iteration): result.json %v, progress.csv %v; want %v", js, cs, want)
			}
		})
	}
}

package runner_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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

// breaksOwnDir counts to 4; the trial with "break" set replaces its own
// directory by a regular file at step 3 (a fault that binds root too, unlike
// chmod) and, with "commit" set, reports a checkpoint staged outside it,
// whose commit into the trial directory then fails; without, it reports a
// new metric, whose progress.csv column the per-trial files then fail to
// add (the file is rewritten in the trial directory).
func breaksOwnDir(ctx context.Context, s trial.Session) error {
	brk, _ := s.Config()["break"].(bool)
	commit, _ := s.Config()["commit"].(bool)
	for step := 1; step <= 4; step++ {
		var opts []trial.ReportOption
		if brk && step == 3 {
			dir := s.Dir()
			if err := os.Rename(dir, dir+".moved"); err != nil {
				return err
			}
			if err := os.WriteFile(dir, []byte("not a directory\n"), 0o644); err != nil {
				return err
			}
		}
		if brk && commit && step == 3 {
			staged, err := os.MkdirTemp(filepath.Dir(s.Dir()), ".outside-")
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(staged, "step"), []byte(strconv.Itoa(step)), 0o644); err != nil {
				return err
			}
			opts = append(opts, trial.WithCheckpoint(staged))
		}
		m := trial.Metrics{"loss": 1 / float64(step), "step": step}
		if brk && step >= 3 {
			m["extra"] = 1 // a new column: progress.csv is rewritten in the trial directory
		}
		if err := s.Report(m, opts...); err != nil {
			return err
		}
	}
	return nil
}

// TestUnwritableTrialDirFailsOnlyThatTrial: one trial's directory stops
// being writable mid-run (replaced by a regular file). Either the commit of
// its next checkpoint fails, or the per-trial files fail to rewrite its
// progress.csv. That trial ends ERROR with the real error as its message; writing
// its error.txt fails and is only logged; the other trials run to the end
// with all their rows; and the experiment itself does not fail: Run and
// the per-trial files' Close return nil (the command line then exits 4,
// trials failed, not 1).
func TestUnwritableTrialDirFailsOnlyThatTrial(t *testing.T) {
	for _, tc := range []struct {
		name   string
		commit bool
		want   []string // in the broken trial's error
	}{
		{"checkpoint commit", true, []string{"commit checkpoint", syscall.ENOTDIR.Error()}},
		{"result files", false, []string{"progress.csv", syscall.ENOTDIR.Error()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "exp")
			grid, err := random.New(space.Space{"break": space.GridSearch(false, true, false), "commit": tc.commit}, 1, nil, 2)
			if err != nil {
				t.Fatal(err)
			}
			files := callback.NewTrialFiles(dir, callback.NoSync())
			exp := &hone.Experiment{Name: "unwritable", Metric: "loss", Mode: hone.Min, Searcher: grid, Seed: 2,
				MaxConcurrentTrials: 3, Callbacks: []hone.Callback{files}}
			st, err := local.New(dir, local.NoSync())
			if err != nil {
				t.Fatal(err)
			}
			var log bytes.Buffer
			out, err := runner.Run(context.Background(), exp, runner.Options{Dir: dir, Executor: inproc.NewFunc(breaksOwnDir),
				Store: st, Log: &log, Pool: hone.Resources{CPU: 3}})
			if err != nil {
				t.Fatalf("Run = %v, want the experiment to go on\n%s", err, log.String())
			}
			if err := files.Close(); err != nil {
				t.Fatalf("the per-trial files' Close = %v, want nil: the runner took the trial's errors", err)
			}
			broken := 0
			for _, tr := range out.Trials {
				if b, _ := tr.Config["break"].(bool); b {
					broken++
					if tr.Status != hone.StatusError {
						t.Errorf("broken trial %s: %s, want ERROR", tr.ID, tr.Status)
					}
					for _, w := range tc.want {
						if !strings.Contains(tr.Error, w) {
							t.Errorf("broken trial %s: error %q does not say %q", tr.ID, tr.Error, w)
						}
					}
					if !strings.Contains(log.String(), "trial "+tr.ID+": write error.txt") {
						t.Errorf("the log does not say error.txt of %s could not be written:\n%s", tr.ID, log.String())
					}
					continue
				}
				if tr.Status != hone.StatusTerminated {
					t.Errorf("healthy trial %s: %s (%s), want TERMINATED", tr.ID, tr.Status, tr.Error)
				}
				js, _ := fileRows(t, filepath.Join(dir, tr.Dir))
				if strings.Join(js, " ") != "1/1 2/2 3/3 4/4" {
					t.Errorf("healthy trial %s: rows %v", tr.ID, js)
				}
			}
			if broken != 1 || len(out.Trials) != 3 {
				t.Fatalf("%d trials, %d with break set; want 3 and 1", len(out.Trials), broken)
			}
		})
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/spec"
	"github.com/hone-tune/hone/trial"
)

// TestResumeTruncateJournal: a journal with a corrupt line in the middle
// makes hone resume exit 1 naming the line and --truncate-journal, and
// change nothing; hone resume --truncate-journal continues from the lines
// before it, keeps the rest beside the journal, and hone status then shows
// every trial.
func TestResumeTruncateJournal(t *testing.T) {
	c := cli{t: t, exec: goTrainer(nil)}
	path, dir := writeSpec(t, "grid", gridSpec)
	if code, _, errOut := c.run("run", path); code != exitOK {
		t.Fatalf("run: %d\n%s", code, errOut)
	}
	jp := filepath.Join(dir, journal.FileName)
	data, err := os.ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	lines[9] = []byte("#corrupt\n") // line 10
	corrupt := bytes.Join(lines, nil)
	if err := os.WriteFile(jp, corrupt, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := c.run("resume", dir)
	if code != exitFailed || !strings.Contains(errOut, "line 10 is corrupt") || !strings.Contains(errOut, "hone resume --truncate-journal") {
		t.Errorf("resume of a corrupt journal: %d\n%s", code, errOut)
	}
	if code, _, errOut := c.run("status", dir); code != exitFailed || !strings.Contains(errOut, "line 10 is corrupt") || !strings.Contains(errOut, "hone resume --truncate-journal") {
		t.Errorf("status of a corrupt journal: %d\n%s", code, errOut)
	}
	if now, _ := os.ReadFile(jp); !bytes.Equal(now, corrupt) {
		t.Error("the refused resume changed the journal")
	}
	code, _, errOut = c.run("resume", "--truncate-journal", dir)
	if code != exitOK || !strings.Contains(errOut, "continuing from the 9 lines before it") {
		t.Errorf("resume --truncate-journal: %d\n%s", code, errOut)
	}
	if kept, err := os.ReadFile(jp + journal.CorruptSuffix + "1"); err != nil || !bytes.HasPrefix(kept, []byte("#corrupt\n")) {
		t.Errorf("the cut lines were not kept: %v %q", err, kept)
	}
	code, out, _ := c.run("status", dir)
	if code != exitOK || !strings.Contains(out, "3 trials (3 TERMINATED)") {
		t.Errorf("status after the truncating resume: %d\n%s", code, out)
	}
}

// TestUnwritableTrialDirExitsTrialsFailed: a trial whose directory is
// replaced by a regular file (a fault root cannot write through, unlike a
// chmod) fails when its checkpoint cannot be committed there; hone exits 4
// (trials failed), not 1, the other trial is TERMINATED, and the journal
// holds the trial's real error.
func TestUnwritableTrialDirExitsTrialsFailed(t *testing.T) {
	c := cli{t: t, exec: func(spec.Process) (hone.Executor, error) {
		return inproc.NewFunc(func(ctx context.Context, s trial.Session) error {
			brk, _ := s.Config()["break"].(bool)
			for it := 1; it <= 4; it++ {
				var opts []trial.ReportOption
				if brk && it == 2 {
					dir := s.Dir()
					if err := os.Rename(dir, dir+".moved"); err != nil {
						return err
					}
					if err := os.WriteFile(dir, nil, 0o644); err != nil {
						return err
					}
					staged, err := os.MkdirTemp(filepath.Dir(dir), ".outside-")
					if err != nil {
						return err
					}
					opts = append(opts, trial.WithCheckpoint(staged))
				}
				if err := s.Report(trial.Metrics{"score": float64(it)}, opts...); err != nil {
					return err
				}
			}
			return nil
		}), nil
	}}
	path, dir := writeSpec(t, "unwritable", `metric: score
mode: max
search_space:
  break: {grid: [false, true]}
max_concurrent_trials: 2
command: [unused]
`)
	code, _, errOut := c.run("run", path)
	if code != exitTrialErrors || !strings.Contains(errOut, "1 of 2 trials ended in ERROR") {
		t.Errorf("run: %d, want %d\n%s", code, exitTrialErrors, errOut)
	}
	if !strings.Contains(errOut, "write error.txt") {
		t.Errorf("the log does not say error.txt could not be written:\n%s", errOut)
	}
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range e.Trials {
		brk, _ := tr.Config["break"].(bool)
		if brk && (tr.Status != hone.StatusError || !strings.Contains(tr.Error, "commit checkpoint") || !strings.Contains(tr.Error, "not a directory")) {
			t.Errorf("broken trial %s: %s %q, want ERROR with the commit's error", tr.ID, tr.Status, tr.Error)
		}
		if !brk && tr.Status != hone.StatusTerminated {
			t.Errorf("healthy trial %s: %s %q", tr.ID, tr.Status, tr.Error)
		}
	}
	// hone status and results still read the experiment, though one trial
	// directory is a file.
	for _, cmd := range []string{"status", "results"} {
		if code, out, errOut := c.run(cmd, dir); code != exitOK || !strings.Contains(out, "ERROR") {
			t.Errorf("%s: exit %d, want %d and the ERROR trial listed\n%s%s", cmd, code, exitOK, out, errOut)
		}
	}
}

// TestResumeTornJournal is the torn-journal report end to end: a journal
// cut in the middle of a record just after the experiment began is
// resumed; hone status then shows every trial, a second resume succeeds,
// and the files hold each result once.
func TestResumeTornJournal(t *testing.T) {
	c := cli{t: t, exec: goTrainer(nil)}
	path, dir := writeSpec(t, "grid", gridSpec)
	if code, _, errOut := c.run("run", path); code != exitOK {
		t.Fatalf("run: %d\n%s", code, errOut)
	}
	jp := filepath.Join(dir, journal.FileName)
	data, err := os.ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	// Lines: header, begin, then the trials' records; cut inside line 4.
	lines := bytes.SplitAfter(data, []byte("\n"))
	cut := len(bytes.Join(lines[:3], nil)) + len(lines[3])/2
	if err := os.Truncate(jp, int64(cut)); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := c.run("resume", dir)
	if code != exitOK || !strings.Contains(errOut, "torn last line") {
		t.Fatalf("resume of a torn journal: %d\n%s", code, errOut)
	}
	code, out, _ := c.run("status", dir)
	if code != exitOK || !strings.Contains(out, "3 trials (3 TERMINATED)") {
		t.Errorf("status after the resume: %d\n%s", code, out)
	}
	if code, _, errOut := c.run("resume", dir); code != exitOK {
		t.Errorf("second resume: %d\n%s", code, errOut)
	}
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range e.Trials {
		rows, err := tr.Results()
		if err != nil {
			t.Fatal(err)
		}
		var its []string
		for _, r := range rows {
			v, _ := r.Value(hone.FieldTrainingIteration)
			its = append(its, strconv.Itoa(int(v)))
		}
		if strings.Join(its, ",") != "1,2,3,4" {
			t.Errorf("trial %s: result.json iterations %v, want 1,2,3,4 once each", tr.ID, its)
		}
	}
}

package runner_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/callback"
	"github.com/hone-tune/hone/controller"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/internal/fsutil"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/internal/scratch"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
	"github.com/hone-tune/hone/trial"
	"pgregory.net/rapid"
)

// tb is what the checks need of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// cutSteps is how many results each trial of the cut-journal experiment
// reports; it checkpoints every second one.
const cutSteps = 4

// stepper is a function trainable that counts to cutSteps, saving its
// count every second step, and restores it.
func stepper(ctx context.Context, s trial.Session) error {
	step, err := restoredStep(s)
	if err != nil {
		return err
	}
	x, _ := hone.Number(s.Config()["x"])
	for step < cutSteps {
		step++
		var opts []trial.ReportOption
		if step%2 == 0 {
			if opts, err = savedStep(s, step); err != nil {
				return err
			}
		}
		if err := s.Report(trial.Metrics{"loss": x / float64(step), "step": step}, opts...); err != nil {
			return err
		}
	}
	return nil
}

func cutExperiment(files hone.Callback) *hone.Experiment {
	sr, err := random.New(space.Space{"x": space.Uniform(0, 6)}, 3, nil, 5)
	if err != nil {
		panic(err)
	}
	e := &hone.Experiment{Name: "cut", Metric: "loss", Mode: hone.Min, Searcher: sr, Seed: 5, MaxConcurrentTrials: 2,
		Checkpoint: hone.CheckpointConfig{NumToKeep: 1}}
	if files != nil {
		e.Callbacks = []hone.Callback{files}
	}
	return e
}

func cutOptions(dir string, log io.Writer, opts ...func(*runner.Options)) runner.Options {
	st, err := local.New(dir, local.NoSync())
	if err != nil {
		panic(err)
	}
	o := runner.Options{Dir: dir, Executor: inproc.NewFunc(stepper), Store: st, Log: log, Pool: hone.Resources{CPU: 2}}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// resumeCut resumes the experiment in dir with the per-trial files.
func resumeCut(dir string, log io.Writer, opts ...func(*runner.Options)) (*runner.Outcome, error) {
	files := callback.NewTrialFiles(dir, callback.NoSync())
	out, err := runner.Resume(context.Background(), cutExperiment(files), cutOptions(dir, log, opts...), hone.ResumeFlags{Unfinished: true})
	return out, errors.Join(err, files.Close())
}

// journalRows replays dir's journal through a fresh controller and returns,
// per trial, the "step" and training_iteration of every result it
// notifies, in journal order, as "step/iteration" strings.
func journalRows(t tb, dir string) map[string][]string {
	t.Helper()
	j, err := journal.Read(filepath.Join(dir, journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := controller.New(cutExperiment(nil), hone.Resources{CPU: 2})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, l := range j.Lines {
		if l.Event == nil {
			continue
		}
		ctl.Step(*l.Event)
		for _, a := range ctl.Ready() {
			if a.Kind == controller.ActNotify && a.Note == controller.NoteResult {
				step, _ := hone.Number(a.Result.Metrics["step"])
				rows[a.Trial.ID] = append(rows[a.Trial.ID], fmt.Sprintf("%d/%d", int(step), a.Result.TrainingIteration))
			}
		}
	}
	return rows
}

// fileRows reads the "step/iteration" of every row of a trial's
// result.json and progress.csv.
func fileRows(t tb, trialDir string) (jsonRows, csvRows []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(trialDir, callback.ResultFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "" {
			continue
		}
		var row map[string]any
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("%s: %q: %v", trialDir, line, err)
		}
		step, _ := hone.Number(row["step"])
		it, _ := hone.Number(row[hone.FieldTrainingIteration])
		jsonRows = append(jsonRows, fmt.Sprintf("%d/%d", int(step), int(it)))
	}
	var recs [][]string
	if f, err := os.Open(filepath.Join(trialDir, callback.ProgressFile)); err == nil {
		recs, err = csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", trialDir, err)
		}
	}
	if len(recs) > 0 {
		sc, ic := slices.Index(recs[0], "step"), slices.Index(recs[0], hone.FieldTrainingIteration)
		for _, r := range recs[1:] {
			csvRows = append(csvRows, r[sc]+"/"+r[ic])
		}
	}
	return jsonRows, csvRows
}

// checkCut checks an experiment directory after a resume: every trial
// ended, the per-trial files hold each journaled result exactly once and
// in journal order, the journal's records show every trial, and every
// checkpoint they name exists. It returns the rows, for comparison.
func checkCut(t tb, what, dir string, out *runner.Outcome) map[string][]string {
	t.Helper()
	want := journalRows(t, dir)
	res, err := results.Open(dir)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(res.Trials) != 3 || len(out.Trials) != 3 {
		t.Fatalf("%s: the journal's records show %d trials, the outcome %d; want 3", what, len(res.Trials), len(out.Trials))
	}
	for i, rt := range res.Trials {
		ot := out.Trials[i]
		if rt.ID != ot.ID || rt.Status != hone.StatusTerminated || ot.Status != hone.StatusTerminated {
			t.Fatalf("%s: trial %d: journal records %s %s, outcome %s %s; want both TERMINATED", what, i, rt.ID, rt.Status, ot.ID, ot.Status)
		}
		js, cs := fileRows(t, rt.Dir)
		if !slices.Equal(js, want[rt.ID]) || !slices.Equal(cs, want[rt.ID]) {
			t.Fatalf("%s: trial %s: the journal has results %v;\nresult.json holds %v\nprogress.csv holds %v", what, rt.ID, want[rt.ID], js, cs)
		}
		if last := want[rt.ID]; len(last) == 0 || !strings.HasPrefix(last[len(last)-1], strconv.Itoa(cutSteps)+"/") {
			t.Fatalf("%s: trial %s did not reach step %d: %v", what, rt.ID, cutSteps, last)
		}
		for _, cp := range rt.Checkpoints {
			if _, err := os.Stat(cp); err != nil {
				t.Fatalf("%s: trial %s: the journal names checkpoint %s: %v", what, rt.ID, cp, err)
			}
		}
	}
	return want
}

// TestResumeFromJournalCutAtEveryByte runs a small experiment with real
// trials (in-process functions), the per-trial files and checkpoints, then
// for each byte offset of its journal: restores the finished experiment
// directory, cuts the journal there (the files and checkpoints are then
// ahead of it, as after a crash that lost the journal's tail, or a torn
// record), resumes, and checks that the resume completes, every trial is
// in the journal's records and TERMINATED, result.json and progress.csv
// hold every journaled result exactly once and in order, and a second
// resume succeeds and changes nothing. Offsets inside the header must fail
// clearly. By default a spread of offsets is checked (every line boundary
// and its neighbours, and offsets drawn by a rapid property); HONE_LONG=1
// checks them all.
// Checkpoint retention (keep 1) deletes checkpoints that a cut journal
// still names, so some resumes also go through the missing-checkpoint
// fallback.
func TestResumeFromJournalCutAtEveryByte(t *testing.T) {
	root, err := os.MkdirTemp(scratch.Dir(), "hone-cut-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	orig := filepath.Join(root, "orig")
	files := callback.NewTrialFiles(orig, callback.NoSync())
	// A snapshot at nearly every step, all kept: each cut is resumed from
	// the newest snapshot before it (and its tail), or by a whole replay
	// when the cut falls before the first.
	snapAll := func(o *runner.Options) { runner.SetSnapshotEvery(o, 1, 1<<20, time.Nanosecond) }
	if _, err := runner.Run(context.Background(), cutExperiment(files), cutOptions(orig, io.Discard, snapAll)); err != nil {
		t.Fatal(err)
	}
	snaps, err := journal.Snapshots(filepath.Join(orig, journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) < 5 {
		t.Fatalf("the run wrote %d snapshots, want many", len(snaps))
	}
	if err := files.Close(); err != nil {
		t.Fatal(err)
	}
	full, err := os.ReadFile(filepath.Join(orig, journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	header := bytes.IndexByte(full, '\n') + 1

	// cutAt checks one offset and reports whether the resume met a
	// checkpoint that retention had deleted.
	snapped := 0 // resumes that restored a snapshot
	cutAt := func(t tb, off int) (fellBack bool) {
		dir := filepath.Join(root, strconv.Itoa(off))
		defer os.RemoveAll(dir)
		if err := fsutil.CopyTree(orig, dir); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(filepath.Join(dir, journal.FileName), int64(off)); err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("journal cut at byte %d of %d", off, len(full))
		var log bytes.Buffer
		out, err := resumeCut(dir, &log)
		if off < header {
			if err == nil || !strings.Contains(err.Error(), "header") {
				t.Fatalf("%s (inside the header): resume = %v, want an error about the header", what, err)
			}
			return false
		}
		if err != nil {
			t.Fatalf("%s: resume: %v\n%s", what, err, log.String())
		}
		if strings.Contains(log.String(), "resume: restored ") {
			snapped++
		}
		first := checkCut(t, what, dir, out)
		// Nothing was appended after torn bytes: the journal reads whole.
		if _, err := journal.Read(filepath.Join(dir, journal.FileName)); err != nil {
			t.Fatalf("%s: after the resume: %v", what, err)
		}
		out, err = resumeCut(dir, io.Discard)
		if err != nil {
			t.Fatalf("%s: second resume: %v", what, err)
		}
		if second := checkCut(t, what+", second resume", dir, out); !mapsEqual(first, second) {
			t.Fatalf("%s: the second resume changed the results: %v, then %v", what, first, second)
		}
		return strings.Contains(log.String(), "is missing")
	}

	offsets := lineOffsets(full)
	if os.Getenv("HONE_LONG") != "" {
		offsets = make([]int, len(full)+1)
		for i := range offsets {
			offsets[i] = i
		}
	}
	t.Logf("journal of %d bytes, %d lines; checking %d offsets", len(full), bytes.Count(full, []byte{'\n'}), len(offsets))
	fellBack := 0 // resumes that found a restore checkpoint the full run had deleted
	for _, off := range offsets {
		if cutAt(t, off) {
			fellBack++
		}
	}
	t.Logf("%d resumes restarted a trial from an older checkpoint or from scratch: the one the cut journal names was deleted by retention", fellBack)
	t.Logf("%d of %d resumes restored a snapshot (%d snapshots)", snapped, len(offsets), len(snaps))
	if snapped == 0 || snapped > len(offsets)-10 {
		t.Errorf("%d of %d resumes restored a snapshot: want both resumes from a snapshot and whole replays", snapped, len(offsets))
	}
	if fellBack == 0 {
		t.Error("no cut made a resume find a deleted checkpoint: the experiment does not exercise the fallback")
	}
	if os.Getenv("HONE_LONG") == "" { // and offsets inside lines, drawn at random
		rapid.Check(t, func(rt *rapid.T) {
			cutAt(rt, rapid.IntRange(0, len(full)).Draw(rt, "offset"))
		})
	}
}

// lineOffsets returns every line boundary of data, the bytes around each,
// and both ends.
func lineOffsets(data []byte) []int {
	set := map[int]bool{0: true, len(data): true}
	for i, b := range data {
		if b == '\n' {
			for _, o := range []int{i - 1, i, i + 1, i + 2} {
				if o >= 0 && o <= len(data) {
					set[o] = true
				}
			}
		}
	}
	out := make([]int, 0, len(set))
	for o := range set {
		out = append(out, o)
	}
	slices.Sort(out)
	return out
}

func mapsEqual(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestResumeCorruptMiddleLine corrupts a line in the middle of a real
// journal: resume refuses it with an error naming the line and changes
// nothing; with TruncateJournal it keeps the lines from the corrupt one on
// in a file beside the journal, cuts them, and completes the experiment
// with every result row exactly once.
func TestResumeCorruptMiddleLine(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "exp")
	files := callback.NewTrialFiles(dir, callback.NoSync())
	if _, err := runner.Run(context.Background(), cutExperiment(files), cutOptions(dir, io.Discard)); err != nil {
		t.Fatal(err)
	}
	if err := files.Close(); err != nil {
		t.Fatal(err)
	}
	jp := filepath.Join(dir, journal.FileName)
	data, err := os.ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte{'\n'})
	const bad = 20 // 1-based line number of the corrupted line
	if len(lines) < bad+5 {
		t.Fatalf("journal has only %d lines", len(lines))
	}
	lines[bad-1] = []byte("{\"in\":{\"k\":\x00garbage\n")
	corrupt := bytes.Join(lines, nil)
	if err := os.WriteFile(jp, corrupt, 0o644); err != nil {
		t.Fatal(err)
	}

	_, err = resumeCut(dir, io.Discard)
	var ce *journal.CorruptError
	if !errors.As(err, &ce) || ce.Line != bad || !strings.Contains(err.Error(), "line 20 is corrupt") || !strings.Contains(err.Error(), "--truncate-journal") {
		t.Fatalf("resume of a journal corrupt at line %d = %v, want an error naming the line and the way to continue", bad, err)
	}
	if now, _ := os.ReadFile(jp); !bytes.Equal(now, corrupt) {
		t.Fatal("the refused resume changed the journal")
	}

	var log bytes.Buffer
	out, err := resumeCut(dir, &log, func(o *runner.Options) { o.TruncateJournal = true })
	if err != nil {
		t.Fatalf("resume with TruncateJournal: %v\n%s", err, log.String())
	}
	kept, err := os.ReadFile(jp + journal.CorruptSuffix + "1")
	if err != nil {
		t.Fatal(err)
	}
	if want := bytes.Join(lines[bad-1:], nil); !bytes.Equal(kept, want) {
		t.Errorf("the kept lines are %q, want %q", kept, want)
	}
	if !strings.Contains(log.String(), "line 20 is corrupt") || !strings.Contains(log.String(), journal.FileName+journal.CorruptSuffix+"1") {
		t.Errorf("the log does not say what was cut and where it is kept:\n%s", log.String())
	}
	now, err := os.ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	if prefix := bytes.Join(lines[:bad-1], nil); !bytes.HasPrefix(now, prefix) {
		t.Error("the journal does not start with the lines before the corrupt one")
	}
	checkCut(t, "after TruncateJournal", dir, out)
	out, err = resumeCut(dir, io.Discard)
	if err != nil {
		t.Fatalf("second resume: %v", err)
	}
	checkCut(t, "second resume", dir, out)
}

package callback

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone"
)

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

var _ hone.Clock = fixedClock{}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readResults(t *testing.T, p string) []map[string]any {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		rows = append(rows, m)
	}
	return rows
}

func readCSV(t *testing.T, p string) [][]string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll() // all records must have the header's length
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return recs
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func result(it int, metrics map[string]any) *hone.Result {
	return &hone.Result{
		Metrics:                metrics,
		TrainingIteration:      it,
		TimeThisIter:           0.5,
		TimeTotal:              0.5 * float64(it),
		TimeSinceRestore:       0.5 * float64(it),
		IterationsSinceRestore: it,
		Timestamp:              t0.Add(time.Duration(it) * time.Second),
		PID:                    42,
		Hostname:               "host",
	}
}

// TestTrialFilesSequence drives one trial through start, results (one with
// a checkpoint, one with new keys, NaN and infinities), a PBT config change,
// an error with a retry, and completion, and checks every file.
func TestTrialFilesSequence(t *testing.T) {
	dir := t.TempDir()
	f := NewTrialFiles(dir, WithClock(fixedClock{t0}))
	tr := &hone.Trial{
		ID: "0a1b2c3d", Tag: "0_lr=0.1", Dir: "trainable_0a1b2c3d_0_lr=0.1",
		Config: hone.Config{"lr": 0.1, "model": map[string]any{"width": 32}},
		Status: hone.StatusRunning,
	}
	td := filepath.Join(dir, tr.Dir)

	f.OnTrialStart(tr)
	wantParams := "{\n  \"lr\": 0.1,\n  \"model\": {\n    \"width\": 32\n  }\n}\n"
	if got := read(t, filepath.Join(td, ParamsFile)); got != wantParams {
		t.Errorf("params.json = %q, want %q", got, wantParams)
	}

	f.OnTrialResult(tr, result(1, map[string]any{"loss": 0.5}))
	r2 := result(2, map[string]any{"loss": math.NaN()})
	r2.Checkpoint = &hone.Checkpoint{TrialID: tr.ID, Index: 0, Path: tr.Dir + "/checkpoint_000000"}
	f.OnCheckpoint(tr, r2.Checkpoint) // the runner commits, then reports
	f.OnTrialResult(tr, r2)
	// Rows wait for FlushResults, then are on disk before any close.
	if n := len(readResults(t, filepath.Join(td, ResultFile))); n != 0 {
		t.Fatalf("result.json has %d rows before FlushResults, want 0", n)
	}
	if err := f.FlushResults(false); err != nil {
		t.Fatal(err)
	}
	if n := len(readResults(t, filepath.Join(td, ResultFile))); n != 2 {
		t.Fatalf("result.json has %d rows after FlushResults, want 2", n)
	}
	if n := len(readCSV(t, filepath.Join(td, ProgressFile))); n != 3 {
		t.Fatalf("progress.csv has %d records after FlushResults, want a header and 2 rows", n)
	}

	// A new metric, nested values and infinities extend the CSV header.
	f.OnTrialResult(tr, result(3, map[string]any{
		"loss": math.Inf(1), "acc": 0.9, "grad": map[string]any{"norm": math.Inf(-1)},
	}))

	// PBT changes the configuration; the restart rewrites params.json.
	tr.Config = hone.Config{"lr": 0.2, "model": map[string]any{"width": 32}}
	tr.Tag = "0_lr=0.1@perturbed[lr=0.2]"
	f.OnTrialStart(tr)
	if got := read(t, filepath.Join(td, ParamsFile)); !strings.Contains(got, `"lr": 0.2`) {
		t.Errorf("params.json after config change = %q", got)
	}
	f.OnTrialResult(tr, result(4, map[string]any{"loss": 0.1, "acc": 0.95}))

	tr.Failures = 1
	f.OnTrialError(tr, errors.New("exit status 1\nTraceback: boom"))
	f.OnTrialStart(tr) // retried
	r5 := result(5, map[string]any{"loss": 0.05, "acc": 0.97})
	r5.Done = true
	f.OnTrialResult(tr, r5)
	f.OnTrialComplete(tr)
	f.OnExperimentEnd([]*hone.Trial{tr})
	if err := f.Err(); err != nil {
		t.Fatal(err)
	}
	if len(f.open) != 0 {
		t.Errorf("%d trials still open after the end", len(f.open))
	}

	rows := readResults(t, filepath.Join(td, ResultFile))
	if len(rows) != 5 {
		t.Fatalf("result.json has %d rows, want 5", len(rows))
	}
	want1 := map[string]any{
		"loss": 0.5, "training_iteration": 1.0, "time_this_iter_s": 0.5, "time_total_s": 0.5,
		"time_since_restore": 0.5, "iterations_since_restore": 1.0,
		"timestamp": float64(t0.Unix() + 1), "date": t0.Add(time.Second).Local().Format("2006-01-02_15-04-05"),
		"pid": 42.0, "hostname": "host", "trial_id": "0a1b2c3d", "experiment_tag": "0_lr=0.1",
		"done": false, "config": map[string]any{"lr": 0.1, "model": map[string]any{"width": 32.0}},
	}
	if !reflect.DeepEqual(rows[0], want1) {
		t.Errorf("row 1 =\n%v\nwant\n%v", rows[0], want1)
	}
	if rows[1]["loss"] != "NaN" || rows[1]["checkpoint_dir_name"] != "checkpoint_000000" {
		t.Errorf("row 2 = %v", rows[1])
	}
	if _, ok := rows[0]["checkpoint_dir_name"]; ok {
		t.Error("row 1 has checkpoint_dir_name without a checkpoint")
	}
	if rows[2]["loss"] != "Infinity" || !reflect.DeepEqual(rows[2]["grad"], map[string]any{"norm": "-Infinity"}) {
		t.Errorf("row 3 = %v", rows[2])
	}
	if rows[3]["experiment_tag"] != "0_lr=0.1@perturbed[lr=0.2]" || rows[3]["config"].(map[string]any)["lr"] != 0.2 {
		t.Errorf("row 4 = %v", rows[3])
	}
	if rows[4]["done"] != true {
		t.Errorf("row 5 = %v", rows[4])
	}

	recs := readCSV(t, filepath.Join(td, ProgressFile))
	wantHeader := []string{
		"date", "done", "experiment_tag", "hostname", "iterations_since_restore", "loss", "pid",
		"time_since_restore", "time_this_iter_s", "time_total_s", "timestamp", "training_iteration", "trial_id",
		// added by row 2, then row 3, each sorted
		"checkpoint_dir_name",
		"acc", "grad/norm",
	}
	if !reflect.DeepEqual(recs[0], wantHeader) {
		t.Fatalf("progress.csv header = %q\nwant %q", recs[0], wantHeader)
	}
	if len(recs) != 6 {
		t.Fatalf("progress.csv has %d records, want header + 5", len(recs))
	}
	col := map[string]int{}
	for i, k := range recs[0] {
		col[k] = i
	}
	cell := func(row int, k string) string { return recs[row][col[k]] }
	for _, c := range []struct {
		row       int
		key, want string
	}{
		{1, "loss", "0.5"}, {1, "acc", ""}, {1, "checkpoint_dir_name", ""}, {1, "training_iteration", "1"},
		{2, "loss", "NaN"}, {2, "checkpoint_dir_name", "checkpoint_000000"},
		{3, "loss", "Infinity"}, {3, "grad/norm", "-Infinity"}, {3, "acc", "0.9"},
		{4, "experiment_tag", "0_lr=0.1@perturbed[lr=0.2]"},
		{5, "done", "true"}, {5, "time_total_s", "2.5"},
	} {
		if got := cell(c.row, c.key); got != c.want {
			t.Errorf("progress.csv row %d %s = %q, want %q", c.row, c.key, got, c.want)
		}
	}
	if _, ok := col["config"]; ok {
		t.Error("progress.csv has a config column")
	}

	wantErr := "[2026-01-02T03:04:05Z] trial 0a1b2c3d failed (failure 1)\nexit status 1\nTraceback: boom\n\n"
	if got := read(t, filepath.Join(td, ErrorFile)); got != wantErr {
		t.Errorf("error.txt = %q, want %q", got, wantErr)
	}
}

func TestParamsRewrittenOnlyOnChange(t *testing.T) {
	dir := t.TempDir()
	tr := &hone.Trial{ID: "t1", Dir: "t1", Config: hone.Config{"a": 1}}
	f := NewTrialFiles(dir, NoSync())
	f.OnTrialStart(tr)
	p := filepath.Join(dir, "t1", ParamsFile)
	info1, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	f.OnTrialStart(tr)
	f.OnTrialComplete(tr)
	// A new TrialFiles (a resumed experiment) compares with the file.
	NewTrialFiles(dir, NoSync()).OnTrialStart(tr)
	info2, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(info1, info2) {
		t.Error("params.json was rewritten although the config did not change")
	}
	tr.Config = hone.Config{"a": 2}
	f.OnTrialStart(tr)
	if got := read(t, p); got != "{\n  \"a\": 2\n}\n" {
		t.Errorf("params.json = %q", got)
	}
}

// TestResumeAppends checks that a new TrialFiles over an existing trial
// directory (a resumed experiment) appends to the files, reuses the CSV
// header, and drops a line cut short by a crash.
func TestResumeAppends(t *testing.T) {
	dir := t.TempDir()
	tr := &hone.Trial{ID: "t1", Dir: "t1", Config: hone.Config{"a": 1}}
	f := NewTrialFiles(dir, NoSync())
	f.OnTrialStart(tr)
	f.OnTrialResult(tr, result(1, map[string]any{"loss": 1.0}))
	f.OnTrialResult(tr, result(2, map[string]any{"loss": 0.5}))
	if err := f.FlushResults(false); err != nil {
		t.Fatal(err)
	}
	// Simulate a crash: the files stay as they are, plus partial lines.
	for _, name := range []string{ResultFile, ProgressFile} {
		a, err := os.OpenFile(filepath.Join(dir, "t1", name), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		a.WriteString(`{"loss": 0.2`)
		a.Close()
	}
	g := NewTrialFiles(dir, NoSync())
	g.OnTrialStart(tr)
	g.OnTrialResult(tr, result(3, map[string]any{"loss": 0.25}))
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	rows := readResults(t, filepath.Join(dir, "t1", ResultFile))
	if len(rows) != 3 || rows[2]["loss"] != 0.25 {
		t.Errorf("result.json rows = %v", rows)
	}
	recs := readCSV(t, filepath.Join(dir, "t1", ProgressFile))
	if len(recs) != 4 || recs[0][0] != "date" {
		t.Errorf("progress.csv = %q", recs)
	}
}

// TestRecoverResult checks what resume does after a kill: rows that were
// flushed stay once, rows that were only buffered are written from the
// results handed back, and a file that lags the other (a kill between the
// two writes) gets only its missing rows.
func TestRecoverResult(t *testing.T) {
	dir := t.TempDir()
	tr := &hone.Trial{ID: "t1", Dir: "t1", Config: hone.Config{"a": 1}}
	rs := []*hone.Result{
		result(1, map[string]any{"loss": 1.0}),
		result(2, map[string]any{"loss": 0.5}),
		result(3, map[string]any{"loss": 0.25}),
		result(4, map[string]any{"loss": 0.125}),
	}
	f := NewTrialFiles(dir, NoSync())
	f.OnTrialStart(tr)
	f.OnTrialResult(tr, rs[0])
	f.OnTrialResult(tr, rs[1])
	f.OnTrialResult(tr, rs[2])
	if err := f.FlushResults(false); err != nil {
		t.Fatal(err)
	}
	f.OnTrialResult(tr, rs[3]) // buffered when the process is killed
	// progress.csv lost its last row: drop it by hand.
	pp := filepath.Join(dir, "t1", ProgressFile)
	data := read(t, pp)
	data = data[:strings.LastIndex(strings.TrimSuffix(data, "\n"), "\n")+1]
	if err := os.WriteFile(pp, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}

	g := NewTrialFiles(dir, NoSync())
	for seq := 1; seq < len(rs); seq++ { // the journal's tail after result 1
		g.RecoverResult(tr, rs[seq], seq)
	}
	if err := g.FlushResults(false); err != nil {
		t.Fatal(err)
	}
	g.OnTrialResult(tr, result(5, map[string]any{"loss": 0.0625}))
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	var iters []any
	for _, row := range readResults(t, filepath.Join(dir, "t1", ResultFile)) {
		iters = append(iters, row[hone.FieldTrainingIteration])
	}
	if want := []any{1.0, 2.0, 3.0, 4.0, 5.0}; !reflect.DeepEqual(iters, want) {
		t.Errorf("result.json iterations = %v, want %v", iters, want)
	}
	recs := readCSV(t, pp)
	col := slices.Index(recs[0], hone.FieldTrainingIteration)
	var got []string
	for _, rec := range recs[1:] {
		got = append(got, rec[col])
	}
	if want := []string{"1", "2", "3", "4", "5"}; !slices.Equal(got, want) {
		t.Errorf("progress.csv iterations = %v, want %v", got, want)
	}
}

// TestMaxOpen checks least-recently-used closing: with room for one trial,
// interleaved results of three trials all land in the right files.
func TestMaxOpen(t *testing.T) {
	dir := t.TempDir()
	f := NewTrialFiles(dir, NoSync(), WithMaxOpen(1))
	var trials []*hone.Trial
	for _, id := range []string{"a", "b", "c"} {
		tr := &hone.Trial{ID: id, Dir: "trial_" + id, Config: hone.Config{"id": id}}
		trials = append(trials, tr)
		f.OnTrialStart(tr)
	}
	for it := 1; it <= 3; it++ {
		for i, tr := range trials {
			m := map[string]any{"loss": float64(i)}
			if it == 3 && i == 1 {
				m["new"] = "key" // a header change while reopened
			}
			f.OnTrialResult(tr, result(it, m))
			if len(f.open) > 1 {
				t.Fatalf("%d trials open, max 1", len(f.open))
			}
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for i, tr := range trials {
		rows := readResults(t, filepath.Join(dir, tr.Dir, ResultFile))
		if len(rows) != 3 {
			t.Fatalf("trial %s has %d rows", tr.ID, len(rows))
		}
		for j, r := range rows {
			if r["trial_id"] != tr.ID || r["loss"] != float64(i) || r["training_iteration"] != float64(j+1) {
				t.Errorf("trial %s row %d = %v", tr.ID, j, r)
			}
		}
		recs := readCSV(t, filepath.Join(dir, tr.Dir, ProgressFile))
		if len(recs) != 4 {
			t.Errorf("trial %s progress.csv has %d records", tr.ID, len(recs))
		}
	}
}

func TestErrorsAreKept(t *testing.T) {
	dir := t.TempDir()
	// A file where the trial directory should be.
	if err := os.WriteFile(filepath.Join(dir, "blocked"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f := NewTrialFiles(dir, NoSync())
	bad := &hone.Trial{ID: "bad", Dir: "blocked"}
	good := &hone.Trial{ID: "good", Dir: "good"}
	f.OnTrialStart(bad)
	f.OnTrialStart(good)
	f.OnTrialResult(bad, result(1, nil))
	f.OnTrialResult(good, result(1, nil))
	err := f.Close()
	if err == nil || !strings.Contains(err.Error(), "trial bad") {
		t.Errorf("Close = %v, want the error of trial bad", err)
	}
	if rows := readResults(t, filepath.Join(dir, "good", ResultFile)); len(rows) != 1 {
		t.Errorf("good trial has %d rows", len(rows))
	}
}

package results_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/callback"
	"github.com/hone-tune/hone/controller"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
)

const (
	fxTrials     = 5
	fxIterations = 12
	fxEvery      = 2 // checkpoint every 2 iterations: indices 0..5
	fxKeep       = 2
)

// withAcc wraps a sim trainable and adds an "acc" metric (1 - loss) that is
// NaN on every 4th iteration, including the last one, plus a "phase" string.
type withAcc struct {
	sim.Trainable
	iter int
}

func (w *withAcc) Step() (sim.Step, error) {
	s, err := w.Trainable.Step()
	if err != nil {
		return s, err
	}
	w.iter++
	loss, _ := hone.Number(s.Metrics["loss"])
	acc := 1 - loss
	if w.iter%4 == 0 {
		acc = math.NaN()
	}
	s.Metrics["acc"] = acc
	s.Metrics["phase"] = "train"
	return s, nil
}

// fixture runs a finished experiment into a fresh directory and returns the
// directory and the runner's outcome.
func fixture(t *testing.T) (string, *runner.Outcome) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "exp")
	sr, err := random.New(space.Space{
		"initial":   space.Uniform(1, 3),
		"rate":      space.Uniform(0.05, 0.5),
		"asymptote": space.Uniform(0, 0.5),
		"model":     space.Space{"width": space.Choice(8, 16)},
	}, fxTrials, nil, 11)
	if err != nil {
		t.Fatal(err)
	}
	curve := sim.Curve{MaxIterations: fxIterations, CheckpointEvery: fxEvery, Noise: 0.05, Seed: 4}
	model := func(cfg hone.Config, id string) (sim.Trainable, error) {
		tr, err := curve.New(cfg, id)
		if err != nil {
			return nil, err
		}
		return &withAcc{Trainable: tr}, nil
	}
	st, err := local.New(dir, local.NoSync())
	if err != nil {
		t.Fatal(err)
	}
	files := callback.NewTrialFiles(dir, callback.NoSync())
	exp := &hone.Experiment{
		Name: "resexp", Metric: "loss", Mode: hone.Min, Searcher: sr, Seed: 11,
		MaxConcurrentTrials: 2,
		Checkpoint:          hone.CheckpointConfig{NumToKeep: fxKeep},
		Callbacks:           []hone.Callback{files},
	}
	out, err := runner.Run(context.Background(), exp, runner.Options{
		Dir: dir, Executor: sim.New(model), Log: io.Discard, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if err := files.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out.Trials) != fxTrials {
		t.Fatalf("fixture: %d trials, want %d", len(out.Trials), fxTrials)
	}
	return dir, out
}

func openExp(t *testing.T, dir string) *results.Experiment {
	t.Helper()
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ja, jb)
}

func TestOpen(t *testing.T) {
	dir, out := fixture(t)
	e := openExp(t, dir)
	if e.Dir != dir && e.Dir != filepath.Clean(dir) {
		t.Errorf("Dir = %q, want %q", e.Dir, dir)
	}
	if e.Name != "resexp" || e.Seed != 11 {
		t.Errorf("Name, Seed = %q, %d; want resexp, 11", e.Name, e.Seed)
	}
	if len(e.Trials) != len(out.Trials) {
		t.Fatalf("%d trials, want %d", len(e.Trials), len(out.Trials))
	}
	for i, tr := range e.Trials {
		want := out.Trials[i]
		if tr.ID != want.ID || tr.Index != want.Index || tr.Tag != want.Tag {
			t.Errorf("trial %d = (%s, %d, %q), want (%s, %d, %q)", i, tr.ID, tr.Index, tr.Tag, want.ID, want.Index, want.Tag)
		}
		if e.Trial(want.ID) != tr {
			t.Errorf("Trial(%s) is not the listed trial", want.ID)
		}
		if !jsonEqual(t, tr.Config, want.Config) || len(tr.Config) != 4 {
			t.Errorf("trial %s config %v, want %v", tr.ID, tr.Config, want.Config)
		}
		if w, ok := tr.Config.Lookup("model", "width"); !ok || (w != 8.0 && w != 16.0) {
			t.Errorf("trial %s config model.width = %v (%T)", tr.ID, w, w)
		}
		if tr.Status != hone.StatusTerminated || tr.Error != "" || tr.Failures != 0 {
			t.Errorf("trial %s: status %s, error %q, failures %d; want TERMINATED, none", tr.ID, tr.Status, tr.Error, tr.Failures)
		}
		if !filepath.IsAbs(tr.Dir) || tr.Dir != filepath.Join(dir, filepath.FromSlash(want.Dir)) {
			t.Errorf("trial %s Dir = %q, want %q", tr.ID, tr.Dir, filepath.Join(dir, want.Dir))
		}
		if _, err := os.Stat(filepath.Join(tr.Dir, callback.ResultFile)); err != nil {
			t.Errorf("trial %s: %v", tr.ID, err)
		}

		// Checkpoints: the kept ones, oldest first, all on disk, and
		// nothing else on disk.
		onDisk, err := filepath.Glob(filepath.Join(tr.Dir, "checkpoint_*"))
		if err != nil {
			t.Fatal(err)
		}
		wantCps := []string{
			filepath.Join(tr.Dir, hone.CheckpointDirName(fxIterations/fxEvery-2)),
			filepath.Join(tr.Dir, hone.CheckpointDirName(fxIterations/fxEvery-1)),
		}
		if !slices.Equal(tr.Checkpoints, wantCps) {
			t.Errorf("trial %s checkpoints %v, want %v", tr.ID, tr.Checkpoints, wantCps)
		}
		if !slices.Equal(tr.Checkpoints, onDisk) {
			t.Errorf("trial %s checkpoints %v, on disk %v", tr.ID, tr.Checkpoints, onDisk)
		}
		for _, cp := range tr.Checkpoints {
			if fi, err := os.Stat(filepath.Join(cp, sim.StateFile)); err != nil || fi.Size() == 0 {
				t.Errorf("trial %s checkpoint %s: %v", tr.ID, cp, err)
			}
		}
		if want.Checkpoint == nil || filepath.Join(dir, filepath.FromSlash(want.Checkpoint.Path)) != tr.Checkpoints[len(tr.Checkpoints)-1] {
			t.Errorf("trial %s: last listed checkpoint is not the trial's latest %+v", tr.ID, want.Checkpoint)
		}

		rows, err := tr.Results()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != fxIterations {
			t.Fatalf("trial %s: %d results, want %d", tr.ID, len(rows), fxIterations)
		}
		for j, r := range rows {
			if it, ok := r.Value(hone.FieldTrainingIteration); !ok || it != float64(j+1) {
				t.Errorf("trial %s row %d: training_iteration %v", tr.ID, j, r[hone.FieldTrainingIteration])
			}
			if r[hone.FieldTrialID] != tr.ID {
				t.Errorf("trial %s row %d: trial_id %v", tr.ID, j, r[hone.FieldTrialID])
			}
		}
		if want.LastResult == nil {
			t.Fatalf("trial %s has no last result", tr.ID)
		}
		last, err := tr.Last()
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := last.Value("loss"); !ok || v != want.LastResult.Metrics["loss"] {
			t.Errorf("trial %s: last loss %v, want %v", tr.ID, last["loss"], want.LastResult.Metrics["loss"])
		}
		if last[hone.FieldDone] != true {
			t.Errorf("trial %s: last row done = %v", tr.ID, last[hone.FieldDone])
		}
	}
	if e.Trial("ffffffff") != nil {
		t.Error("Trial of an unknown id is not nil")
	}
}

// score computes a trial's expected score from its rows, independently of
// the package.
func score(t *testing.T, rows []results.Row, metric string, mode hone.Mode, scope string) (float64, bool) {
	t.Helper()
	var vals []float64
	for _, r := range rows {
		v, ok := r[metric].(float64)
		if ok && !math.IsNaN(v) {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return 0, false
	}
	avg := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	switch scope {
	case "last", "":
		return vals[len(vals)-1], true
	case "avg":
		return avg(vals), true
	case "all":
		if mode == hone.Max {
			return slices.Max(vals), true
		}
		return slices.Min(vals), true
	case "last-5-avg":
		return avg(vals[max(0, len(vals)-5):]), true
	case "last-10-avg":
		return avg(vals[max(0, len(vals)-10):]), true
	}
	t.Fatalf("bad scope %q in test", scope)
	return 0, false
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestBestScopes(t *testing.T) {
	dir, _ := fixture(t)
	e := openExp(t, dir)
	scopes := []string{"", results.ScopeLast, results.ScopeAvg, results.ScopeAll, results.ScopeLast5Avg, results.ScopeLast10Avg}
	distinct := map[string]map[float64]bool{} // metric/mode -> set of best values over scopes
	for _, metric := range []string{"loss", "acc"} {
		for _, mode := range []hone.Mode{hone.Min, hone.Max} {
			for _, scope := range scopes {
				var wantT *results.Trial
				var wantV float64
				for _, tr := range e.Trials {
					rows, err := tr.Results()
					if err != nil {
						t.Fatal(err)
					}
					v, ok := score(t, rows, metric, mode, scope)
					if !ok {
						t.Fatalf("trial %s has no %s", tr.ID, metric)
					}
					got, gok, err := tr.Score(hone.Objective{Metric: metric, Mode: mode}, scope)
					if err != nil || !gok || !near(got, v) {
						t.Errorf("%s.Score(%s, %s, %q) = %v, %v, %v; want %v", tr.ID, metric, mode, scope, got, gok, err, v)
					}
					if wantT == nil || mode.Better(v, wantV) {
						wantT, wantV = tr, v
					}
				}
				bt, bv, err := e.Best(hone.Objective{Metric: metric, Mode: mode}, scope)
				if err != nil {
					t.Fatalf("Best(%s, %s, %q): %v", metric, mode, scope, err)
				}
				if bt != wantT || !near(bv, wantV) {
					t.Errorf("Best(%s, %s, %q) = %s %v, want %s %v", metric, mode, scope, bt.ID, bv, wantT.ID, wantV)
				}
				k := metric + "/" + string(mode)
				if distinct[k] == nil {
					distinct[k] = map[float64]bool{}
				}
				distinct[k][bv] = true
			}
		}
	}
	// The scopes really are different views of the data.
	for k, vs := range distinct {
		if len(vs) < 4 {
			t.Errorf("%s: only %d distinct best values over the scopes: fixture too regular", k, len(vs))
		}
	}

	// Spot checks straight from the rows: "last" of acc skips the NaN of
	// the last row; "all" under min is the smallest loss.
	tr := e.Trials[0]
	rows, _ := tr.Results()
	if a, ok := rows[len(rows)-1]["acc"].(float64); !ok || !math.IsNaN(a) {
		t.Fatalf("fixture: last acc = %v, want NaN", rows[len(rows)-1]["acc"])
	}
	if v, ok, _ := tr.Score(hone.Objective{Metric: "acc", Mode: hone.Max}, results.ScopeLast); !ok || v != rows[len(rows)-2]["acc"] {
		t.Errorf("last acc = %v, want the second-to-last row's %v", v, rows[len(rows)-2]["acc"])
	}
	v, _, _ := tr.Score(hone.Objective{Metric: "loss", Mode: hone.Min}, results.ScopeAll)
	for _, r := range rows {
		if l := r["loss"].(float64); l < v {
			t.Errorf("all/min loss %v, but a row has %v", v, l)
		}
	}
	// A metric that is always NaN or absent counts as missing.
	if _, ok, err := tr.Score(hone.Objective{Metric: "phase", Mode: hone.Min}, results.ScopeLast); ok || err != nil {
		t.Errorf("Score of a string field = ok %v, err %v; want not ok", ok, err)
	}
}

func TestBestErrors(t *testing.T) {
	dir, _ := fixture(t)
	e := openExp(t, dir)

	_, _, err := e.Best(hone.Objective{Metric: "accuracy", Mode: hone.Max}, results.ScopeLast)
	if err == nil {
		t.Fatal("Best by a metric in no result: no error")
	}
	for _, want := range []string{`"accuracy"`, "loss", "acc", hone.FieldTrainingIteration, hone.FieldTimeTotal, "phase"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}

	scopes := []string{"last", "avg", "all", "last-5-avg", "last-10-avg"}
	for _, metric := range []string{"loss", "accuracy"} {
		_, _, err = e.Best(hone.Objective{Metric: metric, Mode: hone.Min}, "last-3-avg")
		if err == nil {
			t.Fatalf("Best(%s) with scope last-3-avg: no error", metric)
		}
		for _, want := range append([]string{`"last-3-avg"`}, scopes...) {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Best(%s) scope error %q does not mention %q", metric, err, want)
			}
		}
		if _, ok, err := e.Trials[0].Score(hone.Objective{Metric: metric, Mode: hone.Min}, "best"); err == nil || ok {
			t.Errorf("Score(%s) with scope best = ok %v, err %v; want an error", metric, ok, err)
		}
	}

	for _, mode := range []hone.Mode{"maximize", "", "MAX"} {
		_, _, err = e.Best(hone.Objective{Metric: "loss", Mode: mode}, results.ScopeLast)
		if err == nil {
			t.Fatalf("Best with mode %q: no error", mode)
		}
		for _, want := range []string{strconv.Quote(string(mode)), `"min"`, `"max"`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("mode error %q does not mention %s", err, want)
			}
		}
	}
}

func TestWriteCSV(t *testing.T) {
	dir, _ := fixture(t)
	e := openExp(t, dir)
	var buf bytes.Buffer
	if err := e.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatalf("WriteCSV output is not CSV: %v\n%s", err, buf.String())
	}
	if len(recs) != 1+len(e.Trials) {
		t.Fatalf("%d CSV records, want a header and %d rows", len(recs), len(e.Trials))
	}
	header := recs[0]
	wantCfg := []string{"config/asymptote", "config/initial", "config/model/width", "config/rate"}
	if len(header) < 2+len(wantCfg) || header[0] != "trial_id" || header[1] != "status" || !slices.Equal(header[2:2+len(wantCfg)], wantCfg) {
		t.Fatalf("header %v: want trial_id, status, %v, then metrics", header, wantCfg)
	}
	metrics := header[2+len(wantCfg):]
	for _, want := range []string{"loss", "acc", "phase", hone.FieldTrainingIteration, hone.FieldDone, hone.FieldTimestamp, hone.FieldCheckpointDirName} {
		if !slices.Contains(metrics, want) {
			t.Errorf("header has no %q column: %v", want, header)
		}
	}
	if slices.Contains(metrics, hone.FieldConfig) || slices.Contains(metrics, hone.FieldTrialID) || !slices.IsSorted(metrics) {
		t.Errorf("metric columns %v: want sorted, without config and a second trial_id", metrics)
	}
	col := map[string]int{}
	for i, h := range header {
		if _, dup := col[h]; dup {
			t.Errorf("duplicate column %q", h)
		}
		col[h] = i
	}
	for i, tr := range e.Trials {
		rec := recs[1+i]
		if len(rec) != len(header) {
			t.Fatalf("row %d has %d cells, header %d", i, len(rec), len(header))
		}
		if rec[0] != tr.ID || rec[1] != string(hone.StatusTerminated) {
			t.Errorf("row %d starts %v, want %s, TERMINATED", i, rec[:2], tr.ID)
		}
		for _, k := range []string{"initial", "rate", "asymptote"} {
			got, err := strconv.ParseFloat(rec[col["config/"+k]], 64)
			if err != nil || got != tr.Config[k] {
				t.Errorf("row %d config/%s = %q, want %v", i, k, rec[col["config/"+k]], tr.Config[k])
			}
		}
		if w, _ := tr.Config.Lookup("model", "width"); rec[col["config/model/width"]] != strconv.Itoa(int(w.(float64))) {
			t.Errorf("row %d config/model/width = %q, want %v", i, rec[col["config/model/width"]], w)
		}
		last, _ := tr.Last()
		if got, err := strconv.ParseFloat(rec[col["loss"]], 64); err != nil || got != last["loss"] {
			t.Errorf("row %d loss = %q, want the last result's %v", i, rec[col["loss"]], last["loss"])
		}
		if rec[col["acc"]] != "NaN" {
			t.Errorf("row %d acc = %q, want NaN (the last result's)", i, rec[col["acc"]])
		}
		if rec[col[hone.FieldTrainingIteration]] != strconv.Itoa(fxIterations) || rec[col[hone.FieldDone]] != "true" || rec[col["phase"]] != "train" {
			t.Errorf("row %d: training_iteration %q, done %q, phase %q", i, rec[col[hone.FieldTrainingIteration]], rec[col[hone.FieldDone]], rec[col["phase"]])
		}
		if rec[col[hone.FieldCheckpointDirName]] != hone.CheckpointDirName(fxIterations/fxEvery-1) {
			t.Errorf("row %d checkpoint_dir_name %q", i, rec[col[hone.FieldCheckpointDirName]])
		}
	}
}

func TestOpenTornJournal(t *testing.T) {
	dir, _ := fixture(t)
	before := openExp(t, dir)
	jp := filepath.Join(dir, journal.FileName)
	data, err := os.ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	lastLine := lines[len(lines)-1]
	half := lastLine[:len(lastLine)/2]
	// A record that would change a trial's status, cut in two.
	status := []byte(`{"rec":{"o":"status","t":"` + before.Trials[0].ID + `","st":"ERROR","err":"boom"}}`)
	for name, tail := range map[string][]byte{
		"half a line":                  half,
		"half a line with its newline": append(slices.Clone(half), '\n'),
		"half a status record":         status[:len(status)-3],
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(jp, append(slices.Clone(data), tail...), 0o644); err != nil {
				t.Fatal(err)
			}
			after, err := results.Open(dir)
			if err != nil {
				t.Fatalf("Open with a torn last line: %v", err)
			}
			if len(after.Trials) != len(before.Trials) {
				t.Fatalf("%d trials, want %d", len(after.Trials), len(before.Trials))
			}
			for i, tr := range after.Trials {
				b := before.Trials[i]
				if tr.ID != b.ID || tr.Status != b.Status || tr.Error != b.Error || !reflect.DeepEqual(tr.Checkpoints, b.Checkpoints) || !reflect.DeepEqual(tr.Config, b.Config) {
					t.Errorf("trial %d after the torn line: %+v, want %+v", i, tr, b)
				}
			}
			if _, _, err := after.Best(hone.Objective{Metric: "loss", Mode: hone.Min}, results.ScopeLast); err != nil {
				t.Error(err)
			}
		})
	}
	// The same status record, complete, is read: the test above is not
	// vacuous.
	if err := os.WriteFile(jp, append(slices.Clone(data), append(status, '\n')...), 0o644); err != nil {
		t.Fatal(err)
	}
	e := openExp(t, dir)
	if e.Trials[0].Status != hone.StatusError || e.Trials[0].Error != "boom" {
		t.Errorf("a complete status record was not applied: %s %q", e.Trials[0].Status, e.Trials[0].Error)
	}
	// Corruption before the last line is an error, not a torn write.
	corrupt := slices.Clone(data)
	corrupt = append(corrupt[:len(corrupt)-len(lastLine)-1], append(append(slices.Clone(half), '\n'), append(lastLine, '\n')...)...)
	if err := os.WriteFile(jp, corrupt, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := results.Open(dir); err == nil {
		t.Error("Open of a journal corrupt before its last line: no error")
	}
}

func TestOpenWithoutJournal(t *testing.T) {
	empty := t.TempDir()
	if _, err := results.Open(empty); err == nil || !errors.Is(err, journal.ErrNoJournal) {
		t.Errorf("Open of a directory without a journal: %v, want ErrNoJournal", err)
	}
	if _, err := results.Open(filepath.Join(empty, "missing")); err == nil {
		t.Error("Open of a missing directory: no error")
	}
	// A file that is not a journal.
	if err := os.WriteFile(filepath.Join(empty, journal.FileName), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := results.Open(empty); err == nil {
		t.Error("Open of a journal without a header: no error")
	}
}

func TestResultsNonFinite(t *testing.T) {
	dir, _ := fixture(t)
	e := openExp(t, dir)
	tr := e.Trials[1]
	rf := filepath.Join(tr.Dir, callback.ResultFile)
	raw, err := os.ReadFile(rf)
	if err != nil {
		t.Fatal(err)
	}
	// The NaN acc of iteration 4 was written as the string "NaN".
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if !strings.Contains(lines[3], `"acc":"NaN"`) {
		t.Fatalf("result.json line 4 has no \"acc\":\"NaN\": %s", lines[3])
	}
	rows, err := tr.Results()
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := rows[3]["acc"].(float64); !ok || !math.IsNaN(v) {
		t.Errorf("acc of row 4 = %#v, want math.NaN()", rows[3]["acc"])
	}
	if v, ok := rows[2]["acc"].(float64); !ok || math.IsNaN(v) {
		t.Errorf("acc of row 3 = %#v, want a number", rows[2]["acc"])
	}

	// Append a hand-written row, and a torn one after it, and read afresh.
	extra := `{"training_iteration":13,"loss":"NaN","up":"Infinity","down":"-Infinity","name":"x"}` + "\n" + `{"training_iteration":14,"lo`
	f, err := os.OpenFile(rf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(extra); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	tr = openExp(t, dir).Trial(tr.ID)
	rows, err = tr.Results()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != fxIterations+1 {
		t.Fatalf("%d rows, want %d (the torn last line ignored)", len(rows), fxIterations+1)
	}
	r := rows[fxIterations]
	if v, ok := r.Value("loss"); !ok || !math.IsNaN(v) {
		t.Errorf("loss = %#v, want NaN", r["loss"])
	}
	if v, ok := r.Value("up"); !ok || !math.IsInf(v, 1) {
		t.Errorf("up = %#v, want +Inf", r["up"])
	}
	if v, ok := r.Value("down"); !ok || !math.IsInf(v, -1) {
		t.Errorf("down = %#v, want -Inf", r["down"])
	}
	if r["name"] != "x" {
		t.Errorf("name = %#v, want the string x", r["name"])
	}
	// The NaN loss is skipped by scores: "last" is still iteration 12's.
	v, ok, err := tr.Score(hone.Objective{Metric: "loss", Mode: hone.Min}, results.ScopeLast)
	if err != nil || !ok || v != rows[fxIterations-1]["loss"] {
		t.Errorf("last loss with a trailing NaN = %v, %v, %v; want %v", v, ok, err, rows[fxIterations-1]["loss"])
	}
}

// A trial that has not reported yet has no rows and no score, and Best
// skips it.
func TestTrialWithoutResults(t *testing.T) {
	dir, _ := fixture(t)
	e := openExp(t, dir)
	tr := e.Trials[2]
	if err := os.Remove(filepath.Join(tr.Dir, callback.ResultFile)); err != nil {
		t.Fatal(err)
	}
	e = openExp(t, dir)
	tr = e.Trial(tr.ID)
	rows, err := tr.Results()
	if err != nil || rows != nil {
		t.Errorf("Results without result.json = %v, %v; want none", rows, err)
	}
	if last, err := tr.Last(); last != nil || err != nil {
		t.Errorf("Last without result.json = %v, %v", last, err)
	}
	if _, ok, err := tr.Score(hone.Objective{Metric: "loss", Mode: hone.Min}, results.ScopeAvg); ok || err != nil {
		t.Errorf("Score without results = ok %v, err %v", ok, err)
	}
	for _, mode := range []hone.Mode{hone.Min, hone.Max} {
		bt, _, err := e.Best(hone.Objective{Metric: "loss", Mode: mode}, results.ScopeAvg)
		if err != nil || bt == nil || bt.ID == tr.ID {
			t.Errorf("Best(%s) = %v, %v: want another trial", mode, bt, err)
		}
	}
	var buf bytes.Buffer
	if err := e.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(recs) != 1+fxTrials {
		t.Fatalf("CSV: %d records, %v", len(recs), err)
	}
	if recs[3][0] != tr.ID || recs[3][len(recs[3])-1] != "" {
		t.Errorf("CSV row of a trial without results: %v", recs[3])
	}
}

// Open of a relative directory still gives absolute trial and checkpoint
// paths, which keep working after the working directory changes.
func TestOpenRelativeDir(t *testing.T) {
	dir, _ := fixture(t)
	t.Chdir(filepath.Dir(dir))
	e, err := results.Open(filepath.Base(dir))
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(e.Dir) {
		t.Errorf("Dir = %q, want absolute", e.Dir)
	}
	t.Chdir(t.TempDir())
	for _, tr := range e.Trials {
		if !filepath.IsAbs(tr.Dir) {
			t.Errorf("trial %s Dir = %q, want absolute", tr.ID, tr.Dir)
		}
		for _, cp := range tr.Checkpoints {
			if !filepath.IsAbs(cp) {
				t.Errorf("trial %s checkpoint %q, want absolute", tr.ID, cp)
			}
			if _, err := os.Stat(cp); err != nil {
				t.Errorf("trial %s: %v", tr.ID, err)
			}
		}
		if rows, err := tr.Results(); err != nil || len(rows) != fxIterations {
			t.Errorf("trial %s: %d results after a chdir, err %v", tr.ID, len(rows), err)
		}
	}
}

// A result field whose name is also a column of another kind gets its own
// column under the metrics/ prefix, and numbers keep their shortest
// round-trip form.
func TestWriteCSVColumnClashesAndNumbers(t *testing.T) {
	dir, _ := fixture(t)
	e := openExp(t, dir)
	tr := e.Trials[0]
	row := `{"training_iteration":13,"config/initial":7,"status":"ok","metrics/x":1,"trial_id":"zz","tiny":5e-324,"big":1e21,"tenth":0.1,"neg":-2.5e-7,"huge":1.7976931348623157e308}` + "\n"
	f, err := os.OpenFile(filepath.Join(tr.Dir, callback.ResultFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(row); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	e = openExp(t, dir)
	var buf bytes.Buffer
	if err := e.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		if _, dup := col[h]; dup {
			t.Errorf("duplicate column %q in %v", h, recs[0])
		}
		col[h] = i
	}
	get := func(h string) string {
		t.Helper()
		i, ok := col[h]
		if !ok {
			t.Fatalf("no column %q in %v", h, recs[0])
		}
		return recs[1][i]
	}
	want := map[string]string{
		"status":                    "TERMINATED",
		"metrics/status":            "ok",
		"metrics/config/initial":    "7",
		"metrics/metrics/x":         "1",
		"tiny":                      "5e-324",
		"big":                       "1e+21",
		"tenth":                     "0.1",
		"neg":                       "-2.5e-7",
		"huge":                      "1.7976931348623157e+308",
		"trial_id":                  tr.ID,
		hone.FieldTrainingIteration: "13",
	}
	for h, v := range want {
		if got := get(h); got != v {
			t.Errorf("column %s = %q, want %q", h, got, v)
		}
	}
	if got, err := strconv.ParseFloat(get("config/initial"), 64); err != nil || got != tr.Config["initial"] {
		t.Errorf("config/initial = %q, want the configuration's %v", get("config/initial"), tr.Config["initial"])
	}
	if _, ok := col["metrics/trial_id"]; ok {
		t.Error("the result's trial_id got a column; it is the first column already")
	}
	// Every number reads back as the same float64.
	for _, h := range []string{"tiny", "big", "tenth", "neg", "huge"} {
		v, err := strconv.ParseFloat(get(h), 64)
		last, _ := e.Trials[0].Last()
		if err != nil || v != last[h] {
			t.Errorf("column %s = %q reads back as %v, want %v", h, get(h), v, last[h])
		}
	}
}

func TestResultColumn(t *testing.T) {
	for key, want := range map[string]string{
		"loss":         "loss",
		"status":       "metrics/status",
		"trial_id":     "metrics/trial_id",
		"config/x":     "metrics/config/x",
		"metrics/a":    "metrics/metrics/a",
		"configx":      "configx",
		"stats/status": "stats/status",
		"model/config": "model/config",
		"metricsx/a":   "metricsx/a",
	} {
		if got := results.ResultColumn(key); got != want {
			t.Errorf("ResultColumn(%q) = %q, want %q", key, got, want)
		}
	}
	// The rule is reversible: strip one prefix.
	for _, key := range []string{"loss", "status", "config/x", "metrics/a", "metrics/metrics/b"} {
		c := results.ResultColumn(key)
		if back, ok := strings.CutPrefix(c, results.MetricsPrefix); ok && back != key || !ok && c != key {
			t.Errorf("ResultColumn(%q) = %q does not give the key back", key, c)
		}
	}
}

// TestStartedFromJournal builds a journal by hand: a trial counts as
// started once a status record says RUNNING.
func TestStartedFromJournal(t *testing.T) {
	dir := t.TempDir()
	w, err := journal.Create(filepath.Join(dir, journal.FileName), journal.Header{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	recs := []controller.Record{
		{Op: "trial", Trial: "a", Index: 0, Dir: "a"},
		{Op: "trial", Trial: "b", Index: 1, Dir: "b"},
		{Op: "trial", Trial: "c", Index: 2, Dir: "c"},
		{Op: "trial", Trial: "d", Index: 3, Dir: "d"},
		{Op: "trial", Trial: "e", Index: 4, Dir: "e"},
		{Op: "status", Trial: "a", Status: hone.StatusPending},
		{Op: "status", Trial: "b", Status: hone.StatusPending},
		{Op: "status", Trial: "c", Status: hone.StatusPending},
		{Op: "status", Trial: "d", Status: hone.StatusPending},
		{Op: "status", Trial: "e", Status: hone.StatusPending},
		{Op: "status", Trial: "a", Status: hone.StatusRunning},
		{Op: "status", Trial: "a", Status: hone.StatusTerminated},
		{Op: "status", Trial: "c", Status: hone.StatusError, Error: "cannot start"},
		{Op: "status", Trial: "d", Status: hone.StatusRunning},
		{Op: "status", Trial: "d", Status: hone.StatusPending},
		{Op: "status", Trial: "e", Status: hone.StatusTerminated},
	}
	for i := range recs {
		if err := w.AppendRecord(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	e := openExp(t, dir)
	want := map[string][2]bool{ // started, not started
		"a": {true, false},
		"b": {false, true},  // queued, never ran
		"c": {false, false}, // an ERROR is always reported
		"d": {true, false},  // ran, waits to be resumed
		"e": {false, true},  // ended without running
	}
	for _, tr := range e.Trials {
		if got := [2]bool{tr.Started, tr.NotStarted()}; got != want[tr.ID] {
			t.Errorf("trial %s (%s): started, not started = %v, want %v", tr.ID, tr.Status, got, want[tr.ID])
		}
	}
}

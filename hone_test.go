package hone_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hone-tune/hone"
)

func TestSaveFutureResolveOnce(t *testing.T) {
	f := hone.NewSaveFuture("0000abcd")
	if f.TrialID != "0000abcd" {
		t.Fatalf("TrialID = %q", f.TrialID)
	}
	if f.Done() {
		t.Fatal("new future is Done")
	}
	if cp, err := f.Result(); cp != nil || err != nil {
		t.Fatalf("Result before Resolve = %v, %v; want nil, nil", cp, err)
	}
	want := &hone.Checkpoint{TrialID: "0000abcd", Index: 3, Path: "d/checkpoint_000003"}
	f.Resolve(want, nil)
	if cp, err := f.Result(); cp != want || err != nil || !f.Done() {
		t.Errorf("Result = %v, %v, Done %v", cp, err, f.Done())
	}

	// Resolving again panics and changes nothing.
	func() {
		defer func() {
			r := recover()
			if r == nil {
				t.Fatal("second Resolve did not panic")
			}
			if !strings.Contains(fmt.Sprint(r), "0000abcd") {
				t.Errorf("panic %v does not name the trial", r)
			}
		}()
		f.Resolve(nil, errors.New("second"))
	}()
	if cp, err := f.Result(); cp != want || err != nil {
		t.Errorf("second Resolve changed the result to %v, %v", cp, err)
	}
}

func TestSaveFutureOutcomes(t *testing.T) {
	boom := errors.New("disk full")
	for _, tc := range []struct {
		name string
		cp   *hone.Checkpoint
		err  error
	}{
		{"checkpoint", &hone.Checkpoint{Path: "x/checkpoint_000000"}, nil},
		{"no checkpoint", nil, nil},
		{"error", nil, boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := hone.NewSaveFuture("t")
			f.Resolve(tc.cp, tc.err)
			if !f.Done() {
				t.Error("not Done after Resolve")
			}
			cp, err := f.Result()
			if cp != tc.cp || err != tc.err {
				t.Errorf("Result = %v, %v; want %v, %v", cp, err, tc.cp, tc.err)
			}
		})
	}
}

// Readers may poll Done and Result from other goroutines (tests do).
func TestSaveFutureConcurrentReaders(t *testing.T) {
	f := hone.NewSaveFuture("t")
	cp := &hone.Checkpoint{Path: "p"}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !f.Done() {
				runtime.Gosched()
			}
			if got, _ := f.Result(); got != cp {
				t.Errorf("reader saw %v after Done", got)
			}
		}()
	}
	f.Resolve(cp, nil)
	wg.Wait()
}

func TestModeBetterAndScore(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		mode hone.Mode
		a, b float64
		want bool
	}{
		{hone.Max, 2, 1, true},
		{hone.Max, 1, 2, false},
		{hone.Max, 1, 1, false},
		{hone.Min, 1, 2, true},
		{hone.Min, 2, 1, false},
		{hone.Min, 1, 1, false},
		{hone.Max, nan, 1, false},
		{hone.Min, nan, 1, false},
		{hone.Max, 1, nan, true},
		{hone.Min, 1, nan, true},
		{hone.Max, -inf, nan, true},
		{hone.Min, inf, nan, true},
		{hone.Max, nan, nan, false},
		{hone.Min, nan, nan, false},
		{hone.Max, inf, 1e308, true},
		{hone.Min, -inf, -1e308, true},
	}
	for _, tc := range tests {
		if got := tc.mode.Better(tc.a, tc.b); got != tc.want {
			t.Errorf("%s.Better(%v, %v) = %v, want %v", tc.mode, tc.a, tc.b, got, tc.want)
		}
	}
	if got := hone.Max.Score(2.5); got != 2.5 {
		t.Errorf("Max.Score(2.5) = %v", got)
	}
	if got := hone.Min.Score(2.5); got != -2.5 {
		t.Errorf("Min.Score(2.5) = %v", got)
	}
	for _, m := range []hone.Mode{hone.Min, hone.Max} {
		if got := m.Score(nan); !math.IsNaN(got) {
			t.Errorf("%s.Score(NaN) = %v, want NaN", m, got)
		}
		// Score turns both modes into "higher is better".
		for _, p := range [][2]float64{{1, 2}, {-3, 7}, {0, -0.5}} {
			if m.Better(p[0], p[1]) != (m.Score(p[0]) > m.Score(p[1])) {
				t.Errorf("%s: Better(%v, %v) disagrees with Score", m, p[0], p[1])
			}
		}
	}
	for mode, valid := range map[hone.Mode]bool{"min": true, "max": true, "": false, "MIN": false, "maximize": false} {
		if mode.Valid() != valid {
			t.Errorf("Mode(%q).Valid() = %v", mode, !valid)
		}
	}
}

func TestNumber(t *testing.T) {
	tests := []struct {
		in   any
		want float64
		ok   bool
	}{
		{float64(1.5), 1.5, true},
		{float32(0.25), 0.25, true},
		{int(-3), -3, true},
		{int64(1 << 40), 1 << 40, true},
		{int32(-7), -7, true},
		{uint(8), 8, true},
		{uint64(1 << 63), 1 << 63, true},
		{uint32(9), 9, true},
		{true, 1, true},
		{false, 0, true},
		{json.Number("2.75"), 2.75, true},
		{json.Number("-12"), -12, true},
		{json.Number("1e3"), 1000, true},
		{json.Number("abc"), 0, false},
		{"1.5", 0, false},
		{nil, 0, false},
		{[]any{1.0}, 0, false},
		{map[string]any{"a": 1.0}, 0, false},
	}
	for _, tc := range tests {
		got, ok := hone.Number(tc.in)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("Number(%#v) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	if got, ok := hone.Number(math.NaN()); !ok || !math.IsNaN(got) {
		t.Errorf("Number(NaN) = %v, %v", got, ok)
	}
	if got, ok := hone.Number(float32(math.Inf(-1))); !ok || !math.IsInf(got, -1) {
		t.Errorf("Number(float32 -Inf) = %v, %v", got, ok)
	}
	// A json.Number decoded for real.
	dec := json.NewDecoder(strings.NewReader(`{"x": 0.125}`))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	if got, ok := hone.Number(m["x"]); !ok || got != 0.125 {
		t.Errorf("Number(decoded json.Number) = %v, %v", got, ok)
	}
}

func TestResultValue(t *testing.T) {
	ts := time.Date(2026, 3, 4, 5, 6, 7, 800_000_000, time.UTC)
	r := &hone.Result{
		TrialID: "0000abcd",
		Metrics: map[string]any{
			"loss": 0.5, "acc": float32(0.75), "epochs": 3, "ok": true, "big": json.Number("1e6"),
			"nan": math.NaN(), "name": "resnet", "nested": map[string]any{"x": 1.0},
			hone.FieldTrainingIteration: 999, // shadowed by the auto field
		},
		TrainingIteration:      7,
		TimeThisIter:           1.25,
		TimeTotal:              10.5,
		TimeSinceRestore:       4.5,
		IterationsSinceRestore: 3,
		Timestamp:              ts,
		Done:                   true,
		PID:                    42,
		Hostname:               "h",
	}
	tests := []struct {
		name string
		want float64
		ok   bool
	}{
		{hone.FieldTrainingIteration, 7, true},
		{hone.FieldTimeThisIter, 1.25, true},
		{hone.FieldTimeTotal, 10.5, true},
		{hone.FieldTimeSinceRestore, 4.5, true},
		{hone.FieldIterationsSinceRestore, 3, true},
		{hone.FieldTimestamp, float64(ts.Unix()), true},
		{hone.FieldDone, 1, true},
		{"loss", 0.5, true},
		{"acc", 0.75, true},
		{"epochs", 3, true},
		{"ok", 1, true},
		{"big", 1e6, true},
		{"name", 0, false},
		{"nested", 0, false},
		{"missing", 0, false},
	}
	for _, tc := range tests {
		got, ok := r.Value(tc.name)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("Value(%q) = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	if got, ok := r.Value("nan"); !ok || !math.IsNaN(got) {
		t.Errorf("Value(nan) = %v, %v; want NaN, true", got, ok)
	}
	r.Done = false
	if got, ok := r.Value(hone.FieldDone); !ok || got != 0 {
		t.Errorf("Value(done) of a not-done result = %v, %v", got, ok)
	}
	// Auto fields exist even in a result without metrics.
	empty := &hone.Result{TrainingIteration: 2}
	if got, ok := empty.Value(hone.FieldTrainingIteration); !ok || got != 2 {
		t.Errorf("Value(training_iteration) without metrics = %v, %v", got, ok)
	}
	if _, ok := empty.Value("loss"); ok {
		t.Error("Value(loss) of a result without metrics is ok")
	}
	var nilResult *hone.Result
	if _, ok := nilResult.Value(hone.FieldTrainingIteration); ok {
		t.Error("Value of a nil result is ok")
	}
}

func TestConfigCloneIsDeep(t *testing.T) {
	orig := hone.Config{
		"lr":    0.1,
		"name":  "x",
		"model": map[string]any{"width": 64.0, "layers": []any{1.0, map[string]any{"k": "v"}}},
		"opt":   hone.Config{"beta": []any{0.9, 0.99}},
		"empty": map[string]any{},
	}
	snapshot := func() string {
		b, err := json.Marshal(orig)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	want := snapshot()
	c := orig.Clone()
	if !reflect.DeepEqual(c, orig) {
		t.Fatalf("clone %v differs from %v", c, orig)
	}
	// Mutate the clone at every depth.
	c["lr"] = 1.0
	c["new"] = true
	c["model"].(map[string]any)["width"] = 1.0
	layers := c["model"].(map[string]any)["layers"].([]any)
	layers[0] = 2.0
	layers[1].(map[string]any)["k"] = "changed"
	c["opt"].(hone.Config)["beta"].([]any)[1] = 0.5
	c["empty"].(map[string]any)["x"] = 1
	if got := snapshot(); got != want {
		t.Errorf("mutating the clone changed the original:\n got %s\nwant %s", got, want)
	}
	// And the other way round.
	c2 := orig.Clone()
	orig["model"].(map[string]any)["layers"].([]any)[1].(map[string]any)["k"] = "orig"
	if v, _ := c2.Lookup("model", "layers"); v.([]any)[1].(map[string]any)["k"] != "v" {
		t.Error("mutating the original changed a clone")
	}
	if _, isConfig := c2["opt"].(hone.Config); !isConfig {
		t.Errorf("nested Config cloned as %T, want hone.Config", c2["opt"])
	}
	var nilCfg hone.Config
	if nilCfg.Clone() != nil {
		t.Error("Clone of a nil Config is not nil")
	}
}

func TestConfigLookup(t *testing.T) {
	c := hone.Config{"a": map[string]any{"b": hone.Config{"c": 3.0}}, "x": 1.0}
	if v, ok := c.Lookup("a", "b", "c"); !ok || v != 3.0 {
		t.Errorf("Lookup(a,b,c) = %v, %v", v, ok)
	}
	if v, ok := c.Lookup("x"); !ok || v != 1.0 {
		t.Errorf("Lookup(x) = %v, %v", v, ok)
	}
	for _, p := range [][]string{{"y"}, {"x", "y"}, {"a", "z"}, {"a", "b", "c", "d"}} {
		if v, ok := c.Lookup(p...); ok {
			t.Errorf("Lookup(%v) = %v, true; want not found", p, v)
		}
	}
}

func TestResourcesValidate(t *testing.T) {
	ok := []hone.Resources{
		{},
		{CPU: 1},
		{CPU: 0.5, GPU: 2, Memory: 1 << 30, Custom: map[string]float64{"tpu": 1, "zero": 0}},
	}
	for _, r := range ok {
		if err := r.Validate(); err != nil {
			t.Errorf("%+v: %v", r, err)
		}
	}
	bad := []struct {
		r    hone.Resources
		name string
	}{
		{hone.Resources{CPU: -1}, "cpu"},
		{hone.Resources{CPU: math.NaN()}, "cpu"},
		{hone.Resources{CPU: 1, GPU: math.Inf(1)}, "gpu"},
		{hone.Resources{GPU: -0.5}, "gpu"},
		{hone.Resources{Memory: -1}, "memory"},
		{hone.Resources{CPU: 1, Custom: map[string]float64{"tpu": -2}}, "custom.tpu"},
		{hone.Resources{Custom: map[string]float64{"fpga": math.NaN()}}, "custom.fpga"},
	}
	for _, tc := range bad {
		err := tc.r.Validate()
		if err == nil {
			t.Errorf("%+v: no error", tc.r)
			continue
		}
		if !strings.Contains(err.Error(), tc.name+" = ") {
			t.Errorf("%+v: error %q does not name %s", tc.r, err, tc.name)
		}
	}
}

func TestCheckpointConfigValidate(t *testing.T) {
	for _, c := range []hone.CheckpointConfig{
		{},
		{NumToKeep: 1, ScoreAttribute: "acc", ScoreOrder: hone.Max, Frequency: 5, AtEnd: true},
		{NumToKeep: 3, ScoreOrder: hone.Min},
	} {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	err := hone.CheckpointConfig{NumToKeep: -1}.Validate()
	if err == nil {
		t.Fatal("num_to_keep -1: no error")
	}
	for _, want := range []string{"checkpoint.num_to_keep", "-1", "0 (keep all)", ">= 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	err = hone.CheckpointConfig{ScoreOrder: "highest"}.Validate()
	if err == nil || !strings.Contains(err.Error(), "checkpoint.score_order") || !strings.Contains(err.Error(), `"max"`) || !strings.Contains(err.Error(), `"min"`) {
		t.Errorf("score_order highest: %v", err)
	}
	err = hone.CheckpointConfig{Frequency: -2}.Validate()
	if err == nil || !strings.Contains(err.Error(), "checkpoint.frequency") {
		t.Errorf("frequency -2: %v", err)
	}
}

func TestFailureConfigValidate(t *testing.T) {
	for _, m := range []int{-1, 0, 1, 100} {
		if err := (hone.FailureConfig{MaxFailures: m, FailFast: m == 0}).Validate(); err != nil {
			t.Errorf("max_failures %d: %v", m, err)
		}
	}
	for _, m := range []int{-2, -100} {
		err := hone.FailureConfig{MaxFailures: m}.Validate()
		if err == nil || !strings.Contains(err.Error(), "failure.max_failures") || !strings.Contains(err.Error(), "-1 (unlimited)") {
			t.Errorf("max_failures %d: %v", m, err)
		}
	}
}

type nopSearcher struct{}

func (nopSearcher) Suggest(string) (hone.Config, error)        { return nil, hone.ErrSearchDone }
func (nopSearcher) OnResult(string, *hone.Result)              {}
func (nopSearcher) OnTrialComplete(string, *hone.Result, bool) {}

func TestExperimentValidate(t *testing.T) {
	valid := func() *hone.Experiment {
		return &hone.Experiment{Name: "e", Metric: "loss", Mode: hone.Min, Searcher: nopSearcher{}}
	}
	if err := valid().Validate(); err != nil {
		t.Fatalf("valid experiment: %v", err)
	}
	if err := (&hone.Experiment{Searcher: nopSearcher{}}).Validate(); err != nil {
		t.Errorf("experiment without metric and mode: %v", err)
	}
	if err := (&hone.Experiment{Searcher: nopSearcher{}, Metric: "loss"}).Validate(); err != nil {
		t.Errorf("experiment with metric and no mode: %v", err)
	}
	tests := []struct {
		name  string
		edit  func(*hone.Experiment)
		wants []string
	}{
		{"missing searcher", func(e *hone.Experiment) { e.Searcher = nil }, []string{"searcher is required"}},
		{"bad mode", func(e *hone.Experiment) { e.Mode = "maximise" }, []string{`"maximise"`, `"min"`, `"max"`}},
		{"mode without metric", func(e *hone.Experiment) { e.Metric = "" }, []string{"metric"}},
		{"negative max_concurrent", func(e *hone.Experiment) { e.MaxConcurrentTrials = -1 }, []string{"max_concurrent_trials", "-1", ">= 0"}},
		{"negative time budget", func(e *hone.Experiment) { e.TimeBudget = -time.Second }, []string{"time_budget"}},
		{"bad resources", func(e *hone.Experiment) { e.Resources.GPU = -1 }, []string{"resources", "gpu"}},
		{"bad checkpoint", func(e *hone.Experiment) { e.Checkpoint.NumToKeep = -3 }, []string{"checkpoint.num_to_keep"}},
		{"bad failure", func(e *hone.Experiment) { e.Failure.MaxFailures = -5 }, []string{"failure.max_failures"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := valid()
			tc.edit(e)
			err := e.Validate()
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), "experiment: ") {
				t.Errorf("error %q does not start with \"experiment: \"", err)
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	// The first invalid field is named: searcher before mode.
	e := valid()
	e.Searcher, e.Mode = nil, "bad"
	if err := e.Validate(); err == nil || !strings.Contains(err.Error(), "searcher") {
		t.Errorf("two invalid fields: %v, want the searcher named", err)
	}
}

func TestStatusDecisionAndNames(t *testing.T) {
	for s, fin := range map[hone.Status]bool{
		hone.StatusPending: false, hone.StatusRunning: false, hone.StatusPaused: false,
		hone.StatusTerminated: true, hone.StatusError: true,
	} {
		if s.Finished() != fin || !s.Valid() {
			t.Errorf("%s: Finished %v, Valid %v", s, s.Finished(), s.Valid())
		}
	}
	if hone.Status("DONE").Valid() || hone.Status("").Valid() {
		t.Error("unknown status is Valid")
	}
	for d, s := range map[hone.Decision]string{hone.Continue: "CONTINUE", hone.Pause: "PAUSE", hone.Stop: "STOP", hone.Noop: "NOOP"} {
		if d.String() != s {
			t.Errorf("Decision %d = %q, want %q", int(d), d.String(), s)
		}
	}
	if got := hone.CheckpointDirName(42); got != "checkpoint_000042" {
		t.Errorf("CheckpointDirName(42) = %q", got)
	}
	cp := &hone.Checkpoint{Index: 7, Path: "some/dir/checkpoint_000007"}
	if cp.Name() != "checkpoint_000007" {
		t.Errorf("Name() = %q", cp.Name())
	}
	if s := (hone.Resources{CPU: 2, GPU: 0.5}).String(); s != "cpu=2 gpu=0.5" {
		t.Errorf("Resources.String() = %q", s)
	}
	if s := (hone.Resources{}).String(); s != "none" {
		t.Errorf("empty Resources.String() = %q", s)
	}
}

// TestCheckpointIndex: CheckpointIndex reads back exactly the names
// CheckpointDirName writes.
func TestCheckpointIndex(t *testing.T) {
	for _, i := range []int{0, 7, 999999, 1000000} {
		if got, ok := hone.CheckpointIndex(hone.CheckpointDirName(i)); !ok || got != i {
			t.Errorf("CheckpointIndex(%q) = %d, %v", hone.CheckpointDirName(i), got, ok)
		}
	}
	for _, name := range []string{"checkpoint_", "checkpoint_7", "checkpoint_00000x", "checkpoint_-00001", "ckpt_000001", hone.StagingDirName} {
		if i, ok := hone.CheckpointIndex(name); ok {
			t.Errorf("CheckpointIndex(%q) = %d, true; want false", name, i)
		}
	}
}

// TestModeCompare pins the sort order of trials' values: best first under
// the mode, a missing value after every present one, ties equal.
func TestModeCompare(t *testing.T) {
	for _, tc := range []struct {
		mode hone.Mode
		a    float64
		aOK  bool
		b    float64
		bOK  bool
		want int
	}{
		{hone.Min, 1, true, 2, true, -1},
		{hone.Min, 2, true, 1, true, 1},
		{hone.Max, 2, true, 1, true, -1},
		{hone.Max, 1, true, 1, true, 0},
		{hone.Min, 9, true, 0, false, -1},
		{hone.Min, 0, false, 9, true, 1},
		{hone.Max, 0, false, 0, false, 0},
		{hone.Min, math.NaN(), true, 1, true, 1},
	} {
		if got := tc.mode.Compare(tc.a, tc.aOK, tc.b, tc.bOK); got != tc.want {
			t.Errorf("%s.Compare(%v, %v, %v, %v) = %d, want %d", tc.mode, tc.a, tc.aOK, tc.b, tc.bOK, got, tc.want)
		}
	}
}

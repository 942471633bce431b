package callback

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone"
)

func TestRow(t *testing.T) {
	ts := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	tr := &hone.Trial{ID: "0a1b2c3d", Tag: "3_lr=0.1", Config: hone.Config{"lr": 0.1}}
	r := &hone.Result{
		Metrics:                map[string]any{"loss": 0.25, "done": "user's", "pid": -1},
		TrainingIteration:      4,
		TimeThisIter:           1.5,
		TimeTotal:              6,
		TimeSinceRestore:       3,
		IterationsSinceRestore: 2,
		Timestamp:              ts,
		Done:                   true,
		PID:                    123,
		Hostname:               "box",
	}
	want := map[string]any{
		"loss":                     0.25,
		"training_iteration":       4,
		"time_this_iter_s":         1.5,
		"time_total_s":             6.0,
		"time_since_restore":       3.0,
		"iterations_since_restore": 2,
		"timestamp":                ts.Unix(),
		"date":                     ts.Local().Format("2006-01-02_15-04-05"),
		"pid":                      123,
		"hostname":                 "box",
		"trial_id":                 "0a1b2c3d",
		"experiment_tag":           "3_lr=0.1",
		"done":                     true,
		"config":                   map[string]any{"lr": 0.1},
	}
	if got := Row(tr, r); !reflect.DeepEqual(got, want) {
		t.Errorf("Row =\n%v\nwant\n%v", got, want)
	}
	r.Checkpoint = &hone.Checkpoint{Index: 7}
	if got := Row(tr, r)["checkpoint_dir_name"]; got != "checkpoint_000007" {
		t.Errorf("checkpoint_dir_name = %v", got)
	}
	if got := Row(&hone.Trial{}, r)["config"]; !reflect.DeepEqual(got, map[string]any{}) {
		t.Errorf("config of a trial without one = %#v, want {}", got)
	}
}

type celsius float64

func TestJSONSafe(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	f := inf
	for _, tc := range []struct {
		name string
		in   any
		want any
	}{
		{"finite", 1.5, 1.5},
		{"nan", nan, "NaN"},
		{"+inf", inf, "Infinity"},
		{"-inf", math.Inf(-1), "-Infinity"},
		{"float32", float32(nan), "NaN"},
		{"named float", celsius(inf), "Infinity"},
		{"pointer", &f, "Infinity"},
		{"nested map", map[string]any{"a": map[string]any{"b": nan, "c": 1}},
			map[string]any{"a": map[string]any{"b": "NaN", "c": 1}}},
		{"config", hone.Config{"x": []any{1.0, inf}}, map[string]any{"x": []any{1.0, "Infinity"}}},
		{"typed slice", []float64{1, nan}, []any{1.0, "NaN"}},
		{"typed map", map[string]float64{"a": 1, "b": math.Inf(-1)}, map[string]any{"a": 1.0, "b": "-Infinity"}},
		{"array", [2]float32{1, float32(inf)}, []any{float32(1), "Infinity"}},
		{"bytes", []byte("hi"), []byte("hi")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := JSONSafe(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("JSONSafe(%v) = %#v, want %#v", tc.in, got, tc.want)
			}
		})
	}
	// The input is never modified, and returned as is when it is clean.
	in := map[string]any{"a": []any{nan}, "b": 2}
	out := JSONSafe(in).(map[string]any)
	if s, ok := in["a"].([]any)[0].(float64); !ok || !math.IsNaN(s) {
		t.Errorf("input modified: %v", in)
	}
	if out["a"].([]any)[0] != "NaN" {
		t.Errorf("output = %v", out)
	}
	clean := map[string]any{"a": []any{1.0}}
	if got := JSONSafe(clean).(map[string]any); reflect.ValueOf(got).UnsafePointer() != reflect.ValueOf(clean).UnsafePointer() {
		t.Error("clean map was copied")
	}
}

func TestParseNonFinite(t *testing.T) {
	for _, s := range []string{NaN, PosInf, NegInf} {
		f, ok := ParseNonFinite(s)
		if !ok {
			t.Fatalf("ParseNonFinite(%q) not ok", s)
		}
		if back, _ := nonFinite(f); back != s {
			t.Errorf("round trip of %q gives %q", s, back)
		}
	}
	if _, ok := ParseNonFinite("nan"); ok {
		t.Error(`ParseNonFinite("nan") ok`)
	}
}

func TestFormatFloatMatchesJSON(t *testing.T) {
	for _, f := range []float64{0, 1, -2.5, 0.1, 1e-6, 9.99e-7, 1e-9, 123456789, 1e20, 1e21, 1.5e300, -3e-12} {
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := formatFloat(f, 64); got != string(want) {
			t.Errorf("formatFloat(%v) = %s, json gives %s", f, got, want)
		}
		if math.IsInf(float64(float32(f)), 0) {
			continue
		}
		want32, _ := json.Marshal(float32(f))
		if got := formatFloat(float64(float32(f)), 32); got != string(want32) {
			t.Errorf("formatFloat(float32 %v) = %s, json gives %s", f, got, want32)
		}
	}
}

func TestAppendJSONFallsBackPerValue(t *testing.T) {
	var b bytes.Buffer
	err := appendJSON(&b, map[string]any{"ok": 1, "odd": make(chan int), "html": "<a&b>"}, false)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%s: %v", b.String(), err)
	}
	if got["ok"] != 1.0 || !strings.HasPrefix(got["odd"].(string), "0x") || got["html"] != "<a&b>" {
		t.Errorf("decoded %v", got)
	}
	if !strings.Contains(b.String(), "<a&b>") {
		t.Errorf("HTML characters escaped: %s", b.String())
	}
}

func TestFlattenAndCells(t *testing.T) {
	cells := map[string]string{}
	flatten(cells, "", map[string]any{
		"loss":  0.5,
		"model": map[string]any{"width": 32, "act": "relu", "deep": hone.Config{"x": true}},
		"list":  []any{1, "a"},
		"none":  nil,
		"inf":   math.Inf(1),
		"big":   int64(1) << 40,
	})
	want := map[string]string{
		"loss":         "0.5",
		"model/width":  "32",
		"model/act":    "relu",
		"model/deep/x": "true",
		"list":         `[1,"a"]`,
		"none":         "",
		"inf":          "Infinity",
		"big":          "1099511627776",
	}
	if !reflect.DeepEqual(cells, want) {
		t.Errorf("cells = %v, want %v", cells, want)
	}
}

func TestAppendCSVRecordRoundTrip(t *testing.T) {
	rec := []string{"plain", "", "a,b", `say "hi"`, "two\nlines", " lead", "\ttab", "cr\r"}
	line := appendCSVRecord(nil, rec)
	got, err := csv.NewReader(bytes.NewReader(line)).Read()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rec) {
		t.Errorf("round trip = %q, want %q", got, rec)
	}
}

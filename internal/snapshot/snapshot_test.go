package snapshot_test

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/hone-tune/hone/internal/snapshot"
)

func TestConfigKeepsTypes(t *testing.T) {
	in := snapshot.Config{"i": 3, "f": 3.0, "g": 0.25, "s": "x", "b": true, "n": nil,
		"l": []any{1, 2.5, "a"}, "m": map[string]any{"k": 7, "e": 1e300}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out snapshot.Config
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("%s read back as %#v, want %#v", b, out, in)
	}
	if _, err := json.Marshal(snapshot.Config{"x": math.NaN()}); err == nil {
		t.Error("a NaN value was saved")
	}
}

func TestNumber(t *testing.T) {
	in := []snapshot.Number{1.5, snapshot.Number(math.NaN()), snapshot.Number(math.Inf(1)), snapshot.Number(math.Inf(-1)), 0, 1e-300,
		-0.5, math.MaxFloat64, 0.1 + 0.2}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out []snapshot.Number
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	for i := range in {
		if a, b := float64(in[i]), float64(out[i]); a != b && !(math.IsNaN(a) && math.IsNaN(b)) {
			t.Errorf("%v read back as %v", a, b)
		}
	}
	// null reads as NaN (older saved states wrote NaN so); a string that
	// is not one of the three names is an error.
	var n snapshot.Number
	if err := json.Unmarshal([]byte("null"), &n); err != nil || !math.IsNaN(float64(n)) {
		t.Errorf("null read as %v, %v; want NaN", float64(n), err)
	}
	if err := json.Unmarshal([]byte(`"x"`), &n); err == nil {
		t.Error("a string decoded as a number")
	}
}

func TestRefusals(t *testing.T) {
	type cfg struct{ A int }
	data, err := snapshot.Marshal("k", 2, cfg{1}, map[string]int{"x": 1})
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]int
	if err := snapshot.Unmarshal(data, "k", 2, cfg{1}, &st); err != nil || st["x"] != 1 {
		t.Fatalf("own snapshot: %v, %v", err, st)
	}
	for _, tc := range []struct {
		kind    string
		version int
		cfg     any
		want    string
	}{
		{"other", 2, cfg{1}, `of "k", not "other"`},
		{"k", 1, cfg{1}, "version 2, this hone reads version 1"},
		{"k", 2, cfg{2}, `taken with configuration {"A":1}, this k is configured {"A":2}`},
	} {
		err := snapshot.Unmarshal(data, tc.kind, tc.version, tc.cfg, &st)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Unmarshal as %s v%d %v: %v, want an error saying %q", tc.kind, tc.version, tc.cfg, err, tc.want)
		}
	}
}

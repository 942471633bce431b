package callback

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"pgregory.net/rapid"
)

// genValue draws the values rows are made of, nested up to depth, plus
// some that appendCompact leaves to encoding/json.
func genValue(depth int) *rapid.Generator[any] {
	return rapid.Custom(func(t *rapid.T) any {
		kinds := 11
		if depth == 0 {
			kinds = 9
		}
		switch rapid.IntRange(0, kinds-1).Draw(t, "kind") {
		case 0:
			return nil
		case 1:
			return rapid.Bool().Draw(t, "bool")
		case 2:
			return rapid.String().Draw(t, "string") // any Unicode, control characters too
		case 3:
			return rapid.StringMatching(`[ -~]{0,6}[\\"]?[ -~]{0,6}`).Draw(t, "ascii")
		case 4:
			return rapid.Float64().Draw(t, "float64")
		case 5:
			// tiny and huge magnitudes cross encoding/json's format switch
			return rapid.SampledFrom([]float64{0, -0.0, 1e-6, 9.99e-7, 1e21, 9.99e20, 1e-9, -1.5e-300, math.MaxFloat64, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(-1)}).Draw(t, "edge")
		case 6:
			return float32(rapid.Float64Range(-1e30, 1e30).Draw(t, "float32"))
		case 7:
			return rapid.SampledFrom([]any{rapid.Int().Draw(t, "int"), rapid.Int64().Draw(t, "int64"), rapid.Int32().Draw(t, "int32"), rapid.Uint64().Draw(t, "uint64"), uint8(7)}).Draw(t, "integer")
		case 8:
			return json.Number("1.50")
		case 9:
			return rapid.MapOfN(rapid.OneOf(rapid.StringMatching(`[a-z_/"\\]{0,6}`), rapid.String()), genValue(depth-1), 0, 4).Draw(t, "map")
		default:
			return rapid.SliceOfN(genValue(depth-1), 0, 4).Draw(t, "slice")
		}
	})
}

// TestAppendCompactMatchesEncodingJSON checks that appendCompact writes
// what encoding/json writes, byte for byte, whenever it reports true, and
// leaves b as it was when it reports false.
func TestAppendCompactMatchesEncodingJSON(t *testing.T) {
	fast := 0
	rapid.Check(t, func(t *rapid.T) {
		v := map[string]any{"row": genValue(3).Draw(t, "v")}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		encErr := enc.Encode(v)
		prefix := []byte("prefix")
		got, _, ok := appendCompact(prefix, v, nil)
		if !ok {
			if string(got) != "prefix" {
				t.Fatalf("declined but left %q", got)
			}
			return
		}
		fast++
		if encErr != nil {
			t.Fatalf("encoding/json fails (%v) but appendCompact wrote %q", encErr, got)
		}
		if g, w := string(got[len(prefix):])+"\n", want.String(); g != w {
			t.Fatalf("appendCompact wrote %q, encoding/json %q", g, w)
		}
	})
	if fast == 0 {
		t.Fatal("appendCompact declined every value")
	}
}

// BenchmarkRowJSON compares encoding a typical result row with appendJSON
// (appendCompact) against encoding/json.
func BenchmarkRowJSON(b *testing.B) {
	row := map[string]any{"loss": 0.123456789, "acc": 0.9, "training_iteration": 12, "time_this_iter_s": 0.5,
		"time_total_s": 6.25, "timestamp": int64(1767323048), "date": "2026-01-02_03-04-08", "done": false,
		"trial_id": "0a1b2c3d", "experiment_tag": "3_lr=0.01", "hostname": "host", "pid": 4242,
		"config": map[string]any{"lr": 0.01, "momentum": 0.9, "layers": 3}}
	b.Run("appendJSON", func(b *testing.B) {
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			if err := appendJSON(&buf, row, false); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		for b.Loop() {
			buf.Reset()
			if err := enc.Encode(row); err != nil {
				b.Fatal(err)
			}
		}
	})
}

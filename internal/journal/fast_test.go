package journal

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/controller"
	"pgregory.net/rapid"
)

// TestAppendInputMatchesJSON: the reflection-free encoding of an input
// decodes to exactly what encoding/json's encoding of it decodes to, for
// random inputs with every metric kind, non-finite numbers, and strings
// that need escaping.
func TestAppendInputMatchesJSON(t *testing.T) {
	str := rapid.OneOf(rapid.String(), rapid.StringMatching(`[a-z_/]{0,12}`), rapid.SampledFrom([]string{"", `a"b`, `c\d`, "tab\there", "<&>", "π ≈ 3.14", "\x00\x1f\u2028"}))
	val := rapid.OneOf(
		rapid.Float64().AsAny(),
		rapid.SampledFrom([]float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, -0.0, 1e21, 1e-7, 5e-324, math.MaxFloat64}).AsAny(),
		rapid.Int().AsAny(), rapid.Int64().AsAny(), rapid.Bool().AsAny(), str.AsAny(), rapid.Just[any](nil),
		rapid.Float32().AsAny(), rapid.Int32().AsAny(),
	)
	rapid.Check(t, func(t *rapid.T) {
		in := controller.Input{
			Kind:     rapid.SampledFrom([]controller.InputKind{controller.InResult, controller.InSaved, controller.InExited, controller.InTick}).Draw(t, "kind"),
			Trial:    str.Draw(t, "trial"),
			Time:     rapid.Int64().Draw(t, "time"),
			Metrics:  rapid.MapOfN(str, val, 0, 8).Draw(t, "metrics"),
			Done:     rapid.Bool().Draw(t, "done"),
			Err:      str.Draw(t, "err"),
			PID:      rapid.IntRange(0, 1<<22).Draw(t, "pid"),
			Hostname: str.Draw(t, "host"),
		}
		if rapid.Bool().Draw(t, "ckpt") {
			in.Checkpoint = &controller.CheckpointRef{Index: rapid.IntRange(0, 1e6).Draw(t, "idx"), Path: str.Draw(t, "path")}
		}
		fast, _, ok := appendInput(nil, &in, nil)
		if !ok {
			t.Fatalf("appendInput refused %+v", in)
		}
		if !bytes.HasSuffix(fast, []byte("}}\n")) || bytes.Count(fast, []byte("\n")) != 1 {
			t.Fatalf("not one line: %q", fast)
		}
		ref := in
		if hasNonFinite(in.Metrics) {
			ref.Metrics = encodeNonFinite(in.Metrics).(map[string]any)
		}
		slow, err := json.Marshal(Line{In: &ref})
		if err != nil {
			t.Fatal(err)
		}
		var a, b Line
		if err := json.Unmarshal(fast, &a); err != nil {
			t.Fatalf("fast line %q: %v", fast, err)
		}
		if err := json.Unmarshal(slow, &b); err != nil {
			t.Fatal(err)
		}
		// Compare after the reader's own decoding of non-finite values,
		// as JSON (NaN != NaN).
		ja, _ := json.Marshal(encodeNonFinite(decodeNonFinite(any(map[string]any(a.In.Metrics)))))
		jb, _ := json.Marshal(encodeNonFinite(decodeNonFinite(any(map[string]any(b.In.Metrics)))))
		a.In.Metrics, b.In.Metrics = nil, nil
		sa, _ := json.Marshal(a)
		sb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) || !bytes.Equal(sa, sb) {
			t.Fatalf("fast %q\nslow %q", fast, slow)
		}
	})
}

// TestAppendInputFallsBack: inputs the fast path does not encode go
// through encoding/json and read back intact.
func TestAppendInputFallsBack(t *testing.T) {
	in := &controller.Input{Kind: controller.InResume, Time: 3, Resume: &controller.ResumeFlags{Unfinished: true},
		Metrics: map[string]any{"nested": map[string]any{"x": math.Inf(1)}, "list": []any{1.0, "a"}}}
	if _, _, ok := appendInput(nil, in, nil); ok {
		t.Fatal("appendInput encoded resume flags and nested metrics")
	}
	p := t.TempDir() + "/" + FileName
	w, err := Create(p, Header{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AppendInput(in); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	got := c.Lines[0].In
	if got.Resume == nil || !got.Resume.Unfinished || !math.IsInf(got.Metrics["nested"].(map[string]any)["x"].(float64), 1) {
		t.Fatalf("read back %+v", got)
	}
}

// TestAppendRecordMatchesJSON is TestAppendInputMatchesJSON for records.
func TestAppendRecordMatchesJSON(t *testing.T) {
	str := rapid.OneOf(rapid.String(), rapid.SampledFrom([]string{"", "status", "TERMINATED", `q"uote`, "ünï"}))
	rapid.Check(t, func(t *rapid.T) {
		r := controller.Record{Op: str.Draw(t, "op"), Trial: str.Draw(t, "trial"), Index: rapid.Int().Draw(t, "idx"),
			Tag: str.Draw(t, "tag"), Dir: str.Draw(t, "dir"), Status: hone.Status(str.Draw(t, "status")), Error: str.Draw(t, "err"),
			Failures: rapid.IntRange(-3, 9).Draw(t, "fail"), Path: str.Draw(t, "path"), CkIndex: rapid.Int().Draw(t, "ci"),
			Iteration: rapid.Int().Draw(t, "it"), TimeTotal: rapid.Float64().Draw(t, "tt")}
		fast, ok := appendRecord(nil, &r)
		if !ok {
			t.Fatalf("appendRecord refused %+v", r)
		}
		slow, err := json.Marshal(Line{Rec: &r})
		if err != nil {
			t.Fatal(err)
		}
		var a, b Line
		if err := json.Unmarshal(fast, &a); err != nil {
			t.Fatalf("fast line %q: %v", fast, err)
		}
		if err := json.Unmarshal(slow, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Rec, b.Rec) {
			t.Fatalf("fast %q\nslow %q", fast, slow)
		}
	})
	withConfig := &controller.Record{Op: "trial", Trial: "x", Config: hone.Config{"lr": 0.1}}
	if _, ok := appendRecord(nil, withConfig); ok {
		t.Fatal("appendRecord encoded a configuration")
	}
}

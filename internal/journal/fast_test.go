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

// TestAppendEventMatchesJSON: the reflection-free encoding of an event
// decodes to exactly what encoding/json's encoding of it decodes to, for
// random inputs with every metric kind, non-finite numbers, and strings
// that need escaping.
func TestAppendEventMatchesJSON(t *testing.T) {
	str := rapid.OneOf(rapid.String(), rapid.StringMatching(`[a-z_/]{0,12}`), rapid.SampledFrom([]string{"", `a"b`, `c\d`, "tab\there", "<&>", "π ≈ 3.14", "\x00\x1f\u2028"}))
	val := rapid.OneOf(
		rapid.Float64().AsAny(),
		rapid.SampledFrom([]float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, -0.0, 1e21, 1e-7, 5e-324, math.MaxFloat64}).AsAny(),
		rapid.Int().AsAny(), rapid.Int64().AsAny(), rapid.Bool().AsAny(), str.AsAny(), rapid.Just[any](nil),
		rapid.Float32().AsAny(), rapid.Int32().AsAny(),
	)
	rapid.Check(t, func(t *rapid.T) {
		in := hone.Event{
			Kind:     rapid.SampledFrom([]hone.EventKind{hone.EventResult, hone.EventSaved, hone.EventExited, hone.EventStarted, hone.EventTick}).Draw(t, "kind"),
			TrialID:  str.Draw(t, "trial"),
			Time:     rapid.Int64().Draw(t, "time"),
			Metrics:  rapid.MapOfN(str, val, 0, 8).Draw(t, "metrics"),
			Done:     rapid.Bool().Draw(t, "done"),
			Err:      str.Draw(t, "err"),
			PID:      rapid.IntRange(0, 1<<22).Draw(t, "pid"),
			Hostname: str.Draw(t, "host"),
		}
		if rapid.Bool().Draw(t, "ckpt") {
			in.Checkpoint = &hone.CheckpointRef{Index: rapid.IntRange(0, 1e6).Draw(t, "idx"), Path: str.Draw(t, "path")}
		}
		fast, _, ok := appendEvent(nil, &in, nil)
		if !ok {
			t.Fatalf("appendEvent refused %+v", in)
		}
		if !bytes.HasSuffix(fast, []byte("}}\n")) || bytes.Count(fast, []byte("\n")) != 1 {
			t.Fatalf("not one line: %q", fast)
		}
		ref := in
		if hasNonFinite(in.Metrics) {
			ref.Metrics = encodeNonFinite(in.Metrics).(map[string]any)
		}
		slow, err := json.Marshal(Line{Event: &ref})
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
		ja, _ := json.Marshal(encodeNonFinite(decodeNonFinite(any(map[string]any(a.Event.Metrics)))))
		jb, _ := json.Marshal(encodeNonFinite(decodeNonFinite(any(map[string]any(b.Event.Metrics)))))
		a.Event.Metrics, b.Event.Metrics = nil, nil
		sa, _ := json.Marshal(a)
		sb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) || !bytes.Equal(sa, sb) {
			t.Fatalf("fast %q\nslow %q", fast, slow)
		}
	})
}

// TestAppendEventFallsBack: events the fast path does not encode go
// through encoding/json and read back intact.
func TestAppendEventFallsBack(t *testing.T) {
	in := &hone.Event{Kind: hone.EventResume, Time: 3, Resume: &hone.ResumeFlags{Unfinished: true},
		Metrics: map[string]any{"nested": map[string]any{"x": math.Inf(1)}, "list": []any{1.0, "a"}}}
	if _, _, ok := appendEvent(nil, in, nil); ok {
		t.Fatal("appendEvent encoded resume flags and nested metrics")
	}
	p := t.TempDir() + "/" + FileName
	w, err := Create(p, Header{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AppendEvent(in); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	got := c.Lines[0].Event
	if got.Resume == nil || !got.Resume.Unfinished || !math.IsInf(got.Metrics["nested"].(map[string]any)["x"].(float64), 1) {
		t.Fatalf("read back %+v", got)
	}
}

// TestAppendRecordMatchesJSON is TestAppendEventMatchesJSON for records.
func TestAppendRecordMatchesJSON(t *testing.T) {
	str := rapid.OneOf(rapid.String(), rapid.SampledFrom([]string{"", "status", "TERMINATED", `q"uote`, "ünï"}))
	rapid.Check(t, func(t *rapid.T) {
		r := controller.Record{Op: str.Draw(t, "op"), Trial: str.Draw(t, "trial"), Index: rapid.Int().Draw(t, "idx"),
			Tag: str.Draw(t, "tag"), Dir: str.Draw(t, "dir"), Status: hone.Status(str.Draw(t, "status")), Error: str.Draw(t, "err"),
			Failures: rapid.IntRange(-3, 9).Draw(t, "fail"), Path: str.Draw(t, "path"), CkIndex: rapid.Int().Draw(t, "ci"),
			Iteration: rapid.Int().Draw(t, "it"), TimeTotal: rapid.Float64().Draw(t, "tt")}
		if rapid.Bool().Draw(t, "trial_record") {
			r.Config = hone.Config(rapid.MapOfN(str, rapid.OneOf(rapid.Float64().AsAny(), rapid.Int().AsAny(), str.AsAny(), rapid.Bool().AsAny()), 0, 5).Draw(t, "cfg"))
			r.Resources = &hone.Resources{CPU: rapid.Float64Range(0, 64).Draw(t, "cpu"), GPU: float64(rapid.IntRange(0, 8).Draw(t, "gpu")),
				Memory: rapid.Int64Range(0, 1<<40).Draw(t, "mem")}
		}
		fast, ok := appendRecord(nil, &r)
		if !ok {
			t.Fatalf("appendRecord refused %+v", r)
		}
		// parseLine may refuse (escaped strings); where it reads, it agrees.
		if got, ok := parseLine(bytes.TrimSuffix(fast, []byte("\n")), nil); ok && !reflect.DeepEqual(got.Rec, decodedRecord(t, fast)) {
			t.Fatalf("parseLine(%q) = %+v", fast, got.Rec)
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
	nested := &controller.Record{Op: "trial", Trial: "x", Config: hone.Config{"model": map[string]any{"lr": 0.1}}}
	if _, ok := appendRecord(nil, nested); ok {
		t.Fatal("appendRecord encoded a nested configuration")
	}
	custom := &controller.Record{Op: "trial", Trial: "x", Resources: &hone.Resources{Custom: map[string]float64{"tpu": 1}}}
	if _, ok := appendRecord(nil, custom); ok {
		t.Fatal("appendRecord encoded custom resources")
	}
}

// decodedRecord reads a record line with encoding/json, as Read does.
func decodedRecord(t *rapid.T, line []byte) *controller.Record {
	var l Line
	if err := json.Unmarshal(line, &l); err != nil || l.Rec == nil {
		t.Fatalf("encoding/json cannot read %q: %v", line, err)
	}
	if l.Rec.Config != nil {
		l.Rec.Config = decodeNonFinite(map[string]any(l.Rec.Config)).(map[string]any)
	}
	return l.Rec
}

// sameLine compares two decoded lines, NaN equal to NaN.
func sameLine(a, b Line) bool {
	ja, _ := json.Marshal(canonical(a))
	jb, _ := json.Marshal(canonical(b))
	return bytes.Equal(ja, jb)
}

func canonical(l Line) Line {
	if l.Event != nil && l.Event.Metrics != nil {
		in := *l.Event
		in.Metrics = encodeNonFinite(l.Event.Metrics).(map[string]any)
		l.Event = &in
	}
	return l
}

// referenceRead decodes a line as Read did before parseLine: with
// encoding/json.
func referenceRead(raw []byte) (Line, bool) {
	var l Line
	if err := json.Unmarshal(raw, &l); err != nil || (l.Event == nil) == (l.Rec == nil) {
		return Line{}, false
	}
	if l.Event != nil && l.Event.Metrics != nil {
		l.Event.Metrics = decodeNonFinite(l.Event.Metrics).(map[string]any)
	}
	return l, true
}

// TestParseLine: lines written by appendEvent and appendRecord parse
// without reflection to what encoding/json reads; and any line, mutated at
// random, either is refused by parseLine or parses to what encoding/json
// reads.
func TestParseLine(t *testing.T) {
	str := rapid.OneOf(rapid.String(), rapid.StringMatching(`[a-z_/]{0,12}`), rapid.SampledFrom([]string{"", `a"b`, "π", "\x01"}))
	val := rapid.OneOf(rapid.Float64().AsAny(), rapid.SampledFrom([]float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e21, 5e-324}).AsAny(),
		rapid.Int().AsAny(), rapid.Bool().AsAny(), str.AsAny(), rapid.Just[any](nil))
	fastPaths := 0
	rapid.Check(t, func(t *rapid.T) {
		var line []byte
		if rapid.Bool().Draw(t, "input") {
			in := hone.Event{Kind: rapid.SampledFrom([]hone.EventKind{hone.EventResult, hone.EventStarted}).Draw(t, "kind"),
				TrialID: str.Draw(t, "trial"), Time: rapid.Int64().Draw(t, "time"),
				Metrics: rapid.MapOfN(str, val, 0, 6).Draw(t, "metrics"), Done: rapid.Bool().Draw(t, "done"),
				Err: str.Draw(t, "err"), PID: rapid.IntRange(0, 1<<20).Draw(t, "pid"), Hostname: str.Draw(t, "host")}
			if rapid.Bool().Draw(t, "ckpt") {
				in.Checkpoint = &hone.CheckpointRef{Index: rapid.IntRange(0, 99).Draw(t, "ci"), Path: str.Draw(t, "path")}
			}
			line, _, _ = appendEvent(nil, &in, nil)
		} else {
			r := controller.Record{Op: str.Draw(t, "op"), Trial: str.Draw(t, "trial"), Status: hone.Status(str.Draw(t, "st")),
				Failures: rapid.IntRange(0, 9).Draw(t, "fail"), Path: str.Draw(t, "path"), CkIndex: rapid.Int().Draw(t, "ci"),
				Iteration: rapid.Int().Draw(t, "it"), TimeTotal: rapid.Float64().Draw(t, "tt")}
			line, _ = appendRecord(nil, &r)
		}
		raw := bytes.TrimSuffix(line, []byte("\n"))
		want, ok := referenceRead(raw)
		if !ok {
			t.Fatalf("encoding/json cannot read %q", raw)
		}
		if got, ok := parseLine(raw, nil); ok {
			fastPaths++
			if !sameLine(got, want) {
				t.Fatalf("parseLine(%q) = %+v, want %+v", raw, got, want)
			}
		}
		// Mutate a few bytes: parseLine must refuse or agree.
		mut := bytes.Clone(raw)
		for range rapid.IntRange(1, 3).Draw(t, "mutations") {
			if len(mut) == 0 {
				break
			}
			i := rapid.IntRange(0, len(mut)-1).Draw(t, "at")
			mut[i] = rapid.SampledFrom([]byte(`{}[]":,.-+e0159tfn\ a$`)).Draw(t, "byte")
		}
		got, fast := parseLine(mut, nil)
		want, ok = referenceRead(mut)
		if fast && (!ok || !sameLine(got, want)) {
			t.Fatalf("mutated %q: parseLine %+v, encoding/json %+v (ok %v)", mut, got, want, ok)
		}
	})
	if fastPaths < 10 {
		t.Errorf("only %d unmutated lines took the fast path", fastPaths)
	}
}

// TestParseLineFastPath: the lines the runner writes for results, starts
// and status changes take the fast path.
func TestParseLineFastPath(t *testing.T) {
	in := &hone.Event{Kind: hone.EventResult, TrialID: "5f2a9c01", Time: 17, Metrics: map[string]any{"loss": 0.5, "nan": math.NaN()},
		Checkpoint: &hone.CheckpointRef{Index: 3, Path: "t/checkpoint_000003"}}
	a, _, _ := appendEvent(nil, in, nil)
	r, _ := appendRecord(nil, &controller.Record{Op: "status", Trial: "5f2a9c01", Status: hone.StatusRunning})
	tr, _ := appendRecord(nil, &controller.Record{Op: "trial", Trial: "5f2a9c01", Index: 3, Config: hone.Config{"lr": 0.01, "act": "relu", "width": 64},
		Tag: "3_act=relu,lr=0.01,width=64", Dir: "train_5f2a9c01_3", Resources: &hone.Resources{CPU: 1, Memory: 1 << 30}})
	st, _, _ := appendEvent(nil, &hone.Event{Kind: hone.EventStarted, TrialID: "5f2a9c01", Time: 18, Hostname: "n2 (slurm job 41)"}, nil)
	for _, line := range [][]byte{a, r, tr, st} {
		if _, ok := parseLine(bytes.TrimSuffix(line, []byte("\n")), nil); !ok {
			t.Errorf("parseLine refused %q", line)
		}
	}
}

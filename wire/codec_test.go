package wire

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		line string
		want Message
	}{
		{`{"type":"hello","v":1,"token":"ab12","trial_id":"0a1b2c3d","can_save":true}` + "\n",
			Message{Type: TypeHello, V: 1, Token: "ab12", TrialID: "0a1b2c3d", CanSave: true}},
		{`{"type":"hello","v":1,"token":"t","trial_id":"x","can_save":null}`,
			Message{Type: TypeHello, V: 1, Token: "t", TrialID: "x"}},
		{`{"type":"hello","v":1,"token":"t","trial_id":"x","host":"n7"}`,
			Message{Type: TypeHello, V: 1, Token: "t", TrialID: "x", Host: "n7"}},
		{`{"type":"welcome","v":1}`, Message{Type: TypeWelcome, V: 1}},
		{`{"type":"report","metrics":{"loss":0.3,"acc":1,"ok":true,"name":"a","none":null,"eval":{"l":[1,2.5]}},"checkpoint":"/s/.staging/3","done":false}`,
			Message{Type: TypeReport, Metrics: map[string]any{"loss": 0.3, "acc": 1.0, "ok": true, "name": "a", "none": nil,
				"eval": map[string]any{"l": []any{1.0, 2.5}}}, Checkpoint: "/s/.staging/3"}},
		{`{"type":"report","done":true,"extra":[1]}`, Message{Type: TypeReport, Metrics: map[string]any{}, Done: true}},
		{`{"type":"report","metrics":null,"checkpoint":null}`, Message{Type: TypeReport, Metrics: map[string]any{}}},
		{` {"type":"directive","action":"stop","reason":"pause"} `, Message{Type: TypeDirective, Action: ActionStop, Reason: "pause"}},
		{`{"type":"directive","action":"checkpoint"}`, Message{Type: TypeDirective, Action: ActionCheckpoint}},
		{`{"type":"saved","checkpoint":""}`, Message{Type: TypeSaved}},
		{`{"type":"saved","error":"disk full"}`, Message{Type: TypeSaved, Error: "disk full"}},
		{`{"type":"error","message":"wrong token"}`, Message{Type: TypeError, Message: "wrong token"}},
		{`{"type":"report","metrics":{"big":1e308,"tiny":-1e-320}}`, Message{Type: TypeReport, Metrics: map[string]any{"big": 1e308, "tiny": -1e-320}}},
	} {
		got, err := Decode([]byte(c.line))
		if err != nil {
			t.Errorf("Decode(%s): %v", c.line, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Decode(%s) =\n%#v, want\n%#v", c.line, got, c.want)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	const nonFiniteHint = ": report finite numbers only (leave the metric out, or fail the trial)"
	for _, c := range []struct {
		line, want string
	}{
		// Not JSON, with the offset of the problem.
		{``, `message is not JSON: empty line`},
		{"  \n", `message is not JSON: empty line`},
		{`hello`, `message is not JSON: invalid character 'h' looking for beginning of value (at byte 1)`},
		{`{"type":"report",}`, `message is not JSON: invalid character '}' looking for beginning of object key string (at byte 18)`},
		{`{"type":"report"`, `message is not JSON: unexpected end of JSON input (at byte 16)`},
		{`{"type":"welcome","v":1} {"type":"welcome","v":1}`, `message is not JSON: invalid character '{' after the top-level value (at byte 26)`},
		{`{"type":"welcome","v":1} x`, `message is not JSON: invalid character 'x' after the top-level value (at byte 26)`},
		{`NaN`, `message is not JSON: invalid character 'N' looking for beginning of value (at byte 1)`},
		// Not an object.
		{`[1,2]`, `message is an array, not a JSON object`},
		{`"report"`, `message is "report", not a JSON object`},
		{`3`, `message is the number 3, not a JSON object`},
		{`null`, `message is null, not a JSON object`},
		// The type.
		{`{}`, `message has no "type" field (want one of hello, welcome, report, directive, saved, error)`},
		{`{"type":null}`, `message "type" is null, not a string`},
		{`{"type":7}`, `message "type" is the number 7, not a string`},
		{`{"type":"result"}`, `unknown message type "result" (want one of hello, welcome, report, directive, saved, error)`},
		// Non-finite numbers, as Python writes them, named by their path.
		{`{"type":"report","metrics":{"loss":NaN}}`, `metric "loss"` + ` is NaN` + nonFiniteHint},
		{`{"type":"report","metrics":{"acc":0.5, "loss": Infinity}}`, `metric "loss" is Infinity` + nonFiniteHint},
		{`{"type":"report","metrics":{"loss":-Infinity,"acc":NaN}}`, `metric "loss" is -Infinity` + nonFiniteHint},
		{`{"type":"report","metrics":{"eval":{"a\"b":[1, {"x": [NaN]}]}}}`, `metric "eval.a\"b[1].x[0]"` + ` is NaN` + nonFiniteHint},
		{`{"type":"report","metrics":{"loss":1e400}}`, `metric "loss" is 1e400 (beyond the float64 range)` + nonFiniteHint},
		{`{"type":"report","metrics":{"l":[-1e999]}}`, `metric "l[0]" is -1e999 (beyond the float64 range)` + nonFiniteHint},
		{`{"type":"hello","v":NaN}`, `field "v" is NaN: JSON has no NaN or infinities`},
		{`{"type":"report","metrics":NaN}`, `field "metrics" is NaN: JSON has no NaN or infinities`},
		// Missing and invalid fields.
		{`{"type":"hello","token":"t","trial_id":"x"}`, `hello: missing "v" (the protocol version, 1)`},
		{`{"type":"hello","v":1.5,"token":"t","trial_id":"x"}`, `hello: "v" is the number 1.5, not a protocol version (a positive integer)`},
		{`{"type":"hello","v":"1","token":"t","trial_id":"x"}`, `hello: "v" is "1", not a protocol version (a positive integer)`},
		{`{"type":"hello","v":1,"trial_id":"x"}`, `hello: missing "token"`},
		{`{"type":"hello","v":1,"token":"t"}`, `hello: missing "trial_id"`},
		{`{"type":"hello","v":1,"token":"","trial_id":"x"}`, `hello: "token" is empty`},
		{`{"type":"hello","v":1,"token":42,"trial_id":"x"}`, `hello: "token" is the number 42, not a string`},
		{`{"type":"hello","v":1,"token":"t","trial_id":"x","can_save":"yes"}`, `hello: "can_save" is "yes", not a boolean`},
		{`{"type":"welcome"}`, `welcome: missing "v" (the protocol version, 1)`},
		{`{"type":"report","metrics":[0.3]}`, `report: "metrics" is an array, not an object`},
		{`{"type":"report","checkpoint":{}}`, `report: "checkpoint" is an object, not a string`},
		{`{"type":"report","done":1}`, `report: "done" is the number 1, not a boolean`},
		{`{"type":"directive"}`, `directive: missing "action"`},
		{`{"type":"directive","action":""}`, `directive: "action" is empty`},
		{`{"type":"directive","action":"pause"}`, `directive: unknown action "pause" (want one of continue, checkpoint, stop)`},
		{`{"type":"saved","checkpoint":false}`, `saved: "checkpoint" is false, not a string`},
		{`{"type":"error","message":["x"]}`, `error: "message" is an array, not a string`},
	} {
		_, err := Decode([]byte(c.line))
		if err == nil {
			t.Errorf("Decode(%s) succeeded, want error %q", c.line, c.want)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("Decode(%s):\n got %s\nwant %s", c.line, err, c.want)
		}
	}
}

func TestDecodeTooLong(t *testing.T) {
	pad := strings.Repeat("x", MaxMessageSize)
	line := []byte(`{"type":"error","message":"` + pad[:MaxMessageSize-30] + `"}`)
	if len(line) != MaxMessageSize-1 {
		t.Fatalf("test line is %d bytes", len(line))
	}
	if _, err := Decode(line); err != nil {
		t.Errorf("line of the largest size: %v", err)
	}
	line = append(line[:len(line)-2], `x"}`...)
	if _, err := Decode(line); !errors.Is(err, ErrTooLong) || err.Error() != "message is over 1048576 bytes (the limit, newline included)" {
		t.Errorf("line one byte too long: %v", err)
	}
}

func TestParseReportLine(t *testing.T) {
	for _, c := range []struct {
		line string
		ok   bool
		want Message
		err  string
	}{
		{`epoch 3: loss 0.2`, false, Message{}, ""},
		{`HONE_REPORTS {}`, false, Message{}, ""},
		{` HONE_REPORT {}`, false, Message{}, ""},
		{`HONE_REPORT {"metrics":{"loss":0.3},"checkpoint":"/t/.staging/0","done":true}` + "\n", true,
			Message{Type: TypeReport, Metrics: map[string]any{"loss": 0.3}, Checkpoint: "/t/.staging/0", Done: true}, ""},
		{`HONE_REPORT {"type":"report","metrics":{}}`, true, Message{Type: TypeReport, Metrics: map[string]any{}}, ""},
		{`HONE_REPORT {"metrics":{"loss":0.3}`, true, Message{}, `report is not JSON: unexpected end of JSON input (at byte 23)`},
		{`HONE_REPORT loss=0.3`, true, Message{}, `report is not JSON: invalid character 'l' looking for beginning of value (at byte 1)`},
		{`HONE_REPORT [1]`, true, Message{}, `report is an array, not a JSON object`},
		{`HONE_REPORT {"metrics":{"loss":NaN}}`, true, Message{}, `metric "loss" is NaN: report finite numbers only (leave the metric out, or fail the trial)`},
		{`HONE_REPORT {"type":"hello"}`, true, Message{}, `report line has "type" "hello"; leave it out or make it "report"`},
		{`HONE_REPORT {"done":"yes"}`, true, Message{}, `report: "done" is "yes", not a boolean`},
	} {
		m, ok, err := ParseReportLine([]byte(c.line))
		if ok != c.ok {
			t.Errorf("ParseReportLine(%s): ok = %v", c.line, ok)
		}
		switch {
		case c.err == "" && err != nil:
			t.Errorf("ParseReportLine(%s): %v", c.line, err)
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("ParseReportLine(%s):\n got %v\nwant %s", c.line, err, c.err)
		case !reflect.DeepEqual(m, c.want):
			t.Errorf("ParseReportLine(%s) = %#v, want %#v", c.line, m, c.want)
		}
	}
	long := ReportPrefix + `{"metrics":{"s":"` + strings.Repeat("x", MaxMessageSize) + `"}}`
	if _, ok, err := ParseReportLine([]byte(long)); !ok || err == nil || err.Error() != "report line is over 1048576 bytes (the limit, newline included)" {
		t.Errorf("oversized report line: ok %v, err %v", ok, err)
	}
}

func TestEncode(t *testing.T) {
	for _, c := range []struct {
		m    Message
		want string
	}{
		{Message{Type: TypeWelcome, V: Version}, `{"type":"welcome","v":1}`},
		{Message{Type: TypeDirective, Action: ActionContinue}, `{"type":"directive","action":"continue"}`},
		{Message{Type: TypeDirective, Action: ActionStop, Reason: "stop"}, `{"type":"directive","action":"stop","reason":"stop"}`},
		{Message{Type: TypeError, Message: "a <b> & c"}, `{"type":"error","message":"a <b> & c"}`},
		{Message{Type: TypeReport, Metrics: map[string]any{"loss": 0.5, "n": 3}, Done: true}, `{"type":"report","metrics":{"loss":0.5,"n":3},"done":true}`},
		{Message{Type: TypeHello, V: 1, Token: "ab", TrialID: "x", CanSave: true}, `{"type":"hello","v":1,"token":"ab","trial_id":"x","can_save":true}`},
	} {
		b, err := Encode(c.m)
		if err != nil {
			t.Errorf("Encode(%+v): %v", c.m, err)
			continue
		}
		if string(b) != c.want+"\n" {
			t.Errorf("Encode(%+v) = %s, want %s", c.m, b, c.want)
		}
		back, err := Decode(b)
		if err != nil {
			t.Errorf("Decode(Encode(%+v)): %v", c.m, err)
		} else if back.Type != c.m.Type || back.Action != c.m.Action || back.Message != c.m.Message || back.Token != c.m.Token {
			t.Errorf("round trip of %+v gave %+v", c.m, back)
		}
	}
}

func TestEncodeErrors(t *testing.T) {
	for _, c := range []struct {
		m    Message
		want string
	}{
		{Message{Type: "result"}, `encode: unknown message type "result" (want one of hello, welcome, report, directive, saved, error)`},
		{Message{Type: TypeReport, Metrics: map[string]any{"loss": math.NaN()}},
			`encode report: metric "loss" is NaN: report finite numbers only (leave the metric out, or fail the trial)`},
		{Message{Type: TypeReport, Metrics: map[string]any{"hist": []float64{1, math.Inf(-1)}}},
			`encode report: metric "hist[1]" is -Infinity: report finite numbers only (leave the metric out, or fail the trial)`},
		{Message{Type: TypeReport, Metrics: map[string]any{"eval": map[string]float32{"acc": float32(math.Inf(1))}}},
			`encode report: metric "eval.acc" is Infinity: report finite numbers only (leave the metric out, or fail the trial)`},
		{Message{Type: TypeReport, Metrics: map[string]any{"f": func() {}}},
			`encode report: json: unsupported type: func()`},
		{Message{Type: TypeError, Message: strings.Repeat("x", MaxMessageSize)},
			`encode error: message is over 1048576 bytes (the limit, newline included)`},
	} {
		_, err := Encode(c.m)
		if err == nil || err.Error() != c.want {
			t.Errorf("Encode(%.60v):\n got %v\nwant %s", c.m, err, c.want)
		}
	}
}

func TestCheckMetrics(t *testing.T) {
	nan := math.NaN()
	ok := []map[string]any{
		nil,
		{},
		{"loss": 0.1, "name": "x", "b": []byte{1}, "p": (*float64)(nil), "n": map[int]float64{1: nan}},
	}
	for _, m := range ok {
		if err := CheckMetrics(m); err != nil {
			t.Errorf("CheckMetrics(%v): %v", m, err)
		}
	}
	if err := CheckMetrics(map[string]any{"p": &nan}); err == nil || !strings.HasPrefix(err.Error(), `metric "p" is NaN`) {
		t.Errorf("pointer to NaN: %v", err)
	}
	if err := CheckMetrics(map[string]any{"a": [2]any{1, [1]float64{nan}}}); err == nil || !strings.HasPrefix(err.Error(), `metric "a[1][0]" is NaN`) {
		t.Errorf("NaN in nested arrays: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"type":"hello","v":1,"token":"ab12","trial_id":"0a1b2c3d","can_save":true}`,
		`{"type":"report","metrics":{"loss":0.3,"eval":{"l":[1,NaN]}},"checkpoint":"/x/.staging/3","done":false}`,
		`{"type":"report","metrics":{"loss":-Infinity}}`,
		`{"type":"directive","action":"stop","reason":"pause"}`,
		`{"type":"saved","checkpoint":"","error":"x"}`,
		`{"type":"welcome","v":1e400}`,
		`[[[[{"a":[Infinity`,
		`{"a\u0000\"":"\ud800"}`,
	} {
		f.Add([]byte(s))
		f.Add([]byte(ReportPrefix + s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := Decode(line)
		if err == nil {
			if !contains(messageTypes, m.Type) {
				t.Fatalf("accepted type %q", m.Type)
			}
			if err := CheckMetrics(m.Metrics); err != nil {
				t.Fatalf("accepted %v", err)
			}
			b, err := Encode(m)
			if err != nil {
				t.Fatalf("Encode(Decode(%q)): %v", line, err)
			}
			back, err := Decode(b)
			if err != nil {
				t.Fatalf("Decode(Encode(Decode(%q))) = %v", line, err)
			}
			if !reflect.DeepEqual(normal(back), normal(m)) {
				t.Fatalf("round trip changed %#v into %#v", m, back)
			}
		}
		if m, ok, err := ParseReportLine(line); ok && err == nil {
			if m.Type != TypeReport || m.Metrics == nil {
				t.Fatalf("report line gave %#v", m)
			}
		} else if !ok && bytes.HasPrefix(line, []byte(ReportPrefix)) {
			t.Fatalf("line with the prefix not taken for a report")
		}
	})
}

// normal clears the fields that Encode leaves out when zero and Decode
// fills in, so that a round trip compares equal.
func normal(m Message) Message {
	if m.Type == TypeReport && len(m.Metrics) == 0 {
		m.Metrics = nil
	}
	return m
}

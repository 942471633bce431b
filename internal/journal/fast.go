package journal

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/controller"
)

// appendEvent appends the event in as a journal line (its journaled
// fields), the JSON encoding/json would give up to key order within the
// metrics and number formatting, without reflection: results are the
// journal's hot path. It reports false, having
// appended nothing, for what it does not encode (resume flags, metric
// values other than numbers, strings, booleans and null); the caller then
// uses encoding/json. keys is scratch space, returned for reuse.
func appendEvent(b []byte, in *hone.Event, keys []string) ([]byte, []string, bool) {
	if in.Resume != nil {
		return b, keys, false
	}
	keys = keys[:0]
	for k, v := range in.Metrics {
		if !simpleValue(v) {
			return b, keys, false
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, `{"in":{"k":`...)
	b = appendString(b, string(in.Kind))
	if in.TrialID != "" {
		b = append(b, `,"t":`...)
		b = appendString(b, in.TrialID)
	}
	b = append(b, `,"ns":`...)
	b = strconv.AppendInt(b, in.Time, 10)
	if len(in.Metrics) > 0 {
		b = appendObject(append(b, `,"m":`...), in.Metrics, keys)
	}
	if in.Done {
		b = append(b, `,"d":true`...)
	}
	if in.Checkpoint != nil {
		b = append(b, `,"c":{"i":`...)
		b = strconv.AppendInt(b, int64(in.Checkpoint.Index), 10)
		b = append(b, `,"p":`...)
		b = appendString(b, in.Checkpoint.Path)
		b = append(b, '}')
	}
	if in.Err != "" {
		b = append(b, `,"e":`...)
		b = appendString(b, in.Err)
	}
	if in.PID != 0 {
		b = append(b, `,"pid":`...)
		b = strconv.AppendInt(b, int64(in.PID), 10)
	}
	if in.Hostname != "" {
		b = append(b, `,"host":`...)
		b = appendString(b, in.Hostname)
	}
	return append(b, "}}\n"...), keys, true
}

// appendObject appends m as a JSON object, its keys (sorted) in order.
func appendObject(b []byte, m map[string]any, keys []string) []byte {
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendValue(b, m[k])
	}
	return append(b, '}')
}

// appendValue appends a metric value of one of the kinds appendEvent
// accepts; non-finite numbers take the journal's {"$f": ...} form.
func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case float64:
		return appendFloat(b, x, 64)
	case float32:
		return appendFloat(b, float64(x), 32) // as encoding/json: shortest for float32
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case int32:
		return strconv.AppendInt(b, int64(x), 10)
	case bool:
		return strconv.AppendBool(b, x)
	case string:
		return appendString(b, x)
	}
	return append(b, "null"...)
}

func appendFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `{"`+nonFiniteKey+`":"NaN"}`...)
	case math.IsInf(f, 1):
		return append(b, `{"`+nonFiniteKey+`":"+Inf"}`...)
	case math.IsInf(f, -1):
		return append(b, `{"`+nonFiniteKey+`":"-Inf"}`...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}

// appendString appends s as a JSON string: printable ASCII directly, and
// anything else through encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendRecord is appendEvent for records without a configuration or
// resources (status changes and checkpoint records: every record but a
// trial's first); it reports false for the others.
func appendRecord(b []byte, r *controller.Record) ([]byte, bool) {
	if math.IsNaN(r.TimeTotal) || math.IsInf(r.TimeTotal, 0) {
		return b, false
	}
	var keys []string
	for k, v := range r.Config {
		if !simpleValue(v) {
			return b, false
		}
		keys = append(keys, k)
	}
	if res := r.Resources; res != nil && (len(res.Custom) > 0 || !finite(res.CPU) || !finite(res.GPU)) {
		return b, false
	}
	slices.Sort(keys)
	b = append(b, `{"rec":{"o":`...)
	b = appendString(b, r.Op)
	b = append(b, `,"t":`...)
	b = appendString(b, r.Trial)
	b = appendIntField(b, `,"idx":`, r.Index)
	if len(r.Config) > 0 {
		b = appendObject(append(b, `,"cfg":`...), r.Config, keys)
	}
	b = appendStringField(b, `,"tag":`, r.Tag)
	b = appendStringField(b, `,"dir":`, r.Dir)
	b = appendStringField(b, `,"st":`, string(r.Status))
	b = appendStringField(b, `,"err":`, r.Error)
	b = appendIntField(b, `,"fail":`, r.Failures)
	b = appendStringField(b, `,"p":`, r.Path)
	b = appendIntField(b, `,"ci":`, r.CkIndex)
	b = appendIntField(b, `,"it":`, r.Iteration)
	if r.TimeTotal != 0 {
		b = append(b, `,"tt":`...)
		b = strconv.AppendFloat(b, r.TimeTotal, 'g', -1, 64)
	}
	if res := r.Resources; res != nil {
		b = append(b, `,"res":{`...)
		n := len(b)
		if res.CPU != 0 {
			b = strconv.AppendFloat(append(b, `"cpu":`...), res.CPU, 'g', -1, 64)
		}
		if res.GPU != 0 {
			if len(b) > n {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(append(b, `"gpu":`...), res.GPU, 'g', -1, 64)
		}
		if res.Memory != 0 {
			if len(b) > n {
				b = append(b, ',')
			}
			b = strconv.AppendInt(append(b, `"memory":`...), res.Memory, 10)
		}
		b = append(b, '}')
	}
	return append(b, "}}\n"...), true
}

// simpleValue reports whether appendValue encodes v.
func simpleValue(v any) bool {
	switch v.(type) {
	case float64, float32, int, int64, int32, bool, string, nil:
		return true
	}
	return false
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// appendIntField and appendStringField append a field unless it is empty
// (json's omitempty).
func appendIntField(b []byte, key string, v int) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), int64(v), 10)
}

func appendStringField(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	return appendString(append(b, key...), v)
}

// SameRecord reports whether two records encode to the same journal line
// (numbers compare by value, whatever their Go type).
func SameRecord(a, b *controller.Record) bool {
	return string(encodeRecord(a)) == string(encodeRecord(b))
}

func encodeRecord(r *controller.Record) []byte {
	if line, ok := appendRecord(nil, r); ok {
		return line
	}
	cp := *r
	if hasNonFinite(map[string]any(r.Config)) {
		cp.Config = encodeNonFinite(map[string]any(r.Config)).(map[string]any)
	}
	line, err := json.Marshal(Line{Rec: &cp})
	if err != nil {
		return []byte("unencodable: " + err.Error())
	}
	return line
}

package callback

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/hone-tune/hone"
)

// DateFormat is the layout of the "date" result field (local time).
const DateFormat = "2006-01-02_15-04-05"

// The strings that stand for non-finite floats in result.json,
// progress.csv and params.json. JSON has no NaN or infinities, so a metric
// of NaN is written as the JSON string "NaN"; ParseNonFinite maps them back.
const (
	NaN    = "NaN"
	PosInf = "Infinity"
	NegInf = "-Infinity"
)

// Row returns the row that result.json gets for result r of trial t: the
// user metrics at top level plus the auto fields under their result.json
// names (hone.Field*). Auto fields win over user metrics of the same name.
// "config" is t's current configuration, "date" is r.Timestamp in local
// time formatted with DateFormat, "timestamp" is in unix seconds, and
// "checkpoint_dir_name" is present only when r carried a checkpoint.
//
// The row shares the metric values and the configuration with t and r:
// callers must not modify it. Non-finite floats are left as they are; pass
// the row through JSONSafe before encoding it.
func Row(t *hone.Trial, r *hone.Result) map[string]any {
	row := make(map[string]any, len(r.Metrics)+14)
	for k, v := range r.Metrics {
		row[k] = v
	}
	cfg := map[string]any(t.Config)
	if cfg == nil {
		cfg = map[string]any{}
	}
	row[hone.FieldTrainingIteration] = r.TrainingIteration
	row[hone.FieldTimeThisIter] = r.TimeThisIter
	row[hone.FieldTimeTotal] = r.TimeTotal
	row[hone.FieldTimeSinceRestore] = r.TimeSinceRestore
	row[hone.FieldIterationsSinceRestore] = r.IterationsSinceRestore
	row[hone.FieldTimestamp] = r.Timestamp.Unix()
	row[hone.FieldDate] = r.Timestamp.Local().Format(DateFormat)
	row[hone.FieldPID] = r.PID
	row[hone.FieldHostname] = r.Hostname
	row[hone.FieldTrialID] = t.ID
	row[hone.FieldExperimentTag] = t.Tag
	row[hone.FieldDone] = r.Done
	row[hone.FieldConfig] = cfg
	if r.Checkpoint != nil {
		row[hone.FieldCheckpointDirName] = r.Checkpoint.Name()
	}
	return row
}

// JSONSafe returns v with every non-finite float (also inside maps, slices
// and arrays, at any depth) replaced by NaN, PosInf or NegInf. When v holds
// none it is returned as is, without copying; otherwise the containers on
// the way to a replaced value are copied (as map[string]any and []any) and
// v itself is never modified. Struct fields are not inspected.
func JSONSafe(v any) any {
	out, _ := jsonSafe(v)
	return out
}

// ParseNonFinite maps NaN, PosInf and NegInf back to their float values.
func ParseNonFinite(s string) (float64, bool) {
	switch s {
	case NaN:
		return math.NaN(), true
	case PosInf:
		return math.Inf(1), true
	case NegInf:
		return math.Inf(-1), true
	}
	return 0, false
}

func nonFinite(f float64) (string, bool) {
	switch {
	case math.IsNaN(f):
		return NaN, true
	case math.IsInf(f, 1):
		return PosInf, true
	case math.IsInf(f, -1):
		return NegInf, true
	}
	return "", false
}

// jsonSafe implements JSONSafe; changed reports whether out differs from v.
func jsonSafe(v any) (out any, changed bool) {
	switch x := v.(type) {
	case nil, string, bool, int, int64, int32, uint, uint64, uint32, json.Number:
		return v, false
	case float64:
		if s, ok := nonFinite(x); ok {
			return s, true
		}
		return v, false
	case float32:
		if s, ok := nonFinite(float64(x)); ok {
			return s, true
		}
		return v, false
	case map[string]any:
		return safeMap(x)
	case hone.Config:
		return safeMap(x)
	case []any:
		var cp []any
		for i, e := range x {
			if s, ch := jsonSafe(e); ch {
				if cp == nil {
					cp = slices.Clone(x)
				}
				cp[i] = s
			}
		}
		if cp == nil {
			return v, false
		}
		return cp, true
	}
	return safeReflect(v)
}

func safeMap(m map[string]any) (any, bool) {
	var cp map[string]any
	for k, e := range m {
		if s, ch := jsonSafe(e); ch {
			if cp == nil {
				cp = make(map[string]any, len(m))
				for k2, e2 := range m {
					cp[k2] = e2
				}
			}
			cp[k] = s
		}
	}
	if cp == nil {
		return m, false
	}
	return cp, true
}

// safeReflect handles the types the fast path does not: named float types,
// typed maps with string keys, typed slices and arrays, pointers.
func safeReflect(v any) (any, bool) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Float32, reflect.Float64:
		if s, ok := nonFinite(rv.Float()); ok {
			return s, true
		}
	case reflect.Pointer, reflect.Interface:
		if !rv.IsNil() {
			if s, ch := jsonSafe(rv.Elem().Interface()); ch {
				return s, true
			}
		}
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String || rv.Type().Implements(reflect.TypeFor[json.Marshaler]()) {
			break
		}
		changed := false
		cp := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			s, ch := jsonSafe(it.Value().Interface())
			cp[it.Key().String()] = s
			changed = changed || ch
		}
		if changed {
			return cp, true
		}
	case reflect.Slice, reflect.Array:
		if rv.Type().Elem().Kind() == reflect.Uint8 || rv.Type().Implements(reflect.TypeFor[json.Marshaler]()) {
			break // []byte encodes as base64
		}
		changed := false
		cp := make([]any, rv.Len())
		for i := range cp {
			s, ch := jsonSafe(rv.Index(i).Interface())
			cp[i] = s
			changed = changed || ch
		}
		if changed {
			return cp, true
		}
	}
	return v, false
}

// appendJSON appends the JSON encoding of v (made JSONSafe, map keys
// sorted, no HTML escaping) and a newline to buf. With indent it is
// indented by two spaces. A top-level map whose values cannot all be
// encoded has the offending values written as their fmt %v text instead,
// so one odd metric does not lose a whole row.
func appendJSON(buf *bytes.Buffer, v any, indent bool) error {
	v = JSONSafe(v)
	if !indent {
		if b, _, ok := appendCompact(buf.AvailableBuffer(), v, nil); ok {
			buf.Write(b)
			buf.WriteByte('\n')
			return nil
		}
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	n := buf.Len()
	err := enc.Encode(v)
	if err == nil {
		return nil
	}
	buf.Truncate(n)
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("encode json: %w", err)
	}
	fixed := make(map[string]any, len(m))
	for k, e := range m {
		if _, err := json.Marshal(e); err != nil {
			e = fmt.Sprintf("%v", e)
		}
		fixed[k] = e
	}
	if err := enc.Encode(fixed); err != nil {
		buf.Truncate(n)
		return fmt.Errorf("encode json: %w", err)
	}
	return nil
}

// flatten adds the cells of v under key prefix to cells: nested maps are
// flattened with "/" between keys; other values become cell text.
func flatten(cells map[string]string, prefix string, v any) {
	hone.Flatten(prefix, v, func(k string, leaf any) { cells[k] = cellText(leaf) })
}

// cellText renders one CSV cell: strings as they are, numbers as in JSON
// (non-finite ones as NaN, PosInf, NegInf), nil as "", anything else as
// compact JSON.
func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return formatFloat(x, 64)
	case float32:
		return formatFloat(float64(x), 32)
	case json.Number:
		return x.String()
	}
	var b bytes.Buffer
	if err := appendJSON(&b, v, false); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// formatFloat formats f the way encoding/json does, and non-finite values
// as NaN, PosInf, NegInf.
func formatFloat(f float64, bits int) string {
	if s, ok := nonFinite(f); ok {
		return s
	}
	b, _ := appendJSONFloat(nil, f, bits)
	return string(b)
}

// appendCSVRecord appends one CSV record (RFC 4180 quoting) and a newline.
func appendCSVRecord(buf []byte, fields []string) []byte {
	for i, f := range fields {
		if i > 0 {
			buf = append(buf, ',')
		}
		if f == "" || !strings.ContainsAny(f, ",\"\r\n") && f[0] != ' ' && f[0] != '\t' {
			buf = append(buf, f...)
			continue
		}
		buf = append(buf, '"')
		buf = append(buf, strings.ReplaceAll(f, `"`, `""`)...)
		buf = append(buf, '"')
	}
	return append(buf, '\n')
}

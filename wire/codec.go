package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// messageTypes lists the message types in the order error messages name
// them.
var messageTypes = []string{TypeHello, TypeWelcome, TypeReport, TypeDirective, TypeSaved, TypeError}

// actions lists the directive actions in the order error messages name
// them.
var actions = []string{ActionContinue, ActionCheckpoint, ActionStop}

// Decode parses one message: a line with or without its trailing newline.
// It checks the JSON syntax, the size limit, the type and the fields that
// type uses (unknown fields are ignored), and returns an error that says
// what is wrong in terms a trial's author can act on. Decode does not
// check what depends on the connection: the token, the trial id, the
// protocol version, whether the message comes in turn, and where a
// checkpoint is.
//
// Numbers decode as float64; metrics hold nil, bool, float64, string,
// map[string]any and []any values. A report's missing metrics decode as
// an empty map.
func Decode(line []byte) (Message, error) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	if len(line)+1 > MaxMessageSize {
		return Message{}, ErrTooLong
	}
	obj, err := parseObject(line, "message")
	if err != nil {
		return Message{}, err
	}
	t, ok := obj["type"]
	if !ok {
		return Message{}, fmt.Errorf(`message has no "type" field (want one of %s)`, strings.Join(messageTypes, ", "))
	}
	typ, ok := t.(string)
	if !ok {
		return Message{}, fmt.Errorf(`message "type" is %s, not a string`, describe(t))
	}
	m := Message{Type: typ}
	f := fields{obj: obj, what: typ}
	switch typ {
	case TypeHello:
		m.V = f.version()
		m.Token = f.str("token", true)
		m.TrialID = f.str("trial_id", true)
		m.CanSave = f.boolean("can_save")
		m.Host = f.str("host", false)
	case TypeWelcome:
		m.V = f.version()
	case TypeReport:
		m.Metrics = f.metrics()
		m.Checkpoint = f.str("checkpoint", false)
		m.Done = f.boolean("done")
	case TypeDirective:
		m.Action = f.str("action", true)
		if f.err == nil && !contains(actions, m.Action) {
			f.err = fmt.Errorf("directive: unknown action %q (want one of %s)", m.Action, strings.Join(actions, ", "))
		}
		m.Reason = f.str("reason", false)
	case TypeSaved:
		m.Checkpoint = f.str("checkpoint", false)
		m.Error = f.str("error", false)
	case TypeError:
		m.Message = f.str("message", false)
	default:
		return Message{}, fmt.Errorf("unknown message type %q (want one of %s)", typ, strings.Join(messageTypes, ", "))
	}
	if f.err != nil {
		return Message{}, f.err
	}
	return m, nil
}

// ParseReportLine parses a line of a trial's standard output (without its
// newline). ok is false when the line does not start with ReportPrefix:
// it is no report and only gets logged. Otherwise the rest of the line
// must be a JSON object with the fields of a report ("type" may be left
// out); the returned message is of type report, or err says what is
// wrong with it.
func ParseReportLine(line []byte) (m Message, ok bool, err error) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	body, found := bytes.CutPrefix(line, []byte(ReportPrefix))
	if !found {
		return Message{}, false, nil
	}
	if len(line)+1 > MaxMessageSize {
		return Message{}, true, errors.New("report line is over " + strconv.Itoa(MaxMessageSize) + " bytes (the limit, newline included)")
	}
	obj, err := parseObject(body, "report")
	if err != nil {
		return Message{}, true, err
	}
	if t, ok := obj["type"]; ok && t != TypeReport {
		return Message{}, true, fmt.Errorf(`report line has "type" %s; leave it out or make it "report"`, describe(t))
	}
	f := fields{obj: obj, what: TypeReport}
	m = Message{Type: TypeReport}
	m.Metrics = f.metrics()
	m.Checkpoint = f.str("checkpoint", false)
	m.Done = f.boolean("done")
	if f.err != nil {
		return Message{}, true, f.err
	}
	return m, true, nil
}

// Encode returns m as one line of JSON, newline included. It fails when m
// has an unknown type, a report's metrics hold a non-finite number or a
// value JSON cannot represent, or the line would be over MaxMessageSize.
// Fields that m's type does not use are encoded if set; zero fields are
// left out.
func Encode(m Message) ([]byte, error) {
	if !contains(messageTypes, m.Type) {
		return nil, fmt.Errorf("encode: unknown message type %q (want one of %s)", m.Type, strings.Join(messageTypes, ", "))
	}
	if err := CheckMetrics(m.Metrics); err != nil {
		return nil, fmt.Errorf("encode %s: %w", m.Type, err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("encode %s: %w", m.Type, err)
	}
	if buf.Len() > MaxMessageSize {
		return nil, fmt.Errorf("encode %s: %w", m.Type, ErrTooLong)
	}
	return buf.Bytes(), nil
}

// CheckMetrics returns an error naming the first NaN or infinite number
// it finds in m, looking into nested maps, slices and arrays. Decode and
// ParseReportLine return the same error for a report holding such a
// number, so a trial that checks before sending fails the way hone would
// fail it.
func CheckMetrics(m map[string]any) error {
	var path []string
	var check func(v reflect.Value) error
	check = func(v reflect.Value) error {
		if len(path) > maxScanDepth {
			return nil // a cycle, or deeper than JSON may be: Encode fails
		}
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer:
			if v.IsNil() {
				return nil
			}
			return check(v.Elem())
		case reflect.Float32, reflect.Float64:
			return nonFiniteError(path, v.Float())
		case reflect.Map:
			if v.Type().Key().Kind() != reflect.String {
				return nil
			}
			it := v.MapRange()
			for it.Next() {
				path = append(path, it.Key().String())
				if err := check(it.Value()); err != nil {
					return err
				}
				path = path[:len(path)-1]
			}
		case reflect.Slice, reflect.Array:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				return nil // []byte encodes as a base64 string
			}
			for i := range v.Len() {
				path = append(path, "["+strconv.Itoa(i)+"]")
				if err := check(v.Index(i)); err != nil {
					return err
				}
				path = path[:len(path)-1]
			}
		}
		return nil
	}
	path = append(path, "metrics")
	return check(reflect.ValueOf(m))
}

// nonFiniteError returns the error for a non-finite number f at path, or
// nil when f is finite.
func nonFiniteError(path []string, f float64) error {
	switch {
	case math.IsNaN(f):
		return nonFinite(path, "NaN")
	case math.IsInf(f, 1):
		return nonFinite(path, "Infinity")
	case math.IsInf(f, -1):
		return nonFinite(path, "-Infinity")
	}
	return nil
}

// nonFinite returns the error for a non-finite value, named by its token,
// at path (which starts with a top-level field name).
func nonFinite(path []string, token string) error {
	if len(path) > 1 && path[0] == "metrics" {
		return fmt.Errorf("metric %q is %s: report finite numbers only (leave the metric out, or fail the trial)", formatPath(path[1:]), token)
	}
	return fmt.Errorf("field %q is %s: JSON has no NaN or infinities", formatPath(path), token)
}

// parseObject parses doc as a JSON object; what ("message", "report")
// names doc in errors.
func parseObject(doc []byte, what string) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	if err == nil {
		// One value, then nothing but white space.
		end := int(dec.InputOffset())
		rest := bytes.TrimLeft(doc[end:], " \t\r\n")
		if len(rest) > 0 {
			pos := len(doc) - len(rest) + 1
			return nil, fmt.Errorf("%s is not JSON: invalid character %s after the top-level value (at byte %d)", what, quoteChar(rest[0]), pos)
		}
	}
	if err != nil {
		if path, tok, ok := findNonFinite(doc); ok && len(path) > 0 {
			return nil, nonFinite(path, tok)
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%s is not JSON: %s (at byte %d)", what, se.Error(), se.Offset)
		}
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s is not JSON: empty line", what)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%s is not JSON: unexpected end of JSON input (at byte %d)", what, len(doc))
		}
		return nil, fmt.Errorf("%s is not JSON: %w", what, err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is %s, not a JSON object", what, describe(v))
	}
	if err := toFloats(obj, nil); err != nil {
		return nil, err
	}
	return obj, nil
}

// toFloats replaces the json.Numbers in v (decoded with UseNumber) by
// float64s, in place. A number too large for a float64 is an error, like
// an infinity.
func toFloats(v any, path []string) error {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if n, ok := e.(json.Number); ok {
				f, err := number(n, append(path, k))
				if err != nil {
					return err
				}
				x[k] = f
			} else if err := toFloats(e, append(path, k)); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			p := append(path, "["+strconv.Itoa(i)+"]")
			if n, ok := e.(json.Number); ok {
				f, err := number(n, p)
				if err != nil {
					return err
				}
				x[i] = f
			} else if err := toFloats(e, p); err != nil {
				return err
			}
		}
	}
	return nil
}

func number(n json.Number, path []string) (float64, error) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, fmt.Errorf("field %q: bad number %s", formatPath(path), n)
	}
	if math.IsInf(f, 0) {
		return 0, nonFinite(path, string(n)+" (beyond the float64 range)")
	}
	return f, nil
}

// fields extracts typed fields from a decoded object, keeping the first
// error.
type fields struct {
	obj  map[string]any
	what string // the message type, for errors
	err  error
}

// get returns field key; a null counts as absent.
func (f *fields) get(key string) (any, bool) {
	v, ok := f.obj[key]
	return v, ok && v != nil
}

func (f *fields) fail(format string, args ...any) {
	if f.err == nil {
		f.err = fmt.Errorf(f.what+": "+format, args...)
	}
}

func (f *fields) str(key string, required bool) string {
	v, ok := f.get(key)
	if !ok {
		if required {
			f.fail("missing %q", key)
		}
		return ""
	}
	s, ok := v.(string)
	switch {
	case !ok:
		f.fail("%q is %s, not a string", key, describe(v))
	case s == "" && required:
		f.fail("%q is empty", key)
	}
	return s
}

func (f *fields) boolean(key string) bool {
	v, ok := f.get(key)
	if !ok {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		f.fail("%q is %s, not a boolean", key, describe(v))
	}
	return b
}

// version returns the required protocol version field "v".
func (f *fields) version() int {
	v, ok := f.get("v")
	if !ok {
		f.fail(`missing "v" (the protocol version, %d)`, Version)
		return 0
	}
	x, ok := v.(float64)
	if !ok || x != math.Trunc(x) || x < 1 || x > math.MaxInt32 {
		f.fail(`"v" is %s, not a protocol version (a positive integer)`, describe(v))
		return 0
	}
	return int(x)
}

// metrics returns a report's metrics object; missing or null is empty.
func (f *fields) metrics() map[string]any {
	v, ok := f.get("metrics")
	if !ok {
		return map[string]any{}
	}
	m, ok := v.(map[string]any)
	if !ok {
		f.fail(`"metrics" is %s, not an object`, describe(v))
	}
	return m
}

// describe names a decoded JSON value for an error message, with the
// value itself when it is short.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return "the number " + strconv.FormatFloat(x, 'g', -1, 64)
	case json.Number:
		return "the number " + x.String()
	case string:
		if len(x) > 40 {
			return "a string"
		}
		return strconv.Quote(x)
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

// quoteChar quotes a byte as encoding/json's syntax errors do.
func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	q := strconv.Quote(string(rune(c)))
	return "'" + q[1:len(q)-1] + "'"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

package journal

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/controller"
)

// parseLine decodes a journal line of the shape appendEvent and
// appendRecord write, without reflection: replaying the journal is most of
// a resume. It reports false for anything else — escapes in strings,
// nested metric or configuration values, custom resources, unknown keys,
// any irregularity —
// and the caller then uses encoding/json, which is the reference: where
// parseLine succeeds it gives what encoding/json gives. Events come from
// slab, or are allocated one by one if it is nil.
func parseLine(b []byte, slab *eventSlab) (Line, bool) {
	p := &parser{b: b}
	switch {
	case p.lit(`{"in":{`):
		in, ok := p.event(slab.next())
		if !ok || !p.lit("}") || p.i != len(b) {
			return Line{}, false
		}
		return Line{Event: in}, true
	case p.lit(`{"rec":{`):
		r, ok := p.record()
		if !ok || !p.lit("}") || p.i != len(b) {
			return Line{}, false
		}
		return Line{Rec: r}, true
	}
	return Line{}, false
}

// eventSlab hands out the events of the lines a reader decodes from
// arrays of a few hundred, so that reading a journal (most of a resume)
// allocates an array per few hundred event lines rather than an event per
// line. An event taken for a line that then fails to parse is not handed
// out again.
type eventSlab struct {
	free []hone.Event
	n    int // the size of the last array
}

// next returns a zero event; a nil slab allocates it alone.
func (s *eventSlab) next() *hone.Event {
	if s == nil {
		return new(hone.Event)
	}
	if len(s.free) == 0 {
		s.n = min(max(2*s.n, 16), 512)
		s.free = make([]hone.Event, s.n)
	}
	ev := &s.free[0]
	s.free = s.free[1:]
	return ev
}

type parser struct {
	b []byte
	i int
}

func (p *parser) lit(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

// fields calls f with each key of the object whose opening brace was just
// read, positioned at its value, until the closing brace.
func (p *parser) fields(f func(key string) bool) bool {
	if p.lit("}") {
		return true
	}
	for {
		k, ok := p.str()
		if !ok || !p.lit(":") || !f(k) {
			return false
		}
		if p.lit("}") {
			return true
		}
		if !p.lit(",") {
			return false
		}
	}
}

// str reads a string without escapes.
func (p *parser) str() (string, bool) {
	if !p.lit(`"`) {
		return "", false
	}
	start, ascii := p.i, true
	for ; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			if !ascii && !utf8.Valid(s) {
				return "", false
			}
			return string(s), true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= 0x80:
			ascii = false
		}
	}
	return "", false
}

// token reads the bytes of a number.
func (p *parser) token() []byte {
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			break
		}
		p.i++
	}
	return p.b[start:p.i]
}

// jsonNumber reports whether t follows JSON's number grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func jsonNumber(t []byte) bool {
	i := 0
	digits := func() int {
		n := 0
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(t) && t[i] == '-' {
		i++
	}
	switch {
	case i < len(t) && t[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(t) && t[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		i++
		if i < len(t) && (t[i] == '+' || t[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(t)
}

func (p *parser) int64() (int64, bool) {
	t := p.token()
	if !jsonNumber(t) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(t), 10, 64)
	return n, err == nil
}

func (p *parser) int() (int, bool) {
	t := p.token()
	if !jsonNumber(t) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(t), 10, strconv.IntSize)
	return int(n), err == nil
}

func (p *parser) float() (float64, bool) {
	t := p.token()
	if !jsonNumber(t) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(t), 64)
	return f, err == nil
}

func (p *parser) bool() (bool, bool) {
	switch {
	case p.lit("true"):
		return true, true
	case p.lit("false"):
		return false, true
	}
	return false, false
}

// value reads a metric value: a string, a number, a boolean, null, or the
// journal's {"$f": ...} form of a non-finite number.
func (p *parser) value() (any, bool) {
	if p.i >= len(p.b) {
		return nil, false
	}
	switch p.b[p.i] {
	case '"':
		return p.str()
	case 't', 'f':
		return p.bool()
	case 'n':
		return nil, p.lit("null")
	case '{':
		switch {
		case p.lit(`{"` + nonFiniteKey + `":"NaN"}`):
			return math.NaN(), true
		case p.lit(`{"` + nonFiniteKey + `":"+Inf"}`):
			return math.Inf(1), true
		case p.lit(`{"` + nonFiniteKey + `":"-Inf"}`):
			return math.Inf(-1), true
		}
		return nil, false
	}
	return p.float()
}

// object reads an object of values (metrics, a flat configuration).
func (p *parser) object() (map[string]any, bool) {
	if !p.lit("{") {
		return nil, false
	}
	m := map[string]any{}
	ok := p.fields(func(k string) bool {
		v, ok := p.value()
		m[k] = v
		return ok
	})
	return m, ok
}

// event decodes an event's fields into in, which is zero.
func (p *parser) event(in *hone.Event) (*hone.Event, bool) {
	ok := p.fields(func(k string) bool {
		var ok bool
		switch k {
		case "k":
			var s string
			s, ok = p.str()
			in.Kind = hone.EventKind(s)
		case "t":
			in.TrialID, ok = p.str()
		case "ns":
			in.Time, ok = p.int64()
		case "m":
			in.Metrics, ok = p.object()
		case "d":
			in.Done, ok = p.bool()
		case "c":
			if !p.lit("{") {
				return false
			}
			in.Checkpoint = &hone.CheckpointRef{}
			ok = p.fields(func(k string) bool {
				var ok bool
				switch k {
				case "i":
					in.Checkpoint.Index, ok = p.int()
				case "p":
					in.Checkpoint.Path, ok = p.str()
				}
				return ok
			})
		case "e":
			in.Err, ok = p.str()
		case "pid":
			in.PID, ok = p.int()
		case "host":
			in.Hostname, ok = p.str()
		}
		return ok
	})
	return in, ok
}

func (p *parser) record() (*controller.Record, bool) {
	r := &controller.Record{}
	ok := p.fields(func(k string) bool {
		var ok bool
		switch k {
		case "o":
			r.Op, ok = p.str()
		case "t":
			r.Trial, ok = p.str()
		case "idx":
			r.Index, ok = p.int()
		case "tag":
			r.Tag, ok = p.str()
		case "dir":
			r.Dir, ok = p.str()
		case "st":
			var s string
			s, ok = p.str()
			r.Status = hone.Status(s)
		case "err":
			r.Error, ok = p.str()
		case "fail":
			r.Failures, ok = p.int()
		case "p":
			r.Path, ok = p.str()
		case "ci":
			r.CkIndex, ok = p.int()
		case "it":
			r.Iteration, ok = p.int()
		case "tt":
			r.TimeTotal, ok = p.float()
		case "cfg":
			r.Config, ok = p.object()
		case "res":
			if !p.lit("{") {
				return false
			}
			r.Resources = &hone.Resources{}
			ok = p.fields(func(k string) bool {
				var ok bool
				switch k {
				case "cpu":
					r.Resources.CPU, ok = p.float()
				case "gpu":
					r.Resources.GPU, ok = p.float()
				case "memory":
					r.Resources.Memory, ok = p.int64()
				}
				return ok
			})
		}
		return ok
	})
	return r, ok
}

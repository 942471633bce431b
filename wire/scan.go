package wire

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// The non-finite number tokens that Python's json module (and others
// following it) write for float('nan') and the infinities.
var nonFiniteTokens = []string{"NaN", "Infinity", "-Infinity"}

// maxScanDepth bounds the nesting that findNonFinite follows, as
// encoding/json bounds its own.
const maxScanDepth = 10000

// findNonFinite looks for the first NaN, Infinity or -Infinity token used
// as a value in doc, which is JSON except for such tokens. It returns the
// path of keys and array indexes to it and the token. ok is false when doc
// has none before its first other syntax error.
func findNonFinite(doc []byte) (path []string, token string, ok bool) {
	s := &nfScanner{b: doc}
	if s.value(0) {
		return s.path, s.token, true
	}
	return nil, "", false
}

// nfScanner walks a JSON document for findNonFinite.
type nfScanner struct {
	b     []byte
	i     int
	path  []string
	token string
}

func (s *nfScanner) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans one value. It returns true when it found a non-finite token
// (s.path and s.token then say where and which), false when the value
// ended normally or a syntax error stopped the scan (s.i = len(s.b) then).
func (s *nfScanner) value(depth int) bool {
	if depth > maxScanDepth {
		s.i = len(s.b)
		return false
	}
	s.skipSpace()
	if s.i >= len(s.b) {
		return false
	}
	rest := s.b[s.i:]
	for _, tok := range nonFiniteTokens {
		if bytes.HasPrefix(rest, []byte(tok)) {
			s.token = tok
			return true
		}
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(depth)
	case c == '[':
		return s.array(depth)
	case c == '"':
		if _, ok := s.str(); !ok {
			s.i = len(s.b)
		}
		return false
	case c == '-' || c >= '0' && c <= '9':
		s.number()
		return false
	case bytes.HasPrefix(rest, []byte("true")):
		s.i += 4
	case bytes.HasPrefix(rest, []byte("false")):
		s.i += 5
	case bytes.HasPrefix(rest, []byte("null")):
		s.i += 4
	default:
		s.i = len(s.b)
	}
	return false
}

func (s *nfScanner) object(depth int) bool {
	s.i++ // {
	s.skipSpace()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return false
	}
	for s.i < len(s.b) {
		s.skipSpace()
		key, ok := s.str()
		if !ok {
			break
		}
		s.skipSpace()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			break
		}
		s.i++
		s.path = append(s.path, key)
		if s.value(depth + 1) {
			return true
		}
		s.path = s.path[:len(s.path)-1]
		s.skipSpace()
		if s.i >= len(s.b) {
			break
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			continue
		case '}':
			s.i++
			return false
		}
		break
	}
	s.i = len(s.b)
	return false
}

func (s *nfScanner) array(depth int) bool {
	s.i++ // [
	s.skipSpace()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return false
	}
	for n := 0; s.i < len(s.b); n++ {
		s.path = append(s.path, "["+strconv.Itoa(n)+"]")
		if s.value(depth + 1) {
			return true
		}
		s.path = s.path[:len(s.path)-1]
		s.skipSpace()
		if s.i >= len(s.b) {
			break
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			continue
		case ']':
			s.i++
			return false
		}
		break
	}
	s.i = len(s.b)
	return false
}

// str scans a string at s.i and returns its decoded value.
func (s *nfScanner) str() (string, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return "", false
	}
	start := s.i
	for j := s.i + 1; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			j++
		case '"':
			var v string
			if json.Unmarshal(s.b[start:j+1], &v) != nil {
				return "", false
			}
			s.i = j + 1
			return v, true
		}
	}
	return "", false
}

// number skips a number's characters; encoding/json judges its syntax.
func (s *nfScanner) number() {
	for s.i < len(s.b) && strings.IndexByte("+-0123456789.eE", s.b[s.i]) >= 0 {
		s.i++
	}
}

// formatPath renders a path of keys and "[i]" indexes as "a.b[2].c".
func formatPath(path []string) string {
	var b strings.Builder
	for i, p := range path {
		if i > 0 && !strings.HasPrefix(p, "[") {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

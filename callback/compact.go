package callback

import (
	"math"
	"slices"
	"strconv"
)

// appendCompact appends the compact JSON encoding of v exactly as
// encoding/json (HTML escaping off) gives it, without reflection, for the
// values rows are made of: nil, booleans, strings of printable ASCII,
// finite floats, Go integers, and maps with string keys and slices of
// these. It reports false, with b as it was, for anything else; the caller
// then uses encoding/json. keys is scratch space for sorting map keys,
// returned for reuse.
func appendCompact(b []byte, v any, keys []string) ([]byte, []string, bool) {
	n := len(b)
	b, keys, ok := appendCompactValue(b, v, keys)
	if !ok {
		return b[:n], keys, false
	}
	return b, keys, true
}

func appendCompactValue(b []byte, v any, keys []string) ([]byte, []string, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), keys, true
	case bool:
		return strconv.AppendBool(b, x), keys, true
	case string:
		b, ok := appendSimpleString(b, x)
		return b, keys, ok
	case float64:
		b, ok := appendJSONFloat(b, x, 64)
		return b, keys, ok
	case float32:
		b, ok := appendJSONFloat(b, float64(x), 32)
		return b, keys, ok
	case int:
		return strconv.AppendInt(b, int64(x), 10), keys, true
	case int64:
		return strconv.AppendInt(b, x, 10), keys, true
	case int32:
		return strconv.AppendInt(b, int64(x), 10), keys, true
	case uint64:
		return strconv.AppendUint(b, x, 10), keys, true
	case map[string]any:
		start := len(keys)
		for k := range x {
			keys = append(keys, k)
		}
		own := keys[start:]
		slices.Sort(own)
		b = append(b, '{')
		for i := range own {
			k := keys[start+i] // keys may grow (and move) below
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendSimpleString(b, k); !ok {
				return b, keys[:start], false
			}
			b = append(b, ':')
			if b, keys, ok = appendCompactValue(b, x[k], keys); !ok {
				return b, keys[:start], false
			}
		}
		return append(b, '}'), keys[:start], true
	case []any:
		if x == nil {
			return append(b, "null"...), keys, true
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, keys, ok = appendCompactValue(b, e, keys); !ok {
				return b, keys, false
			}
		}
		return append(b, ']'), keys, true
	}
	return b, keys, false
}

// appendSimpleString appends s quoted if it is printable ASCII (quotes and
// backslashes escaped); it reports false for anything else, whose escaping
// is left to encoding/json.
func appendSimpleString(b []byte, s string) ([]byte, bool) {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e {
			return b, false
		}
		if c == '"' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, c)
	}
	return append(b, '"'), true
}

// appendJSONFloat appends a finite f the way encoding/json does; it
// reports false for a non-finite one (JSON has none).
func appendJSONFloat(b []byte, f float64, bits int) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// e-09 becomes e-9, as encoding/json writes it
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

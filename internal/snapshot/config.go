package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/hone-tune/hone"
)

// Config is a configuration (a map of JSON-like values) that survives a
// snapshot with its Go types: an int stays an int and a float64 a
// float64, where plain JSON would make both float64 (a float64 is written
// with a decimal point or an exponent, an int without). Values may be
// nil, bool, string, int, int64, float64, and lists and maps of them;
// another type, or a float that is NaN or infinite, is an error.
type Config map[string]any

// MarshalJSON implements json.Marshaler.
func (c Config) MarshalJSON() ([]byte, error) {
	if c == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	if err := writeValue(&b, map[string]any(c)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (c *Config) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*c = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	out, err := typed(v)
	if err != nil {
		return err
	}
	*c = Config(out.(map[string]any))
	return nil
}

func writeValue(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil, bool, string:
		enc, err := json.Marshal(x)
		if err != nil {
			return err
		}
		b.Write(enc)
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("configuration value %v: only finite numbers can be saved", x)
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		b.WriteString(s)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeValue(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case Config:
		return writeValue(b, map[string]any(x))
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			enc, _ := json.Marshal(k)
			b.Write(enc)
			b.WriteByte(':')
			if err := writeValue(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case hone.Config:
		return writeValue(b, map[string]any(x))
	default:
		return fmt.Errorf("configuration value %v: a %T cannot be saved", v, v)
	}
	return nil
}

// typed replaces the json.Numbers of v by ints (no decimal point or
// exponent) and float64s.
func typed(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			i, err := strconv.Atoi(s)
			if err != nil {
				return nil, fmt.Errorf("configuration value %s: %w", s, err)
			}
			return i, nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("configuration value %s: %w", s, err)
		}
		return f, nil
	case []any:
		for i, e := range x {
			t, err := typed(e)
			if err != nil {
				return nil, err
			}
			x[i] = t
		}
	case map[string]any:
		for k, e := range x {
			t, err := typed(e)
			if err != nil {
				return nil, err
			}
			x[k] = t
		}
	}
	return v, nil
}

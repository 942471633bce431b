package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// YAML short tags of the scalars a spec uses.
const (
	tagStr   = "!!str"
	tagInt   = "!!int"
	tagFloat = "!!float"
	tagBool  = "!!bool"
	tagNull  = "!!null"
)

// maxDepth bounds the nesting of values decoded generically (points,
// search space lines).
const maxDepth = 100

// maxNodes bounds the values a document may expand to through aliases.
const maxNodes = 100000

// spend counts one visited value against maxNodes and reports whether the
// document is still within it; the first time it is not, that is an error.
func (c *collector) spend(n *yaml.Node, path string) bool {
	c.visited++
	if c.visited == maxNodes+1 {
		c.nodeErrorf(n, path, "the document is too large: more than %d values after expanding aliases", maxNodes)
	}
	return c.visited <= maxNodes
}

// deref follows aliases to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// isNull reports whether n is absent or an explicit null (`key:` or
// `key: ~`); such values mean "use the default".
func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == tagNull)
}

// describe renders a value for a "got ..." clause.
func describe(n *yaml.Node) string {
	n = deref(n)
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		v := n.Value
		if len(v) > 60 {
			v = v[:57] + "..."
		}
		switch n.ShortTag() {
		case tagStr:
			return strconv.Quote(v)
		case tagNull:
			return "null"
		}
		return v
	}
	return "an unsupported YAML value"
}

// pair is one entry of a mapping node.
type pair struct {
	key     string
	keyNode *yaml.Node
	valNode *yaml.Node
	path    string
}

// pairs returns the entries of the mapping n at path, recording each key's
// line. A non-mapping n, a non-scalar key, a merge key or a duplicate key is
// an error; ok is false when n is not a mapping at all.
func (c *collector) pairs(n *yaml.Node, path string) (out []pair, ok bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		c.nodeErrorf(n, path, "want a mapping, got %s", describe(n))
		return nil, false
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := deref(n.Content[i]), n.Content[i+1]
		if kn == nil || kn.Kind != yaml.ScalarNode {
			c.nodeErrorf(n.Content[i], path, "mapping keys must be plain strings, got %s", describe(kn))
			continue
		}
		if kn.ShortTag() == "!!merge" {
			c.nodeErrorf(kn, path, "merge keys (<<) are not supported")
			continue
		}
		p := join(path, kn.Value)
		if seen[kn.Value] {
			c.nodeErrorf(kn, p, "duplicate key")
			continue
		}
		seen[kn.Value] = true
		if c.lines != nil {
			c.lines[p] = posOf(kn)
		}
		out = append(out, pair{key: kn.Value, keyNode: kn, valNode: vn, path: p})
	}
	return out, true
}

// fields walks the mapping n at path: keys not in allowed are errors, null
// values are skipped (they mean "default"), and fn is called for the rest
// in document order.
func (c *collector) fields(n *yaml.Node, path string, allowed []string, fn func(p pair)) {
	ps, ok := c.pairs(n, path)
	if !ok {
		return
	}
	for _, p := range ps {
		if !contains(allowed, p.key) {
			c.notAllowed(p.keyNode, p.path, allowed, "%s", unknownKeyAt(p.key, path, "", allowed))
			continue
		}
		if isNull(p.valNode) {
			continue
		}
		fn(p)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// scalar returns n dereferenced if it is a scalar with one of the tags.
func scalar(n *yaml.Node, tags ...string) (*yaml.Node, bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return n, false
	}
	return n, contains(tags, n.ShortTag())
}

// str decodes a string.
func (c *collector) str(n *yaml.Node, path string) (string, bool) {
	s, ok := scalar(n, tagStr)
	if !ok {
		c.nodeErrorf(n, path, "want a string, got %s", describe(n))
		return "", false
	}
	return s.Value, true
}

// text decodes any scalar as its text: a string, a number or a boolean as
// written. It is for values that end up as strings anyway (argv, env).
func (c *collector) text(n *yaml.Node, path string) (string, bool) {
	s, ok := scalar(n, tagStr, tagInt, tagFloat, tagBool)
	if !ok {
		c.nodeErrorf(n, path, "want a string, got %s", describe(n))
		return "", false
	}
	return s.Value, true
}

// integer decodes an int; a float with an integral value (1e3) counts.
func (c *collector) integer(n *yaml.Node, path string) (int, bool) {
	s, ok := scalar(n, tagInt, tagFloat)
	if ok {
		if s.ShortTag() == tagInt {
			var i int64
			if err := s.Decode(&i); err == nil && int64(int(i)) == i {
				return int(i), true
			}
		} else {
			var f float64
			if err := s.Decode(&f); err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
				return int(f), true
			}
		}
	}
	c.nodeErrorf(n, path, "want an integer, got %s", describe(n))
	return 0, false
}

// seed decodes a non-negative integer of up to 64 bits.
func (c *collector) seed(n *yaml.Node, path string) (uint64, bool) {
	if s, ok := scalar(n, tagInt); ok {
		var u uint64
		if err := s.Decode(&u); err == nil {
			return u, true
		}
	}
	c.nodeErrorf(n, path, "want an integer in 0..18446744073709551615, got %s", describe(n))
	return 0, false
}

// number decodes a finite number.
func (c *collector) number(n *yaml.Node, path string) (float64, bool) {
	if s, ok := scalar(n, tagInt, tagFloat); ok {
		var f float64
		if err := s.Decode(&f); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f, true
		}
		c.nodeErrorf(n, path, "want a finite number, got %s", describe(n))
		return 0, false
	}
	c.nodeErrorf(n, path, "want a number, got %s", describe(n))
	return 0, false
}

// boolean decodes true or false.
func (c *collector) boolean(n *yaml.Node, path string) (bool, bool) {
	if s, ok := scalar(n, tagBool); ok {
		var b bool
		if err := s.Decode(&b); err == nil {
			return b, true
		}
	}
	c.nodeErrorf(n, path, "want true or false, got %s", describe(n))
	return false, false
}

// duration decodes a Go duration string ("10s", "1m30s") or a number of
// seconds.
func (c *collector) duration(n *yaml.Node, path string) (time.Duration, bool) {
	if s, ok := scalar(n, tagStr); ok {
		d, err := time.ParseDuration(strings.TrimSpace(s.Value))
		if err == nil {
			return d, true
		}
	} else if s, ok := scalar(n, tagInt, tagFloat); ok {
		var f float64
		if err := s.Decode(&f); err == nil && !math.IsNaN(f) && math.Abs(f) < math.MaxInt64/float64(time.Second) {
			return time.Duration(f * float64(time.Second)), true
		}
	}
	c.nodeErrorf(n, path, "want a duration such as \"10s\" or \"1m30s\", or a number of seconds, got %s", describe(n))
	return 0, false
}

// size decodes a byte count: a number of bytes or a string such as
// "2GiB", "512 MB", "1.5G".
func (c *collector) size(n *yaml.Node, path string) (int64, bool) {
	if s, ok := scalar(n, tagInt, tagFloat); ok {
		var f float64
		if err := s.Decode(&f); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<62 {
			return int64(f), true
		}
	} else if s, ok := scalar(n, tagStr); ok {
		if b, err := ParseSize(s.Value); err == nil {
			return b, true
		}
	}
	c.nodeErrorf(n, path, "want a size such as \"2GiB\" or \"512MB\", or a whole number of bytes, got %s", describe(n))
	return 0, false
}

// argv decodes a list of strings (numbers and booleans count as their text).
func (c *collector) argv(n *yaml.Node, path string) ([]string, bool) {
	d := deref(n)
	if d == nil || d.Kind != yaml.SequenceNode {
		if s, ok := scalar(n, tagStr); ok {
			c.nodeErrorf(n, path, "want a list of strings (the program and its arguments), got the string %s; write it as a list, e.g. [python3, train.py], or use [sh, -c, %s] for a shell command",
				describe(s), describe(s))
			return nil, false
		}
		c.nodeErrorf(n, path, "want a list of strings, got %s", describe(n))
		return nil, false
	}
	out := make([]string, 0, len(d.Content))
	ok := true
	for i, e := range d.Content {
		p := index(path, i)
		c.lines[p] = posOf(e)
		s, good := c.text(e, p)
		ok = ok && good
		out = append(out, s)
	}
	return out, ok
}

// value decodes any node to a JSON-like value (map[string]any, []any,
// string, int, float64, bool, nil), recording the lines of nested keys.
// YAML timestamps are kept as the text they were written as.
func (c *collector) value(n *yaml.Node, path string, depth int) (any, bool) {
	if depth > maxDepth {
		c.nodeErrorf(n, path, "nested more than %d levels deep", maxDepth)
		return nil, false
	}
	if !c.spend(n, path) {
		return nil, false
	}
	n = deref(n)
	if n == nil {
		return nil, true
	}
	switch n.Kind {
	case yaml.MappingNode:
		ps, ok := c.pairs(n, path)
		out := make(map[string]any, len(ps))
		for _, p := range ps {
			v, good := c.value(p.valNode, p.path, depth+1)
			ok = ok && good
			out[p.key] = v
		}
		return out, ok
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		ok := true
		for i, e := range n.Content {
			p := index(path, i)
			c.lines[p] = posOf(e)
			v, good := c.value(e, p, depth+1)
			ok = ok && good
			out = append(out, v)
		}
		return out, ok
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case tagNull:
			return nil, true
		case tagStr, "!!timestamp", "!!binary":
			return n.Value, true
		case tagBool:
			var b bool
			if err := n.Decode(&b); err == nil {
				return b, true
			}
		case tagInt:
			var i int64
			if err := n.Decode(&i); err == nil {
				if int64(int(i)) == i {
					return int(i), true
				}
				return float64(i), true
			}
			var u uint64
			if err := n.Decode(&u); err == nil {
				return float64(u), true
			}
		case tagFloat:
			var f float64
			if err := n.Decode(&f); err == nil {
				return f, true
			}
		}
	}
	c.nodeErrorf(n, path, "unsupported value %s", describe(n))
	return nil, false
}

// recordLines records the line of every key and list element under n, so
// errors about a decoded value (a search space) can point into it.
func (c *collector) recordLines(n *yaml.Node, path string, depth int) {
	if depth > maxDepth || !c.spend(n, path) {
		return
	}
	n = deref(n)
	if n == nil {
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn := deref(n.Content[i])
			if kn == nil || kn.Kind != yaml.ScalarNode {
				continue
			}
			p := join(path, kn.Value)
			if _, dup := c.lines[p]; !dup {
				c.lines[p] = posOf(kn)
			}
			c.recordLines(n.Content[i+1], p, depth+1)
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			p := index(path, i)
			c.lines[p] = posOf(e)
			c.recordLines(e, p, depth+1)
		}
	}
}

// ParseSize parses a byte count: a whole number of bytes ("1048576"), or a
// number with a unit: B, kB/KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB,
// TiB (powers of 1024), or K, M, G, T (taken as KiB, MiB, GiB, TiB). Units
// are case-insensitive and may follow a space; fractions are allowed
// ("1.5GiB") and rounded down to whole bytes.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	f, err := strconv.ParseFloat(num, 64)
	if num == "" || err != nil {
		return 0, fmt.Errorf("size %q: want a number followed by an optional unit such as GiB", s)
	}
	mult := map[string]float64{
		"": 1, "b": 1,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
		"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("size %q: unknown unit %q; allowed: B, kB, MB, GB, TB, KiB, MiB, GiB, TiB", s, t[i:])
	}
	b := math.Floor(f * mult)
	if b >= 1<<62 {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	if unit == "" || unit == "b" {
		if f != math.Trunc(f) {
			return 0, fmt.Errorf("size %q: a number of bytes must be whole", s)
		}
	}
	return int64(b), nil
}

package space

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hone-tune/hone/internal/textdist"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// kindNames maps the keys a space file may use to introduce a domain to the
// domain kinds. "grid_search" is Ray Tune's spelling of "grid".
var kindNames = map[string]Kind{
	"uniform": KindUniform, "quniform": KindQUniform,
	"loguniform": KindLogUniform, "qloguniform": KindQLogUniform,
	"randint": KindRandInt, "qrandint": KindQRandInt,
	"lograndint": KindLogRandInt, "qlograndint": KindQLogRandInt,
	"choice": KindChoice, "normal": KindNormal, "qnormal": KindQNormal,
	"grid": KindGrid, "grid_search": KindGrid,
}

// IsDomainName reports whether a one-key map with key k is a domain in a
// space file ({uniform: [0, 1]}, {const: V}, ...) rather than a sub-space.
func IsDomainName(k string) bool {
	_, ok := kindNames[k]
	return ok || k == string(KindConst)
}

// allowedKinds is the list of domain names error messages show.
var allowedKinds = func() string {
	names := make([]string, len(kindOrder))
	for i, k := range kindOrder {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}()

// maxNodes bounds the number of values a YAML document may expand to through
// aliases.
const maxNodes = 100000

// maxDepth bounds the nesting of maps and lists in a decoded document.
const maxDepth = 100

func tooDeep(path []string) error {
	return errAt(path[:maxDepth], "nested more than %d levels deep", maxDepth)
}

// Decode builds a space from a generic tree such as encoding/json or
// gopkg.in/yaml.v3 produce when decoding into map[string]any, and validates
// it. The rules:
//
//   - A map with exactly one key that names a domain kind is that domain;
//     the value is its arguments: {loguniform: [1e-4, 1e-1]},
//     {choice: [1, 2, 3]}, {grid: [16, 32]}, {normal: [0, 1]} (see the
//     package documentation for every kind). "grid_search" is accepted for
//     "grid".
//   - {const: V} is the constant V, taken literally: the escape for a
//     constant map whose only key is a domain name.
//   - Any other map is a sub-space and is decoded recursively.
//   - A list is decoded element by element: [{choice: [16, 32]}, 3] is a
//     list whose first element is sampled. A list without domains is a
//     constant.
//   - Everything else (scalars) is a constant. Choice and grid values are
//     literals, maps and lists included.
//
// Integers (including integral json.Numbers) stay int, other numbers become
// float64. Domain values already in the tree are kept. Errors name the full
// key path, e.g. `space: lr.loguniform: want [low, high] with 0 < low <
// high, got [0, 1]`; a one-key map whose key looks like a misspelt domain
// name and whose value is a list is an error too (`space: lr: unknown
// domain "logunifrom" (did you mean "loguniform"?); allowed: ...`).
func Decode(m map[string]any) (Space, error) {
	n, err := normalize(m, nil)
	if err != nil {
		return nil, err
	}
	s, err := decodeMap(n.(map[string]any), nil)
	if err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// ParseYAML decodes a YAML document whose top level is a mapping (see
// Decode). An empty document is an empty space. YAML timestamps are kept as
// the strings they were written as; merge keys (<<) are not supported.
func ParseYAML(data []byte) (Space, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		return nil, &Error{Op: "parse yaml", Err: err}
	}
	return decodeNode(&n)
}

// ParseJSON decodes a JSON object (see Decode). "null" is an empty space.
func ParseJSON(data []byte) (Space, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &Error{Op: "parse json", Err: err}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &Error{Op: "parse json", Err: errors.New("unexpected data after the top-level value")}
	}
	return decodeTop(v)
}

// UnmarshalYAML implements yaml.Unmarshaler, so a spec struct can hold a
// Space field: the node is decoded as ParseYAML decodes a document.
func (s *Space) UnmarshalYAML(n *yaml.Node) error {
	sp, err := decodeNode(n)
	if err != nil {
		return err
	}
	*s = sp
	return nil
}

// UnmarshalJSON implements json.Unmarshaler, decoding as ParseJSON does.
func (s *Space) UnmarshalJSON(data []byte) error {
	sp, err := ParseJSON(data)
	if err != nil {
		return err
	}
	*s = sp
	return nil
}

func decodeNode(n *yaml.Node) (Space, error) {
	budget := maxNodes
	v, err := nodeValue(n, nil, &budget)
	if err != nil {
		return nil, err
	}
	return decodeTop(v)
}

func decodeTop(v any) (Space, error) {
	if v == nil {
		return Space{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errOf("want a mapping of parameter names to domains, got %s", formatValue(v))
	}
	return Decode(m)
}

// nodeValue converts a YAML node to a JSON-like value.
func nodeValue(n *yaml.Node, path []string, budget *int) (any, error) {
	if len(path) > maxDepth {
		return nil, tooDeep(path)
	}
	*budget--
	if *budget < 0 {
		return nil, errOf("document too large: more than %d values after expanding aliases", maxNodes)
	}
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return nodeValue(n.Content[0], path, budget)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, errAt(path, "unresolved alias")
		}
		return nodeValue(n.Alias, path, budget)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			v, err := nodeValue(c, append(slices.Clip(path), strconv.Itoa(i)), budget)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn, vn := n.Content[i], n.Content[i+1]
			for kn.Kind == yaml.AliasNode && kn.Alias != nil {
				kn = kn.Alias
			}
			if kn.Kind != yaml.ScalarNode {
				return nil, errAt(path, "mapping keys must be scalars")
			}
			if kn.Tag == "!!merge" {
				return nil, errAt(path, "merge keys (<<) are not supported")
			}
			k := kn.Value
			if _, dup := out[k]; dup {
				return nil, errAt(path, "duplicate key %q", k)
			}
			v, err := nodeValue(vn, append(slices.Clip(path), k), budget)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, errAt(path, "%w", err)
		}
		switch x := v.(type) {
		case time.Time:
			return n.Value, nil
		case uint64:
			return float64(x), nil
		case int64:
			return normInt(x), nil
		}
		return v, nil
	}
	return nil, errAt(path, "unsupported YAML node")
}

func normInt(x int64) any {
	if int64(int(x)) == x {
		return int(x)
	}
	return float64(x)
}

func decodeMap(m map[string]any, path []string) (Space, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	s := make(Space, len(m))
	for _, k := range keys {
		v, err := decodeValue(m[k], append(slices.Clip(path), k))
		if err != nil {
			return nil, err
		}
		s[k] = v
	}
	return s, nil
}

// decodeValue decodes a normalized value. A list whose elements hold
// domains becomes a list of decoded elements; other lists stay as they are.
func decodeValue(v any, path []string) (any, error) {
	if list, ok := v.([]any); ok {
		out := make([]any, len(list))
		for i, e := range list {
			d, err := decodeValue(e, append(slices.Clip(path), strconv.Itoa(i)))
			if err != nil {
				return nil, err
			}
			out[i] = d
		}
		if hasDomain(out, 0) {
			return out, nil
		}
		return v, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return v, nil
	}
	if len(m) == 1 {
		for k, arg := range m {
			if kind, ok := kindNames[k]; ok {
				return decodeDomain(kind, k, arg, path)
			}
			if k == string(KindConst) {
				return Const(arg), nil
			}
			if _, isList := arg.([]any); isList {
				if sug := suggest(k); sug != "" {
					return nil, &Error{Path: pathString(path), Err: fmt.Errorf("unknown domain %q (did you mean %q?); allowed: %s",
						k, sug, allowedKinds)}
				}
			}
		}
	}
	return decodeMap(m, path)
}

// normalize turns a generic value into the JSON-like vocabulary: maps with
// string keys become map[string]any, slices []any, integers int (float64
// when they do not fit), other numbers float64.
func normalize(v any, path []string) (any, error) {
	if len(path) > maxDepth {
		return nil, tooDeep(path)
	}
	switch x := v.(type) {
	case nil, bool, string, float64, int, Domain:
		return v, nil
	case *Domain:
		if x == nil {
			return nil, nil
		}
		return *x, nil
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			if i == 0 && strings.HasPrefix(string(x), "-") {
				return math.Copysign(0, -1), nil // -0 is the float it marshals from
			}
			return normInt(i), nil
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return nil, errAt(path, "number %s out of range", string(x))
		}
		return f, nil
	case map[string]any, Space:
		m, _ := asMap(x)
		out := make(map[string]any, len(m))
		for k, e := range m {
			n, err := normalize(e, append(slices.Clip(path), k))
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			n, err := normalize(e, append(slices.Clip(path), strconv.Itoa(i)))
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return normInt(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if u := rv.Uint(); u <= math.MaxInt64 {
			return normInt(int64(u)), nil
		}
		return float64(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return rv.Float(), nil
	case reflect.String:
		return rv.String(), nil
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return []any(nil), nil
		}
		out := make([]any, rv.Len())
		for i := range out {
			n, err := normalize(rv.Index(i).Interface(), append(slices.Clip(path), strconv.Itoa(i)))
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return nil, errAt(path, "map keys must be strings, got %s", rv.Type().Key())
		}
		out := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			k := it.Key().String()
			n, err := normalize(it.Value().Interface(), append(slices.Clip(path), k))
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	}
	// Other values (structs, pointers, ...) are opaque constants.
	return v, nil
}

// decodeDomain builds the domain of the given kind from its arguments.
func decodeDomain(kind Kind, key string, arg any, path []string) (Domain, error) {
	fail := func(arity int) (Domain, error) {
		return Domain{}, errIn(path, key, "want %s, got %s", form(kind, arity), formatValue(arg))
	}
	if kind == KindChoice || kind == KindGrid {
		vals, ok := arg.([]any)
		if !ok || len(vals) == 0 {
			return fail(0)
		}
		if kind == KindChoice {
			return Choice(vals...), nil
		}
		return GridSearch(vals...), nil
	}
	list, ok := arg.([]any)
	if !ok {
		return fail(0)
	}
	nums := make([]float64, len(list))
	for i, e := range list {
		f, ok := number(e)
		if !ok {
			return fail(len(list))
		}
		nums[i] = f
	}
	var d Domain
	switch {
	case kind == KindLogUniform && len(nums) == 2:
		d = LogUniform(nums[0], nums[1])
	case kind == KindLogUniform && len(nums) == 3:
		if nums[2] == 0 { // 0 would read as "no base"
			return fail(3)
		}
		d = LogUniformBase(nums[0], nums[1], nums[2])
	case kind == KindLogUniform:
		return fail(0)
	case arityOf(kind) != len(nums):
		return fail(0)
	default:
		d = Domain{kind: kind, lo: nums[0], hi: nums[1]}
		if len(nums) == 3 {
			d.q = nums[2]
		}
		if kind == KindNormal || kind == KindQNormal {
			d = Domain{kind: kind, mean: nums[0], sd: nums[1], q: d.q}
		}
	}
	if !d.valid() {
		return fail(len(nums))
	}
	return d, nil
}

// arityOf is the number of numeric arguments of a kind other than
// loguniform, choice and grid.
func arityOf(k Kind) int {
	switch k {
	case KindQUniform, KindQLogUniform, KindQRandInt, KindQLogRandInt, KindQNormal:
		return 3
	}
	return 2
}

// suggest returns the domain name k is probably a misspelling of, or "".
// Only close matches count, so that ordinary one-key sub-spaces are not
// mistaken for domains.
func suggest(k string) string {
	lk := strings.ToLower(k)
	best, bestD := "", 3
	for _, kind := range kindOrder {
		name := string(kind)
		if kind == KindConst {
			continue
		}
		// Short names only match up to case: "grad" is not a typo of "grid".
		limit := 2
		switch {
		case len(name) <= 4:
			limit = 0
		case len(name) <= 7:
			limit = 1
		}
		if d := textdist.Distance(lk, name); d <= limit && d < bestD {
			best, bestD = name, d
		}
	}
	return best
}

// maxFormat bounds the length of a value rendered in an error message.
const maxFormat = 200

// formatValue renders a JSON-like value compactly for messages, in flow
// YAML style: [0, 1], {a: 1}, "text".
func formatValue(v any) string {
	var b strings.Builder
	writeValue(&b, v)
	s := b.String()
	if len(s) > maxFormat {
		s = s[:maxFormat] + "..."
	}
	return s
}

func writeValue(b *strings.Builder, v any) {
	if b.Len() > maxFormat {
		return
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		b.WriteString(strconv.Quote(x))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case float64:
		b.WriteString(formatFloat(x))
	case float32:
		b.WriteString(formatFloat(float64(x)))
	case int:
		b.WriteString(strconv.Itoa(x))
	case json.Number:
		b.WriteString(string(x))
	case Domain:
		b.WriteString(x.String())
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeValue(b, e)
		}
		b.WriteByte(']')
	default:
		if m, ok := asMap(v); ok {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(k)
				b.WriteString(": ")
				writeValue(b, m[k])
			}
			b.WriteByte('}')
			return
		}
		fmt.Fprint(b, v)
	}
}

func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// equalValues compares JSON-like values, numbers by value whatever their Go
// type (so 2 equals 2.0, as after a JSON round trip).
func equalValues(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValues(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if x, ok := asMap(a); ok {
		y, ok := asMap(b)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equalValues(xv, yv) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// MarshalJSON implements json.Marshaler: a domain encodes as it is written
// in a space file, e.g. {"loguniform":[0.0001,0.1]}, so a Space marshals to
// JSON that ParseJSON reads back. Func domains cannot be marshalled.
func (d Domain) MarshalJSON() ([]byte, error) {
	v, err := d.MarshalYAML()
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// MarshalYAML implements yaml.Marshaler, encoding the domain as
// MarshalJSON does.
func (d Domain) MarshalYAML() (any, error) {
	if d.kind == KindFunc {
		return nil, errOf("func domains cannot be marshalled")
	}
	if _, known := kindNames[string(d.kind)]; !known && d.kind != KindConst {
		return nil, errOf("unknown domain kind %q", string(d.kind))
	}
	return map[string]any{string(d.kind): d.args()}, nil
}

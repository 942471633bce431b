package spec

import (
	"cmp"
	"fmt"
	"github.com/hone-tune/hone/internal/textdist"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Error is one problem with a spec. Its text names the file, the line, the
// key path and what is wrong, e.g.
//
//	experiment.yaml:12: scheduler.reduction_factor: must be > 1, got 1
//
// Code reads its fields rather than its text: Path is the field, Allowed
// the keys or values the field could have been (for an unknown key, an
// unknown plugin name or a value outside a set), and Err the typed error
// of the package that found the problem, when there is one (a plugin's
// *hone.ParamError, the search space's *space.Error), which errors.Is and
// errors.As reach through Unwrap.
type Error struct {
	File string // the spec file's name as given to Parse or Load; may be ""
	Line int    // 1-based line of the offending key or value; 0 if unknown
	Path string // dotted key path, with [i] for list elements; "" for the whole document
	Msg  string
	// Allowed are the keys or values allowed at Path, sorted, when the
	// problem is one outside them; else nil.
	Allowed []string
	// Err is the error the problem was found as, or nil.
	Err error

	col int // for ordering errors on one line
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Error renders the problem as FILE:LINE: PATH: MSG, leaving out the parts
// that are unknown.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	} else if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return printable(b.String())
}

// printable escapes the control characters and invalid UTF-8 in an
// error's text as Go does in quoted strings (a newline as \n), so that one
// error stays one line whatever keys the spec has.
func printable(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsControl(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Errors is every problem found in a spec, ordered by line. Parse, Load and
// Spec.Validate return all of them at once as an Errors value.
type Errors []*Error

// Error renders one problem per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the problems, so errors.As finds a single *Error too.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// pos is a position in a spec file.
type pos struct{ line, col int }

func posOf(n *yaml.Node) pos { return pos{n.Line, n.Column} }

// collector gathers the errors of one Parse or Validate. lines maps the
// key paths seen while decoding to their positions, so that errors found
// later, on decoded values, still point at the right line.
type collector struct {
	file    string
	lines   map[string]pos
	errs    Errors
	visited int // values decoded, against maxNodes
}

// posOf returns the position of path, or of its nearest recorded ancestor,
// or the zero pos.
func (c *collector) posOf(path string) pos {
	for p := path; ; {
		if l, ok := c.lines[p]; ok {
			return l
		}
		if p == "" {
			return pos{}
		}
		p = parentPath(p)
	}
}

// parentPath strips the last component of a key path: "a.b[2]" → "a.b",
// "a.b" → "a", "a" → "".
func parentPath(p string) string {
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndexByte(p, '['); i >= 0 {
			return p[:i]
		}
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}

// errorf records a problem at path, on the line recorded for it, and
// returns it for its caller to add Allowed or Err.
func (c *collector) errorf(path, format string, args ...any) *Error {
	return c.nodeErrorf(nil, path, format, args...)
}

// nodeErrorf records a problem at path, on n's line (or, without one, on
// the line recorded for path), and returns it.
func (c *collector) nodeErrorf(n *yaml.Node, path, format string, args ...any) *Error {
	var at pos
	if n != nil {
		at = posOf(n)
	}
	if at.line == 0 {
		at = c.posOf(path)
	}
	e := &Error{File: c.file, Line: at.line, col: at.col, Path: path, Msg: fmt.Sprintf(format, args...)}
	c.errs = append(c.errs, e)
	return e
}

// notAllowed records a problem at path, a key or value outside allowed,
// which it names in the Error's Allowed.
func (c *collector) notAllowed(n *yaml.Node, path string, allowed []string, format string, args ...any) *Error {
	e := c.nodeErrorf(n, path, format, args...)
	e.Allowed = sorted(allowed)
	return e
}

// has reports whether an error was recorded at path or under it.
func (c *collector) has(path string) bool {
	for _, e := range c.errs {
		if e.Path == path || strings.HasPrefix(e.Path, path+".") || strings.HasPrefix(e.Path, path+"[") {
			return true
		}
	}
	return false
}

// result returns the errors sorted by line (errors without a line last),
// or nil.
func (c *collector) result() error {
	if len(c.errs) == 0 {
		return nil
	}
	es := slices.Clone(c.errs)
	slices.SortStableFunc(es, func(a, b *Error) int {
		if (a.Line == 0) != (b.Line == 0) {
			if a.Line == 0 {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.col, b.col))
	})
	return es
}

// join renders a key path from a parent path and a key.
func join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// index renders the path of a list element.
func index(parent string, i int) string { return fmt.Sprintf("%s[%d]", parent, i) }

// unknownKey renders the message for a key that is not allowed, with a
// suggestion when one allowed key is close.
func unknownKey(key string, allowed []string) string {
	msg := "unknown key"
	if s := closest(key, allowed); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	if len(allowed) == 0 {
		return msg + "; this section takes no keys"
	}
	return msg + "; allowed keys: " + strings.Join(sorted(allowed), ", ")
}

// unknownName renders the message for an unknown plugin name.
func unknownName(kind, name string, known []string) string {
	msg := fmt.Sprintf("unknown %s %q", kind, name)
	if s := closest(name, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg + "; known: " + strings.Join(sorted(known), ", ")
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// closest returns the candidate nearest to s by edit distance, if it is
// near enough to be a likely misspelling (at most a third of the longer
// string's length, and at most 3 edits); failing that, the only candidate
// that s (of 4 bytes or more) starts, as "grace" starts "grace_period";
// else "". Case is ignored.
func closest(s string, candidates []string) string {
	best, bestD := "", 0
	ls := strings.ToLower(s)
	var prefixOf []string
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := textdist.Distance(ls, lc)
		limit := min(3, max(1, max(len(s), len(c))/3))
		if d <= limit && (best == "" || d < bestD) {
			best, bestD = c, d
		}
		if len(ls) >= 4 && strings.HasPrefix(lc, ls) {
			prefixOf = append(prefixOf, c)
		}
	}
	if best == "" && len(prefixOf) == 1 {
		return prefixOf[0]
	}
	return best
}

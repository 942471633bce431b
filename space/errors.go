package space

import (
	"fmt"
	"strings"
)

// Error is a problem with a search space, or with a configuration or a
// document read as one. Code reads its fields rather than its text:
//
//   - Path is the key path of what it is about: a parameter ("lr",
//     "model.width"), the domain of one ("lr.loguniform"), or "" for the
//     whole space (its top level included);
//   - Op is the conversion that met it ("parse yaml", "parse json",
//     "to unit", "from unit"), or "" when the space itself is at fault;
//   - Err is what is wrong, which errors.Is and errors.As reach through
//     Unwrap.
type Error struct {
	Op   string
	Path string
	Err  error
}

// Error renders "space: [Op: ][Path: ]Err".
func (e *Error) Error() string { return "space: " + e.Text() }

// Text is Error without the package's "space: ", as a spec reports the
// problem under its search_space key.
func (e *Error) Text() string {
	var b strings.Builder
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// errAt is an *Error about the value at path; at the top level (an empty
// path) it is about the whole space, and says "top level".
func errAt(path []string, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	if len(path) == 0 {
		return &Error{Err: fmt.Errorf("top level: %w", err)}
	}
	return &Error{Path: pathString(path), Err: err}
}

// errIn is an *Error about the domain kind of the parameter at path
// ("lr.loguniform").
func errIn(path []string, kind, format string, args ...any) error {
	return &Error{Path: pathString(path) + "." + kind, Err: fmt.Errorf(format, args...)}
}

// errOf is an *Error about the whole space.
func errOf(format string, args ...any) error { return &Error{Err: fmt.Errorf(format, args...)} }

package space_test

import (
	"errors"
	"testing"

	"github.com/hone-tune/hone/space"
)

// TestErrorFields pins what code reads from the space's errors: the
// parameter (Path) and the conversion (Op), with the text unchanged.
func TestErrorFields(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       func() error
		op, path  string
		wantError string
	}{
		{"domain", func() error {
			_, err := space.ParseYAML([]byte("lr: {loguniform: [0, 1]}\nx: {choice: [1]}\n"))
			return err
		}, "", "lr.loguniform", ""},
		{"top level", func() error {
			_, err := space.ParseYAML([]byte("a: 1\na: 2\n"))
			return err
		}, "", "", `space: top level: duplicate key "a"`},
		{"parse", func() error {
			_, err := space.ParseJSON([]byte(`{"a": 1} x`))
			return err
		}, "parse json", "", "space: parse json: unexpected data after the top-level value"},
		{"to unit", func() error {
			sp := space.Space{"lr": space.Uniform(0, 1)}
			_, err := sp.ToUnit(map[string]any{})
			return err
		}, "to unit", "lr", "space: to unit: lr: missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			var se *space.Error
			if !errors.As(err, &se) {
				t.Fatalf("%v (%T) is no *space.Error", err, err)
			}
			if se.Op != tc.op || se.Path != tc.path {
				t.Errorf("Op %q Path %q, want %q %q", se.Op, se.Path, tc.op, tc.path)
			}
			if tc.wantError != "" && err.Error() != tc.wantError {
				t.Errorf("Error() = %q, want %q", err, tc.wantError)
			}
			if "space: "+se.Text() != se.Error() {
				t.Errorf("Text %q does not make Error %q", se.Text(), se.Error())
			}
		})
	}
}

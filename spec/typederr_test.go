package spec

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/space"
)

// specErrorAt returns the *Error of err at path, found with errors.As
// through Errors, or nil.
func specErrorAt(err error, path string) *Error {
	var list Errors
	if !errors.As(err, &list) {
		return nil
	}
	for _, e := range list {
		var se *Error
		if errors.As(e, &se) && se.Path == path {
			return se
		}
	}
	return nil
}

// TestErrorsTyped pins what code reads from a spec's errors without their
// text: errors.As finds the *Error of a wrong key, name or value, which
// names the field (Path) and what it could have been (Allowed); and a
// plugin's *hone.ParamError stays in the chain, naming its parameter.
func TestErrorsTyped(t *testing.T) {
	head := "command: [x]\nsearch_space: {lr: {loguniform: [0.001, 0.1]}}\n"
	for _, tc := range []struct {
		name, yaml, path string
		allowed          []string // nil: any, but some
		param            string   // the *hone.ParamError's, if any
	}{
		{"unknown top-level key", "metric: loss\nschedular: asha\n", "schedular", nil, ""},
		{"unknown plugin key", "metric: loss\nscheduler: {name: median, grace: 3}\n", "scheduler.grace",
			[]string{"grace_period", "hard_stop", "metric", "min_samples_required", "min_time_slice", "mode", "name", "time_attr", "weights"}, ""},
		{"unknown scheduler", "metric: loss\nscheduler: ashaa\n", "scheduler.name", nil, ""},
		{"mode", "metric: loss\nmode: maximise\n", "mode", []string{"max", "min"}, ""},
		{"plugin mode", "metric: loss\nscheduler: {name: asha, mode: up}\n", "scheduler.mode", []string{"max", "min"}, ""},
		{"plugin validation", "metric: loss\nsearcher: dehb\nscheduler: {name: dehb, reduction_factor: 1}\n", "scheduler.reduction_factor", nil, "reduction_factor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse([]byte(head+tc.yaml), "experiment.yaml", t.TempDir())
			if err == nil {
				err = s.Validate()
			}
			se := specErrorAt(err, tc.path)
			if se == nil {
				t.Fatalf("no *spec.Error at %s in %v", tc.path, err)
			}
			if se.Line == 0 || se.File != "experiment.yaml" {
				t.Errorf("%s: file %q line %d", tc.path, se.File, se.Line)
			}
			switch {
			case tc.allowed != nil && !slices.Equal(se.Allowed, tc.allowed):
				t.Errorf("%s: Allowed = %q, want %q", tc.path, se.Allowed, tc.allowed)
			case tc.allowed == nil && tc.param == "" && len(se.Allowed) == 0:
				t.Errorf("%s: no Allowed", tc.path)
			case !slices.IsSorted(se.Allowed):
				t.Errorf("%s: Allowed %q not sorted", tc.path, se.Allowed)
			}
			var pe *hone.ParamError
			if got := errors.As(err, &pe); got != (tc.param != "") || got && pe.Param != tc.param {
				t.Errorf("errors.As(*hone.ParamError) = %v, %+v; want param %q", got, pe, tc.param)
			}
		})
	}
	// The allowed names of a plugin kind are every registered one.
	_, err := Parse([]byte(head+"metric: loss\nscheduler: ashaa\n"), "experiment.yaml", t.TempDir())
	if se := specErrorAt(err, "scheduler.name"); se == nil || !slices.Contains(se.Allowed, "asha") || !slices.Contains(se.Allowed, "fifo") {
		t.Errorf("unknown scheduler: %+v", se)
	}
}

// TestSpaceErrorsTyped: a search space's problem is a *space.Error naming
// the parameter (Path), which the spec's Error wraps; the spec reports it
// at that parameter's line, with the same text as before.
func TestSpaceErrorsTyped(t *testing.T) {
	src := "command: [x]\nmetric: loss\nsearch_space:\n  batch: {choice: [16, 32]}\n  lr: {loguniform: [0, 1]}\n"
	_, err := Parse([]byte(src), "experiment.yaml", t.TempDir())
	se := specErrorAt(err, "search_space.lr.loguniform")
	if se == nil || se.Line != 5 {
		t.Fatalf("no *spec.Error at search_space.lr.loguniform, line 5: %v", err)
	}
	var spe *space.Error
	if !errors.As(se, &spe) || spe.Path != "lr.loguniform" || spe.Op != "" {
		t.Fatalf("errors.As(*space.Error) = %+v", spe)
	}
	if want := "experiment.yaml:5: search_space.lr.loguniform: " + spe.Err.Error(); se.Error() != want {
		t.Errorf("message %q, want %q", se.Error(), want)
	}
	if spe.Error() != "space: lr.loguniform: "+spe.Err.Error() || spe.Text() != "lr.loguniform: "+spe.Err.Error() {
		t.Errorf("space.Error renders %q, Text %q", spe.Error(), spe.Text())
	}
}

// TestPluginBuildErrorsTyped: an error a plugin returns when it is built
// (here the dehb scheduler given another searcher) keeps its type through
// the spec's Error, and its text names the plugin once.
func TestPluginBuildErrorsTyped(t *testing.T) {
	src := "command: [x]\nsearch_space: {lr: {loguniform: [0.001, 0.1]}}\nmetric: loss\nsearcher: random\nscheduler: dehb\n"
	s, err := Parse([]byte(src), "experiment.yaml", t.TempDir())
	if err == nil {
		err = s.Validate()
	}
	se := specErrorAt(err, "scheduler")
	if se == nil {
		t.Fatalf("no *spec.Error at scheduler in %v", err)
	}
	var pe *hone.ParamError
	if !errors.As(se, &pe) || pe.Plugin != "dehb" || pe.Param != "" {
		t.Fatalf("errors.As(*hone.ParamError) = %+v", pe)
	}
	if want := "experiment.yaml:5: scheduler: " + pe.Error(); se.Error() != want || strings.Count(se.Error(), "dehb: ") != 1 {
		t.Errorf("message %q, want %q", se.Error(), want)
	}
}

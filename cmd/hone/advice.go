package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/hone-tune/hone/controller"
	"github.com/hone-tune/hone/internal/textdist"
)

// fieldAdvice returns what to do after an experiment failed because its
// results lack the field its metric or a stop condition names (nil if err
// is no such failure). Resuming cannot fix it: a resume reads the
// experiment's spec, which names the wrong field, and a resume with
// another spec may not change the metric or the stop conditions, on which
// the journal's decisions depend. So the advice is to fix the spec and
// start a new experiment beside this one, with the command to do it.
func fieldAdvice(err error, t *target) error {
	var fe *controller.FieldError
	if !errors.As(err, &fe) {
		return nil
	}
	if slices.Contains(fe.Keys, fe.Field) {
		// The name is right and the value is not a number: the program
		// is what to fix, and a resume then goes on.
		return fmt.Errorf("the trials report %q, but not as a number: make the program report a number, then continue with:\n  hone resume %s",
			fe.Field, shellArg(t.shown))
	}
	key, what := "metric", "metric"
	if fe.Setting == "stop" {
		key, what = "stop."+fe.Field, "stop condition"
	}
	fix := ""
	if near := nearest(fe.Field, fe.Keys); near != "" {
		fix = fmt.Sprintf("Did you mean %s %q? ", what, near)
	}
	specFile := adviceSpec(t.dir)
	return fmt.Errorf("%sA resume reads the experiment's spec and would fail the same way; fix %s in %s and start a new experiment beside this one:\n  %s\n(this one stays in %s; delete it once you no longer need it)",
		fix, key, specFile, newRunCommand(t, specFile), shellArg(t.shown))
}

// newRunCommand returns the command that runs specFile as a new
// experiment beside the one of t, under a name not in use (name-2, ...).
func newRunCommand(t *target, specFile string) string {
	var storage, name string
	if t.exp != nil {
		parent, base := splitURL(t.shown)
		storage, name = parent, base+"-2"
	} else {
		storage, name = filepath.Dir(t.dir), freeName(filepath.Dir(t.dir), filepath.Base(t.dir))
	}
	return fmt.Sprintf("hone run %s --storage %s --name %s", shellArg(specFile), shellArg(storage), shellArg(name))
}

// adviceSpec returns the spec file to fix: the one the experiment in dir
// was started (or last resumed) with, if it is still there, else the
// experiment's own copy.
func adviceSpec(dir string) string {
	if o, ok := loadOrigin(dir); ok && o.SpecFile != "" {
		if _, err := os.Stat(o.SpecFile); err == nil {
			return o.SpecFile
		}
	}
	return filepath.Join(dir, specCopy)
}

// freeName returns name-2, name-3, ...: the first that names no directory
// in parent.
func freeName(parent, name string) string {
	for n := 2; ; n++ {
		cand := name + "-" + strconv.Itoa(n)
		if _, err := os.Stat(filepath.Join(parent, cand)); errors.Is(err, os.ErrNotExist) {
			return cand
		}
	}
}

// nearest returns the key closest to field when it is close enough to be
// a misspelling of it, or "".
func nearest(field string, keys []string) string {
	best, bestD := "", max(len(field)/3, 2)+1
	for _, k := range keys {
		if d := textdist.Distance(field, k); d > 0 && d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

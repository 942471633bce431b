package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hone-tune/hone/internal/fsutil"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/spec"
)

// A resume with another spec makes that spec the experiment's: it becomes
// spec.yaml (and its origin spec_origin.json), and the ones before are
// kept beside it as spec.N.yaml and spec_origin.N.json, numbered from 1 in
// the order they were replaced.

// keptSpec and keptOrigin name the N-th replaced spec and its origin.
func keptSpec(n int) string   { return "spec." + strconv.Itoa(n) + ".yaml" }
func keptOrigin(n int) string { return "spec_origin." + strconv.Itoa(n) + ".json" }

// nextKept returns the number the spec replaced next is kept under: one
// more than the highest kept so far.
func nextKept(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("list the experiment's specs: %w", err)
	}
	n := 0
	for _, e := range entries {
		mid, ok := strings.CutPrefix(e.Name(), "spec.")
		if !ok {
			continue
		}
		if mid, ok = strings.CutSuffix(mid, ".yaml"); !ok {
			continue
		}
		if k, err := strconv.Atoi(mid); err == nil && k > n {
			n = k
		}
	}
	return n + 1, nil
}

// checkResumeSpec compares s, the spec read from path, with the spec of the
// experiment of t. Differences that change decisions are refused, all
// named in one error with the usage exit code; the others are printed as a
// note. An experiment whose own spec is missing cannot be compared: hone
// says so and goes on (replaying the journal still refuses a different
// search space, seed or searcher).
func (a *app) checkResumeSpec(t *target, path string, s *spec.Spec) error {
	dir := t.dir
	stored := filepath.Join(dir, specCopy)
	if _, err := os.Stat(stored); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(a.stderr, "hone: note: %s is missing, so %s cannot be compared with the spec the experiment ran with\n", stored, path)
		return nil
	}
	old, err := loadStoredSpec(dir, "")
	if err != nil {
		// The experiment's own working directory may be gone, which is
		// a reason to resume with another spec; no decision depends on it.
		if data, rerr := os.ReadFile(stored); rerr == nil {
			if o, derr := spec.Decode(data, stored, dir); derr == nil {
				old, err = o, nil
			}
		}
	}
	if err != nil {
		var list spec.Errors
		msg := err.Error()
		if errors.As(err, &list) {
			lines := make([]string, len(list))
			for i, e := range list {
				lines[i] = "  " + e.Error()
			}
			msg = strings.Join(lines, "\n")
		}
		return withCode(exitUsage, fmt.Errorf("cannot compare %s with the experiment's spec %s, which is not valid any more:\n%s\nfix %s, or resume without --spec", path, stored, msg, stored))
	}
	// Where the experiment lives is its directory, whatever either spec
	// says (a stored spec is named after its file, spec.yaml).
	old.Storage, old.Name = s.Storage, s.Name
	// Both specs decide by the experiment's rules.
	old.Rules = storedRules(dir)
	s.Rules = old.Rules
	refused, allowed := spec.Compare(old, s)
	if len(refused) > 0 {
		return withCode(exitUsage, fmt.Errorf("%s changes %s that the experiment's decisions depend on (%s has the spec it ran with):\n  %s\nresuming with it would mix two experiments; change these back, or start a new experiment with it beside this one:\n  %s",
			path, plural(len(refused), "setting"), stored, strings.Join(refused, "\n  "), newRunCommand(t, path)))
	}
	if len(allowed) > 0 {
		fmt.Fprintf(a.stderr, "hone: note: %s changes %s that do not change decisions:\n  %s\n", path, plural(len(allowed), "setting"), strings.Join(allowed, "\n  "))
	}
	return nil
}

// adoptSpec makes data, the spec read from path, the spec of the
// experiment in dir, keeping the one before as spec.N.yaml, and says so.
// Nothing changes if data is already the experiment's spec, from the same
// directory. The function it returns takes the resume's error and returns
// it; if the resume never got to the journal (it failed before it
// started), it puts the spec before back first.
func (a *app) adoptSpec(dir, path string, data []byte) (finish func(error) error, err error) {
	noop := func(err error) error { return err }
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("adopt the spec: %w", err)
	}
	stored := filepath.Join(dir, specCopy)
	prev, err := os.ReadFile(stored)
	had := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("adopt the spec: %w", err)
	}
	prevOrigin, oerr := os.ReadFile(filepath.Join(dir, originFile))
	hadOrigin := oerr == nil
	if had && bytes.Equal(prev, data) {
		var o origin
		if !hadOrigin || json.Unmarshal(prevOrigin, &o) != nil || o.SpecDir == filepath.Dir(abs) {
			return noop, nil
		}
	}
	before := journalState(dir)
	n := 0
	if had {
		if n, err = nextKept(dir); err != nil {
			return nil, fmt.Errorf("adopt the spec: %w", err)
		}
		if err := fsutil.WriteFileAtomic(filepath.Join(dir, keptSpec(n)), prev, 0o644); err != nil {
			return nil, fmt.Errorf("adopt the spec: %w", err)
		}
		if hadOrigin {
			if err := fsutil.WriteFileAtomic(filepath.Join(dir, keptOrigin(n)), prevOrigin, 0o644); err != nil {
				return nil, fmt.Errorf("adopt the spec: %w", err)
			}
		}
	}
	if err := saveSpec(dir, path, data, storedRules(dir)); err != nil {
		return nil, fmt.Errorf("adopt the spec: %w", err)
	}
	if had {
		fmt.Fprintf(a.stderr, "hone: %s is now the experiment's spec (%s), for this resume and every later one; the one before is kept as %s\n",
			path, stored, filepath.Join(dir, keptSpec(n)))
	} else {
		fmt.Fprintf(a.stderr, "hone: %s is now the experiment's spec (%s), for this resume and every later one\n", path, stored)
	}
	done := false
	return func(runErr error) error {
		if done {
			return runErr // already put back (or kept) once
		}
		done = true
		if journalState(dir) != before {
			return runErr // the resume started: the spec is the experiment's
		}
		var rerr error
		if had {
			rerr = errors.Join(
				os.Rename(filepath.Join(dir, keptSpec(n)), stored),
				restoreOrigin(dir, n, hadOrigin))
		} else {
			rerr = errors.Join(os.Remove(stored), os.Remove(filepath.Join(dir, originFile)))
		}
		if rerr != nil {
			fmt.Fprintf(a.stderr, "hone: the resume did not start, and putting the spec before it back failed: %v\n", rerr)
		} else {
			fmt.Fprintf(a.stderr, "hone: the resume did not start; the experiment's spec is the one before it again\n")
		}
		return runErr
	}, nil
}

// restoreOrigin puts the n-th kept origin back, or removes the origin if
// there was none.
func restoreOrigin(dir string, n int, had bool) error {
	if !had {
		return os.Remove(filepath.Join(dir, originFile))
	}
	return os.Rename(filepath.Join(dir, keptOrigin(n)), filepath.Join(dir, originFile))
}

// journalFile is what journalState sees of a journal: any write changes it.
type journalFile struct {
	size int64
	mod  int64 // unix nanoseconds
}

// journalState returns the size and modification time of the journal in
// dir (zero if it cannot be read).
func journalState(dir string) journalFile {
	fi, err := os.Stat(filepath.Join(dir, journal.FileName))
	if err != nil {
		return journalFile{}
	}
	return journalFile{fi.Size(), fi.ModTime().UnixNano()}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/results"
)

// failSpec runs two trials that fail at once when $FAIL is 1 and
// otherwise report once and finish; extra is added to the spec.
func failSpec(fail, extra string) string {
	return "metric: score\nmode: max\nseed: 1\nsearch_space:\n  x: {grid: [1, 2]}\nmax_concurrent_trials: 2\n" +
		"env: {FAIL: \"" + fail + "\"}\n" + extra + `command:
  - sh
  - -c
  - |
    if [ "$FAIL" = 1 ]; then echo "boom" >&2; exit 1; fi
    echo 'HONE_REPORT {"metrics":{"score":1},"done":true}'
`
}

// TestBinaryResumeSpec resumes with another spec through the real binary:
// changes to decisions are refused, all named in one error with exit code
// 2, and nothing changes; harmless changes are noted, and the spec becomes
// the experiment's, so that a later plain hone resume uses it; the spec
// before is kept as spec.1.yaml.
func TestBinaryResumeSpec(t *testing.T) {
	path, dir := writeSpec(t, "respec", failSpec("1", ""))
	t.Cleanup(func() { killTrials(t, dir) })
	if code, _, errOut := runBinary(t, "run", path); code != exitTrialErrors {
		t.Fatalf("run: exit %d, want %d\n%s", code, exitTrialErrors, errOut)
	}
	original, err := os.ReadFile(filepath.Join(dir, specCopy))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) string {
		t.Helper()
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// Decisions may not change: every difference is named at once.
	flipped := strings.NewReplacer("mode: max", "mode: min", "seed: 1", "seed: 2", "x: {grid: [1, 2]}", "x: {grid: [1, 2]}\nscheduler: {name: asha, grace_period: 2}\nnum_samples: 2").
		Replace(failSpec("0", ""))
	code, _, errOut := runBinary(t, "resume", dir, "--spec", write("flipped.yaml", flipped))
	if code != exitUsage {
		t.Errorf("resume with a flipped mode: exit %d, want %d\n%s", code, exitUsage, errOut)
	}
	for _, key := range []string{"mode", "seed", "scheduler", "num_samples"} {
		if !strings.Contains(errOut, "\n  "+key) {
			t.Errorf("the refusal does not name %s:\n%s", key, errOut)
		}
	}
	if strings.Count(errOut, "hone: ") != 1 || strings.Contains(errOut, "hone: resuming") {
		t.Errorf("want one error and no resume:\n%s", errOut)
	}
	assertSpecs(t, dir, original, nil)

	// A spec whose plan cannot be built is not adopted: the resume never
	// started.
	tooBig := failSpec("0", "resources: {cpu: 1000000}\n")
	if code, _, errOut := runBinary(t, "resume", dir, "--spec", write("big.yaml", tooBig)); code != exitUsage {
		t.Errorf("resume with 1000000 CPUs a trial: exit %d, want %d\n%s", code, exitUsage, errOut)
	}
	assertSpecs(t, dir, original, nil)

	// Harmless changes are noted and the spec is adopted.
	fixedPath := write("fixed.yaml", failSpec("0", "max_concurrent_trials: 1\n"))
	fixed, _ := os.ReadFile(fixedPath)
	fixed = bytes.Replace(fixed, []byte("max_concurrent_trials: 2\n"), nil, 1)
	if err := os.WriteFile(fixedPath, fixed, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runBinary(t, "resume", dir, "--spec", fixedPath)
	if code != exitTrialErrors { // the ERROR trials stay ERROR without --resume-errored
		t.Errorf("resume --spec fixed.yaml: exit %d, want %d\n%s", code, exitTrialErrors, errOut)
	}
	for _, want := range []string{"note: " + fixedPath + " changes ", "settings that do not change decisions", "  env.FAIL:", "  max_concurrent_trials:",
		fixedPath + " is now the experiment's spec", filepath.Join(dir, "spec.1.yaml")} {
		if !strings.Contains(errOut, want) {
			t.Errorf("resume --spec fixed.yaml does not say %q:\n%s", want, errOut)
		}
	}
	assertSpecs(t, dir, fixed, [][]byte{original})

	// A plain resume uses the adopted spec: the trials no longer fail.
	code, _, errOut = runBinary(t, "resume", dir, "--resume-errored")
	if code != exitOK {
		t.Fatalf("plain resume --resume-errored: exit %d, want 0 (with the adopted spec)\n%s", code, errOut)
	}
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range e.Trials {
		if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s: %s", tr.ID, tr.Status)
		}
	}
	assertSpecs(t, dir, fixed, [][]byte{original})

	// The same spec again changes nothing; a third one is kept as
	// spec.2.yaml.
	if code, _, errOut := runBinary(t, "resume", dir, "--spec", fixedPath); code != exitOK || strings.Contains(errOut, "now the experiment's spec") {
		t.Errorf("resume with the experiment's own spec: exit %d\n%s", code, errOut)
	}
	assertSpecs(t, dir, fixed, [][]byte{original})
	third := append(bytes.Clone(fixed), []byte("stop_grace: 20s\n")...)
	if code, _, errOut := runBinary(t, "resume", dir, "--spec", write("third.yaml", string(third))); code != exitOK {
		t.Errorf("resume with a third spec: exit %d\n%s", code, errOut)
	}
	assertSpecs(t, dir, third, [][]byte{original, fixed})
}

// assertSpecs checks the experiment's spec.yaml and its kept specs
// spec.1.yaml, spec.2.yaml, ...
func assertSpecs(t *testing.T, dir string, current []byte, kept [][]byte) {
	t.Helper()
	if got, err := os.ReadFile(filepath.Join(dir, specCopy)); err != nil || !bytes.Equal(got, current) {
		t.Errorf("spec.yaml is\n%s(%v), want\n%s", got, err, current)
	}
	for i := 0; ; i++ {
		got, err := os.ReadFile(filepath.Join(dir, keptSpec(i+1)))
		if i >= len(kept) {
			if err == nil {
				t.Errorf("%s exists, want %d kept specs", keptSpec(i+1), len(kept))
			}
			return
		}
		if err != nil || !bytes.Equal(got, kept[i]) {
			t.Errorf("%s is\n%s(%v), want\n%s", keptSpec(i+1), got, err, kept[i])
		}
		if _, err := os.Stat(filepath.Join(dir, keptOrigin(i+1))); err != nil {
			t.Error(err)
		}
	}
}

// TestAdoptSpecRollback checks that a resume that never reached the
// journal puts the spec before it back, and that one that did keeps the
// new spec.
func TestAdoptSpecRollback(t *testing.T) {
	c := cli{t: t, exec: goTrainer(nil)}
	path, dir := writeSpec(t, "adopt", gridSpec)
	if code, _, errOut := c.run("run", path); code != exitOK {
		t.Fatalf("run: %d %s", code, errOut)
	}
	original, _ := os.ReadFile(filepath.Join(dir, specCopy))
	next := filepath.Join(t.TempDir(), "next.yaml")
	data := append(bytes.Clone(original), []byte("stop_grace: 5s\n")...)
	if err := os.WriteFile(next, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	a := newApp(&bytes.Buffer{}, &errb)

	finish, err := a.adoptSpec(dir, next, data)
	if err != nil {
		t.Fatal(err)
	}
	assertSpecs(t, dir, data, [][]byte{original})
	if err := finish(os.ErrClosed); err != os.ErrClosed {
		t.Errorf("finish returned %v, want the resume's error", err)
	}
	assertSpecs(t, dir, original, nil)
	if !strings.Contains(errb.String(), "the resume did not start; the experiment's spec is the one before it again") {
		t.Errorf("no word of the rollback:\n%s", errb.String())
	}

	finish, err = a.adoptSpec(dir, next, data)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := c.run("resume", dir); code != exitOK { // writes to the journal
		t.Fatalf("resume: %d %s", code, errOut)
	}
	if err := finish(nil); err != nil {
		t.Error(err)
	}
	assertSpecs(t, dir, data, [][]byte{original})
}

// TestResumeSpecKeys resumes a finished experiment with one setting
// changed at a time: settings that change decisions are refused by name,
// the others are noted by name and accepted, and writing out a default
// changes nothing.
func TestResumeSpecKeys(t *testing.T) {
	c := cli{t: t, exec: goTrainer(nil)}
	path, dir := writeSpec(t, "keys", gridSpec)
	if code, _, errOut := c.run("run", path); code != exitOK {
		t.Fatalf("run: %d %s", code, errOut)
	}
	base, _ := os.ReadFile(path)
	variant := func(old, new string) string {
		t.Helper()
		if !bytes.Contains(base, []byte(old)) {
			t.Fatalf("the spec has no %q", old)
		}
		p := filepath.Join(t.TempDir(), "variant.yaml")
		if err := os.WriteFile(p, bytes.Replace(base, []byte(old), []byte(new), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const refusal = "that the experiment's decisions depend on"
	for _, tc := range []struct{ old, new, key string }{
		{"mode: max", "mode: min", "mode"},
		{"metric: score", "metric: loss", "metric"},
		{"mode: max", "mode: max\nseed: 7", "seed"},
		{"mode: max", "mode: max\nnum_samples: 2", "num_samples"},
		{"[1, 3, 2]", "[1, 3, 4]", "search_space"},
		{"mode: max", "mode: max\nsearcher: {name: random, max_concurrent: 1}", "searcher"},
		{"mode: max", "mode: max\nscheduler: {name: asha, grace_period: 2}", "scheduler"},
		{"training_iteration: 4", "training_iteration: 5", "stop"},
		{"mode: max", "mode: max\ncheckpoint: {score_attribute: score}", "checkpoint"},
	} {
		code, _, errOut := c.run("resume", dir, "--spec", variant(tc.old, tc.new))
		if code != exitUsage || !strings.Contains(errOut, refusal) || !strings.Contains(errOut, "\n  "+tc.key) {
			t.Errorf("%s changed: exit %d, want %d and a refusal naming %s:\n%s", tc.key, code, exitUsage, tc.key, errOut)
		}
	}
	assertSpecs(t, dir, base, nil)
	for _, tc := range []struct{ old, new, key string }{
		{"command: [unused]", "command: [other]", "command"},
		{"mode: max", "mode: max\nenv: {A: b}", "env"},
		{"max_concurrent_trials: 2", "max_concurrent_trials: 1", "max_concurrent_trials"},
		{"mode: max", "mode: max\nstop_grace: 3s", "stop_grace"},
		{"mode: max", "mode: max\nfailure: {max_failures: 3}", "failure.max_failures"},
		{"mode: max", "mode: max\nfailure: {fail_fast: true}", "failure.fail_fast"},
		{"mode: max", "mode: max\ncheckpoint: {num_to_keep: 3}", "checkpoint.num_to_keep"},
		{"mode: max", "mode: max\ngpus: 1", "gpus"},
	} {
		code, _, errOut := c.run("resume", dir, "--spec", variant(tc.old, tc.new))
		if code != exitOK || !strings.Contains(errOut, "do not change decisions:") || !strings.Contains(errOut, "\n  "+tc.key) {
			t.Errorf("%s changed: exit %d, want 0 and a note naming %s:\n%s", tc.key, code, tc.key, errOut)
		}
		if strings.Contains(errOut, "\n  name:") || strings.Contains(errOut, "\n  storage:") {
			t.Errorf("%s changed: the note names the experiment's location, which a resume does not change:\n%s", tc.key, errOut)
		}
	}
	// Defaults written out are no change.
	code, _, errOut := c.run("resume", dir, "--spec", variant("mode: max", "mode: max\nseed: 0\nnum_samples: 1\nscheduler: fifo"))
	if code != exitOK || strings.Contains(errOut, refusal) {
		t.Errorf("defaults written out: exit %d\n%s", code, errOut)
	}
}

// TestResumeSpecWorkingDirGone resumes with another spec an experiment
// whose working directory no longer exists: the two specs are still
// compared, the change of working_dir is noted, and a change of mode is
// still refused.
func TestResumeSpecWorkingDirGone(t *testing.T) {
	c := cli{t: t, exec: goTrainer(nil)}
	path, dir := writeSpec(t, "wdgone", gridSpec+"working_dir: sub\n")
	sub := filepath.Join(filepath.Dir(path), "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := c.run("run", path); code != exitOK {
		t.Fatalf("run: %d %s", code, errOut)
	}
	if err := os.Remove(sub); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := c.run("resume", dir); code != exitUsage || !strings.Contains(errOut, "no such directory") {
		t.Fatalf("plain resume without the working directory: %d %s", code, errOut)
	}
	moved := filepath.Join(t.TempDir(), "moved.yaml")
	src, _ := os.ReadFile(path)
	if err := os.WriteFile(moved, bytes.Replace(src, []byte("working_dir: sub\n"), nil, 1), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := c.run("resume", dir, "--spec", moved)
	if code != exitOK || !strings.Contains(errOut, "\n  working_dir: ") || !strings.Contains(errOut, filepath.Dir(moved)) {
		t.Errorf("resume --spec with the working directory gone: %d\n%s", code, errOut)
	}
	flipped := filepath.Join(t.TempDir(), "flipped.yaml")
	if err := os.WriteFile(flipped, bytes.Replace(src, []byte("mode: max"), []byte("mode: min"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	// The experiment's spec is moved.yaml now, whose directory exists; go
	// back to one whose working directory is gone.
	if err := os.WriteFile(filepath.Join(dir, specCopy), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(filepath.Dir(flipped), "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = c.run("resume", dir, "--spec", flipped)
	if code != exitUsage || !strings.Contains(errOut, "\n  mode: ") {
		t.Errorf("a flipped mode with the working directory gone: %d\n%s", code, errOut)
	}
}

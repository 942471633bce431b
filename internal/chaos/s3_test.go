package chaos

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/spec"
	"github.com/hone-tune/hone/store/blob"
)

// TestS3SpecAndURLs: the object-storage kinds run their base kind's spec
// with the storage URL as a YAML string, take turns by round, and name
// their experiment under the run's prefix.
func TestS3SpecAndURLs(t *testing.T) {
	storage, err := s3Storage("s3://bkt?endpoint=http://127.0.0.1:9000&region=us-east-1&use_path_style=true", "chaos-1-ab")
	if err != nil {
		t.Fatal(err)
	}
	want := "s3://bkt/chaos-1-ab?endpoint=http://127.0.0.1:9000&region=us-east-1&use_path_style=true"
	if storage != want {
		t.Errorf("storage %q, want %q", storage, want)
	}
	if got := joinURL(storage, "pbt-s3-1"); got != "s3://bkt/chaos-1-ab/pbt-s3-1?endpoint=http://127.0.0.1:9000&region=us-east-1&use_path_style=true" {
		t.Errorf("experiment URL %q", got)
	}
	if _, err := s3Storage("/tmp/x", "p"); err == nil {
		t.Error("a local path was taken for an S3 URL")
	}
	for _, kind := range []string{KindPBTS3, KindASHAS3} {
		text := specYAML(specParams{kind: kind, name: kind + "-1", storage: storage, seed: 3, python: "/bin/sh", trainer: "unused",
			mark: "test", mode: "max", grace: "10s", maxConc: 2})
		base := specYAML(specParams{kind: baseKind(kind), name: kind + "-1", storage: "STORAGE", seed: 3, python: "/bin/sh", trainer: "unused",
			mark: "test", mode: "max", grace: "10s", maxConc: 2})
		if strings.Replace(text, `"`+storage+`"`, "STORAGE", 1) != base {
			t.Errorf("%s: the spec is not %s's with the URL as storage:\n%s", kind, baseKind(kind), text)
		}
		s, err := spec.Parse([]byte(text), "x.yaml", t.TempDir())
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if s.Storage != storage {
			t.Errorf("%s: storage %q, want %q", kind, s.Storage, storage)
		}
	}
	if !runsIn(KindPBTS3, 1) || runsIn(KindASHAS3, 1) || runsIn(KindPBTS3, 2) || !runsIn(KindASHAS3, 2) || !runsIn(KindPBT, 2) {
		t.Error("the object-storage kinds do not take turns, one a round")
	}
}

// TestCheckWindow runs an experiment on the sim executor with a store on
// a local bucket (file://) and the mirror that hone uses, then checks that
// checkWindow passes it after a real SIGKILLed process, and catches a
// registered checkpoint the bucket lacks, a bucket journal that is not a
// prefix of the killed run's, and one short of a run that exited.
func TestCheckWindow(t *testing.T) {
	ctx := context.Background()
	work, bucket := t.TempDir(), t.TempDir()
	cache := filepath.Join(work, "machine")
	dir := filepath.Join(cache, "experiments", "pbt-0123") // the run's working copy
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	text := specYAML(specParams{kind: KindPBT, name: "pbt", storage: filepath.Dir(dir), seed: 5, python: "/bin/sh", trainer: "unused",
		mark: "test", mode: "max", grace: "10s", maxConc: 2})
	if err := os.WriteFile(filepath.Join(dir, "spec.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := blob.Open(ctx, "file://"+bucket, filepath.Join(work, "c1"), blob.LocalRoot(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := storedSpec(dir)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := spec.Build(s, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan.Options.Executor = sim.New(func(hone.Config, string) (sim.Trainable, error) { return &counter{}, nil })
	plan.Options.Log = io.Discard
	plan.Options.Store = st
	m, err := st.NewMirror(ctx, dir, blob.MirrorOptions{Journal: journal.FileName})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runner.Run(ctx, plan.Experiment, plan.Options); err != nil {
		t.Fatal(err)
	}
	if err := plan.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}

	view, err := blob.Open(ctx, "file://"+bucket, filepath.Join(work, "c2"))
	if err != nil {
		t.Fatal(err)
	}
	defer view.Close()
	h := &harness{cfg: Config{Work: work, Log: io.Discard}, sum: &Summary{Checked: map[string]int{}}}
	e := &exp{h: h, kind: KindPBTS3, name: "pbt", dir: filepath.Join(work, "x", "pbt"), stats: &KindStats{},
		s3: &s3exp{store: view, runCache: cache}}
	ended := func(script string) *run {
		cmd := exec.Command("sh", "-c", script)
		_ = cmd.Run()
		return &run{cmd: cmd}
	}
	failed := func() []string {
		var out []string
		for _, f := range h.sum.Failures {
			out = append(out, f.Invariant)
		}
		h.sum.Failures, e.failed, e.seen = nil, false, nil
		return out
	}

	killed := ended("kill -9 $$")
	e.checkWindow(killed)
	if f := failed(); len(f) != 0 {
		t.Fatalf("a healthy bucket failed %v: %v", f, h.sum.Failures)
	}
	for _, inv := range []string{"s3-journal-prefix", "s3-journal-kept", "s3-checkpoints-committed"} {
		if h.sum.Checked[inv] != 1 {
			t.Errorf("%s checked %d times, want 1", inv, h.sum.Checked[inv])
		}
	}
	e.checkWindow(ended("exit 3"))
	if f := failed(); len(f) != 0 || h.sum.Checked["s3-journal-shipped"] != 1 {
		t.Fatalf("a run that exited with everything shipped: failed %v, checked %v", f, h.sum.Checked)
	}

	// A registered checkpoint gone from the bucket.
	local, err := readState(dir)
	if err != nil {
		t.Fatal(err)
	}
	var gone string
	for _, tr := range local.trials {
		for p := range tr.ckpts {
			gone = p
		}
	}
	if gone == "" {
		t.Fatal("no checkpoint registered")
	}
	if err := view.Delete(ctx, gone); err != nil {
		t.Fatal(err)
	}
	e.checkWindow(killed)
	if f := failed(); strings.Join(f, ",") != "s3-checkpoints-committed" {
		t.Errorf("a registered checkpoint missing from the bucket: failed %v, want s3-checkpoints-committed", f)
	}

	// The bucket ahead of the killed run's local journal, which is then
	// no longer what the bucket held before the run either.
	jp := filepath.Join(dir, journal.FileName)
	full, err := os.ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.LastIndex(strings.TrimSuffix(string(full), "\n"), "\n") + 1
	if err := os.WriteFile(jp, full[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	e.s3.shipped = full[:cut]
	e.checkWindow(killed)
	if f := failed(); !strings.Contains(strings.Join(f, ","), "s3-journal-prefix") {
		t.Errorf("the bucket's journal longer than the killed run's: failed %v, want s3-journal-prefix", f)
	}
	e.s3.shipped = full[:cut]
	e.checkWindow(ended("exit 0"))
	if f := failed(); !strings.Contains(strings.Join(f, ","), "s3-journal-shipped") {
		t.Errorf("a run that exited with another journal than the bucket's: failed %v, want s3-journal-shipped", f)
	}
	// A resume that lost what the bucket held.
	e.s3.shipped = append(full[:len(full):len(full)], "{}\n"...)
	e.checkWindow(killed)
	if f := failed(); !strings.Contains(strings.Join(f, ","), "s3-journal-kept") {
		t.Errorf("the bucket's journal shorter than before the run: failed %v, want s3-journal-kept", f)
	}
}

package runner_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/callback"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/store/blob"
)

// TestMissingCheckpointRemnantRemoved runs failOnce on object storage (a
// file:// bucket) and deletes by hand one object of the ERROR trial's
// newest checkpoint, leaving its manifest: to a restore the checkpoint is
// missing, so the retried trial falls back to the checkpoint before, as on
// local storage, and what is left of the damaged one is removed, so the
// bucket holds only the checkpoints the journal registers.
func TestMissingCheckpointRemnantRemoved(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "exp")
	bucket := t.TempDir()
	options := func(log io.Writer) runner.Options {
		st, err := blob.Open(context.Background(), "file://"+bucket, t.TempDir(), blob.LocalRoot(dir))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return runner.Options{Dir: dir, Executor: inproc.NewFunc(failOnce), Store: st, Log: log}
	}
	files := callback.NewTrialFiles(dir, callback.NoSync())
	out, err := runner.Run(context.Background(), onceExperiment(files), options(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	files.Close()
	tr := out.Trials[0]
	if tr.Status != hone.StatusError {
		t.Fatalf("the first run ended the trial %s, want ERROR", tr.Status)
	}
	damaged := path.Join(tr.Dir, "checkpoint_000001")
	if err := os.Remove(fileInBucket(t, bucket, damaged, "step")); err != nil {
		t.Fatal(err)
	}

	var log bytes.Buffer
	files = callback.NewTrialFiles(dir, callback.NoSync())
	opts := options(&log)
	out, err = runner.Resume(context.Background(), onceExperiment(files), opts, hone.ResumeFlags{Unfinished: true, Errored: true})
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, log.String())
	}
	if err := files.Close(); err != nil {
		t.Fatal(err)
	}
	if tr = out.Trials[0]; tr.Status != hone.StatusTerminated {
		t.Fatalf("the retried trial ended %s (%s), want TERMINATED\n%s", tr.Status, tr.Error, log.String())
	}
	if want := "checkpoint " + damaged + " is missing"; !strings.Contains(log.String(), want) ||
		!strings.Contains(log.String(), "restarting from "+path.Join(tr.Dir, "checkpoint_000000")) {
		t.Errorf("the log does not say %q and name the fallback:\n%s", want, log.String())
	}
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var registered []string
	for _, c := range e.Trials[0].Checkpoints {
		rel, _ := filepath.Rel(dir, c)
		registered = append(registered, filepath.ToSlash(rel))
	}
	committed, leftovers, err := opts.Store.List(context.Background(), tr.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(committed, registered) || len(leftovers) != 0 || slices.Contains(committed, damaged) {
		t.Errorf("the bucket lists %q committed and %q left over; the journal registers %q", committed, leftovers, registered)
	}
}

// fileInBucket returns the path, in the directory of a file:// bucket, of
// the file of the checkpoint cp, where its manifest places it.
func fileInBucket(t *testing.T, bucketDir, cp, file string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(bucketDir, filepath.FromSlash(cp), blob.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	k, err := blob.FileKey(raw, cp, file)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(bucketDir, filepath.FromSlash(k))
}

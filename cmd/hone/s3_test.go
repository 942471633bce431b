package main

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/store/blob"
	"github.com/hone-tune/hone/store/storetest"
)

// s3Storage returns a storage URL on the real S3 server the test script
// starts, under a fresh random prefix, or skips the test loudly.
func s3Storage(t *testing.T) string { return storetest.S3URL(t, "") }

// s3Binary is binary with a cache directory of the test's own: a test
// that empties it sees hone on a machine that never ran the experiment.
func s3Binary(t *testing.T, cache string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := binary(t, args...)
	cmd.Env = append(cmd.Env, "HONE_CACHE_DIR="+cache)
	return cmd
}

// runS3 runs hone with the cache directory cache to its end and returns
// the exit code and output.
func runS3(t *testing.T, cache string, args ...string) (int, string, string) {
	t.Helper()
	cmd := s3Binary(t, cache, args...)
	_ = cmd.Run()
	stdout, stderr := output(cmd)
	return cmd.ProcessState.ExitCode(), stdout, stderr
}

// expURL is the URL of the experiment name under the storage URL.
func expURL(storage, name string) string {
	u, _ := url.Parse(storage)
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + name
	return u.String()
}

// openS3 opens the experiment's store directly, as a test's view of the
// bucket.
func openS3(t *testing.T, u string) *blob.Store {
	t.Helper()
	st, err := blob.Open(context.Background(), u, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// workDir returns the local working directory hone made for experiment
// URL u under the cache directory cache.
func workDir(t *testing.T, cache, u string) string {
	t.Helper()
	t.Setenv("HONE_CACHE_DIR", cache)
	w, _, err := localDirs(u)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// bucketJournal reads the journal the bucket holds.
func bucketJournal(t *testing.T, st *blob.Store) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), journal.FileName)
	if _, err := st.DownloadJournal(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// noDuplicateRows checks that every trial's result.json holds each
// training_iteration at most once and as many rows as the journal has
// results for it.
func noDuplicateRows(t *testing.T, dir string) {
	t.Helper()
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	journaled := journaledResults(t, dir)
	for _, tr := range e.Trials {
		rows, err := tr.Results()
		if err != nil {
			t.Fatal(err)
		}
		seen := map[float64]bool{}
		for _, r := range rows {
			it, _ := r.Value("training_iteration")
			if seen[it] {
				t.Errorf("trial %s: iteration %v twice in result.json", tr.ID, it)
			}
			seen[it] = true
		}
		if len(rows) != journaled[tr.ID] {
			t.Errorf("trial %s: %d rows in result.json, %d results in the journal", tr.ID, len(rows), journaled[tr.ID])
		}
	}
}

func TestS3RunStatusResults(t *testing.T) {
	storage := s3Storage(t)
	path, _ := writeSpec(t, "sh", shSpec(3, "0.01", ""))
	cache := t.TempDir()
	code, out, errOut := runS3(t, cache, "run", "--storage", storage, path)
	if code != exitOK {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	u := expURL(storage, "sh")
	secret := os.Getenv("AWS_SECRET_ACCESS_KEY")
	if secret != "" && strings.Contains(errOut+out, secret) {
		t.Error("the secret key appears in hone's output")
	}
	// status and results read the bucket: from another machine's point of
	// view (an empty cache) too.
	other := t.TempDir()
	code, out, errOut = runS3(t, other, "status", u)
	if code != exitOK || !strings.Contains(out, "3 trials (3 TERMINATED)") || strings.Contains(out, "Running in hone") {
		t.Errorf("status: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runS3(t, other, "results", u, "--best")
	if code != exitOK || !strings.Contains(out, "with score=9") || !strings.Contains(out, "Checkpoint: s3://") {
		t.Errorf("results --best: %d\n%s%s", code, out, errOut)
	}
	st := openS3(t, u)
	e := downloadExperiment(t, st)
	for _, tr := range e.Trials {
		rel, _ := filepath.Rel(e.Dir, tr.Dir)
		committed, _, err := st.List(context.Background(), filepath.ToSlash(rel))
		if err != nil {
			t.Fatal(err)
		}
		if len(committed) != 2 || len(tr.Checkpoints) != 2 {
			t.Errorf("trial %s: %d checkpoints in the bucket, %d registered; want num_to_keep 2", tr.ID, len(committed), len(tr.Checkpoints))
		}
	}
	for _, f := range []string{"spec.yaml", "spec_origin.json"} {
		if _, err := os.Stat(filepath.Join(e.Dir, f)); err != nil {
			t.Errorf("the bucket has no %s: %v", f, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(e.Dir, "spec.yaml"))
	if err != nil || secret != "" && bytes.Contains(b, []byte(secret)) {
		t.Errorf("spec copy: %v", err)
	}
	code, _, errOut = runS3(t, cache, "run", "--storage", storage, path)
	if code != exitUsage || !strings.Contains(errOut, "already holds an experiment") {
		t.Errorf("second run: %d\n%s", code, errOut)
	}
}

// downloadExperiment copies the experiment's journal and files from the
// bucket into a fresh directory and opens it there.
func downloadExperiment(t *testing.T, st *blob.Store) *results.Experiment {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	if _, err := st.DownloadJournal(ctx, filepath.Join(dir, journal.FileName)); err != nil {
		t.Fatal(err)
	}
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	prefixes := []string{""}
	for _, tr := range e.Trials {
		rel, _ := filepath.Rel(dir, tr.Dir)
		prefixes = append(prefixes, filepath.ToSlash(rel))
	}
	if _, err := st.DownloadFiles(ctx, dir, journal.FileName, prefixes); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestS3BadStorage: a wrong endpoint, a missing bucket and bad
// credentials are exit 2 before any trial starts, naming the URL without
// secrets and what failed.
func TestS3BadStorage(t *testing.T) {
	storage := s3Storage(t)
	path, _ := writeSpec(t, "sh", shSpec(3, "0.01", ""))
	u, _ := url.Parse(storage)
	missing := *u
	missing.Host = "no-such-bucket-" + strings.Trim(u.Path, "/")
	closed := *u
	q := closed.Query()
	q.Set("endpoint", "http://127.0.0.1:1")
	closed.RawQuery = q.Encode()
	for _, c := range []struct {
		name, url string
		env       []string
		want      string
	}{
		{"missing bucket", missing.String(), nil, "cannot list the bucket"},
		{"wrong endpoint", closed.String(), nil, "cannot list the bucket"},
		{"bad credentials", storage, []string{"AWS_SECRET_ACCESS_KEY=not-the-secret-xyz"}, "cannot list the bucket"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cache := t.TempDir()
			cmd := s3Binary(t, cache, "run", "--storage", c.url, path)
			cmd.Env = append(cmd.Env, c.env...)
			_ = cmd.Run()
			out, errOut := output(cmd)
			if code := cmd.ProcessState.ExitCode(); code != exitUsage {
				t.Fatalf("exit %d, want %d\n%s%s", code, exitUsage, out, errOut)
			}
			if !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "s3://") {
				t.Errorf("stderr does not say what failed where:\n%s", errOut)
			}
			if strings.Contains(errOut, "not-the-secret-xyz") || strings.Contains(errOut, os.Getenv("AWS_SECRET_ACCESS_KEY")) {
				t.Errorf("a secret appears in the error:\n%s", errOut)
			}
			if strings.Contains(out, "Trial") {
				t.Errorf("a trial table was printed: trials started\n%s", out)
			}
		})
	}
}

// TestS3CrashWindow kills hone (SIGKILL) several times in the middle of an
// experiment on S3 and checks the crash window each time: the bucket's
// journal is a prefix of the local one (a crash loses at most its last
// lines), and every checkpoint it registers and has not deleted is
// committed in the bucket. Each resume runs from an empty cache (another
// machine), and the experiment ends with every result once in the trials'
// files.
func TestS3CrashWindow(t *testing.T) {
	storage := s3Storage(t)
	path, _ := writeSpec(t, "sh", shSpec(40, "0.02", ""))
	u := expURL(storage, "sh")
	st := openS3(t, u)
	for round := 0; ; round++ {
		before := 0
		if round > 0 {
			before = bytes.Count(bucketJournal(t, st), []byte("\n"))
		}
		cache := t.TempDir()
		args := []string{"run", "--storage", storage, path}
		if round > 0 {
			args = []string{"resume", u}
		}
		cmd := s3Binary(t, cache, args...)
		cmd.Dir = t.TempDir() // nothing of the experiment in the current directory either
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if round == 3 {
			select {
			case <-done:
			case <-time.After(5 * time.Minute):
				_ = cmd.Process.Kill()
				t.Fatal("the last resume did not finish")
			}
			if code := cmd.ProcessState.ExitCode(); code != exitOK {
				out, errOut := output(cmd)
				t.Fatalf("last resume: exit %d\n%s%s", code, out, errOut)
			}
			break
		}
		local := filepath.Join(workDir(t, cache, u), journal.FileName)
		waitLines(t, local, before+15, done)
		for round == 0 { // a run killed before its first sync left nothing to resume
			if ok, err := st.HasJournal(context.Background()); err != nil || ok {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		_ = cmd.Process.Kill()
		<-done
		have, err := os.ReadFile(local)
		if err != nil {
			t.Fatal(err)
		}
		shipped := bucketJournal(t, st)
		if !bytes.HasPrefix(have, shipped) {
			t.Fatalf("round %d: the bucket's journal (%d bytes) is not a prefix of the local one (%d bytes)", round, len(shipped), len(have))
		}
		e := downloadExperiment(t, st)
		for _, tr := range e.Trials {
			for _, c := range tr.Checkpoints {
				rel, _ := filepath.Rel(e.Dir, c)
				if _, err := st.LocalDir(context.Background(), filepath.ToSlash(rel)); err != nil {
					t.Errorf("round %d: registered checkpoint %s is not in the bucket: %v", round, rel, err)
				}
			}
		}
	}
	e := downloadExperiment(t, st)
	for _, tr := range e.Trials {
		if tr.Status != "TERMINATED" {
			t.Errorf("trial %s ended %s", tr.ID, tr.Status)
		}
	}
	noDuplicateRows(t, e.Dir)
}

// waitLines waits until the file at p has at least n lines, or the
// process ends (done).
func waitLines(t *testing.T, p string, n int, done chan error) {
	t.Helper()
	for {
		if b, err := os.ReadFile(p); err == nil && bytes.Count(b, []byte("\n")) >= n {
			return
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("hone ended before %s had %d lines: %v", p, n, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestS3OneDriver: while hone runs an experiment on S3, status from
// another cache shows it running, and a resume from another cache (as on
// another machine) is refused with exit 2; once that hone is gone, the
// resume goes ahead.
func TestS3OneDriver(t *testing.T) {
	storage := s3Storage(t)
	path, _ := writeSpec(t, "sh", shSpec(1000, "0.05", ""))
	u := expURL(storage, "sh")
	st := openS3(t, u)
	cmd := s3Binary(t, t.TempDir(), "run", "--storage", storage, path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		if _, ok, err := st.ReadHeartbeat(context.Background()); err == nil && ok {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("hone ended early: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	other := t.TempDir()
	code, out, errOut := runS3(t, other, "status", u)
	if code != exitOK || !strings.Contains(out, "Running in hone (pid ") {
		t.Errorf("status of a running experiment: %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = runS3(t, other, "resume", u)
	if code != exitUsage || !strings.Contains(errOut, "is being run by hone (pid ") {
		t.Errorf("resume while another hone runs it: exit %d\n%s", code, errOut)
	}
	_ = cmd.Process.Kill()
	<-done
	// Killed on this host: its heartbeat names a process that is gone.
	resume := s3Binary(t, other, "resume", u)
	if err := resume.Start(); err != nil {
		t.Fatal(err)
	}
	rdone := make(chan error, 1)
	go func() { rdone <- resume.Wait() }()
	waitLines(t, filepath.Join(workDir(t, other, u), journal.FileName), bytes.Count(bucketJournal(t, st), []byte("\n"))+3, rdone)
	_ = resume.Process.Signal(os.Interrupt)
	<-rdone
	if code := resume.ProcessState.ExitCode(); code != exitInterrupted {
		out, errOut := output(resume)
		t.Errorf("resume after the first hone was killed: exit %d\n%s%s", code, out, errOut)
	}
	if _, ok, err := st.ReadHeartbeat(context.Background()); err != nil || ok {
		t.Errorf("heartbeat after a clean stop: %v, %v; want none", ok, err)
	}
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	cblob "gocloud.dev/blob"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/store/blob"
)

// rawBucket opens the bucket behind the experiment at the URL u, under
// the experiment's prefix, as the client library sees it: the test's own
// hand on the objects, to inspect them or to delete one.
func rawBucket(t *testing.T, u string) *cblob.Bucket {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	prefix := strings.Trim(path.Clean("/"+p.Path), "/")
	p.Path, p.RawPath = "", ""
	b, err := cblob.OpenBucket(context.Background(), p.String())
	if err != nil {
		t.Fatal(err)
	}
	b = cblob.PrefixedBucket(b, prefix+"/")
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// checkpointDir matches a checkpoint's directory name.
var checkpointDir = regexp.MustCompile(`^checkpoint_[0-9]+$`)

// bucketCheckpoints returns, for every checkpoint prefix under which the
// bucket holds objects (experiment-relative, slash-separated), the keys of
// its objects relative to the prefix.
func bucketCheckpoints(t *testing.T, b *cblob.Bucket) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	it := b.List(nil)
	for {
		obj, err := it.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(obj.Key, "/")
		for i, p := range parts[:len(parts)-1] {
			if checkpointDir.MatchString(p) {
				prefix := strings.Join(parts[:i+1], "/")
				out[prefix] = append(out[prefix], strings.Join(parts[i+1:], "/"))
				break
			}
		}
	}
	return out
}

// checkBucketCheckpoints checks that the bucket holds exactly the
// checkpoints the experiment e (read from the bucket's journal) registers:
// the store lists each trial's registered checkpoints as committed and no
// leftovers, nothing else in the bucket looks like a checkpoint, and every
// checkpoint has its manifest and each file the manifest names at the
// size it names. It returns the sizes of the files, by checkpoint prefix
// and file.
func checkBucketCheckpoints(t *testing.T, b *cblob.Bucket, st *blob.Store, e *results.Experiment) map[string]map[string]int64 {
	t.Helper()
	ctx := context.Background()
	registered := map[string]bool{}
	for _, tr := range e.Trials {
		rel, _ := filepath.Rel(e.Dir, tr.Dir)
		var want []string
		for _, c := range tr.Checkpoints {
			r, _ := filepath.Rel(e.Dir, c)
			want = append(want, filepath.ToSlash(r))
			registered[filepath.ToSlash(r)] = true
		}
		committed, leftovers, err := st.List(context.Background(), filepath.ToSlash(rel))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(committed, want) || len(leftovers) != 0 {
			t.Errorf("trial %s: the bucket lists %q committed and %q left over; the journal registers %q", tr.ID, committed, leftovers, want)
		}
	}
	sizes := map[string]map[string]int64{}
	for prefix, keys := range bucketCheckpoints(t, b) {
		if !registered[prefix] {
			t.Errorf("the bucket holds %s (%q), which the journal does not register", prefix, keys)
			continue
		}
		raw, err := b.ReadAll(ctx, prefix+"/"+blob.ManifestName)
		if err != nil {
			t.Errorf("checkpoint %s has no manifest: %v", prefix, err)
			continue
		}
		var m struct {
			Files []struct {
				Path string `json:"path"`
				Size int64  `json:"size"`
			} `json:"files"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Errorf("checkpoint %s: manifest: %v", prefix, err)
			continue
		}
		sizes[prefix] = map[string]int64{}
		for _, f := range m.Files {
			fk, err := blob.FileKey(raw, prefix, f.Path)
			if err != nil {
				t.Fatal(err)
			}
			attrs, err := b.Attributes(ctx, fk)
			if err != nil {
				t.Errorf("checkpoint %s: %s: %v", prefix, f.Path, err)
				continue
			}
			if attrs.Size != f.Size {
				t.Errorf("checkpoint %s: %s is %d bytes, the manifest says %d", prefix, f.Path, attrs.Size, f.Size)
			}
			sizes[prefix][f.Path] = attrs.Size
		}
		if len(keys) != len(m.Files)+1 {
			t.Errorf("checkpoint %s holds %q, its manifest names %d files", prefix, keys, len(m.Files))
		}
	}
	for p := range registered {
		if _, ok := sizes[p]; !ok {
			t.Errorf("registered checkpoint %s is not committed in the bucket", p)
		}
	}
	return sizes
}

// repoRoot is the repository's root directory, where the examples run
// from.
func repoRoot(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// runExample runs examples/NAME.yaml from the repository root on a fresh
// prefix of the S3 server with a fresh cache, checks it exits 0, that
// hone results URL --best works from an empty cache, that every trial is
// TERMINATED in the bucket's journal with its result files holding as
// many rows as the journal has results, and that the bucket holds exactly
// the registered checkpoints. It returns the experiment as read back from the bucket and
// hone's standard error.
func runExample(t *testing.T, name string) (*results.Experiment, string) {
	t.Helper()
	storage := s3Storage(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("SKIPPED: no python3: the examples' trials are Python scripts")
	}
	cmd := s3Binary(t, t.TempDir(), "run", "--storage", storage, filepath.Join("examples", name+".yaml"))
	cmd.Dir = repoRoot(t)
	_ = cmd.Run()
	out, errOut := output(cmd)
	if code := cmd.ProcessState.ExitCode(); code != exitOK {
		t.Fatalf("run examples/%s.yaml: exit %d\nstdout:\n%s\nstderr:\n%s", name, code, out, errOut)
	}
	u := expURL(storage, name)
	code, best, bestErr := runS3(t, t.TempDir(), "results", u, "--best")
	if code != exitOK || !strings.Contains(best, "Best trial: ") || !strings.Contains(best, "Checkpoint: s3://") {
		t.Errorf("results --best: exit %d\n%s%s", code, best, bestErr)
	}
	st := openS3(t, u)
	e := downloadExperiment(t, st)
	if len(e.Trials) == 0 {
		t.Fatal("the bucket's journal has no trials")
	}
	for _, tr := range e.Trials {
		if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s ended %s: %s", tr.ID, tr.Status, tr.Error)
		}
	}
	journaled := journaledResults(t, e.Dir)
	for _, tr := range e.Trials {
		if rows, err := tr.Results(); err != nil || len(rows) != journaled[tr.ID] {
			t.Errorf("trial %s: %d rows in result.json (%v), %d results in the journal", tr.ID, len(rows), err, journaled[tr.ID])
		}
	}
	checkBucketCheckpoints(t, rawBucket(t, u), st, e)
	return e, errOut
}

// TestS3ExampleASHA runs examples/asha.yaml end to end on the S3 server.
func TestS3ExampleASHA(t *testing.T) {
	e, _ := runExample(t, "asha")
	noDuplicateRows(t, e.Dir) // no trial restored an older checkpoint
	if len(e.Trials) != 16 {
		t.Errorf("%d trials, want num_samples 16", len(e.Trials))
	}
	// ASHA stopped some trials early: not every trial trained 18 epochs.
	full := 0
	for _, tr := range e.Trials {
		last, _ := tr.Last()
		if it, _ := last.Value(hone.FieldTrainingIteration); it == 18 {
			full++
		}
	}
	if full == 0 || full == len(e.Trials) {
		t.Errorf("%d of %d trials trained all 18 epochs: ASHA did not stop some early", full, len(e.Trials))
	}
}

// TestS3ExamplePBT runs examples/pbt.yaml end to end on the S3 server: at
// least one exploit happens, and each clone restores its donor's
// checkpoint from the bucket: its next result is at the donor's iteration
// plus one, and the epoch the trial reports (which it reads back from the
// checkpoint it restores) is its training iteration throughout.
func TestS3ExamplePBT(t *testing.T) {
	e, errOut := runExample(t, "pbt")
	if !strings.Contains(errOut, " clones ") {
		t.Fatalf("no exploit happened (the log never says \"clones\"):\n%s", errOut)
	}
	f, err := os.Open(filepath.Join(e.Dir, "pbt_global.txt"))
	if err != nil {
		t.Fatalf("pbt_global.txt is not in the bucket: %v", err)
	}
	defer f.Close()
	// Per trial index: the jumps (target iteration -> donor iteration + 1)
	// the exploits logged.
	jumps := map[int][][2]float64{}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var line []any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || len(line) != 6 {
			t.Fatalf("pbt_global.txt: bad line %q: %v", sc.Text(), err)
		}
		tag, _ := line[0].(string)
		idx, err := strconv.Atoi(tag[:strings.IndexByte(tag+"_", '_')])
		target, ok1 := line[2].(float64)
		donor, ok2 := line[3].(float64)
		if err != nil || !ok1 || !ok2 {
			t.Fatalf("pbt_global.txt: bad line %q", sc.Text())
		}
		jumps[idx] = append(jumps[idx], [2]float64{target, donor + 1})
		n++
	}
	if n == 0 || n != strings.Count(errOut, " clones ") {
		t.Errorf("pbt_global.txt logs %d exploits, the log says \"clones\" %d times", n, strings.Count(errOut, " clones "))
	}
	for _, tr := range e.Trials {
		rows, err := tr.Results()
		if err != nil {
			t.Fatal(err)
		}
		want := jumps[tr.Index]
		var got [][2]float64
		prev := 0.0
		for _, r := range rows {
			it, _ := r.Value(hone.FieldTrainingIteration)
			if epoch, _ := r.Value("epoch"); epoch != it {
				t.Errorf("trial %s: epoch %v at training iteration %v: the restored checkpoint is not the one hone registered", tr.ID, epoch, it)
			}
			if it != prev+1 {
				got = append(got, [2]float64{prev, it})
			}
			prev = it
		}
		// An exploit from a donor at the clone's own iteration continues
		// without a jump; every other exploit is one jump.
		var visible [][2]float64
		for _, j := range want {
			if j[1] != j[0]+1 {
				visible = append(visible, j)
			}
		}
		if !slices.Equal(got, visible) {
			t.Errorf("trial %s (index %d): its iterations jump %v, its exploits %v", tr.ID, tr.Index, got, want)
		}
		if last, _ := tr.Last(); last != nil {
			if it, _ := last.Value(hone.FieldTrainingIteration); it != 24 {
				t.Errorf("trial %s ended at iteration %v, want 24", tr.ID, it)
			}
		}
	}
}

// latestRunning returns a trial of e that is RUNNING with at least two
// registered checkpoints, the latest at its third iteration or later, or
// nil.
func latestRunning(e *results.Experiment) *results.Trial {
	for _, tr := range e.Trials {
		if tr.Status == hone.StatusRunning && len(tr.Checkpoints) >= 2 && path.Base(tr.Checkpoints[len(tr.Checkpoints)-1]) >= "checkpoint_000002" {
			return tr
		}
	}
	return nil
}

// TestS3DeletedCheckpointObject kills hone (SIGKILL) in the middle of an
// experiment on S3, deletes by hand one object of the latest checkpoint of
// a RUNNING trial (a file, or the manifest) directly in the bucket, and
// resumes from an empty cache: the trial falls back to its checkpoint
// before, as on local storage, the log says so, and the experiment
// completes. With an object of the checkpoint before deleted too, the
// trial starts again from scratch.
func TestS3DeletedCheckpointObject(t *testing.T) {
	s3Storage(t) // skips without the server
	for _, c := range []struct {
		name, object string
		both         bool // delete the checkpoint before's iter file too
	}{
		{"file", "iter", false},
		{"manifest", blob.ManifestName, false},
		{"both", blob.ManifestName, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			storage := s3Storage(t)
			const iters = 25
			specPath, _ := writeSpec(t, "sh", shSpec(iters, "0.1", ""))
			u := expURL(storage, "sh")
			st := openS3(t, u)
			cmd := s3Binary(t, t.TempDir(), "run", "--storage", storage, specPath)
			cmd.Dir = t.TempDir()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			deadline := time.Now().Add(time.Minute)
			for {
				if ok, err := st.HasJournal(context.Background()); err == nil && ok && latestRunning(downloadExperiment(t, st)) != nil {
					break
				}
				select {
				case err := <-done:
					t.Fatalf("hone ended before a trial had two checkpoints in the bucket: %v\n%s", err, cmd.Stderr)
				case <-time.After(50 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					<-done
					t.Fatalf("no RUNNING trial with two checkpoints in the bucket within a minute\n%s", cmd.Stderr)
				}
			}
			_ = cmd.Process.Kill()
			<-done

			e := downloadExperiment(t, st) // what the resume will see
			tr := latestRunning(e)
			if tr == nil {
				t.Fatal("after the kill the bucket's journal has no RUNNING trial with two checkpoints")
			}
			latest, _ := filepath.Rel(e.Dir, tr.Checkpoints[len(tr.Checkpoints)-1])
			before, _ := filepath.Rel(e.Dir, tr.Checkpoints[len(tr.Checkpoints)-2])
			latest, before = filepath.ToSlash(latest), filepath.ToSlash(before)
			d, err := st.LocalDir(context.Background(), before)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(d, "iter"))
			if err != nil {
				t.Fatal(err)
			}
			fallback, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			rows := journaledResults(t, e.Dir)[tr.ID]
			if err := rawBucket(t, u).Delete(context.Background(), objectOf(t, rawBucket(t, u), latest, c.object)); err != nil {
				t.Fatalf("delete %s/%s: %v", latest, c.object, err)
			}
			if c.both {
				if err := rawBucket(t, u).Delete(context.Background(), objectOf(t, rawBucket(t, u), before, "iter")); err != nil {
					t.Fatalf("delete %s/iter: %v", before, err)
				}
				fallback = 0
			}

			code, out, errOut := runS3(t, t.TempDir(), "resume", u)
			if code != exitOK {
				t.Fatalf("resume: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			if !strings.Contains(errOut, "checkpoint "+latest+" is missing") || !strings.Contains(errOut, "restarting from ") ||
				!strings.Contains(errOut[strings.Index(errOut, latest+" is missing"):], path.Base(before)) {
				t.Errorf("the log does not say %s is missing and the trial restarts from %s:\n%s", latest, before, errOut)
			}
			if c.both && !strings.Contains(errOut, "checkpoint "+before+" is missing") {
				t.Errorf("the log does not say %s is missing too:\n%s", before, errOut)
			}
			e = downloadExperiment(t, st)
			for _, x := range e.Trials {
				last, _ := x.Last()
				it, _ := last.Value(hone.FieldTrainingIteration)
				if x.Status != hone.StatusTerminated || it != iters {
					t.Errorf("trial %s: %s at iteration %v", x.ID, x.Status, it)
				}
				if x.ID != tr.ID {
					continue
				}
				all, err := x.Results()
				if err != nil {
					t.Fatal(err)
				}
				if len(all) <= rows {
					t.Fatalf("trial %s: no results after the resume (%d rows, %d before)", x.ID, len(all), rows)
				}
				next, _ := all[rows].Value(hone.FieldTrainingIteration)
				score, _ := all[rows].Value("score")
				xv, _ := hone.Number(x.Config["x"])
				if next != float64(fallback+1) || score != xv*float64(fallback+1) {
					t.Errorf("trial %s: its first result after the resume is at iteration %v with score %v, want %d from %s",
						x.ID, next, score, fallback+1, before)
				}
			}
			// The damaged checkpoint is registered no more, or whole again:
			// the bucket holds exactly the registered checkpoints.
			checkBucketCheckpoints(t, rawBucket(t, u), st, e)
		})
	}
}

// gateway is an S3 server (versitygw) of a test's own, on a fixed port
// and data directory, that the test kills and starts again.
type gateway struct {
	bin, data, addr string
	cmd             *exec.Cmd
}

// newGateway starts a server with one bucket, bucket, on a free port of
// 127.0.0.1, or skips the test loudly when there is no server binary. The
// server is killed when the test ends.
func newGateway(t *testing.T, bucket string) *gateway {
	t.Helper()
	bin := os.Getenv("HONE_TEST_VERSITYGW")
	if bin == "" || os.Getenv("AWS_ACCESS_KEY_ID") == "" {
		t.Skip("SKIPPED: HONE_TEST_VERSITYGW is not set; scripts/test.sh builds the S3 test server (versitygw) " +
			"and sets it. Run the tests through scripts/test.sh to cover a server killed during an upload.")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gateway{bin: bin, data: filepath.Join(t.TempDir(), "data"), addr: l.Addr().String()}
	_ = l.Close()
	if err := os.MkdirAll(filepath.Join(g.data, bucket), 0o755); err != nil {
		t.Fatal(err)
	}
	g.start(t)
	t.Cleanup(g.kill)
	return g
}

// start starts the server and waits until it accepts connections.
func (g *gateway) start(t *testing.T) {
	t.Helper()
	cmd := exec.Command(g.bin, "--port", g.addr, "posix", g.data)
	cmd.Env = append(os.Environ(),
		"ROOT_ACCESS_KEY_ID="+os.Getenv("AWS_ACCESS_KEY_ID"),
		"ROOT_SECRET_ACCESS_KEY="+os.Getenv("AWS_SECRET_ACCESS_KEY"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g.cmd = cmd
	for range 200 {
		if c, err := net.Dial("tcp", g.addr); err == nil {
			_ = c.Close()
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("the S3 server on %s did not come up", g.addr)
}

// kill kills the server (SIGKILL) and waits for it.
func (g *gateway) kill() {
	if g.cmd != nil {
		_ = g.cmd.Process.Kill()
		_ = g.cmd.Wait()
		g.cmd = nil
	}
}

// uploading reports whether the server holds a part of a multipart
// upload in flight to bucket (the client library uploads large files in
// parts).
func (g *gateway) uploading(bucket string) bool {
	found := false
	_ = filepath.WalkDir(filepath.Join(g.data, bucket, ".sgwtmp", "multipart"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// bigSpec is a spec of two trials, x in {1, 2}, two at a time, that
// report for iters iterations, each with a checkpoint, keeping the last
// three: the checkpoint of trial x=1 at iteration big holds a file of mb
// megabytes, all others a few bytes.
func bigSpec(iters, big, mb int) string {
	return fmt.Sprintf(`metric: score
mode: max
search_space:
  x: {grid: [1, 2]}
stop: {training_iteration: %d}
max_concurrent_trials: 2
checkpoint: {num_to_keep: 3}
command:
  - sh
  - -c
  - |
    x=$(printf '%%s' "$HONE_CONFIG" | sed -n 's/.*"x": *\([0-9]*\).*/\1/p')
    i=${HONE_ITERATION:-0}
    if [ -n "$HONE_RESTORE_DIR" ]; then i=$(cat "$HONE_RESTORE_DIR/iter"); fi
    while :; do
      i=$((i+1))
      d="$HONE_STAGING_DIR/c$i"
      mkdir -p "$d" && echo "$i" > "$d/iter"
      if [ "$x$i" = 1%d ]; then dd if=/dev/urandom of="$d/big.bin" bs=1048576 count=%d 2>/dev/null; fi
      echo "HONE_REPORT {\"metrics\":{\"score\":$((x*i))},\"checkpoint\":\"$d\"}"
      sleep 0.2
    done
`, iters, big, mb)
}

// TestS3ServerRestartDuringUpload runs an experiment through the CLI
// against an S3 server of its own, whose trial commits a large
// checkpoint, and SIGKILLs the server while that upload is in flight,
// starting it again on the same port and data directory seconds later:
// the save is retried, the experiment completes with exit 0, every
// registered checkpoint is committed whole (manifest, every file at its
// size) and nothing half-uploaded is left or registered.
func TestS3ServerRestartDuringUpload(t *testing.T) {
	const bucket, iters, big, mb = "hone-restart", 8, 6, 128
	g := newGateway(t, bucket)
	storage := "s3://" + bucket + "/big?endpoint=http://" + g.addr + "&region=us-east-1&use_path_style=true"
	specPath, _ := writeSpec(t, "big", bigSpec(iters, big, mb))
	cmd := s3Binary(t, t.TempDir(), "run", "--storage", storage, specPath)
	cmd.Dir = t.TempDir()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	finished := false
	defer func() {
		if !finished {
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	for !g.uploading(bucket) {
		select {
		case err := <-done:
			finished = true
			t.Fatalf("hone ended before the server saw the large upload: %v\n%s", err, cmd.Stderr)
		case <-time.After(2 * time.Millisecond):
		}
	}
	g.kill()
	// The kill came before the large checkpoint was committed: no manifest
	// stands next to its file yet.
	manifests, _ := filepath.Glob(filepath.Join(g.data, bucket, "big", "big", "*", "checkpoint_*", blob.ManifestName))
	for _, m := range manifests {
		if bigs, _ := filepath.Glob(filepath.Join(filepath.Dir(m), "*", "big.bin")); len(bigs) > 0 {
			t.Fatalf("the large checkpoint %s was committed before the server was killed", filepath.Dir(m))
		}
	}
	// Down long enough for the client library's own retries to give up.
	time.Sleep(3 * time.Second)
	g.start(t)

	select {
	case <-done:
		finished = true
	case <-time.After(3 * time.Minute):
		t.Fatalf("hone did not finish within 3 minutes after the server restarted\n%s", cmd.Stderr)
	}
	out, errOut := output(cmd)
	if code := cmd.ProcessState.ExitCode(); code != exitOK {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	u := expURL(storage, "big")
	st := openS3(t, u)
	e := downloadExperiment(t, st)
	if len(e.Trials) != 2 {
		t.Fatalf("%d trials, want 2", len(e.Trials))
	}
	for _, tr := range e.Trials {
		last, _ := tr.Last()
		if it, _ := last.Value(hone.FieldTrainingIteration); tr.Status != hone.StatusTerminated || it != iters {
			t.Errorf("trial %s: %s at iteration %v, want TERMINATED at %d", tr.ID, tr.Status, it, iters)
		}
		if len(tr.Checkpoints) != 3 {
			t.Errorf("trial %s registers %d checkpoints, want num_to_keep 3", tr.ID, len(tr.Checkpoints))
		}
	}
	sizes := checkBucketCheckpoints(t, rawBucket(t, u), st, e)
	bigs := 0
	for p, files := range sizes {
		if n, ok := files["big.bin"]; ok {
			bigs++
			if n != mb<<20 {
				t.Errorf("%s/big.bin is %d bytes, want %d", p, n, mb<<20)
			}
		}
	}
	if bigs != 1 {
		t.Errorf("%d registered checkpoints hold big.bin, want 1", bigs)
	}
}

// TestS3SpecStorageAndResumeSpec runs an experiment whose spec itself
// says storage: s3://..., interrupts it (SIGINT), and resumes it from an
// empty cache with another spec that changes only max_concurrent_trials:
// the resume notes the change, adopts the new spec and completes, and the
// bucket holds the new spec as spec.yaml with the one before kept as
// spec.1.yaml. Resumes with specs that are refused change no spec in the
// bucket.
func TestS3SpecStorageAndResumeSpec(t *testing.T) {
	storage := s3Storage(t)
	dir := t.TempDir()
	original := []byte("name: respec\nstorage: \"" + storage + "\"\n" + shSpec(12, "0.1", ""))
	specPath := filepath.Join(dir, "respec.yaml")
	if err := os.WriteFile(specPath, original, 0o644); err != nil {
		t.Fatal(err)
	}
	u := expURL(storage, "respec")
	cache := t.TempDir()
	cmd := s3Binary(t, cache, "run", specPath)
	cmd.Dir = t.TempDir()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitLines(t, filepath.Join(workDir(t, cache, u), journal.FileName), 12, done)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	<-done
	out, errOut := output(cmd)
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("interrupted run: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitInterrupted, out, errOut)
	}
	if !strings.Contains(errOut, "s3://") || !strings.Contains(errOut, "hone resume '"+blob.Redact(u)+"'") {
		t.Errorf("the run does not say it ran in the bucket, or how to resume from it:\n%s", errOut)
	}

	st := openS3(t, u)
	unfinished := 0
	for _, tr := range downloadExperiment(t, st).Trials {
		if tr.Status != hone.StatusTerminated {
			unfinished++
		}
	}
	if unfinished == 0 {
		t.Fatal("the interrupted run left no unfinished trial in the bucket: nothing for the resume to do")
	}

	write := func(name string, body []byte) string {
		t.Helper()
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Refused specs change nothing in the bucket: one that changes a
	// decision, and one whose plan cannot be built.
	flipped := bytes.Replace(original, []byte("mode: max"), []byte("mode: min"), 1)
	tooBig := append(bytes.Clone(original), []byte("resources: {cpu: 1000000}\n")...)
	for refused, why := range map[string]string{write("flipped.yaml", flipped): "\n  mode", write("big.yaml", tooBig): "cpu"} {
		if code, _, errOut := runS3(t, t.TempDir(), "resume", u, "--spec", refused); code != exitUsage || !strings.Contains(errOut, why) {
			t.Errorf("resume --spec %s: exit %d, want %d naming %q\n%s", filepath.Base(refused), code, exitUsage, why, errOut)
		}
		assertSpecs(t, downloadExperiment(t, st).Dir, original, nil)
	}

	changed := bytes.Replace(original, []byte("max_concurrent_trials: 2\n"), []byte("max_concurrent_trials: 1\n"), 1)
	newPath := write("new.yaml", changed)
	code, out, errOut := runS3(t, t.TempDir(), "resume", u, "--spec", newPath)
	if code != exitOK {
		t.Fatalf("resume --spec: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"  max_concurrent_trials:", newPath + " is now the experiment's spec"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the resume does not say %q:\n%s", want, errOut)
		}
	}
	e := downloadExperiment(t, st)
	for _, tr := range e.Trials {
		if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s: %s", tr.ID, tr.Status)
		}
	}
	assertSpecs(t, e.Dir, changed, [][]byte{original})
}

// TestS3ResumeNotStartedKeepsNoSpec: a resume --spec that never starts
// (the spec describes another experiment, which only the runner can tell
// once the bucket has lost its spec copy) leaves no trace of that spec in
// the bucket: the spec is put back before the last sync, and the files
// it wrote are removed from the bucket too.
func TestS3ResumeNotStartedKeepsNoSpec(t *testing.T) {
	storage := s3Storage(t)
	path, _ := writeSpec(t, "sh", shSpec(3, "0.01", ""))
	if code, out, errOut := runS3(t, t.TempDir(), "run", "--storage", storage, path); code != exitOK {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	u := expURL(storage, "sh")
	b := rawBucket(t, u)
	ctx := context.Background()
	for _, k := range []string{specCopy, originFile} {
		if err := b.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	other, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	other = bytes.Replace(other, []byte("grid: [1, 2, 3]"), []byte("grid: [1, 2, 3, 4]"), 1)
	otherPath := filepath.Join(t.TempDir(), "other.yaml")
	if err := os.WriteFile(otherPath, other, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runS3(t, t.TempDir(), "resume", u, "--spec", otherPath)
	if code == exitOK || !strings.Contains(errOut, "the resume did not start") {
		t.Fatalf("resume with another experiment's spec: exit %d\n%s", code, errOut)
	}
	for _, k := range []string{specCopy, originFile, "spec.1.yaml"} {
		if ok, err := b.Exists(ctx, k); err != nil || ok {
			t.Errorf("after a resume that never started, the bucket has %s: %v, %v", k, ok, err)
		}
	}
}

// objectOf returns the key in b of the object name of the checkpoint cp:
// its manifest, or the file it names.
func objectOf(t *testing.T, b *cblob.Bucket, cp, name string) string {
	t.Helper()
	if name == blob.ManifestName {
		return cp + "/" + name
	}
	raw, err := b.ReadAll(context.Background(), cp+"/"+blob.ManifestName)
	if err != nil {
		t.Fatal(err)
	}
	k, err := blob.FileKey(raw, cp, name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

package remote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/controller"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/store/blob"
)

func TestDirs(t *testing.T) {
	a1, c1 := Dirs("/c", "s3://b/p/exp?region=x")
	a2, _ := Dirs("/c", "s3://b/p/exp?region=x")
	b, _ := Dirs("/c", "s3://b/q/exp?region=x")
	if a1 != a2 || a1 == b {
		t.Errorf("Dirs: %s, %s, %s; want one directory per URL", a1, a2, b)
	}
	if !strings.HasPrefix(a1, "/c/experiments/exp-") || !strings.HasPrefix(c1, "/c/checkpoints/exp-") {
		t.Errorf("Dirs = %s, %s; want them under the cache, named after the experiment", a1, c1)
	}
}

func TestResumeWrites(t *testing.T) {
	rec := func(op, trial string, st hone.Status, dir string) journal.Line {
		return journal.Line{Rec: &controller.Record{Op: op, Trial: trial, Status: st, Dir: dir}}
	}
	result := func(trial string) journal.Line {
		return journal.Line{Event: &hone.Event{Kind: hone.EventResult, TrialID: trial}}
	}
	lines := []journal.Line{
		rec("trial", "a", "", "ta"), rec("trial", "b", "", "tb"), rec("trial", "c", "", "tc"), rec("trial", "d", "", "td"),
		result("a"), result("b"), result("c"),
		rec("status", "a", hone.StatusTerminated, ""),
		{Rec: &controller.Record{Op: runner.OpResultsFlushed}},
		result("b"), // after the last flush: its files may lack it
		rec("status", "b", hone.StatusTerminated, ""),
		rec("status", "c", hone.StatusError, ""),
		rec("status", "d", hone.StatusPaused, ""),
	}
	got := resumeWrites(lines)
	for dir, want := range map[string]bool{"ta": false, "tb": true, "tc": true, "td": true} {
		if got[dir] != want {
			t.Errorf("resumeWrites[%s] = %v, want %v (all: %v)", dir, got[dir], want, got)
		}
	}
}

// open opens an experiment on a file:// bucket with its cache in cache.
func open(t *testing.T, bucket, cache string) *Experiment {
	t.Helper()
	e, err := Open(context.Background(), "file://"+bucket, cache)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRestore: a working copy mirrored to the bucket comes back in an
// empty cache as a resume needs it: the journal with its torn tail cut,
// the spec, the files of the trials that may run again and not the
// others; the lock file and the process records of the old copy are kept.
func TestRestore(t *testing.T) {
	ctx := context.Background()
	bucket := filepath.Join(t.TempDir(), "bucket")
	e := open(t, bucket, t.TempDir())
	var o runner.Options
	if err := e.Start(ctx, &o, t.Logf); err != nil {
		t.Fatal(err)
	}
	if o.Dir != e.Dir || o.Store != e.Store || o.BeforeDelete == nil {
		t.Fatalf("Start set Dir %q, Store %v, BeforeDelete %v; want the working copy, the store and the journal's shipping", o.Dir, o.Store, o.BeforeDelete != nil)
	}
	j := `{"hone_journal":1,"name":"x","seed":1}
{"rec":{"o":"trial","t":"a","dir":"ta"}}
{"rec":{"o":"trial","t":"b","dir":"tb"}}
{"rec":{"o":"ckpt","t":"b","p":"tb/checkpoint_000000"}}
{"rec":{"o":"ckpt","t":"b","p":"tb/checkpoint_000001"}}
{"rec":{"o":"status","t":"a","st":"TERMINATED"}}
{"rec":{"o":"status","t":"b","st":"RUNNING"}}
`
	write(t, filepath.Join(e.Dir, journal.FileName), j+`{"rec":{"o":"tor`)
	write(t, filepath.Join(e.Dir, "spec.yaml"), "metric: x\n")
	write(t, filepath.Join(e.Dir, "ta", "result.json"), "{}\n")
	write(t, filepath.Join(e.Dir, "tb", "result.json"), "{}\n")
	for i, w := range []string{"old", "latest"} {
		staged := filepath.Join(e.Dir, "tb", ".staging", w)
		write(t, filepath.Join(staged, "w"), w)
		if err := e.Store.Commit(ctx, staged, fmt.Sprintf("tb/checkpoint_%06d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	// The bucket holds the complete lines only; add the torn tail as a
	// crash inside a line would leave it, in a segment of its own.
	tail := `{"rec":{"o`
	seg := fmt.Sprintf("%016d-%016d", len(j), len(j)+len(tail))
	if err := os.WriteFile(filepath.Join(bucket, ".journal", seg), []byte(tail), 0o644); err != nil {
		t.Fatal(err)
	}

	other := open(t, bucket, t.TempDir())
	write(t, filepath.Join(other.Dir, LockFile), "1")
	write(t, filepath.Join(other.Dir, ".hone", "procs", "9"), "9")
	write(t, filepath.Join(other.Dir, "stale"), "from before")
	note, err := other.Restore(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(note, "torn") {
		t.Errorf("Restore's note = %q; want it to say the torn line was cut", note)
	}
	got, err := os.ReadFile(filepath.Join(other.Dir, journal.FileName))
	if err != nil || string(got) != j {
		t.Errorf("restored journal = %q, %v; want its complete lines %q", got, err, j)
	}
	// The running trial's latest checkpoint was downloaded with the
	// restore: it is read from the cache even once the bucket lost the
	// file (the manifest is still asked for).
	raw := fileInBucket(t, bucket, "tb/checkpoint_000001", "w")
	if err := os.Remove(raw); err != nil {
		t.Fatal(err)
	}
	if d, err := other.Store.LocalDir(ctx, "tb/checkpoint_000001"); err != nil {
		t.Errorf("the restart's checkpoint was not prefetched: %v", err)
	} else if b, _ := os.ReadFile(filepath.Join(d, "w")); string(b) != "latest" {
		t.Errorf("prefetched checkpoint holds %q", b)
	}
	for p, want := range map[string]bool{"spec.yaml": true, "tb/result.json": true, "ta/result.json": false, "stale": false, LockFile: true, ".hone/procs/9": true} {
		_, err := os.Stat(filepath.Join(other.Dir, filepath.FromSlash(p)))
		if (err == nil) != want {
			t.Errorf("after Restore, %s present = %v, want %v", p, err == nil, want)
		}
	}
}

// TestRunningElsewhere: a fresh heartbeat of a live process refuses a
// restore; one of a process of this host that is gone does not.
func TestRunningElsewhere(t *testing.T) {
	ctx := context.Background()
	bucket := filepath.Join(t.TempDir(), "bucket")
	e := open(t, bucket, t.TempDir())
	host, _ := os.Hostname()
	m, err := e.Store.NewMirror(ctx, e.Dir, blob.MirrorOptions{Journal: journal.FileName, Host: host, PID: os.Getpid(), Every: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	other := open(t, bucket, t.TempDir())
	running, who, err := other.RunningElsewhere(ctx)
	if err != nil || !running || !strings.Contains(who, host) {
		t.Fatalf("RunningElsewhere with a live heartbeat = %v, %q, %v", running, who, err)
	}
	if _, err := other.Restore(ctx, false); !errors.Is(err, ErrRunning) {
		t.Errorf("Restore of a running experiment: %v, want ErrRunning", err)
	}
	// The same heartbeat from a process that has ended.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true: ", err)
	}
	dead, err := e.Store.NewMirror(ctx, e.Dir, blob.MirrorOptions{Journal: journal.FileName, Host: host, PID: cmd.Process.Pid, Every: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := dead.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if running, _, err := other.RunningElsewhere(ctx); err != nil || running {
		t.Errorf("RunningElsewhere with the heartbeat of an ended process = %v, %v; want not running", running, err)
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

// TestSettler: a TERMINATED trial's directory is settled settleAfter file
// syncs after its end was shipped; a live or paused one never is.
func TestSettler(t *testing.T) {
	s := newSettler()
	s.shipped([]byte(`{"rec":{"o":"trial","t":"a","dir":"ta"}}
{"rec":{"o":"trial","t":"b","dir":"tb/sub"}}
{"in":{"k":"result","t":"a"}}
{"rec":{"o":"status","t":"a","st":"RUNNING"}}
{"rec":{"o":"status","t":"b","st":"PAUSED"}}
`), 1)
	s.shipped([]byte(`{"rec":{"o":"status","t":"a","st":"TERMINATED"}}
not json
`), 4)
	for _, c := range []struct {
		dir  string
		pass uint64
		want bool
	}{
		{"ta", 4, false}, {"ta", 4 + settleAfter - 1, false}, {"ta", 4 + settleAfter, true},
		{"tb", 100, false}, {"tc", 100, false},
	} {
		if got := s.settled(c.dir, c.pass); got != c.want {
			t.Errorf("settled(%s, %d) = %v, want %v", c.dir, c.pass, got, c.want)
		}
	}
}

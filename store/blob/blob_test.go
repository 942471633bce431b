package blob

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/store/storetest"
)

// s3URL returns the URL of the real S3 server the test script starts, with
// a fresh random key prefix, or skips the test loudly.
func s3URL(t *testing.T) string { return storetest.S3URL(t, "exp") }

func randomHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// backends are the URLs (one fresh experiment each) of every backend the
// tests run against.
var backends = []struct {
	name string
	url  func(t *testing.T) string
}{
	{"mem", func(t *testing.T) string { return "mem://exp" }},
	{"file", func(t *testing.T) string { return "file://" + filepath.ToSlash(filepath.Join(t.TempDir(), "bucket")) }},
	{"s3", s3URL},
}

// open opens a store at u with a local root and cache of its own.
func open(t *testing.T, u string, opts ...Option) (*Store, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "local")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), u, filepath.Join(t.TempDir(), "cache"), append([]Option{LocalRoot(root)}, opts...)...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, root
}

func TestConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) (hone.Store, string) {
				s, root := open(t, b.url(t))
				return s, root
			})
		})
	}
}

func stage(t *testing.T, root, trial string, tree storetest.Tree) string {
	t.Helper()
	dir := filepath.Join(root, trial, ".staging", "save-"+randomHex())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := tree.Write(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func readTree(t *testing.T, dir string) storetest.Tree {
	t.Helper()
	tr, err := storetest.ReadTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestLocalDirCached: a second LocalDir of a checkpoint downloads nothing
// (its file objects are gone from the bucket, and it still succeeds with
// the full content), and a checkpoint deleted and committed again under
// the same path is downloaded afresh.
func TestLocalDirCached(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s, root := open(t, b.url(t))
			ctx := context.Background()
			tree := storetest.Tree{"model.bin": strings.Repeat("m", 10000), "sub/x": "x", "empty": ""}
			const cp = "trial_a/checkpoint_000001"
			if err := s.Commit(context.Background(), stage(t, root, "trial_a", tree), cp); err != nil {
				t.Fatal(err)
			}
			dir1, err := s.LocalDir(context.Background(), cp)
			if err != nil {
				t.Fatal(err)
			}
			if got := readTree(t, dir1); !got.Equal(tree) {
				t.Fatalf("first LocalDir holds %v, want %v", got, tree)
			}
			// Remove every file object behind the store's back: only the
			// manifest stays. A second LocalDir that downloaded anything
			// would fail. (The first read the copy the commit left in the
			// cache; TestLocalDirCorrupt covers a download.)
			keys, err := s.listKeys(ctx, cp+"/")
			if err != nil {
				t.Fatal(err)
			}
			removed := 0
			for _, k := range keys {
				if !strings.HasSuffix(k, "/"+ManifestName) {
					if err := s.bucket.Delete(ctx, k); err != nil {
						t.Fatal(err)
					}
					removed++
				}
			}
			if removed != len(tree) {
				t.Fatalf("removed %d file objects, want %d (keys %q)", removed, len(tree), keys)
			}
			dir2, err := s.LocalDir(context.Background(), cp)
			if err != nil {
				t.Fatalf("second LocalDir (nothing left to download): %v", err)
			}
			if dir2 != dir1 {
				t.Errorf("second LocalDir = %s, want the cached %s", dir2, dir1)
			}
			if got := readTree(t, dir2); !got.Equal(tree) {
				t.Errorf("second LocalDir holds %v, want %v", got, tree)
			}

			// Same path, new commit: the cache must not serve the old one.
			if err := s.Delete(context.Background(), cp); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(dir1); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("cached copy survives Delete (err %v)", err)
			}
			tree2 := storetest.Tree{"model.bin": "new"}
			if err := s.Commit(context.Background(), stage(t, root, "trial_a", tree2), cp); err != nil {
				t.Fatal(err)
			}
			dir3, err := s.LocalDir(context.Background(), cp)
			if err != nil {
				t.Fatal(err)
			}
			if got := readTree(t, dir3); !got.Equal(tree2) {
				t.Errorf("LocalDir after recommit holds %v, want %v", got, tree2)
			}
		})
	}
}

// TestLocalDirCorrupt: a file object that does not match the manifest is
// an error, and nothing is cached.
func TestLocalDirCorrupt(t *testing.T) {
	u := "file://" + filepath.ToSlash(filepath.Join(t.TempDir(), "bucket"))
	committer, root := open(t, u)
	const cp = "trial_a/checkpoint_000000"
	if err := committer.Commit(context.Background(), stage(t, root, "trial_a", storetest.Tree{"f": "good"}), cp); err != nil {
		t.Fatal(err)
	}
	// Another machine, whose cache does not hold the commit, downloads it.
	s, _ := open(t, u)
	if err := s.bucket.WriteAll(context.Background(), fileKey(t, s, cp, "f"), []byte("evil"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LocalDir(context.Background(), cp); err == nil || !strings.Contains(err.Error(), "does not match the manifest") {
		t.Fatalf("LocalDir of a corrupt checkpoint: err = %v, want a manifest mismatch", err)
	}
	entries, _ := os.ReadDir(filepath.Join(s.cacheDir, cp))
	if len(entries) != 0 {
		t.Errorf("cache holds %d entries after a failed download, want none", len(entries))
	}
}

// killEnv makes the test binary a helper process that commits a
// checkpoint and is SIGKILLed just before the manifest is written.
const killEnv = "HONE_BLOB_TEST_KILL_BEFORE_MANIFEST"

func TestMain(m *testing.M) {
	if u := os.Getenv(killEnv); u != "" {
		os.Exit(killedCommit(u))
	}
	if u := os.Getenv(multipartEnv); u != "" {
		os.Exit(stuckUpload(u))
	}
	os.Exit(m.Run())
}

// killedCommit commits a checkpoint to the store at u and kills its own
// process with SIGKILL once every file object is written, before the
// manifest: what an upload cut short by a crash leaves.
func killedCommit(u string) int {
	cache, err := os.MkdirTemp("", "hone-blob-kill-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	s, err := Open(context.Background(), u, cache)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	s.beforeManifest = func() {
		_ = os.RemoveAll(cache)
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	staged := os.Getenv(killEnv + "_STAGED")
	err = s.Commit(context.Background(), staged, "trial_a/checkpoint_000002")
	fmt.Fprintln(os.Stderr, "commit returned instead of being killed:", err)
	return 4
}

// TestKilledBeforeManifest: a process killed after uploading every file
// of a checkpoint but before its manifest leaves a leftover that is never
// committed: List reports it as a leftover, LocalDir and Link refuse it,
// a new Commit to the same path replaces it whole, and Delete removes it.
func TestKilledBeforeManifest(t *testing.T) {
	for _, b := range backends {
		if b.name == "mem" {
			continue // a memory bucket does not outlive its process
		}
		t.Run(b.name, func(t *testing.T) {
			u := b.url(t)
			s, root := open(t, u)
			if err := s.Commit(context.Background(), stage(t, root, "trial_a", storetest.Tree{"a": "committed"}), "trial_a/checkpoint_000001"); err != nil {
				t.Fatal(err)
			}
			staged := stage(t, root, "trial_a", storetest.Tree{"model.bin": strings.Repeat("k", 3000), "stale/only-in-killed": "s"})
			cmd := execSelf(t, u, staged)
			err := cmd.Run()
			var ee interface{ Sys() any }
			if !errors.As(err, &ee) {
				t.Fatalf("helper: %v", err)
			}
			if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("helper did not die of SIGKILL: %v", err)
			}
			const killed = "trial_a/checkpoint_000002"
			keys, err := s.listKeys(context.Background(), killed+"/")
			if err != nil || len(keys) != 2 {
				t.Fatalf("objects the killed commit left = %q, %v; want its 2 files", keys, err)
			}
			committed, left, err := s.List(context.Background(), "trial_a")
			if err != nil {
				t.Fatal(err)
			}
			if len(committed) != 1 || committed[0] != "trial_a/checkpoint_000001" {
				t.Errorf("committed = %q, want only trial_a/checkpoint_000001", committed)
			}
			if len(left) < 1 || left[0] != killed {
				t.Errorf("leftovers = %q, want %s first", left, killed)
			}
			if _, err := s.LocalDir(context.Background(), killed); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("LocalDir of the killed commit: err = %v, want fs.ErrNotExist", err)
			}
			if err := s.Link(context.Background(), killed, "trial_b/checkpoint_000000"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Link from the killed commit: err = %v, want fs.ErrNotExist", err)
			}
			// Committing the same index again replaces the leftover whole.
			fresh := storetest.Tree{"model.bin": "fresh"}
			if err := s.Commit(context.Background(), stage(t, root, "trial_a", fresh), killed); err != nil {
				t.Fatalf("Commit over the leftover: %v", err)
			}
			dir, err := s.LocalDir(context.Background(), killed)
			if err != nil {
				t.Fatal(err)
			}
			if got := readTree(t, dir); !got.Equal(fresh) {
				t.Errorf("recommitted checkpoint holds %v, want %v", got, fresh)
			}
			if keys, _ := s.listKeys(context.Background(), killed+"/stale/"); len(keys) != 0 {
				t.Errorf("objects of the killed commit survive the new one: %q", keys)
			}
			// Delete of a leftover removes its objects.
			if err := s.bucket.WriteAll(context.Background(), "trial_a/checkpoint_000003/part", []byte("p"), nil); err != nil {
				t.Fatal(err)
			}
			if err := s.Delete(context.Background(), "trial_a/checkpoint_000003"); err != nil {
				t.Fatal(err)
			}
			if keys, _ := s.listKeys(context.Background(), "trial_a/checkpoint_000003/"); len(keys) != 0 {
				t.Errorf("Delete left objects of the leftover: %q", keys)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	for _, tc := range []struct{ url, want string }{
		{"gs://bucket", `scheme "gs" is not supported (allowed: s3, file, mem)`},
		{"file://", "no directory"},
		{"mem://x", "cache directory is empty"},
	} {
		dir := cache
		if tc.want == "cache directory is empty" {
			dir = ""
		}
		if _, err := Open(ctx, tc.url, dir); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q): err = %v, want %q", tc.url, err, tc.want)
		}
	}
	s, root := open(t, "mem://exp")
	staged := stage(t, root, "trial_a", storetest.Tree{ManifestName: "x"})
	if err := s.Commit(context.Background(), staged, "trial_a/checkpoint_000000"); err == nil || !strings.Contains(err.Error(), "reserves") {
		t.Errorf("Commit of a staged file named %s: err = %v, want a reserved-name error", ManifestName, err)
	}
	if _, err := os.Stat(staged); err != nil {
		t.Errorf("staged directory gone after a failed Commit: %v", err)
	}
}

// TestNoSecretsInErrors: a server that cannot be reached fails Open with
// an error naming the URL, and neither the secret key nor secret-looking
// URL parameters appear in it.
func TestNoSecretsInErrors(t *testing.T) {
	const secret = "sEcReT-4f2a9c"
	t.Setenv("AWS_ACCESS_KEY_ID", "hone-test-id")
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	u := "s3://bucket/exp?endpoint=http://127.0.0.1:1&region=us-east-1&use_path_style=true"
	_, err := Open(context.Background(), u, t.TempDir())
	if err == nil {
		t.Fatal("Open of an unreachable server succeeded")
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error leaks the secret key: %v", err)
	}
	if !strings.Contains(err.Error(), "s3://bucket/exp") {
		t.Errorf("error %q does not name the URL", err)
	}
	r := Redact("s3://user:" + secret + "@bucket/p?endpoint=http://h:1&aws_secret_access_key=" + secret + "&session_token=" + secret)
	if strings.Contains(r, secret) {
		t.Errorf("Redact left the secret in %s", r)
	}
	if !strings.Contains(r, "endpoint=http") {
		t.Errorf("Redact dropped the endpoint: %s", r)
	}
}

type statusErr int

func (e statusErr) Error() string       { return fmt.Sprintf("http %d", int(e)) }
func (e statusErr) HTTPStatusCode() int { return int(e) }

func TestTransient(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("put: %w", syscall.ECONNREFUSED), true},
		{fmt.Errorf("put: %w", syscall.ECONNRESET), true},
		{fmt.Errorf("get: %w", io.ErrUnexpectedEOF), true},
		{fmt.Errorf("put: %w", statusErr(503)), true},
		{fmt.Errorf("put: %w", statusErr(500)), true},
		{fmt.Errorf("put: %w", statusErr(403)), false},
		{fmt.Errorf("put: %w", statusErr(404)), false},
		{context.Canceled, false},
		{errors.New("bad request"), false},
	} {
		if got := Transient(tc.err); got != tc.want {
			t.Errorf("Transient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestRetryTransient: an operation that fails transiently is retried until
// it succeeds; a permanent failure is not retried.
func TestRetryTransient(t *testing.T) {
	s := &Store{retry: Retry{Attempts: 5, Base: 1, Max: 1}}
	calls := 0
	err := s.do(context.Background(), "op", func(context.Context) error {
		calls++
		if calls < 3 {
			return fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Errorf("transient failures: err = %v after %d calls, want success on the 3rd", err, calls)
	}
	calls = 0
	err = s.do(context.Background(), "op", func(context.Context) error {
		calls++
		return statusErr(403)
	})
	if err == nil || calls != 1 {
		t.Errorf("permanent failure: err = %v after %d calls, want failure after 1", err, calls)
	}
	calls = 0
	err = s.do(context.Background(), "op", func(context.Context) error {
		calls++
		return statusErr(503)
	})
	if err == nil || calls != 5 || !strings.Contains(err.Error(), "5 attempts") {
		t.Errorf("lasting transient failure: err = %v after %d calls, want failure after 5", err, calls)
	}
}

// execSelf returns a command running this test binary as the helper that
// commits staged to the store at u and is killed before the manifest.
func execSelf(t *testing.T, u, staged string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), killEnv+"="+u, killEnv+"_STAGED="+staged)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestFailedCommitCleansUp: a Commit whose upload fails part way removes
// the objects it wrote, leaves the staged directory, and commits nothing.
func TestFailedCommitCleansUp(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s, root := open(t, b.url(t))
			s.uploadHook = func(k string, r io.Reader) io.Reader {
				if strings.HasSuffix(k, "/b") {
					return io.MultiReader(io.LimitReader(r, 2), errReader{})
				}
				return r
			}
			const cp = "trial_a/checkpoint_000000"
			staged := stage(t, root, "trial_a", storetest.Tree{"a": "aaaa", "b": "bbbb"})
			err := s.Commit(context.Background(), staged, cp)
			if err == nil || !strings.Contains(err.Error(), "disk read failed") {
				t.Fatalf("Commit with a failing read: err = %v, want the read error", err)
			}
			if keys, err := s.listKeys(context.Background(), cp+"/"); err != nil || len(keys) != 0 {
				t.Errorf("objects left by the failed Commit: %q, %v", keys, err)
			}
			committed, left, err := s.List(context.Background(), "trial_a")
			if err != nil || len(committed) != 0 || len(left) != 1 || !strings.HasSuffix(left[0], filepath.Base(staged)) {
				t.Errorf("List after the failed Commit = %q, %q, %v; want only the staged directory as a leftover", committed, left, err)
			}
		})
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk read failed") }

// TestOpenChecksServer: against the real S3 server, bad credentials and a
// missing bucket fail Open with an error naming the URL, never the secret.
func TestOpenChecksServer(t *testing.T) {
	good := s3URL(t)
	u, err := url.Parse(good)
	if err != nil {
		t.Fatal(err)
	}
	missing := *u
	missing.Host = "no-such-bucket-" + randomHex()
	if _, err := Open(context.Background(), missing.String(), t.TempDir()); err == nil ||
		!strings.Contains(err.Error(), "cannot list the bucket") || !strings.Contains(err.Error(), missing.Host) {
		t.Errorf("Open of a missing bucket: err = %v, want a listing error naming the bucket", err)
	}
	const wrong = "wrong-secret-7c1e"
	t.Setenv("AWS_SECRET_ACCESS_KEY", wrong)
	_, err = Open(context.Background(), good, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "cannot list the bucket") {
		t.Fatalf("Open with a wrong secret key: err = %v, want a listing error", err)
	}
	if strings.Contains(err.Error(), wrong) {
		t.Errorf("error leaks the secret key: %v", err)
	}
	t.Logf("wrong secret: %v", err)
}

// TestRetryCancelled: a cancelled context stops the retries at once,
// whether it was cancelled before the first attempt, during an attempt,
// or during the wait before the next one (here an hour: a store that
// waited it out would hang the test).
func TestRetryCancelled(t *testing.T) {
	s := &Store{retry: Retry{Attempts: 5, Base: time.Hour, Max: time.Hour}}
	transient := fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
	calls := 0
	err := s.do(cancelledCtx(), "op", func(context.Context) error {
		calls++
		return nil
	})
	if !errors.Is(err, context.Canceled) || calls != 0 {
		t.Errorf("cancelled before: err = %v after %d calls, want context.Canceled after none", err, calls)
	}
	for _, during := range []bool{true, false} {
		ctx, cancel := context.WithCancel(context.Background())
		calls = 0
		err = s.do(ctx, "op", func(context.Context) error {
			calls++
			if during {
				cancel()
			} else {
				go cancel() // while do waits to retry (or before)
			}
			return transient
		})
		cancel()
		if !errors.Is(err, context.Canceled) || calls != 1 {
			t.Errorf("cancelled (during the attempt: %v): err = %v after %d calls, want context.Canceled after 1", during, err, calls)
		}
	}
}

func cancelledCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// TestCommitKeepsCachedCopy: the directory a commit uploaded becomes the
// cached copy of that commit, so LocalDir on the same machine reads no
// object but the manifest (a file object deleted in the bucket does not
// matter to it), and Delete removes the copy.
func TestCommitKeepsCachedCopy(t *testing.T) {
	ctx := context.Background()
	s, root := open(t, "mem://exp")
	staged := stage(t, root, "trial_a", storetest.Tree{"w.bin": "weights", "sub/x": "x"})
	if err := s.Commit(ctx, staged, "trial_a/checkpoint_000000"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(staged); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the staged directory is still there after the commit: %v", err)
	}
	if err := s.bucket.Delete(ctx, fileKey(t, s, "trial_a/checkpoint_000000", "w.bin")); err != nil {
		t.Fatal(err)
	}
	dir, err := s.LocalDir(ctx, "trial_a/checkpoint_000000")
	if err != nil {
		t.Fatalf("LocalDir of a checkpoint committed here: %v", err)
	}
	if got := readTree(t, dir); got["w.bin"] != "weights" || got["sub/x"] != "x" {
		t.Errorf("cached copy = %v", got)
	}
	if err := s.Delete(ctx, "trial_a/checkpoint_000000"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the cached copy survived Delete: %v", err)
	}
}

// TestUploadParts: upload_parts in a store URL sets the parts of one file
// that upload at a time, is checked, and does not reach the client
// library (which would refuse an unknown parameter).
func TestUploadParts(t *testing.T) {
	ctx := context.Background()
	for _, bad := range []string{"0", "65", "x"} {
		_, err := Open(ctx, "mem://exp?upload_parts="+bad, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "upload_parts=\""+bad+"\": want a number of parts from 1 to 64") {
			t.Errorf("upload_parts=%s: err = %v", bad, err)
		}
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			u := b.url(t)
			sep := "?"
			if strings.Contains(u, "?") {
				sep = "&"
			}
			s, root := open(t, u+sep+"upload_parts=1")
			if s.uploadParts != 1 {
				t.Fatalf("uploadParts = %d, want 1", s.uploadParts)
			}
			tree := storetest.Tree{"big": strings.Repeat("b", 6<<20)} // more than one part
			if err := s.Commit(ctx, stage(t, root, "trial_a", tree), "trial_a/checkpoint_000000"); err != nil {
				t.Fatal(err)
			}
			// Drop the copy the commit cached, so LocalDir downloads.
			if err := os.RemoveAll(filepath.Join(s.cacheDir, "trial_a")); err != nil {
				t.Fatal(err)
			}
			dir, err := s.LocalDir(ctx, "trial_a/checkpoint_000000")
			if err != nil {
				t.Fatal(err)
			}
			if got := readTree(t, dir); !got.Equal(tree) {
				t.Error("the checkpoint uploaded one part at a time reads back different")
			}
		})
	}
}

// fileKey returns the object key of the file f of the committed
// checkpoint cp, from its manifest.
func fileKey(t *testing.T, s *Store, cp, f string) string {
	t.Helper()
	m, err := s.readManifest(context.Background(), cp)
	if err != nil {
		t.Fatal(err)
	}
	return m.key(cp, f)
}

// TestManifestConditional: of two commits racing for one path exactly one
// wins and the winner's files are what the checkpoint holds; a manifest
// write repeated after its answer was lost counts as done, one over
// another commit's manifest fails with fs.ErrExist.
func TestManifestConditional(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s, root := open(t, b.url(t))
			const cp = "trial_a/checkpoint_000000"
			errs := make(chan error, 2)
			for _, v := range []string{"one", "two"} {
				staged := stage(t, root, "trial_a", storetest.Tree{"w": v})
				go func() { errs <- s.Commit(ctx, staged, cp) }()
			}
			var won, lost int
			for range 2 {
				err := <-errs
				switch {
				case err == nil:
					won++
				case errors.Is(err, fs.ErrExist):
					lost++
				default:
					t.Errorf("racing commit: %v", err)
				}
			}
			if won != 1 || lost != 1 {
				t.Fatalf("racing commits: %d won, %d lost; want one each", won, lost)
			}
			if err := os.RemoveAll(s.cacheDir); err != nil {
				t.Fatal(err)
			}
			dir, err := s.LocalDir(ctx, cp)
			if err != nil {
				t.Fatal(err)
			}
			if got := readTree(t, dir)["w"]; got != "one" && got != "two" {
				t.Errorf("the checkpoint holds %q", got)
			}
			m, err := s.readManifest(ctx, cp)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.writeManifest(ctx, cp, m); err != nil {
				t.Errorf("writing the same manifest again (its answer lost): %v", err)
			}
			other := *m
			other.ID = newID()
			if err := s.writeManifest(ctx, cp, &other); !errors.Is(err, fs.ErrExist) {
				t.Errorf("writing another commit's manifest over it: %v, want fs.ErrExist", err)
			}
		})
	}
}

// TestManifestVersion1: a checkpoint in the first layout (files directly
// under its prefix) is still read, linked and deleted.
func TestManifestVersion1(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t, "mem://exp")
	const cp = "trial_a/checkpoint_000000"
	body := "weights"
	sum := sha256.Sum256([]byte(body))
	m := manifest{Version: 1, ID: newID(), Files: []manifestFile{{Path: "w", Size: int64(len(body)), SHA256: hex.EncodeToString(sum[:])}}}
	if err := s.bucket.WriteAll(ctx, cp+"/w", []byte(body), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.writeManifest(ctx, cp, &m); err != nil {
		t.Fatal(err)
	}
	dir, err := s.LocalDir(ctx, cp)
	if err != nil {
		t.Fatal(err)
	}
	if got := readTree(t, dir)["w"]; got != body {
		t.Errorf("LocalDir of a version-1 checkpoint holds %q", got)
	}
	if err := s.Link(ctx, cp, "trial_b/checkpoint_000000"); err != nil {
		t.Fatal(err)
	}
	d2, err := s.LocalDir(ctx, "trial_b/checkpoint_000000")
	if err != nil || readTree(t, d2)["w"] != body {
		t.Errorf("a link of a version-1 checkpoint: %v", err)
	}
	if err := s.Delete(ctx, cp); err != nil {
		t.Fatal(err)
	}
	if keys, _ := s.listKeys(ctx, cp+"/"); len(keys) != 0 {
		t.Errorf("objects left after Delete: %q", keys)
	}
}

// TestUploadsAreLeftovers: what a trial's side committed under its trial's
// upload directory, and a crash kept the runner from linking and deleting,
// is a leftover of that trial for List and ListTree, whatever it holds,
// and Delete removes it; a Mirror never takes it for one of its files.
func TestUploadsAreLeftovers(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s, root := open(t, b.url(t))
			whole := "trial_a/" + hone.UploadDirName + "/aa11"
			if err := s.Commit(ctx, stage(t, root, "trial_a", storetest.Tree{"w.bin": "w"}), whole); err != nil {
				t.Fatal(err)
			}
			if err := s.Commit(ctx, stage(t, root, "trial_a", storetest.Tree{"w.bin": "v"}), "trial_a/checkpoint_000001"); err != nil {
				t.Fatal(err)
			}
			// One cut short: files, no manifest.
			if err := s.bucket.WriteAll(ctx, "trial_a/"+hone.UploadDirName+"/bb22/x/w.bin", []byte("part"), nil); err != nil {
				t.Fatal(err)
			}
			want := []string{"trial_a/" + hone.UploadDirName + "/aa11", "trial_a/" + hone.UploadDirName + "/bb22"}
			committed, leftovers, err := s.List(ctx, "trial_a")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(committed, []string{"trial_a/checkpoint_000001"}) || !slices.Equal(leftovers, want) {
				t.Errorf("List = %v, %v; want [trial_a/checkpoint_000001], %v", committed, leftovers, want)
			}
			tree, err := s.ListTree(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if l := tree["trial_a"]; !slices.Equal(l.Committed, committed) || !slices.Equal(l.Leftovers, want) {
				t.Errorf("ListTree[trial_a] = %+v, want %v, %v", l, committed, want)
			}
			for _, p := range want {
				if err := s.Delete(ctx, p); err != nil {
					t.Fatal(err)
				}
			}
			if _, leftovers, err := s.List(ctx, "trial_a"); err != nil || len(leftovers) != 0 {
				t.Errorf("List after Delete: leftovers %v, %v", leftovers, err)
			}
			if Mirrored("trial_a/"+hone.UploadDirName+"/aa11/w.bin", "j") {
				t.Error("Mirrored takes an upload's file for a mirrored one")
			}
		})
	}
}

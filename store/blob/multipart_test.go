package blob

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// multipartEnv makes the test binary a helper process that streams a
// large file into a checkpoint of the store at its value and blocks for
// ever after 20 MB, in the middle of a multipart upload, until killed.
const multipartEnv = "HONE_BLOB_TEST_MULTIPART"

// blockingReader yields n bytes, then blocks for ever.
type blockingReader struct{ n int }

func (r *blockingReader) Read(p []byte) (int, error) {
	for r.n == 0 {
		time.Sleep(time.Hour) // a timer: the runtime sees no deadlock
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = byte(i)
	}
	r.n -= k
	return k, nil
}

// stuckUpload streams a file that never ends into the store at u.
func stuckUpload(u string) int {
	cache, err := os.MkdirTemp("", "hone-blob-multipart-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	defer os.RemoveAll(cache)
	s, err := Open(context.Background(), u, cache)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	err = s.CommitFiles(context.Background(), "trial_m/checkpoint_000000", func(yield func(string, io.Reader) bool) {
		yield("big.bin", &blockingReader{n: 20 << 20})
	})
	fmt.Fprintln(os.Stderr, "commit returned instead of blocking:", err)
	return 4
}

// uploads returns the multipart uploads in progress under the store's
// prefix, with the number of parts each has.
func uploads(t *testing.T, s *Store) map[string]int {
	t.Helper()
	var client *s3.Client
	if !s.bucket.As(&client) {
		t.Fatal("no S3 client behind an s3:// store")
	}
	ctx := context.Background()
	out, err := client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &s.bucketName, Prefix: &s.prefix})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, up := range out.Uploads {
		parts, err := client.ListParts(ctx, &s3.ListPartsInput{Bucket: &s.bucketName, Key: up.Key, UploadId: up.UploadId})
		if err != nil {
			t.Fatal(err)
		}
		got[*up.Key] = len(parts.Parts)
	}
	return got
}

// TestAbortIncomplete: a process killed in the middle of a multipart
// upload leaves the upload and its parts on the real S3 server, which
// List cannot see; AbortIncomplete aborts it, and the checkpoint can then
// be committed. On file:// and mem:// stores it does nothing.
func TestAbortIncomplete(t *testing.T) {
	for _, b := range backends[:2] {
		s, _ := open(t, b.url(t))
		if n, err := s.AbortIncomplete(context.Background()); n != 0 || err != nil {
			t.Errorf("%s: AbortIncomplete = %d, %v; want 0, nil", b.name, n, err)
		}
	}
	u := s3URL(t)
	s, root := open(t, u)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), multipartEnv+"="+u)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The parts of big.bin, which lies under the commit's own id.
	bigParts := func(ups map[string]int) int {
		n := 0
		for k, parts := range ups {
			if strings.HasPrefix(k, s.prefix+"trial_m/checkpoint_000000/") && strings.HasSuffix(k, "/big.bin") {
				n += parts
			}
		}
		return n
	}
	// Wait (without asserting any duration) until the helper has parts
	// on the server, then kill it.
	deadline := time.Now().Add(2 * time.Minute)
	for bigParts(uploads(t, s)) == 0 {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatal("the helper never had a part uploaded")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	left := uploads(t, s)
	if bigParts(left) == 0 {
		t.Fatalf("no incomplete upload with parts after the kill: %v", left)
	}
	committed, leftovers, err := s.List(context.Background(), "trial_m")
	if err != nil || len(committed) != 0 {
		t.Errorf("List after the kill = %q, %q, %v; want nothing committed", committed, leftovers, err)
	}
	n, err := s.AbortIncomplete(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("AbortIncomplete = %d, %v; want 1 aborted", n, err)
	}
	if left := uploads(t, s); len(left) != 0 {
		t.Errorf("uploads after AbortIncomplete: %v, want none", left)
	}
	if n, err := s.AbortIncomplete(context.Background()); n != 0 || err != nil {
		t.Errorf("second AbortIncomplete = %d, %v; want 0, nil", n, err)
	}
	if err := s.Commit(context.Background(), stage(t, root, "trial_m", map[string]string{"big.bin": "small now"}), "trial_m/checkpoint_000000"); err != nil {
		t.Fatalf("Commit after the abort: %v", err)
	}
}

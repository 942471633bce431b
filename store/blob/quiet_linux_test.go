package blob

import (
	"bytes"
	"context"
	"log"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/hone-tune/hone/store/storetest"
)

// captureStderr runs fn with the process's standard error (file
// descriptor 2, whoever holds it) and the standard logger's output going
// to a file, and returns what was written.
func captureStderr(t *testing.T, fn func()) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved, err := syscall.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(saved)
	if err := syscall.Dup3(int(f.Fd()), 2, 0); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	prev := log.Writer()
	log.SetOutput(&logged)
	func() {
		defer func() {
			log.SetOutput(prev)
			_ = syscall.Dup3(saved, 2, 0)
		}()
		fn()
	}()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + logged.String()
}

// TestS3Quiet: against the real S3 server, opening a store, committing a
// checkpoint and downloading it (LocalDir, whose GETs the client library
// would otherwise warn about: "Response has no supported checksum") write
// nothing to standard error or the standard logger.
func TestS3Quiet(t *testing.T) {
	u := s3URL(t)
	out := captureStderr(t, func() {
		s, root := open(t, u)
		ctx := context.Background()
		tree := storetest.Tree{"model.bin": strings.Repeat("q", 20<<20), "meta": "m"}
		const cp = "trial_q/checkpoint_000000"
		if err := s.Commit(ctx, stage(t, root, "trial_q", tree), cp); err != nil {
			t.Error(err)
			return
		}
		dir, err := s.LocalDir(ctx, cp)
		if err != nil {
			t.Error(err)
			return
		}
		if got := readTree(t, dir); !got.Equal(tree) {
			t.Errorf("LocalDir holds %v, want %v", got, tree)
		}
		if _, _, err := s.List(ctx, "trial_q"); err != nil {
			t.Error(err)
		}
	})
	if out != "" {
		t.Errorf("the store wrote to standard error or the log:\n%s", out)
	}
}

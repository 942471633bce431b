package perf

import (
	"bytes"
	"context"
	neturl "net/url"
	"os"
	"strings"
	"testing"

	cblob "gocloud.dev/blob"
)

// TestSmokeStorage runs the storage shape at smoke sizes on the real S3
// server of $HONE_TEST_S3_URL (scripts/s3server.sh starts one): every
// variant runs, each figure and baseline is a finite positive number with
// samples, the latency run journaled every result the trials reported,
// and nothing is left under the shape's key prefix.
func TestSmokeStorage(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads checkpoints to an S3 server")
	}
	url := os.Getenv(StorageURLEnv)
	if url == "" {
		t.Skip("SKIPPED LOUDLY: no S3 server (" + StorageURLEnv + " unset); run under scripts/s3server.sh (scripts/test.sh does)")
	}
	cfg := SmokeConfig()
	cfg.Dir = t.TempDir()
	cfg.PlotDir = ""
	cfg.StorageURL = url
	cfg.Only = []string{ShapeStorage}
	var out bytes.Buffer
	rows, err := Run(context.Background(), cfg, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, &out)
	}
	text := out.String()
	want := map[string]int{"commit to S3": len(cfg.StorageCommitSizes) * len(cfg.StorageCommitFiles),
		"p99 latency": 1, "exploit copy on S3": len(cfg.StorageLinkSizes), "resume of a finished": 1}
	checkShapeRows(t, ShapeStorage, rows, text, want)
	for _, r := range rows {
		if strings.HasPrefix(r.Name, "p99 latency") && r.Expected <= 0 {
			t.Errorf("%s: counted %d results, want > 0", r.Name, r.Expected)
		}
	}
	if strings.Contains(text, "AWS_SECRET") || (os.Getenv("AWS_SECRET_ACCESS_KEY") != "" && strings.Contains(text, os.Getenv("AWS_SECRET_ACCESS_KEY"))) {
		t.Errorf("output shows a secret:\n%s", text)
	}
	// The shape removed everything it wrote under its prefix.
	prefix := ""
	for line := range strings.Lines(text) {
		if _, rest, ok := strings.Cut(line, "(key prefix "); ok {
			prefix, _, _ = strings.Cut(rest, ")")
		}
	}
	if prefix == "" {
		t.Fatalf("output names no key prefix:\n%s", text)
	}
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	u.Path, u.RawPath = "", ""
	bucket, err := cblob.OpenBucket(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	keys, err := listAll(context.Background(), bucket, prefix+"/")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 0 {
		t.Errorf("%d objects left under %s/, e.g. %s", len(keys), prefix, keys[0])
	}
	if ents, err := os.ReadDir(cfg.Dir); err != nil || len(ents) != 0 {
		t.Errorf("scratch directory not cleaned up: %v, %d entries", err, len(ents))
	}
}

// TestStorageNeedsServer checks that the storage shape without a server
// fails with the way to start one, and that the other shapes do not need
// one.
func TestStorageNeedsServer(t *testing.T) {
	cfg := SmokeConfig()
	cfg.Dir = t.TempDir()
	cfg.PlotDir = ""
	cfg.Only = []string{ShapeStorage}
	_, err := Run(context.Background(), cfg, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), StorageURLEnv) || !strings.Contains(err.Error(), "hone_s3_start") {
		t.Fatalf("Run without a server: %v, want an error naming %s and how to start a server", err, StorageURLEnv)
	}
}

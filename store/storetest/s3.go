package storetest

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path"
	"testing"
)

// S3Env names the environment variable that holds the URL of the real S3
// server the test script starts (scripts/s3server.sh):
// s3://BUCKET?endpoint=...&region=...&use_path_style=true.
const S3Env = "HONE_TEST_S3_URL"

// S3URL returns the URL of the test script's S3 server with a fresh
// random key prefix under sub (sub may be ""), so tests sharing the bucket
// never meet, or skips the test loudly when there is no server.
func S3URL(t testing.TB, sub string) string {
	t.Helper()
	raw := os.Getenv(S3Env)
	if raw == "" {
		t.Skip("SKIPPED: " + S3Env + " is not set; scripts/test.sh builds and starts a real S3 server " +
			"(versitygw) and sets it. Run the tests through scripts/test.sh to cover S3.")
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", S3Env, err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	u.Path = path.Join("/", hex.EncodeToString(b[:]), sub)
	return u.String()
}

package perf

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	cblob "gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob" // s3:// URLs for the by-hand baselines

	"github.com/hone-tune/hone/store/blob"
)

// StorageURLEnv is the environment variable the storage shape takes its S3
// server from by default (scripts/s3server.sh exports it), e.g.
// s3://BUCKET?endpoint=http://127.0.0.1:PORT&region=us-east-1&use_path_style=true.
const StorageURLEnv = "HONE_TEST_S3_URL"

// errNoStorage is the storage shape's error without an S3 server.
var errNoStorage = errors.New("no S3 server: set " + StorageURLEnv + " (or -storage-url) to an s3:// URL; " +
	"from the repository root, `bash -c '. scripts/s3server.sh && hone_s3_start && cd bench && go run ./cmd/perfbench -only storage'` " +
	"starts one and runs the shape")

// s3Run is the storage shape's share of an S3 bucket: a key prefix of its
// own (the bucket may be shared), hone's stores under sub-prefixes of it,
// and the raw bucket under it for the baselines by hand, which use the
// same SDK (gocloud.dev blob over the AWS SDK) as hone's store.
type s3Run struct {
	base   *url.URL // the server's URL, without a path
	prefix string   // e.g. "perfbench-3fa9c2"
	raw    *cblob.Bucket
	cache  string // parent of the stores' cache directories
}

// openS3Run opens a fresh prefix of the bucket at rawURL (any path in the
// URL is kept as the parent of the prefix); caches go under scratch.
func openS3Run(ctx context.Context, rawURL, scratch string) (*s3Run, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "s3" {
		return nil, fmt.Errorf("storage URL %s: want s3://BUCKET?endpoint=...", blob.Redact(rawURL))
	}
	var id [4]byte
	_, _ = rand.Read(id[:])
	prefix := strings.Trim(path.Join(strings.Trim(u.Path, "/"), "perfbench-"+hex.EncodeToString(id[:])), "/")
	base := *u
	base.Path, base.RawPath = "", ""
	b, err := cblob.OpenBucket(ctx, base.String())
	if err != nil {
		return nil, fmt.Errorf("open bucket %s: %w", blob.Redact(base.String()), err)
	}
	r := &s3Run{base: &base, prefix: prefix, raw: cblob.PrefixedBucket(b, prefix+"/"), cache: filepath.Join(scratch, "s3-cache")}
	if _, _, err := r.raw.ListPage(ctx, cblob.FirstPageToken, 1, nil); err != nil {
		_ = r.raw.Close()
		return nil, fmt.Errorf("bucket %s: cannot list it: %w", blob.Redact(base.String()), err)
	}
	return r, nil
}

// url returns the URL of hone's store under sub of the run's prefix.
func (r *s3Run) url(sub string) string {
	u := *r.base
	u.Path = "/" + r.prefix + "/" + sub
	return u.String()
}

// close removes every object under the run's prefix and releases the
// bucket.
func (r *s3Run) close(ctx context.Context) error {
	err := deleteAll(ctx, r.raw, "")
	if cerr := r.raw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("clean up s3 prefix %s: %w", r.prefix, err)
	}
	return nil
}

// The four functions below are the only calls of hone's store API in the
// storage shape (the runner makes its own in the latency measurement).

// openStore opens hone's object store under sub of the run's prefix, with
// its own cache directory; opts are store/blob options (LocalRoot).
func (r *s3Run) openStore(ctx context.Context, sub string, opts ...blob.Option) (*blob.Store, error) {
	st, err := blob.Open(ctx, r.url(sub), filepath.Join(r.cache, sub), opts...)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	return st, nil
}

// handManifest is the manifest object the baselines by hand write last,
// as hone's store does (theirs lists names and sizes; hone's adds each
// file's SHA-256 and a commit identifier).
type handManifest struct {
	Files []handFile `json:"files"`
}

type handFile struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// handManifestName is the name of the baselines' manifest object.
const handManifestName = "manifest.json"

// handUpload uploads the named files of dir under the key prefix k of b,
// one object each (a blob writer fed from the file), then a small
// manifest object listing them: a commit to object storage by hand,
// without hone's checks, checksums or retries.
func handUpload(ctx context.Context, b *cblob.Bucket, dir string, files []string, k string) error {
	var m handManifest
	for _, name := range files {
		n, err := uploadFile(ctx, b, filepath.Join(dir, name), k+"/"+name)
		if err != nil {
			return err
		}
		m.Files = append(m.Files, handFile{Path: name, Size: n})
	}
	mb, err := json.Marshal(&m)
	if err != nil {
		return err
	}
	if err := b.WriteAll(ctx, k+"/"+handManifestName, mb, &cblob.WriterOptions{ContentType: "application/json"}); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	return nil
}

// handUploadChecked is handUpload doing the work hone's store does beyond
// it: it first checks that no manifest exists and lists the prefix (for a
// cut-short earlier upload to remove), and hashes every file with SHA-256
// as it uploads it, listing the checksums in the manifest.
func handUploadChecked(ctx context.Context, b *cblob.Bucket, dir string, files []string, k string) error {
	ok, err := b.Exists(ctx, k+"/"+handManifestName)
	if err != nil {
		return fmt.Errorf("check manifest: %w", err)
	}
	if ok {
		return fmt.Errorf("%s: already committed", k)
	}
	if _, err := listAll(ctx, b, k+"/"); err != nil {
		return err
	}
	type file struct {
		Path   string `json:"path"`
		Size   int64  `json:"size"`
		SHA256 string `json:"sha256"`
	}
	var m struct {
		Files []file `json:"files"`
	}
	for _, name := range files {
		h := sha256.New()
		n, err := uploadFrom(ctx, b, filepath.Join(dir, name), k+"/"+name, h)
		if err != nil {
			return err
		}
		m.Files = append(m.Files, file{Path: name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))})
	}
	mb, err := json.Marshal(&m)
	if err != nil {
		return err
	}
	if err := b.WriteAll(ctx, k+"/"+handManifestName, mb, &cblob.WriterOptions{ContentType: "application/json"}); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	return nil
}

// uploadFile writes the local file p to the object k and returns its size.
func uploadFile(ctx context.Context, b *cblob.Bucket, p, k string) (int64, error) {
	return uploadFrom(ctx, b, p, k, nil)
}

// uploadFrom writes the local file p to the object k, also into tee if
// not nil, and returns its size.
func uploadFrom(ctx context.Context, b *cblob.Bucket, p, k string, tee io.Writer) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var r io.Reader = f
	if tee != nil {
		r = io.TeeReader(f, tee)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := b.NewWriter(wctx, k, nil)
	if err != nil {
		return 0, fmt.Errorf("upload %s: %w", k, err)
	}
	n, err := io.Copy(w, r)
	if err != nil {
		cancel() // abandons the write
		_ = w.Close()
		return 0, fmt.Errorf("upload %s: %w", k, err)
	}
	if err := w.Close(); err != nil {
		return 0, fmt.Errorf("upload %s: %w", k, err)
	}
	return n, nil
}

// handCopy copies every object under the key prefix from to the prefix to
// through the client: each is downloaded (a blob reader) and streamed into
// an upload (a blob writer), no local file between; the object named
// manifest, if any, is copied last. It is what an exploit on object
// storage costs without a server-side copy.
func handCopy(ctx context.Context, b *cblob.Bucket, from, to, manifest string) error {
	keys, err := listAll(ctx, b, from+"/")
	if err != nil {
		return err
	}
	var last []string
	for _, k := range keys {
		rel := strings.TrimPrefix(k, from+"/")
		if rel == manifest {
			last = append(last, rel)
			continue
		}
		if err := streamCopy(ctx, b, k, to+"/"+rel); err != nil {
			return err
		}
	}
	for _, rel := range last {
		if err := streamCopy(ctx, b, from+"/"+rel, to+"/"+rel); err != nil {
			return err
		}
	}
	return nil
}

// streamCopy streams the object src into a new object dst through the
// client.
func streamCopy(ctx context.Context, b *cblob.Bucket, src, dst string) error {
	r, err := b.NewReader(ctx, src, nil)
	if err != nil {
		return fmt.Errorf("download %s: %w", src, err)
	}
	defer r.Close()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := b.NewWriter(wctx, dst, nil)
	if err != nil {
		return fmt.Errorf("upload %s: %w", dst, err)
	}
	if _, err := io.Copy(w, r); err != nil {
		cancel()
		_ = w.Close()
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("upload %s: %w", dst, err)
	}
	return nil
}

// listAll returns the keys of every object under prefix.
func listAll(ctx context.Context, b *cblob.Bucket, prefix string) ([]string, error) {
	var keys []string
	it := b.List(&cblob.ListOptions{Prefix: prefix})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return keys, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", prefix, err)
		}
		if !o.IsDir {
			keys = append(keys, o.Key)
		}
	}
}

// deleteAll deletes every object under prefix.
func deleteAll(ctx context.Context, b *cblob.Bucket, prefix string) error {
	keys, err := listAll(ctx, b, prefix)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := b.Delete(ctx, k); err != nil {
			return fmt.Errorf("delete %s: %w", k, err)
		}
	}
	return nil
}

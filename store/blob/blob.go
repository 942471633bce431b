// Package blob is the checkpoint store for object storage: S3 and
// S3-compatible servers (s3://), a local directory used as a bucket
// (file://), and an in-memory bucket for simulations and tests (mem://).
// It implements hone.Store over gocloud.dev/blob.
//
// # Layout and crash safety
//
// A store lives under a key prefix of a bucket: the path of the URL
// (s3://bucket/PREFIX?...). A checkpoint at the store path
// "trial_x/checkpoint_000003" is a manifest object,
// PREFIX/trial_x/checkpoint_000003/.hone-manifest.json (ManifestName),
// listing every file with its size and CRC-32C and naming the commit, and
// one object per file under PREFIX/trial_x/checkpoint_000003/<commit id>/.
// The manifest is written last, after every file object has been written,
// and only if no manifest exists (a conditional write): a checkpoint is
// committed exactly when its manifest exists, a commit never writes over
// another commit's objects, and of two commits to one path exactly one
// wins. An upload cut short (a killed process, a lost server) leaves
// objects without a manifest; List reports such a prefix as a leftover
// and Delete removes it. (Manifests of version 1, whose files sit directly
// under the checkpoint's prefix, are still read.)
//
// A process killed in the middle of uploading a large file (a multipart
// upload, on S3) also leaves parts on the server that no listing shows;
// AbortIncomplete removes them. A checkpoint can also be committed from a
// stream of files (CommitFiles), uploaded as they are read, with the same
// manifest-last rule.
//
// Executors stage checkpoints on local disk as they do for the local store
// (<local root>/<trial>/.staging/<name>); with the LocalRoot option List
// reports those staged directories as leftovers too, and Delete removes
// them.
//
// # Retries
//
// Every object operation is retried with exponential backoff on transient
// errors (server errors, throttling, refused or reset connections), so a
// server that restarts in the middle of a commit does not fail it. An
// upload is retried from its first byte.
//
// # Local cache
//
// LocalDir downloads a checkpoint into the cache directory, keyed by the
// checkpoint's path and its manifest's commit identifier, so a second
// LocalDir of the same checkpoint downloads nothing, and a checkpoint
// deleted and committed again under the same path is downloaded afresh.
// Commit moves the staged directory it uploaded into the cache as the
// copy of that commit, so a checkpoint restored on the machine that
// committed it is not downloaded at all; Delete removes the cached copy.
package blob

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"iter"
	"maps"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	cblob "gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// URLs
	_ "gocloud.dev/blob/memblob"  // mem:// URLs
	"gocloud.dev/gcerrors"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/redact"
)

// ManifestName is the name of the object, inside a checkpoint's prefix,
// whose presence makes the checkpoint committed. A staged checkpoint may
// not hold a top-level file of this name.
const ManifestName = ".hone-manifest.json"

// ErrBadPath is returned (wrapped) for a path that is empty, absolute, or
// leaves the experiment.
var ErrBadPath = errors.New("path must be relative and inside the experiment")

// Store is a hone.Store over a prefix of a bucket. Its methods may be
// called from several goroutines as long as they work on distinct paths.
type Store struct {
	bucket *cblob.Bucket
	// bucketName and prefix locate the store for the S3 calls gocloud
	// does not make (AbortIncomplete); prefix is "" or ends with "/".
	bucketName string
	prefix     string
	url        string // the URL without secrets, for messages
	cacheDir   string
	localRoot  string
	retry      Retry
	// uploadParts is how many parts of one file upload at a time; 0 is
	// the client library's default.
	uploadParts int
	// Fault injection for tests: uploadHook wraps the reader of each
	// upload attempt; beforeManifest runs just before a manifest is
	// written.
	uploadHook     func(key string, r io.Reader) io.Reader
	beforeManifest func()
}

// The store's optional abilities.
var (
	_ hone.Store         = (*Store)(nil)
	_ hone.FileCommitter = (*Store)(nil)
	_ hone.TopLister     = (*Store)(nil)
	_ hone.TreeLister    = (*Store)(nil)
)

// Retry is the backoff policy around each object operation: at most
// Attempts tries, waiting Base before the second, doubling up to Max.
type Retry struct {
	Attempts int
	Base     time.Duration
	Max      time.Duration
}

// DefaultRetry rides out a server restart of several seconds: 8 tries over
// about 25 seconds of waiting, on top of the client library's own retries.
var DefaultRetry = Retry{Attempts: 8, Base: 200 * time.Millisecond, Max: 8 * time.Second}

// UploadPartsParam is the query parameter of a store URL that sets how
// many parts of one large file upload at a time (1 to 64; default the
// client library's, 5 for S3). Fewer parts use less CPU at once: on a
// machine with few cores, where an upload would keep every core busy,
// upload_parts=1 keeps the other trials' results flowing at some cost in
// upload speed (docs/PERFORMANCE.md, "Object storage").
const UploadPartsParam = "upload_parts"

// Option configures a Store.
type Option func(*Store)

// LocalRoot names the local experiment directory under which executors
// stage checkpoints (<dir>/<trial>/.staging/<name>): List reports what is
// staged there as leftovers, and Delete of such a leftover removes it.
func LocalRoot(dir string) Option { return func(s *Store) { s.localRoot = dir } }

// WithRetry replaces DefaultRetry. Attempts below 1 count as 1.
func WithRetry(r Retry) Option { return func(s *Store) { s.retry = r } }

// Open opens the store at rawURL: s3://BUCKET/PREFIX?endpoint=...&region=...,
// file:///DIR or mem://. Credentials come from the environment as the
// client library finds them (for S3 the standard AWS chain) and never from
// the URL. cacheDir is where LocalDir keeps downloaded checkpoints; Open
// creates it. Open checks that the bucket can be listed, so a wrong
// endpoint, a missing bucket or bad credentials fail here. Errors name the
// URL without its secrets.
func Open(ctx context.Context, rawURL, cacheDir string, opts ...Option) (*Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("blob store: bad URL %s", Redact(rawURL))
	}
	s := &Store{url: Redact(rawURL), cacheDir: cacheDir, retry: DefaultRetry}
	for _, o := range opts {
		o(s)
	}
	if cacheDir == "" {
		return nil, fmt.Errorf("blob store %s: cache directory is empty", s.url)
	}
	if s.cacheDir, err = filepath.Abs(cacheDir); err != nil {
		return nil, fmt.Errorf("blob store %s: %w", s.url, err)
	}
	if q := u.Query(); q.Has(UploadPartsParam) {
		n, err := strconv.Atoi(q.Get(UploadPartsParam))
		if err != nil || n < 1 || n > 64 {
			return nil, fmt.Errorf("blob store %s: %s=%q: want a number of parts from 1 to 64", s.url, UploadPartsParam, q.Get(UploadPartsParam))
		}
		s.uploadParts = n
		q.Del(UploadPartsParam)
		u.RawQuery = q.Encode()
	}
	var prefix string
	switch u.Scheme {
	case "s3", "mem":
		prefix = strings.Trim(path.Clean("/"+u.Path), "/")
		u.Path, u.RawPath = "", ""
	case "file":
		if u.Path == "" {
			return nil, fmt.Errorf("blob store %s: file URL has no directory", s.url)
		}
		if err := os.MkdirAll(u.Path, 0o755); err != nil {
			return nil, fmt.Errorf("blob store %s: %w", s.url, err)
		}
	default:
		return nil, fmt.Errorf("blob store %s: scheme %q is not supported (allowed: s3, file, mem)", s.url, u.Scheme)
	}
	var b *cblob.Bucket
	if u.Scheme == "s3" {
		b, err = openS3(ctx, u)
	} else {
		b, err = cblob.OpenBucket(ctx, u.String())
	}
	if err != nil {
		return nil, fmt.Errorf("blob store %s: %s", s.url, scrub(err.Error(), rawURL))
	}
	if prefix != "" {
		b = cblob.PrefixedBucket(b, prefix+"/")
		s.prefix = prefix + "/"
	}
	s.bucketName = u.Host
	s.bucket = b
	// The start-up check rides out a blip, not an outage: a wrong endpoint
	// is reported within seconds.
	check := &Store{bucket: b, retry: Retry{Attempts: 3, Base: 200 * time.Millisecond, Max: time.Second}}
	if err := check.do(ctx, "list", func(ctx context.Context) error {
		_, _, err := b.ListPage(ctx, cblob.FirstPageToken, 1, nil)
		return err
	}); err != nil {
		_ = b.Close()
		return nil, fmt.Errorf("blob store %s: cannot list the bucket: %s", s.url, scrub(err.Error(), rawURL))
	}
	if err := os.MkdirAll(s.cacheDir, 0o755); err != nil {
		_ = b.Close()
		return nil, fmt.Errorf("blob store %s: %w", s.url, err)
	}
	return s, nil
}

// Close releases the bucket. The store must not be used afterwards.
func (s *Store) Close() error { return s.bucket.Close() }

// URL returns the store's URL without secrets.
func (s *Store) URL() string { return s.url }

// Redact returns rawURL with its user information and the values of
// secret-looking query parameters replaced, for messages and logs.
func Redact(rawURL string) string { return redact.URL(rawURL) }

// scrub removes the raw URL (which may hold secrets) from a message of the
// client library, leaving its redacted form.
func scrub(msg, rawURL string) string {
	if rawURL == "" {
		return msg
	}
	return strings.ReplaceAll(msg, rawURL, Redact(rawURL))
}

// key maps a store path to its clean object key prefix (no trailing
// slash).
func key(p string) (string, error) {
	if p == "" || path.IsAbs(p) || filepath.IsAbs(p) || strings.Contains(p, "\\") {
		return "", fmt.Errorf("%q: %w", p, ErrBadPath)
	}
	c := path.Clean(p)
	if c == "." || !filepath.IsLocal(filepath.FromSlash(c)) {
		return "", fmt.Errorf("%q: %w", p, ErrBadPath)
	}
	return c, nil
}

// manifest is the content of a checkpoint's manifest object.
type manifest struct {
	Version int `json:"version"`
	// ID is unique to one commit or link, so a cache keyed by it never
	// serves another checkpoint that had the same path.
	ID    string         `json:"id"`
	Files []manifestFile `json:"files"`
	// Dirs are the empty directories of the checkpoint.
	Dirs []string `json:"dirs,omitempty"`
}

// manifestVersion is the version of the manifests the store writes: the
// files of a checkpoint are the objects <checkpoint>/<commit id>/<path>.
// Version 1 (files at <checkpoint>/<path>) is still read.
const manifestVersion = 2

// key returns the object key of the file p of the checkpoint k whose
// manifest m is.
func (m *manifest) key(k, p string) string {
	if m.Version == 1 {
		return k + "/" + p
	}
	return k + "/" + m.ID + "/" + p
}

// FileKey returns the object key, relative to the store's prefix, of
// the file named file of the checkpoint at the store path checkpoint,
// whose manifest object holds manifestJSON: for tools and tests that read
// a bucket directly.
func FileKey(manifestJSON []byte, checkpoint, file string) (string, error) {
	var m manifest
	if err := json.Unmarshal(manifestJSON, &m); err != nil {
		return "", fmt.Errorf("manifest: %w", err)
	}
	if m.Version < 1 || m.Version > manifestVersion || m.ID == "" {
		return "", fmt.Errorf("manifest: unknown version %d", m.Version)
	}
	return m.key(path.Clean(checkpoint), file), nil
}

// manifestFile is one file of a checkpoint: its size and checksum, CRC-32C
// (Castagnoli, as S3 offers it; hardware-accelerated, so it costs the
// upload almost nothing) in version 2, SHA-256 in version 1.
type manifestFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	CRC32C string `json:"crc32c,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

// castagnoli is the CRC-32C table.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// newSum returns the checksum the store writes into new manifests.
func newSum() hash.Hash { return crc32.New(castagnoli) }

// verifier returns the checksum f is recorded with and its expected value.
func (f manifestFile) verifier() (hash.Hash, string) {
	if f.SHA256 != "" {
		return sha256.New(), f.SHA256
	}
	return newSum(), f.CRC32C
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// Commit uploads every file of the staged local directory under dest (in
// a sub-prefix of this commit's own), then writes dest's manifest if dest
// has none, which commits it. If dest is already committed the error wraps
// fs.ErrExist and the committed checkpoint is untouched. Objects a
// cut-short earlier upload left under dest stay until dest is deleted. On
// success the staged directory becomes the cached copy of the commit (or
// is removed); on error it is left in place, dest is not committed, and
// what was uploaded is removed as far as the server allows (the rest is a
// leftover).
func (s *Store) Commit(ctx context.Context, staged, dest string) error {
	k, err := key(dest)
	if err != nil {
		return fmt.Errorf("commit checkpoint: %w", err)
	}
	info, err := os.Lstat(staged)
	if err != nil {
		return fmt.Errorf("commit checkpoint %s: staged: %w", dest, err)
	}
	if !info.IsDir() {
		return fmt.Errorf("commit checkpoint %s: staged %s is not a directory", dest, staged)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	files, dirs, err := scan(staged)
	if err != nil {
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	// The files go under this commit's own id, so no upload ever touches
	// another commit's objects, and the manifest, written only if none
	// exists, decides whether this commit is the checkpoint: nothing is
	// asked of the server before the upload.
	m := manifest{Version: manifestVersion, ID: newID(), Dirs: dirs, Files: make([]manifestFile, len(files))}
	err = parallel(ctx, len(files), uploadsAtOnce, func(ctx context.Context, i int) error {
		mf, err := s.upload(ctx, filepath.Join(staged, filepath.FromSlash(files[i])), m.key(k, files[i]))
		mf.Path = files[i]
		m.Files[i] = mf
		return err
	})
	if err != nil {
		s.abandon(ctx, k, &m)
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	if err := s.writeManifest(ctx, k, &m); err != nil {
		s.abandon(ctx, k, &m)
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	// dest is committed. The staged directory holds exactly the bytes
	// uploaded: it becomes the cached copy of this commit, so restoring
	// the checkpoint on this machine downloads nothing. If it cannot (the
	// cache is on another filesystem), it is removed; one that cannot be
	// removed is a leftover, not a failed commit.
	if !s.adopt(staged, k, m.ID) {
		_ = os.RemoveAll(staged)
	}
	return nil
}

// adopt moves the staged directory of the commit id of checkpoint k into
// the cache, as LocalDir would have downloaded it, and reports whether it
// did.
func (s *Store) adopt(staged, k, id string) bool {
	base := filepath.Join(s.cacheDir, filepath.FromSlash(k))
	if err := os.MkdirAll(base, 0o755); err != nil {
		return false
	}
	if err := os.Rename(staged, filepath.Join(base, id)); err != nil {
		return false
	}
	pruneStale(base, id)
	return true
}

// pruneStale removes from the cache directory base of one checkpoint
// path the copies of commits other than id: they are stale.
func pruneStale(base, id string) {
	if entries, err := os.ReadDir(base); err == nil {
		for _, e := range entries {
			if e.Name() != id && !strings.HasPrefix(e.Name(), ".tmp-") {
				_ = os.RemoveAll(filepath.Join(base, e.Name()))
			}
		}
	}
}

// scan returns the regular files (slash paths relative to dir, sorted) and
// the empty directories of the tree dir. Anything else is an error.
func scan(dir string) (files, emptyDirs []string, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			if rel == "." {
				return nil
			}
			entries, err := os.ReadDir(p)
			if err != nil {
				return err
			}
			if len(entries) == 0 {
				emptyDirs = append(emptyDirs, rel)
			}
		case d.Type().IsRegular():
			if rel == ManifestName {
				return fmt.Errorf("staged file %s has a name the store reserves", rel)
			}
			files = append(files, rel)
		default:
			return fmt.Errorf("staged %s is not a regular file or directory", rel)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("scan staged: %w", err)
	}
	return files, emptyDirs, nil
}

// upload writes the local file to the object k, retrying from the start on
// transient errors, and returns its size and checksum.
func (s *Store) upload(ctx context.Context, file, k string) (manifestFile, error) {
	var mf manifestFile
	err := s.do(ctx, "upload "+k, func(ctx context.Context) error {
		f, err := os.Open(file)
		if err != nil {
			return permanent(err)
		}
		defer f.Close()
		mf, err = s.write(ctx, k, f)
		return err
	})
	return mf, err
}

// uploadReader writes what r holds to the object k. A reader that can seek
// is retried from where it started on transient errors; any other reader
// cannot be read again, so its upload is tried once.
func (s *Store) uploadReader(ctx context.Context, k string, r io.Reader) (manifestFile, error) {
	seeker, _ := r.(io.Seeker)
	var start int64
	if seeker != nil {
		var err error
		if start, err = seeker.Seek(0, io.SeekCurrent); err != nil {
			seeker = nil
		}
	}
	var mf manifestFile
	attempt := 0
	err := s.do(ctx, "upload "+k, func(ctx context.Context) error {
		attempt++
		if attempt > 1 {
			if _, err := seeker.Seek(start, io.SeekStart); err != nil {
				return permanent(err)
			}
		}
		var err error
		mf, err = s.write(ctx, k, ctxReader{ctx, r})
		if err != nil && seeker == nil {
			return permanent(err)
		}
		return err
	})
	return mf, err
}

// write makes one attempt at writing r to the object k and returns the
// size and checksum of what it wrote. An error abandons the write.
func (s *Store) write(ctx context.Context, k string, r io.Reader) (manifestFile, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.bucket.NewWriter(wctx, k, &cblob.WriterOptions{MaxConcurrency: s.uploadParts})
	if err != nil {
		return manifestFile{}, err
	}
	h := newSum()
	r = io.TeeReader(r, h)
	if s.uploadHook != nil {
		r = s.uploadHook(k, r)
	}
	n, err := io.Copy(w, r)
	if err != nil {
		cancel() // abandons the write
		_ = w.Close()
		return manifestFile{}, err
	}
	if err := w.Close(); err != nil {
		return manifestFile{}, err
	}
	return manifestFile{Size: n, CRC32C: hex.EncodeToString(h.Sum(nil))}, nil
}

// ctxReader is r that fails with ctx's error once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// CommitFiles commits the checkpoint dest from a stream of files
// (hone.FileCommitter): each file is uploaded straight to its object under
// dest as it is pulled, then the manifest is written last, which commits
// dest. A file whose reader can seek (an *os.File) is retried from its
// start on transient errors; any other reader is read once, so a
// transient error fails the commit (the caller may commit again). If dest
// is already committed the error wraps fs.ErrExist. Objects a cut-short
// earlier upload left under dest are removed first; on error, what was
// uploaded is removed as far as the server allows (the rest is a
// leftover), and dest is not committed.
func (s *Store) CommitFiles(ctx context.Context, dest string, files iter.Seq2[string, io.Reader]) error {
	k, err := key(dest)
	if err != nil {
		return fmt.Errorf("commit checkpoint: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	if err := s.notCommitted(ctx, k); err != nil {
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	m := manifest{Version: manifestVersion, ID: newID()}
	seen := map[string]bool{} // files, and directories (with a trailing slash)
	for name, r := range files {
		err := hone.CheckFileName(name)
		switch {
		case err != nil:
		case name == ManifestName:
			err = fmt.Errorf("file %s has a name the store reserves", name)
		case seen[name] || seen[name+"/"]:
			err = fmt.Errorf("file %s comes twice, or is also a directory", name)
		}
		for d := path.Dir(name); err == nil && d != "."; d = path.Dir(d) {
			if seen[d] {
				err = fmt.Errorf("file %s is inside %s, which is a file", name, d)
			}
			seen[d+"/"] = true
		}
		var mf manifestFile
		if err == nil {
			seen[name] = true
			mf, err = s.uploadReader(ctx, m.key(k, name), r)
		}
		if err != nil {
			s.abandon(ctx, k, &m)
			return fmt.Errorf("commit checkpoint %s: %w", dest, err)
		}
		mf.Path = name
		m.Files = append(m.Files, mf)
	}
	if err := s.writeManifest(ctx, k, &m); err != nil {
		s.abandon(ctx, k, &m)
		return fmt.Errorf("commit checkpoint %s: %w", dest, err)
	}
	return nil
}

func (s *Store) writeManifest(ctx context.Context, k string, m *manifest) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if s.beforeManifest != nil {
		s.beforeManifest()
	}
	err = s.do(ctx, "write manifest", func(ctx context.Context) error {
		return s.bucket.WriteAll(ctx, k+"/"+ManifestName, b, &cblob.WriterOptions{ContentType: "application/json", IfNotExist: true})
	})
	if gcerrors.Code(err) != gcerrors.FailedPrecondition {
		return err
	}
	// A manifest is there: this one, from an attempt whose answer was
	// lost, or another commit's.
	if cur, rerr := s.readManifest(ctx, k); rerr == nil && cur.ID == m.ID {
		return nil
	}
	return fmt.Errorf("%s: %w", k, fs.ErrExist)
}

// readManifest reads the manifest of the checkpoint k; a missing one wraps
// fs.ErrNotExist.
func (s *Store) readManifest(ctx context.Context, k string) (*manifest, error) {
	var b []byte
	err := s.do(ctx, "read manifest", func(ctx context.Context) error {
		var err error
		b, err = s.bucket.ReadAll(ctx, k+"/"+ManifestName)
		return err
	})
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if m.Version < 1 || m.Version > manifestVersion || m.ID == "" || strings.ContainsAny(m.ID, "/\\") {
		return nil, fmt.Errorf("manifest: unknown version %d", m.Version)
	}
	for _, f := range m.Files {
		if _, err := key(f.Path); err != nil {
			return nil, fmt.Errorf("manifest: %w", err)
		}
	}
	for _, d := range m.Dirs {
		if _, err := key(d); err != nil {
			return nil, fmt.Errorf("manifest: %w", err)
		}
	}
	return &m, nil
}

// notCommitted returns nil if the checkpoint k has no manifest, an error
// wrapping fs.ErrExist if it has, or the error that prevented knowing.
func (s *Store) notCommitted(ctx context.Context, k string) error {
	var ok bool
	err := s.do(ctx, "check manifest", func(ctx context.Context) error {
		var err error
		ok, err = s.bucket.Exists(ctx, k+"/"+ManifestName)
		return err
	})
	if err != nil {
		return err
	}
	if ok {
		return fmt.Errorf("%s: %w", k, fs.ErrExist)
	}
	return nil
}

// Link makes dest a copy of the committed checkpoint src with server-side
// copies of its objects, then writes dest's manifest. If src is not
// committed the error wraps fs.ErrNotExist; if dest is, fs.ErrExist.
func (s *Store) Link(ctx context.Context, src, dest string) error {
	from, err := key(src)
	if err != nil {
		return fmt.Errorf("link checkpoint: %w", err)
	}
	to, err := key(dest)
	if err != nil {
		return fmt.Errorf("link checkpoint: %w", err)
	}
	m, err := s.readManifest(ctx, from)
	if err != nil {
		return fmt.Errorf("link checkpoint %s: %w", src, err)
	}
	if err := s.notCommitted(ctx, to); err != nil {
		return fmt.Errorf("link checkpoint %s to %s: %w", src, dest, err)
	}
	n := manifest{Version: manifestVersion, ID: newID(), Files: m.Files, Dirs: m.Dirs}
	err = parallel(ctx, len(m.Files), uploadsAtOnce, func(ctx context.Context, i int) error {
		f := m.Files[i]
		return s.do(ctx, "copy "+f.Path, func(ctx context.Context) error {
			return s.bucket.Copy(ctx, n.key(to, f.Path), m.key(from, f.Path), nil)
		})
	})
	if err != nil {
		s.abandon(ctx, to, &n)
		return fmt.Errorf("link checkpoint %s to %s: %w", src, dest, err)
	}
	if err := s.writeManifest(ctx, to, &n); err != nil {
		s.abandon(ctx, to, &n)
		return fmt.Errorf("link checkpoint %s to %s: %w", src, dest, err)
	}
	return nil
}

// Delete removes the checkpoint or leftover p: the manifest first, so the
// checkpoint stops being committed at once, then its other objects, and
// its cached copy. A leftover staged directory (with LocalRoot) is removed
// from local disk. Deleting a missing path is not an error.
func (s *Store) Delete(ctx context.Context, p string) error {
	k, err := key(p)
	if err != nil {
		return fmt.Errorf("delete checkpoint: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete checkpoint %s: %w", p, err)
	}
	if path.Base(path.Dir(k)) == hone.StagingDirName {
		if s.localRoot == "" {
			return fmt.Errorf("delete checkpoint %s: staged directory, and the store has no local root", p)
		}
		if err := os.RemoveAll(filepath.Join(s.localRoot, filepath.FromSlash(k))); err != nil {
			return fmt.Errorf("delete checkpoint %s: %w", p, err)
		}
		return nil
	}
	err = s.do(ctx, "delete manifest", func(ctx context.Context) error {
		return s.bucket.Delete(ctx, k+"/"+ManifestName)
	})
	if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return fmt.Errorf("delete checkpoint %s: %w", p, err)
	}
	if err := s.removePrefix(ctx, k); err != nil {
		return fmt.Errorf("delete checkpoint %s: %w", p, err)
	}
	if err := os.RemoveAll(filepath.Join(s.cacheDir, filepath.FromSlash(k))); err != nil {
		return fmt.Errorf("delete checkpoint %s: cache: %w", p, err)
	}
	return nil
}

// abandon removes, as far as it can, what a failed Commit or Link of the
// manifest m wrote under k: its manifest, if a write that reported
// failure landed (and it is m's, not another commit's), then its files.
// What it cannot remove stays a leftover for List and Delete. It tries
// each operation once: the failure it follows has usually spent the
// retries already.
func (s *Store) abandon(ctx context.Context, k string, m *manifest) {
	once := *s
	once.retry = Retry{Attempts: 1}
	if cur, err := once.readManifest(ctx, k); err == nil && cur.ID == m.ID {
		_ = once.deleteKeys(ctx, []string{k + "/" + ManifestName})
	}
	_ = once.removePrefix(ctx, k+"/"+m.ID)
}

// uploadsAtOnce is how many files of one checkpoint upload at a time.
const uploadsAtOnce = 4

// removePrefix deletes every object under k/, the manifest (if any) first.
func (s *Store) removePrefix(ctx context.Context, k string) error {
	keys, err := s.listKeys(ctx, k+"/")
	if err != nil {
		return err
	}
	return s.deleteKeys(ctx, keys)
}

// deleteKeys deletes the objects, manifests first: a checkpoint stops
// being committed before any of its files goes. Missing ones are not an
// error.
func (s *Store) deleteKeys(ctx context.Context, keys []string) error {
	slices.SortStableFunc(keys, func(a, b string) int {
		return isManifest(b) - isManifest(a)
	})
	for _, obj := range keys {
		err := s.do(ctx, "delete "+obj, func(ctx context.Context) error {
			return s.bucket.Delete(ctx, obj)
		})
		if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return err
		}
	}
	return nil
}

func isManifest(k string) int {
	if path.Base(k) == ManifestName {
		return 1
	}
	return 0
}

// listKeys returns the keys of every object under prefix.
func (s *Store) listKeys(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	err := s.eachObject(ctx, "list "+prefix, &cblob.ListOptions{Prefix: prefix}, func(o *cblob.ListObject) {
		if !o.IsDir {
			keys = append(keys, o.Key)
		}
	})
	return keys, err
}

// eachObject calls fn for every entry of the listing opts asks for, one
// page at a time, each page read with retries.
func (s *Store) eachObject(ctx context.Context, what string, opts *cblob.ListOptions, fn func(*cblob.ListObject)) error {
	token := cblob.FirstPageToken
	for {
		var page []*cblob.ListObject
		var next []byte
		err := s.do(ctx, what, func(ctx context.Context) error {
			var err error
			page, next, err = s.bucket.ListPage(ctx, token, 1000, opts)
			return err
		})
		if err != nil {
			return err
		}
		for _, o := range page {
			fn(o)
		}
		if len(next) == 0 {
			return nil
		}
		token = next
	}
}

// LocalDir returns a local directory holding the committed checkpoint p,
// downloading it into the cache unless the cache already holds this commit
// of p. If p is not committed the error wraps fs.ErrNotExist. The
// directory's files must not be modified.
func (s *Store) LocalDir(ctx context.Context, p string) (string, error) {
	k, err := key(p)
	if err != nil {
		return "", fmt.Errorf("checkpoint dir: %w", err)
	}
	m, err := s.readManifest(ctx, k)
	if err != nil {
		return "", fmt.Errorf("checkpoint dir %s: %w", p, err)
	}
	base := filepath.Join(s.cacheDir, filepath.FromSlash(k))
	final := filepath.Join(base, m.ID)
	if info, err := os.Stat(final); err == nil && info.IsDir() {
		return final, nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("checkpoint dir %s: %w", p, err)
	}
	tmp, err := os.MkdirTemp(base, ".tmp-")
	if err != nil {
		return "", fmt.Errorf("checkpoint dir %s: %w", p, err)
	}
	if err := s.download(ctx, k, m, tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return "", fmt.Errorf("checkpoint dir %s: %w", p, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		_ = os.RemoveAll(tmp)
		if info, serr := os.Stat(final); serr == nil && info.IsDir() {
			return final, nil // another caller cached it first
		}
		return "", fmt.Errorf("checkpoint dir %s: %w", p, err)
	}
	pruneStale(base, m.ID)
	return final, nil
}

// Forget removes the cached copy of the checkpoint p (what LocalDir
// downloaded, or a commit left), leaving the checkpoint in the store: for
// a process that will not read it again, such as a cluster node's agent,
// whose cache nothing else cleans.
func (s *Store) Forget(p string) error {
	k, err := key(p)
	if err != nil {
		return fmt.Errorf("forget checkpoint: %w", err)
	}
	if err := os.RemoveAll(filepath.Join(s.cacheDir, filepath.FromSlash(k))); err != nil {
		return fmt.Errorf("forget checkpoint %s: %w", p, err)
	}
	return nil
}

// download writes the files of the manifest m of checkpoint k under dir,
// checking each file's size and checksum.
func (s *Store) download(ctx context.Context, k string, m *manifest, dir string) error {
	for _, d := range m.Dirs {
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755); err != nil {
			return err
		}
	}
	for _, f := range m.Files {
		dst := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		err := s.do(ctx, "download "+f.Path, func(ctx context.Context) error {
			out, err := os.Create(dst)
			if err != nil {
				return permanent(err)
			}
			h, want := f.verifier()
			err = s.bucket.Download(ctx, m.key(k, f.Path), io.MultiWriter(out, h), nil)
			if cerr := out.Close(); err == nil && cerr != nil {
				err = permanent(cerr)
			}
			if err != nil {
				return err
			}
			info, err := os.Stat(dst)
			if err != nil {
				return permanent(err)
			}
			if info.Size() != f.Size || hex.EncodeToString(h.Sum(nil)) != want {
				return permanent(fmt.Errorf("file %s does not match the manifest (size %d, want %d)", f.Path, info.Size(), f.Size))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// List returns the committed checkpoints directly inside trialDir, sorted
// by index, and the leftovers: checkpoint prefixes without a manifest and,
// with LocalRoot, the staged directories of the trial. trialDir "." lists
// the top of the experiment. A missing trialDir has neither.
func (s *Store) List(ctx context.Context, trialDir string) (committed, leftovers []string, err error) {
	rel := path.Clean(trialDir)
	prefix := "checkpoint_"
	if rel != "." {
		k, err := key(trialDir)
		if err != nil {
			return nil, nil, fmt.Errorf("list checkpoints: %w", err)
		}
		rel = k
		prefix = k + "/checkpoint_"
	}
	keys, err := s.listKeys(ctx, prefix)
	if err != nil {
		return nil, nil, fmt.Errorf("list checkpoints %s: %w", trialDir, err)
	}
	type state struct{ manifest bool }
	seen := map[string]*state{}
	for _, obj := range keys {
		rest := strings.TrimPrefix(obj, strings.TrimSuffix(prefix, "checkpoint_"))
		name, sub, ok := strings.Cut(rest, "/")
		if !ok {
			continue
		}
		if _, ok := hone.CheckpointIndex(name); !ok {
			continue
		}
		st := seen[name]
		if st == nil {
			st = &state{}
			seen[name] = st
		}
		if sub == ManifestName {
			st.manifest = true
		}
	}
	type indexed struct {
		i int
		p string
	}
	var cps []indexed
	for name, st := range seen {
		i, _ := hone.CheckpointIndex(name)
		if st.manifest {
			cps = append(cps, indexed{i, path.Join(rel, name)})
		} else {
			leftovers = append(leftovers, path.Join(rel, name))
		}
	}
	slices.SortFunc(cps, func(a, b indexed) int { return cmp.Compare(a.i, b.i) })
	for _, c := range cps {
		committed = append(committed, c.p)
	}
	if rel != "." {
		// What a trial's side committed for the runner to link, which a
		// crash kept the runner from linking and deleting.
		ups, err := s.uploads(ctx, rel)
		if err != nil {
			return nil, nil, fmt.Errorf("list checkpoints %s: %w", trialDir, err)
		}
		leftovers = append(leftovers, ups...)
	}
	slices.Sort(leftovers)
	if s.localRoot != "" {
		staging := filepath.Join(s.localRoot, filepath.FromSlash(rel), hone.StagingDirName)
		entries, err := os.ReadDir(staging)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("list checkpoints %s: %w", trialDir, err)
		}
		for _, e := range entries {
			leftovers = append(leftovers, path.Join(rel, hone.StagingDirName, e.Name()))
		}
	}
	return committed, leftovers, nil
}

// uploads returns the checkpoints under the upload directory of the
// trial directory k (see hone.UploadDirName), committed or not.
func (s *Store) uploads(ctx context.Context, k string) ([]string, error) {
	prefix := k + "/" + hone.UploadDirName + "/"
	var out []string
	err := s.eachObject(ctx, "list uploads", &cblob.ListOptions{Prefix: prefix, Delimiter: "/"}, func(o *cblob.ListObject) {
		if name := strings.TrimSuffix(strings.TrimPrefix(o.Key, prefix), "/"); o.IsDir && name != "" {
			out = append(out, path.Join(k, hone.UploadDirName, name))
		}
	})
	return out, err
}

// permanentError marks an error that retrying cannot cure.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

func permanent(err error) error { return permanentError{err} }

// do runs op, retrying it with backoff while it fails with a transient
// error. A missing object is reported wrapping fs.ErrNotExist.
func (s *Store) do(ctx context.Context, what string, op func(context.Context) error) error {
	delay := s.retry.Base
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		err := op(ctx)
		if err == nil {
			return nil
		}
		if cerr := ctx.Err(); cerr != nil {
			// Cancelled: whatever the operation says, stop at once.
			return fmt.Errorf("%s: %w (%v)", what, cerr, err)
		}
		var pe permanentError
		if errors.As(err, &pe) {
			return pe.err
		}
		if gcerrors.Code(err) == gcerrors.NotFound {
			return notFound{err}
		}
		if attempt >= s.retry.Attempts || !Transient(err) {
			if attempt > 1 {
				return fmt.Errorf("%s: %d attempts: %w", what, attempt, err)
			}
			return fmt.Errorf("%s: %w", what, err)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-t.C:
		}
		delay = min(2*delay, s.retry.Max)
	}
}

// notFound is a missing object: it wraps both the client library's error
// and fs.ErrNotExist.
type notFound struct{ err error }

func (e notFound) Error() string   { return e.err.Error() }
func (e notFound) Unwrap() []error { return []error{e.err, fs.ErrNotExist} }

// Transient reports whether err is worth retrying: a server error,
// throttling, a timeout, or a refused, reset or cut connection.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	switch gcerrors.Code(err) {
	case gcerrors.Internal, gcerrors.ResourceExhausted, gcerrors.DeadlineExceeded:
		return true
	case gcerrors.NotFound, gcerrors.PermissionDenied, gcerrors.InvalidArgument,
		gcerrors.AlreadyExists, gcerrors.FailedPrecondition, gcerrors.Unimplemented:
		return false
	}
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) {
		if c := status.HTTPStatusCode(); c >= 500 || c == 429 || c == 408 {
			return true
		}
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	// The AWS client reports a request that ran out of its own attempts
	// with the cause only in the text when the cause is not wrapped.
	msg := err.Error()
	for _, s := range []string{"connection refused", "connection reset", "broken pipe", "exceeded maximum number of attempts", "unexpected EOF"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// ListTree returns what List reports for every trial directory
// (hone.TreeLister), from one listing of every object under the store's
// prefix and, with LocalRoot, the staging directories under the local
// root.
func (s *Store) ListTree(ctx context.Context) (map[string]hone.Listing, error) {
	keys, err := s.listKeys(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", s.url, err)
	}
	type state struct{ manifest bool }
	type trial struct {
		cps     map[string]*state // checkpoint name -> state
		uploads map[string]bool   // upload paths
	}
	trials := map[string]*trial{}
	for _, k := range keys {
		parts := strings.Split(k, "/")
		// The checkpoint is the first element that names one, with
		// something under it.
		for i := 1; i < len(parts)-1; i++ {
			if parts[i] == hone.UploadDirName && i < len(parts)-2 {
				// A trial side's upload: a leftover, whatever it holds.
				dir := path.Join(parts[:i]...)
				tr := trials[dir]
				if tr == nil {
					tr = &trial{cps: map[string]*state{}}
					trials[dir] = tr
				}
				if tr.uploads == nil {
					tr.uploads = map[string]bool{}
				}
				tr.uploads[path.Join(dir, parts[i], parts[i+1])] = true
				break
			}
			if _, ok := hone.CheckpointIndex(parts[i]); !ok {
				continue
			}
			dir := path.Join(parts[:i]...)
			tr := trials[dir]
			if tr == nil {
				tr = &trial{cps: map[string]*state{}}
				trials[dir] = tr
			}
			st := tr.cps[parts[i]]
			if st == nil {
				st = &state{}
				tr.cps[parts[i]] = st
			}
			if i == len(parts)-2 && parts[i+1] == ManifestName {
				st.manifest = true
			}
			break
		}
	}
	out := make(map[string]hone.Listing, len(trials))
	for dir, tr := range trials {
		var l hone.Listing
		names := slices.SortedFunc(maps.Keys(tr.cps), func(a, b string) int {
			i, _ := hone.CheckpointIndex(a)
			j, _ := hone.CheckpointIndex(b)
			return cmp.Compare(i, j)
		})
		for _, n := range names {
			if tr.cps[n].manifest {
				l.Committed = append(l.Committed, path.Join(dir, n))
			} else {
				l.Leftovers = append(l.Leftovers, path.Join(dir, n))
			}
		}
		for u := range tr.uploads {
			l.Leftovers = append(l.Leftovers, u)
		}
		slices.Sort(l.Leftovers)
		out[dir] = l
	}
	if s.localRoot == "" {
		return out, nil
	}
	entries, err := os.ReadDir(s.localRoot)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list %s: %w", s.localRoot, err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		staged, err := os.ReadDir(filepath.Join(s.localRoot, e.Name(), hone.StagingDirName))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", s.localRoot, err)
		}
		l := out[e.Name()]
		for _, st := range staged {
			l.Leftovers = append(l.Leftovers, path.Join(e.Name(), hone.StagingDirName, st.Name()))
		}
		if len(l.Committed)+len(l.Leftovers) > 0 {
			out[e.Name()] = l
		}
	}
	return out, nil
}

// ListTop returns the names at the top of the experiment (hone.TopLister):
// the first path element of every object under the store's prefix, from a
// listing with a delimiter (one entry per trial directory, however many
// objects it holds), and, with LocalRoot, the entries of the local root,
// where staged leftovers live.
func (s *Store) ListTop(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	err := s.eachObject(ctx, "list the top level", &cblob.ListOptions{Delimiter: "/"}, func(o *cblob.ListObject) {
		if name := strings.TrimSuffix(o.Key, "/"); name != "" {
			seen[name] = true
		}
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", s.url, err)
	}
	if s.localRoot != "" {
		entries, err := os.ReadDir(s.localRoot)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("list %s: %w", s.localRoot, err)
		}
		for _, e := range entries {
			seen[e.Name()] = true
		}
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

package blob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	cblob "gocloud.dev/blob"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/journal"
)

// JournalPrefix is the key prefix, under the store's prefix, of the
// journal's segments. A segment is the object
// JournalPrefix+"<start>-<end>" holding the journal's bytes [start, end),
// both offsets zero-padded to 16 decimal digits, so that names sort by
// offset.
const JournalPrefix = ".journal/"

// HeartbeatName is the object a Mirror rewrites at every sync and removes
// when closed, so that readers can tell a live experiment from one whose
// driver stopped (see Heartbeat).
const HeartbeatName = ".hone-heartbeat"

// Heartbeat is the content of the heartbeat object: who mirrors the
// experiment, and when it last synced.
type Heartbeat struct {
	Host string `json:"host"`
	PID  int    `json:"pid"`
	Unix int64  `json:"unix"` // when it was written, in seconds
}

// At is when the heartbeat was written.
func (h Heartbeat) At() time.Time { return time.Unix(h.Unix, 0) }

// ReadHeartbeat returns the experiment's heartbeat, and false if there is
// none (no mirror runs it, or it was closed).
func (s *Store) ReadHeartbeat(ctx context.Context) (Heartbeat, bool, error) {
	var b []byte
	err := s.do(ctx, "read heartbeat", func(ctx context.Context) error {
		var err error
		b, err = s.bucket.ReadAll(ctx, HeartbeatName)
		return err
	})
	if errors.Is(err, fs.ErrNotExist) {
		return Heartbeat{}, false, nil
	}
	if err != nil {
		return Heartbeat{}, false, err
	}
	var h Heartbeat
	if err := json.Unmarshal(b, &h); err != nil {
		return Heartbeat{}, false, fmt.Errorf("heartbeat: %w", err)
	}
	return h, true, nil
}

// compactAbove is the length of the segment chain above which a sync
// merges the newest segments into one (see compact).
const compactAbove = 8

// segment is one journal segment object.
type segment struct {
	start, end int64
}

func (g segment) key() string {
	return fmt.Sprintf("%s%016d-%016d", JournalPrefix, g.start, g.end)
}

// parseSegment parses a segment's key.
func parseSegment(k string) (segment, bool) {
	rest, ok := strings.CutPrefix(k, JournalPrefix)
	if !ok {
		return segment{}, false
	}
	a, b, ok := strings.Cut(rest, "-")
	if !ok || len(a) != 16 || len(b) != 16 {
		return segment{}, false
	}
	start, err1 := strconv.ParseInt(a, 10, 64)
	end, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || start < 0 || end <= start {
		return segment{}, false
	}
	return segment{start, end}, true
}

// chain orders segments into the journal they hold: from offset 0, at each
// offset the segment reaching furthest. It returns the chain and the
// segments not on it (left by a sync or a compaction cut short).
func chain(all []segment) (on, off []segment) {
	slices.SortFunc(all, func(a, b segment) int {
		if a.start != b.start {
			return int(a.start - b.start)
		}
		return int(b.end - a.end)
	})
	var pos int64
	for _, g := range all {
		if g.start == pos && (len(on) == 0 || g.end > pos) {
			on = append(on, g)
			pos = g.end
			continue
		}
		off = append(off, g)
	}
	return on, off
}

// segments lists the journal's segment objects.
func (s *Store) segments(ctx context.Context) ([]segment, error) {
	keys, err := s.listKeys(ctx, JournalPrefix)
	if err != nil {
		return nil, fmt.Errorf("list journal segments: %w", err)
	}
	var all []segment
	for _, k := range keys {
		if g, ok := parseSegment(k); ok {
			all = append(all, g)
		}
	}
	return all, nil
}

// Empty reports whether the store's prefix holds no object at all.
func (s *Store) Empty(ctx context.Context) (bool, error) {
	var page []*cblob.ListObject
	err := s.do(ctx, "list", func(ctx context.Context) error {
		var err error
		page, _, err = s.bucket.ListPage(ctx, cblob.FirstPageToken, 1, nil)
		return err
	})
	if err != nil {
		return false, err
	}
	return len(page) == 0, nil
}

// HasJournal reports whether the store holds an experiment's journal.
func (s *Store) HasJournal(ctx context.Context) (bool, error) {
	all, err := s.segments(ctx)
	if err != nil {
		return false, err
	}
	on, _ := chain(all)
	return len(on) > 0, nil
}

// DownloadJournal writes the journal the store's segments hold to the local
// file dst (created or replaced, and synced): the segments in order from
// offset 0, as far as they reach without a gap. It returns the journal's
// length; a store with no journal is an error wrapping fs.ErrNotExist.
func (s *Store) DownloadJournal(ctx context.Context, dst string) (int64, error) {
	all, err := s.segments(ctx)
	if err != nil {
		return 0, err
	}
	on, _ := chain(all)
	if len(on) == 0 {
		return 0, fmt.Errorf("%s holds no journal: %w", s.url, fs.ErrNotExist)
	}
	f, err := os.Create(dst)
	if err != nil {
		return 0, fmt.Errorf("download journal: %w", err)
	}
	var n int64
	for _, g := range on {
		var b []byte
		err := s.do(ctx, "read "+g.key(), func(ctx context.Context) error {
			var err error
			b, err = s.bucket.ReadAll(ctx, g.key())
			return err
		})
		if err == nil && int64(len(b)) != g.end-g.start {
			err = fmt.Errorf("journal segment %s holds %d bytes, not %d", g.key(), len(b), g.end-g.start)
		}
		if err == nil {
			_, err = f.Write(b)
		}
		if err != nil {
			f.Close()
			return 0, fmt.Errorf("download journal: %w", err)
		}
		n += int64(len(b))
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return 0, fmt.Errorf("download journal: %w", err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("download journal: %w", err)
	}
	return n, nil
}

// Mirrored reports whether the local file at rel (slash-separated,
// relative to the experiment directory) is one a Mirror keeps as an
// object of its own: not the journal (kept as segments), not checkpoint,
// staging or upload directories (the store's own), not the experiment's local
// state (.hone), lock file or temporary files.
func Mirrored(rel, journal string) bool {
	if rel == journal || rel == "hone.lock" || rel == HeartbeatName {
		return false
	}
	parts := strings.Split(rel, "/")
	if parts[0] == ".hone" || parts[0] == strings.TrimSuffix(JournalPrefix, "/") {
		return false
	}
	for _, p := range parts {
		if p == hone.StagingDirName || p == hone.UploadDirName || strings.Contains(p, ".tmp-") {
			return false
		}
		if _, ok := hone.CheckpointIndex(p); ok {
			return false
		}
	}
	return true
}

// DownloadFiles downloads mirrored files (see Mirrored) into the local
// directory dir: for each prefix, the files at the top of the experiment
// if it is "", else every file under the directory it names (a trial
// directory, without a trailing slash). It returns how many it
// downloaded.
func (s *Store) DownloadFiles(ctx context.Context, dir, journal string, prefixes []string) (int, error) {
	var keys []string
	for _, p := range prefixes {
		var got []string
		var err error
		if p == "" {
			got, err = s.listTopFiles(ctx)
		} else {
			got, err = s.listKeys(ctx, strings.TrimSuffix(p, "/")+"/")
		}
		if err != nil {
			return 0, fmt.Errorf("list the experiment's files: %w", err)
		}
		for _, k := range got {
			if Mirrored(k, journal) && filepath.IsLocal(filepath.FromSlash(k)) {
				keys = append(keys, k)
			}
		}
	}
	n, err := s.DownloadObjects(ctx, dir, newestSnapshotOnly(keys, journal))
	if err != nil {
		return 0, err
	}
	return n, nil
}

// newestSnapshotOnly drops from keys the journal's snapshots
// (journal.SnapshotOffset) but the newest: a resume restores that one,
// and replays the whole journal if it does not serve.
func newestSnapshotOnly(keys []string, jname string) []string {
	newest := int64(-1)
	for _, k := range keys {
		if off, ok := journal.SnapshotOffset(jname, k); ok && off > newest {
			newest = off
		}
	}
	out := keys[:0:0]
	for _, k := range keys {
		if off, ok := journal.SnapshotOffset(jname, k); ok && off != newest {
			continue
		}
		out = append(out, k)
	}
	return out
}

// listTopFiles lists the objects at the top of the store's prefix, not
// those under a "directory".
func (s *Store) listTopFiles(ctx context.Context) ([]string, error) {
	var keys []string
	err := s.eachObject(ctx, "list", &cblob.ListOptions{Delimiter: "/"}, func(o *cblob.ListObject) {
		if !o.IsDir {
			keys = append(keys, o.Key)
		}
	})
	return keys, err
}

// DownloadObjects downloads the objects with the given keys (paths
// relative to the experiment) into the local directory dir, several at a
// time; a missing object is skipped. It returns how many it downloaded.
func (s *Store) DownloadObjects(ctx context.Context, dir string, keys []string) (int, error) {
	var mu sync.Mutex
	n := 0
	err := parallel(ctx, len(keys), 16, func(ctx context.Context, i int) error {
		k := keys[i]
		if _, err := key(k); err != nil {
			return err
		}
		var b []byte
		err := s.do(ctx, "read "+k, func(ctx context.Context) error {
			var err error
			b, err = s.bucket.ReadAll(ctx, k)
			return err
		})
		if errors.Is(err, fs.ErrNotExist) {
			return nil // deleted since the listing, or never written
		}
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
		mu.Lock()
		n++
		mu.Unlock()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("download the experiment's files: %w", err)
	}
	return n, nil
}

// parallel runs fn(0..n-1), at most width at a time, and returns the
// first error; after an error the remaining calls are not started.
func parallel(ctx context.Context, n, width int, fn func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	next := 0
	for w := 0; w < min(width, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if first != nil || next >= n {
					mu.Unlock()
					return
				}
				i := next
				next++
				mu.Unlock()
				if err := fn(ctx, i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
						cancel()
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// MirrorOptions configure a Mirror.
type MirrorOptions struct {
	// Journal is the journal's file name in the local directory. Required.
	Journal string
	// Every is how often the background loop syncs. Default 1 s.
	Every time.Duration
	// Host and PID name the process mirroring, written with the time into
	// the heartbeat object at every sync.
	Host string
	PID  int
	// Settled, if set, reports whether the top-level directory dir (a
	// trial's) will not change any more, given that pass syncs of the
	// files have been completed so far; the background syncs then leave
	// it out of their walk, so that their cost follows the live trials,
	// not every trial. Close's last sync walks everything.
	Settled func(dir string, pass uint64) bool
	// Shipped, if set, is called with the journal lines of each segment
	// once it is in the bucket, and the number of file syncs completed
	// by then.
	Shipped func(lines []byte, pass uint64)
	// Log receives a line when a background sync fails (it is retried at
	// the next one) and when syncs work again. Default: nothing.
	Log func(format string, args ...any)
}

// Mirror keeps an experiment's objects in step with its local working
// directory: the journal as sealed segments, and every mirrored file (the
// spec copy, the trials' result files and logs) as an object of its own,
// uploaded again whenever it changes and deleted when a file it uploaded
// is removed. Checkpoints are the Store's.
//
// One sync uploads the changed files first and the journal's new complete
// lines second, so every journal line in the bucket refers only to files
// at least as new as it: a journal record that results were flushed to the
// trials' files is never in the bucket before those files are.
type Mirror struct {
	s    *Store
	dir  string
	opts MirrorOptions

	mu      sync.Mutex // guards the fields below
	cond    *sync.Cond
	running bool
	started uint64 // syncs begun
	done    uint64 // syncs ended
	lastErr error  // of the last sync that ended
	closed  bool

	// Owned by the running sync.
	on      []segment // the journal's chain in the bucket
	shipped int64     // bytes of the journal the bucket holds
	files   map[string]stamp
	passes  uint64 // file syncs completed
	failing bool

	stop chan struct{}
	wg   sync.WaitGroup
}

// stamp is what a file looked like when it was last uploaded.
type stamp struct {
	size  int64
	mtime int64
}

// NewMirror returns a mirror of the local experiment directory dir to the
// store. It reads the journal's segments in the bucket and removes those
// beyond the local journal's length, so the bucket's journal is a prefix
// of the local one: call it after the local journal is in its final
// shape for appending (a restored journal cut back to its valid prefix),
// and before anything is appended. Start begins the background syncs.
func (s *Store) NewMirror(ctx context.Context, dir string, opts MirrorOptions) (*Mirror, error) {
	if opts.Journal == "" {
		return nil, errors.New("mirror: no journal file name")
	}
	if opts.Every <= 0 {
		opts.Every = time.Second
	}
	m := &Mirror{s: s, dir: dir, opts: opts, files: map[string]stamp{}, stop: make(chan struct{})}
	m.cond = sync.NewCond(&m.mu)
	var size int64
	if info, err := os.Stat(filepath.Join(dir, opts.Journal)); err == nil {
		size = info.Size()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	all, err := s.segments(ctx)
	if err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	on, off := chain(all)
	var drop []segment
	for i, g := range on {
		if g.end > size {
			drop = append(drop, on[i:]...)
			on = on[:i]
			break
		}
	}
	m.on = on
	if len(on) > 0 {
		m.shipped = on[len(on)-1].end
	}
	for _, g := range append(drop, off...) {
		if err := m.s.deleteKey(ctx, g.key()); err != nil {
			return nil, fmt.Errorf("mirror: remove stale journal segment: %w", err)
		}
	}
	return m, nil
}

// deleteKey deletes one object; a missing one is not an error.
func (s *Store) deleteKey(ctx context.Context, k string) error {
	err := s.do(ctx, "delete "+k, func(ctx context.Context) error { return s.bucket.Delete(ctx, k) })
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// Start begins syncing every opts.Every in the background until Close.
func (m *Mirror) Start() {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		// The first sync comes soon, so that an experiment is resumable
		// from the bucket almost from its start.
		t := time.NewTimer(min(m.opts.Every, 100*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
			}
			t.Reset(m.opts.Every)
			err := m.Sync(context.Background())
			m.mu.Lock()
			was := m.failing
			m.failing = err != nil
			m.mu.Unlock()
			switch {
			case err != nil && !was && m.opts.Log != nil:
				m.opts.Log("storage: syncing the experiment to %s failed (retrying every %s): %v", m.s.url, m.opts.Every, err)
			case err == nil && was && m.opts.Log != nil:
				m.opts.Log("storage: syncing to %s works again", m.s.url)
			}
		}
	}()
}

// Sync uploads what changed in the local directory since the last sync,
// and returns once a sync that began after the call has ended: then every
// journal line and file change made before the call is in the bucket.
// Concurrent calls share syncs.
func (m *Mirror) Sync(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	need := m.started + 1 // a sync that begins after now
	for m.done < need {
		if m.running {
			m.cond.Wait()
			continue
		}
		m.running = true
		m.started++
		gen := m.started
		m.mu.Unlock()
		err := m.sync(ctx)
		m.mu.Lock()
		m.running = false
		m.done = gen
		m.lastErr = err
		m.cond.Broadcast()
	}
	return m.lastErr
}

// Close stops the background syncs and runs a last one.
func (m *Mirror) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	close(m.stop)
	m.wg.Wait()
	return m.Sync(ctx)
}

// Shipped returns how many bytes of the journal the bucket holds.
func (m *Mirror) Shipped() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	for m.running {
		m.cond.Wait()
	}
	return m.shipped
}

// sync is one sync: note the journal's complete length, upload changed
// files, then the journal's new lines as a segment.
func (m *Mirror) sync(ctx context.Context) error {
	jpath := filepath.Join(m.dir, m.opts.Journal)
	end, tail, err := m.completeEnd(jpath)
	if err != nil {
		return err
	}
	if err := m.syncFiles(ctx, m.closing()); err != nil {
		return err
	}
	m.passes++
	if end > m.shipped {
		g := segment{m.shipped, end}
		if err := m.putSegment(ctx, g, tail); err != nil {
			return err
		}
		m.on = append(m.on, g)
		m.shipped = end
		if m.opts.Shipped != nil {
			m.opts.Shipped(tail, m.passes)
		}
	}
	if len(m.on) > compactAbove {
		if err := m.compact(ctx, jpath); err != nil {
			return err
		}
	}
	if m.closing() {
		return m.s.deleteKey(ctx, HeartbeatName)
	}
	b, _ := json.Marshal(Heartbeat{Host: m.opts.Host, PID: m.opts.PID, Unix: time.Now().Unix()})
	return m.s.do(ctx, "write heartbeat", func(ctx context.Context) error {
		return m.s.bucket.WriteAll(ctx, HeartbeatName, b, nil)
	})
}

// closing reports whether Close was called.
func (m *Mirror) closing() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// completeEnd returns the length of the local journal up to its last
// newline and its bytes beyond what was shipped up to there.
func (m *Mirror) completeEnd(jpath string) (int64, []byte, error) {
	f, err := os.Open(jpath)
	if errors.Is(err, fs.ErrNotExist) {
		return m.shipped, nil, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("read journal: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, nil, fmt.Errorf("read journal: %w", err)
	}
	if info.Size() < m.shipped {
		return 0, nil, fmt.Errorf("the local journal %s has %d bytes, fewer than the %d already in the bucket", jpath, info.Size(), m.shipped)
	}
	b := make([]byte, info.Size()-m.shipped)
	if _, err := f.ReadAt(b, m.shipped); err != nil && err != io.EOF {
		return 0, nil, fmt.Errorf("read journal: %w", err)
	}
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 {
		return m.shipped, nil, nil
	}
	return m.shipped + int64(i) + 1, b[:i+1], nil
}

func (m *Mirror) putSegment(ctx context.Context, g segment, b []byte) error {
	err := m.s.do(ctx, "write "+g.key(), func(ctx context.Context) error {
		return m.s.bucket.WriteAll(ctx, g.key(), b, &cblob.WriterOptions{ContentType: "application/x-ndjson"})
	})
	if err != nil {
		return fmt.Errorf("ship journal: %w", err)
	}
	return nil
}

// compact merges the newest segments into one, keeping the chain short:
// starting from the newest, it takes in each older segment no larger than
// the ones taken so far together, as a binary counter carries (and more,
// should the chain still be longer than 2×compactAbove). Sizes then fall
// roughly geometrically along the chain, which stays about logarithmic in
// the journal's length, and each byte is rewritten a logarithmic number of
// times. The merged segment is written before the ones it replaces are
// deleted; a reader takes the longest segment at each offset, so a
// compaction cut short loses nothing.
func (m *Mirror) compact(ctx context.Context, jpath string) error {
	size := func(g segment) int64 { return g.end - g.start }
	k := len(m.on) - 1
	acc := size(m.on[k])
	for k > 0 && (size(m.on[k-1]) <= acc || k > 2*compactAbove-1) {
		k--
		acc += size(m.on[k])
	}
	if k >= len(m.on)-1 {
		return nil
	}
	g := segment{m.on[k].start, m.shipped}
	f, err := os.Open(jpath)
	if err != nil {
		return fmt.Errorf("compact journal: %w", err)
	}
	b := make([]byte, g.end-g.start)
	_, err = f.ReadAt(b, g.start)
	f.Close()
	if err != nil {
		return fmt.Errorf("compact journal: %w", err)
	}
	if err := m.putSegment(ctx, g, b); err != nil {
		return err
	}
	old := slices.Clone(m.on[k:])
	m.on = append(m.on[:k], g)
	for _, o := range old {
		if o == g {
			continue
		}
		if err := m.s.deleteKey(ctx, o.key()); err != nil {
			return fmt.Errorf("compact journal: %w", err)
		}
	}
	return nil
}

// syncFiles uploads every mirrored local file that changed since it was
// last uploaded, in every directory if all, else leaving out the settled
// ones (MirrorOptions.Settled).
func (m *Mirror) syncFiles(ctx context.Context, all bool) error {
	type change struct {
		rel string
		st  stamp
	}
	var todo []change
	seen := make(map[string]bool, len(m.files))
	skipped := map[string]bool{} // settled top-level directories left out
	err := filepath.WalkDir(m.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking
			}
			return err
		}
		if p == m.dir {
			return nil
		}
		rel, err := filepath.Rel(m.dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !Mirrored(rel, m.opts.Journal) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() && !all && m.opts.Settled != nil && !strings.Contains(rel, "/") && m.opts.Settled(rel, m.passes) {
			skipped[rel] = true
			return fs.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		st := stamp{info.Size(), info.ModTime().UnixNano()}
		seen[rel] = true
		if m.files[rel] != st {
			todo = append(todo, change{rel, st})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sync files: %w", err)
	}
	// A file this mirror uploaded and that is gone from the working copy
	// (a spec put back, a trial directory moved aside) goes from the
	// bucket too.
	var gone []string
	for rel := range m.files {
		top, _, _ := strings.Cut(rel, "/")
		if !seen[rel] && !skipped[top] {
			gone = append(gone, rel)
		}
	}
	for _, rel := range gone {
		if err := m.s.deleteKey(ctx, rel); err != nil {
			return fmt.Errorf("sync files: %w", err)
		}
		delete(m.files, rel)
	}
	var mu sync.Mutex
	err = parallel(ctx, len(todo), 8, func(ctx context.Context, i int) error {
		c := todo[i]
		b, err := os.ReadFile(filepath.Join(m.dir, filepath.FromSlash(c.rel)))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		err = m.s.do(ctx, "upload "+c.rel, func(ctx context.Context) error {
			return m.s.bucket.WriteAll(ctx, path.Clean(c.rel), b, nil)
		})
		if err != nil {
			return err
		}
		mu.Lock()
		m.files[c.rel] = c.st
		mu.Unlock()
		return nil
	})
	if err != nil {
		return fmt.Errorf("sync files: %w", err)
	}
	return nil
}

// PutFile uploads the local file at localPath as the object at rel (a
// path relative to the experiment, such as a trial's log), replacing
// what is there, with the store's retries.
func (s *Store) PutFile(ctx context.Context, rel, localPath string) error {
	k, err := key(rel)
	if err != nil {
		return fmt.Errorf("upload %s: %w", rel, err)
	}
	if _, err := s.upload(ctx, localPath, k); err != nil {
		return fmt.Errorf("upload %s: %w", rel, err)
	}
	return nil
}

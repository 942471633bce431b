package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/store/blob"
)

// s3exp is what an experiment on object storage adds: the experiment's
// URL, the harness's own view of the bucket, and the machines (cache
// directory and current directory) its hone runs used. The experiment's
// e.dir is then a local download of what the bucket holds, refreshed
// before every check.
type s3exp struct {
	url      string      // the experiment's URL
	store    *blob.Store // the harness's client of the experiment's prefix
	machines int         // machines made so far
	runCache string      // HONE_CACHE_DIR of the latest hone run
	shipped  []byte      // the bucket's journal when the latest run was judged
}

// s3Base returns the base kind whose spec an object-storage kind runs, or
// "" for a kind on local storage.
func s3Base(kind string) string {
	switch kind {
	case KindPBTS3:
		return KindPBT
	case KindASHAS3:
		return KindASHA
	}
	return ""
}

// baseKind is the kind whose spec and rules an experiment of kind follows.
func baseKind(kind string) string {
	if b := s3Base(kind); b != "" {
		return b
	}
	return kind
}

// runsIn reports whether an experiment of kind runs in round: the
// object-storage kinds take turns, one a round (PBT in odd rounds, ASHA
// in even ones), so that a round adds one experiment on S3.
func runsIn(kind string, round int) bool {
	switch kind {
	case KindPBTS3:
		return round%2 == 1
	case KindASHAS3:
		return round%2 == 0
	}
	return true
}

// s3Storage returns the storage URL for this run's experiments: the
// bucket URL bucketURL with prefix added to its path.
func s3Storage(bucketURL, prefix string) (string, error) {
	u, err := url.Parse(bucketURL)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return "", fmt.Errorf("HONE_TEST_S3_URL %q is not an s3://BUCKET?... URL", blob.Redact(bucketURL))
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + prefix
	u.RawPath = ""
	return u.String(), nil
}

// joinURL adds name to the path of the storage URL u.
func joinURL(u, name string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	p.Path = strings.TrimSuffix(p.Path, "/") + "/" + name
	p.RawPath = ""
	return p.String()
}

// checkS3 opens the store at the run's storage URL, so that a server that
// cannot be reached is a harness error before any experiment.
func (h *harness) checkS3() error {
	st, err := blob.Open(context.Background(), h.s3Storage, filepath.Join(h.cfg.Work, "s3cache", "check"))
	if err != nil {
		return fmt.Errorf("the S3 server of HONE_TEST_S3_URL: %w", err)
	}
	return st.Close()
}

// target is what hone run's successors take to name the experiment: its
// directory, or its URL on object storage.
func (e *exp) target() string {
	if e.s3 != nil {
		return e.s3.url
	}
	return e.dir
}

// machine returns a fresh cache directory and current directory for one
// hone process of an experiment on object storage: each run and resume
// sees the experiment as a machine that never ran it would.
func (e *exp) machine() (cache, cwd string, err error) {
	e.s3.machines++
	base := filepath.Join(e.h.cfg.Work, "m", fmt.Sprintf("%s.%d", e.name, e.s3.machines))
	cache, cwd = filepath.Join(base, "cache"), filepath.Join(base, "cwd")
	for _, d := range []string{cache, cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", "", err
		}
	}
	return cache, cwd, nil
}

// onMachine sets up cmd to run on a fresh machine (see machine) when the
// experiment is on object storage; it returns the cache directory, or "".
func (e *exp) onMachine(cmd *exec.Cmd) (string, error) {
	if e.s3 == nil {
		return "", nil
	}
	cache, cwd, err := e.machine()
	if err != nil {
		return "", err
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, "HONE_CACHE_DIR="+cache)
	cmd.Dir = cwd
	return cache, nil
}

// waitJournal waits until the bucket holds the experiment's journal or
// the run ends. A run killed before its first sync leaves nothing to
// resume (docs/STORAGE.md); the first fault comes after it.
func (e *exp) waitJournal(r *run) {
	for {
		if ok, err := e.s3.store.HasJournal(context.Background()); err == nil && ok {
			return
		}
		if r.exited(50 * time.Millisecond) {
			return
		}
	}
}

// pull replaces e.dir with what the bucket holds of the experiment: its
// journal and the files at its top (the spec copies), and with full the
// files of every trial too.
func (e *exp) pull(full bool) error {
	ctx := context.Background()
	if err := os.RemoveAll(e.dir); err != nil {
		return err
	}
	if err := os.MkdirAll(e.dir, 0o755); err != nil {
		return err
	}
	jp := filepath.Join(e.dir, journal.FileName)
	if _, err := e.s3.store.DownloadJournal(ctx, jp); err != nil {
		return fmt.Errorf("download the bucket's journal: %w", err)
	}
	prefixes := []string{""}
	if full {
		j, err := journal.Read(jp)
		if err != nil {
			return fmt.Errorf("read the bucket's journal: %w", err)
		}
		for _, l := range j.Lines {
			if l.Rec != nil && l.Rec.Op == "trial" {
				prefixes = append(prefixes, path.Clean(filepath.ToSlash(l.Rec.Dir)))
			}
		}
	}
	if _, err := e.s3.store.DownloadFiles(ctx, e.dir, journal.FileName, prefixes); err != nil {
		return fmt.Errorf("download the experiment's files: %w", err)
	}
	return nil
}

// refresh makes e.dir show the experiment as it now is: for object
// storage, a full download of the bucket.
func (e *exp) refresh() error {
	if e.s3 == nil {
		return nil
	}
	return e.pull(true)
}

// bucketJournal returns the journal the bucket holds ("" if none).
func (e *exp) bucketJournal() ([]byte, error) {
	tmp, err := os.MkdirTemp(e.h.cfg.Work, "journal-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	p := filepath.Join(tmp, journal.FileName)
	if _, err := e.s3.store.DownloadJournal(context.Background(), p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	return os.ReadFile(p)
}

// localJournal returns the journal of the working copy the latest run
// kept under its cache directory, and false if it made none.
func (e *exp) localJournal() ([]byte, bool, error) {
	m, _ := filepath.Glob(filepath.Join(e.s3.runCache, "experiments", "*", journal.FileName))
	switch len(m) {
	case 0:
		return nil, false, nil
	case 1:
		b, err := os.ReadFile(m[0])
		return b, err == nil, err
	}
	return nil, false, fmt.Errorf("%d working copies in the fresh cache %s: %v", len(m), e.s3.runCache, m)
}

// checkWindow checks, once a hone run on object storage has ended, what
// docs/STORAGE.md says a crash can lose: after a SIGKILL the bucket's
// journal is a byte prefix of the killed run's local journal (or, when
// the run was killed before it journaled anything, what the bucket held
// before it); after hone exited by itself, the bucket's journal is the
// local one; the bucket never loses journal it held; and every checkpoint
// the bucket's journal registers and has not deleted is committed in the
// bucket. It leaves the bucket's journal and spec in e.dir, and returns
// the bucket's state, or nil if the bucket holds no journal or it could
// not be read.
func (e *exp) checkWindow(r *run) *state {
	code, sig := r.status()
	// A second stop signal makes hone quit at once, as a kill would.
	killed := sig != 0 || code == 130
	shipped, err := e.bucketJournal()
	if err != nil {
		e.fail("s3-journal-prefix", "after hone %s: %v", r.describe(), err)
		return nil
	}
	before := e.s3.shipped
	e.s3.shipped = shipped
	e.check(bytes.HasPrefix(shipped, before), "s3-journal-kept",
		"after hone %s, the bucket's journal (%d bytes) does not start with the %d bytes it held before that run", r.describe(), len(shipped), len(before))
	local, ok, err := e.localJournal()
	if err != nil {
		e.fail("s3-journal-prefix", "after hone %s: %v", r.describe(), err)
		return nil
	}
	switch {
	case killed:
		prefix := ok && bytes.HasPrefix(local, shipped)
		if e.check(prefix || bytes.Equal(shipped, before), "s3-journal-prefix",
			"after hone %s, the bucket's journal (%d bytes) is not a prefix of the killed run's local journal (%d bytes, found: %v), and not what the bucket held before the run (%d bytes)",
			r.describe(), len(shipped), len(local), ok, len(before)) && prefix {
			lost := bytes.Count(local[len(shipped):], []byte("\n"))
			e.stats.Unshipped = max(e.stats.Unshipped, lost)
			e.h.logf("  the bucket's journal: %d bytes, %d lines behind the killed run's local journal", len(shipped), lost)
		}
	case ok:
		e.check(bytes.Equal(local, shipped), "s3-journal-shipped",
			"hone %s, and the bucket's journal (%d bytes) is not its local journal (%d bytes): the last sync did not ship everything", r.describe(), len(shipped), len(local))
	default:
		e.check(bytes.Equal(shipped, before), "s3-journal-shipped",
			"hone %s without a local journal, yet the bucket's journal changed (%d -> %d bytes)", r.describe(), len(before), len(shipped))
	}
	if len(shipped) == 0 {
		return nil // nothing registered
	}
	if err := e.pull(false); err != nil {
		e.fail("journal", "after hone %s: %v", r.describe(), err)
		return nil
	}
	st, err := readState(e.dir)
	if !e.check(err == nil, "journal", "the bucket's journal after hone %s: %v", r.describe(), err) {
		return nil
	}
	var missing []string
	for _, t := range st.trials {
		if len(t.ckpts) == 0 {
			continue
		}
		committed, err := e.committed(t)
		if err != nil {
			e.fail("s3-checkpoints-committed", "list %s: %v", t.id, err)
			continue
		}
		for p, it := range t.ckpts {
			if !committed[path.Clean(p)] {
				missing = append(missing, fmt.Sprintf("%s (iteration %d)", p, it))
			}
		}
	}
	sort.Strings(missing)
	e.check(len(missing) == 0, "s3-checkpoints-committed",
		"after hone %s, the bucket's journal registers checkpoints the bucket does not hold committed (no manifest): %s", r.describe(), strings.Join(missing, ", "))
	return st
}

// afterRun checks an ended hone run on object storage: checkWindow, then
// checkStatusAfter.
func (e *exp) afterRun(r *run) {
	if st := e.checkWindow(r); st != nil {
		e.checkStatusAfter(r, st)
	}
}

// checkStatusAfter: once a hone run has ended, however it ended, hone
// status reads the experiment from the bucket on a fresh machine, shows
// every trial the bucket's journal holds, and does not say that a hone
// runs it (the one that did is gone: its heartbeat names a process of
// this host that no longer exists, or was removed).
func (e *exp) checkStatusAfter(r *run, st *state) {
	cmd := exec.Command(e.h.cfg.Hone, "status", e.s3.url)
	if _, err := e.onMachine(cmd); err != nil {
		e.fail("status", "%v", err)
		return
	}
	out, err := cmd.CombinedOutput()
	first, _, _ := strings.Cut(string(out), "\n")
	want := fmt.Sprintf(": %d trial", len(st.trials))
	e.check(err == nil && strings.Contains(first, want) && !strings.Contains(string(out), "Running in hone"), "status",
		"after hone %s, hone status of the bucket from an empty cache shows %q (%v; running: %v); the bucket's journal holds %d trials",
		r.describe(), first, err, strings.Contains(string(out), "Running in hone"), len(st.trials))
}

// trialRel returns the trial's directory relative to the experiment,
// slash-separated.
func (e *exp) trialRel(t *trialState) string {
	rel, err := filepath.Rel(e.dir, t.dir)
	if err != nil {
		return t.dir
	}
	return filepath.ToSlash(rel)
}

// committed returns the checkpoints of the trial the bucket holds
// committed (with a manifest).
func (e *exp) committed(t *trialState) (map[string]bool, error) {
	c, _, err := e.s3.store.List(context.Background(), e.trialRel(t))
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, p := range c {
		out[path.Clean(p)] = true
	}
	return out, nil
}

// checkBucketCheckpoints: every checkpoint the bucket's journal names is
// committed in the bucket and downloads whole (LocalDir checks every
// file's size and checksum against the manifest) with the trainer's
// state in it; the bucket holds no half-uploaded checkpoint and no
// committed checkpoint the journal does not name; and once the experiment
// ended, no heartbeat (no hone runs it).
func (e *exp) checkBucketCheckpoints(st *state, ended bool) {
	var missing, extra []string
	for _, t := range st.trials {
		for p, it := range t.ckpts {
			d, err := e.s3.store.LocalDir(context.Background(), p)
			if err == nil {
				_, err = os.Stat(filepath.Join(d, "state.json"))
			}
			if err != nil {
				missing = append(missing, fmt.Sprintf("%s (iteration %d): %v", p, it, err))
			}
		}
		committed, leftovers, err := e.s3.store.List(context.Background(), e.trialRel(t))
		if err != nil {
			e.fail("s3-bucket-clean", "list %s: %v", t.id, err)
			continue
		}
		named := map[string]bool{}
		for p := range t.ckpts {
			named[path.Clean(p)] = true
		}
		for _, p := range committed {
			if !named[p] {
				extra = append(extra, p+" (committed, not named by the journal)")
			}
		}
		for _, p := range leftovers {
			extra = append(extra, p+" (no manifest)")
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	e.check(len(missing) == 0, "checkpoints", "checkpoints the bucket's journal names are not whole in the bucket: %s", strings.Join(missing, "; "))
	e.check(len(extra) == 0, "s3-bucket-clean", "the bucket holds checkpoints the ended experiment does not: %s", strings.Join(extra, ", "))
	if ended {
		_, ok, err := e.s3.store.ReadHeartbeat(context.Background())
		e.check(err == nil && !ok, "s3-bucket-clean", "the ended experiment still has a heartbeat object (%v, %v): hone status would show it running", ok, err)
	}
}

// workLeftovers lists what the latest run's working copy holds of hone's
// temporary directories (see leftovers).
func (e *exp) workLeftovers() []string {
	m, _ := filepath.Glob(filepath.Join(e.s3.runCache, "experiments", "*"))
	var out []string
	for _, d := range m {
		out = append(out, leftovers(d)...)
	}
	return slices.Compact(out)
}

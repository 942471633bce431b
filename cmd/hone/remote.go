package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/controller"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/spec"
	"github.com/hone-tune/hone/store/blob"
)

// storageSchemesHelp says which storage URLs hone accepts, for hone version
// and the help texts.
const storageSchemesHelp = "a local path, file:///abs/path, s3://bucket/prefix?endpoint=URL&region=R&use_path_style=true"

// target is where an experiment lives: a local directory, or an object
// store with a local working directory mirrored to it.
type target struct {
	// dir is the local directory the runner works in: the experiment
	// directory itself for local storage, the working directory for an
	// object store.
	dir string
	// shown names the experiment in messages: dir, or the URL without
	// secrets.
	shown string
	// store and mirror are set for an object store.
	store  *blob.Store
	mirror *blob.Mirror
}

// remote reports whether arg names an object store (s3://...) rather than
// a local directory or file:// URL.
func remote(arg string) bool {
	scheme, _, ok := strings.Cut(arg, "://")
	return ok && slices.Contains(spec.RemoteSchemes, strings.ToLower(scheme))
}

// cacheBase is the directory hone keeps local copies in:
// $HONE_CACHE_DIR, or hone/ under the user's cache directory.
func cacheBase() (string, error) {
	if d := os.Getenv("HONE_CACHE_DIR"); d != "" {
		return filepath.Abs(d)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory (set HONE_CACHE_DIR): %w", err)
	}
	return filepath.Join(d, "hone"), nil
}

// localDirs returns the local working directory and the checkpoint cache
// of the experiment at the object-store URL u: one pair per URL, named
// after the experiment and a hash of the URL.
func localDirs(u string) (work, cache string, err error) {
	base, err := cacheBase()
	if err != nil {
		return "", "", err
	}
	name := "experiment"
	if p, err := url.Parse(u); err == nil && path.Base(p.Path) != "/" && path.Base(p.Path) != "." {
		name = path.Base(p.Path)
	}
	sum := sha256.Sum256([]byte(blob.Redact(u)))
	id := name + "-" + hex.EncodeToString(sum[:6])
	return filepath.Join(base, "experiments", id), filepath.Join(base, "checkpoints", id), nil
}

// openRemote opens the object store of the experiment at u, checking that
// it can be reached: a wrong endpoint, missing bucket or bad credentials
// are a usage error (exit 2) naming the URL without secrets.
func openRemote(ctx context.Context, u string) (*target, error) {
	work, cache, err := localDirs(u)
	if err != nil {
		return nil, withCode(exitFailed, err)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, withCode(exitFailed, fmt.Errorf("create the local working directory: %w", err))
	}
	st, err := blob.Open(ctx, u, cache, blob.LocalRoot(work))
	if err != nil {
		return nil, withCode(exitUsage, fmt.Errorf("storage: %w", err))
	}
	return &target{dir: work, shown: blob.Redact(u), store: st}, nil
}

// close releases the store.
func (t *target) close() {
	if t.store != nil {
		_ = t.store.Close()
	}
}

// clearWork empties the local working directory, but for the lock file
// and the executor's records of trial processes (which a resume reaps).
func (t *target) clearWork() error {
	entries, err := os.ReadDir(t.dir)
	if err != nil {
		return fmt.Errorf("clear the local working directory: %w", err)
	}
	for _, e := range entries {
		if e.Name() == lockFile || e.Name() == ".hone" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(t.dir, e.Name())); err != nil {
			return fmt.Errorf("clear the local working directory: %w", err)
		}
	}
	return nil
}

// checkNotRunning refuses to run an experiment whose heartbeat says
// another hone process runs it: two drivers on one experiment would
// overwrite each other's journal.
func (t *target) checkNotRunning(ctx context.Context) error {
	running, owner, err := t.runningElsewhere(ctx)
	if err != nil {
		return withCode(exitFailed, fmt.Errorf("storage %s: %w", t.shown, err))
	}
	if running {
		return withCode(exitUsage, fmt.Errorf("%s is being run by hone (%s); stop that one first, or, if it crashed on another machine, try again in %s",
			t.shown, owner, heartbeatFresh))
	}
	return nil
}

// runningElsewhere reads the experiment's heartbeat: it is running if the
// heartbeat is younger than heartbeatFresh, unless it names a process of
// this host that no longer exists (a crash here is known at once).
func (t *target) runningElsewhere(ctx context.Context) (bool, string, error) {
	h, ok, err := t.store.ReadHeartbeat(ctx)
	if err != nil || !ok {
		return false, "", err
	}
	age := time.Since(h.At())
	if age >= heartbeatFresh {
		return false, "", nil
	}
	if host, _ := os.Hostname(); host == h.Host && h.PID > 0 && syscall.Kill(h.PID, 0) == syscall.ESRCH {
		return false, "", nil
	}
	return true, fmt.Sprintf("pid %d on %s, last heard of %s ago", h.PID, h.Host, age.Round(time.Second)), nil
}

// restore rebuilds the local working directory from the object store for
// a resume: the journal, cut back to its valid prefix (a corrupt line
// too, if truncate), the spec copies, and the files of every trial the
// resume may write to. It returns a note for the log, or "".
func (t *target) restore(ctx context.Context, truncate bool) (string, error) {
	if err := t.checkNotRunning(ctx); err != nil {
		return "", err
	}
	if err := t.clearWork(); err != nil {
		return "", err
	}
	jp := filepath.Join(t.dir, journal.FileName)
	if _, err := t.store.DownloadJournal(ctx, jp); err != nil {
		return "", fmt.Errorf("restore from %s: %w", t.shown, err)
	}
	j, err := journal.ReadPrefix(jp)
	if err != nil {
		return "", fmt.Errorf("restore from %s: %w", t.shown, err)
	}
	var note string
	switch {
	case j.Corrupt != nil && truncate:
		kept, err := journal.Cut(jp, j.Size)
		if err != nil {
			return "", fmt.Errorf("restore from %s: %w", t.shown, err)
		}
		note = fmt.Sprintf("%v: continuing from the %d lines before it as asked; the lines cut are kept in %s", j.Corrupt, j.Corrupt.Line-1, kept)
	case j.Corrupt == nil && j.Torn:
		if err := os.Truncate(jp, j.Size); err != nil {
			return "", fmt.Errorf("restore from %s: %w", t.shown, err)
		}
		note = "the journal had a torn last line; cut it off"
	}
	prefixes := []string{""} // the spec copies
	for d := range resumeWrites(j.Lines) {
		prefixes = append(prefixes, d)
	}
	_, err = t.store.DownloadFiles(ctx, t.dir, journal.FileName, prefixes)
	if err != nil {
		return "", fmt.Errorf("restore from %s: %w", t.shown, err)
	}
	return note, nil
}

// resumeWrites returns the directories (slash-separated, relative) of the
// trials whose files a resume may read or write: those not TERMINATED
// (they may run again), and those with results the journal holds that
// their files may lack (after the journal's last record that the files
// were flushed; a resume writes them again).
func resumeWrites(lines []journal.Line) map[string]bool {
	from := 0
	for i := len(lines) - 1; i >= 0; i-- {
		if r := lines[i].Rec; r != nil && r.Op == runner.OpResultsFlushed {
			from = i + 1
			break
		}
	}
	dir := map[string]string{}
	status := map[string]hone.Status{}
	late := map[string]bool{}
	for i, l := range lines {
		if r := l.Rec; r != nil {
			switch r.Op {
			case "trial":
				dir[r.Trial] = path.Clean(filepath.ToSlash(r.Dir))
			case "status":
				status[r.Trial] = r.Status
			case "drop":
				delete(dir, r.Trial)
			}
		}
		if in := l.In; in != nil && in.Kind == controller.InResult && i >= from {
			late[in.Trial] = true
		}
	}
	out := map[string]bool{}
	for id, d := range dir {
		if status[id] != hone.StatusTerminated || late[id] {
			out[d] = true
		}
	}
	return out
}

// shippedStore is the experiment's object store with one rule added: a
// checkpoint is deleted only once the journal lines before the delete
// (the record that made it deletable) are in the bucket, so that the
// bucket's journal never registers a checkpoint the bucket lacks.
type shippedStore struct {
	hone.Store
	m *blob.Mirror
}

// Delete ships the journal, then deletes p.
func (s shippedStore) Delete(p string) error {
	if err := s.m.Sync(context.Background()); err != nil {
		return fmt.Errorf("kept %s: the journal could not be shipped first: %w", p, err)
	}
	return s.Store.Delete(p)
}

// startMirror starts mirroring the local working directory to the store.
// The local journal must be in its final shape for appending.
func (t *target) startMirror(ctx context.Context, logf func(string, ...any)) error {
	host, _ := os.Hostname()
	m, err := t.store.NewMirror(ctx, t.dir, blob.MirrorOptions{
		Journal: journal.FileName,
		Host:    host,
		PID:     os.Getpid(),
		Log:     logf,
	})
	if err != nil {
		return fmt.Errorf("storage %s: %w", t.shown, err)
	}
	t.mirror = m
	m.Start()
	return nil
}

// openRemoteExperiment reads the experiment at the object-store URL u for
// status and results: its journal, spec and result files, downloaded into
// a temporary directory that close removes, and its heartbeat. Directories
// in the experiment are shown as URLs.
func openRemoteExperiment(ctx context.Context, u string) (*inspected, error) {
	t, err := openRemote(ctx, u)
	if err != nil {
		return nil, err
	}
	defer t.close()
	tmp, err := os.MkdirTemp("", "hone-read-*")
	if err != nil {
		return nil, withCode(exitFailed, err)
	}
	x := &inspected{local: tmp, close: func() { _ = os.RemoveAll(tmp) }}
	fail := func(err error) (*inspected, error) {
		x.close()
		return nil, err
	}
	if _, err := t.store.DownloadJournal(ctx, filepath.Join(tmp, journal.FileName)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fail(withCode(exitUsage, fmt.Errorf("%s holds no experiment (no journal)", t.shown)))
		}
		return fail(withCode(exitFailed, err))
	}
	if _, err = t.store.DownloadFiles(ctx, tmp, journal.FileName, []string{""}); err != nil {
		return fail(withCode(exitFailed, err))
	}
	if x.Experiment, err = openExperiment(tmp); err != nil {
		return fail(err)
	}
	var keys []string
	for _, tr := range x.Trials {
		if rel, err := filepath.Rel(tmp, tr.Dir); err == nil {
			keys = append(keys, path.Join(filepath.ToSlash(rel), "result.json"))
		}
	}
	if _, err := t.store.DownloadObjects(ctx, tmp, keys); err != nil {
		return fail(withCode(exitFailed, err))
	}
	for _, tr := range x.Trials {
		if _, err := tr.Results(); err != nil {
			return fail(withCode(exitFailed, err))
		}
		tr.Dir = shownPath(t.shown, tmp, tr.Dir)
		for i, c := range tr.Checkpoints {
			tr.Checkpoints[i] = shownPath(t.shown, tmp, c)
		}
	}
	x.Dir = t.shown
	running, owner, err := t.runningElsewhere(ctx)
	if err != nil {
		return fail(withCode(exitFailed, err))
	}
	if running {
		x.running, x.holder = true, " ("+owner+")"
	}
	return x, nil
}

// shownPath turns a path under the local directory dir into the same path
// under the URL u, without the URL's query, for messages.
func shownPath(u, dir, p string) string {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return p
	}
	if q, err := url.Parse(u); err == nil {
		q.RawQuery = ""
		u = q.String()
	}
	return spec.JoinURL(u, filepath.ToSlash(rel))
}

// resumeWithSpec resumes the experiment at t for hone run --resume, with
// the spec given to run (specPath, data).
func (a *app) resumeWithSpec(ctx context.Context, t *target, s *spec.Spec, specPath string, data []byte) error {
	if err := a.checkResumeSpec(t.dir, specPath, s); err != nil {
		return err
	}
	finish, err := a.adoptSpec(t.dir, specPath, data)
	if err != nil {
		return withCode(exitFailed, err)
	}
	fmt.Fprintf(a.stderr, "hone: resuming the experiment in %s\n", t.shown)
	return finish(a.runExperiment(ctx, s, t, &controller.ResumeFlags{Unfinished: true}))
}

// runRemote is hone run for an experiment at the object-store URL u.
func (a *app) runRemote(ctx context.Context, s *spec.Spec, u, specPath string, data []byte, resume bool) error {
	t, err := openRemote(ctx, u)
	if err != nil {
		return err
	}
	defer t.close()
	unlock, err := lockExperiment(t.dir)
	if err != nil {
		return err
	}
	defer unlock()
	has, err := t.store.HasJournal(ctx)
	if err != nil {
		return withCode(exitFailed, fmt.Errorf("storage %s: %w", t.shown, err))
	}
	if has {
		if !resume {
			return withCode(exitUsage, fmt.Errorf("%s already holds an experiment; resume it with --resume (or hone resume %s), or choose another --name", t.shown, shellArg(t.shown)))
		}
		note, err := t.restore(ctx, false)
		if err != nil {
			return withCode(exitFailed, err)
		}
		if note != "" {
			fmt.Fprintf(a.stderr, "hone: %s\n", note)
		}
		return a.resumeWithSpec(ctx, t, s, specPath, data)
	}
	empty, err := t.store.Empty(ctx)
	if err != nil {
		return withCode(exitFailed, fmt.Errorf("storage %s: %w", t.shown, err))
	}
	if !empty {
		return withCode(exitUsage, fmt.Errorf("%s holds objects but no experiment journal (a run that crashed within its first second, or something else); choose another --name, or empty it", t.shown))
	}
	if err := t.clearWork(); err != nil {
		return withCode(exitFailed, err)
	}
	if err := saveSpec(t.dir, specPath, data); err != nil {
		return withCode(exitFailed, err)
	}
	fmt.Fprintf(a.stderr, "hone: running experiment %q in %s (working copy in %s)\n", s.Name, t.shown, t.dir)
	return a.runExperiment(ctx, s, t, nil)
}

// splitURL splits an experiment's URL into its storage URL and its name,
// the last element of its path.
func splitURL(u string) (parent, name string) {
	p, err := url.Parse(u)
	if err != nil {
		return u, ""
	}
	clean := path.Clean("/" + p.Path)
	name = path.Base(clean)
	p.Path = path.Dir(clean)
	if p.Path == "/" {
		p.Path = ""
	}
	p.RawPath = ""
	return p.String(), name
}

// shellArg quotes s for a POSIX shell if it holds anything a shell would
// interpret (an object-store URL's ? and &, a space), so that a command
// printed for the user can be pasted as it is.
func shellArg(s string) string {
	safe := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:,=@%", r)
	}
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !safe(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

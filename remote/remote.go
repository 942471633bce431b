// Package remote runs experiments whose storage is an object store
// (docs/STORAGE.md). The runner works in a local working copy of the
// experiment, exactly as in a local experiment directory; the experiment's
// checkpoints go straight to the store, and a mirror ships its journal and
// files there every second and before any checkpoint is deleted. Restore
// rebuilds the working copy from the store, on any machine, for a resume.
package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/store/blob"
)

// ErrUnreachable is wrapped by Open's error when the store cannot be
// reached: a wrong endpoint, a missing bucket, bad credentials.
var ErrUnreachable = errors.New("storage unreachable")

// ErrRunning is wrapped by Restore's error when the experiment's heartbeat
// says another process runs it.
var ErrRunning = errors.New("the experiment is running elsewhere")

// HeartbeatFresh is how old an experiment's heartbeat may be for it to
// count as running: its mirror rewrites it every second.
const HeartbeatFresh = 30 * time.Second

// LockFile is the name, in the working copy, of a file that ClearWork
// keeps and the mirror never ships: the lock a CLI takes on the
// experiment.
const LockFile = "hone.lock"

// Experiment is an experiment at an object-store URL and its local working
// copy.
type Experiment struct {
	// Shown is the experiment's URL without secrets, for messages.
	Shown string
	// Dir is the local working copy, the runner's experiment directory.
	Dir string
	// Store is the experiment's object store.
	Store *blob.Store
	// URL is the experiment's URL as given, for processes on other
	// machines that open the store themselves (a cluster's node agent).
	URL string

	mirror *blob.Mirror
}

// DefaultCache is the directory hone keeps local copies in:
// $HONE_CACHE_DIR, or hone/ under the user's cache directory.
func DefaultCache() (string, error) {
	if d := os.Getenv("HONE_CACHE_DIR"); d != "" {
		return filepath.Abs(d)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory (set HONE_CACHE_DIR): %w", err)
	}
	return filepath.Join(d, "hone"), nil
}

// Dirs returns the local working copy and the checkpoint cache, under
// cache, of the experiment at the object-store URL u: one pair per URL,
// named after the experiment and a hash of the URL.
func Dirs(cache, u string) (work, checkpoints string) {
	name := "experiment"
	if p, err := url.Parse(u); err == nil && path.Base(p.Path) != "/" && path.Base(p.Path) != "." {
		name = path.Base(p.Path)
	}
	sum := sha256.Sum256([]byte(blob.Redact(u)))
	id := name + "-" + hex.EncodeToString(sum[:6])
	return filepath.Join(cache, "experiments", id), filepath.Join(cache, "checkpoints", id)
}

// Open opens the experiment at the object-store URL u with its local
// copies under cache, checking that the store can be reached (an error
// wrapping ErrUnreachable if not, naming the URL without secrets).
func Open(ctx context.Context, u, cache string) (*Experiment, error) {
	work, cks := Dirs(cache, u)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, fmt.Errorf("create the local working copy: %w", err)
	}
	st, err := blob.Open(ctx, u, cks, blob.LocalRoot(work))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	return &Experiment{Shown: blob.Redact(u), Dir: work, Store: st, URL: u}, nil
}

// Close releases the store. Finish first, if the experiment ran.
func (e *Experiment) Close() error { return e.Store.Close() }

// ClearWork empties the local working copy, but for LockFile and the
// executor's records of trial processes (.hone, which a resume reaps).
func (e *Experiment) ClearWork() error {
	entries, err := os.ReadDir(e.Dir)
	if err != nil {
		return fmt.Errorf("clear the local working copy: %w", err)
	}
	for _, d := range entries {
		if d.Name() == LockFile || d.Name() == ".hone" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(e.Dir, d.Name())); err != nil {
			return fmt.Errorf("clear the local working copy: %w", err)
		}
	}
	return nil
}

// RunningElsewhere reads the experiment's heartbeat: it is running if the
// heartbeat is younger than HeartbeatFresh, unless it names a process of
// this host that no longer exists (a crash here is known at once). The
// string describes the process that runs it.
func (e *Experiment) RunningElsewhere(ctx context.Context) (bool, string, error) {
	h, ok, err := e.Store.ReadHeartbeat(ctx)
	if err != nil || !ok {
		return false, "", err
	}
	age := time.Since(h.At())
	if age >= HeartbeatFresh {
		return false, "", nil
	}
	if host, _ := os.Hostname(); host == h.Host && h.PID > 0 && syscall.Kill(h.PID, 0) == syscall.ESRCH {
		return false, "", nil
	}
	return true, fmt.Sprintf("pid %d on %s, last heard of %s ago", h.PID, h.Host, age.Round(time.Second)), nil
}

// Restore rebuilds the local working copy from the store for a resume:
// the journal, cut back to its valid prefix (past a corrupt line too, if
// truncate, keeping the cut lines beside it), the spec copies, and the
// files of every trial the resume may write to. It refuses (ErrRunning)
// an experiment another process runs. It returns a note for the log, or
// "".
func (e *Experiment) Restore(ctx context.Context, truncate bool) (string, error) {
	running, who, err := e.RunningElsewhere(ctx)
	if err != nil {
		return "", fmt.Errorf("restore from %s: %w", e.Shown, err)
	}
	if running {
		return "", fmt.Errorf("%w: %s is being run by hone (%s); stop that one first, or, if it crashed on another machine, try again in %s",
			ErrRunning, e.Shown, who, HeartbeatFresh)
	}
	if err := e.ClearWork(); err != nil {
		return "", err
	}
	// Uploads a killed run left unfinished hold parts on the server that
	// no listing shows; nothing will finish them now.
	if _, err := e.Store.AbortIncomplete(ctx); err != nil {
		return "", fmt.Errorf("restore from %s: %w", e.Shown, err)
	}
	jp := filepath.Join(e.Dir, journal.FileName)
	if _, err := e.Store.DownloadJournal(ctx, jp); err != nil {
		return "", fmt.Errorf("restore from %s: %w", e.Shown, err)
	}
	j, err := journal.ReadPrefix(jp)
	if err != nil {
		return "", fmt.Errorf("restore from %s: %w", e.Shown, err)
	}
	var note string
	switch {
	case j.Corrupt != nil && truncate:
		kept, err := journal.Cut(jp, j.Size)
		if err != nil {
			return "", fmt.Errorf("restore from %s: %w", e.Shown, err)
		}
		note = fmt.Sprintf("%v: continuing from the %d lines before it as asked; the lines cut are kept in %s", j.Corrupt, j.Corrupt.Line-1, kept)
	case j.Corrupt == nil && j.Torn:
		if err := journal.DropSnapshotsBeyond(jp, j.Size); err != nil {
			return "", fmt.Errorf("restore from %s: %w", e.Shown, err)
		}
		if err := os.Truncate(jp, j.Size); err != nil {
			return "", fmt.Errorf("restore from %s: %w", e.Shown, err)
		}
		note = "the journal had a torn last line; cut it off"
	}
	prefixes := []string{""} // the spec copies
	for d := range resumeWrites(j.Lines) {
		prefixes = append(prefixes, d)
	}
	if _, err := e.Store.DownloadFiles(ctx, e.Dir, journal.FileName, prefixes); err != nil {
		return "", fmt.Errorf("restore from %s: %w", e.Shown, err)
	}
	e.prefetch(ctx, restorePoints(j.Lines))
	return note, nil
}

// prefetchAtOnce is how many checkpoints a restore downloads at a time.
const prefetchAtOnce = 4

// prefetch downloads the checkpoints into the store's cache, several at a
// time, so that the trials the resume restarts from them find them there
// instead of each downloading its own on the runner's loop. A checkpoint
// that fails to download is left to the resume, which falls back as for
// any missing checkpoint.
func (e *Experiment) prefetch(ctx context.Context, paths []string) {
	sem := make(chan struct{}, prefetchAtOnce)
	var wg sync.WaitGroup
	for _, p := range paths {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			_, _ = e.Store.LocalDir(ctx, p)
		}()
	}
	wg.Wait()
}

// restorePoints returns the latest registered checkpoint of every trial
// that a resume restarts (not TERMINATED, not ERROR): where it most
// likely restores from.
func restorePoints(lines []journal.Line) []string {
	status := map[string]hone.Status{}
	kept := map[string][]string{} // registered checkpoints, oldest first
	var order []string
	for _, l := range lines {
		r := l.Rec
		if r == nil {
			continue
		}
		switch r.Op {
		case "trial":
			order = append(order, r.Trial)
		case "status":
			status[r.Trial] = r.Status
		case "ckpt":
			kept[r.Trial] = append(kept[r.Trial], r.Path)
		case "ckdel":
			kept[r.Trial] = slices.DeleteFunc(kept[r.Trial], func(p string) bool { return p == r.Path })
		case "drop":
			delete(kept, r.Trial)
		}
	}
	var out []string
	for _, id := range order {
		if st := status[id]; st == hone.StatusTerminated || st == hone.StatusError {
			continue
		}
		if ps := kept[id]; len(ps) > 0 {
			out = append(out, ps[len(ps)-1])
		}
	}
	return out
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
		if in := l.Event; in != nil && in.Kind == hone.EventResult && i >= from {
			late[in.TrialID] = true
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

// Start starts mirroring the working copy to the store and points o at
// them: the runner's experiment directory is the working copy and its
// store the experiment's. The working copy's journal must be in its final
// shape for appending (a fresh experiment, or after Restore). logf
// receives the mirror's complaints (a sync that failed, and when syncs
// work again).
func (e *Experiment) Start(ctx context.Context, o *runner.Options, logf func(string, ...any)) error {
	host, _ := os.Hostname()
	st := newSettler()
	if b, err := os.ReadFile(filepath.Join(e.Dir, journal.FileName)); err == nil {
		st.shipped(b, 0) // a resume: the trials the journal ended already
	}
	m, err := e.Store.NewMirror(ctx, e.Dir, blob.MirrorOptions{
		Journal: journal.FileName,
		Host:    host,
		PID:     os.Getpid(),
		Log:     logf,
		Settled: st.settled,
		Shipped: st.shipped,
	})
	if err != nil {
		return fmt.Errorf("storage %s: %w", e.Shown, err)
	}
	e.mirror = m
	m.Start()
	o.Dir = e.Dir
	o.Store = e.Store
	// A checkpoint is deleted only once the journal lines before the
	// delete (the record that made it deletable) are in the bucket, so
	// the bucket's journal never registers a checkpoint the bucket lacks.
	o.BeforeDelete = m.Sync
	return nil
}

// Finish stops the mirror after a last sync: then everything the run
// wrote is in the store, unless it returns an error.
func (e *Experiment) Finish(ctx context.Context) error {
	if e.mirror == nil {
		return nil
	}
	return e.mirror.Close(ctx)
}

// settleAfter is how many file syncs after a trial's end was shipped its
// directory is still synced: what the trial and the runner write after
// its last result (the last rows, flushed within a tenth of a second; the
// end of its output) is in the bucket by then.
const settleAfter = 3

// settler tells the mirror which trial directories are settled: those of
// TERMINATED trials, settleAfter file syncs after their end was shipped.
// A TERMINATED trial never runs again in this session; its files are
// synced once more by the mirror's last sync.
type settler struct {
	mu  sync.Mutex
	dir map[string]string // trial id -> its top-level directory
	at  map[string]uint64 // top-level directory -> file syncs when its trial's end was shipped
}

func newSettler() *settler {
	return &settler{dir: map[string]string{}, at: map[string]uint64{}}
}

// shipped reads the trial and status records among lines.
func (s *settler) shipped(lines []byte, pass uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for line := range bytes.Lines(lines) {
		if !bytes.Contains(line, []byte(`"o":"trial"`)) && !bytes.Contains(line, []byte(`"o":"status"`)) {
			continue
		}
		var l journal.Line
		if json.Unmarshal(line, &l) != nil || l.Rec == nil {
			continue
		}
		switch r := l.Rec; r.Op {
		case "trial":
			top, _, _ := strings.Cut(path.Clean(filepath.ToSlash(r.Dir)), "/")
			s.dir[r.Trial] = top
		case "status":
			d, ok := s.dir[r.Trial]
			switch {
			case !ok:
			case r.Status == hone.StatusTerminated:
				if _, done := s.at[d]; !done {
					s.at[d] = pass
				}
			default:
				delete(s.at, d)
			}
		}
	}
}

// settled reports whether the directory dir is settled once pass file
// syncs are done.
func (s *settler) settled(dir string, pass uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.at[dir]
	return ok && pass >= at+settleAfter
}

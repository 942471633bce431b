package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/hone-tune/hone"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/remote"
	"github.com/hone-tune/hone/spec"
)

// storageSchemesHelp says which storage URLs hone accepts, for hone version
// and the help texts.
const storageSchemesHelp = "a local path, file:///abs/path, s3://bucket/prefix?endpoint=URL&region=R&use_path_style=true"

// target is where an experiment lives: a local directory, or an object
// store with a local working copy mirrored to it.
type target struct {
	// dir is the local directory the runner works in: the experiment
	// directory itself for local storage, the working copy for an object
	// store.
	dir string
	// shown names the experiment in messages: dir, or the URL without
	// secrets.
	shown string
	// exp is set for an object store.
	exp *remote.Experiment
	// settle, if set, runs when the experiment's run ends, before the last
	// sync to the object store: it puts back a spec that a resume which
	// never started adopted (adoptSpec's finish), so the bucket never
	// gets it. It may run again afterwards, doing nothing.
	settle func(error) error
}

// isRemote reports whether arg names an object store (s3://...) rather
// than a local directory or file:// URL.
func isRemote(arg string) bool {
	scheme, _, ok := strings.Cut(arg, "://")
	return ok && slices.Contains(spec.RemoteSchemes, strings.ToLower(scheme))
}

// localDirs returns the local working copy and the checkpoint cache of
// the experiment at the object-store URL u.
func localDirs(u string) (work, cache string, err error) {
	base, err := remote.DefaultCache()
	if err != nil {
		return "", "", err
	}
	work, cache = remote.Dirs(base, u)
	return work, cache, nil
}

// openRemote opens the experiment at the object-store URL u, checking that
// its store can be reached: a wrong endpoint, missing bucket or bad
// credentials are a usage error (exit 2) naming the URL without secrets.
func openRemote(ctx context.Context, u string) (*target, error) {
	base, err := remote.DefaultCache()
	if err != nil {
		return nil, withCode(exitFailed, err)
	}
	e, err := remote.Open(ctx, u, base)
	if errors.Is(err, remote.ErrUnreachable) {
		return nil, withCode(exitUsage, err)
	}
	if err != nil {
		return nil, withCode(exitFailed, err)
	}
	return &target{dir: e.Dir, shown: e.Shown, exp: e}, nil
}

// close releases the store.
func (t *target) close() {
	if t.exp != nil {
		_ = t.exp.Close()
	}
}

// restore is remote.Experiment.Restore with exit codes: an experiment
// another hone runs is a usage error.
func (t *target) restore(ctx context.Context, truncate bool) (string, error) {
	note, err := t.exp.Restore(ctx, truncate)
	if errors.Is(err, remote.ErrRunning) {
		return "", withCode(exitUsage, err)
	}
	return note, err
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
	if _, err := t.exp.Store.DownloadJournal(ctx, filepath.Join(tmp, journal.FileName)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fail(withCode(exitUsage, fmt.Errorf("%s holds no experiment (no journal)", t.shown)))
		}
		return fail(withCode(exitFailed, err))
	}
	if _, err = t.exp.Store.DownloadFiles(ctx, tmp, journal.FileName, []string{""}); err != nil {
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
	if _, err := t.exp.Store.DownloadObjects(ctx, tmp, keys); err != nil {
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
	running, owner, err := t.exp.RunningElsewhere(ctx)
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
	if err := a.checkResumeSpec(t, specPath, s); err != nil {
		return err
	}
	finish, err := a.adoptSpec(t.dir, specPath, data)
	if err != nil {
		return withCode(exitFailed, err)
	}
	t.settle = finish
	fmt.Fprintf(a.stderr, "hone: resuming the experiment in %s\n", t.shown)
	return finish(a.runExperiment(ctx, s, t, &hone.ResumeFlags{Unfinished: true}))
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
	has, err := t.exp.Store.HasJournal(ctx)
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
	empty, err := t.exp.Store.Empty(ctx)
	if err != nil {
		return withCode(exitFailed, fmt.Errorf("storage %s: %w", t.shown, err))
	}
	if !empty {
		return withCode(exitUsage, fmt.Errorf("%s holds objects but no experiment journal (a run that crashed within its first second, or something else); choose another --name, or empty it", t.shown))
	}
	if err := t.exp.ClearWork(); err != nil {
		return withCode(exitFailed, err)
	}
	if err := saveSpec(t.dir, specPath, data, spec.RulesVersion); err != nil {
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

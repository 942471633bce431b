package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/dashboard"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/results"
)

// dashboardFlags are the flags that place a dashboard.
type dashboardFlags struct {
	addr        string
	allowRemote bool
}

func (f *dashboardFlags) register(fs *pflag.FlagSet, prefix string) {
	fs.StringVar(&f.addr, prefix+"addr", dashboard.DefaultAddr, "where the dashboard listens (host:port; port 0 picks a free one)")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "let the dashboard listen on an address other than a loopback one (anyone who reaches it sees the experiment)")
}

// listen opens the dashboard's listener, printing the warning for a
// non-loopback address; a refused address is a usage error.
func (a *app) listenDashboard(f dashboardFlags) (net.Listener, error) {
	ln, warning, err := dashboard.Listen(f.addr, f.allowRemote)
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	if warning != "" {
		fmt.Fprintf(a.stderr, "hone: warning: %s\n", warning)
	}
	return ln, nil
}

func (a *app) dashboardCmd() *cobra.Command {
	var f dashboardFlags
	var metric, mode, reference string
	cmd := &cobra.Command{
		Use:   "dashboard DIR|URL",
		Short: "Serve a live web dashboard of a running or finished experiment",
		Long: `Serve a web dashboard of the experiment in DIR (or at an object-store URL)
until Ctrl-C: its summary, the table of trials (sortable, filterable by
status), learning curves, parallel coordinates, the rungs of ASHA and
HyperBand, the lineage of PBT, with several objectives the Pareto front
of the finished trials and its hypervolume (--reference gives the
reference point, one value per objective in the metrics' units, else it
is derived from the front), and a page per trial with its configuration,
results, checkpoints, output and error. The page follows a running
experiment live.

The dashboard is read-only and listens on 127.0.0.1:8265 by default; an
address that is not a loopback address needs --allow-remote. Everything
it serves is built into hone: the page makes no request elsewhere.
The metric and mode default to the spec's (--metric and --mode choose
others, as does the page).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if mode != "" && !hone.Mode(mode).Valid() {
				return withCode(exitUsage, fmt.Errorf("--mode %q: allowed values are min and max", mode))
			}
			ln, err := a.listenDashboard(f)
			if err != nil {
				return err
			}
			defer ln.Close()
			ctx, stop := a.interruptible(cmd.Context(), "\nhone: stopping the dashboard\n", "", func() {})
			defer stop()
			src, err := a.dashboardSource(ctx, args[0])
			if err != nil {
				return err
			}
			defer src.close()
			info, err := report.ReadInfo(src.dir)
			if err != nil {
				return withCode(exitFailed, err)
			}
			// --metric and --mode override the spec's, each on its own.
			info.Objective = hone.Objective{Metric: metric, Mode: hone.Mode(mode)}.Or(info.Objective)
			if info.Reference, err = parseReference(reference, info.FrontObjectives()); err != nil {
				return withCode(exitUsage, err)
			}
			srv, err := dashboard.New(dashboard.Options{Dir: src.dir, Info: info, Running: src.running, Sync: src.sync, Shown: src.shown})
			if err != nil {
				return withCode(exitFailed, err)
			}
			fmt.Fprintf(a.stderr, "hone: dashboard of %s at http://%s/ (Ctrl-C stops it)\n", src.shown, ln.Addr())
			return withCode(exitFailed, srv.Serve(ctx, ln))
		},
	}
	f.register(cmd.Flags(), "")
	cmd.Flags().StringVar(&metric, "metric", "", "the metric to show (default: the spec's)")
	cmd.Flags().StringVar(&mode, "mode", "", "min or max (default: the spec's, else min)")
	cmd.Flags().StringVar(&reference, "reference", "", "the Pareto front's reference point: one value per objective, comma-separated, in the metrics' units (default: derived)")
	return cmd
}

// dashSource is where a dashboard reads an experiment.
type dashSource struct {
	dir, shown string
	running    func() bool
	sync       func(ctx context.Context, e *results.Experiment) error
	close      func()
}

// dashboardSource opens the experiment in the directory or at the
// object-store URL arg for the dashboard. An object store's experiment is
// downloaded into a temporary directory (journal, top-level files, and
// each trial's files but its checkpoints), and kept up to date at most
// every remoteSyncEvery.
func (a *app) dashboardSource(ctx context.Context, arg string) (*dashSource, error) {
	if !isRemote(arg) {
		e, err := openExperiment(arg) // a usage error without a journal
		if err != nil {
			return nil, err
		}
		dir := e.Dir
		return &dashSource{dir: dir, shown: dir, close: func() {},
			running: func() bool { r, _ := runningIn(dir); return r }}, nil
	}
	t, err := openRemote(ctx, arg)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "hone-dashboard-*")
	if err != nil {
		t.close()
		return nil, withCode(exitFailed, err)
	}
	rs := &remoteSync{t: t, dir: tmp, done: map[string]int{}, synced: map[string]bool{}}
	src := &dashSource{dir: tmp, shown: t.shown, sync: rs.sync, running: rs.isRunning,
		close: func() { t.close(); _ = os.RemoveAll(tmp) }}
	if err := rs.fetch(ctx, nil); err != nil {
		src.close()
		if errors.Is(err, fs.ErrNotExist) {
			return nil, withCode(exitUsage, fmt.Errorf("%s holds no experiment (no journal)", t.shown))
		}
		return nil, withCode(exitFailed, err)
	}
	return src, nil
}

// remoteSyncEvery bounds how often the dashboard of an experiment in an
// object store downloads it again: the store receives the journal and
// the trials' files every second.
const remoteSyncEvery = time.Second

// remoteSync keeps a local copy of an experiment in an object store.
type remoteSync struct {
	t   *target
	dir string

	mu      sync.Mutex
	last    time.Time
	running bool
	// done counts, per trial directory, the downloads made since the
	// trial was seen finished; synced are those whose files are final.
	done   map[string]int
	synced map[string]bool
}

// finalAfter is how many downloads after a trial is seen finished make its
// files final: the store receives the journal and the files each second,
// not at once, so its last rows may come a second after its last status.
const finalAfter = 3

func (r *remoteSync) isRunning() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running
}

// sync downloads the experiment again, at most every remoteSyncEvery.
func (r *remoteSync) sync(ctx context.Context, e *results.Experiment) error {
	r.mu.Lock()
	due := time.Since(r.last) >= remoteSyncEvery
	r.mu.Unlock()
	if !due {
		return nil
	}
	return r.fetch(ctx, e)
}

// fetch downloads the journal, the top-level files and the files of every
// trial that started and was not finished when last downloaded; e is the
// experiment as last read (nil at first, when it is read from the journal
// just downloaded).
func (r *remoteSync) fetch(ctx context.Context, e *results.Experiment) error {
	store := r.t.exp.Store
	// The journal is written beside the copy and renamed over it, so the
	// dashboard never reads one half written.
	jp := filepath.Join(r.dir, journal.FileName)
	if _, err := store.DownloadJournal(ctx, jp+".new"); err != nil {
		return fmt.Errorf("download the journal of %s: %w", r.t.shown, err)
	}
	if err := os.Rename(jp+".new", jp); err != nil {
		return fmt.Errorf("download the journal: %w", err)
	}
	prefixes := []string{""}
	if e == nil {
		var err error
		if e, err = results.Open(r.dir); err != nil {
			return err
		}
	}
	var finished []string
	for _, t := range e.Trials {
		rel, err := filepath.Rel(r.dir, t.Dir)
		if err != nil {
			continue
		}
		rel = path.Clean(filepath.ToSlash(rel))
		if r.synced[rel] || t.NotStarted() {
			continue // nothing new, or nothing yet
		}
		prefixes = append(prefixes, rel)
		if t.Status.Finished() {
			finished = append(finished, rel)
		}
	}
	if _, err := store.DownloadFiles(ctx, r.dir, journal.FileName, prefixes); err != nil {
		return fmt.Errorf("download the files of %s: %w", r.t.shown, err)
	}
	running, _, err := r.t.exp.RunningElsewhere(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", r.t.shown, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rel := range finished {
		if r.done[rel]++; r.done[rel] >= finalAfter {
			r.synced[rel] = true
			delete(r.done, rel)
		}
	}
	r.last, r.running = time.Now(), running
	return nil
}

// startDashboard serves the dashboard of the experiment in dir, shown as
// shown, on ln while a run goes on; the returned func stops it.
func (a *app) startDashboard(ctx context.Context, ln net.Listener, dir, shown string) (func(), error) {
	info, err := report.ReadInfo(dir)
	if err != nil {
		return nil, withCode(exitFailed, err)
	}
	srv, err := dashboard.New(dashboard.Options{Dir: dir, Info: info, Shown: shown, Wait: true,
		Running: func() bool { return true }})
	if err != nil {
		return nil, withCode(exitFailed, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ctx, ln); err != nil {
			fmt.Fprintf(a.stderr, "hone: %v\n", err)
		}
	}()
	fmt.Fprintf(a.stderr, "hone: dashboard at http://%s/\n", ln.Addr())
	return func() {
		cancel()
		<-done
	}, nil
}

// openDashboard opens the listener of run --dashboard (or resume's) before
// anything else, so that a refused address is a usage error before the
// experiment starts.
func (a *app) openDashboard(on bool, f dashboardFlags) error {
	if !on {
		return nil
	}
	ln, err := a.listenDashboard(f)
	if err != nil {
		return err
	}
	a.dashLn = ln
	return nil
}

// closeDashboard closes the listener openDashboard opened, if any.
func (a *app) closeDashboard() {
	if a.dashLn != nil {
		_ = a.dashLn.Close()
		a.dashLn = nil
	}
}

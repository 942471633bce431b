// Package dashboard serves a read-only web dashboard of one experiment,
// running or finished: its summary, a sortable and filterable table of
// trials, learning curves, parallel coordinates, the rungs of ASHA and
// HyperBand, the lineage of PBT, with several objectives the Pareto front
// of the finished trials, and a page per trial with its
// configuration, results, checkpoints, the tails of its output and its
// error. The data comes from package report; the page and its charting
// library are embedded, so no request leaves the machine.
//
// The page follows the experiment live: the server applies what the
// journal and the trials' result files gained every Interval
// (results.Live) and tells the page over server-sent events, which then
// fetches what it shows again. Only GET and HEAD are served, and files are
// served only from inside the experiment directory.
package dashboard

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/results"
)

//go:embed assets
var assets embed.FS

// DefaultAddr is where the dashboard listens unless told otherwise.
const DefaultAddr = "127.0.0.1:8265"

// DefaultInterval is how often the dashboard looks for new results.
const DefaultInterval = 250 * time.Millisecond

// Options configure a Server.
type Options struct {
	// Dir is the experiment directory (for an object store, its local
	// copy, which Sync keeps up to date).
	Dir string
	// Info is the objective, budget and rungs (report.ReadInfo); Running
	// is overridden by the Running func when set.
	Info report.Info
	// Sync, if set, brings Dir up to date before each look for news; it
	// is given the experiment as last read (which it must not change; nil
	// before its journal exists), so that it can fetch only the files of
	// trials that may have changed.
	Sync func(ctx context.Context, e *results.Experiment) error
	// Running, if set, reports whether a hone process runs the
	// experiment; a RUNNING trial of one that no process runs is shown
	// STOPPED.
	Running func() bool
	// Interval is how often to look for news; 0 means DefaultInterval.
	Interval time.Duration
	// Shown names the experiment on the page (its URL for an object
	// store); Dir when empty.
	Shown string
	// Wait lets New succeed before the experiment's journal exists (a
	// dashboard started with its run): until it does, /api/summary says
	// it is waiting and the rest of the API answers 503.
	Wait bool
}

// Server is the dashboard of one experiment. Handler serves it; Watch
// keeps it up to date.
type Server struct {
	opts Options

	refreshMu sync.Mutex // one Refresh at a time

	mu      sync.Mutex // guards live, info, version, cache, readErr
	live    *results.Live
	info    report.Info
	version uint64
	cache   map[string][]byte
	readErr string

	// replay follows the journal to tell which bracket each trial ran
	// in (report.Replay); nil when the scheduler has no brackets. Only
	// Refresh, under refreshMu, uses it.
	replay      *report.Replay
	bracketsErr *report.Assignment

	subMu sync.Mutex
	subs  map[chan uint64]struct{}
}

// New opens the experiment in opts.Dir for the dashboard.
func New(opts Options) (*Server, error) {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	opts.Dir = dir
	if opts.Shown == "" {
		opts.Shown = dir
	}
	live, err := results.OpenLive(dir)
	if errors.Is(err, journal.ErrNoJournal) && opts.Wait {
		live, err = nil, nil // Refresh opens it once it exists
	}
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	s := &Server{opts: opts, live: live, info: opts.Info, version: 1, cache: map[string][]byte{},
		subs: map[chan uint64]struct{}{}}
	if opts.Running != nil {
		s.info.Running = opts.Running()
	}
	if live != nil {
		s.info.Brackets = s.followBrackets()
	}
	return s, nil
}

// followBrackets feeds the replay of the journal what the journal gained
// (starting it, for an experiment with rungs, the first time) and returns
// the brackets as it now knows them; nil for a scheduler without brackets.
func (s *Server) followBrackets() *report.Assignment {
	if s.info.Rungs == nil {
		return nil
	}
	if s.replay == nil {
		r, err := report.NewReplay(s.opts.Dir)
		if err != nil {
			return s.bracketsError(err)
		}
		if r == nil {
			return nil
		}
		s.replay = r
	}
	if _, err := s.replay.Update(); err != nil {
		return s.bracketsError(err)
	}
	return s.replay.Assignment()
}

// bracketsError is the Assignment that shows err, the same value while the
// error is, so that a lasting error does not count as news.
func (s *Server) bracketsError(err error) *report.Assignment {
	if a := s.bracketsErr; a != nil && a.Note == err.Error() {
		return a
	}
	s.bracketsErr = &report.Assignment{Brackets: []report.Bracket{}, Note: err.Error()}
	return s.bracketsErr
}

// Watch looks for news every Interval until ctx ends, and tells the pages
// that follow the experiment when there is some. It returns ctx's error.
func (s *Server) Watch(ctx context.Context) error {
	t := time.NewTicker(s.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		s.Refresh(ctx)
	}
}

// Refresh looks for news once (Watch calls it), and reports whether there
// was any. An error reading the experiment is shown on the page, and the
// next Refresh tries again.
func (s *Server) Refresh(ctx context.Context) bool {
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	var syncErr error
	if s.opts.Sync != nil {
		var e *results.Experiment
		if s.live != nil {
			e = s.live.Experiment()
		}
		syncErr = s.opts.Sync(ctx, e)
	}
	running := s.info.Running
	if s.opts.Running != nil {
		running = s.opts.Running()
	}
	s.mu.Lock()
	var ch results.Changes
	var err error
	if s.live == nil {
		if s.live, err = results.OpenLive(s.opts.Dir); err == nil {
			ch.Reset = true
		} else if errors.Is(err, journal.ErrNoJournal) {
			err = nil
		}
	} else {
		ch, err = s.live.Update()
	}
	opened := s.live != nil
	s.mu.Unlock()
	// The replay runs the experiment's searcher and scheduler, which may
	// take a while on a large journal: the pages are served meanwhile.
	var brackets *report.Assignment
	if opened {
		brackets = s.followBrackets()
	}
	s.mu.Lock()
	bracketsChanged := opened && brackets != s.info.Brackets
	if bracketsChanged {
		s.info.Brackets = brackets
	}
	msg := ""
	switch {
	case syncErr != nil:
		msg = syncErr.Error()
	case err != nil:
		msg = err.Error()
	}
	changed := ch.Any() || bracketsChanged || running != s.info.Running || msg != s.readErr
	s.info.Running, s.readErr = running, msg
	if changed {
		s.version++
		clear(s.cache)
	}
	v := s.version
	s.mu.Unlock()
	if changed {
		s.publish(v)
	}
	return changed
}

func (s *Server) publish(v uint64) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	for c := range s.subs {
		select {
		case c <- v:
		default: // a slow page gets the newest version on its next read
			select {
			case <-c:
			default:
			}
			c <- v
		}
	}
}

func (s *Server) subscribe() (chan uint64, func()) {
	c := make(chan uint64, 1)
	s.subMu.Lock()
	s.subs[c] = struct{}{}
	s.subMu.Unlock()
	return c, func() {
		s.subMu.Lock()
		delete(s.subs, c)
		s.subMu.Unlock()
	}
}

// Handler returns the dashboard's HTTP handler. It answers only GET and
// HEAD.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree always has assets
	}
	mux.Handle("/assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		b, err := fs.ReadFile(static, "index.html")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(b)
	})
	mux.HandleFunc("/api/summary", s.cached(s.summary))
	mux.HandleFunc("/api/trials", s.cached(s.trials))
	mux.HandleFunc("/api/curves", s.cached(s.curves))
	mux.HandleFunc("/api/parallel", s.cached(s.parallel))
	mux.HandleFunc("/api/rungs", s.cached(s.rungs))
	mux.HandleFunc("/api/lineage", s.cached(s.lineage))
	mux.HandleFunc("/api/front", s.cached(s.front))
	mux.HandleFunc("/api/trial", s.cached(s.trial))
	mux.HandleFunc("/api/file", s.file)
	mux.HandleFunc("/api/ls", s.ls)
	mux.HandleFunc("/api/events", s.events)
	return readOnly(mux)
}

// readOnly refuses every method but GET and HEAD, and asks browsers not to
// let other sites frame or sniff the pages.
func readOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "the dashboard is read-only", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:")
		h.ServeHTTP(w, r)
	})
}

// httpError is an error with its status code.
type httpError struct {
	code int
	err  error
}

func (e *httpError) Error() string { return e.err.Error() }

func badRequest(format string, args ...any) error {
	return &httpError{http.StatusBadRequest, fmt.Errorf(format, args...)}
}

// cached serves the JSON that f computes for the request, computing it
// once per version of the experiment and URL.
func (s *Server) cached(f func(r *http.Request, info report.Info) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key := r.URL.Path + "?" + r.URL.RawQuery
		s.mu.Lock()
		if s.live == nil {
			v := s.version
			s.mu.Unlock()
			if r.URL.Path == "/api/summary" {
				// The page waits for the journal without an error.
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Cache-Control", "no-store")
				_ = json.NewEncoder(w).Encode(map[string]any{"waiting": true, "shown": s.opts.Shown, "version": v})
				return
			}
			writeError(w, &httpError{http.StatusServiceUnavailable, errors.New("the experiment has not started yet")})
			return
		}
		b, ok := s.cache[key]
		if !ok {
			info, err := s.infoFor(r)
			var v any
			if err == nil {
				v, err = f(r, info)
			}
			if err != nil {
				s.mu.Unlock()
				writeError(w, err)
				return
			}
			b, err = json.Marshal(v)
			if err != nil {
				s.mu.Unlock()
				writeError(w, fmt.Errorf("encode %s: %w", r.URL.Path, err))
				return
			}
			s.cache[key] = b
		}
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(b)
	}
}

func writeError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	var he *httpError
	switch {
	case errors.As(err, &he):
		code = he.code
	case errors.Is(err, errOutside):
		code = http.StatusForbidden
	case errors.Is(err, fs.ErrNotExist):
		code = http.StatusNotFound
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

// infoFor is the server's Info with the metric and mode the request may
// choose (?metric=, ?mode=).
func (s *Server) infoFor(r *http.Request) (report.Info, error) {
	info := s.info
	q := r.URL.Query()
	mode := hone.Mode(q.Get("mode"))
	if mode != "" && !mode.Valid() {
		return info, badRequest("mode %q: allowed values are min and max", mode)
	}
	info.Objective = hone.Objective{Metric: q.Get("metric"), Mode: mode}.Or(info.Objective)
	return info, nil
}

// summaryView is the summary with what the page needs besides.
type summaryView struct {
	report.Summary
	Shown   string   `json:"shown"`
	Version uint64   `json:"version"`
	Metrics []string `json:"metrics"` // numeric result fields, for choosing a metric
	Error   string   `json:"error,omitempty"`
}

func (s *Server) summary(r *http.Request, info report.Info) (any, error) {
	e := s.live.Experiment()
	sum, err := report.Summarize(e, info, time.Now())
	if err != nil {
		return nil, err
	}
	return summaryView{Summary: sum, Shown: s.opts.Shown, Version: s.version, Metrics: numericFields(e), Error: s.readErr}, nil
}

// numericFields returns the numeric fields of the trials' last results,
// sorted, looking at no more than 200 trials.
func numericFields(e *results.Experiment) []string {
	seen := map[string]bool{}
	n := 0
	for i := len(e.Trials) - 1; i >= 0 && n < 200; i-- {
		last, err := e.Trials[i].Last()
		if err != nil || last == nil {
			continue
		}
		n++
		for k, v := range last {
			if _, ok := hone.Number(v); ok {
				if _, isBool := v.(bool); !isBool {
					seen[k] = true
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (s *Server) trials(r *http.Request, info report.Info) (any, error) {
	q := r.URL.Query()
	tq := report.Query{Sort: q.Get("sort"), Desc: q.Get("desc") == "1" || q.Get("desc") == "true"}
	var err error
	if tq.Offset, err = intParam(q.Get("offset"), 0); err != nil {
		return nil, err
	}
	if tq.Limit, err = intParam(q.Get("limit"), 100); err != nil {
		return nil, err
	}
	if st := q.Get("status"); st != "" {
		tq.Status = strings.Split(st, ",")
	}
	t, err := report.TrialTable(s.live.Experiment(), info, tq)
	if err != nil {
		return nil, &httpError{http.StatusBadRequest, err}
	}
	return t, nil
}

func intParam(v string, def int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, badRequest("%q is not a count", v)
	}
	return n, nil
}

func (s *Server) curves(r *http.Request, info report.Info) (any, error) {
	return report.LearningCurves(s.live.Experiment(), info, r.URL.Query().Get("x"), "", report.DefaultCurveLimits())
}

// maxParallelLines bounds the lines of the parallel-coordinates chart.
const maxParallelLines = 500

func (s *Server) parallel(_ *http.Request, info report.Info) (any, error) {
	return report.ParallelCoordinates(s.live.Experiment(), info, maxParallelLines)
}

// maxRungTrials bounds the trials listed per rung.
const maxRungTrials = 1000

func (s *Server) rungs(_ *http.Request, info report.Info) (any, error) {
	return report.SuccessiveHalving(s.live.Experiment(), info, maxRungTrials)
}

func (s *Server) lineage(_ *http.Request, _ report.Info) (any, error) {
	return report.PBTLineage(s.live.Experiment())
}

// front is the Pareto front of the finished trials (report.ParetoFront)
// with several objectives, or null with one.
func (s *Server) front(_ *http.Request, info report.Info) (any, error) {
	objs := info.FrontObjectives()
	if len(objs) < 2 {
		return nil, nil
	}
	return report.ParetoFront(s.live.Experiment(), objs, info.Constraints, info.Reference)
}

// trialView is one trial's page.
type trialView struct {
	Row    report.Row     `json:"row"`
	Tag    string         `json:"tag"`
	Dir    string         `json:"dir"` // relative to the experiment, slash-separated
	Config map[string]any `json:"config"`
	Error  string         `json:"error,omitempty"`
	// Checkpoints are relative to the experiment, oldest first.
	Checkpoints []string `json:"checkpoints"`
	Files       []Entry  `json:"files"`
	// Results are the last maxTrialRows rows; Rows counts them all.
	Results []results.Row     `json:"results"`
	Rows    int               `json:"rows"`
	Columns []string          `json:"columns"`
	Lineage []results.Exploit `json:"lineage"`
	// Rungs are the rungs it reached under ASHA or HyperBand.
	Rungs []report.TrialRung `json:"rungs"`
}

// maxTrialRows bounds the result rows a trial's page shows.
const maxTrialRows = 500

func (s *Server) trial(r *http.Request, info report.Info) (any, error) {
	id := r.URL.Query().Get("id")
	e := s.live.Experiment()
	t := e.Trial(id)
	if t == nil {
		return nil, &httpError{http.StatusNotFound, fmt.Errorf("no trial %q in the experiment", id)}
	}
	tb, err := report.TrialTable(&results.Experiment{Dir: e.Dir, Trials: []*results.Trial{t}}, info, report.Query{})
	if err != nil {
		return nil, err
	}
	row := tb.Rows[0]
	// The table of one trial has a front of its own: the trial's place
	// is in the experiment's.
	row.OnFront, row.Infeasible = false, false
	if info.Several() {
		f, err := report.ParetoFront(e, info.FrontObjectives(), info.Constraints, nil)
		if err != nil {
			return nil, err
		}
		for _, p := range f.Points {
			if p.ID == t.ID {
				row.OnFront, row.Infeasible = p.OnFront, !p.Feasible
			}
		}
	}
	v := trialView{Row: row, Tag: t.Tag, Dir: s.rel(t.Dir), Config: t.Config, Error: t.Error,
		Checkpoints: []string{}, Files: []Entry{}, Lineage: []results.Exploit{}, Rungs: []report.TrialRung{}}
	for _, c := range t.Checkpoints {
		v.Checkpoints = append(v.Checkpoints, s.rel(c))
	}
	if files, err := listDir(t.Dir); err == nil {
		v.Files = files
	}
	rows, err := t.Results()
	if err != nil {
		return nil, err
	}
	v.Rows = len(rows)
	v.Results = sanitizeRows(rows[max(0, len(rows)-maxTrialRows):])
	cols := map[string]bool{}
	for _, row := range v.Results {
		for k := range row {
			if k != hone.FieldConfig {
				cols[k] = true
			}
		}
	}
	for k := range cols {
		v.Columns = append(v.Columns, k)
	}
	slices.Sort(v.Columns)
	if lin, err := t.Lineage(); err == nil && lin != nil {
		v.Lineage = lin
	}
	rungs, err := report.TrialRungs(t, info)
	if err != nil {
		return nil, err
	}
	if rungs != nil {
		v.Rungs = rungs
	}
	return v, nil
}

// sanitizeRows returns rows with non-finite numbers as the strings
// result.json holds them, which JSON can encode.
func sanitizeRows(rows []results.Row) []results.Row {
	out := make([]results.Row, len(rows))
	for i, r := range rows {
		c := make(results.Row, len(r))
		for k, v := range r {
			if f, ok := v.(float64); ok {
				v = jsonNumber(f)
			}
			c[k] = v
		}
		out[i] = c
	}
	return out
}

func jsonNumber(f float64) any {
	if s := results.FormatNumber(f); s == "NaN" || s == "Infinity" || s == "-Infinity" {
		return s
	}
	return f
}

// rel returns p relative to the experiment directory, slash-separated.
func (s *Server) rel(p string) string {
	r, err := filepath.Rel(s.opts.Dir, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(r)
}

// DefaultTail is how much of a file /api/file returns by default.
const DefaultTail = 64 << 10

// maxTail bounds what /api/file returns.
const maxTail = 4 << 20

// resolve confines rel, relative to the experiment directory, to the
// directory of one of its trials (see confine): the rest of the
// experiment directory (its spec, which may hold environment variables,
// its journal) is not served.
func (s *Server) resolve(rel string) (string, error) {
	p, err := confine(s.opts.Dir, rel)
	if err != nil {
		return "", err
	}
	root, err := filepath.EvalSymlinks(s.opts.Dir)
	if err != nil {
		return "", fmt.Errorf("experiment directory: %w", err)
	}
	in, err := filepath.Rel(root, p)
	if err != nil {
		return "", fmt.Errorf("path %q: %w", rel, errOutside)
	}
	in = filepath.ToSlash(in)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live != nil {
		for _, t := range s.live.Experiment().Trials {
			if d := s.rel(t.Dir); d != "." && (in == d || strings.HasPrefix(in, d+"/")) {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("path %q: only the files of the experiment's trials are served: %w", rel, errOutside)
}

// file serves the tail of a file in a trial's directory as text: ?path=
// relative to the experiment, ?tail= bytes.
func (s *Server) file(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := intParam(q.Get("tail"), DefaultTail)
	if err != nil {
		writeError(w, err)
		return
	}
	p, err := s.resolve(q.Get("path"))
	if err != nil {
		writeError(w, err)
		return
	}
	b, size, err := tailFile(p, int64(min(limit, maxTail)))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			err = badRequest("%v", err)
		}
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-File-Size", strconv.FormatInt(size, 10))
	_, _ = w.Write(b)
}

// ls lists a directory in a trial's directory: ?path= relative to the
// experiment.
func (s *Server) ls(w http.ResponseWriter, r *http.Request) {
	p, err := s.resolve(r.URL.Query().Get("path"))
	if err != nil {
		writeError(w, err)
		return
	}
	entries, err := listDir(p)
	if err != nil {
		writeError(w, &httpError{http.StatusNotFound, fmt.Errorf("list %s: %w", path.Clean("/"+r.URL.Query().Get("path")), err)})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(entries)
}

// heartbeat keeps an idle event stream open through proxies.
const heartbeat = 15 * time.Second

// events streams the experiment's version as server-sent events: the
// current one at once, then each new one.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, errors.New("streaming is not supported"))
		return
	}
	c, unsubscribe := s.subscribe()
	defer unsubscribe()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	s.mu.Lock()
	v := s.version
	s.mu.Unlock()
	send := func(v uint64) error {
		_, err := fmt.Fprintf(w, "event: version\ndata: %d\n\n", v)
		fl.Flush()
		return err
	}
	if send(v) != nil {
		return
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case v := <-c:
			if send(v) != nil {
				return
			}
		case <-tick.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

// Listen listens on addr. An address that is not a loopback address (an
// empty host listens on every interface) is refused unless allowRemote is
// set; then warning says that anyone who can reach it sees the
// experiment.
func Listen(addr string, allowRemote bool) (ln net.Listener, warning string, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, "", fmt.Errorf("dashboard address %q: %w", addr, err)
	}
	if !isLoopback(host) {
		if !allowRemote {
			return nil, "", fmt.Errorf("dashboard address %q is not a loopback address: anyone who can reach it would see the experiment, its configurations and its files; pass --allow-remote to serve it there anyway", addr)
		}
		warning = fmt.Sprintf("the dashboard listens on %s, which is not a loopback address: anyone who can reach it sees the experiment, its configurations and its files (read-only, without authentication)", addr)
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("dashboard: %w", err)
	}
	return ln, warning, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// Serve serves the dashboard on ln and keeps it up to date until ctx
// ends; it then shuts the server down and returns nil.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Requests end with ctx, so that event streams let Shutdown finish.
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	var wg sync.WaitGroup
	wg.Go(func() { _ = s.Watch(ctx) })
	wg.Go(func() {
		<-ctx.Done()
		sctx, scancel := context.WithTimeout(context.Background(), time.Second)
		defer scancel()
		if srv.Shutdown(sctx) != nil {
			_ = srv.Close() // event streams do not end by themselves
		}
	})
	err := srv.Serve(ln)
	cancel()
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("dashboard: %w", err)
}

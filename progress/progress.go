// Package progress is a terminal progress reporter for experiments: a
// hone.Callback that prints a table of trials.
//
// With one objective the table shows its metric, the best trial so far
// and, at the end, the best trial's configuration. With several
// objectives, or any constraint (WithObjectives), there is no single best
// trial: the table shows a column per objective and the Pareto front of
// the finished trials so far, the trials no other beats on every
// objective (under constraints, the feasible ones while any is), and the
// summary lists the front's trials with their values and configurations,
// as hone results --pareto does.
//
// On a terminal it redraws the table in place (ANSI cursor movement) at
// most once per interval; on anything else (a file, a pipe, CI logs) it
// prints a plain table once per interval. Either way it draws only when a
// callback arrives (it starts no goroutine), and it draws a final table and
// a summary at experiment end.
package progress

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/pareto"
)

// Reporter is a hone.Callback that reports progress to a writer. It is
// called on the runner's goroutine and is not safe for concurrent use.
//
// What it shows about a trial is what the callbacks said: a trial appears
// once it starts (or, in a resumed experiment, at the resume if an earlier
// session ran it: the table shows the whole experiment), and its status
// is the one implied by the latest callback about it (a trial paused by
// its scheduler shows RUNNING until it starts again or the experiment
// ends, when every status is brought up to date).
// At the end, a trial still RUNNING is shown STOPPED (the experiment was
// interrupted or ran out of budget while it ran; a resume continues it),
// and trials that never started are not listed: the summary counts them
// as "not started".
//
// With several objectives or a constraint (WithObjectives) it shows the
// Pareto front of the TERMINATED trials whose last result has a finite
// value of every objective, where it would show the best trial: the same
// trials hone results --pareto counts. The front is worked out afresh at
// each draw, in O(n log n) for two or three objectives.
type Reporter struct {
	w   io.Writer
	obj hone.Objective // no Metric: no metric column, no best trial
	// objs and cons are set in multi mode (several objectives, or a
	// constraint), when obj is not: a column per objective and the
	// Pareto front instead of the best trial.
	objs     hone.Objectives
	cons     hone.Constraints
	interval time.Duration
	maxRows  int
	clock    hone.Clock
	tty      *bool
	sized    bool // WithSize was given
	// width and height are the terminal's size in characters and lines;
	// 0 when unknown (not a terminal): lines are not cut and the table not
	// shortened. size reads the terminal's current size before each draw
	// (it may have been resized); nil when the size is fixed or unknown.
	width, height int
	size          func() (width, height int, err error)

	rows     map[string]*row
	started  bool
	start    time.Time
	lastDraw time.Time
	drawn    int // lines of the last in-place draw
	err      error
	// notStarted counts the trials that never started, known at the end.
	notStarted int
}

var _ hone.ResumeCallback = (*Reporter)(nil)

// row is what the reporter knows about one trial.
type row struct {
	trial    *hone.Trial // read on the runner's goroutine, at each draw
	id       string
	index    int
	status   hone.Status
	config   map[string]string // flattened with "/", display text
	value    float64           // last value of the metric
	hasValue bool
	// In multi mode, vals[i] is the last value of objective i, present
	// when has[i]; violation is the last result's constraint violation
	// (0: feasible).
	vals      []float64
	has       []bool
	violation float64
	reported  bool // has a result
	iter      int
	total     float64  // seconds
	errText   string   // the error's first line
	errMore   []string // the error's other lines: a failed process's last lines of stderr
	started   bool     // a callback said it started in this run
	stopped   bool     // still RUNNING when the experiment ended
}

// Stopped is how the final table shows a trial that was still RUNNING when
// the experiment ended.
const Stopped = "STOPPED"

// NotStarted is how the summary counts trials that never started.
const NotStarted = "not started"

// label is the status the table shows for w.
func (w *row) label() string {
	if w.stopped {
		return Stopped
	}
	return string(w.status)
}

// Option configures a Reporter.
type Option func(*Reporter)

// WithObjective sets the objective whose metric is shown in the table and
// used to pick the best trial (an empty mode means min).
func WithObjective(o hone.Objective) Option {
	return func(r *Reporter) { r.obj, r.objs, r.cons = o.WithDefaults(), nil, nil }
}

// WithObjectives sets the experiment's objectives and constraints (an
// empty mode means min). With one objective and no constraint it is
// WithObjective of that objective; with none, it sets nothing. With
// several objectives, or any constraint, the table has a column per
// objective, the line under its header is the Pareto front of the
// finished trials so far (with constraints, of the feasible ones while
// any is, else of the least infeasible: Deb's rule), WithMaxRows keeps
// the front's trials after the running ones, and the summary lists the
// front's trials in place of the best trial.
func WithObjectives(objs hone.Objectives, cs hone.Constraints) Option {
	switch {
	case len(objs) == 0:
		return func(*Reporter) {}
	case len(objs) == 1 && len(cs) == 0:
		return WithObjective(objs[0])
	}
	objs, cs = objs.WithDefaults(), slices.Clone(cs)
	return func(r *Reporter) { r.obj, r.objs, r.cons = hone.Objective{}, objs, cs }
}

// WithMetric is WithObjective of the objective name and mode.
func WithMetric(name string, mode hone.Mode) Option {
	return WithObjective(hone.Objective{Metric: name, Mode: mode})
}

// WithInterval sets the shortest time between two draws (default 1 s on a
// terminal, 30 s otherwise).
func WithInterval(d time.Duration) Option { return func(r *Reporter) { r.interval = d } }

// WithMaxRows caps the trials listed in a table (default 20). Beyond it the
// table lists running trials first, then the best by the metric (with
// several objectives, the trials on the Pareto front), then the oldest,
// and says how many it left out.
func WithMaxRows(n int) Option { return func(r *Reporter) { r.maxRows = max(n, 1) } }

// WithClock sets the clock (default: the system clock).
func WithClock(c hone.Clock) Option { return func(r *Reporter) { r.clock = c } }

// WithSize sets the terminal's size, in characters and lines, instead of
// reading it from the writer (0 means unknown). On a terminal the live
// table fits it: config columns are left out before the table is wider
// than the terminal (the trial, its status and the metric, or each
// objective's, always stay),
// and the trials beyond the lines it has are summarised in one line.
func WithSize(width, height int) Option {
	return func(r *Reporter) {
		r.width, r.height, r.size = max(width, 0), max(height, 0), nil
		r.sized = true
	}
}

// WithTTY forces terminal mode on or off instead of detecting it from the
// writer.
func WithTTY(on bool) Option { return func(r *Reporter) { r.tty = &on } }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// New returns a Reporter writing to w. Terminal mode is on when w is an
// *os.File that is a terminal (unless WithTTY says otherwise).
func New(w io.Writer, opts ...Option) *Reporter {
	r := &Reporter{w: w, maxRows: 20, clock: systemClock{}, rows: map[string]*row{}}
	for _, o := range opts {
		o(r)
	}
	f, isFile := w.(*os.File)
	isTerm := isFile && term.IsTerminal(int(f.Fd()))
	if r.tty == nil {
		r.tty = &isTerm
	}
	if isTerm && *r.tty && !r.sized {
		fd := int(f.Fd())
		r.size = func() (int, int, error) { return term.GetSize(fd) }
		r.resize()
	}
	if r.interval <= 0 {
		r.interval = 30 * time.Second
		if *r.tty {
			r.interval = time.Second
		}
	}
	return r
}

// resize reads the terminal's current size, if it can.
func (r *Reporter) resize() {
	if r.size == nil {
		return
	}
	if w, h, err := r.size(); err == nil {
		r.width, r.height = w, h
	}
}

// Err returns the first error writing to w, or nil.
func (r *Reporter) Err() error { return r.err }

// OnTrialStart shows t as RUNNING with its current configuration.
func (r *Reporter) OnTrialStart(t *hone.Trial) {
	w := r.row(t)
	w.started = true
	w.status = hone.StatusRunning
	w.config = flatConfig(t.Config)
	r.tick()
}

// OnTrialResult records the metric, iteration and total time of res.
func (r *Reporter) OnTrialResult(t *hone.Trial, res *hone.Result) {
	w := r.row(t)
	w.status = hone.StatusRunning
	r.setResult(w, res)
	r.tick()
}

// OnCheckpoint does nothing.
func (r *Reporter) OnCheckpoint(*hone.Trial, *hone.Checkpoint) {}

// OnTrialComplete shows t as TERMINATED.
func (r *Reporter) OnTrialComplete(t *hone.Trial) {
	r.row(t).status = hone.StatusTerminated
	r.tick()
}

// OnTrialError shows t as ERROR, or as PENDING when it will be retried,
// with the first line of err.
func (r *Reporter) OnTrialError(t *hone.Trial, err error) {
	w := r.row(t)
	w.status = hone.StatusError
	if t.Status == hone.StatusPending {
		w.status = hone.StatusPending
	}
	if err != nil {
		w.setError(err.Error())
	}
	r.tick()
}

// OnExperimentResume lists the trials of the earlier sessions of a resumed
// experiment, so that the table shows the whole experiment and its best
// trial, not only the trials that run again. Trials that never started are
// left out, as at the end.
func (r *Reporter) OnExperimentResume(trials []*hone.Trial) {
	for _, t := range trials {
		if r.rows[t.ID] != nil || neverStarted(t) {
			continue
		}
		w := r.row(t)
		w.status = t.Status
		w.config = flatConfig(t.Config)
		if t.LastResult != nil {
			r.setResult(w, t.LastResult)
		}
		if t.Error != "" {
			w.setError(t.Error)
		}
	}
}

// OnExperimentEnd brings every trial up to date, draws the final table and
// prints a summary with the best trial's configuration (with several
// objectives or a constraint, the Pareto front's trials). Trials that
// never started are counted, not listed.
func (r *Reporter) OnExperimentEnd(trials []*hone.Trial) {
	r.notStarted = 0
	for _, t := range trials {
		if r.rows[t.ID] == nil && neverStarted(t) {
			r.notStarted++
			continue
		}
		w := r.row(t)
		w.status = t.Status
		w.stopped = t.Status == hone.StatusRunning
		w.config = flatConfig(t.Config)
		if t.LastResult != nil {
			r.setResult(w, t.LastResult)
		}
		if t.Error != "" {
			w.setError(t.Error)
		}
	}
	now := r.now()
	r.resize()
	lines := r.table(now, false)
	lines = append(lines, "")
	lines = append(lines, r.summary(now)...)
	r.draw(lines)
	r.drawn = 0
}

// neverStarted reports whether t shows no sign of having run: it is
// PENDING, or ended TERMINATED, with no result, no checkpoint and no
// failure.
func neverStarted(t *hone.Trial) bool {
	return (t.Status == hone.StatusPending || t.Status == hone.StatusTerminated) &&
		t.LastResult == nil && t.Checkpoint == nil && t.Failures == 0
}

func (r *Reporter) row(t *hone.Trial) *row {
	w := r.rows[t.ID]
	if w == nil {
		w = &row{trial: t, id: t.ID, index: t.Index, status: t.Status}
		r.rows[t.ID] = w
	}
	return w
}

// setError keeps the error's first line for the table and the rest (the
// last lines of a failed process's stderr) for the summary.
func (w *row) setError(text string) {
	first, rest, _ := strings.Cut(strings.TrimRight(text, "\n"), "\n")
	w.errText, w.errMore = first, nil
	if rest != "" {
		w.errMore = strings.Split(rest, "\n")
	}
}

func (r *Reporter) setResult(w *row, res *hone.Result) {
	w.reported = true
	w.iter = res.TrainingIteration
	w.total = res.TimeTotal
	if r.obj.Metric != "" {
		w.value, w.hasValue = r.obj.Value(res)
	}
	if r.multi() {
		w.vals, w.has = w.vals[:0], w.has[:0]
		for _, o := range r.objs {
			v, ok := o.Value(res)
			w.vals, w.has = append(w.vals, v), append(w.has, ok)
		}
		w.violation = r.cons.Violation(res)
	}
}

// multi reports whether the reporter shows several objectives or
// constraints: a Pareto front rather than a best trial.
func (r *Reporter) multi() bool { return len(r.objs) > 0 }

func (r *Reporter) now() time.Time {
	now := r.clock.Now()
	if !r.started {
		r.started, r.start, r.lastDraw = true, now, now
	}
	return now
}

// tick draws if the interval has passed since the last draw; on a terminal
// it also draws at the first callback.
func (r *Reporter) tick() {
	first := !r.started
	now := r.now()
	if (first && *r.tty) || now.Sub(r.lastDraw) >= r.interval {
		r.lastDraw = now
		// Statuses change without a callback (a pause, a retry): read the
		// trials' current ones. Callbacks run on the runner's goroutine,
		// so the controller is not changing them now.
		for _, w := range r.rows {
			if w.trial != nil && w.trial.Status.Valid() {
				w.status = w.trial.Status
			}
		}
		r.resize()
		r.draw(r.table(now, true))
	}
}

// draw writes lines: on a terminal over the previous draw, otherwise
// followed by a blank line.
func (r *Reporter) draw(lines []string) {
	var b strings.Builder
	if *r.tty && r.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\x1b[J", r.drawn) // cursor up, clear to end of screen
	}
	for _, l := range lines {
		if r.width > 0 {
			l = cut(l, r.width-1)
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if *r.tty {
		r.drawn = len(lines)
	} else {
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(r.w, b.String()); err != nil && r.err == nil {
		r.err = fmt.Errorf("progress: %w", err)
	}
}

// cut shortens l to at most n runes.
func cut(l string, n int) string {
	if utf8.RuneCountInString(l) <= n {
		return l
	}
	return string([]rune(l)[:n])
}

// statusOrder is the order of statuses in counts.
func statusOrder() []string {
	return []string{string(hone.StatusRunning), Stopped, string(hone.StatusPending), string(hone.StatusPaused),
		string(hone.StatusTerminated), string(hone.StatusError)}
}

// counts renders "2 RUNNING, 1 TERMINATED" for rows, and then the trials
// that never started, if notStarted > 0.
func counts(rows []*row, notStarted int) string {
	n := map[string]int{}
	for _, w := range rows {
		n[w.label()]++
	}
	var parts []string
	for _, s := range statusOrder() {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	if notStarted > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", notStarted, NotStarted))
	}
	return strings.Join(parts, ", ")
}

// sorted returns the rows in creation order.
func (r *Reporter) sorted() []*row {
	rows := make([]*row, 0, len(r.rows))
	for _, w := range r.rows {
		rows = append(rows, w)
	}
	slices.SortFunc(rows, func(a, b *row) int {
		return cmp.Or(cmp.Compare(a.index, b.index), strings.Compare(a.id, b.id))
	})
	return rows
}

// better reports whether a ranks before b by the metric: rows without a
// value (or with NaN) rank last; ties go to the older trial.
func (r *Reporter) better(a, b *row) bool {
	av, bv := a.hasValue && !math.IsNaN(a.value), b.hasValue && !math.IsNaN(b.value)
	switch {
	case av && bv && a.value != b.value:
		return r.obj.Better(a.value, b.value)
	case av != bv:
		return av
	}
	return a.index < b.index
}

func (r *Reporter) best(rows []*row) *row {
	if r.obj.Metric == "" {
		return nil
	}
	var best *row
	for _, w := range rows {
		if w.hasValue && !math.IsNaN(w.value) && (best == nil || r.better(w, best)) {
			best = w
		}
	}
	return best
}

// table renders the header lines and the trials table. On a terminal of
// known width the table leaves out config columns (the last first) until
// it fits, then the iteration and time columns; the trial, its status and
// the metric (or each objective's) stay. live tables also fit the terminal's height (the final
// table may scroll): the rows that do not fit are summarised in one line.
func (r *Reporter) table(now time.Time, live bool) []string {
	rows := r.sorted()
	lines := []string{fmt.Sprintf("== Status: %s (%s) | %s elapsed ==",
		plural(len(rows)+r.notStarted, "trial"), counts(rows, r.notStarted), now.Sub(r.start).Round(time.Second))}
	keys := varyingKeys(rows)
	var f *front
	if r.multi() {
		f = r.front(rows)
		if l := r.frontLine(f); l != "" {
			lines = append(lines, l)
		}
	} else if b := r.best(rows); b != nil {
		l := fmt.Sprintf("Best trial so far: %s with %s=%s", b.id, r.obj.Metric, num(b.value))
		if len(keys) > 0 {
			l += " (" + params(b, keys) + ")"
		}
		lines = append(lines, l)
	}
	if len(rows) == 0 {
		return lines
	}
	// A live table on a terminal of known height fits in it, with one
	// line left free so that the first line stays on the screen: the rows
	// that do not fit are summarised in one line, after which a note may
	// name the columns left out.
	avail := 0
	if live && *r.tty && r.height > 0 {
		avail = max(r.height-1-len(lines)-1, 1) // the table's head takes one
	}
	limit := r.maxRows
	if avail > 0 {
		limit = min(limit, avail)
	}
	shown, hidden, cols, dropped := r.fit(rows, keys, limit, f)
	for avail > 0 && limit > 1 && len(shown)+len(notes(hidden, dropped)) > avail {
		limit--
		shown, hidden, cols, dropped = r.fit(rows, keys, limit, f)
	}

	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for i := range cols[0].cells {
		cells := make([]string, len(cols))
		for j, c := range cols {
			cells[j] = c.cells[i]
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	_ = tw.Flush() // writes to a strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		lines = append(lines, strings.TrimRight(l, " "))
	}
	return append(lines, notes(hidden, dropped)...)
}

// notes renders the lines under the table: how many trials it leaves out,
// with their statuses, and which columns.
func notes(hidden []*row, dropped []string) []string {
	var lines []string
	if len(hidden) > 0 {
		lines = append(lines, fmt.Sprintf("... %s not shown (%s)", plural(len(hidden), "more trial"), counts(hidden, 0)))
	}
	if len(dropped) > 0 {
		lines = append(lines, fmt.Sprintf("... %s: %s", plural(len(dropped), "more column"), strings.Join(dropped, ", ")))
	}
	return lines
}

// column is one column of the table: its heading and then one cell per
// shown row.
type column struct {
	cells []string
	width int // in runes
	pos   int // its place in the full table
	elide int // 2: a configuration key's, left out first; 1: iter and time, next; 0: kept
}

// fit picks at most limit rows to show and the columns that fit the
// terminal's width, and returns the names of the columns left out, in
// the table's order. f is the Pareto front in multi mode, else nil.
func (r *Reporter) fit(rows []*row, keys []string, limit int, f *front) (shown, hidden []*row, cols []column, dropped []string) {
	shown, hidden = r.pick(rows, limit, f)
	add := func(head string, elide int, cell func(w *row) string) {
		c := column{cells: []string{head}, pos: len(cols), elide: elide}
		for _, w := range shown {
			c.cells = append(c.cells, cell(w))
		}
		for _, x := range c.cells {
			c.width = max(c.width, utf8.RuneCountInString(x))
		}
		cols = append(cols, c)
	}
	add("Trial", 0, func(w *row) string { return w.id })
	add("Status", 0, func(w *row) string { return w.label() })
	for _, k := range keys {
		add(k, 2, func(w *row) string { return w.config[k] })
	}
	if r.obj.Metric != "" {
		add(r.obj.Metric, 0, func(w *row) string {
			if w.hasValue {
				return num(w.value)
			}
			return ""
		})
	}
	for i, o := range r.objs {
		add(o.Metric, 0, func(w *row) string {
			if i < len(w.has) && w.has[i] {
				return num(w.vals[i])
			}
			return ""
		})
	}
	add("iter", 1, func(w *row) string {
		if w.reported {
			return strconv.Itoa(w.iter)
		}
		return ""
	})
	add("total time (s)", 1, func(w *row) string {
		if w.reported {
			return strconv.FormatFloat(w.total, 'f', 1, 64)
		}
		return ""
	})
	if r.width <= 0 {
		return shown, hidden, cols, nil
	}
	total := func() int {
		n := 2 * (len(cols) - 1) // the gaps
		for _, c := range cols {
			n += c.width
		}
		return n
	}
	var out []column
	for total() > r.width-1 {
		drop := -1
		for level := 2; level >= 1 && drop < 0; level-- {
			for j := len(cols) - 1; j >= 0; j-- {
				if cols[j].elide == level {
					drop = j
					break
				}
			}
		}
		if drop < 0 {
			break // what is left is cut at the terminal's width
		}
		out = append(out, cols[drop])
		cols = slices.Delete(cols, drop, drop+1)
	}
	slices.SortFunc(out, func(a, b column) int { return cmp.Compare(a.pos, b.pos) })
	for _, c := range out {
		dropped = append(dropped, c.cells[0])
	}
	return shown, hidden, cols, dropped
}

// pick chooses at most limit rows to show: running trials first, then the
// best by the metric (in multi mode, the trials on f, the front), then
// the oldest; shown rows keep creation order.
func (r *Reporter) pick(rows []*row, limit int, f *front) (shown, hidden []*row) {
	if len(rows) <= limit {
		return rows, nil
	}
	byPriority := slices.Clone(rows) // in creation order
	if r.multi() {
		group := func(w *row) int {
			switch {
			case w.status == hone.StatusRunning:
				return 0
			case f != nil && f.on[w]:
				return 1
			}
			return 2
		}
		slices.SortStableFunc(byPriority, func(a, b *row) int { return cmp.Compare(group(a), group(b)) })
	} else {
		slices.SortStableFunc(byPriority, r.byPriority)
	}
	keep := map[*row]bool{}
	for _, w := range byPriority[:limit] {
		keep[w] = true
	}
	for _, w := range rows {
		if keep[w] {
			shown = append(shown, w)
		} else {
			hidden = append(hidden, w)
		}
	}
	return shown, hidden
}

// byPriority orders rows for pick with one objective: running trials
// first, then by the metric.
func (r *Reporter) byPriority(a, b *row) int {
	ar, br := a.status == hone.StatusRunning, b.status == hone.StatusRunning
	switch {
	case ar != br:
		if ar {
			return -1
		}
		return 1
	case r.better(a, b):
		return -1
	case r.better(b, a):
		return 1
	}
	return 0
}

// summary renders the end-of-experiment summary.
func (r *Reporter) summary(now time.Time) []string {
	rows := r.sorted()
	verb := "finished"
	for _, w := range rows {
		if !w.status.Finished() {
			verb = "stopped" // interrupted or out of budget: a resume can go on
			break
		}
	}
	if r.notStarted > 0 {
		verb = "stopped"
	}
	lines := []string{fmt.Sprintf("Experiment %s after %s: %s (%s).",
		verb, now.Sub(r.start).Round(time.Second), plural(len(rows)+r.notStarted, "trial"), counts(rows, r.notStarted))}
	if r.multi() {
		lines = append(lines, r.frontSummary(r.front(rows))...)
	} else if b := r.best(rows); b != nil {
		lines = append(lines, fmt.Sprintf("Best trial: %s with %s=%s at iteration %d, config:", b.id, r.obj.Metric, num(b.value), b.iter))
		keys := make([]string, 0, len(b.config))
		for k := range b.config {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			lines = append(lines, fmt.Sprintf("  %s: %s", k, b.config[k]))
		}
	} else if r.obj.Metric != "" {
		lines = append(lines, fmt.Sprintf("No trial reported %s.", r.obj.Metric))
	}
	lines = append(lines, failures(rows)...)
	if r.notStarted > 0 {
		lines = append(lines, fmt.Sprintf("%s never started (no results) and %s not listed.", plural(r.notStarted, "trial"), isAre(r.notStarted)))
	}
	return lines
}

// Limits on what the Pareto front's lines show.
const (
	// frontIDs is the most front trials the live line names.
	frontIDs = 5
	// frontTrials is the most front trials the summary lists.
	frontTrials = 10
)

// front is the Pareto front of the finished trials at one draw, in multi
// mode: the points are the TERMINATED rows whose last result has a finite
// value of every objective, as hone results --pareto takes them.
type front struct {
	finished int // TERMINATED rows
	points   int // of them, those with every objective
	feasible int // of the points, those that satisfy every constraint
	// rows are the trials on the front, in creation order; on holds them.
	rows []*row
	on   map[*row]bool
}

// point reads w's objectives as losses to minimise into dst, and reports
// whether every one has a finite value.
func (r *Reporter) point(dst []float64, w *row) ([]float64, bool) {
	dst = dst[:0]
	if len(w.vals) != len(r.objs) {
		return dst, false
	}
	for i, o := range r.objs {
		v := w.vals[i]
		if !w.has[i] || math.IsNaN(v) || math.IsInf(v, 0) {
			return dst, false
		}
		dst = append(dst, o.Loss(v))
	}
	return dst, true
}

// front works out the Pareto front of rows, given in creation order. The
// front is that of Deb's constrained domination (the rank 0 of
// pareto.SortConstrained): the non-dominated feasible points while any
// point is feasible, else every point of the least violation. It takes
// pareto.Front's time, O(n log n) for two or three objectives.
func (r *Reporter) front(rows []*row) *front {
	f := &front{on: map[*row]bool{}}
	var cands []*row
	var points [][]float64
	least := math.Inf(1)
	for _, w := range rows {
		if w.status != hone.StatusTerminated {
			continue
		}
		f.finished++
		p, ok := r.point(nil, w)
		if !ok {
			continue
		}
		f.points++
		v := w.violation
		if math.IsNaN(v) {
			v = math.Inf(1)
		}
		switch {
		case v <= 0:
			if f.feasible == 0 {
				cands, points = cands[:0], points[:0]
			}
			f.feasible++
			cands, points = append(cands, w), append(points, p)
		case f.feasible > 0:
		case v < least:
			least = v
			cands, points = append(cands[:0], w), append(points[:0], p)
		case v == least:
			cands, points = append(cands, w), append(points, p)
		}
	}
	if f.feasible > 0 {
		for _, i := range pareto.Front(points) { // increasing: creation order
			f.rows = append(f.rows, cands[i])
		}
	} else {
		f.rows = cands
	}
	for _, w := range f.rows {
		f.on[w] = true
	}
	return f
}

// objectiveList renders "loss (min), ms (min)".
func (r *Reporter) objectiveList() string {
	s := make([]string, len(r.objs))
	for i, o := range r.objs {
		s[i] = o.String()
	}
	return strings.Join(s, ", ")
}

// feasibility renders, with constraints, how many of f's points are
// feasible: "; 2 feasible under memory_mb ≤ 4000"; "" without.
func (r *Reporter) feasibility(f *front) string {
	if len(r.cons) == 0 {
		return ""
	}
	cs := make([]string, len(r.cons))
	for i, c := range r.cons {
		cs[i] = c.String()
	}
	s := fmt.Sprintf("; %d feasible under %s", f.feasible, strings.Join(cs, ", "))
	if f.feasible == 0 {
		s += ", so the front is of the least infeasible"
	}
	return s
}

// frontLine renders the line under the live table's header: the front's
// size among the finished trials and its first trials; "" while no
// finished trial has every objective.
func (r *Reporter) frontLine(f *front) string {
	if f.points == 0 {
		return ""
	}
	ids := make([]string, 0, min(len(f.rows), frontIDs)+1)
	for _, w := range f.rows[:min(len(f.rows), frontIDs)] {
		ids = append(ids, w.id)
	}
	if n := len(f.rows) - frontIDs; n > 0 {
		ids = append(ids, fmt.Sprintf("… (%d more)", n))
	}
	return fmt.Sprintf("Pareto front so far (%s): %d of %s: %s%s", r.objectiveList(),
		len(f.rows), plural(f.finished, "finished trial"), strings.Join(ids, ", "), r.feasibility(f))
}

// frontSummary renders the summary's lines about the front: its size,
// then its trials by the first objective, best first (then by the
// others, then by creation), each with its values and configuration.
func (r *Reporter) frontSummary(f *front) []string {
	if f.points == 0 {
		return []string{fmt.Sprintf("No finished trial reported every objective (%s).", strings.Join(r.objs.Metrics(), ", "))}
	}
	lines := []string{fmt.Sprintf("Pareto front: %d of %s (%s)%s:", len(f.rows),
		plural(f.finished, "finished trial"), r.objectiveList(), r.feasibility(f))}
	type entry struct {
		w      *row
		losses []float64
	}
	on := make([]entry, len(f.rows))
	for i, w := range f.rows {
		p, _ := r.point(nil, w) // on the front: every objective is there
		on[i] = entry{w, p}
	}
	slices.SortStableFunc(on, func(a, b entry) int {
		for i := range a.losses {
			if c := cmp.Compare(a.losses[i], b.losses[i]); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.w.index, b.w.index)
	})
	for _, e := range on[:min(len(on), frontTrials)] {
		vals := make([]string, len(r.objs))
		for i, o := range r.objs {
			vals[i] = o.Metric + "=" + num(e.w.vals[i])
		}
		l := fmt.Sprintf("  %s: %s", e.w.id, strings.Join(vals, ", "))
		if keys := slices.Sorted(maps.Keys(e.w.config)); len(keys) > 0 {
			l += " (" + params(e.w, keys) + ")"
		}
		lines = append(lines, l)
	}
	if n := len(on) - frontTrials; n > 0 {
		lines = append(lines, fmt.Sprintf("  … and %d more: hone results --pareto lists them all", n))
	}
	return lines
}

// Limits on the error text the summary shows under failed trials.
const (
	// errLines is the most lines shown under one failed trial: the last
	// ones, which hold a traceback's exception.
	errLines = 12
	// errTrials is the most failed trials whose lines are shown; the
	// others get their first line only.
	errTrials = 5
)

// failures renders the failed trials among rows: each one's error, with
// the lines after its first (a failed process's last lines of stderr, such
// as a Python traceback) indented under it. Lines the same as those of an
// earlier trial are not repeated.
func failures(rows []*row) []string {
	var failed []*row
	for _, w := range rows {
		if w.status == hone.StatusError {
			failed = append(failed, w)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	lines := []string{plural(len(failed), "trial") + " failed:"}
	shown := map[string]string{} // lines shown -> the trial they were shown under
	withLines, cut := 0, 0
	for _, w := range failed {
		lines = append(lines, fmt.Sprintf("  %s: %s", w.id, w.errText))
		if len(w.errMore) == 0 {
			continue
		}
		key := strings.Join(w.errMore, "\n")
		if first, ok := shown[key]; ok {
			lines = append(lines, fmt.Sprintf("    (the same last lines as %s)", first))
			continue
		}
		if withLines == errTrials {
			cut++
			continue
		}
		withLines++
		shown[key] = w.id
		more := w.errMore
		if len(more) > errLines {
			lines = append(lines, fmt.Sprintf("    ... %s before these in error.txt", plural(len(more)-errLines, "line")))
			more = more[len(more)-errLines:]
		}
		for _, l := range more {
			lines = append(lines, "    "+l)
		}
	}
	if cut > 0 {
		if cut == 1 {
			lines = append(lines, "  (for the last one, see error.txt in its directory)")
		} else {
			lines = append(lines, fmt.Sprintf("  (for the last %d, see error.txt in their directories)", cut))
		}
	}
	return lines
}

// plural renders "1 trial", "2 trials".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func params(w *row, keys []string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + w.config[k]
	}
	return strings.Join(parts, ", ")
}

// varyingKeys returns, sorted, the configuration keys whose values are not
// the same in every row (a key missing from some row varies).
func varyingKeys(rows []*row) []string {
	if len(rows) < 2 {
		return nil
	}
	var keys []string
	seen := map[string]bool{}
	for _, w := range rows {
		for k := range w.config {
			if seen[k] {
				continue
			}
			seen[k] = true
			v, ok := rows[0].config[k]
			for _, o := range rows {
				if ov, ook := o.config[k]; ook != ok || ov != v {
					keys = append(keys, k)
					break
				}
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// flatConfig flattens a configuration to "/"-joined keys and display text.
func flatConfig(c hone.Config) map[string]string {
	out := map[string]string{}
	hone.Flatten("", map[string]any(c), func(k string, leaf any) { out[k] = Display(leaf) })
	return out
}

// Display renders a value compactly, as the progress table shows it:
// integers exactly, other numbers with 5 significant digits, strings as
// they are, anything else as JSON.
func Display(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	}
	if f, ok := hone.Number(v); ok {
		return num(f)
	}
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	return fmt.Sprintf("%v", v)
}

// num renders a number: integers exactly (below 1e15), others with 5
// significant digits.
func num(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', 5, 64)
}

// Package results reads an experiment directory — running, finished or
// crashed — and answers questions about its trials: their configurations,
// statuses, results and checkpoints, and which trial is best.
package results

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/callback"
	"github.com/hone-tune/hone/internal/journal"
)

// Experiment is an experiment directory as read by Open.
type Experiment struct {
	Dir    string
	Name   string
	Seed   uint64
	Trials []*Trial // in creation order
	// Began is when the experiment first began (unix nanoseconds), 0 if
	// the journal records no beginning yet.
	Began int64
	// LastResult is when the latest result arrived (unix nanoseconds), or 0.
	LastResult int64

	byID map[string]*Trial
}

// Trial is one trial as recorded in the journal.
type Trial struct {
	ID          string
	Index       int
	Config      hone.Config
	Tag         string
	Dir         string // absolute
	Status      hone.Status
	Error       string
	Failures    int
	Checkpoints []string // kept checkpoint paths, absolute, oldest first
	// Started is true once the journal records the trial RUNNING: a trial
	// that never started (one still queued, or left PENDING when a stop
	// condition or an interrupt ended the experiment) has no results.
	Started bool
	// Reported counts the results the journal records for the trial; its
	// result.json holds as many rows once they are flushed.
	Reported int

	rows []Row
	read bool
	off  int64  // bytes of result.json read into rows: whole lines only
	end  []byte // the last bytes before off, as read
	exp  *Experiment
}

// Row is one line of a trial's result.json. Non-finite numbers written as
// the strings "NaN", "Infinity" and "-Infinity" are read back as floats.
type Row map[string]any

// Value returns a numeric field of the row.
func (r Row) Value(key string) (float64, bool) { return hone.Number(r[key]) }

// Open reads the experiment in dir. It reads the journal's records only:
// it needs neither the searcher nor the scheduler, and works while the
// experiment runs.
func Open(dir string) (*Experiment, error) {
	dir, err := filepath.Abs(dir) // Trial.Dir and Checkpoints are absolute
	if err != nil {
		return nil, fmt.Errorf("open experiment: %w", err)
	}
	j, err := journal.Read(filepath.Join(dir, journal.FileName))
	if err != nil {
		return nil, fmt.Errorf("open experiment: %w", err)
	}
	e := &Experiment{Dir: dir, Name: j.Header.Name, Seed: j.Header.Seed, byID: map[string]*Trial{}}
	for _, l := range j.Lines {
		e.apply(l)
	}
	return e, nil
}

// apply updates the experiment with one journal line: records change
// trials; a result input counts towards its trial's Reported.
func (e *Experiment) apply(l journal.Line) {
	if in := l.Event; in != nil {
		if in.Kind == hone.EventResult {
			if t := e.byID[in.TrialID]; t != nil {
				t.Reported++
				if in.Time > e.LastResult {
					e.LastResult = in.Time
				}
			}
		}
		if in.Kind == hone.EventBegin && e.Began == 0 {
			e.Began = in.Time
		}
		return
	}
	r := l.Rec
	if r == nil {
		return
	}
	t := e.byID[r.Trial]
	switch r.Op {
	case "trial":
		t = &Trial{ID: r.Trial, Index: r.Index, Config: r.Config, Tag: r.Tag, Dir: filepath.Join(e.Dir, filepath.FromSlash(r.Dir)), exp: e}
		e.byID[r.Trial] = t
		e.Trials = append(e.Trials, t)
	case "status":
		if t != nil {
			t.Status, t.Error, t.Failures = r.Status, r.Error, r.Failures
			if r.Status == hone.StatusRunning {
				t.Started = true
			}
		}
	case "config":
		if t != nil {
			t.Config, t.Tag = r.Config, r.Tag
		}
	case "ckpt":
		if t != nil {
			t.Checkpoints = append(t.Checkpoints, filepath.Join(e.Dir, filepath.FromSlash(r.Path)))
		}
	case "ckdel":
		if t != nil {
			p := filepath.Join(e.Dir, filepath.FromSlash(r.Path))
			for i, c := range t.Checkpoints {
				if c == p {
					t.Checkpoints = append(t.Checkpoints[:i], t.Checkpoints[i+1:]...)
					break
				}
			}
		}
	case "drop":
		delete(e.byID, r.Trial)
		for i, x := range e.Trials {
			if x.ID == r.Trial {
				e.Trials = append(e.Trials[:i], e.Trials[i+1:]...)
				break
			}
		}
	}
}

// NotStarted reports whether the trial never ran and is not in ERROR: it
// has no results and is not a result itself. An ERROR trial is always
// reported, whether or not it got to run.
func (t *Trial) NotStarted() bool { return !t.Started && t.Status != hone.StatusError }

// Trial returns the trial with id, or nil.
func (e *Experiment) Trial(id string) *Trial {
	for _, t := range e.Trials {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// Results returns every row of the trial's result.json (cached after the
// first call; Update reads rows written since). A torn last line from a
// crash is ignored.
func (t *Trial) Results() ([]Row, error) {
	if t.read {
		return t.rows, nil
	}
	if _, err := t.Update(); err != nil {
		return nil, err
	}
	return t.rows, nil
}

// Update reads the rows appended to the trial's result.json since it was
// last read and reports how many there were. A file that shrank (a resume
// dropped rows a cut journal no longer holds) is read again from the
// start; Update then reports changed rows as added. A line being written
// is left for the next call.
func (t *Trial) Update() (int, error) {
	f, err := os.Open(filepath.Join(t.Dir, "result.json"))
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		// No file, or no trial directory: a trial whose directory was
		// replaced by a file failed on it, as its journaled error says.
		t.read = true
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("results of trial %s: %w", t.ID, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("results of trial %s: %w", t.ID, err)
	}
	if info.Size() < t.off || !t.sameEnd(f) {
		// Cut back, and perhaps written on since: read it again.
		t.rows, t.off, t.end = nil, 0, nil
	}
	if info.Size() == t.off {
		t.read = true
		return 0, nil
	}
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return 0, fmt.Errorf("results of trial %s: %w", t.ID, err)
	}
	br := bufio.NewReaderSize(io.LimitReader(f, info.Size()-t.off), 64<<10)
	n := 0
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			complete := line[len(line)-1] == '\n'
			row, ok := parseRow(line)
			if !complete && !ok {
				break // being written, or torn: read again next time
			}
			t.off += int64(len(line))
			if ok {
				t.rows = append(t.rows, row)
				n++
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return n, fmt.Errorf("results of trial %s: %w", t.ID, err)
		}
	}
	if t.off > 0 {
		t.end = make([]byte, min(t.off, endLen))
		if _, err := f.ReadAt(t.end, t.off-int64(len(t.end))); err != nil {
			t.end = nil
		}
	}
	t.read = true
	return n, nil
}

// endLen is how many of the last bytes read Update keeps to see whether
// the file was rewritten since.
const endLen = 64

// sameEnd reports whether the file still holds, just before the offset
// read up to, the bytes it held when they were read.
func (t *Trial) sameEnd(f *os.File) bool {
	if len(t.end) == 0 {
		return true
	}
	b := make([]byte, len(t.end))
	if _, err := f.ReadAt(b, t.off-int64(len(b))); err != nil {
		return false
	}
	return bytes.Equal(b, t.end)
}

// parseRow decodes one line of result.json; it reports false for a blank
// or torn line.
func parseRow(line []byte) (Row, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, false
	}
	var row Row
	if err := json.Unmarshal(line, &row); err != nil || row == nil {
		return nil, false // a torn line from a crash
	}
	for k, v := range row {
		if str, ok := v.(string); ok {
			if f, ok := callback.ParseNonFinite(str); ok {
				row[k] = f
			}
		}
	}
	return row, true
}

// Last returns the trial's last result, or nil.
func (t *Trial) Last() (Row, error) {
	rows, err := t.Results()
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return rows[len(rows)-1], nil
}

// Scopes for Best: which results of a trial count.
const (
	ScopeLast      = "last"        // the last result
	ScopeAvg       = "avg"         // the mean over all results
	ScopeAll       = "all"         // the best result
	ScopeLast5Avg  = "last-5-avg"  // the mean of the last 5
	ScopeLast10Avg = "last-10-avg" // the mean of the last 10
)

// Score returns the trial's value of the objective o under scope, and
// whether any of its results had o's metric. NaN values are skipped.
func (t *Trial) Score(o hone.Objective, scope string) (float64, bool, error) {
	switch scope {
	case ScopeLast, "", ScopeAvg, ScopeAll, ScopeLast5Avg, ScopeLast10Avg:
	default:
		return 0, false, fmt.Errorf("scope %q: allowed values are last, avg, all, last-5-avg, last-10-avg", scope)
	}
	rows, err := t.Results()
	if err != nil {
		return 0, false, err
	}
	var vals []float64
	for _, r := range rows {
		if v, ok := r.Value(o.Metric); ok && !math.IsNaN(v) {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return 0, false, nil
	}
	mean := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	switch scope {
	case ScopeLast, "":
		return vals[len(vals)-1], true, nil
	case ScopeAvg:
		return mean(vals), true, nil
	case ScopeAll:
		best := vals[0]
		for _, v := range vals[1:] {
			if o.Better(v, best) {
				best = v
			}
		}
		return best, true, nil
	case ScopeLast5Avg:
		return mean(vals[max(0, len(vals)-5):]), true, nil
	case ScopeLast10Avg:
		return mean(vals[max(0, len(vals)-10):]), true, nil
	}
	return 0, false, fmt.Errorf("scope %q: allowed values are last, avg, all, last-5-avg, last-10-avg", scope)
}

// Best returns the trial with the best score of the objective o under
// scope; o's mode must be given. It is an error if no result of any trial
// has the metric; the error lists the keys the results do have.
func (e *Experiment) Best(o hone.Objective, scope string) (*Trial, float64, error) {
	if !o.Mode.Valid() {
		return nil, 0, fmt.Errorf("best trial: mode %q: allowed values are \"min\" and \"max\"", o.Mode)
	}
	var best *Trial
	var bestV float64
	seen := map[string]bool{}
	for _, t := range e.Trials {
		v, ok, err := t.Score(o, scope)
		if err != nil {
			return nil, 0, fmt.Errorf("best trial: %w", err)
		}
		if !ok {
			rows, _ := t.Results()
			for _, r := range rows {
				for k := range r {
					seen[k] = true
				}
			}
			continue
		}
		if best == nil || o.Better(v, bestV) {
			best, bestV = t, v
		}
	}
	if best == nil {
		ks := make([]string, 0, len(seen))
		for k := range seen {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return nil, 0, fmt.Errorf("best trial: metric %q is in no result of %s (result keys: %s)", o.Metric, e.Dir, strings.Join(ks, ", "))
	}
	return best, bestV, nil
}

// MetricsPrefix escapes a result field's CSV column name; see ResultColumn.
const MetricsPrefix = "metrics/"

// ResultColumn returns the CSV column WriteCSV heads a result field with,
// given its key path joined by "/". It is the key path itself, unless that
// would clash with a column of another kind or be ambiguous: a name that is
// trial_id or status, or that starts with config/ or metrics/, is prefixed
// with MetricsPrefix (a metric config/x is in column metrics/config/x). So
// every column name says where its value comes from, and removing one
// MetricsPrefix from a column that starts with it gives the field's key.
func ResultColumn(key string) string {
	switch {
	case key == "trial_id", key == "status",
		strings.HasPrefix(key, "config/"), strings.HasPrefix(key, MetricsPrefix):
		return MetricsPrefix + key
	}
	return key
}

// WriteCSV writes one row per trial of e.Trials: trial_id, status, the
// configuration (flattened with "/", each column prefixed with config/),
// then the fields of the last result, sorted, in columns named by
// ResultColumn. Numbers are written as result.json writes them: the
// shortest text that reads back as the same float64 (5e-324, 0.1, 1e+21),
// non-finite ones as NaN, Infinity and -Infinity.
func (e *Experiment) WriteCSV(w io.Writer) error {
	cfgKeys, resKeys := map[string]bool{}, map[string]bool{}
	type line struct {
		cfg map[string]string
		res map[string]string
	}
	lines := make([]line, len(e.Trials))
	for i, t := range e.Trials {
		lines[i] = line{cfg: map[string]string{}, res: map[string]string{}}
		flatten("", map[string]any(t.Config), lines[i].cfg)
		last, err := t.Last()
		if err != nil {
			return err
		}
		for k, v := range last {
			if k == hone.FieldConfig || k == hone.FieldTrialID {
				continue // trial_id is the first column already
			}
			flatten(k, v, lines[i].res)
		}
		for k := range lines[i].cfg {
			cfgKeys[k] = true
		}
		for k := range lines[i].res {
			resKeys[k] = true
		}
	}
	ck, rk := sorted(cfgKeys), sorted(resKeys)
	header := []string{"trial_id", "status"}
	for _, k := range ck {
		header = append(header, "config/"+k)
	}
	for _, k := range rk {
		header = append(header, ResultColumn(k))
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	for i, t := range e.Trials {
		rec := []string{t.ID, string(t.Status)}
		for _, k := range ck {
			rec = append(rec, lines[i].cfg[k])
		}
		for _, k := range rk {
			rec = append(rec, lines[i].res[k])
		}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("write csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

func flatten(prefix string, v any, out map[string]string) {
	hone.Flatten(prefix, v, func(k string, leaf any) { out[k] = cell(leaf) })
}

// cell renders one CSV cell: numbers as FormatNumber does, strings as they
// are, anything else as JSON.
func cell(v any) string {
	switch x := v.(type) {
	case float64:
		return FormatNumber(x)
	case string:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// FormatNumber renders f as result.json does: the shortest text that
// parses back to the same float64, in JSON's notation (exponents below
// 1e-6 and from 1e21 on: 5e-324, 1e+21), and NaN, Infinity or -Infinity
// for non-finite values.
func FormatNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return callback.NaN
	case math.IsInf(f, 1):
		return callback.PosInf
	case math.IsInf(f, -1):
		return callback.NegInf
	}
	b, err := json.Marshal(f)
	if err != nil { // finite floats always marshal
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return string(b)
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Package callback holds hone.Callback implementations that keep the
// per-trial files of SEMANTICS §2.
package callback

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/fsutil"
)

// The per-trial file names.
const (
	ParamsFile   = "params.json"
	ResultFile   = "result.json"
	ProgressFile = "progress.csv"
	ErrorFile    = "error.txt"
)

// TrialFiles is a hone.Callback that writes, in each trial's directory
// <experimentDir>/<trial.Dir>:
//
//   - params.json: the trial's configuration as indented JSON, written on
//     trial start and rewritten atomically whenever it changed (PBT);
//   - result.json: one JSON object per result per line, as built by Row;
//   - progress.csv: the same rows without "config", nested values
//     flattened with "/" in the column names; the header comes from the
//     first row, and a later row with new keys extends it by rewriting the
//     file atomically (a cost paid only when the set of keys grows);
//   - error.txt: on each trial error, a timestamp line and the error text.
//
// Non-finite floats are written as the strings NaN, PosInf and NegInf
// (JSON cannot hold them), in every file.
//
// A live trial's result.json and progress.csv stay open. Rows are
// buffered and handed to the operating system by FlushResults, one write
// per file for all the rows since the last call (no fsync); the runner
// calls it within a fraction of a second of a result, and on resume
// rewrites from the journal the rows a killed process had not flushed
// (RecoverResult). The files are flushed, fsynced (unless NoSync) and
// closed when the trial completes or fails and at experiment end. At most 256 trials (see WithMaxOpen) keep
// files open; beyond that the least recently used trial's files are closed,
// without fsync, and reopened when needed.
//
// Callback methods cannot return errors: the first one is kept and
// returned by Err and Close, and writing goes on for other trials.
// TrialFiles is called on the runner's goroutine and is not safe for
// concurrent use.
type TrialFiles struct {
	root    string
	durable bool
	clock   hone.Clock
	maxOpen int

	open  map[string]*trialFiles // by trial id
	dirty []*trialFiles          // trials with rows added since the last FlushResults
	use   uint64                 // counter for least-recently-used eviction
	err   error
}

var _ hone.BufferedCallback = (*TrialFiles)(nil)

// trialFiles is the open state of one trial's files.
type trialFiles struct {
	id       string
	dir      string // absolute trial directory
	params   []byte // params.json content as last written or read
	result   *fsutil.AppendFile
	progress *fsutil.AppendFile
	header   []string        // progress.csv columns
	columns  map[string]bool // set of header
	lastUse  uint64
	buf      bytes.Buffer // reused for encoding result rows
	line     []byte       // reused for CSV rows
	fields   []string     // reused for CSV rows
	dirty    bool         // rows added since the last FlushResults

	// Rows in the files, counted once by RecoverResult.
	counted       bool
	results, rows int
}

// Option configures TrialFiles.
type Option func(*TrialFiles)

// NoSync skips every fsync (atomic rewrites stay atomic for readers). For
// simulations and tests.
func NoSync() Option { return func(f *TrialFiles) { f.durable = false } }

// WithClock sets the clock that timestamps error.txt entries (default: the
// system clock).
func WithClock(c hone.Clock) Option { return func(f *TrialFiles) { f.clock = c } }

// WithMaxOpen caps the number of trials whose files are open at once (default
// 256; each open trial holds two file descriptors). n < 1 means 1.
func WithMaxOpen(n int) Option { return func(f *TrialFiles) { f.maxOpen = max(n, 1) } }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// NewTrialFiles returns a TrialFiles writing under experimentDir.
func NewTrialFiles(experimentDir string, opts ...Option) *TrialFiles {
	f := &TrialFiles{
		root:    experimentDir,
		durable: true,
		clock:   systemClock{},
		maxOpen: 256,
		open:    map[string]*trialFiles{},
	}
	for _, o := range opts {
		o(f)
	}
	return f
}

// Err returns the first error met while writing, or nil.
func (f *TrialFiles) Err() error { return f.err }

func (f *TrialFiles) fail(err error) {
	if err != nil && f.err == nil {
		f.err = err
	}
}

// OnTrialStart writes params.json if it is missing or the configuration
// changed, and opens the trial's files.
func (f *TrialFiles) OnTrialStart(t *hone.Trial) {
	tf, opened, err := f.get(t)
	if err != nil {
		f.fail(err)
		return
	}
	if !opened {
		f.fail(f.writeParams(t, tf))
	}
}

// OnTrialResult adds r's row to the buffers of result.json and
// progress.csv, opening the trial's files if needed; FlushResults hands the
// buffers to the operating system (TrialFiles is a hone.BufferedCallback).
func (f *TrialFiles) OnTrialResult(t *hone.Trial, r *hone.Result) {
	tf, _, err := f.get(t)
	if err != nil {
		f.fail(err)
		return
	}
	f.addRow(t, tf, r, true, true)
}

// addRow adds r's row to the buffer of result.json (if toResult) and of
// progress.csv (if toProgress), and marks tf for the next FlushResults.
func (f *TrialFiles) addRow(t *hone.Trial, tf *trialFiles, r *hone.Result, toResult, toProgress bool) {
	row := Row(t, r)
	if toResult {
		tf.buf.Reset()
		if err := appendJSON(&tf.buf, row, false); err != nil {
			f.fail(fmt.Errorf("trial %s: %s: %w", t.ID, ResultFile, err))
		} else {
			tf.result.Write(tf.buf.Bytes())
		}
	}
	if toProgress {
		delete(row, hone.FieldConfig)
		f.fail(f.appendProgress(t, tf, row))
	}
	if !tf.dirty {
		tf.dirty = true
		f.dirty = append(f.dirty, tf)
	}
}

// FlushResults hands the rows added since the last call to the operating
// system, one write per file (no fsync).
func (f *TrialFiles) FlushResults() {
	for _, tf := range f.dirty {
		if tf.dirty && f.open[tf.id] == tf {
			f.fail(tf.flush())
		}
		tf.dirty = false
	}
	clear(f.dirty)
	f.dirty = f.dirty[:0]
}

func (tf *trialFiles) flush() error {
	if err := errors.Join(tf.result.Flush(), tf.progress.Flush()); err != nil {
		return fmt.Errorf("trial %s: %w", tf.id, err)
	}
	return nil
}

// RecoverResult writes r's row unless the trial's files already hold it:
// result.json and progress.csv are each counted once, and a row is added to
// a file that holds no more than seq rows (hone.BufferedCallback).
func (f *TrialFiles) RecoverResult(t *hone.Trial, r *hone.Result, seq int) {
	tf, _, err := f.get(t)
	if err != nil {
		f.fail(err)
		return
	}
	if !tf.counted {
		results, progress, err := tf.countRows()
		if err != nil {
			f.fail(fmt.Errorf("trial %s: recover rows: %w", t.ID, err))
			return
		}
		tf.results, tf.rows, tf.counted = results, progress, true
	}
	toResult, toProgress := seq >= tf.results, seq >= tf.rows
	if !toResult && !toProgress {
		return
	}
	f.addRow(t, tf, r, toResult, toProgress)
	if toResult {
		tf.results++
	}
	if toProgress {
		tf.rows++
	}
}

// countRows counts the rows written to result.json (lines) and
// progress.csv (records after the header).
func (tf *trialFiles) countRows() (results, progress int, err error) {
	if err := tf.flush(); err != nil {
		return 0, 0, err
	}
	data, err := os.ReadFile(filepath.Join(tf.dir, ResultFile))
	if err != nil {
		return 0, 0, err
	}
	results = bytes.Count(data, []byte{'\n'})
	file, err := os.Open(filepath.Join(tf.dir, ProgressFile))
	if err != nil {
		return 0, 0, err
	}
	defer file.Close()
	cr := csv.NewReader(file)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	for n := -1; ; n++ {
		if _, err := cr.Read(); err == io.EOF {
			return results, max(n, 0), nil
		} else if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", ProgressFile, err)
		}
	}
}

// OnCheckpoint does nothing: a result's checkpoint is recorded in its row
// as checkpoint_dir_name.
func (f *TrialFiles) OnCheckpoint(*hone.Trial, *hone.Checkpoint) {}

// OnTrialComplete fsyncs (unless NoSync) and closes the trial's files.
func (f *TrialFiles) OnTrialComplete(t *hone.Trial) { f.fail(f.closeTrial(t.ID, f.durable)) }

// OnTrialError appends a timestamp line and the error text to error.txt,
// then fsyncs (unless NoSync) and closes the trial's files (a retried trial
// reopens them on start).
func (f *TrialFiles) OnTrialError(t *hone.Trial, err error) {
	f.fail(f.appendError(t, err))
	f.fail(f.closeTrial(t.ID, f.durable))
}

// OnExperimentEnd fsyncs (unless NoSync) and closes every open file.
func (f *TrialFiles) OnExperimentEnd([]*hone.Trial) { f.fail(f.closeAll()) }

// Close fsyncs (unless NoSync) and closes every open file, and returns Err. Callbacks may still come
// afterwards and reopen files.
func (f *TrialFiles) Close() error {
	f.fail(f.closeAll())
	return f.err
}

func (f *TrialFiles) closeAll() error {
	ids := make([]string, 0, len(f.open))
	for id := range f.open {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var errs []error
	for _, id := range ids {
		errs = append(errs, f.closeTrial(id, f.durable))
	}
	return errors.Join(errs...)
}

func (f *TrialFiles) trialDir(t *hone.Trial) string {
	return filepath.Join(f.root, filepath.FromSlash(t.Dir))
}

// get returns t's open files, opening them (and writing params.json) if
// needed; opened reports that it did.
func (f *TrialFiles) get(t *hone.Trial) (tf *trialFiles, opened bool, err error) {
	f.use++
	if tf := f.open[t.ID]; tf != nil {
		tf.lastUse = f.use
		return tf, false, nil
	}
	if len(f.open) >= f.maxOpen {
		if err := f.evict(); err != nil {
			return nil, false, err
		}
	}
	tf = &trialFiles{id: t.ID, dir: f.trialDir(t), lastUse: f.use}
	if err := os.MkdirAll(tf.dir, 0o755); err != nil {
		return nil, false, fmt.Errorf("trial %s: %w", t.ID, err)
	}
	if err := f.writeParams(t, tf); err != nil {
		return nil, false, err
	}
	if tf.result, err = fsutil.OpenAppend(filepath.Join(tf.dir, ResultFile), 0o644); err != nil {
		return nil, false, fmt.Errorf("trial %s: %w", t.ID, err)
	}
	if err := tf.openProgress(); err != nil {
		_ = tf.result.Close()
		return nil, false, fmt.Errorf("trial %s: %w", t.ID, err)
	}
	f.open[t.ID] = tf
	return tf, true, nil
}

// evict closes the files of the least recently used open trial, without
// fsync: the trial is still live.
func (f *TrialFiles) evict() error {
	var oldest string
	for id, tf := range f.open {
		if oldest == "" || tf.lastUse < f.open[oldest].lastUse {
			oldest = id
		}
	}
	return f.closeTrial(oldest, false)
}

// closeTrial closes the files of trial id, if open, after an fsync if sync.
func (f *TrialFiles) closeTrial(id string, sync bool) error {
	tf := f.open[id]
	if tf == nil {
		return nil
	}
	delete(f.open, id)
	var errs []error
	for _, a := range []*fsutil.AppendFile{tf.result, tf.progress} {
		if sync {
			errs = append(errs, a.Sync())
		}
		errs = append(errs, a.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("trial %s: close files: %w", id, err)
	}
	return nil
}

// writeParams rewrites params.json when its content differs from t's
// configuration.
func (f *TrialFiles) writeParams(t *hone.Trial, tf *trialFiles) error {
	var b bytes.Buffer
	cfg := map[string]any(t.Config)
	if cfg == nil {
		cfg = map[string]any{}
	}
	if err := appendJSON(&b, cfg, true); err != nil {
		return fmt.Errorf("trial %s: %s: %w", t.ID, ParamsFile, err)
	}
	p := filepath.Join(tf.dir, ParamsFile)
	if tf.params == nil {
		old, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("trial %s: %w", t.ID, err)
		}
		tf.params = old
	}
	if bytes.Equal(tf.params, b.Bytes()) {
		return nil
	}
	write := fsutil.WriteFileAtomic
	if !f.durable {
		write = fsutil.WriteFileAtomicNoSync
	}
	if err := write(p, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("trial %s: %w", t.ID, err)
	}
	tf.params = b.Bytes()
	return nil
}

// openProgress opens progress.csv for appending and reads its header, if it
// has one.
func (tf *trialFiles) openProgress() error {
	p := filepath.Join(tf.dir, ProgressFile)
	a, err := fsutil.OpenAppend(p, 0o644)
	if err != nil {
		return err
	}
	file, err := os.Open(p)
	if err != nil {
		_ = a.Close()
		return err
	}
	defer file.Close()
	header, err := csv.NewReader(file).Read()
	if err != nil && err != io.EOF {
		_ = a.Close()
		return fmt.Errorf("%s: header: %w", ProgressFile, err)
	}
	tf.progress = a
	tf.setHeader(header)
	return nil
}

func (tf *trialFiles) setHeader(h []string) {
	tf.header = h
	tf.columns = make(map[string]bool, len(h))
	for _, k := range h {
		tf.columns[k] = true
	}
}

// appendProgress appends row (without config) to progress.csv, extending
// the header first if row has new keys.
func (f *TrialFiles) appendProgress(t *hone.Trial, tf *trialFiles, row map[string]any) error {
	cells := make(map[string]string, len(row))
	flatten(cells, "", row)
	var added []string
	for k := range cells {
		if !tf.columns[k] {
			added = append(added, k)
		}
	}
	if len(added) > 0 {
		sort.Strings(added)
		if err := f.extendHeader(tf, added); err != nil {
			return fmt.Errorf("trial %s: %s: %w", t.ID, ProgressFile, err)
		}
	}
	tf.fields = tf.fields[:0]
	for _, k := range tf.header {
		tf.fields = append(tf.fields, cells[k])
	}
	tf.line = appendCSVRecord(tf.line[:0], tf.fields)
	tf.progress.Write(tf.line)
	return nil
}

// extendHeader adds columns to progress.csv. An empty file just gets the
// header line. Otherwise the file is rewritten atomically with the longer
// header and every earlier row padded with empty cells, then reopened.
func (f *TrialFiles) extendHeader(tf *trialFiles, added []string) error {
	header := append(slices.Clip(tf.header), added...)
	if len(tf.header) == 0 {
		tf.progress.Write(appendCSVRecord(nil, header))
		tf.setHeader(header)
		return nil
	}
	p := filepath.Join(tf.dir, ProgressFile)
	if err := tf.progress.Close(); err != nil {
		return err
	}
	tf.progress = nil
	if err := f.rewriteProgress(p, header); err != nil {
		return err
	}
	a, err := fsutil.OpenAppend(p, 0o644)
	if err != nil {
		return err
	}
	tf.progress = a
	tf.setHeader(header)
	return nil
}

func (f *TrialFiles) rewriteProgress(p string, header []string) error {
	old, err := os.Open(p)
	if err != nil {
		return err
	}
	defer old.Close()
	r := csv.NewReader(old)
	r.FieldsPerRecord = -1
	if _, err := r.Read(); err != nil { // the old header
		return err
	}
	pf, err := fsutil.NewPendingFile(p, 0o644)
	if err != nil {
		return err
	}
	defer pf.Cleanup()
	line := appendCSVRecord(nil, header)
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		for len(rec) < len(header) {
			rec = append(rec, "")
		}
		line = appendCSVRecord(line, rec)
		if len(line) >= 64<<10 {
			if _, err := pf.Write(line); err != nil {
				return err
			}
			line = line[:0]
		}
	}
	if _, err := pf.Write(line); err != nil {
		return err
	}
	if f.durable {
		return pf.Commit()
	}
	return pf.CommitNoSync()
}

// appendError appends one entry to the trial's error.txt.
func (f *TrialFiles) appendError(t *hone.Trial, err error) error {
	dir := f.trialDir(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("trial %s: %w", t.ID, err)
	}
	a, oerr := fsutil.OpenAppend(filepath.Join(dir, ErrorFile), 0o644)
	if oerr != nil {
		return fmt.Errorf("trial %s: %w", t.ID, oerr)
	}
	text := "<nil>"
	if err != nil {
		text = err.Error()
	}
	fmt.Fprintf(a, "[%s] trial %s failed (failure %d)\n%s\n", f.clock.Now().Format(time.RFC3339), t.ID, t.Failures, text)
	if len(text) > 0 && text[len(text)-1] != '\n' {
		a.WriteString("\n")
	}
	var errs []error
	if f.durable {
		errs = append(errs, a.Sync())
	}
	errs = append(errs, a.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("trial %s: %w", t.ID, err)
	}
	return nil
}

// Package callback holds hone.Callback implementations that keep the
// per-trial files of docs/SEMANTICS.md §2.
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
// Non-finite floats are written as the strings "NaN", "Infinity" and
// "-Infinity" (JSON cannot hold them; see NaN, PosInf, NegInf), in every file.
//
// A live trial's result.json and progress.csv stay open. Rows are
// buffered and handed to the operating system by FlushResults, one write
// per file for all the rows since the last call, and fsynced by
// FlushResults(true); the runner calls it within a fraction of a second
// of a result, and on resume makes the files hold exactly the journal's
// results (KeepResults drops rows a cut journal no longer holds,
// RecoverResult writes those a killed process had not flushed). The files
// are flushed, fsynced (unless NoSync) and closed when the trial completes
// or fails and at experiment end. At most an eighth of the process's
// file descriptors' worth of trials, between 256 and 4096 (see
// WithMaxOpen), keep files open; beyond that the least recently used trial's files are
// closed (fsynced first if rows were written since the last fsync) and
// reopened when needed.
//
// Every error is about one trial's files and wraps a *hone.TrialError: the
// runner takes them with TakeErrors (TrialFiles is a hone.FallibleCallback)
// and fails that trial, or stops the experiment when the disk is full;
// writing goes on for other trials. A row whose write failed stays
// buffered and is written by the next FlushResults, so a full disk loses
// no row while the process lives; Err and Close return the errors no one
// took. TrialFiles is called on the runner's goroutine and is not safe for
// concurrent use.
type TrialFiles struct {
	root    string
	durable bool
	clock   hone.Clock
	maxOpen int

	open     map[string]*trialFiles // by trial id
	dirty    []*trialFiles          // trials with rows added since the last FlushResults
	unsynced []*trialFiles          // trials with rows written and not fsynced
	use      uint64                 // counter for least-recently-used eviction
	errs     []error                // not yet taken by TakeErrors
	lost     map[string]error       // trials whose buffered rows were dropped
	write    fsutil.WriteFunc       // nil, or a fault injected by a test
}

var (
	_ hone.BufferedCallback = (*TrialFiles)(nil)
	_ hone.FallibleCallback = (*TrialFiles)(nil)
)

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
	unsynced bool         // rows written since the last fsync

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

// WithMaxOpen caps the number of trials whose files are open at once
// (default: an eighth of the process's file descriptor limit, between 256
// and 4096; each open trial holds two file descriptors). n < 1 means 1.
func WithMaxOpen(n int) Option { return func(f *TrialFiles) { f.maxOpen = max(n, 1) } }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// NewTrialFiles returns a TrialFiles writing under experimentDir.
func NewTrialFiles(experimentDir string, opts ...Option) *TrialFiles {
	f := &TrialFiles{
		root:    experimentDir,
		durable: true,
		clock:   systemClock{},
		maxOpen: defaultMaxOpen(),
		open:    map[string]*trialFiles{},
	}
	for _, o := range opts {
		o(f)
	}
	return f
}

// Err returns the errors met while writing that TakeErrors has not taken,
// or nil.
func (f *TrialFiles) Err() error { return errors.Join(f.errs...) }

// TakeErrors returns the errors met since the last call and forgets them
// (hone.FallibleCallback). Each wraps a *hone.TrialError.
func (f *TrialFiles) TakeErrors() []error {
	errs := f.errs
	f.errs = nil
	return errs
}

func (f *TrialFiles) fail(err error) {
	if err != nil {
		f.errs = append(f.errs, err)
	}
}

// trialErr wraps err as a failure of trial id's files.
func trialErr(id string, err error) error {
	if err == nil {
		return nil
	}
	var te *hone.TrialError
	if errors.As(err, &te) && te.TrialID == id {
		return err
	}
	return &hone.TrialError{TrialID: id, Err: err}
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
			f.fail(trialErr(t.ID, fmt.Errorf("%s: %w", ResultFile, err)))
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
// system, one write per file, and with sync (unless NoSync) fsyncs every
// file written since the last sync. It returns the trials' errors joined;
// a trial whose rows could not be written keeps them for the next call
// (hone.BufferedCallback).
func (f *TrialFiles) FlushResults(sync bool) error {
	var errs []error
	kept := f.dirty[:0]
	for _, tf := range f.dirty {
		if !tf.dirty || f.open[tf.id] != tf {
			tf.dirty = false
			continue
		}
		if err := tf.flush(); err != nil {
			errs = append(errs, err)
			kept = append(kept, tf)
			continue
		}
		tf.dirty = false
		f.markUnsynced(tf)
	}
	clear(f.dirty[len(kept):])
	f.dirty = kept
	if sync {
		errs = append(errs, f.syncWritten())
	}
	return errors.Join(errs...)
}

func (f *TrialFiles) markUnsynced(tf *trialFiles) {
	if f.durable && !tf.unsynced {
		tf.unsynced = true
		f.unsynced = append(f.unsynced, tf)
	}
}

// syncWritten fsyncs the files of every open trial written since the last
// sync.
func (f *TrialFiles) syncWritten() error {
	var errs []error
	kept := f.unsynced[:0]
	for _, tf := range f.unsynced {
		if !tf.unsynced || f.open[tf.id] != tf {
			continue // closed since, with an fsync
		}
		if err := errors.Join(tf.result.Sync(), tf.progress.Sync()); err != nil {
			errs = append(errs, trialErr(tf.id, err))
			kept = append(kept, tf)
			continue
		}
		tf.unsynced = false
	}
	clear(f.unsynced[len(kept):])
	f.unsynced = kept
	return errors.Join(errs...)
}

func (tf *trialFiles) flush() error {
	return trialErr(tf.id, errors.Join(tf.result.Flush(), tf.progress.Flush()))
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
			f.fail(trialErr(t.ID, fmt.Errorf("recover rows: %w", err)))
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
	results, _, err = cutResultRows(filepath.Join(tf.dir, ResultFile), -1)
	if err != nil {
		return 0, 0, err
	}
	progress, _, err = cutProgressRows(filepath.Join(tf.dir, ProgressFile), -1)
	if err != nil {
		return 0, 0, err
	}
	return results, progress, nil
}

// KeepResults drops every row of t's result.json and progress.csv beyond
// the first n: rows of results that a journal cut short no longer holds,
// which the resumed trial reports again (hone.BufferedCallback). Missing
// files are no error. The cut is fsynced unless NoSync.
func (f *TrialFiles) KeepResults(t *hone.Trial, n int) error {
	if err := f.closeTrial(t.ID, f.durable); err != nil {
		return err
	}
	dir := f.trialDir(t)
	for _, c := range []struct {
		name string
		cut  func(string, int) (int, bool, error)
	}{{ResultFile, cutResultRows}, {ProgressFile, cutProgressRows}} {
		p := filepath.Join(dir, c.name)
		_, cut, err := c.cut(p, n)
		if err != nil {
			return trialErr(t.ID, err)
		}
		if !cut {
			continue
		}
		if f.durable {
			if err := fsutil.SyncFile(p); err != nil {
				return trialErr(t.ID, err)
			}
		}
	}
	return nil
}

// cutResultRows counts the complete lines of result.json at p and, if
// there are more than keep (keep >= 0), truncates the file after the
// keep-th. A missing file has no rows.
func cutResultRows(p string, keep int) (rows int, cut bool, err error) {
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	rows = bytes.Count(data, []byte{'\n'})
	if keep < 0 || rows <= keep {
		return rows, false, nil
	}
	end := 0
	for range keep {
		end += bytes.IndexByte(data[end:], '\n') + 1
	}
	if err := os.Truncate(p, int64(end)); err != nil {
		return rows, false, err
	}
	return rows, true, nil
}

// cutProgressRows counts the records after the header of progress.csv at
// p and, if there are more than keep (keep >= 0), truncates the file after
// the keep-th. A missing file has no rows.
func cutProgressRows(p string, keep int) (rows int, cut bool, err error) {
	file, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer file.Close()
	cr := csv.NewReader(file)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	var end int64 = -1
	for n := -1; ; n++ {
		if n == keep {
			end = cr.InputOffset()
		}
		if _, err := cr.Read(); err == io.EOF {
			rows = max(n, 0)
			break
		} else if err != nil {
			return 0, false, fmt.Errorf("%s: %w", ProgressFile, err)
		}
	}
	if keep < 0 || rows <= keep || end < 0 {
		return rows, false, nil
	}
	if err := os.Truncate(p, end); err != nil {
		return rows, false, err
	}
	return rows, true, nil
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
	return f.Err()
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
	if err := f.lost[t.ID]; err != nil {
		return nil, false, trialErr(t.ID, fmt.Errorf("rows could not be written (%w); no more are written before a resume", err))
	}
	if len(f.open) >= f.maxOpen {
		// The evicted trial's error is its own: t's files open anyway.
		f.fail(f.evict())
	}
	tf = &trialFiles{id: t.ID, dir: f.trialDir(t), lastUse: f.use}
	if err := os.MkdirAll(tf.dir, 0o755); err != nil {
		return nil, false, trialErr(t.ID, err)
	}
	if err := f.writeParams(t, tf); err != nil {
		return nil, false, err
	}
	if tf.result, err = f.openAppend(filepath.Join(tf.dir, ResultFile)); err != nil {
		return nil, false, trialErr(t.ID, err)
	}
	if err := f.openProgress(tf); err != nil {
		_ = tf.result.Close()
		return nil, false, trialErr(t.ID, err)
	}
	f.open[t.ID] = tf
	return tf, true, nil
}

// evict closes the files of the least recently used open trial, with an
// fsync only if rows were written since the last one (a later
// FlushResults(true) could not sync them once closed).
func (f *TrialFiles) evict() error {
	var oldest string
	for id, tf := range f.open {
		if oldest == "" || tf.lastUse < f.open[oldest].lastUse {
			oldest = id
		}
	}
	return f.closeTrial(oldest, f.open[oldest].unsynced)
}

// closeTrial closes the files of trial id, if open, after an fsync if sync.
func (f *TrialFiles) closeTrial(id string, sync bool) error {
	tf := f.open[id]
	if tf == nil {
		return nil
	}
	delete(f.open, id)
	tf.unsynced = tf.unsynced && !sync
	var errs []error
	lost := false
	for _, a := range []*fsutil.AppendFile{tf.result, tf.progress} {
		var err error
		if sync {
			err = a.Sync()
		} else {
			err = a.Flush()
		}
		if err != nil {
			lost = true
			a.Discard()
			errs = append(errs, err)
		}
		errs = append(errs, a.Close())
	}
	if err := errors.Join(errs...); err != nil {
		err = fmt.Errorf("close files: %w", err)
		if lost {
			// Rows are gone from this process: writing later rows after
			// them would leave a gap that no resume could fill. The files
			// stay as they are, a prefix of the trial's results, for the
			// next resume to complete.
			if f.lost == nil {
				f.lost = map[string]error{}
			}
			f.lost[id] = err
		}
		return trialErr(id, err)
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
		return trialErr(t.ID, fmt.Errorf("%s: %w", ParamsFile, err))
	}
	p := filepath.Join(tf.dir, ParamsFile)
	if tf.params == nil {
		old, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return trialErr(t.ID, err)
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
		return trialErr(t.ID, err)
	}
	tf.params = b.Bytes()
	return nil
}

// openProgress opens progress.csv for appending and reads its header, if it
// has one.
func (f *TrialFiles) openProgress(tf *trialFiles) error {
	p := filepath.Join(tf.dir, ProgressFile)
	a, err := f.openAppend(p)
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
			return trialErr(t.ID, fmt.Errorf("%s: %w", ProgressFile, err))
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
	if err := tf.progress.Flush(); err != nil {
		return err // the rows stay buffered
	}
	if err := tf.progress.Close(); err != nil {
		return err
	}
	// On failure the old file is intact: reopen it. If even that fails,
	// the closed file stays, and every later write to it fails.
	rerr := f.rewriteProgress(p, header)
	a, err := f.openAppend(p)
	if err != nil {
		return errors.Join(rerr, err)
	}
	tf.progress = a
	if rerr != nil {
		return rerr
	}
	tf.setHeader(header)
	return nil
}

// openAppend opens p with fsutil.OpenAppend and the injected write fault,
// if any.
func (f *TrialFiles) openAppend(p string) (*fsutil.AppendFile, error) {
	a, err := fsutil.OpenAppend(p, 0o644)
	if err == nil && f.write != nil {
		a.SetWriteFunc(f.write)
	}
	return a, err
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
		return trialErr(t.ID, fmt.Errorf("write %s: %w", ErrorFile, err))
	}
	a, oerr := f.openAppend(filepath.Join(dir, ErrorFile))
	if oerr != nil {
		return trialErr(t.ID, fmt.Errorf("write %s: %w", ErrorFile, oerr))
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
		return trialErr(t.ID, err)
	}
	return nil
}

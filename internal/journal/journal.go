// Package journal reads and writes an experiment's append-only journal:
// a header line, then one JSON line per event the controller steps on
// ("in", a hone.Event's journaled fields) or state record ("rec"). Events
// are what resume replays; records are what readers of an experiment
// directory use. A crash can leave at most a torn last line, which
// readers ignore.
package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/controller"
	"github.com/hone-tune/hone/internal/fsutil"
)

// FileName is the journal's name inside the experiment directory.
const FileName = "experiment_state.jsonl"

// Version is the journal format version written in the header.
const Version = 1

// Header is the first line of a journal.
type Header struct {
	Journal int    `json:"hone_journal"`
	Name    string `json:"name"`
	Seed    uint64 `json:"seed"`
	Created int64  `json:"created"` // unix nanoseconds
	// Settings are the settings the first session ran with; nil in
	// journals written before hone recorded them (a replay then uses the
	// resuming spec's).
	Settings *hone.Settings `json:"settings,omitempty"`
}

// Line is one journal line after the header: exactly one field is set.
type Line struct {
	Event *hone.Event        `json:"in,omitempty"`
	Rec   *controller.Record `json:"rec,omitempty"`
}

// Writer appends to a journal. It buffers lines; Flush hands them to the
// operating system (enough to survive a SIGKILL of the process) and Sync
// also makes them durable on disk. Lines buffered and not flushed are
// handed to the operating system by the writer itself at most FlushDelay
// after the first of them was appended (group commit), so a caller that
// flushes only before effects outside the process still loses at most
// that much of the journal to a SIGKILL. Safe for concurrent use.
type Writer struct {
	mu    sync.Mutex
	f     *os.File
	w     *bufio.Writer
	buf   bytes.Buffer
	enc   *json.Encoder
	timer *time.Timer // armed while lines are buffered
	armed bool
	err   error    // a failed background flush, returned by the next call
	line  []byte   // scratch for appendEvent
	keys  []string // scratch for appendEvent
	off   int64    // the journal's length, buffered lines included
}

// FlushDelay bounds how long an appended line stays in the process's
// buffer before the writer hands it to the operating system.
const FlushDelay = 2 * time.Millisecond

// Create creates a new journal at path with header h. It fails if the file
// exists.
func Create(path string, h Header) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create journal: %w", err)
	}
	// Snapshots left by an earlier journal of that name are not this
	// one's.
	if err := DropSnapshotsBeyond(path, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("create journal: %w", err)
	}
	w := newWriter(f, 0)
	h.Journal = Version
	if err := w.write(h); err != nil {
		f.Close()
		return nil, err
	}
	if err := w.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// Append opens an existing journal for appending. size is the length of its
// valid prefix (from Read): a torn last line beyond it is cut off first,
// durably (truncate, then fsync), so that nothing is ever appended after
// torn bytes.
func Append(path string, size int64) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open journal: %w", err)
	}
	if info.Size() < size {
		f.Close()
		return nil, fmt.Errorf("open journal %s: it has %d bytes, shorter than the %d read before", path, info.Size(), size)
	}
	if info.Size() > size {
		if err := DropSnapshotsBeyond(path, size); err != nil {
			f.Close()
			return nil, fmt.Errorf("truncate torn journal tail: %w", err)
		}
		if err := f.Truncate(size); err != nil {
			f.Close()
			return nil, fmt.Errorf("truncate torn journal tail: %w", err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, fmt.Errorf("truncate torn journal tail: %w", err)
		}
	}
	if _, err := f.Seek(size, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("seek journal: %w", err)
	}
	return newWriter(f, size), nil
}

func newWriter(f *os.File, size int64) *Writer {
	w := &Writer{f: f, w: bufio.NewWriterSize(f, 64<<10), off: size}
	w.enc = json.NewEncoder(&w.buf)
	w.enc.SetEscapeHTML(false)
	w.timer = time.AfterFunc(time.Hour, w.background)
	w.timer.Stop()
	return w
}

// background is the group commit: it flushes what was buffered since the
// timer was armed.
func (w *Writer) background() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = false
	if w.err == nil {
		w.err = w.flushLocked()
	}
}

func (w *Writer) write(v any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Reset()
	if err := w.enc.Encode(v); err != nil {
		return fmt.Errorf("encode journal line: %w", err)
	}
	return w.writeLocked(w.buf.Bytes())
}

// writeLocked buffers one encoded line and arms the group commit.
func (w *Writer) writeLocked(line []byte) error {
	if w.err != nil {
		return w.err
	}
	if _, err := w.w.Write(line); err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	w.off += int64(len(line))
	if !w.armed && w.w.Buffered() > 0 {
		w.armed = true
		w.timer.Reset(FlushDelay)
	}
	return nil
}

// AppendEvent buffers an event line (its journaled fields). Non-finite
// metric values are encoded so that they survive JSON. It does not keep
// in: the caller's event stays where it is (on its stack, for a runner
// that journals every event), whichever way the line is encoded.
func (w *Writer) AppendEvent(in *hone.Event) error {
	w.mu.Lock()
	line, keys, ok := appendEvent(w.line[:0], in, w.keys)
	w.line, w.keys = line, keys
	if ok {
		defer w.mu.Unlock()
		return w.writeLocked(line)
	}
	w.mu.Unlock()
	cp := *in
	if hasNonFinite(in.Metrics) {
		cp.Metrics = encodeNonFinite(in.Metrics).(map[string]any)
	}
	return w.write(Line{Event: &cp})
}

// AppendRecord buffers a record line.
func (w *Writer) AppendRecord(r *controller.Record) error {
	w.mu.Lock()
	line, ok := appendRecord(w.line[:0], r)
	w.line = line
	if ok {
		defer w.mu.Unlock()
		return w.writeLocked(line)
	}
	w.mu.Unlock()
	if hasNonFinite(r.Config) {
		cp := *r
		cp.Config = encodeNonFinite(map[string]any(r.Config)).(map[string]any)
		r = &cp
	}
	return w.write(Line{Rec: r})
}

// Flush writes buffered lines to the file.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	if w.w.Buffered() == 0 {
		return nil
	}
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("flush journal: %w", err)
	}
	return nil
}

// Sync flushes and fsyncs.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.syncLocked()
}

func (w *Writer) syncLocked() error {
	if w.err != nil {
		return w.err
	}
	if err := w.flushLocked(); err != nil {
		return err
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("sync journal: %w", err)
	}
	return nil
}

// Offset returns the journal's length, buffered lines included.
func (w *Writer) Offset() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.off
}

// Close syncs and closes the journal.
func (w *Writer) Close() error {
	w.timer.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.syncLocked()
	if cerr := w.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close journal: %w", cerr)
	}
	return err
}

// Contents is a journal as read back.
type Contents struct {
	Header Header
	Lines  []Line
	// Size is the length of the valid prefix; a torn tail beyond it is
	// ignored (and cut off by Append).
	Size int64
	// Torn is true when a torn last line was ignored.
	Torn bool
	// Corrupt is set by ReadPrefix when the journal has a corrupt line that
	// is not the last: the lines and Size stop before it.
	Corrupt *CorruptError
	// From is where Lines start in the journal: 0 when they are all of
	// them, a snapshot's offset when read by ReadFrom.
	From int64

	path   string
	before int // lines between the header and From; 0 until counted, -1 if unknown
}

// CorruptError is the error for a journal line that is not valid and is
// not the last (a torn write can only be the last line).
type CorruptError struct {
	Path   string
	Line   int   // 1-based
	Offset int64 // where the line starts
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("read journal %s: line %d is corrupt", e.Path, e.Line)
}

// ErrNoJournal is returned by Read when the directory has no journal.
var ErrNoJournal = errors.New("no experiment journal")

// Read reads a whole journal. A last line without a newline, or that is not
// valid JSON, is a torn write from a crash and is ignored; an invalid line
// anywhere else is corruption and an error naming the line (a
// *CorruptError).
func Read(path string) (*Contents, error) {
	c, err := read(path)
	if err == nil && c.Corrupt != nil {
		return nil, c.Corrupt
	}
	return c, err
}

// ReadPrefix is Read that stops at a corrupt line instead of failing:
// Contents holds the lines before it, Size is where it starts, and Corrupt
// says which line it is. Cut then removes the rest.
func ReadPrefix(path string) (*Contents, error) { return read(path) }

func read(path string) (*Contents, error) { return readFrom(path, 0, 0) }

// ReadFrom reads the journal's header and its lines from offset on, as
// ReadPrefix reads them all: offset is where a snapshot's tail starts
// (Snapshot.Offset), and the lines before it are not read. Contents.From
// is offset, and Size counts from the journal's start.
func ReadFrom(path string, offset int64) (*Contents, error) { return readFrom(path, offset, 0) }

// ReadHead reads the journal's header and the lines in its first size
// bytes: a line that does not end within them is left out (and Torn is
// set).
func ReadHead(path string, size int64) (*Contents, error) { return readFrom(path, 0, size) }

// readFrom reads the lines from offset from (0: all) to offset to (0: the
// end).
func readFrom(path string, from, to int64) (*Contents, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read journal %s: %w", path, ErrNoJournal)
	}
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	c := &Contents{path: path}
	var data []byte
	off := 0
	var shift int64 // journal offset of data[i] is i + shift past the header
	switch {
	case from == 0:
		// The whole journal as it is now (a writer may append meanwhile:
		// a line beyond is not read), or its first to bytes.
		size := info.Size()
		if to > 0 {
			size = min(to, size)
		}
		data = make([]byte, size)
		n, err := f.ReadAt(data, 0)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read journal: %w", err)
		}
		data = data[:n]
	default:
		header, err := headerLine(f)
		if err != nil {
			return nil, fmt.Errorf("read journal %s: %w", path, err)
		}
		if from < int64(len(header)) || from > info.Size() {
			return nil, fmt.Errorf("read journal %s: offset %d is not after its header and within its %d bytes", path, from, info.Size())
		}
		// data holds the header, then the bytes from offset on.
		h := len(header)
		data = make([]byte, h+int(info.Size()-from))
		copy(data, header)
		n, err := f.ReadAt(data[h:], from)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read journal: %w", err)
		}
		data = data[:h+n]
		c.From = from
		shift = from - int64(h)
	}
	var slab eventSlab
	for lineNo := 1; off < len(data); lineNo++ {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			c.Torn = true
			break
		}
		raw := data[off : off+nl]
		last := off+nl+1 == len(data)
		if lineNo == 1 {
			if err := json.Unmarshal(raw, &c.Header); err != nil || c.Header.Journal == 0 {
				return nil, fmt.Errorf("read journal %s: line 1 is not a hone journal header", path)
			}
			if c.Header.Journal > Version {
				return nil, fmt.Errorf("read journal %s: format version %d is newer than this hone (%d)", path, c.Header.Journal, Version)
			}
			off += nl + 1
			c.Size = int64(off)
			if from > 0 {
				c.Size = from
			}
			continue
		}
		l, ok := decodeLine(raw, &slab)
		if !ok {
			if last {
				c.Torn = true
				break
			}
			c.Corrupt = &CorruptError{Path: path, Line: c.LineNumber(len(c.Lines)), Offset: int64(off) + shift}
			break
		}
		c.Lines = append(c.Lines, l)
		off += nl + 1
		c.Size = int64(off) + shift
	}
	if c.Size == 0 {
		return nil, fmt.Errorf("read journal %s: empty or torn header", path)
	}
	return c, nil
}

// LineNumber returns the journal line number (1-based, the header being
// line 1) of Lines[i]. When the lines start after a snapshot (From > 0),
// the first call counts the lines before them in the journal.
func (c *Contents) LineNumber(i int) int {
	if c.From > 0 && c.before == 0 {
		c.before = -1 // unknown if the count fails
		if f, err := os.Open(c.path); err == nil {
			buf := make([]byte, c.From)
			if _, err := io.ReadFull(f, buf); err == nil {
				c.before = bytes.Count(buf, []byte{'\n'}) - 1
			}
			f.Close()
		}
	}
	if c.before < 0 {
		return 0
	}
	return c.before + i + 2
}

// decodeLine decodes one journal line after the header; it reports false
// for a line that is not exactly one input or one record.
func decodeLine(raw []byte, slab *eventSlab) (Line, bool) {
	l, fast := parseLine(raw, slab)
	if !fast {
		l = Line{}
		if err := json.Unmarshal(raw, &l); err != nil {
			l = Line{}
		}
	}
	if (l.Event == nil) == (l.Rec == nil) {
		return Line{}, false
	}
	if l.Event != nil && l.Event.Metrics != nil && !fast {
		l.Event.Metrics = decodeNonFinite(l.Event.Metrics).(map[string]any)
	}
	if l.Rec != nil && l.Rec.Config != nil && !fast {
		l.Rec.Config = decodeNonFinite(map[string]any(l.Rec.Config)).(map[string]any)
	}
	return l, true
}

// nonFiniteKey marks an encoded non-finite float: {"$f": "NaN"}.
const nonFiniteKey = "$f"

func hasNonFinite(v any) bool {
	switch x := v.(type) {
	case float64:
		return math.IsNaN(x) || math.IsInf(x, 0)
	case float32:
		return hasNonFinite(float64(x))
	case map[string]any:
		for _, e := range x {
			if hasNonFinite(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasNonFinite(e) {
				return true
			}
		}
	}
	return false
}

func encodeNonFinite(v any) any {
	switch x := v.(type) {
	case float32:
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			return encodeNonFinite(f)
		}
		return x // encoding/json writes it with float32 precision
	case float64:
		switch {
		case math.IsNaN(x):
			return map[string]any{nonFiniteKey: "NaN"}
		case math.IsInf(x, 1):
			return map[string]any{nonFiniteKey: "+Inf"}
		case math.IsInf(x, -1):
			return map[string]any{nonFiniteKey: "-Inf"}
		}
		return x
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = encodeNonFinite(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = encodeNonFinite(e)
		}
		return s
	}
	return v
}

func decodeNonFinite(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 1 {
			if s, ok := x[nonFiniteKey].(string); ok {
				switch s {
				case "NaN":
					return math.NaN()
				case "+Inf":
					return math.Inf(1)
				case "-Inf":
					return math.Inf(-1)
				}
			}
		}
		for k, e := range x {
			x[k] = decodeNonFinite(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = decodeNonFinite(e)
		}
		return x
	}
	return v
}

// CorruptSuffix starts the name of the file Cut keeps the cut bytes in,
// beside the journal: <journal>.corrupt-<n>.
const CorruptSuffix = ".corrupt-"

// Cut ends the journal at path after its first size bytes. The bytes cut
// off are first kept, durably, in a new file beside it,
// <path>.corrupt-<n> (the first n from 1 that is free), so nothing is
// lost; then the journal is truncated and fsynced. It returns the new
// file's path, or "" when the journal was no longer than size.
func Cut(path string, size int64) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("cut journal: %w", err)
	}
	if int64(len(data)) <= size {
		return "", nil
	}
	if err := DropSnapshotsBeyond(path, size); err != nil {
		return "", fmt.Errorf("cut journal: %w", err)
	}
	var kept string
	for n := 1; ; n++ {
		kept = fmt.Sprintf("%s%s%d", path, CorruptSuffix, n)
		f, err := os.OpenFile(kept, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("cut journal: %w", err)
		}
		_, err = f.Write(data[size:])
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = os.Remove(kept)
			return "", fmt.Errorf("cut journal: keep the cut lines: %w", err)
		}
		break
	}
	if err := fsutil.SyncDir(filepath.Dir(path)); err != nil {
		return "", fmt.Errorf("cut journal: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return "", fmt.Errorf("cut journal: %w", err)
	}
	err = f.Truncate(size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("cut journal: %w", err)
	}
	return kept, nil
}

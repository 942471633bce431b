package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Tail reads a journal that another process may be appending to, a piece
// at a time: each Next returns the complete lines written since the last
// call. A line not yet ended by a newline is left for a later call. It is
// for readers that follow a running experiment; a single goroutine uses it.
type Tail struct {
	path   string
	off    int64 // bytes consumed: whole lines only
	lineNo int   // lines consumed
	header Header
	slab   eventSlab // the events of the lines it decodes
}

// NewTail returns a Tail that reads the journal at path from its start.
func NewTail(path string) *Tail { return &Tail{path: path} }

// Header returns the journal's header, once Next has read it.
func (t *Tail) Header() Header { return t.header }

// ErrShrunk is returned by Tail.Next when the journal is shorter than what
// was read already: a resume cut a torn or corrupt tail off. The reader
// starts again with a new Tail.
var ErrShrunk = errors.New("journal shrank since it was last read")

// Next returns the lines appended since the last call (the header is
// read by the first call and not returned). A missing journal is an error
// wrapping ErrNoJournal; a line that is corrupt and followed by others is a
// *CorruptError.
func (t *Tail) Next() ([]Line, error) {
	f, err := os.Open(t.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read journal %s: %w", t.path, ErrNoJournal)
	}
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	if info.Size() < t.off {
		return nil, fmt.Errorf("read journal %s: %w", t.path, ErrShrunk)
	}
	if info.Size() == t.off {
		return nil, nil
	}
	data := make([]byte, info.Size()-t.off)
	n, err := f.ReadAt(data, t.off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	data = data[:n]
	var out []Line
	off := 0
	for {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			break // the rest is still being written
		}
		raw := data[off : off+nl]
		if t.lineNo == 0 {
			if err := json.Unmarshal(raw, &t.header); err != nil || t.header.Journal == 0 {
				return nil, fmt.Errorf("read journal %s: line 1 is not a hone journal header", t.path)
			}
			if t.header.Journal > Version {
				return nil, fmt.Errorf("read journal %s: format version %d is newer than this hone (%d)", t.path, t.header.Journal, Version)
			}
		} else {
			l, ok := decodeLine(raw, &t.slab)
			if !ok {
				if off+nl+1 == len(data) {
					// The last line: a torn write that a crash left, or
					// one the writer is still completing. Read it again
					// next time.
					break
				}
				err := &CorruptError{Path: t.path, Line: t.lineNo + 1, Offset: t.off + int64(off)}
				t.off += int64(off)
				return out, err
			}
			out = append(out, l)
		}
		off += nl + 1
		t.lineNo++
	}
	t.off += int64(off)
	return out, nil
}

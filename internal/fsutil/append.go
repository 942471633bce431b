package fsutil

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// AppendFile is a line-oriented, append-only file with a write buffer.
// Write and WriteString only fill the buffer; Flush hands the whole buffer
// to the operating system in one write call (so a line written between two
// flushes is never interleaved with another), and Sync also fsyncs. A
// failed Flush (a full disk) leaves the file as it was before the call and
// keeps the buffer, so nothing is half written and the next Flush tries
// again. An AppendFile is not safe for concurrent use.
type AppendFile struct {
	f      *os.File
	buf    []byte
	size   int64     // the file's length: where the next write lands
	write  WriteFunc // f.Write, or a fault injected by a test
	broken error     // a partial write that could not be cut off
}

// WriteFunc writes p to f, as (*os.File).Write does. Tests replace it to
// inject faults (see SetWriteFunc).
type WriteFunc func(f *os.File, p []byte) (int, error)

func fileWrite(f *os.File, p []byte) (int, error) { return f.Write(p) }

// SetWriteFunc makes a's flushes write with fn (a fault injected by a
// test); nil restores the file's own Write.
func (a *AppendFile) SetWriteFunc(fn WriteFunc) {
	if fn == nil {
		fn = fileWrite
	}
	a.write = fn
}

// OpenAppend opens path for appending, creating it with perm if needed. If
// the file ends with an incomplete line (a write cut short by a crash), that
// partial line is truncated away so the next line starts clean.
func OpenAppend(path string, perm fs.FileMode) (*AppendFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, perm)
	if err != nil {
		return nil, fmt.Errorf("open append: %w", err)
	}
	if err := trimPartialLine(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("open append %s: %w", path, err)
	}
	info, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("open append: %w", err)
	}
	return &AppendFile{f: f, size: info.Size(), write: fileWrite}, nil
}

// trimPartialLine truncates f after its last newline when it does not end
// with one.
func trimPartialLine(f *os.File) error {
	info, err := f.Stat()
	if err != nil {
		return err
	}
	size := info.Size()
	if size == 0 {
		return nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	buf := make([]byte, 4096)
	end := size
	for end > 0 {
		n := int64(len(buf))
		if n > end {
			n = end
		}
		chunk := buf[:n]
		if _, err := f.ReadAt(chunk, end-n); err != nil && err != io.EOF {
			return err
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			return f.Truncate(end - n + int64(i) + 1)
		}
		end -= n
	}
	return f.Truncate(0)
}

// Write adds p to the buffer. It never fails.
func (a *AppendFile) Write(p []byte) (int, error) {
	a.buf = append(a.buf, p...)
	return len(p), nil
}

// WriteString adds s to the buffer. It never fails.
func (a *AppendFile) WriteString(s string) (int, error) {
	a.buf = append(a.buf, s...)
	return len(s), nil
}

// Flush writes the buffer to the file in one write call, without fsync.
// If the write fails, what it wrote of the buffer is cut off the file
// again and the buffer is kept for the next Flush; the error is the
// write's own ("write PATH: no space left on device"). If even the cut
// fails, the file is marked broken and every later Flush fails.
func (a *AppendFile) Flush() error {
	if a.broken != nil {
		return a.broken
	}
	if len(a.buf) == 0 {
		return nil
	}
	n, err := a.write(a.f, a.buf)
	if err == nil {
		a.size += int64(n)
		a.buf = a.buf[:0]
		return nil
	}
	if n > 0 {
		if terr := a.f.Truncate(a.size); terr != nil {
			a.broken = fmt.Errorf("%s ends with a partial write that could not be cut off: %w", a.f.Name(), terr)
			return errors.Join(err, a.broken)
		}
	}
	return err
}

// Buffered returns the number of bytes waiting for Flush.
func (a *AppendFile) Buffered() int { return len(a.buf) }

// Discard drops the bytes waiting for Flush (after a Flush that failed,
// before Close).
func (a *AppendFile) Discard() { a.buf = a.buf[:0] }

// Sync flushes the buffer and fsyncs the file.
func (a *AppendFile) Sync() error {
	if err := a.Flush(); err != nil {
		return err
	}
	if err := a.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", a.f.Name(), err)
	}
	return nil
}

// Close flushes the buffer and closes the file (without fsync).
func (a *AppendFile) Close() error {
	err := a.Flush()
	if cerr := a.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close %s: %w", a.f.Name(), cerr)
	}
	return err
}

package fsutil

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// AppendFile is a line-oriented, append-only file with a write buffer.
// Write and WriteString only fill the buffer; Flush hands the whole buffer
// to the operating system in one write call (so a line written between two
// flushes is never interleaved with another), and Sync also fsyncs. An
// AppendFile is not safe for concurrent use.
type AppendFile struct {
	f   *os.File
	buf []byte
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
	return &AppendFile{f: f}, nil
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
func (a *AppendFile) Flush() error {
	if len(a.buf) == 0 {
		return nil
	}
	_, err := a.f.Write(a.buf)
	a.buf = a.buf[:0]
	if err != nil {
		return fmt.Errorf("append %s: %w", a.f.Name(), err)
	}
	return nil
}

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

package wire

import (
	"bufio"
	"errors"
	"io"
	"strconv"
)

// ErrTooLong is returned by Reader.ReadLine for a line longer than
// MaxMessageSize bytes (counting its newline).
var ErrTooLong = errors.New("message is over " + strconv.Itoa(MaxMessageSize) + " bytes (the limit, newline included)")

// readChunk is the size of the Reader's buffer: lines are assembled from
// chunks of at most this size, so an idle connection costs little memory.
const readChunk = 64 << 10

// Reader reads "\n"-terminated lines of at most MaxMessageSize bytes
// (newline included). It never holds more than MaxMessageSize bytes of one
// line in memory: the rest of an oversized line is discarded. A Reader is
// not safe for concurrent use.
type Reader struct {
	br   *bufio.Reader
	skip bool // the line being read was too long: discard up to its end
}

// NewReader returns a Reader that reads from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, readChunk)}
}

// ReadLine returns the next line without its newline; the slice is the
// caller's. It returns:
//
//   - ErrTooLong with the line's first bytes when the line is longer than
//     MaxMessageSize; the next call goes on after the end of that line;
//   - io.ErrUnexpectedEOF with the bytes read when the input ends inside a
//     line (no newline at the end);
//   - io.EOF at the end of the input, and any error of the underlying
//     reader as it is.
func (r *Reader) ReadLine() ([]byte, error) {
	if r.skip {
		if err := r.discardLine(); err != nil {
			return nil, err
		}
	}
	var line []byte
	for {
		frag, err := r.br.ReadSlice('\n')
		switch {
		case err == nil:
			frag = frag[:len(frag)-1]
			if len(line)+len(frag)+1 > MaxMessageSize {
				return appendUpTo(line, frag), ErrTooLong
			}
			return append(line, frag...), nil
		case errors.Is(err, bufio.ErrBufferFull):
			// A line of MaxMessageSize bytes without its newline is
			// already too long.
			if len(line)+len(frag) >= MaxMessageSize {
				r.skip = true
				return appendUpTo(line, frag), ErrTooLong
			}
			line = append(line, frag...)
		case errors.Is(err, io.EOF):
			line = append(line, frag...)
			if len(line) == 0 {
				return nil, io.EOF
			}
			if len(line) >= MaxMessageSize {
				return line[:MaxMessageSize], ErrTooLong
			}
			return line, io.ErrUnexpectedEOF
		default:
			return append(line, frag...), err
		}
	}
}

// appendUpTo appends to line as much of frag as keeps it within
// MaxMessageSize bytes.
func appendUpTo(line, frag []byte) []byte {
	if n := MaxMessageSize - len(line); n < len(frag) {
		frag = frag[:max(n, 0)]
	}
	return append(line, frag...)
}

// discardLine skips input up to and including the next newline.
func (r *Reader) discardLine() error {
	for {
		_, err := r.br.ReadSlice('\n')
		if err == nil {
			r.skip = false
			return nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// Buffered returns a copy of the bytes read from the underlying reader
// but not yet returned by ReadLine, so that a connection can be handed on
// after its first line without losing what followed it.
func (r *Reader) Buffered() []byte {
	b, _ := r.br.Peek(r.br.Buffered())
	return append([]byte(nil), b...)
}

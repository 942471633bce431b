package wire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReader(t *testing.T) {
	big := strings.Repeat("b", MaxMessageSize-1) // the largest line
	huge := strings.Repeat("h", 5*MaxMessageSize)
	input := "one\n\n" + big + "\n" + huge + "\n" + "after\n" + big + "x\n" + "last"
	type read struct {
		line string
		err  error
	}
	want := []read{
		{"one", nil},
		{"", nil},
		{big, nil},
		{huge[:MaxMessageSize], ErrTooLong},
		{"after", nil},
		{big + "x", ErrTooLong},
		{"last", io.ErrUnexpectedEOF},
		{"", io.EOF},
		{"", io.EOF},
	}
	for name, r := range map[string]io.Reader{
		"Whole":  strings.NewReader(input),
		"Chunks": chunkReader{strings.NewReader(input), 4099},
		"Half":   iotest.HalfReader(strings.NewReader(input)),
	} {
		t.Run(name, func(t *testing.T) {
			lr := NewReader(r)
			for i, w := range want {
				line, err := lr.ReadLine()
				if !errors.Is(err, w.err) || string(line) != w.line {
					t.Fatalf("read %d: %.20q (%d bytes), %v; want %.20q (%d bytes), %v", i, line, len(line), err, w.line, len(w.line), w.err)
				}
			}
		})
	}
}

func TestReaderTooLongAtEOF(t *testing.T) {
	lr := NewReader(strings.NewReader(strings.Repeat("x", MaxMessageSize+10)))
	if line, err := lr.ReadLine(); !errors.Is(err, ErrTooLong) || len(line) != MaxMessageSize {
		t.Fatalf("got %d bytes, %v; want ErrTooLong", len(line), err)
	}
	if _, err := lr.ReadLine(); err != io.EOF {
		t.Fatalf("after the oversized line: %v, want io.EOF", err)
	}
}

func TestReaderOneByte(t *testing.T) {
	lr := NewReader(iotest.OneByteReader(strings.NewReader("a\n\nbc\nd")))
	for _, want := range []string{"a", "", "bc"} {
		if line, err := lr.ReadLine(); err != nil || string(line) != want {
			t.Fatalf("got %q, %v; want %q", line, err, want)
		}
	}
	if line, err := lr.ReadLine(); err != io.ErrUnexpectedEOF || string(line) != "d" {
		t.Fatalf("got %q, %v; want the partial last line", line, err)
	}
}

func TestReaderError(t *testing.T) {
	boom := errors.New("boom")
	lr := NewReader(io.MultiReader(strings.NewReader("ok\npart"), iotest.ErrReader(boom)))
	if line, err := lr.ReadLine(); err != nil || string(line) != "ok" {
		t.Fatalf("first line: %q, %v", line, err)
	}
	if line, err := lr.ReadLine(); err != boom || string(line) != "part" {
		t.Fatalf("second read: %q, %v; want the partial line and the reader's error", line, err)
	}
}

// TestReaderMemory: an endless line does not make the Reader buffer more
// than the limit.
func TestReaderMemory(t *testing.T) {
	lr := NewReader(io.MultiReader(io.LimitReader(endless{}, 8*MaxMessageSize), strings.NewReader("\nnext\n")))
	line, err := lr.ReadLine()
	if !errors.Is(err, ErrTooLong) || cap(line) > 2*MaxMessageSize {
		t.Fatalf("oversized line: %d bytes (cap %d), %v", len(line), cap(line), err)
	}
	if line, err := lr.ReadLine(); err != nil || !bytes.Equal(line, []byte("next")) {
		t.Fatalf("line after: %q, %v", line, err)
	}
}

// chunkReader reads at most n bytes at a time.
type chunkReader struct {
	r io.Reader
	n int
}

func (c chunkReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'e'
	}
	return len(p), nil
}

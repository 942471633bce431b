package process

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hone-tune/hone/wire"
)

// readChunk is the buffer size of the output readers.
const readChunk = 64 << 10

// Stderr tail limits: how many lines an ExitError keeps, and how many
// bytes of each.
const (
	tailLines   = 20
	tailLineMax = 1000
)

// readStdout appends the process's standard output to stdout.log and
// passes HONE_REPORT lines on as reports. Only a line that may still be a
// report is kept in memory, and only up to the message size limit.
func (p *proc) readStdout() {
	defer p.e.wg.Done()
	defer close(p.stdoutDone)
	br := bufio.NewReaderSize(p.stdoutR, readChunk)
	prefix := []byte(wire.ReportPrefix)
	var line []byte
	candidate := true // the line read so far may be a report
	for {
		frag, err := br.ReadSlice('\n')
		if len(frag) > 0 {
			_, _ = p.stdoutLog.Write(frag)
			if candidate {
				// One byte over the limit is enough to know the line is
				// too long.
				line = append(line, frag[:min(len(frag), wire.MaxMessageSize+1-len(line))]...)
				n := min(len(line), len(prefix))
				if !bytes.Equal(line[:n], prefix[:n]) {
					candidate = false
					line = line[:0]
				}
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if candidate && len(line) > 0 {
			p.stdoutLine(line)
		}
		line, candidate = line[:0], true
		if err != nil {
			return
		}
	}
}

// stdoutLine handles a complete line of output that may be a report.
func (p *proc) stdoutLine(line []byte) {
	m, ok, err := wire.ParseReportLine(line)
	if !ok {
		return
	}
	e := p.e
	var dropped []string
	defer func() { discard(dropped) }()
	e.mu.Lock()
	defer e.mu.Unlock()
	if p.violation != nil {
		return
	}
	if err != nil {
		p.violateLocked(fmt.Errorf("%s line: %w", strings.TrimSpace(wire.ReportPrefix), err))
		return
	}
	ev, err := p.resultEvent(m)
	if err != nil {
		p.violateLocked(fmt.Errorf("%s line: %w", strings.TrimSpace(wire.ReportPrefix), err))
		return
	}
	if p.stopped() {
		if ev.CheckpointDir != "" {
			dropped = append(dropped, ev.CheckpointDir)
		}
		return
	}
	p.outbox = append(p.outbox, pending{ev, fromStdout})
	p.pumpLocked()
}

// readStderr appends the process's standard error to stderr.log and keeps
// its last lines for the error of a failed process.
func (p *proc) readStderr() {
	defer p.e.wg.Done()
	defer close(p.stderrDone)
	br := bufio.NewReaderSize(p.stderrR, readChunk)
	for {
		frag, err := br.ReadSlice('\n')
		if len(frag) > 0 {
			_, _ = p.stderrLog.Write(frag)
			p.tail.add(frag)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// tail keeps the last tailLines lines written to it, each cut to
// tailLineMax bytes.
type tail struct {
	lines []string // complete lines, oldest first
	cur   []byte   // the line being written
	cut   bool     // cur was cut
}

func (t *tail) add(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i]
		}
		if room := tailLineMax - len(t.cur); room < len(chunk) {
			t.cur = append(t.cur, chunk[:max(room, 0)]...)
			t.cut = true
		} else {
			t.cur = append(t.cur, chunk...)
		}
		if i < 0 {
			return
		}
		t.push()
		b = b[i+1:]
	}
}

func (t *tail) push() {
	s := string(t.cur)
	if t.cut {
		s += " …"
	}
	if len(t.lines) == tailLines {
		copy(t.lines, t.lines[1:])
		t.lines = t.lines[:tailLines-1]
	}
	t.lines = append(t.lines, s)
	t.cur, t.cut = t.cur[:0], false
}

// String returns the kept lines, the last one even if unfinished, joined
// by newlines.
func (t *tail) String() string {
	lines := t.lines
	if len(t.cur) > 0 {
		s := string(t.cur)
		if t.cut {
			s += " …"
		}
		lines = append(slices.Clone(lines), s)
		if len(lines) > tailLines {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

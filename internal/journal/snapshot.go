package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hone-tune/hone/internal/fsutil"
)

// A snapshot compacts a journal: it holds a state that stands for the
// journal's first Offset bytes, so that a resume reads it and replays only
// the lines after them. It is a file beside the journal,
//
//	<journal>.<offset, 16 decimal digits>.snap
//
// written whole under a temporary name, fsynced and renamed into place
// (a crash leaves the old snapshots and at most a temporary file). Its
// form is
//
//	"hone-snapshot 1\n"
//	uvarint  offset          the journal bytes it stands for
//	uint32   header check    CRC-32C of the journal's header line
//	uint32   tail check      CRC-32C of the journal's last tailCheck bytes before offset
//	uvarint  body length, then the body (the caller's state, opaque here)
//	uint32   CRC-32C of every byte before it
//
// A snapshot belongs to a journal only if the journal is at least offset
// bytes long, a line ends at offset, and both checks match: the journal
// is append-only, so a journal that was cut shorter (a torn tail, or
// Cut) and written again fails them. Append and Cut remove the
// snapshots beyond what they keep, so that none is ever checked against
// bytes it was not taken over. The writer syncs the journal before the
// snapshot is written, so a snapshot never stands for bytes a power loss
// could take from the journal.

// snapshotMagic starts every snapshot file; its last digit is the form's
// version.
const snapshotMagic = "hone-snapshot 1\n"

// snapshotSuffix ends a snapshot file's name.
const snapshotSuffix = ".snap"

// tailCheck is how many journal bytes before a snapshot's offset its tail
// check covers.
const tailCheck = 4096

// KeepSnapshots is how many snapshots the runner keeps: the newest and
// the one before, which a resume falls back to if the newest does not
// serve.
const KeepSnapshots = 2

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Snapshot is a snapshot of a journal read back (OpenSnapshot).
type Snapshot struct {
	// Path is the snapshot's file.
	Path string
	// Offset is how many bytes of the journal it stands for; the lines
	// after them are the tail to replay (ReadFrom).
	Offset int64
	// Body is the state the writer stored. Its checksum is verified while
	// the caller decodes it: what was decoded may be used only once
	// Verify returns nil.
	Body []byte

	verify func() error
}

// Verify waits for the check of the snapshot's checksum and returns its
// verdict: an error if the file is damaged.
func (s *Snapshot) Verify() error { return s.verify() }

// Mark is a point of a journal a snapshot may stand for: its offset and
// the checks of the bytes before it (Writer.Mark).
type Mark struct {
	Offset int64
	header uint32
	tail   uint32
}

// Mark hands the journal to the operating system, makes it durable, and
// returns the point it has reached, for WriteSnapshot.
func (w *Writer) Mark() (Mark, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.syncLocked(); err != nil {
		return Mark{}, err
	}
	m, err := markAt(w.f, w.off)
	if err != nil {
		return Mark{}, fmt.Errorf("mark journal: %w", err)
	}
	return m, nil
}

// markAt computes the checks of the journal in f for a snapshot at off.
func markAt(f io.ReaderAt, off int64) (Mark, error) {
	header, err := headerLine(f)
	if err != nil {
		return Mark{}, err
	}
	hdrEnd := int64(len(header))
	if off < hdrEnd {
		return Mark{}, fmt.Errorf("offset %d is inside the header", off)
	}
	from := max(hdrEnd, off-tailCheck)
	tail := make([]byte, off-from)
	if _, err := f.ReadAt(tail, from); err != nil {
		return Mark{}, err
	}
	if len(tail) > 0 && tail[len(tail)-1] != '\n' {
		return Mark{}, fmt.Errorf("no line ends at offset %d", off)
	}
	return Mark{Offset: off, header: crc32.Checksum(header, castagnoli), tail: crc32.Checksum(tail, castagnoli)}, nil
}

// headerLine returns the journal's first line, newline included.
func headerLine(f io.ReaderAt) ([]byte, error) {
	buf := make([]byte, 4096)
	for {
		n, err := f.ReadAt(buf, 0)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return buf[:i+1], nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, errors.New("the journal has no complete header line")
			}
			return nil, err
		}
		buf = make([]byte, 2*len(buf))
	}
}

// SnapshotPath is the file of the snapshot at offset of the journal at
// jpath.
func SnapshotPath(jpath string, offset int64) string {
	return fmt.Sprintf("%s.%016d%s", jpath, offset, snapshotSuffix)
}

// SnapshotOffset returns the offset in the name of a snapshot file of
// the journal named jbase (its base name), or false if name is not one.
func SnapshotOffset(jbase, name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, jbase+".")
	if !ok {
		return 0, false
	}
	digits, ok := strings.CutSuffix(rest, snapshotSuffix)
	if !ok || len(digits) != 16 {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// scanSnapshots lists, in one reading of the journal's directory, the
// offsets of its snapshot files, newest (largest) first, and the
// temporary files of snapshots a crash left half written.
func scanSnapshots(jpath string) (offs []int64, left []string, err error) {
	entries, err := os.ReadDir(filepath.Dir(jpath))
	if err != nil {
		return nil, nil, fmt.Errorf("list snapshots: %w", err)
	}
	base := filepath.Base(jpath)
	for _, e := range entries {
		name := e.Name()
		if n, ok := SnapshotOffset(base, name); ok && e.Type().IsRegular() {
			offs = append(offs, n)
			continue
		}
		// fsutil's temporary name: "." + the snapshot's name + ".tmp-…".
		if tmp, _, ok := strings.Cut(name, ".tmp-"); ok {
			if _, ok := SnapshotOffset(base, strings.TrimPrefix(tmp, ".")); ok && strings.HasPrefix(tmp, ".") {
				left = append(left, filepath.Join(filepath.Dir(jpath), name))
			}
		}
	}
	slices.Sort(offs)
	slices.Reverse(offs)
	return offs, left, nil
}

// Snapshots returns the offsets of the snapshot files beside the journal
// at jpath, newest (largest) first. It does not read them.
func Snapshots(jpath string) ([]int64, error) {
	offs, _, err := scanSnapshots(jpath)
	return offs, err
}

// WriteSnapshot writes, durably, a snapshot of the journal at jpath that
// stands for its bytes up to m (from the journal's Writer.Mark) and holds
// body, then removes the snapshots older than the newest keep (at least
// one). It returns the new file's size.
func WriteSnapshot(jpath string, m Mark, body []byte, keep int) (int64, error) {
	b := make([]byte, 0, len(snapshotMagic)+3*binary.MaxVarintLen64+8+len(body)+4)
	b = append(b, snapshotMagic...)
	b = binary.AppendUvarint(b, uint64(m.Offset))
	b = binary.LittleEndian.AppendUint32(b, m.header)
	b = binary.LittleEndian.AppendUint32(b, m.tail)
	b = binary.AppendUvarint(b, uint64(len(body)))
	b = append(b, body...)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	if err := fsutil.WriteFileAtomic(SnapshotPath(jpath, m.Offset), b, 0o644); err != nil {
		return 0, fmt.Errorf("write snapshot: %w", err)
	}
	offs, left, err := scanSnapshots(jpath)
	if err != nil {
		return int64(len(b)), err
	}
	errs := []error{removeLeftovers(left)}
	for _, off := range offs[min(max(keep, 1), len(offs)):] {
		if err := os.Remove(SnapshotPath(jpath, off)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove an old snapshot: %w", err))
		}
	}
	return int64(len(b)), errors.Join(errs...)
}

// OpenSnapshot reads the snapshot at offset of the journal at jpath and
// checks that it belongs to the journal as it is now (see the form
// above); its own checksum is checked meanwhile, and Verify gives the
// verdict. The error says why a snapshot does not serve.
func OpenSnapshot(jpath string, offset int64) (*Snapshot, error) {
	p := SnapshotPath(jpath, offset)
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", filepath.Base(p), err)
	}
	s, m, err := decodeSnapshot(data)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", filepath.Base(p), err)
	}
	verify := s.verify
	s.verify = func() error {
		if err := verify(); err != nil {
			return fmt.Errorf("snapshot %s: %w", filepath.Base(p), err)
		}
		return nil
	}
	// A damaged file that also fails the checks below is reported as
	// damaged.
	fail := func(err error) (*Snapshot, error) {
		if verr := s.verify(); verr != nil {
			return nil, verr
		}
		return nil, err
	}
	if s.Offset != offset {
		return fail(fmt.Errorf("snapshot %s: it stands for %d bytes, not the %d its name says", filepath.Base(p), s.Offset, offset))
	}
	f, err := os.Open(jpath)
	if err != nil {
		return fail(fmt.Errorf("snapshot %s: %w", filepath.Base(p), err))
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fail(fmt.Errorf("snapshot %s: %w", filepath.Base(p), err))
	}
	if info.Size() < s.Offset {
		return fail(fmt.Errorf("snapshot %s: it stands for %d bytes of a journal of %d", filepath.Base(p), s.Offset, info.Size()))
	}
	now, err := markAt(f, s.Offset)
	if err != nil {
		return fail(fmt.Errorf("snapshot %s: %w", filepath.Base(p), err))
	}
	if now != m {
		return fail(fmt.Errorf("snapshot %s: the journal's bytes before %d are not those it was taken over", filepath.Base(p), s.Offset))
	}
	s.Path = p
	return s, nil
}

// decodeSnapshot parses a snapshot file's bytes.
func decodeSnapshot(data []byte) (*Snapshot, Mark, error) {
	if !bytes.HasPrefix(data, []byte(snapshotMagic)) {
		if bytes.HasPrefix(data, []byte("hone-snapshot ")) {
			return nil, Mark{}, errors.New("written in a form this hone does not read")
		}
		return nil, Mark{}, errors.New("not a hone snapshot")
	}
	if len(data) < len(snapshotMagic)+4 {
		return nil, Mark{}, errors.New("truncated")
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	// The checksum is computed beside the caller's decoding of the body
	// (on a second core), which it takes about half as long as.
	done := make(chan error, 1)
	go func() {
		if crc32.Checksum(body, castagnoli) != sum {
			done <- errors.New("checksum mismatch (torn or damaged)")
		}
		close(done)
	}()
	verify := sync.OnceValue(func() error { return <-done })
	p := body[len(snapshotMagic):]
	off, n := binary.Uvarint(p)
	if n <= 0 || off > 1<<62 {
		return nil, Mark{}, errors.New("bad offset")
	}
	p = p[n:]
	if len(p) < 8 {
		return nil, Mark{}, errors.New("truncated")
	}
	m := Mark{Offset: int64(off), header: binary.LittleEndian.Uint32(p), tail: binary.LittleEndian.Uint32(p[4:])}
	p = p[8:]
	size, n := binary.Uvarint(p)
	if n <= 0 || size != uint64(len(p)-n) {
		return nil, Mark{}, errors.New("bad body length")
	}
	return &Snapshot{Offset: m.Offset, Body: p[n:], verify: verify}, m, nil
}

// RemoveSnapshotLeftovers removes the temporary files of the journal's
// snapshots that a crash left half written. No snapshot of the journal may
// be being written meanwhile.
func RemoveSnapshotLeftovers(jpath string) error {
	_, left, err := scanSnapshots(jpath)
	if err != nil {
		return err
	}
	return removeLeftovers(left)
}

func removeLeftovers(left []string) error {
	var errs []error
	for _, p := range left {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove a snapshot's leftover temporary file: %w", err))
		}
	}
	return errors.Join(errs...)
}

// DropSnapshotsBeyond removes the snapshots of the journal at jpath that
// stand for more than its first size bytes: whoever shortens a journal
// calls it first (Append and Cut do).
func DropSnapshotsBeyond(jpath string, size int64) error {
	offs, err := Snapshots(jpath)
	if err != nil {
		return err
	}
	var errs []error
	for _, off := range offs {
		if off > size {
			if err := os.Remove(SnapshotPath(jpath, off)); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove a snapshot beyond the journal's end: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

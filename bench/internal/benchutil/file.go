package benchutil

import (
	"io"
	"os"
)

// WriteClose calls write with f, fsyncs f afterwards when sync is set, and
// closes f. f is closed whatever fails; the first error is returned.
func WriteClose(f *os.File, sync bool, write func(f *os.File) error) error {
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// Repeat writes size bytes to w: buf over and over, the last copy cut
// short. It writes nothing when size is not positive.
func Repeat(w io.Writer, size int64, buf []byte) error {
	for left := size; left > 0; {
		n := min(left, int64(len(buf)))
		if _, err := w.Write(buf[:n]); err != nil {
			return err
		}
		left -= n
	}
	return nil
}

// TempDir makes a new directory, named prefix followed by a random
// suffix, for a benchmark's experiments: under root if given, else in
// /dev/shm when usable (keeping journal and checkpoint I/O off a slow
// disk), else in the system temporary directory.
func TempDir(root, prefix string) (string, error) {
	if root != "" {
		return os.MkdirTemp(root, prefix)
	}
	if dir, err := os.MkdirTemp("/dev/shm", prefix); err == nil {
		return dir, nil
	}
	return os.MkdirTemp("", prefix)
}

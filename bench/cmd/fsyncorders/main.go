//go:build linux

// Command fsyncorders times ways of committing a checkpoint directory
// durably — the order and grouping of its fsyncs — beside a raw write +
// fsync of the same bytes, taking turns on the same disk, so that the
// ratios of one run can be compared. It is how the order store/local's
// Commit uses was chosen (docs/PERFORMANCE.md, "Checkpoint commit").
//
// Each commit writes the checkpoint's files into <trial>/.staging/<n>, as
// an executor stages them, and then commits the directory to
// <trial>/checkpoint_<n>:
//
//	one-by-one           fsync each file and the staged directory, rename, fsync both parents, one after another (hone before)
//	at-once              the same fsyncs, those of each step issued at once (hone now)
//	at-once-fdatasync    the same, with fdatasync(2) for the files
//	rename-first         rename, then every fsync at once
//	rename-first-1parent rename, then every fsync at once but the staging directory's
//	one-fsync            rename, then fsync the files alone: not durable on every filesystem
//	syncfs               rename, then syncfs(2): writes back every dirty page of the filesystem
//	by-hand              write and fsync the file in a temporary directory, fsync it, rename, fsync the parent
//
// Usage, from the bench module:
//
//	go run ./cmd/fsyncorders                 # 1 MB in one file, 120 rounds
//	go run ./cmd/fsyncorders -files 16       # the same bytes in 16 files
//	go run ./cmd/fsyncorders -busy           # while another writer dirties 8 MB every 20 ms
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// order commits the staged directory holding files to dest.
type order struct {
	name   string
	commit func(staged, dest string, files []string) error
}

func main() {
	mb := flag.Float64("mb", 1, "checkpoint size in MB, all files together")
	nfiles := flag.Int("files", 1, "files per checkpoint")
	rounds := flag.Int("n", 120, "rounds: each order commits once per round")
	only := flag.String("only", "", "comma-separated orders to time (default all)")
	busy := flag.Bool("busy", false, "another writer dirties 8 MB every 20 ms, as a trial writing its next checkpoint")
	dir := flag.String("dir", "", "scratch directory, on the disk to measure (default: a new one in $TMPDIR)")
	flag.Parse()
	if err := run(*mb, *nfiles, *rounds, *only, *busy, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "fsyncorders:", err)
		os.Exit(1)
	}
}

func orders() []order {
	return []order{
		{"one-by-one", func(s, d string, files []string) error {
			for _, p := range append(under(s, files), s) {
				if err := fsync(p); err != nil {
					return err
				}
			}
			if err := os.Rename(s, d); err != nil {
				return err
			}
			if err := fsync(filepath.Dir(d)); err != nil {
				return err
			}
			return fsync(filepath.Dir(s))
		}},
		{"at-once", func(s, d string, files []string) error {
			if err := fsyncAll(append(under(s, files), s)); err != nil {
				return err
			}
			if err := os.Rename(s, d); err != nil {
				return err
			}
			return fsyncAll([]string{filepath.Dir(d), filepath.Dir(s)})
		}},
		{"at-once-fdatasync", func(s, d string, files []string) error {
			if err := fdatasyncAll(under(s, files), s); err != nil {
				return err
			}
			if err := os.Rename(s, d); err != nil {
				return err
			}
			return fsyncAll([]string{filepath.Dir(d), filepath.Dir(s)})
		}},
		{"rename-first", func(s, d string, files []string) error {
			if err := os.Rename(s, d); err != nil {
				return err
			}
			return fsyncAll(append(under(d, files), d, filepath.Dir(d), filepath.Dir(s)))
		}},
		{"rename-first-1parent", func(s, d string, files []string) error {
			if err := os.Rename(s, d); err != nil {
				return err
			}
			return fsyncAll(append(under(d, files), d, filepath.Dir(d)))
		}},
		{"one-fsync", func(s, d string, files []string) error {
			if err := os.Rename(s, d); err != nil {
				return err
			}
			return fsyncAll(under(d, files))
		}},
		{"syncfs", func(s, d string, files []string) error {
			if err := os.Rename(s, d); err != nil {
				return err
			}
			f, err := os.Open(d)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := unix.Syncfs(int(f.Fd())); err != nil {
				return fmt.Errorf("syncfs %s: %w", d, err)
			}
			return nil
		}},
	}
}

func run(mb float64, nfiles, rounds int, only string, busy bool, dir string) error {
	size := int(mb * (1 << 20))
	root, err := os.MkdirTemp(dir, "fsyncorders-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	trial := filepath.Join(root, "trial")
	staging := filepath.Join(trial, ".staging")
	if err := os.MkdirAll(staging, 0o755); err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i*7 + i>>8)
	}
	names := make([]string, nfiles)
	for i := range names {
		names[i] = fmt.Sprintf("part-%02d.bin", i)
	}
	per := size / nfiles
	if busy {
		stop := make(chan struct{})
		done := make(chan struct{})
		defer func() { close(stop); <-done }()
		go func() {
			defer close(done)
			p := filepath.Join(root, "busy.bin")
			for {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				_ = os.Remove(p)
				_ = writeFile(p, 8<<20, buf, false)
			}
		}()
	}

	var timed []order
	for _, o := range orders() {
		if only == "" || slices.Contains(strings.Split(only, ","), o.name) {
			timed = append(timed, o)
		}
	}
	// The raw write and the commit by hand take turns with the orders.
	labels := []string{"raw", "by-hand"}
	for _, o := range timed {
		labels = append(labels, o.name)
	}
	rates := make([][]float64, len(labels))
	seq := 0
	for r := range rounds {
		for k := range labels {
			j := (k + r) % len(labels) // each goes first in turn
			seq++
			var el time.Duration
			var err error
			switch j {
			case 0:
				el, err = raw(filepath.Join(root, "raw.bin"), size, buf)
			case 1:
				el, err = byHand(root, names, per, buf)
			default:
				el, err = commitOnce(timed[j-2], trial, staging, seq, names, per, buf)
			}
			if err != nil {
				return err
			}
			rates[j] = append(rates[j], float64(size)/(1<<20)/el.Seconds())
			if !busy {
				syscall.Sync() // settle, outside the timing
			}
		}
	}
	fmt.Printf("%.3g MB in %d file(s), %d rounds%s; MB/s medians, ratios to raw (of the medians, and the median of each round's)\n",
		mb, nfiles, rounds, map[bool]string{true: ", beside a busy writer"}[busy])
	fmt.Printf("%-22s %9s %7s %7s\n", "order", "MB/s", "÷ raw", "paired")
	for j, n := range labels {
		paired := make([]float64, len(rates[j]))
		for i := range paired {
			paired[i] = rates[j][i] / rates[0][i]
		}
		fmt.Printf("%-22s %9.1f %7.2f %7.2f\n", n, median(rates[j]), median(rates[j])/median(rates[0]), median(paired))
	}
	return nil
}

// commitOnce writes the checkpoint's files into a new staging directory
// and commits it with o, returning the time of both; then it removes it.
func commitOnce(o order, trial, staging string, seq int, names []string, per int, buf []byte) (time.Duration, error) {
	staged := filepath.Join(staging, fmt.Sprint(seq))
	dest := filepath.Join(trial, fmt.Sprintf("checkpoint_%06d", seq))
	if err := os.Mkdir(staged, 0o755); err != nil {
		return 0, err
	}
	start := time.Now()
	for _, p := range under(staged, names) {
		if err := writeFile(p, per, buf, false); err != nil {
			return 0, err
		}
	}
	if err := o.commit(staged, dest, names); err != nil {
		return 0, fmt.Errorf("%s: %w", o.name, err)
	}
	el := time.Since(start)
	return el, os.RemoveAll(dest)
}

// raw writes size bytes to a new file at p and fsyncs it.
func raw(p string, size int, buf []byte) (time.Duration, error) {
	start := time.Now()
	if err := writeFile(p, size, buf, true); err != nil {
		return 0, err
	}
	el := time.Since(start)
	return el, os.Remove(p)
}

// byHand commits the files atomically by hand, as the checkpoint shape of
// perfbench does.
func byHand(root string, names []string, per int, buf []byte) (time.Duration, error) {
	tmp, dest := filepath.Join(root, "hand.tmp"), filepath.Join(root, "hand")
	start := time.Now()
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return 0, err
	}
	for _, p := range under(tmp, names) {
		if err := writeFile(p, per, buf, true); err != nil {
			return 0, err
		}
	}
	if err := fsync(tmp); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp, dest); err != nil {
		return 0, err
	}
	if err := fsync(root); err != nil {
		return 0, err
	}
	el := time.Since(start)
	return el, os.RemoveAll(dest)
}

func under(dir string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join(dir, n)
	}
	return out
}

// writeFile writes size bytes (buf repeated) to a new file at p, fsyncing
// it before closing when sync is set.
func writeFile(p string, size int, buf []byte, sync bool) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	for left := size; left > 0; {
		n := min(left, len(buf))
		if _, err := f.Write(buf[:n]); err != nil {
			f.Close()
			return err
		}
		left -= n
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// fsync fsyncs the file or directory p.
func fsync(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// fsyncAll fsyncs every path at once.
func fsyncAll(paths []string) error {
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fsync(p)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// fdatasyncAll fdatasyncs every file and fsyncs the directory dir, all
// at once.
func fdatasyncAll(files []string, dir string) error {
	errs := make([]error, len(files)+1)
	var wg sync.WaitGroup
	for i, p := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := os.Open(p)
			if err != nil {
				errs[i] = err
				return
			}
			errs[i] = unix.Fdatasync(int(f.Fd()))
			if cerr := f.Close(); errs[i] == nil {
				errs[i] = cerr
			}
		}()
	}
	errs[len(files)] = fsync(dir)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func median(x []float64) float64 {
	y := slices.Clone(x)
	slices.Sort(y)
	if n := len(y); n%2 == 1 {
		return y[n/2]
	} else if n > 0 {
		return (y[n/2-1] + y[n/2]) / 2
	}
	return 0
}

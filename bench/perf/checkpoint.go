package perf

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/bench/internal/benchutil"
	"github.com/hone-tune/hone/store/local"
)

// rayDurable is Ray's durable-trainable release test.
const rayDurable = "durable trainable: 16 trials, a 10 MB checkpoint every 10 s, keep 4: bar 650 s, observed 392 s " +
	"(a whole-run figure, not per commit)"

// checkpointFile is the name of the one file of a benchmark checkpoint.
const checkpointFile = "model.bin"

// localGoal is the least ratio of a local commit to a raw write + fsync
// that the storage shape's object-store figures are set beside.
const localGoal = 0.95

// linksPerRep is how many clones of a checkpoint each repetition times.
const linksPerRep = 5

// sizeName renders a checkpoint size for row names and variants: "1MB",
// "64KB", "1GB".
func sizeName(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "GB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MB"
	case n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "KB"
	}
	return strconv.FormatInt(n, 10) + "B"
}

// commitsPerRep is how many checkpoints of size each repetition commits
// (and writes raw): more for small sizes, whose times are short and noisy.
func commitsPerRep(size int64) int {
	switch {
	case size <= 1<<20:
		return 20
	case size <= 10<<20:
		return 10
	case size <= 100<<20:
		return 3
	}
	return 1
}

// sizeFigure is what the checkpoint shape measured at one size.
type sizeFigure struct {
	size int64
	// commits are the MB/s of write + Commit, raws those of the raw
	// write + fsync beside them, atomics those of the atomic commit by
	// hand.
	commits, raws, atomics []float64
	// links are the milliseconds of Store.Link (an exploit), copies those
	// of a durable copy of the same bytes.
	links, copies []float64
}

// checkpoint measures shape 3 for every selected size: write + Commit
// against a raw write + fsync, and Link against a durable copy.
func (b *bench) checkpoint(ctx context.Context) error {
	dir, err := b.freshDir("checkpoint")
	if err != nil {
		return err
	}
	defer removeDir(dir)
	st, err := local.New(dir) // durable: fsyncs as a real experiment does
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(seed, 2))
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	var figs []sizeFigure
	seq := 0
	for _, size := range b.cfg.CheckpointSizes {
		name := sizeName(size)
		if !b.want(ShapeCheckpoint, name) {
			continue
		}
		k := commitsPerRep(size)
		var honeRates, rawRates, atomicRates, oneFsyncRates, commitOnly []float64
		lf := sizeFigure{size: size}
		// An untimed raw write first: the first write of a size in a
		// process pays for growing the page cache.
		var warmup []float64
		if err := rawWrite(filepath.Join(dir, "raw.bin"), size, buf, &warmup); err != nil {
			return err
		}
		for rep := range b.cfg.Reps {
			if err := ctx.Err(); err != nil {
				return err
			}
			b.logf("checkpoint %s: repetition %d of %d: %d commits", name, rep+1, b.cfg.Reps, k)
			var committed []string
			// Commits, raw writes, commits by hand and commits with one
			// fsync take turns, each going first in turn, so that all see
			// the same state of the disk and its cache. The CPU profile
			// covers all four; the others are under rawWrite,
			// atomicByHand and oneFsyncCommit.
			err := b.prof.profiled("checkpoint-"+name, rep == 0, func() error {
				for i := range k {
					for j := range 4 {
						var err error
						switch (i + j + rep) % 4 {
						case 0:
							seq++
							var dest string
							dest, err = commitOnce(st, dir, seq, size, buf, &honeRates, &commitOnly)
							committed = append(committed, dest)
						case 1:
							err = rawWrite(filepath.Join(dir, "raw.bin"), size, buf, &rawRates)
						case 2:
							err = oneFsyncCommit(dir, size, buf, &oneFsyncRates)
						default:
							err = atomicByHand(dir, size, buf, &atomicRates)
						}
						if err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			if err := b.linkOnce(st, dir, committed[0], &seq, &lf); err != nil {
				return err
			}
			for _, p := range committed {
				if err := st.Delete(context.Background(), p); err != nil {
					return err
				}
			}
			settle()
		}
		row := Row{
			Shape: ShapeCheckpoint, Name: fmt.Sprintf("write + commit (store/local, durable), %s checkpoint", name), Unit: "MB/s",
			Value: median(honeRates), Samples: honeRates, Higher: true,
			BaseName: "write the same bytes to one file + fsync it", Base: median(rawRates), BaseSamples: rawRates,
			Target: Target{Text: "≥ 0.9 of raw", Met: func(r Row) bool { return r.Ratio() >= 0.9 }},
			Notes: []string{
				fmt.Sprintf("Commit alone (the fsyncs of the staged tree at once, rename, the fsyncs of both parents at once): median %s ms of %s",
					formatNum(median(commitOnly)), plural(len(commitOnly), "commit")),
				fmt.Sprintf("median of the paired ratios (each commit beside the raw write next to it in time): %s",
					formatRatio(pairedRatio(honeRates, rawRates))),
				fmt.Sprintf("the same bytes committed atomically by hand (write and fsync the file, fsync its directory, rename, fsync the parent): %s MB/s; hone ÷ by hand: %s",
					formatNum(median(atomicRates)), formatRatio(median(honeRates)/median(atomicRates))),
				fmt.Sprintf("a commit with one fsync, for reference (write the file in a staging directory, rename the directory into place, fsync the file alone: "+
					"one journal commit, as the raw write pays, which on ext4 usually carries the rename too; no directory is fsynced, so not a durable commit): %s MB/s; hone ÷ that: %s",
					formatNum(median(oneFsyncRates)), formatRatio(median(honeRates)/median(oneFsyncRates))),
			},
		}
		if size == 10<<20 {
			row.Ray = rayDurable
		}
		verdict := "met"
		if row.Ratio() < localGoal {
			verdict = "MISSED"
		}
		row.Notes = append(row.Notes, fmt.Sprintf("beside the object store (the storage shape), the goal for a local commit is ≥ %s of raw: %s",
			formatNum(localGoal), verdict))
		b.add(row)
		lf.commits, lf.raws, lf.atomics = honeRates, rawRates, atomicRates
		figs = append(figs, lf)
	}
	b.checkpoints = figs
	if len(figs) == 0 {
		return nil
	}
	smallest := median(figs[0].links)
	for _, lf := range figs {
		b.add(Row{
			Shape: ShapeCheckpoint, Name: fmt.Sprintf("exploit: Store.Link of a committed %s checkpoint", sizeName(lf.size)), Unit: "ms",
			Value: median(lf.links), Samples: lf.links,
			BaseName: "durable copy of the same bytes (copy + fsync)", Base: median(lf.copies), BaseSamples: lf.copies,
			Target: Target{Text: fmt.Sprintf("flat in size: ≤ 2× the %s link (%s ms)", sizeName(figs[0].size), formatNum(smallest)),
				Met: func(r Row) bool { return r.Value <= 2*smallest }},
		})
	}
	return nil
}

// pairedRatio is the median of a[i] / b[i]: the ratio of measurements
// taken side by side, less sensitive to a disk whose speed drifts than the
// ratio of the medians.
func pairedRatio(a, b []float64) float64 {
	r := make([]float64, min(len(a), len(b)))
	for i := range r {
		r[i] = a[i] / b[i]
	}
	return median(r)
}

// commitOnce writes a checkpoint of size bytes into a fresh staging
// directory, as a trainable does, and commits it as checkpoint seq of the
// trial; it appends the MB/s of the whole and the milliseconds of the
// commit alone, evicts the checkpoint's pages from the page cache (the raw
// writes remove their file, which frees them), and returns the
// checkpoint's path.
func commitOnce(st *local.Store, dir string, seq int, size int64, buf []byte, rates, commitMs *[]float64) (string, error) {
	staged := filepath.Join(dir, "trial", local.StagingDirName, strconv.Itoa(seq))
	dest := "trial/" + hone.CheckpointDirName(seq)
	if err := os.MkdirAll(staged, 0o755); err != nil {
		return "", err
	}
	start := time.Now()
	if err := writeFile(filepath.Join(staged, checkpointFile), size, buf, false); err != nil {
		return "", err
	}
	mid := time.Now()
	if err := st.Commit(context.Background(), staged, dest); err != nil {
		return "", err
	}
	end := time.Now()
	*rates = append(*rates, float64(size)/(1<<20)/end.Sub(start).Seconds())
	*commitMs = append(*commitMs, float64(end.Sub(mid).Microseconds())/1000)
	evict(filepath.Join(dir, filepath.FromSlash(dest), checkpointFile))
	return dest, nil
}

// rawWrite writes size bytes to a new file at p and fsyncs it, appends
// the MB/s, and removes the file (then lets the filesystem settle).
func rawWrite(p string, size int64, buf []byte, rates *[]float64) error {
	start := time.Now()
	if err := writeFile(p, size, buf, true); err != nil {
		return err
	}
	*rates = append(*rates, float64(size)/(1<<20)/time.Since(start).Seconds())
	if err := os.Remove(p); err != nil {
		return err
	}
	settle()
	return nil
}

// atomicByHand is the least an atomic, durable commit of a directory
// costs: it writes size bytes to a file in a fresh directory, fsyncs the
// file and the directory, renames the directory into place, and fsyncs the
// parent, appending the MB/s; then it removes the directory (and lets the
// filesystem settle).
func atomicByHand(dir string, size int64, buf []byte, rates *[]float64) error {
	tmp, dest := filepath.Join(dir, "hand.tmp"), filepath.Join(dir, "hand")
	start := time.Now()
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(tmp, checkpointFile), size, buf, true); err != nil {
		return err
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dest); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	*rates = append(*rates, float64(size)/(1<<20)/time.Since(start).Seconds())
	if err := os.RemoveAll(dest); err != nil {
		return err
	}
	settle()
	return nil
}

// oneFsyncCommit is a commit with a single fsync, for reference: it
// writes size bytes to a file in a fresh staging directory, renames the
// directory into place and fsyncs the file alone, appending the MB/s; then
// it removes the directory (and lets the filesystem settle). That costs
// one journal commit, as rawWrite does, and on ext4 the commit usually
// carries the rename too; but no directory is fsynced, so the rename is
// not guaranteed durable: the gap between it and a durable commit is what
// the directory fsyncs cost.
func oneFsyncCommit(dir string, size int64, buf []byte, rates *[]float64) error {
	staged, dest := filepath.Join(dir, "floor.staging"), filepath.Join(dir, "floor")
	if err := os.Mkdir(staged, 0o755); err != nil {
		return err
	}
	start := time.Now()
	if err := writeFile(filepath.Join(staged, checkpointFile), size, buf, false); err != nil {
		return err
	}
	if err := os.Rename(staged, dest); err != nil {
		return err
	}
	f, err := os.Open(filepath.Join(dest, checkpointFile))
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	*rates = append(*rates, float64(size)/(1<<20)/time.Since(start).Seconds())
	if err := os.RemoveAll(dest); err != nil {
		return err
	}
	settle()
	return nil
}

// syncDir fsyncs the directory dir.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// linkOnce clones the committed checkpoint src linksPerRep times and makes
// one durable copy of its file, adding the times (ms) to lf; the clones
// and the copy are removed.
func (b *bench) linkOnce(st *local.Store, dir, src string, seq *int, lf *sizeFigure) error {
	for range linksPerRep {
		*seq++
		dest := "clone/" + hone.CheckpointDirName(*seq)
		start := time.Now()
		if err := st.Link(context.Background(), src, dest); err != nil {
			return err
		}
		lf.links = append(lf.links, float64(time.Since(start).Microseconds())/1000)
		if err := st.Delete(context.Background(), dest); err != nil {
			return err
		}
	}
	from := filepath.Join(dir, filepath.FromSlash(src), checkpointFile)
	to := filepath.Join(dir, "copy.bin")
	start := time.Now()
	if err := durableCopy(from, to); err != nil {
		return err
	}
	lf.copies = append(lf.copies, float64(time.Since(start).Microseconds())/1000)
	if err := os.Remove(to); err != nil {
		return err
	}
	settle()
	return nil
}

// writeFile writes size bytes (buf repeated) to a new file at p, fsyncing
// it before closing when sync is set.
func writeFile(p string, size int64, buf []byte, sync bool) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	return benchutil.WriteClose(f, sync, func(f *os.File) error { return benchutil.Repeat(f, size, buf) })
}

// durableCopy copies the file src to a new file dst and fsyncs it.
func durableCopy(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	return benchutil.WriteClose(out, true, func(out *os.File) error {
		_, err := io.Copy(out, in)
		return err
	})
}

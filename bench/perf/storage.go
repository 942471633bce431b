package perf

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/bench/internal/benchutil"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/blob"
	"github.com/hone-tune/hone/trial"
)

// Variants of the storage shape, as -only takes them (storage/commit …).
const (
	storageCommit  = "commit"
	storageLatency = "latency"
	storageLink    = "link"
	storageResume  = "resume"
)

// storage measures the storage shape on the S3 server of
// Config.StorageURL: commits to it against uploads by hand, the latency
// of results while a large checkpoint uploads against none uploading,
// and server-side copies against copies through the client.
func (b *bench) storage(ctx context.Context) (err error) {
	if b.cfg.StorageURL == "" {
		return errNoStorage
	}
	r, err := openS3Run(ctx, b.cfg.StorageURL, b.scratch)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := r.close(context.WithoutCancel(ctx)); err == nil {
			err = cerr
		}
	}()
	fmt.Fprintf(b.out, "S3 server: %s (key prefix %s); the server runs on this machine and shares its CPUs\n",
		blob.Redact(b.cfg.StorageURL), r.prefix)
	buf := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(seed, 3))
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	for _, v := range []struct {
		name string
		run  func(context.Context, *s3Run, []byte) error
	}{{storageCommit, b.storageCommits}, {storageLatency, b.storageLatency}, {storageLink, b.storageLinks}, {storageResume, b.storageResume}} {
		if !b.want(ShapeStorage, v.name) {
			continue
		}
		if err := v.run(ctx, r, buf); err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
	}
	return nil
}

// writeFiles writes a checkpoint of size bytes as n files of about equal
// size (part-0.bin …) into the new directory dir and returns their names.
func writeFiles(dir string, size int64, n int, buf []byte) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var names []string
	left := size
	for i := range n {
		part := left / int64(n-i)
		name := "part-" + strconv.Itoa(i) + ".bin"
		if err := writeFile(filepath.Join(dir, name), part, buf, false); err != nil {
			return nil, err
		}
		names = append(names, name)
		left -= part
	}
	return names, nil
}

// stage makes a fresh staging directory staged holding hard links to the
// named files of src: a checkpoint as a trainable leaves it, at no cost of
// its own (the bytes stay in the page cache for hone and the baselines
// alike).
func stage(src, staged string, files []string) error {
	if err := os.MkdirAll(staged, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := os.Link(filepath.Join(src, f), filepath.Join(staged, f)); err != nil {
			return err
		}
	}
	return nil
}

// hashMs is the milliseconds SHA-256 of the named files of dir takes (the
// median of three), which hone's store computes for its manifest as it
// uploads.
func hashMs(dir string, files []string) (float64, error) {
	var ms []float64
	for range 3 {
		start := time.Now()
		for _, name := range files {
			f, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				return 0, err
			}
			_, err = io.Copy(sha256.New(), f)
			f.Close()
			if err != nil {
				return 0, err
			}
		}
		ms = append(ms, float64(time.Since(start).Microseconds())/1000)
	}
	return median(ms), nil
}

// storageCommits measures Store.Commit of store/blob on the S3 server for
// every size and number of files, against uploading the same files by
// hand with the same SDK plus a manifest object last; and, for a note, by
// hand doing the checks and checksums hone's store does too.
func (b *bench) storageCommits(ctx context.Context, r *s3Run, buf []byte) error {
	st, err := r.openStore(ctx, "commit")
	if err != nil {
		return err
	}
	defer st.Close()
	seq := 0
	for _, size := range b.cfg.StorageCommitSizes {
		for _, n := range b.cfg.StorageCommitFiles {
			src := filepath.Join(b.scratch, fmt.Sprintf("s3-src-%s-%d", sizeName(size), n))
			files, err := writeFiles(src, size, n, buf)
			if err != nil {
				return err
			}
			hash, err := hashMs(src, files)
			if err != nil {
				return err
			}
			k := commitsPerRep(size)
			if b.cfg.Smoke {
				k = min(k, smokeOps)
			}
			var honeRates, handRates, checkedRates []float64
			for rep := range b.cfg.Reps {
				b.logf("storage commit %s in %s: repetition %d of %d: %d commits", sizeName(size), plural(n, "file"), rep+1, b.cfg.Reps, k)
				for i := range k {
					for j := range 3 {
						if err := ctx.Err(); err != nil {
							return err
						}
						seq++
						dest := fmt.Sprintf("c%d/%s", seq, hone.CheckpointDirName(1))
						switch (i + j + rep) % 3 {
						case 0:
							staged := filepath.Join(b.scratch, "s3-staged", strconv.Itoa(seq))
							if err := stage(src, staged, files); err != nil {
								return err
							}
							start := time.Now()
							if err := st.Commit(ctx, staged, dest); err != nil {
								return err
							}
							honeRates = append(honeRates, float64(size)/(1<<20)/time.Since(start).Seconds())
							if err := st.Delete(ctx, dest); err != nil {
								return err
							}
						default:
							k := "hand/" + dest
							upload, rates := handUpload, &handRates
							if (i+j+rep)%3 == 2 {
								upload, rates = handUploadChecked, &checkedRates
							}
							start := time.Now()
							if err := upload(ctx, r.raw, src, files, k); err != nil {
								return err
							}
							*rates = append(*rates, float64(size)/(1<<20)/time.Since(start).Seconds())
							if err := deleteAll(ctx, r.raw, k+"/"); err != nil {
								return err
							}
						}
						settle()
					}
				}
			}
			if err := os.RemoveAll(src); err != nil {
				return err
			}
			hand := median(handRates)
			b.add(Row{
				Shape: ShapeStorage, Name: fmt.Sprintf("commit to S3 (store/blob), %s checkpoint in %s", sizeName(size), plural(n, "file")),
				Unit: "MB/s", Value: median(honeRates), Samples: honeRates, Higher: true,
				BaseName: "the same files uploaded by hand, same SDK: a gocloud.dev blob writer per file, then a small manifest object",
				Base:     hand, BaseSamples: handRates,
				Target: Target{Text: "≥ 0.9 of by hand", Met: func(r Row) bool { return r.Ratio() >= 0.9 }},
				Notes: []string{
					fmt.Sprintf("median of the paired ratios (each commit beside the upload by hand next to it in time): %s",
						formatRatio(pairedRatio(honeRates, handRates))),
					fmt.Sprintf("hone also checksums every file for its manifest (CRC-32C) and writes the manifest only if none exists (a conditional write); "+
						"SHA-256 of these bytes alone, as the store hashed them before: %s ms, %s of the by-hand upload's time",
						formatNum(hash), formatRatio(hash/1000/(float64(size)/(1<<20)/hand))),
					fmt.Sprintf("by hand with the checks the store made before (a manifest check, a listing of the prefix, SHA-256 as it uploads): %s MB/s; hone ÷ this: %s",
						formatNum(median(checkedRates)), formatRatio(median(honeRates)/median(checkedRates))),
				},
			})
		}
	}
	return nil
}

// storageLinks measures Store.Link of store/blob (server-side copies) of
// a committed checkpoint of every size, against copying the same objects
// through the client (download streamed into an upload).
func (b *bench) storageLinks(ctx context.Context, r *s3Run, buf []byte) error {
	st, err := r.openStore(ctx, "link")
	if err != nil {
		return err
	}
	defer st.Close()
	type fig struct {
		size          int64
		links, copies []float64
	}
	var figs []fig
	seq := 0
	for _, size := range b.cfg.StorageLinkSizes {
		if err := ctx.Err(); err != nil {
			return err
		}
		staged := filepath.Join(b.scratch, "s3-link-src")
		if _, err := writeFiles(staged, size, 1, buf); err != nil {
			return err
		}
		src := fmt.Sprintf("src-%s/%s", sizeName(size), hone.CheckpointDirName(1))
		if err := st.Commit(ctx, staged, src); err != nil {
			return err
		}
		settle()
		f := fig{size: size}
		k := linksPerSize(size)
		if b.cfg.Smoke {
			k = min(k, smokeOps)
		}
		for rep := range b.cfg.Reps {
			b.logf("storage link %s: repetition %d of %d: %d copies", sizeName(size), rep+1, b.cfg.Reps, k)
			for i := range k {
				for j := range 2 {
					if err := ctx.Err(); err != nil {
						return err
					}
					seq++
					dest := fmt.Sprintf("dest-%d/%s", seq, hone.CheckpointDirName(1))
					if (i+j+rep)%2 == 0 {
						start := time.Now()
						if err := st.Link(ctx, src, dest); err != nil {
							return err
						}
						f.links = append(f.links, float64(time.Since(start).Microseconds())/1000)
						if err := st.Delete(ctx, dest); err != nil {
							return err
						}
					} else {
						start := time.Now()
						if err := handCopy(ctx, r.raw, "link/"+src, "link/"+dest, blob.ManifestName); err != nil {
							return err
						}
						f.copies = append(f.copies, float64(time.Since(start).Microseconds())/1000)
						if err := deleteAll(ctx, r.raw, "link/"+dest+"/"); err != nil {
							return err
						}
					}
					settle()
				}
			}
		}
		if err := st.Delete(ctx, src); err != nil {
			return err
		}
		figs = append(figs, f)
	}
	if len(figs) == 0 {
		return nil
	}
	first := figs[0]
	firstRatio := median(first.links) / median(first.copies)
	for _, f := range figs {
		growth := func(s []float64, s0 []float64) float64 { return median(s) / median(s0) }
		row := Row{
			Shape: ShapeStorage, Name: fmt.Sprintf("exploit copy on S3: Store.Link (server-side copy) of a %s checkpoint", sizeName(f.size)),
			Unit: "ms", Value: median(f.links), Samples: f.links,
			BaseName: "download + upload of the same objects through the client: a blob reader streamed into a blob writer, manifest last",
			Base:     median(f.copies), BaseSamples: f.copies,
			Target: Target{Text: fmt.Sprintf("flat in size relative to download + upload: ratio ≤ the %s ratio (%s)", sizeName(first.size), formatRatio(firstRatio)),
				Met: func(r Row) bool { return r.Ratio() <= firstRatio*1.05 }},
		}
		if f.size != first.size {
			row.Notes = []string{fmt.Sprintf("from %s to %s: Link took %s× as long, download + upload %s×",
				sizeName(first.size), sizeName(f.size), formatRatio(growth(f.links, first.links)), formatRatio(growth(f.copies, first.copies)))}
		}
		b.add(row)
	}
	return nil
}

// smokeOps bounds the commits and copies of each kind per size and
// repetition at smoke sizes.
const smokeOps = 3

// linksPerSize is how many copies of a checkpoint of size each repetition
// times (each way).
func linksPerSize(size int64) int {
	switch {
	case size <= 10<<20:
		return 5
	case size <= 100<<20:
		return 2
	}
	return 1
}

// latencyMetric is the result metric carrying the microseconds since the
// run's epoch at which the trainable reported it.
const latencyMetric = "sent_us"

// latencyWarmup is how many results the uploading trial reports before the
// one carrying its checkpoint.
const latencyWarmup = 50

// latencyTail is how long, at least, the trials keep reporting after the
// window (and always longer than the shortest window); latencyMinPeriods
// report periods is the shortest window.
const (
	latencyTail       = 200 * time.Millisecond
	latencyMinPeriods = 5
)

// storageLatency measures the p99 latency from a trial's report to the
// result being in the journal, for the trials that do not upload, while
// one trial commits a checkpoint of Config.StorageUploadBytes to the S3
// server, against the same experiment with no upload, over a window as
// long. A third run, the experiment with no checkpoint while the same
// bytes are uploaded by hand beside it, tells what the machine alone
// does to the latency (the server and the upload share its CPUs and disk
// with the runner).
func (b *bench) storageLatency(ctx context.Context, r *s3Run, buf []byte) error {
	big := filepath.Join(b.scratch, "s3-big")
	files, err := writeFiles(big, b.cfg.StorageUploadBytes, 1, buf)
	if err != nil {
		return err
	}
	defer os.RemoveAll(big)
	bigFile := filepath.Join(big, files[0])
	settle()
	var up, base, hand, upP50, baseP50, handP50, upMax, baseMax, handMax, upMBs, handMBs []float64
	var upSched, baseSched, handSched []float64
	var one, oneMBs []float64 // with upload_parts=1
	var nUp, nBase int
	var observed, expected int64
	for rep := range b.cfg.Reps {
		b.logf("storage latency: repetition %d of %d: %d trials, one commits %s", rep+1, b.cfg.Reps, b.cfg.StorageTrials, mb(b.cfg.StorageUploadBytes))
		u, err := b.latencyOnce(ctx, r, rep, latencyCommit, bigFile, 0)
		if err != nil {
			return fmt.Errorf("with upload: %w", err)
		}
		n, err := b.latencyOnce(ctx, r, rep, latencyNone, "", u.window)
		if err != nil {
			return fmt.Errorf("without upload: %w", err)
		}
		h, err := b.latencyOnce(ctx, r, rep, latencyBeside, bigFile, 0)
		if err != nil {
			return fmt.Errorf("with an upload by hand beside: %w", err)
		}
		o, err := b.latencyOnce(ctx, r, rep, latencyCommitOnePart, bigFile, 0)
		if err != nil {
			return fmt.Errorf("with upload_parts=1: %w", err)
		}
		one, oneMBs = append(one, o.p99), append(oneMBs, float64(b.cfg.StorageUploadBytes)/(1<<20)/o.window.Seconds())
		observed, expected = observed+o.observed, expected+o.expected
		up, upP50, upMax = append(up, u.p99), append(upP50, u.p50), append(upMax, u.max)
		base, baseP50, baseMax = append(base, n.p99), append(baseP50, n.p50), append(baseMax, n.max)
		hand, handP50, handMax = append(hand, h.p99), append(handP50, h.p50), append(handMax, h.max)
		upSched, baseSched, handSched = append(upSched, u.sched), append(baseSched, n.sched), append(handSched, h.sched)
		upMBs = append(upMBs, float64(b.cfg.StorageUploadBytes)/(1<<20)/u.window.Seconds())
		handMBs = append(handMBs, float64(b.cfg.StorageUploadBytes)/(1<<20)/h.window.Seconds())
		nUp, nBase = nUp+u.samples, nBase+n.samples
		observed, expected = observed+u.observed+n.observed+h.observed, expected+u.expected+n.expected+h.expected
	}
	b.add(Row{
		Shape: ShapeStorage, Name: fmt.Sprintf("p99 latency report → journal of %d trials reporting every %v while another commits a %s checkpoint to S3",
			b.cfg.StorageTrials-1, b.cfg.StorageReportEvery, sizeName(b.cfg.StorageUploadBytes)),
		Unit: "ms", Value: median(up), Samples: up,
		BaseName: "the same experiment with no upload, over a window as long", Base: median(base), BaseSamples: base,
		Target:   Target{Text: "≤ 2× without upload", Met: func(r Row) bool { return r.Ratio() <= 2 }},
		Observed: observed, Expected: expected,
		Notes: []string{
			fmt.Sprintf("p50: %s ms with the upload, %s ms without; worst: %s ms with, %s ms without; %d and %d results in the windows",
				formatNum(median(upP50)), formatNum(median(baseP50)), formatNum(slices.Max(upMax)), formatNum(slices.Max(baseMax)), nUp, nBase),
			fmt.Sprintf("the commit (upload, manifest, then the runner's step) took the window: %s MB/s", formatNum(median(upMBs))),
			fmt.Sprintf("the machine alone: the experiment with no checkpoint while the same file is uploaded by hand beside it (same SDK, %s MB/s): "+
				"p99 %s ms (samples %s), p50 %s ms, worst %s ms; hone's commit ÷ this: %s",
				formatNum(median(handMBs)), formatNum(median(hand)), formatSamples(hand), formatNum(median(handP50)), formatNum(slices.Max(handMax)),
				formatRatio(median(up)/median(hand))),
			fmt.Sprintf("p99 of how long a runnable goroutine waited for a CPU in the window (runtime/metrics %s): %s ms with hone's commit, %s ms without, %s ms beside the upload by hand",
				schedLatencies, formatNum(median(upSched)), formatNum(median(baseSched)), formatNum(median(handSched))),
			fmt.Sprintf("with the store's upload_parts=1 (one part of the file in flight at a time): p99 %s ms (samples %s), %s× without upload, at %s MB/s",
				formatNum(median(one)), formatSamples(one), formatRatio(median(one)/median(base)), formatNum(median(oneMBs))),
			"latency: from the trainable calling Report to a callback seeing the result, which the runner calls after handing the journal line to the operating system",
		},
	})
	return nil
}

// Modes of a run of the latency experiment.
const (
	// latencyCommit: the big trial's report number latencyWarmup carries
	// a checkpoint of the big file; the window is its commit.
	latencyCommit = iota
	// latencyNone: no checkpoint; the window is a given duration from
	// the big trial's report number latencyWarmup.
	latencyNone
	// latencyBeside: no checkpoint; at the big trial's report number
	// latencyWarmup the big file is uploaded by hand beside the
	// experiment, and the window is that upload.
	latencyBeside
	// latencyCommitOnePart: latencyCommit with the store's upload_parts=1.
	latencyCommitOnePart
)

// latencyFigures is what one run of the latency experiment measured.
type latencyFigures struct {
	p50, p99, max      float64 // ms, of the other trials' results in the window
	sched              float64 // ms, p99 of the Go scheduler's latency in the window
	samples            int
	window             time.Duration
	observed, expected int64 // results in the journal, results reported
}

// latencySample is one result as the callback saw it.
type latencySample struct {
	trial  string
	sentUs float64
	ms     float64
}

// latencyCallback records, for every result, its trial, when it was
// reported and how long it took to reach the callback. The runner calls
// it on its one goroutine.
type latencyCallback struct {
	hone.NopCallback
	epoch   time.Time
	samples []latencySample
}

// OnTrialResult records one result.
func (c *latencyCallback) OnTrialResult(t *hone.Trial, res *hone.Result) {
	now := float64(time.Since(c.epoch).Nanoseconds()) / 1000
	sent, ok := res.Metrics[latencyMetric].(float64)
	if !ok {
		return
	}
	c.samples = append(c.samples, latencySample{trial: t.ID, sentUs: sent, ms: (now - sent) / 1000})
}

// latencyState is shared by the trainables of one run of the latency
// experiment.
type latencyState struct {
	epoch    time.Time
	every    time.Duration
	bigFile  string // "" for the run without upload
	claimed  atomic.Bool
	stop     atomic.Bool
	reported atomic.Int64

	mu       sync.Mutex
	bigTrial string
	// start and end are the microseconds since epoch at which the big
	// trial's checkpoint report was made and returned (the upload's
	// window); started is closed when it is made, ended when it returns.
	start, end     float64
	started, ended chan struct{}
}

// fn is the trainable: it reports every s.every, with the time of the
// report; the first trial to start is the big one, whose report number
// latencyWarmup carries a checkpoint holding a hard link to bigFile
// (when set). Every trial reports Done once stop is set.
func (ls *latencyState) fn(ctx context.Context, s trial.Session) error {
	big := ls.claimed.CompareAndSwap(false, true)
	if big {
		ls.mu.Lock()
		ls.bigTrial = s.TrialID()
		ls.mu.Unlock()
		// However the big trial ends, the others stop too.
		defer ls.stop.Store(true)
	}
	tick := time.NewTicker(ls.every)
	defer tick.Stop()
	for i := 1; ; i++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		done := ls.stop.Load()
		var opts []trial.ReportOption
		if done {
			opts = append(opts, trial.Done())
		}
		mark := big && i == latencyWarmup
		if mark && ls.bigFile != "" {
			dir, err := s.StagingDir()
			if err != nil {
				return fmt.Errorf("staging: %w", err)
			}
			if err := os.Link(ls.bigFile, filepath.Join(dir, checkpointFile)); err != nil {
				return fmt.Errorf("checkpoint: %w", err)
			}
			opts = append(opts, trial.WithCheckpoint(dir))
		}
		sent := float64(time.Since(ls.epoch).Nanoseconds()) / 1000
		if mark {
			ls.mu.Lock()
			ls.start = sent
			ls.mu.Unlock()
			close(ls.started)
		}
		ls.reported.Add(1)
		err := s.Report(trial.Metrics{"loss": 1 / float64(i), latencyMetric: sent}, opts...)
		if mark {
			ls.mu.Lock()
			ls.end = float64(time.Since(ls.epoch).Nanoseconds()) / 1000
			ls.mu.Unlock()
			close(ls.ended)
		}
		if err != nil || done {
			return err
		}
	}
}

// latencyOnce runs the latency experiment once in the given mode (see
// latencyCommit …), with bigFile the checkpoint file to upload and window
// the window of latencyNone.
func (b *bench) latencyOnce(ctx context.Context, r *s3Run, rep, mode int, bigFile string, window time.Duration) (latencyFigures, error) {
	name := "latency-" + strconv.Itoa(rep) + "-" + strconv.Itoa(mode)
	dir, err := b.freshDir(name)
	if err != nil {
		return latencyFigures{}, err
	}
	defer removeDir(dir)
	var st *blob.Store
	if mode == latencyCommitOnePart {
		st, err = blob.Open(ctx, r.url(name)+"&"+blob.UploadPartsParam+"=1", filepath.Join(r.cache, name), blob.LocalRoot(dir))
	} else {
		st, err = r.openStore(ctx, name, blob.LocalRoot(dir))
	}
	if err != nil {
		return latencyFigures{}, err
	}
	defer st.Close()
	n := b.cfg.StorageTrials
	sr, err := random.New(space.Space{"x": space.Uniform(0, 1)}, n, nil, seed)
	if err != nil {
		return latencyFigures{}, err
	}
	epoch := time.Now()
	cb := &latencyCallback{epoch: epoch}
	exp := &hone.Experiment{Name: "latency", Metric: "loss", Mode: hone.Min, Searcher: sr,
		MaxConcurrentTrials: n, Seed: seed, Callbacks: []hone.Callback{cb}}
	ls := &latencyState{epoch: epoch, every: b.cfg.StorageReportEvery,
		started: make(chan struct{}), ended: make(chan struct{})}
	if mode == latencyCommit || mode == latencyCommitOnePart {
		ls.bigFile = bigFile
	}
	opts := runner.Options{Dir: dir, Executor: inproc.NewFunc(ls.fn), Store: st, Pool: hone.Resources{CPU: float64(n)}, Log: io.Discard}

	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var handEnd float64 // µs since epoch at which the upload by hand ended
	var handErr error
	var schedFrom, schedTo *metrics.Float64Histogram
	wg.Go(func() {
		defer ls.stop.Store(true)
		select {
		case <-rctx.Done():
			return
		case <-ls.started:
		}
		schedFrom = schedSnapshot()
		switch mode {
		case latencyNone:
			select {
			case <-rctx.Done():
			case <-time.After(window):
			}
		case latencyBeside:
			_, handErr = uploadFile(rctx, r.raw, bigFile, name+"/beside.bin")
			handEnd = float64(time.Since(epoch).Nanoseconds()) / 1000
		default:
			select {
			case <-rctx.Done():
			case <-ls.ended:
			}
		}
		schedTo = schedSnapshot()
		select {
		case <-rctx.Done():
		case <-time.After(max(latencyTail, (latencyMinPeriods+1)*ls.every)):
		}
	})
	out, _, err := runTimed(rctx, exp, opts)
	cancel()
	wg.Wait()
	if err != nil {
		return latencyFigures{}, err
	}
	seen, err := countResults(dir)
	if err != nil {
		return latencyFigures{}, err
	}
	if seen != ls.reported.Load() {
		return latencyFigures{}, fmt.Errorf("hone journaled %d results, the trials reported %d", seen, ls.reported.Load())
	}
	from, to := ls.start, ls.end
	switch mode {
	case latencyCommit, latencyCommitOnePart:
		if err := checkOneCheckpoint(out, ls.bigTrial); err != nil {
			return latencyFigures{}, err
		}
	case latencyNone:
		to = from + float64(window.Microseconds())
	case latencyBeside:
		if handErr != nil {
			return latencyFigures{}, handErr
		}
		if err := deleteAll(ctx, r.raw, name+"/"); err != nil {
			return latencyFigures{}, err
		}
		to = handEnd
	}
	// A window shorter than a few report periods (a small upload at
	// smoke sizes) could hold no result of the other trials.
	to = max(to, from+float64((latencyMinPeriods*ls.every).Microseconds()))
	var ms []float64
	for _, s := range cb.samples {
		if s.trial != ls.bigTrial && s.sentUs >= from && s.sentUs <= to {
			ms = append(ms, s.ms)
		}
	}
	if len(ms) == 0 {
		return latencyFigures{}, fmt.Errorf("no result of the other trials in the window of %v", time.Duration(to-from)*time.Microsecond)
	}
	slices.Sort(ms)
	return latencyFigures{p50: benchutil.Quantile(ms, 0.5), p99: benchutil.Quantile(ms, 0.99), max: ms[len(ms)-1], sched: schedQuantile(schedFrom, schedTo, 0.99), samples: len(ms),
		window: time.Duration(to-from) * time.Microsecond, observed: seen, expected: ls.reported.Load()}, nil
}

// checkOneCheckpoint checks that the uploading trial ended with its one
// checkpoint committed.
func checkOneCheckpoint(out *runner.Outcome, id string) error {
	for _, t := range out.Trials {
		if t.ID != id {
			continue
		}
		if t.Checkpoint == nil {
			return fmt.Errorf("trial %s: its checkpoint was not registered", id)
		}
		return nil
	}
	return errors.New("no trial uploaded")
}

package perf

import (
	"bytes"
	"context"
	"fmt"
	"github.com/hone-tune/hone"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hone-tune/hone/callback"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/remote"
	"github.com/hone-tune/hone/runner"
)

// storageResume times the resume of a finished sim experiment of
// StorageResumeTrials trials (with its trials' result files) from S3, as
// hone resume URL does it on a machine that never saw the experiment
// (restore into an empty cache, runner.Resume, the last sync), against
// runner.Resume of the same experiment on local disk.
func (b *bench) storageResume(ctx context.Context, r *s3Run, _ []byte) error {
	n, conc := b.cfg.StorageResumeTrials, b.cfg.Concurrency
	dir, err := b.freshDir("storage-resume")
	if err != nil {
		return err
	}
	defer removeDir(dir)
	localDir := filepath.Join(dir, "local")
	u := r.url("resume/exp")
	// The experiment on local disk, and the same on S3.
	b.logf("storage resume: running the %d-trial sim experiment on local disk and on S3", n)
	if err := b.resumeBuild(ctx, n, conc, localDir, nil); err != nil {
		return fmt.Errorf("build on local disk: %w", err)
	}
	e, err := remote.Open(ctx, u, filepath.Join(dir, "cache-build"))
	if err != nil {
		return err
	}
	if err := b.resumeBuild(ctx, n, conc, e.Dir, e); err != nil {
		_ = e.Close()
		return fmt.Errorf("build on S3: %w", err)
	}
	if err := e.Close(); err != nil {
		return err
	}
	localJournal, err := os.ReadFile(filepath.Join(localDir, journal.FileName))
	if err != nil {
		return err
	}

	var s3S, localS, downloadS []float64
	for rep := range b.cfg.Reps {
		b.logf("storage resume: repetition %d of %d", rep+1, b.cfg.Reps)
		d, err := b.resumeOnce(ctx, n, conc, localDir, nil)
		if err != nil {
			return fmt.Errorf("resume from local disk: %w", err)
		}
		localS = append(localS, d.Seconds())

		cache := filepath.Join(dir, fmt.Sprintf("cache-%d", rep))
		start := time.Now()
		e, err := remote.Open(ctx, u, cache)
		if err != nil {
			return err
		}
		if _, err := e.Restore(ctx, false); err != nil {
			_ = e.Close()
			return err
		}
		_, err = b.resumeOnce(ctx, n, conc, e.Dir, e)
		total := time.Since(start)
		if cerr := e.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("resume from S3: %w", err)
		}
		s3S = append(s3S, total.Seconds())
		restored, err := os.ReadFile(filepath.Join(e.Dir, journal.FileName))
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(restored, localJournal[:bytes.IndexByte(localJournal, '\n')+1]) || len(restored) < len(localJournal)/2 {
			return fmt.Errorf("the journal restored from S3 (%d bytes) does not look like the experiment's (%d bytes on local disk)", len(restored), len(localJournal))
		}
		// The floor: the journal's segments downloaded with the same SDK.
		start = time.Now()
		st, err := r.openStore(ctx, "resume/exp")
		if err != nil {
			return err
		}
		if _, err := st.DownloadJournal(ctx, filepath.Join(dir, fmt.Sprintf("journal-%d", rep))); err != nil {
			_ = st.Close()
			return err
		}
		downloadS = append(downloadS, time.Since(start).Seconds())
		if err := st.Close(); err != nil {
			return err
		}
	}
	b.add(Row{
		Shape: ShapeStorage, Name: fmt.Sprintf("resume of a finished %d-trial experiment from s3:// into an empty cache", n), Unit: "s",
		Value: median(s3S), Samples: s3S,
		BaseName: "the same resume from local disk", Base: median(localS), BaseSamples: localS,
		Target:   atMost("≤ 3× local", 3*median(localS)),
		Observed: int64(n), Expected: int64(n),
		Notes: []string{fmt.Sprintf("the S3 figure is the whole of hone resume URL: open and check the store, restore (journal segments, spec, no file of a finished trial), "+
			"runner.Resume, the last sync; downloading the journal's segments alone takes %s s", formatNum(median(downloadS)))},
	})
	return nil
}

// resumeBuild runs the finished sim experiment of n trials, with their
// result files, in expDir, mirrored to S3 when e is set.
func (b *bench) resumeBuild(ctx context.Context, n, conc int, expDir string, e *remote.Experiment) error {
	exp, err := simExperiment("resume", n, conc, nil, callback.NewTrialFiles(expDir))
	if err != nil {
		return err
	}
	opts, err := runOpts(expDir, sim.New(sim.Curve{MaxIterations: 1}.New), conc, false)
	if err != nil {
		return err
	}
	opts.Log = io.Discard
	if e != nil {
		if err := e.Start(ctx, &opts, b.logf); err != nil {
			return err
		}
	}
	out, err := runner.Run(ctx, exp, opts)
	if e != nil {
		if ferr := e.Finish(ctx); err == nil {
			err = ferr
		}
	}
	if err != nil {
		return err
	}
	return allTerminated(out)
}

// resumeOnce resumes the finished experiment in expDir (the working copy
// of e when set) and checks that every trial came back finished.
func (b *bench) resumeOnce(ctx context.Context, n, conc int, expDir string, e *remote.Experiment) (time.Duration, error) {
	exp, err := simExperiment("resume", n, conc, nil, callback.NewTrialFiles(expDir))
	if err != nil {
		return 0, err
	}
	opts, err := runOpts(expDir, sim.New(sim.Curve{MaxIterations: 1}.New), conc, false)
	if err != nil {
		return 0, err
	}
	opts.Log = io.Discard
	start := time.Now()
	if e != nil {
		if err := e.Start(ctx, &opts, b.logf); err != nil {
			return 0, err
		}
	}
	out, err := runner.Resume(ctx, exp, opts, hone.ResumeFlags{Unfinished: true})
	if e != nil {
		if ferr := e.Finish(ctx); err == nil {
			err = ferr
		}
	}
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if len(out.Trials) != n {
		return 0, fmt.Errorf("resume brought back %d trials, want %d", len(out.Trials), n)
	}
	return d, allTerminated(out)
}

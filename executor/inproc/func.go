package inproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/trial"
)

// funcBody runs a function-style trainable on r's goroutine.
func funcBody(ctx context.Context, fn trial.Func, r *run) error {
	s := &session{r: r, cfg: r.spec.Config.Clone()}
	if err := trial.Guard(func() error { return fn(ctx, s) }); err != nil {
		return fmt.Errorf("trial function: %w", err)
	}
	return nil
}

// session implements trial.Session for one run of a function trainable.
type session struct {
	r   *run
	cfg hone.Config

	mu sync.Mutex // serialises Report
}

func (s *session) Config() hone.Config         { return s.cfg }
func (s *session) TrialID() string             { return s.r.spec.TrialID }
func (s *session) Dir() string                 { return s.r.dir() }
func (s *session) Checkpoint() string          { return s.r.spec.RestoreDir }
func (s *session) Iteration() int              { return s.r.spec.Iteration }
func (s *session) StagingDir() (string, error) { return s.r.stager.New() }

func (s *session) Report(m trial.Metrics, opts ...trial.ReportOption) error {
	o := trial.CollectReportOptions(opts...)
	ev := hone.Event{Kind: hone.EventResult, Metrics: m, Done: o.Done || trial.IsDone(m)}
	if o.Checkpoint != "" {
		dir, err := checkpointDir(o.Checkpoint)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		ev.CheckpointDir = dir
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r.exchange(ev, nil) == hone.DirectStop {
		return hone.ErrTrialStopped
	}
	return nil
}

// checkpointDir returns the absolute form of a reported checkpoint
// directory after checking that it is one.
func checkpointDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	if !fi.IsDir() {
		return "", errors.New("checkpoint " + abs + ": not a directory")
	}
	return abs, nil
}

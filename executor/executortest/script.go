package executortest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/trial"
)

// Script is the behaviour of every trial of an executor under test. It is
// plain data (JSON-able) so that an executor running trials elsewhere, such
// as in a subprocess, can hand it to its trainable.
//
// A scripted trial keeps one number, its count of reports so far (restored
// from the checkpoint it starts from, else 0). For n = count+1 up to
// Reports it does, in this order: fail if n == FailAtReport, panic if
// n == PanicAtReport, compute until stopped if n == BlockAtReport;
// otherwise it reports the metric "count" = n, with a checkpoint if
// CheckpointEvery > 0 divides n, and done on n == Reports. Checkpoints hold
// the count. A zero field disables its behaviour.
type Script struct {
	// Reports is the number of the last report, counting those before the
	// restored checkpoint.
	Reports int `json:"reports"`
	// CheckpointEvery makes every CheckpointEvery-th result carry a
	// checkpoint (a function trainable reports one; a class trainable
	// asks for a save with "should_checkpoint").
	CheckpointEvery int `json:"checkpoint_every,omitempty"`
	// FailAtReport makes the trial return an error instead of this report.
	FailAtReport int `json:"fail_at_report,omitempty"`
	// PanicAtReport makes the trial panic instead of this report.
	PanicAtReport int `json:"panic_at_report,omitempty"`
	// BlockAtReport makes the trial compute this report until it is
	// stopped (in virtual time: for a very long time).
	BlockAtReport int `json:"block_at_report,omitempty"`
}

// MetricCount is the metric a scripted trial reports: the report's number,
// from 1.
const MetricCount = "count"

// CountFile is the file in a scripted trial's checkpoint that holds its
// count, in decimal.
const CountFile = "count"

// ErrScripted is the error a scripted trial fails with at FailAtReport.
var ErrScripted = errors.New("executortest: scripted failure")

// CheckpointAt reports whether report n carries a checkpoint.
func (s Script) CheckpointAt(n int) bool { return s.CheckpointEvery > 0 && n%s.CheckpointEvery == 0 }

// act carries out what the script says happens at report n in place of the
// report, if anything; ctx ends a blocked computation.
func (s Script) act(ctx context.Context, n int) error {
	switch {
	case n == s.FailAtReport:
		return fmt.Errorf("report %d: %w", n, ErrScripted)
	case n == s.PanicAtReport:
		panic(fmt.Sprintf("executortest: scripted panic at report %d", n))
	case n == s.BlockAtReport:
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

// WriteCount writes a scripted trial's checkpoint holding n into dir.
func WriteCount(dir string, n int) error {
	if err := os.WriteFile(filepath.Join(dir, CountFile), []byte(strconv.Itoa(n)), 0o644); err != nil {
		return fmt.Errorf("write count: %w", err)
	}
	return nil
}

// ReadCount reads the count from a scripted trial's checkpoint directory;
// dir "" means no checkpoint, count 0.
func ReadCount(dir string) (int, error) {
	if dir == "" {
		return 0, nil
	}
	b, err := os.ReadFile(filepath.Join(dir, CountFile))
	if err != nil {
		return 0, fmt.Errorf("read count: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("read count: %w", err)
	}
	return n, nil
}

// Func returns a function-style trainable that follows s. It also fails if
// Session.Iteration disagrees with the count in the restored checkpoint.
func Func(s Script) trial.Func {
	return func(ctx context.Context, sess trial.Session) error {
		n, err := ReadCount(sess.Checkpoint())
		if err != nil {
			return err
		}
		if it := sess.Iteration(); it != n {
			return fmt.Errorf("session iteration %d, but the checkpoint holds count %d", it, n)
		}
		for n < s.Reports {
			n++
			if err := s.act(ctx, n); err != nil {
				return err
			}
			var opts []trial.ReportOption
			if s.CheckpointAt(n) {
				dir, err := sess.StagingDir()
				if err != nil {
					return err
				}
				if err := WriteCount(dir, n); err != nil {
					return err
				}
				opts = append(opts, trial.WithCheckpoint(dir))
			}
			if n == s.Reports {
				opts = append(opts, trial.Done())
			}
			if err := sess.Report(trial.Metrics{MetricCount: n}, opts...); err != nil {
				return err
			}
		}
		return nil
	}
}

// Class returns a factory of class-style trainables that follow s.
func Class(s Script) func() trial.Trainable {
	return func() trial.Trainable { return &scripted{s: s} }
}

// scripted is the class-style trainable of Class.
type scripted struct {
	s Script
	n int
}

func (c *scripted) Setup(hone.Config) error { return nil }

func (c *scripted) Load(dir string) (err error) {
	c.n, err = ReadCount(dir)
	return err
}

func (c *scripted) Save(dir string) error { return WriteCount(dir, c.n) }

func (c *scripted) Step(ctx context.Context) (trial.Metrics, error) {
	c.n++
	if err := c.s.act(ctx, c.n); err != nil {
		return nil, err
	}
	m := trial.Metrics{MetricCount: c.n}
	if c.s.CheckpointAt(c.n) {
		m[trial.MetricShouldCheckpoint] = true
	}
	if c.n >= c.s.Reports {
		m[trial.MetricDone] = true
	}
	return m, nil
}

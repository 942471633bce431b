package inproc

import (
	"context"
	"errors"
	"fmt"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/trial"
)

// classBody drives a class-style trainable on r's goroutine.
func classBody(ctx context.Context, factory func() trial.Trainable, r *run) error {
	var t trial.Trainable
	err := trial.Guard(func() error {
		if t = factory(); t == nil {
			return errors.New("factory returned nil")
		}
		return t.Setup(r.spec.Config.Clone())
	})
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	if dir := r.spec.RestoreDir; dir != "" {
		if err := trial.Guard(func() error { return t.Load(dir) }); err != nil {
			return fmt.Errorf("load checkpoint %s: %w", dir, err)
		}
	}
	save := func() (string, error) {
		dir, err := r.stager.New()
		if err != nil {
			return "", err
		}
		if err := trial.Guard(func() error { return t.Save(dir) }); err != nil {
			discard([]string{dir})
			return "", fmt.Errorf("save: %w", err)
		}
		return dir, nil
	}
	for ctx.Err() == nil {
		var m trial.Metrics
		err := trial.Guard(func() (err error) {
			m, err = t.Step(ctx)
			return err
		})
		if err != nil {
			return fmt.Errorf("step: %w", err)
		}
		ev := hone.Event{Kind: hone.EventResult, Metrics: m, Done: trial.IsDone(m)}
		if c, _ := m[trial.MetricShouldCheckpoint].(bool); c {
			delete(m, trial.MetricShouldCheckpoint)
			if ev.CheckpointDir, err = save(); err != nil {
				return fmt.Errorf("checkpoint after step: %w", err)
			}
		}
		if r.exchange(ev, save) == hone.DirectStop || ev.Done {
			return nil
		}
	}
	return nil
}

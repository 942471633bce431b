package controller

import (
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/space"
)

// finished returns a controller whose n trials have each reported one
// done result and exited, and an experiment builder for restoring it.
func finished(b testing.TB, n int) (*Controller, func() *hone.Experiment) {
	b.Helper()
	mk := func() *hone.Experiment {
		sp, err := space.ParseYAML([]byte("lr: {loguniform: [0.001, 1.0]}\nlayers: {randint: [1, 6]}\n"))
		if err != nil {
			b.Fatal(err)
		}
		s, err := random.New(sp, n, nil, 1)
		if err != nil {
			b.Fatal(err)
		}
		return &hone.Experiment{Searcher: s, Metric: "loss", Mode: hone.Min, Seed: 1}
	}
	c, err := New(mk(), hone.Resources{CPU: 8})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	c.Step(hone.Event{Kind: hone.EventBegin, Time: now})
	c.Ready()
	for !c.Done() {
		for _, t := range c.Trials() {
			if t.Status != hone.StatusRunning {
				continue
			}
			now += int64(time.Millisecond)
			c.Step(hone.Event{Kind: hone.EventResult, TrialID: t.ID, Time: now, Metrics: map[string]any{"loss": 0.5}, Done: true})
			c.Ready()
			c.Step(hone.Event{Kind: hone.EventExited, TrialID: t.ID, Time: now})
			c.Ready()
		}
	}
	return c, mk
}

// BenchmarkSnapshot measures both forms of the snapshot, MarshalState and
// Restore (JSON), MarshalBinaryState and RestoreBinary, of a finished
// experiment of 10,000 trials.
func BenchmarkSnapshot(b *testing.B) { benchSnapshot(b, 10000) }

// BenchmarkSnapshot100k is BenchmarkSnapshot at 100,000 trials (not with
// -short).
func BenchmarkSnapshot100k(b *testing.B) {
	if testing.Short() {
		b.Skip("100,000 trials")
	}
	benchSnapshot(b, 100000)
}

func benchSnapshot(b *testing.B, n int) {
	c, mk := finished(b, n)
	data, err := c.MarshalState()
	if err != nil {
		b.Fatal(err)
	}
	bin, err := c.MarshalBinaryState()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("marshal", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := c.MarshalState(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("restore", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			b.StopTimer()
			exp := mk()
			b.StartTimer()
			if _, err := Restore(exp, hone.Resources{CPU: 8}, data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("marshal_binary", func(b *testing.B) {
		b.SetBytes(int64(len(bin)))
		for b.Loop() {
			if _, err := c.MarshalBinaryState(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("restore_binary", func(b *testing.B) {
		b.SetBytes(int64(len(bin)))
		for b.Loop() {
			b.StopTimer()
			exp := mk()
			b.StartTimer()
			if _, err := RestoreBinary(exp, hone.Resources{CPU: 8}, bin); err != nil {
				b.Fatal(err)
			}
		}
	})
}

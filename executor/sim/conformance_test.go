package sim_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/executortest"
	"github.com/hone-tune/hone/executor/sim"
)

// scripted is a sim.Trainable that follows an executortest.Script. A
// blocked report is a step of a thousand hours.
type scripted struct {
	s executortest.Script
	n int
}

func scriptModel(s executortest.Script) sim.Model {
	return func(hone.Config, string) (sim.Trainable, error) { return &scripted{s: s}, nil }
}

func (c *scripted) Step() (sim.Step, error) {
	c.n++
	st := sim.Step{
		Metrics:    map[string]any{executortest.MetricCount: c.n},
		Duration:   time.Second,
		Done:       c.n >= c.s.Reports,
		Checkpoint: c.s.CheckpointAt(c.n),
	}
	switch c.n {
	case c.s.FailAtReport:
		return sim.Step{}, fmt.Errorf("report %d: %w", c.n, executortest.ErrScripted)
	case c.s.PanicAtReport:
		panic(fmt.Sprintf("scripted panic at report %d", c.n))
	case c.s.BlockAtReport:
		st.Duration = 1000 * time.Hour
	}
	return st, nil
}

func (c *scripted) Save() ([]byte, error) { return strconv.AppendInt(nil, int64(c.n), 10), nil }

func (c *scripted) Load(state []byte) (err error) {
	c.n, err = strconv.Atoi(string(state))
	return err
}

func TestConformance(t *testing.T) {
	executortest.Run(t, executortest.Harness{
		New: func(t *testing.T, s executortest.Script) hone.Executor {
			return sim.New(scriptModel(s), sim.WithStartDuration(time.Minute), sim.WithSaveDuration(10*time.Second))
		},
		SaveOnDemand: true,
		VirtualTime:  true,
	})
}

func TestConformanceCannotSaveOnDemand(t *testing.T) {
	executortest.Run(t, executortest.Harness{
		New: func(t *testing.T, s executortest.Script) hone.Executor {
			return sim.New(scriptModel(s), sim.CannotSaveOnDemand())
		},
		VirtualTime: true,
	})
}

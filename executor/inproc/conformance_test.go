package inproc_test

import (
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/executortest"
	"github.com/hone-tune/hone/executor/inproc"
)

func TestConformanceFunc(t *testing.T) {
	executortest.Run(t, executortest.Harness{
		New: func(t *testing.T, s executortest.Script) hone.Executor {
			return inproc.NewFunc(executortest.Func(s))
		},
	})
}

func TestConformanceClass(t *testing.T) {
	executortest.Run(t, executortest.Harness{
		New: func(t *testing.T, s executortest.Script) hone.Executor {
			return inproc.NewClass(executortest.Class(s))
		},
		SaveOnDemand: true,
	})
}

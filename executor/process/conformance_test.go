package process_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/executortest"
	"github.com/hone-tune/hone/executor/process"
)

// scriptedExecutor returns an executor whose trials run the scripted
// program in mode ("func" or "class") following s.
func scriptedExecutor(t *testing.T, mode string, s executortest.Script) *process.Executor {
	t.Helper()
	return scriptedWith(t, mode, s, process.Options{})
}

// scriptedWith is scriptedExecutor with the transport and launcher of o.
func scriptedWith(t *testing.T, mode string, s executortest.Script, o process.Options) *process.Executor {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := process.New(process.Options{
		Command:   []string{scripted, mode},
		Env:       append(testEnv(), "HONE_TEST_SCRIPT="+string(b)),
		StopGrace: 5 * time.Second,
		Listen:    o.Listen,
		Launch:    o.Launch,
	})
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

func TestConformanceFunc(t *testing.T) {
	executortest.Run(t, executortest.Harness{
		New: func(t *testing.T, s executortest.Script) hone.Executor {
			return scriptedExecutor(t, "func", s)
		},
	})
}

func TestConformanceClass(t *testing.T) {
	executortest.Run(t, executortest.Harness{
		New: func(t *testing.T, s executortest.Script) hone.Executor {
			return scriptedExecutor(t, "class", s)
		},
		SaveOnDemand: true,
	})
}

// The same suite with the trials connecting over TCP, as trials on other
// machines do.
func TestConformanceTCP(t *testing.T) {
	for _, mode := range []string{"func", "class"} {
		t.Run(mode, func(t *testing.T) {
			executortest.Run(t, executortest.Harness{
				New: func(t *testing.T, s executortest.Script) hone.Executor {
					return scriptedWith(t, mode, s, process.Options{Listen: "127.0.0.1:0"})
				},
				SaveOnDemand: mode == "class",
			})
		})
	}
}

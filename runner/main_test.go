package runner_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(killChildEnv); spec != "" {
		runKillChild(spec) // the first process of TestKillKeepsResultRows
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

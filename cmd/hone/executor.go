package main

import (
	"context"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/spec"
)

// newSpecExecutor makes the executor the spec names (executor:, default
// local processes) for the plan's trials.
func newSpecExecutor(p spec.Process) (hone.Executor, error) {
	return p.NewExecutor(context.Background())
}

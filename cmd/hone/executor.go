package main

import (
	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/process"
	"github.com/hone-tune/hone/spec"
)

// newProcessExecutor runs each trial as a process of the spec's command.
func newProcessExecutor(p spec.Process) (hone.Executor, error) {
	return process.New(process.Options{
		Command:   p.Command,
		Env:       p.Env,
		Dir:       p.Dir,
		StopGrace: p.StopGrace,
		GPUs:      p.GPUs,
	})
}

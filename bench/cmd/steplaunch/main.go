// Command steplaunch is the part of perfbench's cluster/launch shape that
// runs inside a Slurm allocation: perfbench builds it and starts it under
// salloc (or directly, when perfbench itself runs inside an allocation).
// It measures step mode's trial launches through the slurm executor
// against srun by hand, taking turns, and the CPU of idle sruns, and
// prints one JSON line per measurement. See package perf (bench/perf),
// StepLaunchMain.
//
// Usage, inside an allocation:
//
//	steplaunch -trial PROCTRIAL -dir DIR [-trials 30] [-concurrency 1,4] [-reps 5] [-mem 100]
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/hone-tune/hone/bench/perf"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := perf.StepLaunchMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

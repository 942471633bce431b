// Command procbench is the subprocess benchmark of docs/BENCHMARKS.md §1: trial
// launches per second and results per second through hone's process
// executor and runner, for a Go trial and (if python3 is installed) a
// Python one, each beside fork+exec of /bin/true or a pipe round trip with
// a JSON decode measured in the same run.
//
// Usage, from the bench module:
//
//	go run ./process/cmd/procbench            # full run, several minutes
//	go run ./process/cmd/procbench -smoke     # tiny sizes, a few seconds
//
// See package process (bench/process) for what is measured and how.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/hone-tune/hone/bench/process"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := process.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

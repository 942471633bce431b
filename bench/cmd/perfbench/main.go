// Command perfbench is the control-plane performance suite of
// docs/BENCHMARKS.md §1: bookkeeping, result throughput, checkpoint
// I/O, journal, memory, frequent pausing and the process executor's
// overhead on one-second trials (the overhead shape), each measured through hone
// beside a physical baseline in the same run, with the ratio, its
// target and Ray Tune's published bar, and a markdown table at the end;
// plus throughput against the number of trials (the scaling shape), and
// two plots of it and of checkpoint I/O written to -plots (default
// results, i.e. bench/results when run from the bench module).
//
// Usage, from the bench module:
//
//	go run ./cmd/perfbench                          # full run
//	go run ./cmd/perfbench -smoke                   # tiny sizes, seconds
//	go run ./cmd/perfbench -only results/inproc-fifo -cpuprofile /tmp/cpu
//	go run ./cmd/perfbench -only overhead -plots "" # about 4 to 5 minutes
//	go run ./cmd/perfbench -only storage            # object storage, on $HONE_TEST_S3_URL
//	go run ./cmd/perfbench -only cluster/tcp,cluster/cpu  # no Slurm needed
//
// The storage shape needs an S3 server; from the repository root,
//
//	bash -c '. scripts/s3server.sh && hone_s3_start && cd bench && go run ./cmd/perfbench -only storage'
//
// builds one (once per machine), starts it for the run and stops it after.
//
// The cluster shape's launch and poll parts need a Slurm cluster; from the
// repository root,
//
//	bash scripts/with-slurm.sh sh -c 'cd bench && go run ./cmd/perfbench -only cluster -plots ""'
//
// starts the two-node test cluster, runs the whole shape and stops it.
//
// See package perf (bench/perf) for what is measured and how.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/hone-tune/hone/bench/perf"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := perf.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

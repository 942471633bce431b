package perf

import (
	"context"
	"fmt"
	"strconv"

	"github.com/hone-tune/hone/bench/process"
)

// clusterTCP measures results per second of subprocess trials reporting
// as fast as hone answers over the executor's TCP server, against the
// same over their Unix sockets, the two taking turns (which goes first
// alternates between repetitions).
func (b *bench) clusterTCP(ctx context.Context) error {
	bin, err := b.helper(ctx, "./process/cmd/proctrial")
	if err != nil {
		return err
	}
	c := b.cfg.Cluster
	argv := []string{bin, "report", strconv.Itoa(c.TCPResults)}
	for _, k := range c.TCPConcurrency {
		var overTCP, overUnix []float64
		for rep := range c.TCPReps {
			b.logf("cluster/tcp: repetition %d of %d: %d trials × %d results over TCP and over Unix sockets", rep+1, c.TCPReps, k, c.TCPResults)
			dir, err := b.freshDir("tcp")
			if err != nil {
				return err
			}
			run := func(listen string) (float64, error) {
				name := fmt.Sprintf("cluster-tcp-%d", k)
				if listen == "" {
					name = fmt.Sprintf("cluster-unix-%d", k)
				}
				var rate float64
				err := b.prof.profiled(name, rep == 0, func() error {
					var err error
					rate, err = process.HoneResults(ctx, dir, argv, k, c.TCPResults, listen)
					return err
				})
				return rate, err
			}
			order := []string{"", "127.0.0.1:0"}
			if rep%2 == 1 {
				order[0], order[1] = order[1], order[0]
			}
			for _, listen := range order {
				rate, err := run(listen)
				if err != nil {
					return err
				}
				if listen == "" {
					overUnix = append(overUnix, rate)
				} else {
					overTCP = append(overTCP, rate)
				}
			}
			if err := removeDir(dir); err != nil {
				return err
			}
		}
		b.add(Row{
			Shape: ShapeCluster,
			Name: fmt.Sprintf("results over TCP (process.Options.Listen 127.0.0.1:0), %d subprocess trials each reporting %d results as fast as hone answers",
				k, c.TCPResults),
			Unit:  "results/s",
			Value: median(overTCP), Samples: overTCP,
			BaseName: "the same over the trials' Unix sockets (no Listen), taking turns",
			Base:     median(overUnix), BaseSamples: overUnix,
			Higher: true,
			Target: ratioAtLeast("≥ 0.8 of the Unix socket", 0.8),
			Notes: []string{
				"median of the paired ratios (each TCP run beside the Unix-socket run next to it): " + formatRatio(median(pairedRatios(overTCP, overUnix))),
				"each run: runner.Run, random search, FIFO, a local store without fsync, the per-trial files; the trial program is " +
					"bench/process's proctrial (package trial), every result checked to reach hone; every trial ends TERMINATED",
			},
		})
	}
	return nil
}

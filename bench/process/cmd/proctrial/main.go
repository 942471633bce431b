// Command proctrial is the Go trial program of procbench. procbench builds
// it with go build and runs it in two ways:
//
//	proctrial report N   a trial (trial.Main) that reports N results as fast
//	                     as hone answers them, the last one with done, and
//	                     exits; run by hand it prints them as HONE_REPORT
//	                     lines instead
//	proctrial echo       copy standard input to standard output line by
//	                     line, one write per line: the far end of the pipe
//	                     round-trip baseline
//	proctrial sleep D    a trial (trial.Main) that sleeps for the duration
//	                     D (e.g. 1s), then reports one result with done and
//	                     exits: the one-second trial of perfbench's
//	                     overhead shape, run both through hone and by hand
package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/hone-tune/hone/trial"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "report":
		if len(os.Args) != 3 {
			usage()
		}
		n, err := strconv.Atoi(os.Args[2])
		if err != nil || n < 1 {
			usage()
		}
		trial.Main(func(ctx context.Context, s trial.Session) error {
			return report(s, n)
		})
	case "sleep":
		if len(os.Args) != 3 {
			usage()
		}
		d, err := time.ParseDuration(os.Args[2])
		if err != nil || d < 0 {
			usage()
		}
		trial.Main(func(ctx context.Context, s trial.Session) error {
			return sleepReport(ctx, s, d)
		})
	case "echo":
		if err := echo(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "proctrial echo:", err)
			os.Exit(1)
		}
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: proctrial report N | proctrial echo | proctrial sleep DURATION")
	os.Exit(2)
}

// report sends n results, the last one marked done.
func report(s trial.Session, n int) error {
	for i := 1; i <= n; i++ {
		m := trial.Metrics{"loss": 1 / float64(i), "step": i}
		var opts []trial.ReportOption
		if i == n {
			opts = append(opts, trial.Done())
		}
		if err := s.Report(m, opts...); err != nil {
			return err
		}
	}
	return nil
}

// sleepReport sleeps for d (or until ctx ends), then sends one result
// marked done.
func sleepReport(ctx context.Context, s trial.Session, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return fmt.Errorf("sleep: %w", ctx.Err())
	}
	return s.Report(trial.Metrics{"loss": 1.0, "slept_s": d.Seconds()}, trial.Done())
}

// echo writes every line read from r to w at once, until r ends.
func echo(r io.Reader, w io.Writer) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			if _, werr := w.Write(line); werr != nil {
				return werr
			}
		}
		switch {
		case err == io.EOF:
			return nil
		case err == bufio.ErrBufferFull:
			continue
		case err != nil:
			return err
		}
	}
}

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
package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"

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
	fmt.Fprintln(os.Stderr, "usage: proctrial report N | proctrial echo")
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

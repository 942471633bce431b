package process

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hone-tune/hone/wire"
)

// trueBin is the program of the fork+exec baseline.
const trueBin = "/bin/true"

// childEnv is this process's environment without the HONE_* variables, so
// that a trial program run by hand never mistakes it for hone's.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HONE_") {
			env = append(env, kv)
		}
	}
	return env
}

// forkExec runs argv n times, par at a time, each run started and waited
// for with os/exec (as hone's process executor does), its output
// discarded, and returns runs per second. Every run must exit with status
// 0.
func forkExec(ctx context.Context, argv []string, n, par int) (float64, error) {
	return forkExecEach(ctx, argv, n, par, nil)
}

// forkExecEach is forkExec calling before (if not nil) before each run.
func forkExecEach(ctx context.Context, argv []string, n, par int, before func() error) (float64, error) {
	env := childEnv()
	var next atomic.Int64
	errs := make([]error, par)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range par {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if before != nil {
					if err := before(); err != nil {
						errs[w] = err
						return
					}
				}
				cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
				cmd.Env = env
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Run(); err != nil {
					errs[w] = fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, bytes.TrimSpace(stderr.Bytes()))
					return
				}
			}
		})
	}
	wg.Wait()
	rate := elapsedRate(n, start)
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return rate, nil
}

// forkExecWithFiles is forkExec with, before each run, the filesystem
// entries hone's process executor and per-trial files make for a trial,
// in a directory of their own under dir: the trial and staging
// directories, a Unix socket (in a short private directory, as hone's
// are), the two logs, params.json written to a temporary name and
// renamed, result.json, and progress.csv likewise. They are made one trial
// at a time, as hone's single control loop makes them, while the runs go
// on par at a time.
func forkExecWithFiles(ctx context.Context, argv []string, n, par int, dir string) (float64, error) {
	sockDir, err := os.MkdirTemp("/tmp", "hb-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(sockDir)
	var mu sync.Mutex
	var seq int
	files := func() error {
		mu.Lock()
		defer mu.Unlock()
		seq++
		name := strconv.Itoa(seq)
		return trialEntries(filepath.Join(dir, "t"+name), filepath.Join(sockDir, name))
	}
	return forkExecEach(ctx, argv, n, par, files)
}

// trialEntries makes in td, and at sock, what hone makes for one trial
// start.
func trialEntries(td, sock string) error {
	if err := os.MkdirAll(filepath.Join(td, ".staging"), 0o755); err != nil {
		return err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return err
	}
	ln.Close() // removes the socket, as hone does when the trial ends
	for _, name := range []string{"stdout.log", "stderr.log", "result.json"} {
		f, err := os.OpenFile(filepath.Join(td, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		f.Close()
	}
	for _, name := range []string{"params.json", "progress.csv"} {
		tmp := filepath.Join(td, "."+name+".tmp")
		if err := os.WriteFile(tmp, []byte("{}\n"), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(td, name)); err != nil {
			return err
		}
	}
	return nil
}

// reportLine returns the line a Go trial sends for a result, as the
// trial package encodes it.
func reportLine() ([]byte, error) {
	return wire.Encode(wire.Message{Type: wire.TypeReport, Metrics: map[string]any{"loss": 0.000731, "step": 1368}})
}

// pipeRoundTrips starts children processes running argv, which echo lines
// on their standard output, and from one goroutine per child sends line
// perChild times, each time reading the echo back and decoding it with
// wire.Decode. It returns round trips per second over the whole run,
// starting the children included.
func pipeRoundTrips(ctx context.Context, argv []string, line []byte, perChild, children int) (float64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	env := childEnv()
	errs := make([]error, children)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range children {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = env
		stderr := new(bytes.Buffer)
		cmd.Stderr = stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			cancel()
			wg.Wait()
			return 0, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			cancel()
			wg.Wait()
			return 0, err
		}
		if err := cmd.Start(); err != nil {
			cancel()
			wg.Wait()
			return 0, fmt.Errorf("start %s: %w", argv[0], err)
		}
		wg.Go(func() {
			err := roundTrips(in, out, line, perChild)
			in.Close()
			if err != nil {
				cancel() // a broken child must not leave the others waiting
			}
			werr := cmd.Wait()
			if err == nil && werr != nil {
				err = werr
			}
			if err != nil {
				errs[c] = fmt.Errorf("echo child %d: %w: %s", c, err, bytes.TrimSpace(stderr.Bytes()))
			}
		})
	}
	wg.Wait()
	rate := elapsedRate(children*perChild, start)
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return rate, nil
}

// roundTrips writes line to w n times, each time reading a line back from
// r and decoding it.
func roundTrips(w io.Writer, r io.Reader, line []byte, n int) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for range n {
		if _, err := w.Write(line); err != nil {
			return err
		}
		got, err := br.ReadSlice('\n')
		if err != nil {
			return fmt.Errorf("read the echo: %w", err)
		}
		m, err := wire.Decode(got)
		if err != nil {
			return err
		}
		if m.Type != wire.TypeReport || len(m.Metrics) != 2 {
			return fmt.Errorf("echo decoded to a %s message with %d metrics", m.Type, len(m.Metrics))
		}
	}
	return nil
}

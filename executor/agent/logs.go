package agent

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"
)

// DefaultLogEvery is how often the agent uploads a batch job's logs while
// the trial runs.
const DefaultLogEvery = 10 * time.Second

// The trial's log files, as in every trial directory.
const (
	stdoutLog = "stdout.log"
	stderrLog = "stderr.log"
)

// logShipper keeps the node's copies of the trial's logs and uploads them
// to the trial's directory in the store when they changed.
type logShipper struct {
	a              *agent
	stdout, stderr *logFile
	stop           chan struct{}
	wg             sync.WaitGroup
	once           sync.Once
}

// logFile is one log: appended to by the trial's output, uploaded whole.
type logFile struct {
	mu      sync.Mutex
	f       *os.File
	name    string // in the trial's directory
	changed bool
	also    io.Writer // the agent's own stream
}

func (l *logFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.f.Write(p)
	if n > 0 {
		l.changed = true
	}
	if l.also != nil {
		_, _ = l.also.Write(p[:n])
	}
	return n, err
}

// startLogs fetches what earlier runs of the trial logged (the logs go
// on from there, as a local trial's do) and starts the uploads.
func (a *agent) startLogs(ctx context.Context) (*logShipper, error) {
	s := &logShipper{a: a, stop: make(chan struct{})}
	var keys []string
	for _, n := range []string{stdoutLog, stderrLog} {
		keys = append(keys, path.Join(a.storeDir, n))
	}
	// DownloadObjects writes under dir by key: the trial's local
	// directory is <cache>/trials/<id>/<storeDir>, so dir is its root.
	root := a.local
	for range splitPath(a.storeDir) {
		root = filepath.Dir(root)
	}
	if _, err := a.store.DownloadObjects(ctx, root, keys); err != nil {
		return nil, fmt.Errorf("fetch the trial's logs: %w", err)
	}
	open := func(name string, also io.Writer) (*logFile, error) {
		f, err := os.OpenFile(filepath.Join(a.local, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("open the node's copy of %s: %w", name, err)
		}
		return &logFile{f: f, name: name, also: also}, nil
	}
	var err error
	if s.stdout, err = open(stdoutLog, a.o.Stdout); err != nil {
		return nil, err
	}
	if s.stderr, err = open(stderrLog, a.o.Stderr); err != nil {
		s.stdout.f.Close()
		return nil, err
	}
	every := a.o.LogEvery
	if every <= 0 {
		every = DefaultLogEvery
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.upload(ctx)
			case <-s.stop:
				return
			}
		}
	}()
	return s, nil
}

// splitPath returns the elements of a slash-separated path.
func splitPath(p string) []string {
	var out []string
	for p != "." && p != "/" && p != "" {
		out = append(out, path.Base(p))
		p = path.Dir(p)
	}
	return out
}

// upload sends the logs that changed since the last upload.
func (s *logShipper) upload(ctx context.Context) {
	for _, l := range []*logFile{s.stdout, s.stderr} {
		l.mu.Lock()
		changed := l.changed
		l.changed = false
		l.mu.Unlock()
		if !changed {
			continue
		}
		if err := s.a.store.PutFile(ctx, path.Join(s.a.storeDir, l.name), l.f.Name()); err != nil {
			l.mu.Lock()
			l.changed = true // again at the next upload
			l.mu.Unlock()
			fmt.Fprintf(s.a.o.Stderr, "hone agent: %v\n", err) // not into the log being uploaded
		}
	}
}

// shipLogs uploads the logs a last time, once the trial has ended.
func (a *agent) shipLogs(ctx context.Context) {
	s := a.logs
	if s == nil {
		return
	}
	s.once.Do(func() {
		close(s.stop)
		s.wg.Wait()
		s.upload(ctx)
	})
}

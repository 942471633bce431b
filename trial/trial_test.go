package trial_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hone-tune/hone/trial"
)

func TestStager(t *testing.T) {
	dir := t.TempDir()
	// A directory left by an earlier run is skipped, not reused.
	if err := os.MkdirAll(filepath.Join(dir, trial.StagingDirName, "1"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := trial.NewStager(dir)
	var got []string
	for range 3 {
		d, err := s.New()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, filepath.Base(d))
		if entries, err := os.ReadDir(d); err != nil || len(entries) != 0 {
			t.Errorf("staging dir %s: %d entries, err %v; want empty", d, len(entries), err)
		}
	}
	if want := "0 2 3"; strings.Join(got, " ") != want {
		t.Errorf("staging dirs %v, want %s", got, want)
	}
	// Another Stager of the same trial, as after a restart, never hands
	// out a directory that exists.
	d, err := trial.NewStager(dir).New()
	if err != nil || filepath.Base(d) != "4" {
		t.Errorf("new stager: %s, %v; want .../4", d, err)
	}
}

func TestStagerConcurrent(t *testing.T) {
	s := trial.NewStager(t.TempDir())
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10 {
				d, err := s.New()
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seen[d] {
					t.Errorf("%s handed out twice", d)
				}
				seen[d] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != 80 {
		t.Errorf("%d directories, want 80", len(seen))
	}
}

func TestStagerErrors(t *testing.T) {
	if _, err := trial.NewStager("").New(); err == nil {
		t.Error("stager without a trial directory succeeded")
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := trial.NewStager(file).New(); err == nil || !strings.HasPrefix(err.Error(), "staging dir: ") {
		t.Errorf("stager under a file: %v, want a staging dir error", err)
	}
}

func TestGuard(t *testing.T) {
	boom := errors.New("boom")
	if err := trial.Guard(func() error { return boom }); err != boom {
		t.Errorf("Guard(error) = %v, want the error itself", err)
	}
	if err := trial.Guard(func() error { return nil }); err != nil {
		t.Errorf("Guard(nil) = %v", err)
	}
	err := trial.Guard(func() error { explode(); return nil })
	var pe *trial.PanicError
	if !errors.As(err, &pe) || pe.Value != "kaboom" {
		t.Fatalf("Guard(panic) = %v, want a *PanicError of kaboom", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "panic: kaboom\n") || !strings.Contains(msg, "trial_test.explode") {
		t.Errorf("panic error has no stack:\n%s", msg)
	}
	err = trial.Guard(func() error { panic(fs.ErrNotExist) })
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a panic with an error does not unwrap to it: %v", err)
	}
	if err := trial.Guard(func() error { panic(nil) }); err == nil {
		t.Errorf("panic(nil) not caught")
	}
}

func explode() { panic("kaboom") }

func TestReportOptions(t *testing.T) {
	if o := trial.CollectReportOptions(); o != (trial.ReportOptions{}) {
		t.Errorf("no options: %+v", o)
	}
	o := trial.CollectReportOptions(trial.WithCheckpoint("a"), nil, trial.Done(), trial.WithCheckpoint("b"))
	if o != (trial.ReportOptions{Checkpoint: "b", Done: true}) {
		t.Errorf("options: %+v", o)
	}
}

func TestIsDone(t *testing.T) {
	for _, c := range []struct {
		m    trial.Metrics
		want bool
	}{
		{nil, false},
		{trial.Metrics{"done": true}, true},
		{trial.Metrics{"done": false}, false},
		{trial.Metrics{"done": 1}, false},
		{trial.Metrics{"done": "true"}, false},
	} {
		if got := trial.IsDone(c.m); got != c.want {
			t.Errorf("IsDone(%v) = %v, want %v", c.m, got, c.want)
		}
	}
}

package dashboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/dashboard"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/spec"
	"github.com/hone-tune/hone/trial"
)

// repoRoot is the repository's root directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	return filepath.Dir(filepath.Dir(file))
}

// experiment is a real experiment run for a test: a spec run by the runner
// in a directory that holds the spec as hone run saves it.
type experiment struct {
	dir  string
	done chan error
}

// startSpec starts the experiment the spec text describes in a new
// directory, its trials made by exec (nil: the spec's own executor, which
// runs the spec's command as processes), and returns at once. files are
// written beside the spec first, as name and content.
func startSpec(t *testing.T, name, body string, exec func(spec.Process) (hone.Executor, error), files ...[2]string) *experiment {
	t.Helper()
	return startSpecIn(t, t.TempDir(), name, body, exec, files...)
}

// startSpecIn is startSpec with the spec in base and the experiment in
// base/results/name.
func startSpecIn(t *testing.T, base, name, body string, exec func(spec.Process) (hone.Executor, error), files ...[2]string) *experiment {
	t.Helper()
	return startPlan(t, base, name, body, exec, nil, files...)
}

// startPlan is startSpecIn, calling with (when not nil) on the plan before
// the run starts.
func startPlan(t *testing.T, base, name, body string, exec func(spec.Process) (hone.Executor, error), with func(*spec.Plan), files ...[2]string) *experiment {
	t.Helper()
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(base, f[0]), []byte(f[1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(base, name+".yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := spec.Parse([]byte(body), path, base)
	if err != nil {
		t.Fatal(err)
	}
	s.Storage, s.Name = filepath.Join(base, "results"), name
	dir := filepath.Join(s.Storage, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, report.SpecFile), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := spec.Build(s, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if exec == nil {
		exec = func(p spec.Process) (hone.Executor, error) { return p.NewExecutor(context.Background()) }
	}
	ex, err := exec(plan.Process)
	if err != nil {
		t.Fatal(err)
	}
	plan.Options.Executor = ex
	plan.Options.Log = io.Discard
	if with != nil {
		with(plan)
	}
	x := &experiment{dir: dir, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, err := runner.Run(ctx, plan.Experiment, plan.Options)
		x.done <- errors.Join(err, plan.Close())
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-x.done:
		case <-time.After(time.Minute):
			t.Error("the experiment did not stop within a minute of its cancellation")
		}
	})
	return x
}

// wait waits for the experiment to end and fails the test if it failed.
func (x *experiment) wait(t *testing.T) {
	t.Helper()
	select {
	case err := <-x.done:
		x.done <- err // for Cleanup
		if err != nil {
			t.Fatalf("experiment: %v", err)
		}
	case <-time.After(5 * time.Minute):
		t.Fatal("the experiment did not end within five minutes")
	}
}

// runSpec runs the experiment to its end and returns its directory.
func runSpec(t *testing.T, name, body string, exec func(spec.Process) (hone.Executor, error)) string {
	t.Helper()
	x := startSpec(t, name, body, exec)
	x.wait(t)
	return x.dir
}

// curveFunc is a Go trainable: loss falls from (1+x)/2 towards the configuration's
// x over its iterations, and a trial with x = 0.5 errs after its first
// result.
func curveFunc(iterations int) func(spec.Process) (hone.Executor, error) {
	return func(spec.Process) (hone.Executor, error) {
		return inproc.NewFunc(func(ctx context.Context, s trial.Session) error {
			x, _ := hone.Number(s.Config()["x"])
			for i := 1; i <= iterations; i++ {
				loss := x + (1-x)*math.Pow(0.5, float64(i))
				if err := s.Report(trial.Metrics{"loss": loss}); err != nil {
					return err
				}
				if x == 0.5 {
					return fmt.Errorf("trial %s fails on purpose", s.TrialID())
				}
			}
			return nil
		}), nil
	}
}

// serve starts the dashboard of dir, refreshing every 50 ms; the
// experiment may not have begun yet.
func serve(t *testing.T, dir string, info *report.Info) (*dashboard.Server, *httptest.Server) {
	t.Helper()
	inf, err := report.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info != nil {
		inf = *info
	}
	srv, err := dashboard.New(dashboard.Options{Dir: dir, Info: inf, Interval: 50 * time.Millisecond, Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Watch(ctx)
	}()
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		cancel()
		<-done
		hs.CloseClientConnections()
		hs.Close()
	})
	return srv, hs
}

// getJSON fetches url and decodes its JSON into v, failing the test
// unless the status is want.
func getJSON(t *testing.T, url string, want int, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d %s, want %d", url, resp.StatusCode, strings.TrimSpace(string(b)), want)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %v in %s", url, err, b)
		}
	}
}

// tryJSON fetches url and decodes its JSON into v; it reports false for
// any status but 200 (the experiment may not have begun).
func tryJSON(t *testing.T, url string, v any) bool {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return true
}

// eventually polls cond every 20 ms until it holds, failing the test after
// a minute.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after a minute: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

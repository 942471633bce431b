package inproc_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/trial"
)

func next(t *testing.T, ex hone.Executor) hone.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ev, err := ex.Next(ctx)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return ev
}

func direct(t *testing.T, ex hone.Executor, id string, d hone.Directive) {
	t.Helper()
	if err := ex.Direct(id, d); err != nil {
		t.Fatalf("Direct(%s, %v): %v", id, d, err)
	}
}

func start(t *testing.T, ex hone.Executor, spec hone.StartSpec) {
	t.Helper()
	if spec.Dir == "" {
		spec.Dir = t.TempDir()
	}
	if err := ex.Start(spec); err != nil {
		t.Fatalf("Start(%s): %v", spec.TrialID, err)
	}
}

// exitErr waits for trial id's exit and returns its error.
func exitErr(t *testing.T, ex hone.Executor, id string) error {
	t.Helper()
	ev := next(t, ex)
	if ev.Kind != hone.EventExited || ev.TrialID != id {
		t.Fatalf("got %v event of %s, want the exit of %s", ev.Kind, ev.TrialID, id)
	}
	return ev.Cause
}

// TestPanicIsErrorWithStack: a panic anywhere in training code ends the
// trial with an error that holds the panic value and the stack.
func TestPanicIsErrorWithStack(t *testing.T) {
	cases := []struct {
		name string
		ex   *inproc.Executor
		want string
	}{
		{"Func", inproc.NewFunc(func(context.Context, trial.Session) error { return panicHere("in func") }), "trial function: panic: in func"},
		{"Setup", inproc.NewClass(func() trial.Trainable { return &class{panicIn: "setup"} }), "setup: panic: in setup"},
		{"Load", inproc.NewClass(func() trial.Trainable { return &class{panicIn: "load"} }), "load checkpoint"},
		{"Step", inproc.NewClass(func() trial.Trainable { return &class{panicIn: "step"} }), "step: panic: in step"},
		{"Factory", inproc.NewClass(func() trial.Trainable { _ = panicHere("in factory"); return nil }), "setup: panic: in factory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer c.ex.Close()
			start(t, c.ex, hone.StartSpec{TrialID: "a", RestoreDir: t.TempDir()})
			err := exitErr(t, c.ex, "a")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("exit error %v, want one containing %q", err, c.want)
			}
			if !strings.Contains(err.Error(), "inproc_test.panicHere") {
				t.Errorf("exit error has no stack:\n%v", err)
			}
			var pe *trial.PanicError
			if !errors.As(err, &pe) {
				t.Errorf("exit error is not a *trial.PanicError")
			}
		})
	}
}

// TestPanicInSave: a panicking on-demand save is a failed save; the trial
// waits for the next directive.
func TestPanicInSave(t *testing.T) {
	ex := inproc.NewClass(func() trial.Trainable { return &class{panicIn: "save"} })
	defer ex.Close()
	dir := t.TempDir()
	start(t, ex, hone.StartSpec{TrialID: "a", Dir: dir})
	next(t, ex)
	direct(t, ex, "a", hone.DirectCheckpoint)
	ev := next(t, ex)
	if ev.Kind != hone.EventSaved || ev.Cause == nil || !strings.Contains(ev.Cause.Error(), "inproc_test.panicHere") || ev.CheckpointDir != "" {
		t.Fatalf("got %v event, err %v, dir %q; want a failed save with a stack", ev.Kind, ev.Cause, ev.CheckpointDir)
	}
	direct(t, ex, "a", hone.DirectContinue)
	if ev := next(t, ex); ev.Kind != hone.EventResult {
		t.Fatalf("got %v, want the next result", ev.Kind)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, trial.StagingDirName)); len(entries) != 0 {
		t.Errorf("the failed save left %d staging directories", len(entries))
	}
}

func panicHere(v string) error { panic(v) }

// class is a class-style trainable for these tests: its metric "n" counts
// steps; it panics in the method named by panicIn, and its metrics hold
// extra on every step.
type class struct {
	panicIn string
	extra   trial.Metrics
	n       int
}

func (c *class) Setup(hone.Config) error {
	if c.panicIn == "setup" {
		panicHere("in setup")
	}
	return nil
}

func (c *class) Load(string) error {
	if c.panicIn == "load" {
		panicHere("in load")
	}
	return nil
}

func (c *class) Save(dir string) error {
	if c.panicIn == "save" {
		panicHere("in save")
	}
	return os.WriteFile(filepath.Join(dir, "n"), []byte{byte(c.n)}, 0o644)
}

func (c *class) Step(context.Context) (trial.Metrics, error) {
	if c.panicIn == "step" {
		panicHere("in step")
	}
	c.n++
	m := trial.Metrics{"n": c.n}
	for k, v := range c.extra {
		m[k] = v
	}
	return m, nil
}

// TestShouldCheckpoint: a class result with "should_checkpoint": true
// carries a fresh staged checkpoint, and the key is not reported.
func TestShouldCheckpoint(t *testing.T) {
	ex := inproc.NewClass(func() trial.Trainable {
		return &class{extra: trial.Metrics{trial.MetricShouldCheckpoint: true}}
	})
	defer ex.Close()
	dir := t.TempDir()
	start(t, ex, hone.StartSpec{TrialID: "a", Dir: dir})
	ev := next(t, ex)
	if _, ok := ev.Metrics[trial.MetricShouldCheckpoint]; ok {
		t.Errorf("reported metrics keep %q: %v", trial.MetricShouldCheckpoint, ev.Metrics)
	}
	if want := filepath.Join(dir, trial.StagingDirName, "0"); ev.CheckpointDir != want {
		t.Errorf("checkpoint dir %q, want %q", ev.CheckpointDir, want)
	}
	if _, err := os.Stat(filepath.Join(ev.CheckpointDir, "n")); err != nil {
		t.Errorf("checkpoint not written: %v", err)
	}
	direct(t, ex, "a", hone.DirectStop)
	if err := exitErr(t, ex, "a"); err != nil {
		t.Fatal(err)
	}
}

// TestSession checks what a function trainable sees.
func TestSession(t *testing.T) {
	dir, restore := t.TempDir(), t.TempDir()
	cfg := hone.Config{"lr": 0.1, "model": map[string]any{"width": 8}}
	type seen struct {
		id, dir, cp string
		iter        int
		staged      []string
	}
	got := make(chan seen, 1)
	ex := inproc.NewFunc(func(ctx context.Context, s trial.Session) error {
		c := s.Config()
		if w, _ := c.Lookup("model", "width"); w != 8 {
			return errors.New("config not passed")
		}
		c["lr"] = 99.0 // the trainable's own copy
		c["model"].(map[string]any)["width"] = 99
		v := seen{id: s.TrialID(), dir: s.Dir(), cp: s.Checkpoint(), iter: s.Iteration()}
		for range 2 {
			d, err := s.StagingDir()
			if err != nil {
				return err
			}
			v.staged = append(v.staged, d)
		}
		got <- v
		return nil
	})
	defer ex.Close()
	start(t, ex, hone.StartSpec{TrialID: "a", Config: cfg, Dir: dir, RestoreDir: restore, Iteration: 7})
	if err := exitErr(t, ex, "a"); err != nil {
		t.Fatal(err)
	}
	v := <-got
	if v.id != "a" || v.dir != dir || v.cp != restore || v.iter != 7 {
		t.Errorf("session saw %+v", v)
	}
	for i, d := range v.staged {
		if want := filepath.Join(dir, trial.StagingDirName, string(rune('0'+i))); d != want {
			t.Errorf("staging dir %d = %s, want %s", i, d, want)
		}
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			t.Errorf("staging dir %s: %v", d, err)
		}
	}
	if cfg["lr"] != 0.1 || cfg["model"].(map[string]any)["width"] != 8 {
		t.Errorf("the trainable changed the caller's config: %v", cfg)
	}
}

// TestReport covers Report's options and errors.
func TestReport(t *testing.T) {
	t.Run("DoneMetric", func(t *testing.T) {
		ex := inproc.NewFunc(func(ctx context.Context, s trial.Session) error {
			return s.Report(trial.Metrics{"done": true})
		})
		defer ex.Close()
		start(t, ex, hone.StartSpec{TrialID: "a"})
		if ev := next(t, ex); !ev.Done {
			t.Errorf("result with done: true not Done")
		}
		direct(t, ex, "a", hone.DirectStop)
		if err := exitErr(t, ex, "a"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("RelativeCheckpoint", func(t *testing.T) {
		dir := t.TempDir()
		t.Chdir(dir)
		if err := os.Mkdir("ckpt", 0o755); err != nil {
			t.Fatal(err)
		}
		ex := inproc.NewFunc(func(ctx context.Context, s trial.Session) error {
			return s.Report(trial.Metrics{}, trial.WithCheckpoint("ckpt"))
		})
		defer ex.Close()
		start(t, ex, hone.StartSpec{TrialID: "a"})
		if ev := next(t, ex); ev.CheckpointDir != filepath.Join(dir, "ckpt") {
			t.Errorf("checkpoint dir %q, want the absolute path", ev.CheckpointDir)
		}
		direct(t, ex, "a", hone.DirectContinue)
		if err := exitErr(t, ex, "a"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("MissingCheckpoint", func(t *testing.T) {
		ex := inproc.NewFunc(func(ctx context.Context, s trial.Session) error {
			return s.Report(trial.Metrics{}, trial.WithCheckpoint("/nonexistent/ckpt"))
		})
		defer ex.Close()
		start(t, ex, hone.StartSpec{TrialID: "a"})
		if err := exitErr(t, ex, "a"); err == nil || !strings.Contains(err.Error(), "/nonexistent/ckpt") {
			t.Fatalf("exit error %v, want one naming the missing checkpoint", err)
		}
	})
}

// TestStopWhileComputing: a trainable that ignores its context is stopped
// at its next report, which emits nothing; whatever it then returns, except
// a panic, is a normal end.
func TestStopWhileComputing(t *testing.T) {
	for _, c := range []struct {
		name    string
		ret     func(error) error
		wantErr bool
	}{
		{"ReturnsStopped", func(err error) error { return err }, false},
		{"ReturnsOtherError", func(error) error { return errors.New("interrupted") }, false},
		{"Panics", func(error) error { panic("after stop") }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			release := make(chan struct{})
			var reportErr error
			ex := inproc.NewFunc(func(ctx context.Context, s trial.Session) error {
				if err := s.Report(trial.Metrics{"n": 1}); err != nil {
					return err
				}
				<-release // computing, deaf to ctx
				reportErr = s.Report(trial.Metrics{"n": 2})
				return c.ret(reportErr)
			})
			defer ex.Close()
			start(t, ex, hone.StartSpec{TrialID: "a"})
			next(t, ex)
			direct(t, ex, "a", hone.DirectContinue)
			direct(t, ex, "a", hone.DirectStop)
			close(release)
			err := exitErr(t, ex, "a")
			if (err != nil) != c.wantErr {
				t.Fatalf("exit error %v, want error: %v", err, c.wantErr)
			}
			if !errors.Is(reportErr, hone.ErrTrialStopped) {
				t.Errorf("Report after stop = %v, want ErrTrialStopped", reportErr)
			}
		})
	}
}

// TestContextCancelledOnStop: DirectStop cancels the trial's context.
func TestContextCancelledOnStop(t *testing.T) {
	ex := inproc.NewFunc(func(ctx context.Context, s trial.Session) error {
		<-ctx.Done()
		return ctx.Err()
	})
	defer ex.Close()
	start(t, ex, hone.StartSpec{TrialID: "a"})
	direct(t, ex, "a", hone.DirectStop)
	if err := exitErr(t, ex, "a"); err != nil {
		t.Fatalf("exit error %v after stop, want nil", err)
	}
}

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// TestEventStamps: events carry the configured clock's time, host and pid.
func TestEventStamps(t *testing.T) {
	t0 := time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)
	ex := inproc.NewFunc(func(ctx context.Context, s trial.Session) error { return nil },
		inproc.WithClock(fixedClock{t0}), inproc.WithHostname("node7"), inproc.WithPID(4242))
	defer ex.Close()
	var _ hone.Clocked = ex
	if got := ex.Clock().Now(); !got.Equal(t0) {
		t.Errorf("Clock().Now() = %v, want %v", got, t0)
	}
	start(t, ex, hone.StartSpec{TrialID: "a"})
	ev := next(t, ex)
	if !ev.At().Equal(t0) || ev.Hostname != "node7" || ev.PID != 4242 {
		t.Errorf("event stamped %v %q %d", ev.At(), ev.Hostname, ev.PID)
	}

	def := inproc.NewFunc(func(ctx context.Context, s trial.Session) error { return nil })
	defer def.Close()
	start(t, def, hone.StartSpec{TrialID: "a"})
	ev = next(t, def)
	host, _ := os.Hostname()
	if ev.PID != os.Getpid() || ev.Hostname != host || time.Since(ev.At()) > time.Minute {
		t.Errorf("default stamps %v %q %d", ev.At(), ev.Hostname, ev.PID)
	}
}

// TestStartErrors: Start refuses bad specs and a closed executor.
func TestStartErrors(t *testing.T) {
	ex := inproc.NewFunc(func(ctx context.Context, s trial.Session) error { return nil })
	if err := ex.Start(hone.StartSpec{Dir: t.TempDir()}); err == nil {
		t.Error("Start with no trial id succeeded")
	}
	if err := ex.Start(hone.StartSpec{TrialID: "a", Dir: "relative/dir"}); err == nil {
		t.Error("Start with a relative dir succeeded")
	}
	if err := ex.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ex.Start(hone.StartSpec{TrialID: "a", Dir: t.TempDir()}); err == nil {
		t.Error("Start after Close succeeded")
	}
	if err := ex.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestConcurrentReports: overlapping Report calls from several goroutines
// of one trial are serialised, each answered by its own directive.
func TestConcurrentReports(t *testing.T) {
	const n = 8
	ex := inproc.NewFunc(func(ctx context.Context, s trial.Session) error {
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() { errs <- s.Report(trial.Metrics{"i": i}) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	})
	defer ex.Close()
	start(t, ex, hone.StartSpec{TrialID: "a"})
	for range n {
		if ev := next(t, ex); ev.Kind != hone.EventResult {
			t.Fatalf("got %v, want a result", ev.Kind)
		}
		direct(t, ex, "a", hone.DirectContinue)
	}
	if err := exitErr(t, ex, "a"); err != nil {
		t.Fatal(err)
	}
}

// TestDirCreatedOnFirstUse: the trial directory exists once the trainable
// asks for it, and a trainable that never does costs no directory.
func TestDirCreatedOnFirstUse(t *testing.T) {
	root := t.TempDir()
	ex := inproc.NewFunc(func(ctx context.Context, s trial.Session) error {
		if s.Config()["write"] == true {
			return os.WriteFile(filepath.Join(s.Dir(), "log.txt"), []byte("hi"), 0o644)
		}
		return nil
	})
	defer ex.Close()
	quiet, writer := filepath.Join(root, "quiet"), filepath.Join(root, "writer")
	start(t, ex, hone.StartSpec{TrialID: "q", Config: hone.Config{}, Dir: quiet})
	if err := exitErr(t, ex, "q"); err != nil {
		t.Fatal(err)
	}
	start(t, ex, hone.StartSpec{TrialID: "w", Config: hone.Config{"write": true}, Dir: writer})
	if err := exitErr(t, ex, "w"); err != nil {
		t.Fatalf("writing into Session.Dir: %v", err)
	}
	if _, err := os.Stat(quiet); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a trial that wrote nothing has a directory: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(writer, "log.txt")); err != nil || string(b) != "hi" {
		t.Errorf("log.txt: %q %v", b, err)
	}
}

package progress

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/pareto"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata")

type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time { return c.t }

func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// golden compares got with testdata/name, or rewrites it with -rewrite.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *rewrite {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run with -rewrite to update)\n--- got ---\n%s\n--- want ---\n%s", p, got, want)
	}
}

func trial(i int, cfg hone.Config) *hone.Trial {
	return &hone.Trial{ID: fmt.Sprintf("t%07d", i), Index: i, Config: cfg, Status: hone.StatusRunning}
}

func res(t *hone.Trial, it int, loss float64) *hone.Result {
	r := &hone.Result{TrialID: t.ID, Metrics: map[string]any{"loss": loss}, TrainingIteration: it, TimeTotal: 10 * float64(it)}
	t.LastResult = r
	return r
}

// traceback is the error of a trial process that failed with a Python
// exception, as the process executor reports it.
const traceback = `trial process failed: exit status 1
last lines of stderr:
Traceback (most recent call last):
  File "train.py", line 3, in <module>
    import torch
ModuleNotFoundError: No module named 'torch'`

// scenario drives three trials through a small experiment, one callback
// every 10 s of clock time: results, a failure, a completion, and the end.
func scenario(r *Reporter, clk *fakeClock) {
	a := trial(0, hone.Config{"lr": 0.1, "layers": 2, "opt": "adam", "model": map[string]any{"width": 64}})
	b := trial(1, hone.Config{"lr": 0.01, "layers": 2, "opt": "adam", "model": map[string]any{"width": 128}})
	c := trial(2, hone.Config{"lr": 0.001, "layers": 4, "opt": "adam", "model": map[string]any{"width": 64}})
	step := func(f func()) {
		f()
		clk.advance(10 * time.Second)
	}
	step(func() { r.OnTrialStart(a) })
	step(func() { r.OnTrialStart(b) })
	for it := 1; it <= 3; it++ {
		step(func() { r.OnTrialResult(a, res(a, it, 1/float64(it))) })
		step(func() { r.OnTrialResult(b, res(b, it, 0.8/float64(it))) })
	}
	step(func() {
		b.Status = hone.StatusTerminated
		r.OnTrialComplete(b)
	})
	step(func() { r.OnTrialStart(c) })
	step(func() { r.OnTrialResult(c, res(c, 1, math.NaN())) })
	step(func() {
		c.Status, c.Error = hone.StatusError, traceback
		r.OnTrialError(c, errors.New(c.Error))
	})
	step(func() { r.OnTrialResult(a, res(a, 4, 0.2)) })
	a.Status = hone.StatusTerminated
	r.OnTrialComplete(a)
	pending := trial(3, hone.Config{"lr": 0.5, "layers": 2, "opt": "adam", "model": map[string]any{"width": 64}})
	pending.Status = hone.StatusPending
	r.OnExperimentEnd([]*hone.Trial{a, b, c, pending})
}

func TestPlainGolden(t *testing.T) {
	var out bytes.Buffer
	clk := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := New(&out, WithMetric("loss", hone.Min), WithClock(clk))
	scenario(r, clk)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "\x1b") {
		t.Error("plain output has escape codes")
	}
	golden(t, "plain.golden", out.String())
}

func TestNoMetricGolden(t *testing.T) {
	var out bytes.Buffer
	clk := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := New(&out, WithClock(clk), WithInterval(time.Minute), WithMaxRows(2))
	scenario(r, clk)
	golden(t, "nometric.golden", out.String())
}

func TestTTYRedrawsInPlace(t *testing.T) {
	var out bytes.Buffer
	clk := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := New(&out, WithMetric("loss", hone.Min), WithClock(clk), WithTTY(true))
	a := trial(0, hone.Config{"lr": 0.1})
	b := trial(1, hone.Config{"lr": 0.2})

	r.OnTrialStart(a) // the first callback draws at once
	first := out.String()
	if first == "" || strings.Contains(first, "\x1b") {
		t.Fatalf("first draw = %q, want a table without cursor movement", first)
	}
	lines := strings.Count(first, "\n")

	clk.advance(500 * time.Millisecond)
	r.OnTrialStart(b) // within the 1 s interval: no draw
	if out.String() != first {
		t.Fatalf("drew again within the interval: %q", out.String()[len(first):])
	}

	clk.advance(500 * time.Millisecond)
	r.OnTrialResult(a, res(a, 1, 0.5))
	second := out.String()[len(first):]
	wantPrefix := fmt.Sprintf("\x1b[%dA\x1b[J", lines)
	if !strings.HasPrefix(second, wantPrefix) {
		t.Fatalf("second draw = %q, want it to start with %q", second, wantPrefix)
	}
	if !strings.Contains(second, "t0000001") || !strings.Contains(second, "0.5") {
		t.Errorf("second draw misses the new trial or result: %q", second)
	}

	r.OnExperimentEnd([]*hone.Trial{a, b})
	final := out.String()[len(first)+len(second):]
	if !strings.HasPrefix(final, fmt.Sprintf("\x1b[%dA\x1b[J", strings.Count(second, "\n"))) {
		t.Errorf("final draw does not replace the table: %q", final)
	}
	if !strings.Contains(final, "Experiment stopped after") {
		t.Errorf("final draw has no summary: %q", final)
	}
}

func TestTTYCutsLongLines(t *testing.T) {
	var out bytes.Buffer
	r := New(&out, WithTTY(true))
	r.width = 20
	r.OnTrialStart(trial(0, hone.Config{"a": strings.Repeat("x", 50)}))
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if len([]rune(l)) > 19 {
			t.Errorf("line %q longer than the terminal", l)
		}
	}
}

func TestDefaultIntervals(t *testing.T) {
	if got := New(&bytes.Buffer{}).interval; got != 30*time.Second {
		t.Errorf("plain interval = %v, want 30s", got)
	}
	if got := New(&bytes.Buffer{}, WithTTY(true)).interval; got != time.Second {
		t.Errorf("terminal interval = %v, want 1s", got)
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if r := New(f); *r.tty {
		t.Error("a regular file was taken for a terminal")
	}
}

func TestVaryingKeys(t *testing.T) {
	mk := func(cfgs ...hone.Config) []*row {
		var rows []*row
		for _, c := range cfgs {
			rows = append(rows, &row{config: flatConfig(c)})
		}
		return rows
	}
	for _, tc := range []struct {
		name string
		rows []*row
		want []string
	}{
		{"none", nil, nil},
		{"one trial", mk(hone.Config{"a": 1}), nil},
		{"same", mk(hone.Config{"a": 1, "b": "x"}, hone.Config{"a": 1, "b": "x"}), nil},
		{"one differs", mk(hone.Config{"a": 1, "b": "x"}, hone.Config{"a": 2, "b": "x"}), []string{"a"}},
		{"nested", mk(hone.Config{"m": map[string]any{"w": 1, "d": 2}}, hone.Config{"m": map[string]any{"w": 1, "d": 3}}), []string{"m/d"}},
		{"missing in one", mk(hone.Config{"a": 1}, hone.Config{"a": 1, "b": 2}), []string{"b"}},
		{"missing in first", mk(hone.Config{"a": 1, "c": true}, hone.Config{"a": 1, "b": 2}), []string{"b", "c"}},
		{"int and float equal", mk(hone.Config{"a": 1}, hone.Config{"a": 1.0}), nil},
		{"lists", mk(hone.Config{"l": []any{1, 2}}, hone.Config{"l": []any{1, 3}}), []string{"l"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := varyingKeys(tc.rows); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("varyingKeys = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMaxRowsPicksRunningThenBest(t *testing.T) {
	var out bytes.Buffer
	clk := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := New(&out, WithMetric("acc", hone.Max), WithClock(clk), WithMaxRows(3))
	var trials []*hone.Trial
	for i, acc := range []float64{0.5, 0.9, 0.1, 0.7, 0.3} {
		tr := trial(i, hone.Config{"i": i})
		tr.LastResult = &hone.Result{Metrics: map[string]any{"acc": acc}, TrainingIteration: 1}
		tr.Status = hone.StatusTerminated
		trials = append(trials, tr)
	}
	trials[2].Status = hone.StatusRunning
	r.OnExperimentEnd(trials)
	got := out.String()
	for _, id := range []string{"t0000001", "t0000002", "t0000003"} {
		if !strings.Contains(got, id+"  ") {
			t.Errorf("table misses %s:\n%s", id, got)
		}
	}
	for _, id := range []string{"t0000000  ", "t0000004  "} {
		if strings.Contains(got, id) {
			t.Errorf("table shows %s:\n%s", id, got)
		}
	}
	if !strings.Contains(got, "... 2 more trials not shown (2 TERMINATED)") {
		t.Errorf("no hidden-trials line:\n%s", got)
	}
	if !strings.Contains(got, "Best trial: t0000001 with acc=0.9") {
		t.Errorf("wrong best trial:\n%s", got)
	}
}

func TestNum(t *testing.T) {
	for f, want := range map[float64]string{
		3: "3", -2: "-2", 0.1: "0.1", 0.123456789: "0.12346", 1e20: "1e+20",
		128: "128", 1e-7: "1e-07", math.NaN(): "NaN",
	} {
		if got := num(f); got != want {
			t.Errorf("num(%v) = %q, want %q", f, got, want)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrorKept(t *testing.T) {
	r := New(failWriter{}, WithTTY(true))
	r.OnTrialStart(trial(0, nil))
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Err = %v", err)
	}
}

// TestStatusWithoutCallback: a pause changes a trial's status with no
// callback of its own; the next table shows it.
func TestStatusWithoutCallback(t *testing.T) {
	var out bytes.Buffer
	clk := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := New(&out, WithMetric("loss", hone.Min), WithClock(clk), WithInterval(time.Second))
	a := &hone.Trial{ID: "aaaa0000", Index: 0, Config: hone.Config{"x": 1.0}, Status: hone.StatusRunning}
	b := &hone.Trial{ID: "bbbb0000", Index: 1, Config: hone.Config{"x": 2.0}, Status: hone.StatusRunning}
	r.OnTrialStart(a)
	r.OnTrialStart(b)
	a.Status = hone.StatusPaused // the controller paused it
	clk.advance(2 * time.Second)
	r.OnTrialResult(b, &hone.Result{TrialID: b.ID, TrainingIteration: 1, Metrics: map[string]any{"loss": 0.5}})
	tables := strings.Split(out.String(), "== Status")
	last := tables[len(tables)-1]
	if !strings.Contains(last, "1 PAUSED") {
		t.Fatalf("last table does not count the paused trial:\n%s", last)
	}
	for _, l := range strings.Split(last, "\n") {
		if strings.HasPrefix(l, "aaaa0000") && !strings.Contains(l, "PAUSED") {
			t.Fatalf("paused trial's row: %q", l)
		}
	}
}

// TestEndStoppedAndNotStarted ends an experiment as an interrupt or a time
// budget does: a trial still RUNNING is shown STOPPED, a trial that ran
// and waits for a retry stays PENDING, and the many trials that never
// started are counted apart and not listed.
func TestEndStoppedAndNotStarted(t *testing.T) {
	var out bytes.Buffer
	clk := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := New(&out, WithMetric("loss", hone.Min), WithClock(clk), WithMaxRows(50))
	a := trial(0, hone.Config{"lr": 0.1})
	b := trial(1, hone.Config{"lr": 0.2})
	r.OnTrialStart(a)
	r.OnTrialStart(b)
	r.OnTrialResult(a, res(a, 1, 0.5))
	b.Status, b.Failures = hone.StatusPending, 1
	r.OnTrialError(b, errors.New("crashed"))
	all := []*hone.Trial{a, b}
	for i := 2; i < 1002; i++ {
		p := trial(i, hone.Config{"lr": float64(i)})
		p.Status = hone.StatusPending
		all = append(all, p)
	}
	// One that ended TERMINATED without ever running (resume
	// --no-unfinished) is not a result either.
	all[2].Status = hone.StatusTerminated
	clk.advance(time.Minute)
	r.OnExperimentEnd(all)
	got := out.String()
	for _, want := range []string{
		"== Status: 1002 trials (1 STOPPED, 1 PENDING, 1000 not started) | 1m0s elapsed ==",
		"t0000000  STOPPED  0.1  0.5   1     10.0",
		"t0000001  PENDING  0.2",
		"Experiment stopped after 1m0s: 1002 trials (1 STOPPED, 1 PENDING, 1000 not started).",
		"Best trial: t0000000 with loss=0.5 at iteration 1, config:",
		"1000 trials never started (no results) and are not listed.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "t0000002") || strings.Contains(got, "t0001001") || strings.Contains(got, "RUNNING") {
		t.Errorf("a trial that never started is listed, or a stopped one shown RUNNING:\n%s", got)
	}
}

// TestFailureLines checks the lines under failed trials in the summary:
// the last lines of each one's error, the same lines shown once, a long
// error cut to its last lines, and only the first few trials' lines.
func TestFailureLines(t *testing.T) {
	var out bytes.Buffer
	clk := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := New(&out, WithMetric("loss", hone.Min), WithClock(clk), WithMaxRows(2))
	long := "trial process failed: exit status 2\nlast lines of stderr:"
	for i := 1; i <= 20; i++ {
		long += fmt.Sprintf("\nline %d", i)
	}
	errs := []string{traceback, traceback, long, "no report for 30s (report_timeout)"}
	for i := range 6 {
		errs = append(errs, fmt.Sprintf("trial process failed: exit status 1\nlast lines of stderr:\nValueError: %d", i))
	}
	var trials []*hone.Trial
	for i, e := range errs {
		tr := trial(i, hone.Config{"x": i})
		tr.Status, tr.Error = hone.StatusError, e
		trials = append(trials, tr)
	}
	r.OnExperimentEnd(trials)
	_, summary, _ := strings.Cut(out.String(), "10 trials failed:\n")
	want := `  t0000000: trial process failed: exit status 1
    last lines of stderr:
    Traceback (most recent call last):
      File "train.py", line 3, in <module>
        import torch
    ModuleNotFoundError: No module named 'torch'
  t0000001: trial process failed: exit status 1
    (the same last lines as t0000000)
  t0000002: trial process failed: exit status 2
    ... 9 lines before these in error.txt
    line 9
    line 10
    line 11
    line 12
    line 13
    line 14
    line 15
    line 16
    line 17
    line 18
    line 19
    line 20
  t0000003: no report for 30s (report_timeout)
  t0000004: trial process failed: exit status 1
    last lines of stderr:
    ValueError: 0
  t0000005: trial process failed: exit status 1
    last lines of stderr:
    ValueError: 1
  t0000006: trial process failed: exit status 1
    last lines of stderr:
    ValueError: 2
  t0000007: trial process failed: exit status 1
  t0000008: trial process failed: exit status 1
  t0000009: trial process failed: exit status 1
  (for the last 3, see error.txt in their directories)

`
	if summary != want {
		t.Errorf("summary of failures:\n%s\nwant:\n%s", summary, want)
	}
}

// TestResumeShowsEarlierTrials checks that after OnExperimentResume the
// live table lists the trials of the earlier sessions, and that the best
// trial so far is the experiment's best, not that of the trials running
// again.
func TestResumeShowsEarlierTrials(t *testing.T) {
	var out bytes.Buffer
	clk := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := New(&out, WithMetric("loss", hone.Min), WithClock(clk), WithTTY(true))
	a := trial(0, hone.Config{"lr": 0.1})
	res(a, 5, 0.05)
	a.Status = hone.StatusTerminated
	b := trial(1, hone.Config{"lr": 0.2})
	res(b, 2, 0.5) // interrupted while running: it runs again
	c := trial(2, hone.Config{"lr": 0.3})
	c.Status, c.Error = hone.StatusError, "trial process failed: exit status 1"
	c.Failures = 1
	d := trial(3, hone.Config{"lr": 0.4})
	d.Status = hone.StatusPending // never started: not listed
	r.OnExperimentResume([]*hone.Trial{a, b, c, d})
	r.OnTrialStart(b)
	r.OnTrialResult(b, res(b, 3, 0.4))
	want := `== Status: 3 trials (1 RUNNING, 1 TERMINATED, 1 ERROR) | 0s elapsed ==
Best trial so far: t0000000 with loss=0.05 (lr=0.1)
Trial     Status      lr   loss  iter  total time (s)
t0000000  TERMINATED  0.1  0.05  5     50.0
t0000001  RUNNING     0.2  0.5   2     20.0
t0000002  ERROR       0.3
`
	if got := out.String(); got != want {
		t.Errorf("the first table after a resume:\n%s\nwant:\n%s", got, want)
	}
}

// TestTTYFitsTheTerminal checks that on a 80x24 terminal the live table of
// 60 trials with many long config values fits: no line is cut, the trial,
// its status and the metric stay, config columns are left out and named,
// and the trials that do not fit are summarised; the final table fits the
// width too, and lists up to WithMaxRows trials.
func TestTTYFitsTheTerminal(t *testing.T) {
	var out bytes.Buffer
	clk := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := New(&out, WithMetric("loss", hone.Min), WithClock(clk), WithTTY(true), WithSize(80, 24))
	var trials []*hone.Trial
	for i := range 60 {
		tr := trial(i, hone.Config{
			"learning_rate": 0.001 * float64(i+1), "optimizer": []string{"adam", "sgd_with_nesterov_momentum"}[i%2],
			"layers": i % 5, "dropout": 0.01 * float64(i), "activation": []string{"relu", "gelu", "leaky_relu"}[i%3],
		})
		trials = append(trials, tr)
		switch {
		case i < 50:
			r.OnTrialStart(tr)
			r.OnTrialResult(tr, res(tr, 10, 1/float64(i+1)))
			tr.Status = hone.StatusTerminated
			r.OnTrialComplete(tr)
		case i < 57:
			r.OnTrialStart(tr)
			r.OnTrialResult(tr, res(tr, 3, 2+float64(i)))
			tr.Status = hone.StatusPaused
		default:
			r.OnTrialStart(tr)
			r.OnTrialResult(tr, res(tr, 1, 5+float64(i)))
		}
	}
	clk.advance(time.Second)
	out.Reset()
	r.OnTrialResult(trials[59], res(trials[59], 2, 4))
	live := lastDraw(out.String())
	golden(t, "fit.golden", live)
	lines := strings.Split(strings.TrimSuffix(live, "\n"), "\n")
	if len(lines) > 23 {
		t.Errorf("the live table has %d lines, more than the terminal's 23 free ones", len(lines))
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 79 {
			t.Errorf("line of %d characters on an 80-wide terminal: %q", n, l)
		}
	}
	head := lines[2]
	for _, col := range []string{"Trial", "Status", "loss"} {
		if !strings.Contains(head, col) {
			t.Errorf("the table lost column %s: %q", col, head)
		}
	}
	if !strings.Contains(live, "... 42 more trials not shown (7 PAUSED, 35 TERMINATED)") {
		t.Errorf("no summary of the trials left out:\n%s", live)
	}
	if !strings.Contains(live, "... 3 more columns: layers, learning_rate, optimizer\n") {
		t.Errorf("no note of the columns left out:\n%s", live)
	}

	out.Reset()
	r.OnExperimentEnd(trials)
	final := lastDraw(out.String())
	for _, l := range strings.Split(final, "\n") {
		if n := utf8.RuneCountInString(l); n > 79 {
			t.Errorf("final line of %d characters on an 80-wide terminal: %q", n, l)
		}
	}
	if !strings.Contains(final, "... 40 more trials not shown") || !strings.Contains(final, "  loss") {
		t.Errorf("final table:\n%s", final)
	}
}

// lastDraw returns the last table drawn on a terminal: what follows the
// last clear to the end of the screen.
func lastDraw(out string) string {
	if i := strings.LastIndex(out, "\x1b[J"); i >= 0 {
		return out[i+len("\x1b[J"):]
	}
	return out
}

// TestTTYTinyTerminal checks that a terminal too small for any row still
// shows one, with its status and metric, and summarises the others.
func TestTTYTinyTerminal(t *testing.T) {
	var out bytes.Buffer
	clk := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := New(&out, WithMetric("loss", hone.Min), WithClock(clk), WithTTY(true), WithSize(30, 3))
	for i := range 3 {
		r.OnTrialStart(trial(i, hone.Config{"lr": 0.1 * float64(i+1)}))
		clk.advance(time.Second)
	}
	got := lastDraw(out.String())
	want := "== Status: 3 trials (3 RUNNIN\nTrial     Status   loss  iter\nt0000000  RUNNING\n... 2 more trials not shown (\n... 2 more columns: lr, total\n"
	if got != want {
		t.Errorf("tiny terminal:\n%q\nwant\n%q", got, want)
	}
}

// two returns the objectives of the tests with several: accuracy
// maximised, latency minimised.
func two() hone.Objectives {
	return hone.Objectives{{Metric: "acc", Mode: hone.Max}, {Metric: "ms", Mode: hone.Min}}
}

// mres sets t's last result to metrics, at iteration it, and returns it.
func mres(t *hone.Trial, it int, metrics map[string]any) *hone.Result {
	r := &hone.Result{TrialID: t.ID, Metrics: metrics, TrainingIteration: it, TimeTotal: 10 * float64(it)}
	t.LastResult = r
	return r
}

// multiScenario runs eight trials with two objectives, one callback every
// 10 s of clock time. At the end t0000000, t0000001 and t0000003 are the
// front: t0000002 is dominated by t0000001, t0000004 by t0000000;
// t0000005 fails, t0000006 lacks ms, and t0000007, which would dominate
// them all, is still running.
func multiScenario(r *Reporter, clk *fakeClock) []*hone.Trial {
	metrics := []map[string]any{
		{"acc": 0.9, "ms": 50},
		{"acc": 0.8, "ms": 20},
		{"acc": 0.7, "ms": 30},
		{"acc": 0.95, "ms": 80},
		{"acc": 0.85, "ms": 60},
		nil,
		{"acc": 0.99},
		{"acc": 0.99, "ms": 5},
	}
	var trials []*hone.Trial
	step := func(f func()) {
		f()
		clk.advance(10 * time.Second)
	}
	for i, m := range metrics {
		tr := trial(i, hone.Config{"lr": 0.01 * float64(i+1), "layers": 2 + i%2})
		trials = append(trials, tr)
		step(func() { r.OnTrialStart(tr) })
		switch {
		case m == nil:
			step(func() {
				tr.Status, tr.Error = hone.StatusError, "trial process failed: exit status 1"
				r.OnTrialError(tr, errors.New(tr.Error))
			})
		case i == len(metrics)-1:
			step(func() { r.OnTrialResult(tr, mres(tr, 1, m)) })
		default:
			step(func() { r.OnTrialResult(tr, mres(tr, 1, m)) })
			step(func() {
				tr.Status = hone.StatusTerminated
				r.OnTrialComplete(tr)
			})
		}
	}
	r.OnExperimentEnd(trials)
	return trials
}

// frontIDsOf returns the ids on the reporter's current front.
func frontIDsOf(r *Reporter) []string {
	var ids []string
	for _, w := range r.front(r.sorted()).rows {
		ids = append(ids, w.id)
	}
	return ids
}

func TestMultiGolden(t *testing.T) {
	var out bytes.Buffer
	clk := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := New(&out, WithObjectives(two(), nil), WithClock(clk))
	multiScenario(r, clk)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if got, want := frontIDsOf(r), []string{"t0000000", "t0000001", "t0000003"}; !reflect.DeepEqual(got, want) {
		t.Errorf("front %q, want %q", got, want)
	}
	got := out.String()
	for _, want := range []string{
		"Trial     Status      layers  lr    acc   ms  iter  total time (s)\n",
		"Pareto front so far (acc (max), ms (min)): 3 of 6 finished trials: t0000000, t0000001, t0000003\n",
		"Pareto front: 3 of 6 finished trials (acc (max), ms (min)):\n" +
			"  t0000003: acc=0.95, ms=80 (layers=3, lr=0.04)\n" +
			"  t0000000: acc=0.9, ms=50 (layers=2, lr=0.01)\n" +
			"  t0000001: acc=0.8, ms=20 (layers=3, lr=0.02)\n" +
			"1 trial failed:\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Best trial") {
		t.Errorf("a best trial with several objectives:\n%s", got)
	}
	golden(t, "multi.golden", got)
}

// TestMultiNoCompleteTrial: until a finished trial has every objective
// there is no front line, and the summary says so.
func TestMultiNoCompleteTrial(t *testing.T) {
	var out bytes.Buffer
	clk := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := New(&out, WithObjectives(two(), nil), WithClock(clk), WithInterval(time.Second))
	a := trial(0, hone.Config{"lr": 0.1})
	b := trial(1, hone.Config{"lr": 0.2})
	r.OnTrialStart(a)
	r.OnTrialStart(b)
	r.OnTrialResult(a, mres(a, 1, map[string]any{"acc": 0.5})) // no ms
	a.Status = hone.StatusTerminated
	r.OnTrialComplete(a)
	r.OnTrialResult(b, mres(b, 1, map[string]any{"acc": 0.5, "ms": 3})) // running
	r.OnExperimentEnd([]*hone.Trial{a, b})
	got := out.String()
	if strings.Contains(got, "Pareto front") {
		t.Errorf("a front without a finished trial with every objective:\n%s", got)
	}
	if !strings.Contains(got, "No finished trial reported every objective (acc, ms).\n") {
		t.Errorf("no line saying there is no front:\n%s", got)
	}
}

// constrained returns terminated trials with the given acc, ms and mem.
func constrained(rows [][3]float64) []*hone.Trial {
	var trials []*hone.Trial
	for i, v := range rows {
		tr := trial(i, hone.Config{"i": i})
		mres(tr, 1, map[string]any{"acc": v[0], "ms": v[1], "mem": v[2]})
		tr.Status = hone.StatusTerminated
		trials = append(trials, tr)
	}
	return trials
}

func TestMultiConstraintNoneFeasible(t *testing.T) {
	below := 100.0
	cs := hone.Constraints{{Metric: "mem", Below: &below}}
	var out bytes.Buffer
	clk := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := New(&out, WithObjectives(two(), cs), WithClock(clk))
	// t0000001 and t0000003 break the constraint least (by 20); t0000001
	// dominates t0000003 but, by Deb's rule, infeasible trials compare by
	// their violation only: both are on the front. t0000002 dominates
	// both but breaks the constraint more.
	trials := constrained([][3]float64{{0.9, 10, 150}, {0.8, 20, 120}, {0.99, 1, 130}, {0.7, 30, 120}})
	r.OnExperimentEnd(trials)
	if got, want := frontIDsOf(r), []string{"t0000001", "t0000003"}; !reflect.DeepEqual(got, want) {
		t.Errorf("front %q, want %q", got, want)
	}
	got := out.String()
	for _, want := range []string{
		"Pareto front: 2 of 4 finished trials (acc (max), ms (min)); 0 feasible under mem ≤ 100, so the front is of the least infeasible:\n" +
			"  t0000001: acc=0.8, ms=20 (i=1)\n" +
			"  t0000003: acc=0.7, ms=30 (i=3)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	var live bytes.Buffer
	lr := New(&live, WithObjectives(two(), cs), WithClock(clk), WithTTY(true))
	lr.OnExperimentResume(trials)
	lr.OnTrialStart(trial(4, hone.Config{"i": 4}))
	if want := "Pareto front so far (acc (max), ms (min)): 2 of 4 finished trials: t0000001, t0000003; 0 feasible under mem ≤ 100, so the front is of the least infeasible\n"; !strings.Contains(live.String(), want) {
		t.Errorf("live table lacks %q:\n%s", want, live.String())
	}
}

func TestMultiConstraintSomeFeasible(t *testing.T) {
	below, above := 100.0, 0.5
	cs := hone.Constraints{{Metric: "mem", Below: &below}, {Metric: "acc", Above: &above}}
	var out bytes.Buffer
	clk := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := New(&out, WithObjectives(two(), cs), WithClock(clk), WithTTY(true))
	// Feasible: t0000000, t0000001, t0000003, t0000004; t0000003 is
	// dominated by t0000001. t0000002 dominates them all but breaks
	// mem; t0000005 breaks acc.
	trials := constrained([][3]float64{
		{0.9, 10, 50}, {0.8, 5, 90}, {0.99, 1, 130}, {0.7, 30, 100}, {0.95, 40, 10}, {0.4, 1, 10},
	})
	r.OnExperimentResume(trials)
	r.OnTrialStart(trial(6, hone.Config{"i": 6}))
	if got, want := frontIDsOf(r), []string{"t0000000", "t0000001", "t0000004"}; !reflect.DeepEqual(got, want) {
		t.Errorf("front %q, want %q", got, want)
	}
	if want := "Pareto front so far (acc (max), ms (min)): 3 of 6 finished trials: t0000000, t0000001, t0000004; 4 feasible under mem ≤ 100, acc ≥ 0.5\n"; !strings.Contains(out.String(), want) {
		t.Errorf("live table lacks %q:\n%s", want, out.String())
	}
	out.Reset()
	r.OnExperimentEnd(trials)
	want := "Pareto front: 3 of 6 finished trials (acc (max), ms (min)); 4 feasible under mem ≤ 100, acc ≥ 0.5:\n" +
		"  t0000004: acc=0.95, ms=40 (i=4)\n" +
		"  t0000000: acc=0.9, ms=10 (i=0)\n" +
		"  t0000001: acc=0.8, ms=5 (i=1)\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, out.String())
	}
}

// TestMultiFrontMatchesSortConstrained checks the front against rank 0 of
// pareto.SortConstrained, which hone results --pareto uses, on random
// experiments with and without feasible trials, ties, missing and NaN
// values and trials that did not finish.
func TestMultiFrontMatchesSortConstrained(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	below := 5.0
	cs := hone.Constraints{{Metric: "mem", Below: &below}}
	objs := hone.Objectives{{Metric: "a", Mode: hone.Max}, {Metric: "b", Mode: hone.Min}, {Metric: "c", Mode: hone.Min}}
	for round := range 300 {
		nobj := 2 + round%2
		r := New(&bytes.Buffer{}, WithObjectives(objs[:nobj], cs))
		var trials []*hone.Trial
		var points [][]float64
		var violation []float64
		var ids []string
		memMin := 4.0 + float64(round%3)*2 // 4: some feasible; 6, 8: maybe none
		for i := range 30 {
			tr := trial(i, nil)
			m := map[string]any{"mem": memMin + float64(rng.IntN(4))}
			for _, o := range objs[:nobj] {
				m[o.Metric] = float64(rng.IntN(6))
			}
			switch rng.IntN(10) {
			case 0:
				delete(m, "b")
			case 1:
				m["a"] = math.NaN()
			case 2:
				tr.Status = hone.StatusRunning
			case 3:
				tr.Status = hone.StatusError
			}
			if tr.Status == hone.StatusRunning && rng.IntN(2) == 0 {
				tr.Status = hone.StatusTerminated
			}
			res := mres(tr, 1, m)
			trials = append(trials, tr)
			p, all := objs[:nobj].Losses(nil, res)
			if tr.Status == hone.StatusTerminated && all {
				points = append(points, p)
				violation = append(violation, cs.Violation(res))
				ids = append(ids, tr.ID)
			}
		}
		r.OnExperimentEnd(trials)
		var want []string
		for i, rank := range pareto.SortConstrained(points, violation) {
			if rank == 0 {
				want = append(want, ids[i])
			}
		}
		if got := frontIDsOf(r); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: front %q, want %q", round, got, want)
		}
	}
}

// TestMultiMaxRowsKeepsFront: with few rows the table keeps the running
// trial, then the front's trials, then the oldest.
func TestMultiMaxRowsKeepsFront(t *testing.T) {
	var out bytes.Buffer
	clk := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := New(&out, WithObjectives(two(), nil), WithClock(clk), WithMaxRows(4))
	// t0000007 and t0000008 are the front (they dominate every other
	// finished trial); t0000005 is running.
	var trials []*hone.Trial
	for i := range 10 {
		tr := trial(i, hone.Config{"i": i})
		m := map[string]any{"acc": 0.1 * float64(i%5), "ms": 100 - float64(i%5)}
		switch i {
		case 7:
			m = map[string]any{"acc": 0.9, "ms": 20}
		case 8:
			m = map[string]any{"acc": 0.8, "ms": 10}
		}
		mres(tr, 1, m)
		if i != 5 {
			tr.Status = hone.StatusTerminated
		}
		trials = append(trials, tr)
	}
	r.OnExperimentEnd(trials)
	if got, want := frontIDsOf(r), []string{"t0000007", "t0000008"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("front %q, want %q", got, want)
	}
	got := out.String()
	var shown []string
	for _, l := range strings.Split(got, "\n") {
		if id, _, ok := strings.Cut(l, "  "); ok && strings.HasPrefix(id, "t000000") {
			shown = append(shown, id)
		}
	}
	// The rows, then the summary's front lines.
	if want := []string{"t0000000", "t0000005", "t0000007", "t0000008"}; !reflect.DeepEqual(shown, want) {
		t.Errorf("rows shown %q, want %q:\n%s", shown, want, got)
	}
	if !strings.Contains(got, "... 6 more trials not shown (6 TERMINATED)") {
		t.Errorf("no hidden-trials line:\n%s", got)
	}
}

// TestMultiLongFront: the live line names five front trials and counts
// the others; the summary lists ten and points to hone results.
func TestMultiLongFront(t *testing.T) {
	var out bytes.Buffer
	clk := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := New(&out, WithObjectives(two(), nil), WithClock(clk), WithTTY(true))
	var trials []*hone.Trial
	for i := range 13 {
		tr := trial(i, hone.Config{"i": i})
		// Each is more accurate and slower than the one before: all on
		// the front, but t0000012 is dominated by t0000011.
		m := map[string]any{"acc": float64(i), "ms": float64(i)}
		if i == 12 {
			m = map[string]any{"acc": 11.0, "ms": 12.0}
		}
		mres(tr, 1, m)
		tr.Status = hone.StatusTerminated
		trials = append(trials, tr)
	}
	r.OnExperimentResume(trials)
	r.OnTrialStart(trial(13, hone.Config{"i": 13}))
	if want := "Pareto front so far (acc (max), ms (min)): 12 of 13 finished trials: t0000000, t0000001, t0000002, t0000003, t0000004, … (7 more)\n"; !strings.Contains(out.String(), want) {
		t.Errorf("live table lacks %q:\n%s", want, out.String())
	}
	out.Reset()
	r.OnExperimentEnd(trials)
	got := out.String()
	want := "Pareto front: 12 of 13 finished trials (acc (max), ms (min)):\n"
	for i := 11; i > 1; i-- {
		want += fmt.Sprintf("  t%07d: acc=%d, ms=%d (i=%d)\n", i, i, i, i)
	}
	want += "  … and 2 more: hone results --pareto lists them all\n"
	if !strings.Contains(got, want) {
		t.Errorf("summary lacks\n%s\nin\n%s", want, got)
	}
}

// TestObjectivesOfOne: with one objective and no constraint,
// WithObjectives draws what WithObjective draws, byte for byte.
func TestObjectivesOfOne(t *testing.T) {
	for _, o := range []hone.Objective{{Metric: "loss", Mode: hone.Min}, {Metric: "loss"}, {Metric: "loss", Mode: hone.Max}} {
		draw := func(opt Option) string {
			var out bytes.Buffer
			clk := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			scenario(New(&out, opt, WithClock(clk), WithMaxRows(2)), clk)
			return out.String()
		}
		one, list := draw(WithObjective(o)), draw(WithObjectives(hone.Objectives{o}, nil))
		if one != list {
			t.Errorf("%v: WithObjectives draws\n%s\nWithObjective draws\n%s", o, list, one)
		}
		if !strings.Contains(one, "Best trial: ") {
			t.Errorf("%v: no best trial:\n%s", o, one)
		}
	}
	// And the plain golden file stays as it was.
	var out bytes.Buffer
	clk := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	scenario(New(&out, WithObjectives(hone.Objectives{{Metric: "loss"}}, nil), WithClock(clk)), clk)
	golden(t, "plain.golden", out.String())
}

// TestObjectivesLastOptionWins: WithObjective after WithObjectives, or
// the other way round, leaves the last one in force.
func TestObjectivesLastOptionWins(t *testing.T) {
	r := New(&bytes.Buffer{}, WithObjectives(two(), nil), WithMetric("loss", hone.Min))
	if r.multi() || r.obj.Metric != "loss" {
		t.Errorf("WithMetric after WithObjectives: objs %v, obj %v", r.objs, r.obj)
	}
	r = New(&bytes.Buffer{}, WithMetric("loss", hone.Min), WithObjectives(two(), nil))
	if !r.multi() || r.obj.Metric != "" {
		t.Errorf("WithObjectives after WithMetric: objs %v, obj %v", r.objs, r.obj)
	}
}

package dashboard_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/scheduler/asha"
	"github.com/hone-tune/hone/spec"
)

// chromium returns the path of a Chromium or Chrome binary, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser is a headless Chromium for a test, with the console messages of
// its tab.
type browser struct {
	ctx context.Context

	mu      sync.Mutex
	console []chromedp.ConsoleMessage
}

// newBrowser starts Chromium. Without it, the test fails as root (the test
// script installs it then) and is skipped, loudly, otherwise.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromium()
	if path == "" {
		msg := "Chromium is not installed, so the dashboard's browser tests cannot run; install it with apt-get install -y chromium (scripts/test.sh does, as root)"
		if os.Getuid() == 0 {
			t.Fatal(msg)
		}
		fmt.Fprintf(os.Stderr, "\n*** SKIPPED: %s ***\n\n", msg)
		t.Skip(msg)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 1000),
		// No request may leave the machine, Chromium's own included.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium (%s): %v", path, err)
	}
	b := &browser{ctx: ctx}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.console = append(b.console, m)
			b.mu.Unlock()
		}
	}()
	return b
}

// errors returns the console's errors and uncaught exceptions since mark
// (a count of messages).
func (b *browser) errors(mark int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, m := range b.console[min(mark, len(b.console)):] {
		if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
			out = append(out, fmt.Sprintf("%s:%d %s", m.URL, m.Line+1, m))
		}
	}
	return out
}

func (b *browser) mark() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.console)
}

// open serves the dashboard of dir (see serve) and opens it in the tab,
// which leaves it for a blank page before the server stops, so that the
// page's event stream never sees the server go away.
func (b *browser) open(t *testing.T, dir string, info *report.Info, fragment string) {
	t.Helper()
	_, hs := serve(t, dir, info)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		defer cancel()
		_ = chromedp.Do(ctx, chromedp.Navigate("about:blank"))
	})
	b.do(t, "open the dashboard", chromedp.Navigate(hs.URL+"/"+fragment))
}

// do runs actions with a deadline of a minute.
func (b *browser) do(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// wait waits until the JavaScript expression is true, for a minute at most.
func (b *browser) wait(t *testing.T, what, js string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		state, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.getElementById('error').textContent + ' | shown ' + document.body.dataset.shown`))
		t.Fatalf("waiting for %s: %v (page: %s)", what, err, state)
	}
}

// eval evaluates a JavaScript expression of type T.
func eval[T any](t *testing.T, b *browser, js string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// drawn is a JavaScript expression that is true once the chart in the
// element with the id has data and its canvas shows a series: enough
// coloured pixels (axes, grid and labels are grey). With a colour
// [r, g, b], it counts pixels of that colour instead.
func drawn(id string, rgb ...int) string {
	match := `Math.max(r, g, bl) - Math.min(r, g, bl) > 60`
	if len(rgb) == 3 {
		match = fmt.Sprintf(`Math.abs(r - %d) < 12 && Math.abs(g - %d) < 12 && Math.abs(bl - %d) < 12`, rgb[0], rgb[1], rgb[2])
	}
	return fmt.Sprintf(`(() => {
  const c = window.hone && window.hone.charts[%[1]q];
  if (!c || c.u.series.length < 2) return false;
  if (!c.u.data.slice(1).some((s) => s.some((v) => v !== null && v !== undefined))) return false;
  const cv = document.querySelector('#' + %[1]q + ' canvas');
  if (!cv || !cv.width || !cv.height) return false;
  const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4) {
    const r = d[i], g = d[i + 1], bl = d[i + 2];
    if (d[i + 3] > 100 && (%[2]s)) n++;
  }
  return n > 30;
})()`, id, match)
}

// pythonASHA is an ASHA experiment of Python trials run as processes with
// hone's Python client: each prints a line to stdout and one to stderr,
// and the trial with x = 0.5 raises an exception before its first result.
const pythonASHA = `metric: loss
mode: min
seed: 3
num_samples: 9
command: [python3, train.py]
env: {PYTHONPATH: %s}
search_space:
  x: {uniform: [0, 0.9]}
  width: {choice: [8, 16, 32]}
points_to_evaluate:
  - {x: 0.5, width: 8}
scheduler: {name: asha, max_t: 9, grace_period: 1, reduction_factor: 3}
failure: {max_failures: 0}
max_concurrent_trials: 2
`

const pythonTrain = `import sys
import hone

cfg = hone.get_config()
x = cfg["x"]
print("training with x=%s" % x, flush=True)
print("a note on stderr", file=sys.stderr, flush=True)
if x == 0.5:
    raise RuntimeError("x = 0.5 is refused")
for i in range(1, 10):
    if hone.report({"loss": x + (1 - x) * 0.5 ** i}) == "stop":
        break
`

// manySpec is an ASHA experiment of simulated trials, as many as its %d
// says.
const manySpec = `metric: loss
mode: min
seed: 1
num_samples: %d
command: [unused]
search_space:
  rate: {uniform: [0.05, 0.5]}
  asymptote: {uniform: [0, 0.5]}
  width: {choice: [8, 16, 32, 64]}
scheduler: {name: asha, max_t: 9, grace_period: 1, reduction_factor: 3}
max_concurrent_trials: 32
`

// TestBrowser drives the dashboard in headless Chromium: the trial table
// of a real run (Python trials under ASHA), every chart, sorting and
// filtering, a trial's page, a result that arrives while the page is
// open, and the PBT lineage of the pbt_toy example; the console stays
// free of errors throughout.
func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium and runs real experiments")
	}
	b := newBrowser(t)

	t.Run("asha", func(t *testing.T) {
		mark := b.mark()
		body := fmt.Sprintf(pythonASHA, filepath.Join(repoRoot(t), "clients", "python"))
		x := startSpec(t, "asha", body, nil, [2]string{"train.py", pythonTrain})
		x.wait(t)
		exp, err := results.Open(x.dir)
		if err != nil {
			t.Fatal(err)
		}
		best, _, err := exp.Best(hone.Objective{Metric: "loss", Mode: hone.Min}, results.ScopeLast)
		if err != nil {
			t.Fatal(err)
		}
		var failed string
		for _, tr := range exp.Trials {
			if tr.Status == hone.StatusError {
				failed = tr.ID
			}
		}
		if len(exp.Trials) != 9 || failed == "" {
			t.Fatalf("the run has %d trials, failed %q; want 9 and one failed", len(exp.Trials), failed)
		}
		b.open(t, x.dir, nil, "")
		b.wait(t, "the table lists every trial", `document.querySelectorAll('#trials tbody tr').length === 9`)
		ids := eval[[]string](t, b, `Array.from(document.querySelectorAll('#trials tbody tr')).map((r) => r.dataset.id)`)
		want := []string{}
		for _, tr := range exp.Trials {
			want = append(want, tr.ID)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("table rows %v, want the trials %v", ids, want)
		}
		b.wait(t, "the learning curves draw, the best in red", drawn("curves", 214, 39, 40))
		b.wait(t, "the parallel coordinates draw", drawn("parallel"))
		b.wait(t, "the rungs of the one bracket draw", drawn("rungs-b0"))
		if n := eval[int](t, b, `document.querySelectorAll('#rungs-brackets tr[data-milestone]').length`); n != 3 {
			t.Errorf("rung table: %d rungs, want 3", n)
		}
		if got := eval[string](t, b, `document.querySelector('#c-best b').textContent`); !strings.Contains(got, best.ID) {
			t.Errorf("summary's best: %q, want %s", got, best.ID)
		}

		// Sort by the metric: the best first. Filter to ERROR: one row.
		b.do(t, "sort by the metric", chromedp.Click(chromedp.CSS(`#trials th[data-sort="value"]`)))
		b.wait(t, "the best trial first", fmt.Sprintf(`(document.querySelector('#trials tbody tr') || {dataset: {}}).dataset.id === %q`, best.ID))
		b.do(t, "filter to ERROR", chromedp.Click(chromedp.CSS(`#status-filter input[value="ERROR"]`)))
		b.wait(t, "only the failed trial", fmt.Sprintf(`(() => { const r = document.querySelectorAll('#trials tbody tr'); return r.length === 1 && r[0].dataset.id === %q; })()`, failed))

		// The failed trial's page: its error, stdout and stderr.
		b.do(t, "open the failed trial", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#trials tr[data-id=%q] a`, failed))))
		b.wait(t, "the trial page with its output", `document.getElementById('t-stdout').textContent.includes('training with x=0.5') &&
			document.getElementById('t-stderr').textContent.includes('RuntimeError') &&
			document.getElementById('t-error').textContent.trim() !== '' && document.getElementById('t-error').textContent !== '(none)'`)
		// The best trial's page draws its curve.
		b.do(t, "open the best trial", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = '#/trial/%s'`, best.ID)))
		b.wait(t, "the best trial's curve", drawn("t-chart"))
		b.wait(t, "the best trial's rungs, promoted up to the last", `(() => {
			const o = Array.from(document.querySelectorAll('#t-rungs tr[data-outcome]')).map((r) => r.dataset.outcome);
			return !document.getElementById('t-rungs-section').hidden && o.join() === 'promoted,promoted,completed'; })()`)
		if got := eval[string](t, b, `document.getElementById('t-id').textContent`); got != best.ID {
			t.Errorf("trial page shows %q, want %s", got, best.ID)
		}
		if errs := b.errors(mark); len(errs) > 0 {
			t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
		}
	})

	t.Run("live", func(t *testing.T) {
		mark := b.mark()
		gate := make(chan struct{})
		x := startSpec(t, "live", gatedSpec, gated(gate))
		b.open(t, x.dir, nil, "")
		b.wait(t, "the first result", `(() => { const r = document.querySelector('#trials tbody tr'); return !!r && r.textContent.includes('0.9'); })()`)
		b.do(t, "mark the page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
		close(gate)
		b.wait(t, "the new result, without a reload", `window.notReloaded === true && (() => {
			const r = document.querySelector('#trials tbody tr'); return !!r && r.textContent.includes('0.123'); })()`)
		b.wait(t, "the curve shows it", `(() => { const c = window.hone.charts.curves; return !!c && c.u.data[1].includes(0.123); })()`)
		x.wait(t)
		b.wait(t, "the trial shown finished", `document.querySelector('#trials tbody tr').textContent.includes('TERMINATED')`)
		if errs := b.errors(mark); len(errs) > 0 {
			t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
		}
	})

	t.Run("brackets", func(t *testing.T) {
		// ASHA with three brackets, followed while it runs: a chart and a
		// table per bracket, each with the trials the scheduler put in it.
		mark := b.mark()
		gate := make(chan struct{})
		rec := &brackets{of: map[string]string{}}
		x := startPlan(t, t.TempDir(), "brackets", bracketsSpec, held(gate), func(p *spec.Plan) {
			rec.sched = p.Experiment.Scheduler.(*asha.Scheduler)
			p.Experiment.Callbacks = append(p.Experiment.Callbacks, rec)
		})
		b.open(t, x.dir, nil, "")
		b.wait(t, "a section per bracket", `document.querySelectorAll('#rungs-brackets .bracket').length === 3 &&
			document.getElementById('rungs').hidden`)
		b.wait(t, "bracket 0 draws while the run goes on", drawn("rungs-b0"))
		close(gate)
		x.wait(t)
		counts := map[string]int{}
		for _, label := range rec.snapshot() {
			counts[label]++
		}
		if len(counts) < 2 {
			t.Fatalf("the trials ran in %v; the test needs several brackets", counts)
		}
		for i := range 3 {
			label := fmt.Sprintf("bracket %d", i)
			want := fmt.Sprintf("%s: %d trial", label, counts[label])
			b.wait(t, label+" lists its trials", fmt.Sprintf(`(() => {
				const h = document.querySelector('#rungs-brackets .bracket[data-bracket="%d"] .bracket-label');
				return !!h && h.textContent.startsWith(%q) &&
					document.querySelectorAll('#rungs-b%d-trials tr[data-id]').length === %d; })()`, i, want, i, counts[label]))
			ids := eval[[]string](t, b, fmt.Sprintf(`Array.from(document.querySelectorAll('#rungs-b%d-trials tr[data-id]')).map((r) => r.dataset.id)`, i))
			for _, id := range ids {
				if live := rec.snapshot()[id]; live != label {
					t.Errorf("%s lists trial %s, which ran in %s", label, id, live)
				}
			}
			if counts[label] > 0 {
				b.wait(t, label+" draws", drawn(fmt.Sprintf("rungs-b%d", i)))
			}
		}
		// A trial's page: each rung it reached is of its bracket.
		var id, label string
		for k, v := range rec.snapshot() {
			if v != "bracket 0" && (id == "" || k < id) {
				id, label = k, v
			}
		}
		b.do(t, "open a trial outside bracket 0", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = '#/trial/%s'`, id)))
		b.wait(t, "its rungs, of its bracket", fmt.Sprintf(`(() => {
			const rows = Array.from(document.querySelectorAll('#t-rungs tr[data-outcome]'));
			return document.getElementById('t-id').textContent === %q && rows.length > 0 &&
				rows.every((r) => r.dataset.bracket === %q && r.firstChild.textContent === %q); })()`, id, label, label))
		if errs := b.errors(mark); len(errs) > 0 {
			t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
		}
	})

	t.Run("many", func(t *testing.T) {
		// HONE_DASHBOARD_TRIALS=10000 runs it at the size the dashboard
		// is made for (half a minute for the run alone, here).
		n := 1000
		if v := os.Getenv("HONE_DASHBOARD_TRIALS"); v != "" {
			var err error
			if n, err = strconv.Atoi(v); err != nil || n < 100 {
				t.Fatalf("HONE_DASHBOARD_TRIALS=%q: want a count of at least 100", v)
			}
		}
		mark := b.mark()
		x := startSpec(t, "many", fmt.Sprintf(manySpec, n), func(spec.Process) (hone.Executor, error) {
			return sim.New(sim.Curve{MaxIterations: 9, Noise: 0.01}.New), nil
		})
		b.open(t, x.dir, nil, "")
		b.wait(t, "a first page of 50 trials", `document.querySelectorAll('#trials tbody tr').length === 50`)
		x.wait(t)
		b.wait(t, "every trial, finished", fmt.Sprintf(`document.getElementById('page-info').textContent === 'trials 1–50 of %d' &&
			document.querySelector('#c-trials b').textContent === '%d' &&
			Array.from(document.querySelectorAll('#summary .card')).some((c) => c.textContent === '%dTERMINATED')`, n, n, n))
		b.do(t, "the next page", chromedp.Click(chromedp.CSS(`#next`)))
		b.wait(t, "the second page", fmt.Sprintf(`document.getElementById('page-info').textContent === 'trials 51–100 of %d'`, n))
		exp, err := results.Open(x.dir)
		if err != nil {
			t.Fatal(err)
		}
		best, _, err := exp.Best(hone.Objective{Metric: "loss", Mode: hone.Min}, results.ScopeLast)
		if err != nil {
			t.Fatal(err)
		}
		b.do(t, "sort by the metric", chromedp.Click(chromedp.CSS(`#trials th[data-sort="value"]`)))
		b.wait(t, "the best trial first, on the first page", fmt.Sprintf(`(document.querySelector('#trials tbody tr') || {dataset: {}}).dataset.id === %q &&
			document.getElementById('page-info').textContent === 'trials 1–50 of %d'`, best.ID, n))
		for _, c := range []string{"curves", "parallel", "rungs-b0"} {
			b.wait(t, c+" draw", drawn(c))
		}
		if errs := b.errors(mark); len(errs) > 0 {
			t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
		}
	})

	t.Run("pbt_toy", func(t *testing.T) {
		mark := b.mark()
		goBin, err := exec.LookPath("go")
		if err != nil {
			t.Fatalf("the go command is needed to run examples/pbt_toy: %v", err)
		}
		out := filepath.Join(t.TempDir(), "toy")
		cmd := exec.Command(goBin, "run", ".", "-dir", out)
		cmd.Dir = filepath.Join(repoRoot(t), "examples", "pbt_toy")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go run examples/pbt_toy: %v\n%s", err, b)
		}
		dir := filepath.Join(out, "pbt")
		exp, err := results.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		exploits, err := exp.Exploits()
		if err != nil || len(exploits) == 0 {
			t.Fatalf("pbt_toy's PBT run: %d exploits, %v", len(exploits), err)
		}
		lines := 0
		f, err := os.Open(filepath.Join(dir, "pbt_global.txt"))
		if err != nil {
			t.Fatal(err)
		}
		for sc := bufio.NewScanner(f); sc.Scan(); {
			lines++
		}
		f.Close()
		// The example runs from Go and saves no spec: the metric is given.
		info := report.Info{Objective: hone.Objective{Metric: "Q", Mode: hone.Max}, Scope: results.ScopeLast, TimeAttr: hone.FieldTrainingIteration}
		b.open(t, dir, &info, "")
		b.wait(t, "the lineage lists every exploit", fmt.Sprintf(`!document.getElementById('lineage-section').hidden &&
			document.querySelectorAll('#lineage-table tr.exploit').length === %d`, lines))
		first := eval[string](t, b, `document.querySelector('#lineage-table tr.exploit').textContent`)
		x := exploits[0]
		for _, s := range []string{x.TargetID, x.DonorID, "h[0]", "→"} {
			if !strings.Contains(first, s) {
				t.Errorf("first exploit row %q lacks %q", first, s)
			}
		}
		b.wait(t, "the hyperparameter schedules draw", drawn("lineage-chart"))
		b.wait(t, "the learning curves draw", drawn("curves", 214, 39, 40))
		// A trial's page lists its own lineage.
		b.do(t, "open an exploited trial", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = '#/trial/%s'`, x.TargetID)))
		b.wait(t, "its lineage", `!document.getElementById('t-lineage-section').hidden && document.querySelectorAll('#t-lineage tr').length > 1`)
		if errs := b.errors(mark); len(errs) > 0 {
			t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
		}
	})
}

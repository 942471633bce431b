package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/spec"
	"github.com/hone-tune/hone/trial"
)

// frontSpec is an experiment of four trials with two objectives and a
// constraint: two that finish at once (a front trial, and one it
// dominates) and two that finish when frontGated's gate opens (a second
// front trial, and an infeasible one).
const frontSpec = `objectives:
  - {metric: accuracy, mode: max}
  - {metric: latency_ms, mode: min}
constraints:
  - {metric: latency_ms, below: 95}
num_samples: 4
max_concurrent_trials: 4
searcher: random
command: [unused]
search_space:
  width: {uniform: [1, 100]}
  quality: {uniform: [0, 1]}
points_to_evaluate:
  - {width: 10, quality: 1}
  - {width: 50, quality: 0.2}
  - {width: 90, quality: 1}
  - {width: 99, quality: 0.5}
`

// frontGated reports accuracy and latency_ms from the configuration at
// once; a trial wider than 60 then waits for the gate before it finishes.
func frontGated(gate <-chan struct{}) func(spec.Process) (hone.Executor, error) {
	return func(spec.Process) (hone.Executor, error) {
		return inproc.NewFunc(func(ctx context.Context, s trial.Session) error {
			w, _ := hone.Number(s.Config()["width"])
			q, _ := hone.Number(s.Config()["quality"])
			if err := s.Report(trial.Metrics{"accuracy": q * (1 - math.Exp(-w/30)), "latency_ms": 2 + w, "memory_mb": 10 * w * q}); err != nil {
				return err
			}
			if w > 60 {
				select {
				case <-gate:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		}), nil
	}
}

// TestFrontAPI: /api/front is the front of the finished trials as
// report.ParetoFront computes it, following the run, and null for an
// experiment with one objective.
func TestFrontAPI(t *testing.T) {
	gate := make(chan struct{})
	x := startSpec(t, "front", frontSpec, frontGated(gate))
	_, hs := serve(t, x.dir, nil)
	var f report.Front
	eventually(t, "the two trials that finish at once are points", func() bool {
		return tryJSON(t, hs.URL+"/api/front", &f) && len(f.Points) == 2
	})
	if f.Size != 1 || f.Finished != 2 || !f.ReferenceDerived || f.Hypervolume == nil {
		t.Errorf("front of the first two: %+v", f)
	}
	close(gate)
	x.wait(t)
	e, err := results.Open(x.dir)
	if err != nil {
		t.Fatal(err)
	}
	info, err := report.ReadInfo(x.dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := report.ParetoFront(e, info.Objectives, info.Constraints, nil)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "every trial is a point", func() bool {
		return tryJSON(t, hs.URL+"/api/front", &f) && len(f.Points) == 4
	})
	if f.Size != 2 || f.Size != want.Size || f.Feasible != 3 || *f.Hypervolume != *want.Hypervolume || !slices.Equal(f.Reference, want.Reference) {
		t.Errorf("front %+v, want %+v", f, want)
	}
	for _, p := range f.Points {
		w, _ := hone.Number(e.Trial(p.ID).Config["width"])
		if p.OnFront != (w == 10 || w == 90) || p.Feasible != (w != 99) {
			t.Errorf("trial of width %v: on the front %v, feasible %v", w, p.OnFront, p.Feasible)
		}
	}
	// The table marks the front's trials and the infeasible one, and
	// so does each trial's page.
	var tb report.Table
	getJSON(t, hs.URL+"/api/trials", http.StatusOK, &tb)
	for _, r := range tb.Rows {
		w, _ := hone.Number(r.Config["width"])
		if r.OnFront != (w == 10 || w == 90) || r.Infeasible != (w == 99) {
			t.Errorf("table row of width %v: front %v, infeasible %v", w, r.OnFront, r.Infeasible)
		}
		var tv struct {
			Row report.Row `json:"row"`
		}
		getJSON(t, hs.URL+"/api/trial?id="+r.ID, http.StatusOK, &tv)
		if tv.Row.OnFront != r.OnFront || tv.Row.Infeasible != r.Infeasible {
			t.Errorf("trial page of width %v: front %v, infeasible %v", w, tv.Row.OnFront, tv.Row.Infeasible)
		}
	}
	var sum struct {
		Best  *report.Best  `json:"best"`
		Front *report.Front `json:"front"`
	}
	getJSON(t, hs.URL+"/api/summary", http.StatusOK, &sum)
	if sum.Best != nil || sum.Front == nil || sum.Front.Size != 2 || *sum.Front.Hypervolume != *want.Hypervolume {
		t.Errorf("summary: best %+v, front %+v", sum.Best, sum.Front)
	}

	one := runSpec(t, "one", gatedSpec, gated(closed()))
	_, hs1 := serve(t, one, nil)
	resp, err := http.Get(hs1.URL + "/api/front")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "null" {
		t.Errorf("front of one objective: %d %q, want null", resp.StatusCode, body)
	}
}

// closed returns a closed gate.
func closed() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// TestBrowserFront follows a running experiment with two objectives in
// Chromium: the front chart draws the trials that finished, the front in
// red, and when two more finish (one on the front, one infeasible) the
// chart's points change without a reload, as do the summary's front and
// the table's shading. An experiment with three objectives gets a chart
// per pair.
func TestBrowserFront(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium and runs a real experiment")
	}
	b := newBrowser(t)
	mark := b.mark()
	gate := make(chan struct{})
	x := startSpec(t, "front", frontSpec, frontGated(gate))
	b.open(t, x.dir, nil, "")
	const chart = "front-0-1"
	b.wait(t, "the front chart of the two finished trials", fmt.Sprintf(`(() => {
		const f = window.hone.fronts[%[1]q]; return !!f && f.points === 2 && f.front.length === 1 &&
			!document.getElementById('front-section').hidden; })()`, chart))
	b.wait(t, "the front drawn in red", drawn(chart, 214, 39, 40))
	before := eval[[]string](t, b, fmt.Sprintf(`window.hone.fronts[%q].ids.slice().sort()`, chart))
	drawnBefore := eval[int](t, b, nonNull(chart))
	if got := eval[string](t, b, `document.querySelector('#c-front b').textContent`); got != "1 of 2 finished" {
		t.Errorf("summary's front before: %q", got)
	}
	axes := eval[string](t, b, fmt.Sprintf(`document.getElementById(%q).dataset.x + ' / ' + document.getElementById(%q).dataset.y`, chart, chart))
	if axes != "accuracy / latency_ms" {
		t.Errorf("front chart's axes: %q", axes)
	}
	b.do(t, "mark the page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	close(gate)
	x.wait(t)
	b.wait(t, "the two new points, without a reload", fmt.Sprintf(`window.notReloaded === true && (() => {
		const f = window.hone.fronts[%q]; return !!f && f.points === 4 && f.front.length === 2; })()`, chart))
	after := eval[[]string](t, b, fmt.Sprintf(`window.hone.fronts[%q].ids.slice().sort()`, chart))
	e, err := results.Open(x.dir)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, tr := range e.Trials {
		all = append(all, tr.ID)
	}
	slices.Sort(all)
	if len(before) != 2 || !slices.Equal(after, all) {
		t.Errorf("points before %v, after %v, want all of %v", before, after, all)
	}
	// Four trials and the reference point: one more value in each of the
	// chart's series but the line's, which joins the two front points.
	if got := eval[int](t, b, nonNull(chart)); got <= drawnBefore {
		t.Errorf("the chart holds %d values, %d before", got, drawnBefore)
	}
	b.wait(t, "an infeasible trial drawn in orange", drawn(chart, 255, 127, 14))
	b.wait(t, "the summary's front", `document.querySelector('#c-front b').textContent === '2 of 4 finished'`)
	b.wait(t, "the table shades the front's two trials and the infeasible one", `document.querySelectorAll('#trials tbody tr.front').length === 2 &&
		document.querySelectorAll('#trials tbody tr.infeasible').length === 1`)
	shaded := eval[[]string](t, b, `Array.from(document.querySelectorAll('#trials tbody tr.front')).map((r) => r.dataset.id).sort()`)
	if front := eval[[]string](t, b, fmt.Sprintf(`window.hone.fronts[%q].front.slice().sort()`, chart)); !slices.Equal(shaded, front) {
		t.Errorf("table shades %v, the chart's front is %v", shaded, front)
	}

	// Three objectives: a chart per pair, each with every trial.
	three := strings.Replace(frontSpec, "  - {metric: latency_ms, mode: min}\n", "  - {metric: latency_ms, mode: min}\n  - {metric: memory_mb, mode: min}\n", 1)
	y := startSpec(t, "three", three, frontGated(closed()))
	y.wait(t)
	b.open(t, y.dir, nil, "")
	for _, id := range []string{"front-0-1", "front-0-2", "front-1-2"} {
		b.wait(t, id+" draws every trial", fmt.Sprintf(`(() => { const f = window.hone.fronts[%q]; return !!f && f.points === 4; })()`, id))
		b.wait(t, id+" draws the front in red", drawn(id, 214, 39, 40))
	}
	if n := eval[int](t, b, `document.querySelectorAll('#front-charts .front-chart').length`); n != 3 {
		t.Errorf("%d front charts for three objectives, want 3", n)
	}
	if errs := b.errors(mark); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}

// nonNull is a JavaScript expression counting the values the chart with
// the id holds, over every series.
func nonNull(id string) string {
	return fmt.Sprintf(`window.hone.charts[%q].u.data.slice(1).reduce((n, s) => n + s.filter((v) => v !== null && v !== undefined).length, 0)`, id)
}

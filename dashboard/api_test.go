package dashboard_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/dashboard"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/spec"
	"github.com/hone-tune/hone/trial"
)

// ashaSpec is a small ASHA experiment of Go trials (curveFunc): twelve
// configurations, the first of which (x = 0.5) fails after its first
// result.
const ashaSpec = `metric: loss
mode: min
seed: 5
num_samples: 12
command: [unused]
search_space:
  x: {uniform: [0, 0.9]}
  width: {choice: [8, 16, 32]}
points_to_evaluate:
  - {x: 0.5, width: 8}
  - {x: 0.1, width: 16}
scheduler: {name: asha, max_t: 9, grace_period: 1, reduction_factor: 3}
failure: {max_failures: 0}
max_concurrent_trials: 2
`

// summaryView is the part of /api/summary the tests read.
type summaryView struct {
	report.Summary
	Version uint64   `json:"version"`
	Metrics []string `json:"metrics"`
}

// TestAPI reads a real ASHA experiment through the JSON API and checks it
// against the experiment as package results reads it.
func TestAPI(t *testing.T) {
	dir := runSpec(t, "asha", ashaSpec, curveFunc(9))
	exp, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	best, bestV, err := exp.Best(hone.Objective{Metric: "loss", Mode: hone.Min}, results.ScopeLast)
	if err != nil {
		t.Fatal(err)
	}
	_, hs := serve(t, dir, nil)
	api := hs.URL + "/api/"

	var sum summaryView
	getJSON(t, api+"summary", http.StatusOK, &sum)
	if sum.Trials != 12 || sum.Counts["TERMINATED"]+sum.Counts["ERROR"] != 12 || sum.Counts["ERROR"] < 1 {
		t.Errorf("summary: %d trials, counts %v; want 12, at least one ERROR", sum.Trials, sum.Counts)
	}
	if sum.Best == nil || sum.Best.ID != best.ID || sum.Best.Value != bestV {
		t.Errorf("summary best %+v, want %s %v", sum.Best, best.ID, bestV)
	}
	if sum.Info.Metric != "loss" || sum.Info.Rungs == nil || !slices.Equal(sum.Info.Rungs.Milestones, []float64{1, 3, 9}) {
		t.Errorf("summary info %+v", sum.Info)
	}
	if !slices.Contains(sum.Metrics, "loss") || !slices.Contains(sum.Metrics, "training_iteration") {
		t.Errorf("metrics to choose from: %v", sum.Metrics)
	}

	var tb report.Table
	getJSON(t, api+"trials", http.StatusOK, &tb)
	if tb.Total != 12 || len(tb.Rows) != 12 || !slices.Equal(tb.ConfigKeys, []string{"width", "x"}) {
		t.Fatalf("table: %d of %d rows, keys %v", len(tb.Rows), tb.Total, tb.ConfigKeys)
	}
	for i, r := range tb.Rows {
		if r.ID != exp.Trials[i].ID {
			t.Errorf("row %d is %s, want %s (creation order)", i, r.ID, exp.Trials[i].ID)
		}
	}
	getJSON(t, api+"trials?sort=value", http.StatusOK, &tb)
	if tb.Rows[0].ID != best.ID {
		t.Errorf("sorted by value, the first row is %s, want the best %s", tb.Rows[0].ID, best.ID)
	}
	for i := 1; i < len(tb.Rows); i++ {
		a, b := tb.Rows[i-1].Value, tb.Rows[i].Value
		if a == nil && b != nil || a != nil && b != nil && *a > *b {
			t.Errorf("sorted by value: row %d (%v) before row %d (%v)", i-1, a, i, b)
		}
	}
	getJSON(t, api+"trials?sort=config/x&desc=1&offset=4&limit=3", http.StatusOK, &tb)
	if len(tb.Rows) != 3 || tb.Offset != 4 || tb.Matched != 12 {
		t.Errorf("page: %d rows at %d of %d", len(tb.Rows), tb.Offset, tb.Matched)
	}
	for i := 1; i < len(tb.Rows); i++ {
		if tb.Rows[i-1].Config["x"].(float64) < tb.Rows[i].Config["x"].(float64) {
			t.Errorf("sorted by x descending: %v before %v", tb.Rows[i-1].Config["x"], tb.Rows[i].Config["x"])
		}
	}
	getJSON(t, api+"trials?status=ERROR", http.StatusOK, &tb)
	if tb.Matched != sum.Counts["ERROR"] || tb.Matched == 0 {
		t.Errorf("filtered by ERROR: %d rows, want %d", tb.Matched, sum.Counts["ERROR"])
	}
	failed := tb.Rows[0]
	for _, r := range tb.Rows {
		if r.Status != "ERROR" || !strings.Contains(r.Error, "fails on purpose") {
			t.Errorf("filtered by ERROR: row %+v", r)
		}
	}
	getJSON(t, api+"trials?sort=nonsense", http.StatusBadRequest, nil)
	getJSON(t, api+"trials?limit=-1", http.StatusBadRequest, nil)
	getJSON(t, api+"summary?mode=up", http.StatusBadRequest, nil)

	var c report.Curves
	getJSON(t, api+"curves", http.StatusOK, &c)
	if c.Best != best.ID || c.Trials != 12 || len(c.Series) != 12 || c.X != "training_iteration" || !slices.IsSorted(c.Xs) {
		t.Errorf("curves: best %s, %d series of %d trials, x %s, xs %v", c.Best, len(c.Series), c.Trials, c.X, c.Xs)
	}

	var rg report.Rungs
	getJSON(t, api+"rungs", http.StatusOK, &rg)
	if len(rg.Rungs) != 3 {
		t.Fatalf("rungs: %+v", rg)
	}
	if rg.Rungs[0].Reached != 12 || rg.Rungs[0].Counts[report.OutcomeStopped] == 0 || rg.Rungs[0].Counts[report.OutcomeError] == 0 {
		t.Errorf("first rung: %+v; want every trial, some stopped, the failed one", rg.Rungs[0])
	}
	for k := 0; k+1 < len(rg.Rungs); k++ {
		if p, next := rg.Rungs[k].Counts[report.OutcomePromoted], rg.Rungs[k+1].Reached; p != next {
			t.Errorf("rung %v promoted %d trials, rung %v was reached by %d", rg.Rungs[k].Milestone, p, rg.Rungs[k+1].Milestone, next)
		}
	}
	if last := rg.Rungs[2]; last.Reached == 0 || last.Counts[report.OutcomeCompleted] != last.Reached {
		t.Errorf("last rung: %+v; every trial there completes", last)
	}

	var pc report.Parallel
	getJSON(t, api+"parallel", http.StatusOK, &pc)
	names := []string{}
	for _, a := range pc.Axes {
		names = append(names, a.Name)
	}
	if !slices.Equal(names, []string{"width", "x", "loss"}) || len(pc.Lines) != 12 || pc.Best != best.ID {
		t.Errorf("parallel: axes %v, %d lines, best %s", names, len(pc.Lines), pc.Best)
	}
	var lin any
	getJSON(t, api+"lineage", http.StatusOK, &lin)
	if lin != nil {
		t.Errorf("lineage of an ASHA experiment: %v", lin)
	}

	var tv struct {
		Row         report.Row `json:"row"`
		Dir         string     `json:"dir"`
		Error       string     `json:"error"`
		Checkpoints []string   `json:"checkpoints"`
		Files       []struct {
			Name string `json:"name"`
		} `json:"files"`
		Results []map[string]any   `json:"results"`
		Rows    int                `json:"rows"`
		Rungs   []report.TrialRung `json:"rungs"`
	}
	getJSON(t, api+"trial?id="+url.QueryEscape(failed.ID), http.StatusOK, &tv)
	if tv.Row.ID != failed.ID || !strings.Contains(tv.Error, "fails on purpose") || tv.Rows != 1 || len(tv.Results) != 1 ||
		len(tv.Rungs) != 1 || tv.Rungs[0].Milestone != 1 || tv.Rungs[0].Outcome != report.OutcomeError {
		t.Errorf("trial page of %s: %+v", failed.ID, tv)
	}
	if !slices.ContainsFunc(tv.Files, func(f struct {
		Name string `json:"name"`
	}) bool {
		return f.Name == "error.txt"
	}) {
		t.Errorf("trial %s: files %v, no error.txt", failed.ID, tv.Files)
	}
	resp, err := http.Get(api + "file?" + url.Values{"path": {tv.Dir + "/error.txt"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "fails on purpose") {
		t.Errorf("error.txt: %d %q", resp.StatusCode, b)
	}
	var entries []struct {
		Name string `json:"name"`
	}
	getJSON(t, api+"ls?"+url.Values{"path": {tv.Dir}}.Encode(), http.StatusOK, &entries)
	if !slices.ContainsFunc(entries, func(e struct {
		Name string `json:"name"`
	}) bool {
		return e.Name == "result.json"
	}) {
		t.Errorf("listing of %s: %v", tv.Dir, entries)
	}
	getJSON(t, api+"trial?id=nope", http.StatusNotFound, nil)
	getJSON(t, api+"file?path=no/such/file", http.StatusNotFound, nil)

	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		req, _ := http.NewRequest(m, hs.URL+"/api/summary", strings.NewReader("{}"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d, want 405", m, resp.StatusCode)
		}
	}
	resp, err = http.Get(hs.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "assets/app.js") || resp.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("index: %d %q", resp.StatusCode, b)
	}
	// No asset refers to anything outside the dashboard's own server.
	for _, a := range []string{"/assets/app.js", "/assets/app.css", "/"} {
		resp, err := http.Get(hs.URL + a)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), "http://") || strings.Contains(string(b), "https://") || strings.Contains(string(b), "//cdn") {
			t.Errorf("%s refers to another server", a)
		}
	}
}

// gated is a Go trainable whose trials report loss 0.9, wait until the
// test closes gate, and then report loss 0.123 and end.
func gated(gate <-chan struct{}) func(spec.Process) (hone.Executor, error) {
	return func(spec.Process) (hone.Executor, error) {
		return inproc.NewFunc(func(ctx context.Context, s trial.Session) error {
			if err := s.Report(trial.Metrics{"loss": 0.9}); err != nil {
				return err
			}
			select {
			case <-gate:
			case <-ctx.Done():
				return ctx.Err()
			}
			return s.Report(trial.Metrics{"loss": 0.123})
		}), nil
	}
}

const gatedSpec = `metric: loss
mode: min
num_samples: 1
command: [unused]
search_space:
  x: {uniform: [0, 1]}
`

// TestEventsAnnounceNewResults follows a running experiment over the event
// stream: a result reported while the test watches brings a new version,
// after which the API shows it.
func TestEventsAnnounceNewResults(t *testing.T) {
	gate := make(chan struct{})
	x := startSpec(t, "live", gatedSpec, gated(gate))
	_, hs := serve(t, x.dir, nil)
	api := hs.URL + "/api/"
	var tb report.Table
	eventually(t, "the first result shows", func() bool {
		return tryJSON(t, api+"trials", &tb) && len(tb.Rows) == 1 && tb.Rows[0].Value != nil && *tb.Rows[0].Value == 0.9
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, api+"events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("events: content type %q", ct)
	}
	versions := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				versions <- v
			}
		}
		close(versions)
	}()
	first := <-versions
	close(gate)
	for v := range versions {
		if v == first {
			continue
		}
		getJSON(t, api+"trials", http.StatusOK, &tb)
		if tb.Rows[0].Value != nil && *tb.Rows[0].Value == 0.123 {
			return
		}
	}
	t.Fatal("the event stream ended before the new result showed")
}

// TestWaitsForTheJournal serves a directory before its experiment begins
// (hone run --dashboard): the summary says it waits, the rest of the API
// answers 503, and once a run writes its journal there the dashboard
// shows it. Without Wait, a directory without a journal is an error.
func TestWaitsForTheJournal(t *testing.T) {
	empty := t.TempDir()
	if _, err := dashboard.New(dashboard.Options{Dir: empty}); err == nil || !strings.Contains(err.Error(), "no experiment journal") {
		t.Errorf("a directory without a journal: %v", err)
	}
	gate := make(chan struct{})
	close(gate)
	base := t.TempDir()
	dir := filepath.Join(base, "results", "late")
	_, hs := serve(t, dir, &report.Info{Objective: hone.Objective{Metric: "loss", Mode: hone.Min}, Scope: results.ScopeLast, TimeAttr: hone.FieldTrainingIteration})
	var w struct {
		Waiting bool `json:"waiting"`
	}
	getJSON(t, hs.URL+"/api/summary", http.StatusOK, &w)
	if !w.Waiting {
		t.Fatal("the summary before the journal exists does not say it waits")
	}
	getJSON(t, hs.URL+"/api/trials", http.StatusServiceUnavailable, nil)
	x := startSpecIn(t, base, "late", gatedSpec, gated(gate))
	if x.dir != dir {
		t.Fatalf("the run is in %s, not %s", x.dir, dir)
	}
	x.wait(t)
	var sum summaryView
	eventually(t, "the summary shows the run", func() bool {
		getJSON(t, hs.URL+"/api/summary", http.StatusOK, &sum)
		return sum.Trials == 1 && sum.Counts["TERMINATED"] == 1
	})
}

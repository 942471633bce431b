package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/spectest"
	"github.com/hone-tune/hone/pareto"
	"github.com/hone-tune/hone/progress"
	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/spec"
)

// tradeOff runs TradeOff's trials in-process.
func tradeOff(spec.Process) (hone.Executor, error) { return spectest.TradeOff(2), nil }

// frontOf computes, from the experiment's result files and the
// definition of dominance, the ids of the trials on the front of
// accuracy (max) and latency_ms (min) among those whose memory_mb is at
// most memory, and their points as losses.
func frontOf(t *testing.T, dir string, memory float64) ([]string, [][]float64) {
	t.Helper()
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	type pt struct {
		id string
		p  []float64
	}
	var feasible []pt
	for _, tr := range e.Trials {
		last, err := tr.Last()
		if err != nil || tr.Status != hone.StatusTerminated {
			t.Fatalf("trial %s: %s, %v", tr.ID, tr.Status, err)
		}
		if last["memory_mb"].(float64) <= memory {
			feasible = append(feasible, pt{tr.ID, []float64{-last["accuracy"].(float64), last["latency_ms"].(float64)}})
		}
	}
	var ids []string
	var pts [][]float64
	for _, a := range feasible {
		dominated := false
		for _, b := range feasible {
			if b.p[0] <= a.p[0] && b.p[1] <= a.p[1] && (b.p[0] < a.p[0] || b.p[1] < a.p[1]) {
				dominated = true
			}
		}
		if !dominated {
			ids = append(ids, a.id)
			pts = append(pts, a.p)
		}
	}
	slices.Sort(ids)
	return ids, pts
}

// TestResultsPareto runs an experiment with two objectives and a
// constraint and checks what status and results print: the front's
// trials (against the definition), its size and hypervolume against the
// derived and a given reference point, as a table, CSV and JSON, and the
// usage errors.
func TestResultsPareto(t *testing.T) {
	c := cli{t: t, exec: tradeOff}
	path, dir := writeSpec(t, "mo", spectest.TradeOffSpec(6, 24, "constraints:\n  - {metric: memory_mb, below: 400}\n"))
	code, out, errOut := c.run("run", path)
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	if want := "hone: done; the trials no other beats on every objective (accuracy (max), latency_ms (min)): hone results " + dir + " --pareto"; !strings.Contains(errOut, want) {
		t.Errorf("run's last words: %q, want %q", errOut, want)
	}
	ids, pts := frontOf(t, dir, 400)
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) < 2 {
		t.Fatalf("the front has %d trials; the test needs several", len(ids))
	}
	derived := pareto.Hypervolume(pts, pareto.Reference(pts))

	// The table of the front.
	code, out, errOut = c.run("results", dir, "--pareto")
	if code != exitOK {
		t.Fatalf("results --pareto: %d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "Pareto front (accuracy (max), latency_ms (min)): ") ||
		!strings.Contains(lines[0], progress.Display(float64(len(ids)))+" of 24 finished trials") ||
		!strings.Contains(lines[0], "feasible under memory_mb ≤ 400") {
		t.Errorf("first line: %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], "Hypervolume: "+progress.Display(derived)+" against the reference point accuracy=") ||
		!strings.Contains(lines[1], "derived from the front") {
		t.Errorf("hypervolume line: %q, want %s derived", lines[1], progress.Display(derived))
	}
	head := strings.Fields(lines[2])
	if !slices.Equal(head[:6], []string{"Trial", "accuracy", "(max)", "latency_ms", "(min)", "feasible"}) {
		t.Errorf("header: %q", lines[2])
	}
	var shown []string
	for _, l := range lines[3:] {
		f := strings.Fields(l)
		shown = append(shown, f[0])
		if f[3] != "yes" {
			t.Errorf("front row %q is not shown feasible", l)
		}
	}
	if slices.Sort(shown); !slices.Equal(shown, ids) {
		t.Errorf("front %v, want %v", shown, ids)
	}

	// A given reference point, in the metrics' units: accuracy 0,
	// latency 100.
	code, out, _ = c.run("results", dir, "--pareto", "--reference", "0,100")
	given := pareto.Hypervolume(pts, []float64{0, 100})
	if code != exitOK || !strings.Contains(out, "Hypervolume: "+progress.Display(given)+" against the reference point accuracy=0, latency_ms=100 (given with --reference)") {
		t.Errorf("results --pareto --reference 0,100: %d, want hypervolume %s:\n%s", code, progress.Display(given), out)
	}

	// CSV: a row per front trial.
	code, out, _ = c.run("results", dir, "--pareto", "--format", "csv")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != exitOK || err != nil || len(rows) != len(ids)+1 {
		t.Fatalf("results --pareto --format csv: %d %v\n%s", code, err, out)
	}
	if !slices.Equal(rows[0], []string{"trial_id", "accuracy", "latency_ms", "feasible", "config/quality", "config/width"}) {
		t.Errorf("CSV header %q", rows[0])
	}
	var csvIDs []string
	for _, r := range rows[1:] {
		csvIDs = append(csvIDs, r[0])
	}
	if slices.Sort(csvIDs); !slices.Equal(csvIDs, ids) {
		t.Errorf("CSV trials %v, want %v", csvIDs, ids)
	}

	// JSON: the front with its counts and reference point.
	code, out, _ = c.run("results", dir, "--pareto", "--format", "json", "--reference", "0,100")
	var js struct {
		Size        int       `json:"size"`
		Finished    int       `json:"finished"`
		Hypervolume float64   `json:"hypervolume"`
		Reference   []float64 `json:"reference"`
		Derived     bool      `json:"reference_derived"`
		Trials      []struct {
			ID       string    `json:"id"`
			Values   []float64 `json:"values"`
			Feasible bool      `json:"feasible"`
		} `json:"trials"`
	}
	if err := json.Unmarshal([]byte(out), &js); code != exitOK || err != nil {
		t.Fatalf("results --pareto --format json: %d %v\n%s", code, err, out)
	}
	if js.Size != len(ids) || js.Finished != 24 || js.Hypervolume != given || !slices.Equal(js.Reference, []float64{0, 100}) || js.Derived || len(js.Trials) != len(ids) {
		t.Errorf("JSON: %+v", js)
	}
	for k := 1; k < len(js.Trials); k++ {
		if js.Trials[k].Values[0] > js.Trials[k-1].Values[0] {
			t.Errorf("JSON trials not ordered by accuracy, best first: %+v", js.Trials)
		}
	}

	// status and results: the front's size and hypervolume, a column
	// per objective, the front first.
	for _, cmd := range []string{"status", "results"} {
		code, out, _ = c.run(cmd, dir)
		if code != exitOK || !strings.Contains(out, "Pareto front (accuracy (max), latency_ms (min)): ") ||
			!strings.Contains(out, "Hypervolume: "+progress.Display(derived)+" ") || !strings.Contains(out, "latency_ms (min)  front") {
			t.Errorf("%s:\n%s", cmd, out)
		}
		front := 0
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "TERMINATED") && strings.Contains(l, " yes ") {
				front++
			}
		}
		if front != len(ids) {
			t.Errorf("%s marks %d trials on the front, want %d:\n%s", cmd, front, len(ids), out)
		}
		// The reference point given, as results --pareto takes it.
		code, out, _ = c.run(cmd, dir, "--reference", "0,100")
		if code != exitOK || !strings.Contains(out, "Hypervolume: "+progress.Display(given)+" against the reference point accuracy=0, latency_ms=100 (given with --reference)") {
			t.Errorf("%s --reference 0,100: %d, want hypervolume %s:\n%s", cmd, code, progress.Display(given), out)
		}
		code, _, errOut = c.run(cmd, dir, "--reference", "0")
		if code != exitUsage || !strings.Contains(errOut, "1 values for 2 objectives") {
			t.Errorf("%s --reference 0: %d, want a usage error naming the count:\n%s", cmd, code, errOut)
		}
	}
	// The table as JSON: every trial, the front first, with each
	// objective's value.
	code, out, _ = c.run("results", dir, "--format", "json")
	var table struct {
		Objectives []hone.Objective `json:"objectives"`
		Front      struct {
			Size        int     `json:"size"`
			Hypervolume float64 `json:"hypervolume"`
		} `json:"front"`
		Trials []struct {
			ID         string    `json:"id"`
			Status     string    `json:"status"`
			Values     []float64 `json:"values"`
			Front      bool      `json:"front"`
			Infeasible bool      `json:"infeasible"`
		} `json:"trials"`
	}
	if err := json.Unmarshal([]byte(out), &table); code != exitOK || err != nil {
		t.Fatalf("results --format json: %d %v\n%s", code, err, out)
	}
	if len(table.Trials) != 24 || len(table.Objectives) != 2 || table.Front.Size != len(ids) || table.Front.Hypervolume != derived {
		t.Errorf("results --format json: %d trials, objectives %v, front %+v", len(table.Trials), table.Objectives, table.Front)
	}
	var jsonFront []string
	for k, tr := range table.Trials {
		if tr.Front {
			jsonFront = append(jsonFront, tr.ID)
			if k >= len(ids) {
				t.Errorf("results --format json: front trial %s at place %d, after others", tr.ID, k)
			}
		}
		last, err := e.Trial(tr.ID).Last()
		if err != nil || tr.Status != "TERMINATED" || len(tr.Values) != 2 || tr.Values[0] != last["accuracy"] || tr.Values[1] != last["latency_ms"] ||
			tr.Infeasible != (last["memory_mb"].(float64) > 400) {
			t.Errorf("results --format json: trial %+v, last result %v (%v)", tr, last, err)
		}
	}
	if slices.Sort(jsonFront); !slices.Equal(jsonFront, ids) {
		t.Errorf("results --format json: front %v, want %v", jsonFront, ids)
	}

	code, out, _ = c.run("results", dir)
	lines = strings.Split(out, "\n")
	for _, l := range lines[5 : 5+len(ids)] {
		if !strings.Contains(l, " yes ") {
			t.Errorf("results: the front is not first:\n%s", out)
			break
		}
	}

	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--best"}, "--best: the experiment has several objectives or constraints (accuracy (max), latency_ms (min)), so its best trials are its Pareto front: pass --pareto"},
		{[]string{"--pareto", "--reference", "1"}, `--reference "1": 1 values for 2 objectives: give one per objective, comma-separated, in order (accuracy, latency_ms)`},
		{[]string{"--pareto", "--reference", "1,x"}, `--reference "1,x": "x" (latency_ms) is not a finite number`},
		{[]string{"--format", "xml"}, `--format "xml": allowed values are table, csv and json`},
		{[]string{"--pareto", "--scope", "avg"}, "--scope avg with --pareto: the front compares each trial's last result"},
		{[]string{"--pareto", "--best"}, "--best and --pareto: give one"},
		{[]string{"--csv", "--format", "json"}, "--csv and --format json: give one"},
	} {
		code, _, errOut := c.run(append([]string{"results", dir}, bad.args...)...)
		if code != exitUsage || !strings.Contains(errOut, bad.want) {
			t.Errorf("results %v: %d %q, want %q", bad.args, code, errOut, bad.want)
		}
	}

	// hone plot draws the front, against the reference point given.
	plotDir := filepath.Join(t.TempDir(), "plots")
	code, out, errOut = c.run("plot", dir, "--out", plotDir, "--reference", "0,100")
	if code != exitOK || !strings.Contains(out, filepath.Join(plotDir, "pareto_front.svg")) {
		t.Fatalf("plot: %d\n%s\n%s", code, out, errOut)
	}
	svg, err := os.ReadFile(filepath.Join(plotDir, "pareto_front.svg"))
	if err != nil || !strings.Contains(string(svg), "hypervolume "+strconv.FormatFloat(given, 'g', 4, 64)+" against the reference point (0, 100), given") {
		t.Errorf("pareto_front.svg does not show the hypervolume %v against the given point: %v", given, err)
	}
	code, _, errOut = c.run("plot", dir, "--out", plotDir, "--reference", "0")
	if code != exitUsage || !strings.Contains(errOut, `--reference "0": 1 values for 2 objectives`) {
		t.Errorf("plot --reference 0: %d %q", code, errOut)
	}
}

// TestResultsParetoOneObjective: with one objective the front is the
// best trial; the best trial and the table are written as JSON, best
// first; --reference without --pareto is refused.
func TestResultsParetoOneObjective(t *testing.T) {
	c := cli{t: t, exec: goTrainer(nil)}
	path, dir := writeSpec(t, "grid", gridSpec)
	if code, out, errOut := c.run("run", path); code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	best, v, err := e.Best(hone.Objective{Metric: "score", Mode: hone.Max}, results.ScopeLast)
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ := c.run("results", dir, "--pareto", "--format", "csv")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != exitOK || err != nil || len(rows) != 2 || rows[1][0] != best.ID || rows[1][1] != results.FormatNumber(v) {
		t.Errorf("results --pareto of one objective: %d %v\n%s, want the best trial %s (%v)", code, err, out, best.ID, v)
	}
	code, out, _ = c.run("results", dir, "--best", "--format", "json")
	var js struct {
		ID     string         `json:"id"`
		Metric string         `json:"metric"`
		Score  float64        `json:"score"`
		Config map[string]any `json:"config"`
	}
	if err := json.Unmarshal([]byte(out), &js); code != exitOK || err != nil || js.ID != best.ID || js.Score != v || js.Metric != "score" || js.Config["x"] != best.Config["x"] {
		t.Errorf("results --best --format json: %d %v %+v, want %s (%v)", code, err, js, best.ID, v)
	}
	code, out, _ = c.run("results", dir, "--format", "json")
	var table struct {
		Metric string `json:"metric"`
		Trials []struct {
			ID    string  `json:"id"`
			Score float64 `json:"score"`
		} `json:"trials"`
	}
	if err := json.Unmarshal([]byte(out), &table); code != exitOK || err != nil || table.Metric != "score" || len(table.Trials) != 3 || table.Trials[0].ID != best.ID || table.Trials[0].Score != v {
		t.Errorf("results --format json: %d %v %+v, want %s first", code, err, table, best.ID)
	}
	code, _, errOut := c.run("results", dir, "--reference", "1")
	if code != exitUsage || !strings.Contains(errOut, "--reference: the experiment has one objective and no constraint") {
		t.Errorf("results --reference without --pareto: %d %q", code, errOut)
	}
}

// TestExampleMultiObjective runs examples/multiobjective.yaml as its
// comment says, its trials real Python processes, and checks that hone
// results --pareto lists the front of its trials, under its memory
// constraint, with the hypervolume against the reference point the
// comment gives.
func TestExampleMultiObjective(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 24 Python trials")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("SKIPPED: no python3: the example's trials are a Python script")
	}
	c := cli{t: t}
	storage := t.TempDir()
	example := filepath.Join(repoRoot(t), "examples", "multiobjective.yaml")
	code, runOut, errOut := c.run("run", example, "--storage", storage)
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, runOut, errOut)
	}
	dir := filepath.Join(storage, "multiobjective")
	ids, pts := frontOf(t, dir, 1500)
	// The run's summary lists the same front, not a best trial by the
	// first objective.
	_, summary, _ := strings.Cut(runOut, "Experiment finished after")
	head := fmt.Sprintf("Pareto front: %d of 24 finished trials (accuracy (max), latency_ms (min)); ", len(ids))
	if !strings.Contains(summary, head) || strings.Contains(runOut, "Best trial") {
		t.Errorf("run's summary lacks %q:\n%s", head, summary)
	}
	for _, id := range ids {
		if !strings.Contains(summary, "\n  "+id+": accuracy=") {
			t.Errorf("run's summary does not list %s of the front:\n%s", id, summary)
		}
	}
	code, out, errOut := c.run("results", dir, "--pareto", "--reference", "0.5,10", "--format", "json")
	var js struct {
		Finished    int     `json:"finished"`
		Hypervolume float64 `json:"hypervolume"`
		Trials      []struct {
			ID string `json:"id"`
		} `json:"trials"`
	}
	if err := json.Unmarshal([]byte(out), &js); code != exitOK || err != nil {
		t.Fatalf("results --pareto: %d %v\n%s%s", code, err, out, errOut)
	}
	var got []string
	for _, tr := range js.Trials {
		got = append(got, tr.ID)
	}
	slices.Sort(got)
	// Accuracy above 0.5 and latency below 10 ms count: accuracy's loss
	// is its negation.
	want := pareto.Hypervolume(pts, []float64{-0.5, 10})
	if js.Finished != 24 || !slices.Equal(got, ids) || js.Hypervolume != want {
		t.Errorf("front %v of %d finished trials, hypervolume %v; want %v of 24, %v", got, js.Finished, js.Hypervolume, ids, want)
	}
}

// TestHypervolumeLine: the line says why there is no hypervolume.
func TestHypervolumeLine(t *testing.T) {
	objs := hone.Objectives{{Metric: "a", Mode: hone.Max}, {Metric: "b", Mode: hone.Min}}
	hv := 2.5
	for _, c := range []struct {
		f    report.Front
		want string
	}{
		{report.Front{Objectives: objs}, "Hypervolume: none yet (no finished trial with every objective)"},
		{report.Front{Objectives: objs, Size: 2}, "Hypervolume: none (no feasible trial on the front)"},
		{report.Front{Objectives: objs, Size: 2, Hypervolume: &hv, Reference: []float64{0.5, 10}}, "Hypervolume: 2.5 against the reference point a=0.5, b=10 (given with --reference)"},
		{report.Front{Objectives: objs, Size: 2, Hypervolume: &hv, Reference: []float64{0.5, 10}, ReferenceDerived: true}, "Hypervolume: 2.5 against the reference point a=0.5, b=10 (derived from the front: "},
	} {
		if got := hypervolumeLine(&c.f); !strings.HasPrefix(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.f, got, c.want)
		}
	}
}

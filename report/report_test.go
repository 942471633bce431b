package report_test

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/spectest"
	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/results"
)

func openExp(t *testing.T, dir string) (*results.Experiment, report.Info) {
	t.Helper()
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	info, err := report.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	return e, info
}

const fifoSpec = `metric: loss
mode: %s
seed: 2
num_samples: 8
command: [unused]
search_space:
  x: {uniform: [0, 0.9]}
  lr: {loguniform: [0.0001, 0.1]}
  opt: {choice: [adam, sgd]}
  fixed: 3
points_to_evaluate:
  - {x: 0.5, lr: 0.01, opt: sgd}
failure: {max_failures: 0}
max_concurrent_trials: 2
stop: {training_iteration: 6}
`

// TestTableAndCharts checks the table's order, paging and filter, the
// curves' thinning and the parallel coordinates' axes on a real run with
// a trial that has no result.
func TestTableAndCharts(t *testing.T) {
	for _, mode := range []hone.Mode{hone.Min, hone.Max} {
		t.Run(string(mode), func(t *testing.T) {
			dir := spectest.Run(t, fmt.Sprintf(fifoSpec, mode), spectest.Curves(6))
			e, info := openExp(t, dir)
			if info.Metric != "loss" || info.Mode != mode || info.MaxIterations != 6 || info.NumSamples != 8 || info.Rungs != nil {
				t.Fatalf("info %+v", info)
			}
			best, bestV, err := e.Best(hone.Objective{Metric: "loss", Mode: mode}, results.ScopeLast)
			if err != nil {
				t.Fatal(err)
			}
			for _, desc := range []bool{false, true} {
				tb, err := report.TrialTable(e, info, report.Query{Sort: "value", Desc: desc})
				if err != nil {
					t.Fatal(err)
				}
				if len(tb.Rows) != 8 || !slices.Equal(tb.ConfigKeys, []string{"fixed", "lr", "opt", "x"}) {
					t.Fatalf("%d rows, keys %v", len(tb.Rows), tb.ConfigKeys)
				}
				if last := tb.Rows[7]; last.Value != nil || last.Status != "ERROR" || !strings.Contains(last.Error, "x = 0.5 fails") {
					t.Errorf("desc %v: the trial without a score is not last: %+v", desc, last)
				}
				if first := tb.Rows[0]; !desc && (first.ID != best.ID || *first.Value != bestV) {
					t.Errorf("best first: %s %v, want %s %v", first.ID, *first.Value, best.ID, bestV)
				}
			}
			tb, err := report.TrialTable(e, info, report.Query{Sort: "config/opt", Offset: 6, Limit: 2, Status: []string{"TERMINATED"}})
			if err != nil {
				t.Fatal(err)
			}
			if tb.Matched != 7 || tb.Total != 8 || len(tb.Rows) != 1 || tb.Rows[0].Config["opt"] != "sgd" {
				t.Errorf("page 4 of TERMINATED by opt: %+v", tb)
			}
			if _, err := report.TrialTable(e, info, report.Query{Sort: "config/"}); err == nil {
				t.Error("sort by config/ with no key was accepted")
			}

			c, err := report.LearningCurves(e, info, "", "", report.CurveLimits{MaxTrials: 3, MaxPoints: 4})
			if err != nil {
				t.Fatal(err)
			}
			if c.Trials != 7 || len(c.Series) != 3 || !c.Binned || len(c.Xs) != 4 || c.Best != best.ID {
				t.Fatalf("curves: %d of %d series, binned %v, %d xs, best %s", len(c.Series), c.Trials, c.Binned, len(c.Xs), c.Best)
			}
			for _, s := range c.Series {
				tr := e.Trial(s.ID)
				last, _ := tr.Last()
				want, _ := last.Value("loss")
				if got := s.Ys[len(s.Ys)-1]; got == nil || *got != want {
					t.Errorf("trial %s: last bin %v, want its last value %v", s.ID, got, want)
				}
			}
			full, err := report.LearningCurves(e, info, hone.FieldTrainingIteration, "", report.CurveLimits{})
			if err != nil {
				t.Fatal(err)
			}
			if full.Binned || !slices.Equal(full.Xs, []float64{1, 2, 3, 4, 5, 6}) || len(full.Series) != 7 {
				t.Errorf("unthinned curves: binned %v, xs %v, %d series", full.Binned, full.Xs, len(full.Series))
			}

			p, err := report.ParallelCoordinates(e, info, 5)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, a := range p.Axes {
				kinds = append(kinds, a.Name+":"+a.Kind)
			}
			if !slices.Equal(kinds, []string{"lr:log", "opt:category", "x:linear", "loss:linear"}) || len(p.Lines) != 5 || p.Trials != 7 || p.Best != best.ID {
				t.Fatalf("parallel: axes %v, %d of %d lines, best %s", kinds, len(p.Lines), p.Trials, p.Best)
			}
			for _, l := range p.Lines {
				for i, v := range l.Values {
					if v == nil || *v < 0 || *v > 1 {
						t.Errorf("line %s, axis %s: %v outside [0, 1]", l.ID, p.Axes[i].Name, v)
					}
				}
			}
			// The best line is at the metric axis's better end.
			top := *p.Lines[0].Values[len(p.Axes)-1]
			if mode == hone.Min && top != 0 || mode == hone.Max && top != 1 {
				t.Errorf("the best line's metric is at %v", top)
			}

			sum, err := report.Summarize(e, info, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if sum.Trials != 8 || sum.Counts["TERMINATED"] != 7 || sum.Counts["ERROR"] != 1 || sum.Best.ID != best.ID || sum.Results != 42 || sum.Elapsed <= 0 {
				t.Errorf("summary %+v", sum)
			}
		})
	}
}

// TestRungsOfHyperBand reads the rungs of a real synchronous HyperBand
// run: every trial at the first rung, and the trials promoted at each rung
// are those that reached the next.
func TestRungsOfHyperBand(t *testing.T) {
	dir := spectest.Run(t, spectest.CurveSpec(4, 12, `scheduler: {name: hyperband, max_t: 9, reduction_factor: 3}
max_concurrent_trials: 4
`), sim.New(sim.Curve{MaxIterations: 9}.New))
	e, info := openExp(t, dir)
	if info.Rungs == nil || info.Scheduler != "hyperband" || info.Rungs.MaxT != 9 {
		t.Fatalf("info %+v", info)
	}
	rg, err := report.SuccessiveHalving(e, info, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rg.Rungs) == 0 || rg.Rungs[0].Reached != 12 {
		t.Fatalf("rungs %+v", rg)
	}
	stopped := 0
	for k, g := range rg.Rungs {
		stopped += g.Counts[report.OutcomeStopped]
		if g.Counts[report.OutcomePaused]+g.Counts[report.OutcomePending]+g.Counts[report.OutcomeError] != 0 {
			t.Errorf("rung %v of a finished run: %v", g.Milestone, g.Counts)
		}
		if k+1 < len(rg.Rungs) && g.Counts[report.OutcomePromoted] != rg.Rungs[k+1].Reached {
			t.Errorf("rung %v promoted %d, rung %v reached by %d", g.Milestone, g.Counts[report.OutcomePromoted], rg.Rungs[k+1].Milestone, rg.Rungs[k+1].Reached)
		}
		for i := 1; i < len(g.Trials); i++ {
			if *g.Trials[i].Value < *g.Trials[i-1].Value {
				t.Errorf("rung %v: not best first", g.Milestone)
			}
		}
	}
	if stopped == 0 {
		t.Error("HyperBand stopped no trial; the test needs it to")
	}
	if last := rg.Rungs[len(rg.Rungs)-1]; last.Counts[report.OutcomeCompleted] != last.Reached {
		t.Errorf("the last rung: %v", last.Counts)
	}
}

// TestLineageOfPBT reads the exploits of a real PBT run, one per line of
// its global policy log, each changing the mutated hyperparameter.
func TestLineageOfPBT(t *testing.T) {
	dir := spectest.Run(t, `metric: loss
mode: min
seed: 6
num_samples: 4
command: [unused]
search_space:
  rate: {uniform: [0.05, 0.5]}
scheduler:
  name: pbt
  time_attr: training_iteration
  perturbation_interval: 3
  resample_probability: 1
  hyperparam_mutations:
    rate: {uniform: [0.05, 0.5]}
max_concurrent_trials: 4
stop: {training_iteration: 15}
`, sim.New(sim.Curve{MaxIterations: 15}.New))
	e, info := openExp(t, dir)
	if info.TimeAttr != hone.FieldTrainingIteration {
		t.Errorf("time attribute %q", info.TimeAttr)
	}
	lin, err := report.PBTLineage(e)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "pbt_global.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		lines++
	}
	f.Close()
	if lin == nil || lines == 0 || len(lin.Exploits) != lines || !slices.Equal(lin.Keys, []string{"rate"}) || len(lin.Schedules) != 4 {
		t.Fatalf("lineage %+v of %d log lines", lin, lines)
	}
	for _, x := range lin.Exploits {
		if e.Trial(x.TargetID) == nil || e.Trial(x.DonorID) == nil || x.TargetID == x.DonorID ||
			len(x.Changes) != 1 || x.Changes[0].Key != "rate" || x.Changes[0].To != x.Config["rate"] {
			t.Errorf("exploit %+v", x)
		}
	}
	// Without exploits there is no lineage.
	fifo := spectest.Run(t, fmt.Sprintf(fifoSpec, hone.Min), spectest.Curves(2))
	e2, _ := openExp(t, fifo)
	if l, err := report.PBTLineage(e2); l != nil || err != nil {
		t.Errorf("lineage of a FIFO run: %+v, %v", l, err)
	}
	if r, err := report.SuccessiveHalving(e2, report.Info{}, 0); r != nil || err != nil {
		t.Errorf("rungs of a FIFO run: %+v, %v", r, err)
	}
}

// TestReadInfo reads the defaults without a spec, ASHA's brackets, and
// refuses a spec that does not parse.
func TestReadInfo(t *testing.T) {
	dir := t.TempDir()
	info, err := report.ReadInfo(dir)
	if err != nil || info.Metric != "" || info.TimeAttr != hone.FieldTrainingIteration || info.Scope != results.ScopeLast {
		t.Errorf("no spec: %+v, %v", info, err)
	}
	write := func(body string) {
		if err := os.WriteFile(filepath.Join(dir, report.SpecFile), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("metric: acc\ncommand: [x]\nsearch_space: {x: 1}\nstop: {time_budget_s: 90}\nscheduler: {name: asha, max_t: 16, reduction_factor: 2, brackets: 2, time_attr: epoch}\n")
	info, err = report.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode != hone.Min || info.TimeBudget != 90 || info.TimeAttr != "epoch" || info.Rungs == nil || len(info.Rungs.Brackets) != 2 ||
		!slices.Equal(info.Rungs.Brackets[0], []float64{1, 2, 4, 8, 16}) || !slices.Equal(info.Rungs.Brackets[1], []float64{2, 4, 8, 16}) {
		t.Errorf("asha: %+v, rungs %+v", info, info.Rungs)
	}
	write("metric: [not, a, name]\n")
	if _, err := report.ReadInfo(dir); err == nil {
		t.Error("a spec that does not parse was accepted")
	}
}

// TestBestSoFar checks the best-so-far of real runs: it only improves, the
// budget and the time only grow, the budget ends at the sum of the trials'
// last training iterations, and the best ends at the best result.
func TestBestSoFar(t *testing.T) {
	fifo := spectest.Run(t, fmt.Sprintf(fifoSpec, hone.Max), spectest.Curves(6))
	hb := spectest.Run(t, spectest.CurveSpec(4, 12, `scheduler: {name: hyperband, max_t: 9, reduction_factor: 3}
max_concurrent_trials: 4
`), sim.New(sim.Curve{MaxIterations: 9}.New))
	for _, dir := range []string{fifo, hb} {
		e, info := openExp(t, dir)
		p, err := report.BestSoFar(e, info)
		if err != nil {
			t.Fatal(err)
		}
		budget, results, want := 0.0, 0, math.NaN()
		for _, tr := range e.Trials {
			rows, err := tr.Results()
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if v, ok := r.Value("loss"); ok {
					results++
					if math.IsNaN(want) || info.Mode.Better(v, want) {
						want = v
					}
				}
			}
			if len(rows) > 0 {
				v, _ := rows[len(rows)-1].Value(hone.FieldTrainingIteration)
				budget += v
			}
		}
		if p.Results != results || p.Budget != budget || p.NoTime || len(p.Points) < 2 {
			t.Fatalf("%s: %d results, budget %v, %d points; want %d results, budget %v", info.Mode, p.Results, p.Budget, len(p.Points), results, budget)
		}
		for i := 1; i < len(p.Points); i++ {
			a, b := p.Points[i-1], p.Points[i]
			if b.Time < a.Time || b.Budget < a.Budget || info.Mode.Better(a.Best, b.Best) {
				t.Errorf("%s: point %d %+v after %+v", info.Mode, i, b, a)
			}
		}
		last := p.Points[len(p.Points)-1]
		if last.Best != want || last.Budget != budget || last.Time != p.Elapsed || p.Points[0].Time < 0 || e.Trial(last.ID) == nil {
			t.Errorf("%s: last point %+v, want best %v at budget %v", info.Mode, last, want, budget)
		}
	}
	if p, err := report.BestSoFar(nil, report.Info{}); err != nil || len(p.Points) != 0 {
		t.Errorf("without a metric: %+v, %v", p, err)
	}
}

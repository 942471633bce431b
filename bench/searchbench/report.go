package searchbench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hone-tune/hone/bench/functions"
	"github.com/hone-tune/hone/bench/internal/benchutil"
)

// ProblemResult holds every trace of one problem.
type ProblemResult struct {
	Problem *functions.Problem
	Budget  float64
	Seeds   int
	// Methods in report order; the first is the baseline.
	Methods []string
	// Traces per method, one per seed.
	Traces map[string][]*Trace
}

// MethodSummary is one method's figures on one problem.
type MethodSummary struct {
	Method string
	// Final regret over seeds: quartiles and median.
	FinalQ25, FinalMedian, FinalQ75 float64
	// Median, Q25 and Q75 are the regret-vs-budget quantile curves.
	Median, Q25, Q75 QuantileCurve
	// ToReach is the budget at which the median curve first reaches the
	// baseline's median final regret (+Inf if it never does).
	ToReach float64
	// Speedup is the baseline's ToReach divided by this method's: how many
	// times less budget it needed (0 if it never reached it).
	Speedup float64
	// Medians over seeds of the trials run, the evaluations at full
	// fidelity and the budget spent; Wall is the total wall-clock time of
	// the method's runs.
	Trials, FullEvals, Spent float64
	Wall                     time.Duration
}

// Summaries returns one summary per method, in r.Methods order; the first
// is the baseline's.
func (r *ProblemResult) Summaries() []MethodSummary {
	var out []MethodSummary
	for _, m := range r.Methods {
		ts := r.Traces[m]
		s := MethodSummary{Method: m,
			Median: quantileCurve(ts, 0.5), Q25: quantileCurve(ts, 0.25), Q75: quantileCurve(ts, 0.75)}
		finals := make([]float64, len(ts))
		trials := make([]float64, len(ts))
		full := make([]float64, len(ts))
		spent := make([]float64, len(ts))
		for i, t := range ts {
			finals[i], trials[i], full[i], spent[i] = t.Final(), float64(t.Trials), float64(t.FullEvals), t.Spent
			s.Wall += t.Wall
		}
		for _, v := range [][]float64{finals, trials, full, spent} {
			sort.Float64s(v)
		}
		s.FinalQ25, s.FinalMedian, s.FinalQ75 = benchutil.Quantile(finals, 0.25), benchutil.Quantile(finals, 0.5), benchutil.Quantile(finals, 0.75)
		s.Trials, s.FullEvals, s.Spent = benchutil.Quantile(trials, 0.5), benchutil.Quantile(full, 0.5), benchutil.Quantile(spent, 0.5)
		out = append(out, s)
	}
	if len(out) == 0 {
		return out
	}
	target := out[0].FinalMedian
	for i := range out {
		out[i].ToReach = out[i].Median.Reach(target)
	}
	base := out[0].ToReach
	for i := range out {
		if !math.IsInf(out[i].ToReach, 1) && out[i].ToReach > 0 {
			out[i].Speedup = base / out[i].ToReach
		}
	}
	return out
}

// summaryOf returns the summary of method m in ss, or nil.
func summaryOf(ss []MethodSummary, m string) *MethodSummary {
	for i := range ss {
		if ss[i].Method == m {
			return &ss[i]
		}
	}
	return nil
}

// num formats a figure for the tables: "none" for +Inf, else as
// benchutil.Num.
func num(v float64) string {
	if math.IsInf(v, 1) {
		return "none"
	}
	return benchutil.Num(v)
}

// WriteMarkdown writes one problem's table: per method the final regret
// (median and quartiles) beside the baseline's, the budget its median
// curve needed to reach the baseline's final regret beside the baseline's,
// and the ratios.
func (r *ProblemResult) WriteMarkdown(w io.Writer, workers int) {
	ss := r.Summaries()
	base := ss[0]
	p := r.Problem
	fmt.Fprintf(w, "### %s\n\n", p.Name)
	fmt.Fprintf(w, "Budget %s full-fidelity evaluations' worth of cost per run, %d seeds, %d trial(s) at a time; "+
		"%d budget steps (fidelity %s at step 1 to %s at step %d); optimum %s.\n\n",
		num(r.Budget), r.Seeds, workers, p.Steps, num(p.Fidelity(1)), num(p.Fidelity(p.Steps)), p.Steps, num(p.Optimum))
	fmt.Fprintf(w, "Baseline %s: median final regret **%s** [q25 %s, q75 %s]; its median curve first reaches it at budget **%s**.\n\n",
		base.Method, num(base.FinalMedian), num(base.FinalQ25), num(base.FinalQ75), num(base.ToReach))
	fmt.Fprintf(w, "| method | final regret, median [q25, q75] | baseline's | regret ratio (baseline / method) | budget to reach baseline's final regret | baseline's | speed-up (baseline budget / method budget) | trials | full-fidelity evals | wall (× baseline's) |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range ss {
		reach, speed := num(s.ToReach), benchutil.Ratio(s.Speedup)
		if math.IsInf(s.ToReach, 1) {
			reach = fmt.Sprintf("not reached (> %s)", num(r.Budget))
			speed = fmt.Sprintf("< %s", benchutil.Ratio(base.ToReach/r.Budget))
		}
		name := s.Method
		if s.Method == base.Method {
			name += " (baseline)"
		}
		fmt.Fprintf(w, "| %s | %s [%s, %s] | %s | %s | %s | %s | %s | %s | %s | %s (%s) |\n",
			name, num(s.FinalMedian), num(s.FinalQ25), num(s.FinalQ75), num(base.FinalMedian),
			benchutil.Ratio(base.FinalMedian/s.FinalMedian), reach, num(base.ToReach), speed,
			num(s.Trials), num(s.FullEvals), s.Wall.Round(time.Millisecond), benchutil.Ratio(s.Wall.Seconds()/base.Wall.Seconds()))
	}
	fmt.Fprintln(w)
}

// Target is one of BENCHMARKS.md's published targets, checked.
type Target struct {
	Name   string
	Met    bool
	Detail string
	// Checked is false when the methods or problems the target needs were
	// not run.
	Checked bool
}

// Targets checks the benchmark's targets on results: BOHB reaches random
// search's final regret with at least 10× less budget on MF-Hartmann-6,
// and BOHB's median final regret beats the better Goptuna variant's on at
// least 3 of the 4 functions.
func Targets(results []*ProblemResult) []Target {
	t1 := Target{Name: "BOHB reaches random search's final regret with ≥ 10× less budget on hartmann6"}
	t2 := Target{Name: "BOHB beats Goptuna's best variant at equal budget on ≥ 3 of the 4 functions"}
	wins, compared := 0, 0
	var lines []string
	for _, r := range results {
		ss := r.Summaries()
		b := summaryOf(ss, MethodBOHB)
		if b == nil {
			continue
		}
		if r.Problem.Name == "hartmann6" {
			base := ss[0]
			t1.Checked = true
			t1.Met = b.Speedup >= 10
			reach := num(b.ToReach)
			if math.IsInf(b.ToReach, 1) {
				reach = "never (within " + num(r.Budget) + ")"
			}
			t1.Detail = fmt.Sprintf("random's median final regret %s is first reached at budget %s by random and %s by BOHB: speed-up %s (target 10×)",
				num(base.FinalMedian), num(base.ToReach), reach, benchutil.Ratio(b.Speedup))
		}
		g1, g2 := summaryOf(ss, MethodGoptunaTPE), summaryOf(ss, MethodGoptunaTPESH)
		if g1 == nil && g2 == nil {
			continue
		}
		best := g1
		if best == nil || g2 != nil && g2.FinalMedian < best.FinalMedian {
			best = g2
		}
		compared++
		won := b.FinalMedian < best.FinalMedian
		if won {
			wins++
		}
		verdict := map[bool]string{true: "BOHB better", false: "BOHB not better"}[won]
		lines = append(lines, fmt.Sprintf("%s: BOHB %s vs %s %s (ratio %s) — %s",
			r.Problem.Name, num(b.FinalMedian), best.Method, num(best.FinalMedian), benchutil.Ratio(best.FinalMedian/b.FinalMedian), verdict))
	}
	if compared > 0 {
		t2.Checked = true
		t2.Met = wins >= 3
		t2.Detail = fmt.Sprintf("BOHB better on %d of %d: %s", wins, compared, strings.Join(lines, "; "))
	}
	return []Target{t1, t2}
}

// WriteReport writes every problem's table and the targets.
func WriteReport(w io.Writer, results []*ProblemResult, workers int) {
	for _, r := range results {
		r.WriteMarkdown(w, workers)
	}
	fmt.Fprintf(w, "### Targets\n\n")
	for _, t := range Targets(results) {
		status := "not checked (needs BOHB, random and Goptuna on hartmann6 / the functions)"
		if t.Checked {
			status = map[bool]string{true: "**met**", false: "**not met**"}[t.Met]
		}
		fmt.Fprintf(w, "- %s: %s. %s\n", t.Name, status, t.Detail)
	}
	fmt.Fprintln(w)
}

// MethodNames returns the names of methods in report order, for flags and
// messages.
func MethodNames() string { return strings.Join(slices.Clone(Methods), ",") }

package searchbench

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hone-tune/hone/bench/functions"
	"github.com/hone-tune/hone/bench/internal/benchutil"
)

// MethodSummary is one method's figures in one cell.
type MethodSummary struct {
	Method string
	// Final regret over seeds: quartiles and median.
	FinalQ25, FinalMedian, FinalQ75 float64
	// Median, Q25 and Q75 are the regret-vs-budget quantile curves.
	Median, Q25, Q75 QuantileCurve
	// ToReach is the budget at which the median curve first reaches the
	// baseline's median final regret in the cell (+Inf if it never does).
	ToReach float64
	// Speedup is the baseline's ToReach divided by this method's: how many
	// times less budget it needed (0 if it never reached it).
	Speedup float64
	// Medians over seeds of the trials run, the evaluations at full
	// fidelity, the steps counted and the budget spent.
	Trials, FullEvals, Steps, Spent float64
	// CPUMedian and CPUMax are the median and the largest searcher CPU
	// time of a run; Wall is the total wall-clock time of the runs.
	CPUMedian, CPUMax time.Duration
	Wall              time.Duration
}

// Summaries returns one summary per method, in c.Methods order; the first
// is the baseline's.
func (c *Cell) Summaries() []MethodSummary {
	var out []MethodSummary
	for _, m := range c.Methods {
		ts := c.Traces[m]
		s := MethodSummary{Method: m,
			Median: quantileCurve(ts, 0.5), Q25: quantileCurve(ts, 0.25), Q75: quantileCurve(ts, 0.75)}
		finals := make([]float64, len(ts))
		trials := make([]float64, len(ts))
		full := make([]float64, len(ts))
		steps := make([]float64, len(ts))
		spent := make([]float64, len(ts))
		cpu := make([]float64, len(ts))
		for i, t := range ts {
			finals[i], trials[i], full[i], steps[i], spent[i] = t.Final(), float64(t.Trials), float64(t.FullEvals), float64(t.Steps), t.Spent
			cpu[i] = float64(t.CPU)
			s.Wall += t.Wall
		}
		for _, v := range [][]float64{finals, trials, full, steps, spent, cpu} {
			sort.Float64s(v)
		}
		s.FinalQ25, s.FinalMedian, s.FinalQ75 = benchutil.Quantile(finals, 0.25), benchutil.Quantile(finals, 0.5), benchutil.Quantile(finals, 0.75)
		s.Trials, s.FullEvals, s.Steps, s.Spent = benchutil.Quantile(trials, 0.5), benchutil.Quantile(full, 0.5), benchutil.Quantile(steps, 0.5), benchutil.Quantile(spent, 0.5)
		s.CPUMedian, s.CPUMax = time.Duration(benchutil.Quantile(cpu, 0.5)), time.Duration(cpu[len(cpu)-1])
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

// secs formats a CPU time in seconds.
func secs(d time.Duration) string {
	switch s := d.Seconds(); {
	case s == 0:
		return "0"
	case s < 0.01:
		return fmt.Sprintf("%.4f", s)
	case s < 10:
		return fmt.Sprintf("%.3f", s)
	default:
		return fmt.Sprintf("%.1f", s)
	}
}

// Verdict compares, in one cell, hone's best method with the best
// baseline by median final regret.
type Verdict struct {
	Cell *Cell
	// Hone and Base are the best hone method and the best baseline, with
	// their median final regrets.
	Hone, Base         string
	HoneRegret, Regret float64
	// Won: hone's best is at or below the best baseline.
	Won bool
}

// best returns the method of ss among those keep accepts with the lowest
// median final regret (the first on ties), or nil.
func best(ss []MethodSummary, keep func(string) bool) *MethodSummary {
	var b *MethodSummary
	for i := range ss {
		if keep(ss[i].Method) && (b == nil || ss[i].FinalMedian < b.FinalMedian) {
			b = &ss[i]
		}
	}
	return b
}

// Verdicts returns the verdict of every cell that has both a hone method
// and a baseline.
func Verdicts(cells []*Cell) []Verdict {
	var out []Verdict
	for _, c := range cells {
		ss := c.Summaries()
		h := best(ss, func(m string) bool { return !IsBaseline(m) })
		b := best(ss, IsBaseline)
		if h == nil || b == nil {
			continue
		}
		out = append(out, Verdict{Cell: c, Hone: h.Method, Base: b.Method, HoneRegret: h.FinalMedian, Regret: b.FinalMedian,
			Won: h.FinalMedian <= b.FinalMedian})
	}
	return out
}

// ratio formats a/b, with 0/0 as 1× (both at the optimum).
func ratio(a, b float64) string {
	if a == 0 && b == 0 {
		return "1× (both 0)"
	}
	return benchutil.Ratio(a / b)
}

// RunInfo describes a run of the benchmark, for the report.
type RunInfo struct {
	// Command reproduces the run; Mode names its size ("default",
	// "long", "smoke").
	Command, Mode string
	Start         time.Time
	Elapsed       time.Duration
	CPUs          int
	Parallel      int
	// CPUTime is the CPU time the run used, its Python workers' included
	// (0 if unknown).
	CPUTime time.Duration
	// TimerOverhead is what one timed call of an empty function
	// measures (benchutil.TimerOverhead).
	TimerOverhead time.Duration
	// Load is the machine's load average at the start and at the end
	// ("" if unknown).
	Load string
	// Plots maps a problem's name to its plot's path relative to the
	// report, and Parallel efficiency's figure is ParallelPlot.
	Plots        map[string]string
	ParallelPlot string
	// Notes is hand-written text kept from the previous report.
	Notes string
	// SeveralObjectives is the multi-objective benchmark's section, which
	// cmd/mobench writes between SeveralBegin and SeveralEnd, kept from the
	// previous report.
	SeveralObjectives string
}

// NotesBegin and NotesEnd delimit the hand-written part of the report,
// which the command keeps from one run to the next.
const (
	NotesBegin = "<!-- notes: written by hand, kept by the command -->"
	NotesEnd   = "<!-- end of notes -->"
)

// SeveralBegin and SeveralEnd delimit the section of several objectives,
// which cd bench && go run ./cmd/mobench -quality ../docs/QUALITY.md
// writes and this command keeps.
const (
	SeveralBegin = "<!-- several objectives: written by cmd/mobench -quality, kept by cmd/searchbench -->"
	SeveralEnd   = "<!-- end of several objectives -->"
)

// Kept returns the text of the report between begin and end, trimmed of
// newlines, or "" when the report lacks them.
func Kept(report, begin, end string) string {
	i := strings.Index(report, begin)
	j := strings.Index(report, end)
	if i < 0 || j < i {
		return ""
	}
	return strings.Trim(report[i+len(begin):j], "\n")
}

// problems returns the problems of cells in order, once each.
func problems(cells []*Cell) []*functions.Problem {
	var out []*functions.Problem
	for _, c := range cells {
		if !slices.Contains(out, c.Problem) {
			out = append(out, c.Problem)
		}
	}
	return out
}

// concurrencies returns the concurrencies of cells, increasing.
func concurrencies(cells []*Cell) []int {
	var out []int
	for _, c := range cells {
		if !slices.Contains(out, c.Concurrency) {
			out = append(out, c.Concurrency)
		}
	}
	slices.Sort(out)
	return out
}

// cellOf returns the cell of problem p at concurrency c, or nil.
func cellOf(cells []*Cell, p *functions.Problem, c int) *Cell {
	for _, x := range cells {
		if x.Problem == p && x.Concurrency == c {
			return x
		}
	}
	return nil
}

// methodsOf returns the methods of cells in report order, once each.
func methodsOf(cells []*Cell) []string {
	var out []string
	for _, m := range Methods() {
		for _, c := range cells {
			if slices.Contains(c.Methods, m) {
				out = append(out, m)
				break
			}
		}
	}
	return out
}

// Efficiency is one method's parallel efficiency on one problem: the
// budget its median curve needs, at each concurrency, to reach random
// search's median final regret at concurrency 1.
type Efficiency struct {
	Problem *functions.Problem
	Method  string
	Target  float64
	// Budget per concurrency (+Inf: not reached).
	Budget map[int]float64
}

// Ratio returns Budget[c] / Budget[1] (+Inf when c's is not reached, NaN
// when neither is).
func (e Efficiency) Ratio(c int) float64 {
	b1, bc := e.Budget[1], e.Budget[c]
	switch {
	case math.IsInf(b1, 1) && math.IsInf(bc, 1):
		return math.NaN()
	case math.IsInf(b1, 1):
		return 0
	}
	return bc / b1
}

// Efficiencies returns the parallel efficiency of every method on every
// problem run at concurrency 1.
func Efficiencies(cells []*Cell) []Efficiency {
	var out []Efficiency
	for _, p := range problems(cells) {
		c1 := cellOf(cells, p, 1)
		if c1 == nil {
			continue
		}
		target := c1.Summaries()[0].FinalMedian
		for _, m := range c1.Methods {
			e := Efficiency{Problem: p, Method: m, Target: target, Budget: map[int]float64{}}
			for _, c := range concurrencies(cells) {
				if cell := cellOf(cells, p, c); cell != nil && cell.Traces[m] != nil {
					e.Budget[c] = quantileCurve(cell.Traces[m], 0.5).Reach(target)
				}
			}
			out = append(out, e)
		}
	}
	return out
}

// WriteReport writes the report (docs/QUALITY.md) of res.
func WriteReport(w io.Writer, res *Results, info RunInfo) {
	cells := res.Cells
	ps := problems(cells)
	cs := concurrencies(cells)
	ms := methodsOf(cells)
	var honeMs, baseMs []string
	for _, m := range ms {
		if IsBaseline(m) {
			baseMs = append(baseMs, m)
		} else {
			honeMs = append(honeMs, m)
		}
	}
	seeds := 0
	runs := 0
	for _, c := range cells {
		seeds = c.Seeds
		runs += len(c.Methods) * c.Seeds
	}

	fmt.Fprintf(w, "# Search quality\n\n")
	fmt.Fprintf(w, "This file is written by\n\n```\n%s\n```\n\n", info.Command)
	fmt.Fprintf(w, "(from the bench module; it also draws the plots in `docs/quality/`). "+
		"`-long` runs a larger benchmark, `-smoke` a tiny one that `scripts/test.sh` runs (into a temporary directory; run by hand "+
		"it writes to `bench/out/`, which git ignores); "+
		"`-help` lists the flags. What is measured, and how, is explained in the package documentation of `bench/searchbench`; "+
		"it is summarised below.\n\n")
	fmt.Fprintf(w, "**This run** (%s mode): %s, %s/%d CPUs, %d runs at a time, %s wall",
		info.Mode, info.Start.UTC().Format("2006-01-02 15:04 UTC"), runtime.GOOS+"/"+runtime.GOARCH, info.CPUs, info.Parallel, info.Elapsed.Round(time.Second))
	if info.CPUTime > 0 {
		fmt.Fprintf(w, ", %s of CPU time (the Python workers' included)", info.CPUTime.Round(time.Second))
	}
	if info.Load != "" {
		fmt.Fprintf(w, "; load average %s (the machine was shared)", info.Load)
	}
	fmt.Fprintf(w, "; %d problem settings × concurrency %s × %d methods × %d seeds = %d runs. "+
		"Baselines: %s. hone's methods: %s. %s.\n\n",
		len(ps), joinInts(cs), len(ms), seeds, runs, code(baseMs), code(honeMs), optunaLine(res))

	// Summary.
	fmt.Fprintf(w, "## Summary\n\n")
	vs := Verdicts(cells)
	won := 0
	for _, v := range vs {
		if v.Won {
			won++
		}
	}
	if len(vs) > 0 {
		fmt.Fprintf(w, "- **hone's best method is at or below the best baseline's median final regret in %d of %d cells (%.0f%%)** "+
			"(problem setting × concurrency; per cell the best of hone's methods against the best of the baselines; target ≥ 80%%)",
			won, len(vs), 100*float64(won)/float64(len(vs)))
		var mw, mn, fw, fn int
		for _, v := range vs {
			if v.Cell.Problem.Misleading {
				mn++
				if v.Won {
					mw++
				}
			} else {
				fn++
				if v.Won {
					fw++
				}
			}
		}
		fmt.Fprintf(w, ": %d of %d in the faithful settings, %d of %d in the misleading ones.\n", fw, fn, mw, mn)
	}
	if rows := autoRows(cells); len(rows) > 0 {
		near, sure := autoCounts(rows)
		fmt.Fprintf(w, "- **`auto` is within 1.25× of the best baseline's median final regret in %d of %d cells** (target ≥ 80%%); "+
			"of the other %d, the best baseline's runs are surely lower (one-sided Mann–Whitney p < %g) in %d (see \"`auto` cell by cell\").\n",
			near, len(rows), len(rows)-near, significance, sure)
	}
	fmt.Fprintf(w, "- Per method, the cells where it alone is at or below the best baseline (≤ 1×), and within 1.25× of it:\n\n")
	writeMethodRecord(w, cells, honeMs, cs)
	writeEfficiencySummary(w, cells, cs, info, "")
	writeCPUSummary(w, cells, ms, cs, info)
	if len(res.Scale) > 0 {
		writeScale(w, res.Scale, info)
	}

	fmt.Fprintf(w, "## Notes on this run\n\n%s\n", NotesBegin)
	if info.Notes != "" {
		fmt.Fprintf(w, "%s\n", strings.Trim(info.Notes, "\n"))
	} else {
		fmt.Fprintf(w, "(none yet)\n")
	}
	fmt.Fprintf(w, "%s\n\n", NotesEnd)

	fmt.Fprintf(w, "## Several objectives\n\n%s\n", SeveralBegin)
	if info.SeveralObjectives != "" {
		fmt.Fprintf(w, "%s\n", info.SeveralObjectives)
	} else {
		fmt.Fprintf(w, "(not run yet: cd bench && go run ./cmd/mobench -quality ../docs/QUALITY.md)\n")
	}
	fmt.Fprintf(w, "%s\n\n", SeveralEnd)

	writeCells(w, vs)
	writeAutoCells(w, cells)
	writeProblems(w, cells, ps)
	writeMethods(w, honeMs, baseMs)
	writeDetails(w, cells, ps, cs, info)
}

func optunaLine(res *Results) string {
	if res.OptunaRan {
		return res.Optuna + " ran"
	}
	return "Optuna: " + res.Optuna
}

func code(ms []string) string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = "`" + m + "`"
	}
	return strings.Join(out, ", ")
}

func joinInts(v []int) string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = fmt.Sprint(x)
	}
	return strings.Join(out, ", ")
}

// writeMethodRecord writes, per hone method and concurrency, the cells
// where its median final regret is at or below the best baseline's, and
// within 1.25× of it.
func writeMethodRecord(w io.Writer, cells []*Cell, honeMs []string, cs []int) {
	fmt.Fprintf(w, "| method |")
	for _, c := range cs {
		fmt.Fprintf(w, " concurrency %d: ≤ 1× / ≤ 1.25× |", c)
	}
	fmt.Fprintf(w, " all cells: ≤ 1× / ≤ 1.25× |\n|---|")
	for range cs {
		fmt.Fprintf(w, "---|")
	}
	fmt.Fprintf(w, "---|\n")
	for _, m := range honeMs {
		fmt.Fprintf(w, "| %s |", m)
		var at, near, all int
		for _, c := range cs {
			a, n, k := 0, 0, 0
			for _, cell := range cells {
				if cell.Concurrency != c {
					continue
				}
				ss := cell.Summaries()
				s, b := summaryOf(ss, m), best(ss, IsBaseline)
				if s == nil || b == nil {
					continue
				}
				k++
				if s.FinalMedian <= b.FinalMedian {
					a++
				}
				if s.FinalMedian <= 1.25*b.FinalMedian {
					n++
				}
			}
			fmt.Fprintf(w, " %d / %d of %d |", a, n, k)
			at, near, all = at+a, near+n, all+k
		}
		fmt.Fprintf(w, " **%d / %d of %d** |\n", at, near, all)
	}
	fmt.Fprintln(w)
}

// writeEfficiencySummary writes the parallel efficiency of hone's best
// method per problem; size, if not empty, says at what size the cells
// ran. A setting is out of reach when the earliest first full-fidelity
// result of any method at the highest concurrency (floorAt) already comes
// after 1.5 times the budget hone's best method needs at concurrency 1;
// the ratio of the two is then the lowest any method could have there.
// The summary also counts the settings within 1.5× at each concurrency
// between 1 and the highest.
func writeEfficiencySummary(w io.Writer, cells []*Cell, cs []int, info RunInfo, size string) {
	es := Efficiencies(cells)
	if len(es) == 0 || !slices.Contains(cs, 1) {
		return
	}
	top := cs[len(cs)-1]
	fmt.Fprintf(w, "- **Parallel efficiency%s.** Per problem setting, the budget a method's median curve needs to reach random search's "+
		"median final regret at concurrency 1, at each concurrency, and the ratio to its own budget at concurrency 1 "+
		"(target for hone's best method at concurrency %d: ≤ 1.5×). hone's best method of a problem is the hone method "+
		"with the lowest median final regret there at concurrency 1. The last column is the budget spent, in the median "+
		"run of that method at concurrency %d, when its first full-fidelity result arrived: no curve starts before it, "+
		"since %d trials at once spend about %d full evaluations' worth before the first of them can finish. A setting is "+
		"out of reach at concurrency %d when even the earliest first full-fidelity result there, of any method, comes "+
		"after 1.5× the budget hone's best method needs at concurrency 1.\n\n", size, top, top, top, top, top)
	if info.ParallelPlot != "" && size == "" {
		fmt.Fprintf(w, "  ![parallel efficiency](%s)\n\n", info.ParallelPlot)
	}
	fmt.Fprintf(w, "| problem | hone's best at concurrency 1 | budget to reach (")
	fmt.Fprintf(w, "%s) | ratio %d/1 | first full-fidelity result at %d |\n|---|---|---|---|---|\n", joinInts(cs), top, top)
	// Per concurrency: the settings whose best method reached the target
	// at it or at 1, and those of them within 1.5× of its budget at 1.
	type tally struct{ reached, within int }
	counts := map[int]*tally{}
	for _, c := range cs {
		counts[c] = &tally{}
	}
	out := 0
	for _, p := range problems(cells) {
		c1 := cellOf(cells, p, 1)
		b := best(c1.Summaries(), func(m string) bool { return !IsBaseline(m) })
		if b == nil {
			continue
		}
		for _, e := range es {
			if e.Problem != p || e.Method != b.Method {
				continue
			}
			var bs []string
			for _, c := range cs {
				bs = append(bs, num(e.Budget[c]))
				if rc := e.Ratio(c); !math.IsNaN(rc) {
					counts[c].reached++
					if rc <= 1.5 {
						counts[c].within++
					}
				}
			}
			r := e.Ratio(top)
			first, floor := math.NaN(), math.NaN()
			if ct := cellOf(cells, p, top); ct != nil {
				first, floor = firstFull(ct.Traces[b.Method]), floorAt(ct)
			}
			mark := ""
			switch {
			case !(r > 1.5): // within, or not reached at either concurrency
			case floor > 1.5*e.Budget[1]:
				out++
				mark = fmt.Sprintf(" (over 1.5×; out of reach: at least %s)", benchutil.Ratio(floor/e.Budget[1]))
			default:
				mark = " (over 1.5×)"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s%s | %s |\n", p.Name, b.Method, strings.Join(bs, " / "), ratioOrNone(r), mark, num(first))
		}
	}
	verb := "are"
	if out == 1 {
		verb = "is"
	}
	ok, n := counts[top].within, counts[top].reached
	fmt.Fprintf(w, "\n  hone's best method needs at most 1.5× its concurrency-1 budget at concurrency %d on **%d of %d** problem settings "+
		"(those where it reached the target at either concurrency); of the other %d, %d %s out of reach at concurrency %d. "+
		"Every method's figures are in the details below.", top, ok, n, n-ok, out, verb, top)
	for _, c := range cs {
		if c != 1 && c != top {
			fmt.Fprintf(w, " At concurrency %d, where trials at once spend about %d full evaluations' worth before the first can finish, "+
				"it needs at most 1.5× its concurrency-1 budget on %d of %d.", c, c, counts[c].within, counts[c].reached)
		}
	}
	fmt.Fprint(w, "\n\n")
}

// floorAt returns the earliest median first full-fidelity result of any
// method in cell: no method that keeps the cell's trials running at once
// can reach a target before about that budget.
func floorAt(cell *Cell) float64 {
	floor := math.Inf(1)
	for _, m := range cell.Methods {
		if f := firstFull(cell.Traces[m]); f < floor {
			floor = f
		}
	}
	return floor
}

// firstFull returns the median over traces of the budget spent when the
// first full-fidelity result arrived (+Inf for a run that had none).
func firstFull(traces []*Trace) float64 {
	var xs []float64
	for _, t := range traces {
		if len(t.Points) > 0 {
			xs = append(xs, t.Points[0].Budget)
		} else {
			xs = append(xs, math.Inf(1))
		}
	}
	if len(xs) == 0 {
		return math.NaN()
	}
	sort.Float64s(xs)
	return benchutil.Quantile(xs, 0.5)
}

// thousands formats n with a comma between thousands.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// writeScale writes the part with larger runs (ScaleSteps steps by
// default): parallel efficiency and searcher CPU.
func writeScale(w io.Writer, cells []*Cell, info RunInfo) {
	cs := concurrencies(cells)
	ms := methodsOf(cells)
	seeds, steps := 0, 0
	for _, c := range cells {
		seeds, steps = c.Seeds, int(math.Round(c.Budget*float64(c.Problem.Steps)))
	}
	size := thousands(steps) + " steps"
	fmt.Fprintf(w, "## Larger runs: %s\n\n", size)
	fmt.Fprintf(w, "The same problems with a budget of %s per run, random search and hone's own methods only, at concurrency %s, "+
		"%d seeds. At %s steps (%s full-fidelity evaluations of a 27-step problem) the first round of trials at the highest "+
		"concurrency is a small part of a run.\n\n", size, joinInts(cs), seeds, thousands(ScaleSteps), num(float64(ScaleSteps)/27))
	writeEfficiencySummary(w, cells, cs, info, " at "+size)
	writeCPUSummary(w, cells, ms, cs, info)
}

func ratioOrNone(r float64) string {
	switch {
	case math.IsNaN(r):
		return "n/a (target never reached)"
	case math.IsInf(r, 1):
		return "not reached at this concurrency"
	case r == 0:
		return "reached only at higher concurrency"
	}
	return benchutil.Ratio(r)
}

// writeCPUSummary writes the searcher CPU per run of every method at
// every concurrency.
func writeCPUSummary(w io.Writer, cells []*Cell, ms []string, cs []int, info RunInfo) {
	fmt.Fprintf(w, "- **Searcher CPU per run** (seconds, over every problem and seed): median, and the largest run with its number "+
		"of steps; measured with %s around every call into the searcher and scheduler (hone) or into the library "+
		"(Goptuna; Optuna: `time.thread_time` in Python). Target for hone: ≤ 1 s per 8,100-step run.", benchutil.CPUClock)
	if info.TimerOverhead > 0 {
		fmt.Fprintf(w, " The measurement itself is counted: an empty timed call measures %.2f µs, and a run makes a few calls per step "+
			"(hone: the scheduler's and the searcher's OnResult), so for the cheapest methods most of the figure is this overhead.",
			float64(info.TimerOverhead.Nanoseconds())/1000)
	}
	fmt.Fprintf(w, "\n\n")
	fmt.Fprintf(w, "| method |")
	for _, c := range cs {
		fmt.Fprintf(w, " concurrency %d |", c)
	}
	fmt.Fprintf(w, "\n|---|")
	for range cs {
		fmt.Fprintf(w, "---|")
	}
	fmt.Fprintln(w)
	for _, m := range ms {
		fmt.Fprintf(w, "| %s |", m)
		for _, c := range cs {
			var cpu []float64
			var worst *Trace
			for _, cell := range cells {
				if cell.Concurrency != c {
					continue
				}
				for _, t := range cell.Traces[m] {
					cpu = append(cpu, t.CPU.Seconds())
					if worst == nil || t.CPU > worst.CPU {
						worst = t
					}
				}
			}
			if worst == nil {
				fmt.Fprintf(w, " |")
				continue
			}
			sort.Float64s(cpu)
			fmt.Fprintf(w, " %s (max %s, %d steps) |", secs(time.Duration(benchutil.Quantile(cpu, 0.5)*float64(time.Second))), secs(worst.CPU), worst.Steps)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

// writeCells lists every cell's verdict.
func writeCells(w io.Writer, vs []Verdict) {
	if len(vs) == 0 {
		return
	}
	fmt.Fprintf(w, "## Cell by cell: hone's best against the best baseline\n\n")
	fmt.Fprintf(w, "Median final regret over seeds; ratio = best baseline / hone's best (above 1: hone is better).\n\n")
	fmt.Fprintf(w, "| problem | concurrency | hone's best | its regret | best baseline | its regret | ratio | hone at or below |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|\n")
	for _, v := range vs {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", v.Cell.Problem.Name, v.Cell.Concurrency, v.Hone, num(v.HoneRegret),
			v.Base, num(v.Regret), ratio(v.Regret, v.HoneRegret), map[bool]string{true: "**yes**", false: "no"}[v.Won])
	}
	fmt.Fprintln(w)
}

// writeProblems lists the problems with their rank statistics.
func writeProblems(w io.Writer, cells []*Cell, ps []*functions.Problem) {
	fmt.Fprintf(w, "## Problems\n\n")
	fmt.Fprintf(w, "ρ is Spearman's rank correlation between the value a configuration reports at step 1 (the lowest fidelity any method uses) "+
		"and its true full-fidelity value, and \"crossing\" the fraction of pairs of configurations ordered one way at step 1 and "+
		"the other at full fidelity (their learning curves cross), both on a fixed sample of %d uniform configurations "+
		"(`functions.RankStats`). Misleading settings have ρ < 0.5. Parameters: floats / integers / categories.\n\n", functions.RankSize)
	fmt.Fprintf(w, "| problem | parameters | steps | budget | ρ (step 1 vs full) | crossing | misleading | what it is |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|\n")
	for _, p := range ps {
		var nf, ni, nc int
		for _, d := range p.Dims {
			switch {
			case d.Categorical():
				nc++
			case d.Int:
				ni++
			default:
				nf++
			}
		}
		st := p.RankStats()
		var budget float64
		for _, c := range cells {
			if c.Problem == p {
				budget = c.Budget
			}
		}
		fmt.Fprintf(w, "| %s | %d / %d / %d | %d | %s | %.3f | %.3f | %s | %s |\n", p.Name, nf, ni, nc, p.Steps, num(budget),
			st.Spearman, st.Crossing, map[bool]string{true: "**yes**", false: "no"}[p.Misleading], p.About)
	}
	fmt.Fprintf(w, "\nSources:\n\n")
	seen := map[string]bool{}
	for _, p := range ps {
		if seen[p.Family] {
			continue
		}
		seen[p.Family] = true
		fmt.Fprintf(w, "- %s: %s.\n", p.Family, p.Source)
	}
	fmt.Fprintln(w)
}

// writeMethods describes the methods.
func writeMethods(w io.Writer, honeMs, baseMs []string) {
	fmt.Fprintf(w, "## Methods and measurement\n\n")
	fmt.Fprintf(w, "Every hone method runs through `runner.Run` on the sim executor with `max_concurrent_trials` = the concurrency "+
		"(`bench/searchbench/methods.go`, one line per method). A trial's trainable reports `loss` = f(x, fidelity(u)) and "+
		"`budget` = u at each step u = 1..steps, and the step takes its cost as virtual time; a paused trial resumes from its "+
		"checkpoint. Multi-fidelity methods use η = 3 and the steps as their time attribute. Goptuna v0.9.0 and Optuna "+
		"run the same problems (Optuna through a Python port checked against the Go functions to 1e-9) with the same "+
		"step-by-step evaluation, budget accounting and a simulated clock that runs `concurrency` trials at once as the sim "+
		"executor does: trials are asked when a slot frees, steps end in virtual-time order. Goptuna's TPE ignores running "+
		"trials; Optuna's TPE is multivariate, with the constant liar at concurrency > 1.\n\n")
	desc := map[string]string{
		"random":              "random search, every trial to full fidelity (baseline)",
		"asha":                "random search + ASHA (asynchronous successive halving, grace 1 step, η = 3, one bracket) (baseline)",
		"goptuna-tpe":         "Goptuna v0.9.0 TPE sampler, every trial to full fidelity (baseline)",
		"goptuna-tpe-sh":      "Goptuna v0.9.0 TPE sampler + its successive-halving pruner (min resource 1 step, η = 3) (baseline)",
		"optuna-tpe-hb":       "Optuna TPESampler(multivariate, constant_liar at concurrency > 1) + HyperbandPruner(1, steps, 3) (baseline)",
		"optuna-tpe-sh":       "Optuna TPESampler(multivariate, constant_liar at concurrency > 1) + SuccessiveHalvingPruner(1, 3, 0) (baseline)",
		"hyperband":           "hone's synchronous HyperBand + random search",
		"bohb":                "hone's HyperBand for BOHB + the BOHB searcher (HpBandSter's defaults)",
		"tpe":                 "hone's TPE behind search.Limit(concurrency), FIFO, every trial to full fidelity",
		"asha-bohb":           "hone's ASHA (grace 1 step, η = 3) + the BOHB searcher with its asynchronous options (constant liar, min_bandwidth 0.02) and the fidelity check: asynchronous BOHB",
		"dehb":                "hone's DEHB searcher and scheduler (min budget 1 step, η = 3)",
		"tpe-parallel":        "hone's TPE as a spec's `tpe` builds it (multivariate, constant liar) behind search.Limit(concurrency), FIFO, every trial to full fidelity",
		"tpe-asha":            "hone's TPE as a spec's `tpe` builds it (multivariate, constant liar, fidelity check) on ASHA's rungs (grace 1 step, η = 3), ASHA advised by it",
		"tpe-asha-univariate": "as `tpe-asha` with one density per parameter (a spec's `tpe` with `multivariate: false`)",
		"auto":                "what a spec with `searcher: auto` and `scheduler: auto` builds for the problem (spec.Build): TPE on ASHA's rungs",
	}
	for _, m := range append(slices.Clone(baseMs), honeMs...) {
		d := desc[m]
		if d == "" {
			d = "see its entry in bench/searchbench/methods.go"
		}
		fmt.Fprintf(w, "- `%s`: %s.\n", m, d)
	}
	fmt.Fprintf(w, "\nBudget: the sum of the cost of the steps a run counts, in full-fidelity evaluations (one evaluation at full fidelity "+
		"costs 1); a run ends before the step that would exceed it, with every method at every concurrency given the same "+
		"budget. Regret: only full-fidelity evaluations are found; the incumbent is the one with the lowest reported value "+
		"and its regret is its true full-fidelity value minus the optimum. \"Budget to reach\" is where a method's median "+
		"curve (over seeds) first reaches random search's median final regret in the same cell. hone's methods are "+
		"deterministic (same seed, same figures); Goptuna's TPE draws from math/rand's global source and is not.\n\n")
}

// writeDetails writes one section per problem: the plot and a table of
// every method at every concurrency.
func writeDetails(w io.Writer, cells []*Cell, ps []*functions.Problem, cs []int, info RunInfo) {
	fmt.Fprintf(w, "## Details per problem\n\n")
	fmt.Fprintf(w, "Per method and concurrency: median final regret [q25, q75] over seeds; the budget at which its median curve "+
		"reaches random search's median final regret in the same cell (\"none\": not within the budget); and, for the runs, "+
		"the median number of trials and the median searcher CPU in seconds. The plots show the median regret against "+
		"budget spent with a band between the quartiles, one panel per concurrency.\n\n")
	for _, p := range ps {
		var budget float64
		for _, c := range cells {
			if c.Problem == p {
				budget = c.Budget
			}
		}
		fmt.Fprintf(w, "### %s\n\n%s Budget %s per run, optimum %s.\n\n", p.Name, p.About, num(budget), num(p.Optimum))
		if path := info.Plots[p.Name]; path != "" {
			fmt.Fprintf(w, "![%s](%s)\n\n", p.Name, path)
		}
		fmt.Fprintf(w, "| method |")
		for _, c := range cs {
			fmt.Fprintf(w, " c=%d regret | c=%d to reach | c=%d trials, CPU |", c, c, c)
		}
		fmt.Fprintf(w, "\n|---|")
		for range cs {
			fmt.Fprintf(w, "---|---|---|")
		}
		fmt.Fprintln(w)
		sums := map[int][]MethodSummary{}
		for _, c := range cs {
			if cell := cellOf(cells, p, c); cell != nil {
				sums[c] = cell.Summaries()
			}
		}
		for _, m := range methodsOf(cells) {
			fmt.Fprintf(w, "| %s |", m)
			for _, c := range cs {
				s := summaryOf(sums[c], m)
				if s == nil {
					fmt.Fprintf(w, " | | |")
					continue
				}
				fmt.Fprintf(w, " %s [%s, %s] | %s | %s, %s |", num(s.FinalMedian), num(s.FinalQ25), num(s.FinalQ75), num(s.ToReach),
					num(s.Trials), secs(s.CPUMedian))
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
	}
}

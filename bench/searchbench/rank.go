package searchbench

import (
	"fmt"
	"io"
	"math"
	"slices"
)

// RankTest compares two samples of final regrets with the Mann–Whitney
// rank-sum test. Medians of a few dozen heavy-tailed runs move by more
// than 25% from one set of seeds to the next, so a median ratio alone
// cannot say whether one method is worse than another in a cell; the rank
// test says how often, and how surely.
type RankTest struct {
	// Better is the probability that a run of the first sample ends
	// with a lower regret than a run of the second (ties count half): the
	// U statistic over n·m, 0.5 when neither is better.
	Better float64
	// P is the one-sided p-value of the hypothesis that the second
	// sample's regrets are lower (normal approximation of U with the
	// correction for ties, no continuity correction): small when the
	// second is surely better.
	P float64
}

// Ranks returns the rank test of a against b (regrets; +Inf, a run that
// reached no result, ranks last; NaN values are left out).
func Ranks(a, b []float64) RankTest {
	a, b = withoutNaN(a), withoutNaN(b)
	n, m := float64(len(a)), float64(len(b))
	if n == 0 || m == 0 {
		return RankTest{Better: 0.5, P: 0.5}
	}
	var u float64
	for _, x := range a {
		for _, y := range b {
			switch {
			case x < y:
				u++
			case x == y:
				u += 0.5
			}
		}
	}
	// Tie correction: Σ(t³ − t) over groups of equal values in both
	// samples together.
	all := slices.Concat(a, b)
	slices.Sort(all)
	var ties float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j] == all[i] {
			j++
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	nm := n + m
	v := n * m / 12 * ((nm + 1) - ties/(nm*(nm-1)))
	if v <= 0 {
		return RankTest{Better: u / (n * m), P: 0.5}
	}
	z := (u - n*m/2) / math.Sqrt(v)
	return RankTest{Better: u / (n * m), P: 0.5 * math.Erfc(-z/math.Sqrt2)}
}

// withoutNaN returns a copy of v without its NaN values.
func withoutNaN(v []float64) []float64 {
	return slices.DeleteFunc(slices.Clone(v), math.IsNaN)
}

// finals returns the final regrets of ts.
func finals(ts []*Trace) []float64 {
	out := make([]float64, len(ts))
	for i, t := range ts {
		out[i] = t.Final()
	}
	return out
}

// significance is the p-value under which the report calls a baseline
// surely better than auto in a cell.
const significance = 0.05

// autoRow is auto's verdict in one cell: its median final regret and the
// best baseline's, and the rank test of their runs.
type autoRow struct {
	c    *Cell
	base string
	a, b float64
	rt   RankTest
}

// within reports whether auto's median is within 1.25× of the best
// baseline's (the goal), and sure whether, outside it, the baseline's runs
// are surely lower.
func (r autoRow) within() bool { return r.a <= 1.25*r.b }
func (r autoRow) sure() bool   { return !r.within() && r.rt.P < significance }

// autoRows returns auto's verdict in every cell that has auto and a
// baseline.
func autoRows(cells []*Cell) []autoRow {
	var rows []autoRow
	for _, c := range cells {
		ss := c.Summaries()
		s, b := summaryOf(ss, "auto"), best(ss, IsBaseline)
		if s == nil || b == nil {
			continue
		}
		rows = append(rows, autoRow{c, b.Method, s.FinalMedian, b.FinalMedian, Ranks(finals(c.Traces["auto"]), finals(c.Traces[b.Method]))})
	}
	return rows
}

// autoCounts returns how many rows are within 1.25×, and how many of the
// others are sure misses.
func autoCounts(rows []autoRow) (within, sure int) {
	for _, r := range rows {
		if r.within() {
			within++
		} else if r.sure() {
			sure++
		}
	}
	return within, sure
}

// writeAutoCells lists, cell by cell, auto against the best baseline: the
// median ratio that the goal reads, and the rank test of the runs behind
// the medians.
func writeAutoCells(w io.Writer, cells []*Cell) {
	rows := autoRows(cells)
	if len(rows) == 0 {
		return
	}
	within, sure := autoCounts(rows)
	miss := len(rows) - within
	fmt.Fprintf(w, "## `auto` cell by cell\n\n")
	fmt.Fprintf(w, "The goal reads the ratio of medians. Beside it, the runs behind the medians: how often a run of `auto` ends "+
		"below a run of the best baseline (ties count half; 0.5 when neither is better), and the one-sided Mann–Whitney p-value "+
		"of the baseline's runs being lower (normal approximation with the tie correction). "+
		"Of the %d cells where `auto` is not within 1.25×, the baseline is surely better (p < %g) in %d; "+
		"in the other %d the difference of medians is within what the seeds scatter.\n\n", miss, significance, sure, miss-sure)
	fmt.Fprintf(w, "| problem | concurrency | `auto` | best baseline | its regret | ratio auto / baseline | within 1.25× | auto's run lower | p (baseline lower) |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		verdict := "**yes**"
		switch {
		case r.sure():
			verdict = "no (surely)"
		case !r.within():
			verdict = "no"
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %.2f | %.3f |\n", r.c.Problem.Name, r.c.Concurrency, num(r.a), r.base, num(r.b),
			ratio(r.a, r.b), verdict, r.rt.Better, r.rt.P)
	}
	fmt.Fprintln(w)
}

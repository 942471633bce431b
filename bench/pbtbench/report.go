package pbtbench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hone-tune/hone/bench/internal/benchutil"
)

// Quartiles are the median and quartiles of a figure over seeds.
type Quartiles struct {
	Q25, Median, Q75 float64
}

// quartiles returns the quartiles of vals (NaN values are dropped).
func quartiles(vals []float64) Quartiles {
	s := make([]float64, 0, len(vals))
	for _, v := range vals {
		if !math.IsNaN(v) {
			s = append(s, v)
		}
	}
	slices.Sort(s)
	return Quartiles{benchutil.Quantile(s, 0.25), benchutil.Quantile(s, 0.5), benchutil.Quantile(s, 0.75)}
}

// String formats q as "median [q25, q75]".
func (q Quartiles) String() string {
	return fmt.Sprintf("%s [%s, %s]", benchutil.Num(q.Median), benchutil.Num(q.Q25), benchutil.Num(q.Q75))
}

// ValuesAt returns the incumbent's true metric of every seed of method m
// once b steps had been reported (b < 0: at the end of each run).
func (r *Result) ValuesAt(m string, b int) []float64 {
	var out []float64
	for _, t := range r.Traces[m] {
		if b < 0 {
			out = append(out, t.Final())
		} else {
			out = append(out, t.ValueAt(b))
		}
	}
	return out
}

// Curve returns the quartiles over seeds of method m's incumbent at every
// budget 1..upTo.
func (r *Result) Curve(m string, upTo int) []Quartiles {
	out := make([]Quartiles, upTo)
	for b := 1; b <= upTo; b++ {
		out[b-1] = quartiles(r.ValuesAt(m, b))
	}
	return out
}

// Summary is one method's row of a result's table.
type Summary struct {
	Method string
	// At25, At50 and Final are the incumbent's true metric at 25%, 50%
	// and 100% of the nominal budget (population × steps); End is at the
	// end of each run, after Steps steps.
	At25, At50, Final, End   Quartiles
	Steps, Exploits, Skipped Quartiles
	// Wins counts the seeds whose final value (at the nominal budget) is
	// better than random search's with the same seed (and hence the same
	// initial population); Ties those where it is equal.
	Wins, Ties int
	// Wall is the median wall time of a run.
	Wall time.Duration
}

// Summaries returns a row per method that ran, in report order.
func (r *Result) Summaries() []Summary {
	b := r.Budget()
	var out []Summary
	base := r.ValuesAt(MethodRandom, b)
	for _, m := range r.Methods {
		s := Summary{Method: m, At25: quartiles(r.ValuesAt(m, b/4)), At50: quartiles(r.ValuesAt(m, b/2)),
			Final: quartiles(r.ValuesAt(m, b)), End: quartiles(r.ValuesAt(m, -1))}
		var steps, exploits, skipped, walls []float64
		for i, t := range r.Traces[m] {
			steps = append(steps, float64(t.Steps))
			exploits = append(exploits, float64(t.Exploits))
			skipped = append(skipped, float64(t.Skipped))
			walls = append(walls, float64(t.Wall))
			if i < len(base) {
				v := t.ValueAt(b)
				switch {
				case r.Problem.Mode.Better(v, base[i]):
					s.Wins++
				case v == base[i]:
					s.Ties++
				}
			}
		}
		s.Steps, s.Exploits, s.Skipped = quartiles(steps), quartiles(exploits), quartiles(skipped)
		s.Wall = time.Duration(quartiles(walls).Median)
		out = append(out, s)
	}
	return out
}

// Title returns the heading of r.
func (r *Result) Title() string { return fmt.Sprintf("%s, population %d", r.Problem.Name, r.Pop) }

// FileName returns the base name of r's plot.
func (r *Result) FileName() string { return fmt.Sprintf("pbt-%s-pop%d.png", r.Problem.Name, r.Pop) }

// WriteMarkdown writes r's table: per method the incumbent's true metric
// (median and quartiles over seeds) at 25%, 50% and 100% of the nominal
// budget and at the end of the run, the gap ratio against random search
// at the nominal budget, the steps used, the exploits, the paired wins
// over random search, and the wall time of a run; then the reference
// figures and the methods that did not run.
func (r *Result) WriteMarkdown(w io.Writer) {
	p := r.Problem
	b := r.Budget()
	fmt.Fprintf(w, "### %s\n\n", r.Title())
	fmt.Fprintf(w, "Metric %s (%s; scored by its true value), %d steps per member, perturbation interval %d, %d seeds; "+
		"nominal budget %d steps (population × steps per member).\n\n", p.Metric, p.Mode, p.Steps, p.Interval, r.Seeds, b)
	ss := r.Summaries()
	var base *Summary
	for i := range ss {
		if ss[i].Method == MethodRandom {
			base = &ss[i]
		}
	}
	fmt.Fprintf(w, "| method | at %d steps (25%%) | at %d steps (50%%) | **at %d steps (100%%)** | %s vs random at 100%% (random's / method's) | better than random (paired seeds) | at run end | steps used | exploits (median, skipped: donor without checkpoint) | wall per run |\n",
		b/4, b/2, b, p.GapLabel)
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range ss {
		gapRatio := "1×"
		wins := "—"
		if base != nil && s.Method != MethodRandom {
			gapRatio = benchutil.Ratio(p.Gap(base.Final.Median) / p.Gap(s.Final.Median))
			wins = fmt.Sprintf("%d of %d", s.Wins, r.Seeds)
			if s.Ties > 0 {
				wins += fmt.Sprintf(" (%d ties)", s.Ties)
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | **%s** | %s | %s | %s | %s | %s (%s skipped) | %s |\n",
			s.Method, s.At25, s.At50, s.Final, gapRatio, wins, s.End, s.Steps, benchutil.Num(s.Exploits.Median), benchutil.Num(s.Skipped.Median), s.Wall.Round(100*time.Microsecond))
	}
	fmt.Fprintln(w)
	if len(p.References) > 0 {
		var refs []string
		for _, ref := range p.References {
			refs = append(refs, fmt.Sprintf("%s: %s", ref.Name, benchutil.Num(ref.Value)))
		}
		fmt.Fprintf(w, "Reference: %s.\n\n", strings.Join(refs, "; "))
	}
}

// Claim compares PB2 with PBT on one result, both asynchronous or both
// synchronous: the medians at the nominal budget and the seeds on which
// PB2 is better (paired by seed: the same initial population).
type Claim struct {
	Problem string
	Pop     int
	// PBTMethod and PB2Method are the two methods compared.
	PBTMethod, PB2Method string
	PBT, PB2             Quartiles
	PB2Better, Ties      int
	Seeds                int
	// GapRatio is PBT's median gap over PB2's (> 1: PB2 better).
	GapRatio float64
	// P is the two-sided p-value of the sign test on the paired seeds
	// (ties dropped).
	P float64
}

// signTest returns the two-sided p-value of the sign test: k successes in
// n untied pairs under p = 1/2.
func signTest(k, n int) float64 {
	if n == 0 {
		return 1
	}
	hi := max(k, n-k)
	tail := 0.0
	for i := hi; i <= n; i++ {
		lg, _ := math.Lgamma(float64(n + 1))
		la, _ := math.Lgamma(float64(i + 1))
		lb, _ := math.Lgamma(float64(n - i + 1))
		tail += math.Exp(lg - la - lb - float64(n)*math.Ln2)
	}
	return min(1, 2*tail)
}

// Claims returns the PB2-vs-PBT comparisons of every result where both
// ran, asynchronous then synchronous.
func Claims(results []*Result) []Claim {
	var out []Claim
	for _, r := range results {
		for _, pair := range [][2]string{{MethodPBT, MethodPB2}, {MethodPBTSynch, MethodPB2Synch}} {
			if r.Traces[pair[0]] == nil || r.Traces[pair[1]] == nil {
				continue
			}
			b := r.Budget()
			a, c := r.ValuesAt(pair[0], b), r.ValuesAt(pair[1], b)
			cl := Claim{Problem: r.Problem.Name, Pop: r.Pop, PBTMethod: pair[0], PB2Method: pair[1],
				PBT: quartiles(a), PB2: quartiles(c), Seeds: len(a)}
			for i := range a {
				switch {
				case r.Problem.Mode.Better(c[i], a[i]):
					cl.PB2Better++
				case c[i] == a[i]:
					cl.Ties++
				}
			}
			cl.GapRatio = r.Problem.Gap(cl.PBT.Median) / r.Problem.Gap(cl.PB2.Median)
			cl.P = signTest(cl.PB2Better, cl.Seeds-cl.Ties)
			out = append(out, cl)
		}
	}
	return out
}

// WriteReport writes every result's table and the PB2-vs-PBT comparison
// ("PB2 beats PBT with small populations").
func WriteReport(w io.Writer, results []*Result) {
	for _, r := range results {
		r.WriteMarkdown(w)
	}
	fmt.Fprintf(w, "### PB2 vs PBT (published claim: \"PB2 beats PBT with small populations\")\n\n")
	claims := Claims(results)
	if len(claims) == 0 {
		fmt.Fprintf(w, "Not checked: PB2 and PBT did not both run.\n\n")
		return
	}
	fmt.Fprintf(w, "| problem | population | methods | PBT at 100%% budget | PB2 at 100%% budget | gap ratio (PBT's / PB2's; > 1: PB2 better) | PB2 better (paired seeds) | sign test p (two-sided, ties dropped) |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|\n")
	for _, c := range claims {
		ties := ""
		if c.Ties > 0 {
			ties = fmt.Sprintf(" (%d ties)", c.Ties)
		}
		fmt.Fprintf(w, "| %s | %d | %s vs %s | %s | %s | %s | %d of %d%s | %.2g |\n", c.Problem, c.Pop, c.PB2Method, c.PBTMethod,
			c.PBT, c.PB2, benchutil.Ratio(c.GapRatio), c.PB2Better, c.Seeds, ties, c.P)
	}
	fmt.Fprintln(w)
}

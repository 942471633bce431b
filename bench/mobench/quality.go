package mobench

import (
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/hone-tune/hone/bench/mofunctions"
	"github.com/hone-tune/hone/bench/searchbench"
)

// Baseline reports whether the method named name is a baseline (another
// tool's) rather than one of hone's: the Optuna samplers.
func Baseline(name string) bool { return strings.HasPrefix(name, "optuna-") }

// QualityInfo says how a report was made, for its section of
// docs/QUALITY.md.
type QualityInfo struct {
	Command string    // the command line that made it
	When    time.Time // when it ran
	Optuna  string    // the Optuna version that ran, or why none did
}

// WriteQuality writes r as docs/QUALITY.md's section of several
// objectives: how it was made, the goal's verdict per problem (hone's
// best multi-objective method, random search left out, against the best
// baseline, by median hypervolume at equal budget), and every method's
// figures.
func (r *Report) WriteQuality(w io.Writer, info QualityInfo) {
	fmt.Fprintf(w, "Written by `%s` on %s, %s/%s/%d CPUs: %d seeds per method and problem, a budget of %g full-fidelity evaluations per run; %s. What is measured is in the package documentation of `bench/mobench`; the multi-fidelity comparison of MO-ASHA against NSGA-II's budget is in `bench/MOASHA_RESULTS.md` (`cd bench && go run ./cmd/mobudget`).\n\n",
		info.Command, info.When.UTC().Format("2006-01-02 15:04 UTC"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), r.Seeds, r.Budget, info.Optuna)
	met, judged, undecided := 0, 0, 0
	var rows []string
	for _, p := range r.problems() {
		hone, base := r.best(p, false), r.best(p, true)
		if hone == nil || base == nil {
			continue
		}
		judged++
		h, b := hone.Median(), base.Median()
		verdict := "below"
		switch {
		case h == 0 && b == 0:
			// No median run reached the reference point's box: the
			// problem tells no method from another at this budget.
			verdict = "undecided: every median is 0"
			judged--
			undecided++
		case h >= b:
			verdict = "at or above"
			met++
		}
		ratio := "-"
		if b > 0 {
			ratio = fmt.Sprintf("%.2f×", h/b)
		}
		rows = append(rows, fmt.Sprintf("| %s | `%s` %.4f | `%s` %.4f | %s | %s |", p, hone.Method, h, base.Method, b, ratio, verdict))
	}
	fmt.Fprintf(w, "- **Goal**: hone's best multi-objective method at or above the best baseline's median hypervolume on every problem at equal budget: **%d of %d** problems", met, judged)
	if undecided > 0 {
		fmt.Fprintf(w, " (and %d where every median is 0, which this budget does not decide)", undecided)
	}
	fmt.Fprintf(w, ".\n\n")
	fmt.Fprintf(w, "| problem | hone's best (median HV) | best baseline (median HV) | ratio | verdict |\n|---|---|---|---|---|\n")
	for _, row := range rows {
		fmt.Fprintln(w, row)
	}
	fmt.Fprintf(w, "\nEvery method (median hypervolume over the seeds, its share of the true front's, the seeds' minimum and maximum, the method's median CPU time where measured):\n\n")
	fmt.Fprintf(w, "| problem | method | median HV | HV / front | min HV | max HV | CPU |\n|---|---|---|---|---|---|---|\n")
	for _, c := range r.Cells {
		front := math.NaN()
		if p := mofunctions.ByName(c.Problem); p != nil {
			front = p.FrontHV
		}
		fmt.Fprintf(w, "| %s | `%s` | %.4f | %.3f | %.4f | %.4f | %s |\n", c.Problem, c.Method, c.Median(), c.Median()/front,
			slices.Min(c.HV), slices.Max(c.HV), c.cpuText())
	}
}

// problems returns the report's problems in order, once each.
func (r *Report) problems() []string {
	var out []string
	for _, c := range r.Cells {
		if !slices.Contains(out, c.Problem) {
			out = append(out, c.Problem)
		}
	}
	return out
}

// best returns the cell of problem p with the highest median hypervolume
// among the baselines (baseline true) or among hone's methods other than
// random search, the first of equals; nil if there is none.
func (r *Report) best(p string, baseline bool) *Cell {
	var best *Cell
	for _, c := range r.Cells {
		if c.Problem != p || Baseline(c.Method) != baseline || !baseline && c.Method == "random" {
			continue
		}
		if best == nil || c.Median() > best.Median() {
			best = c
		}
	}
	return best
}

// cpuText is the cell's median CPU time: in seconds with two decimals
// from 0.1 s, in whole milliseconds from 10 ms, in milliseconds with one
// decimal below; "-" when the method does not measure it.
func (c *Cell) cpuText() string {
	cpu := make([]float64, len(c.CPU))
	for i, d := range c.CPU {
		cpu[i] = d.Seconds()
	}
	if len(cpu) == 0 || slices.Max(cpu) <= 0 {
		return "-"
	}
	switch m := median(cpu); {
	case m >= 0.1:
		return fmt.Sprintf("%.2fs", m)
	case m >= 0.01:
		return fmt.Sprintf("%.0fms", m*1000)
	default:
		return fmt.Sprintf("%.1fms", m*1000)
	}
}

// ReplaceQuality replaces the section of several objectives in the report
// at path (docs/QUALITY.md, between searchbench.SeveralBegin and
// searchbench.SeveralEnd) with section.
func ReplaceQuality(path, section string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("mobench: %w", err)
	}
	s := string(data)
	i := strings.Index(s, searchbench.SeveralBegin)
	j := strings.Index(s, searchbench.SeveralEnd)
	if i < 0 || j < i {
		return fmt.Errorf("mobench: %s has no section of several objectives (%s ... %s)", path, searchbench.SeveralBegin, searchbench.SeveralEnd)
	}
	s = s[:i+len(searchbench.SeveralBegin)] + "\n" + strings.Trim(section, "\n") + "\n" + s[j:]
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		return fmt.Errorf("mobench: %w", err)
	}
	return nil
}

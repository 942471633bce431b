package searchbench

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/hone-tune/hone/bench/functions"
)

// saved is the file form of a run: its results and how it ran, so that
// its report can be written again (with another version of the report
// code) without running it again.
type saved struct {
	Info      RunInfo     `json:"info"`
	Optuna    string      `json:"optuna"`
	OptunaRan bool        `json:"optuna_ran"`
	Cells     []savedCell `json:"cells"`
	Scale     []savedCell `json:"scale,omitempty"`
}

type savedCell struct {
	Problem     string              `json:"problem"`
	Concurrency int                 `json:"concurrency"`
	Budget      float64             `json:"budget"`
	Seeds       int                 `json:"seeds"`
	Methods     []string            `json:"methods"`
	Traces      map[string][]*Trace `json:"traces"`
}

// Save writes res and info (without its plots and kept sections) as JSON.
func Save(w io.Writer, res *Results, info RunInfo) error {
	info.Plots, info.ParallelPlot, info.Notes, info.SeveralObjectives = nil, "", "", ""
	s := saved{Info: info, Optuna: res.Optuna, OptunaRan: res.OptunaRan}
	for _, c := range res.Cells {
		s.Cells = append(s.Cells, savedCell{Problem: c.Problem.Name, Concurrency: c.Concurrency, Budget: c.Budget,
			Seeds: c.Seeds, Methods: c.Methods, Traces: c.Traces})
	}
	for _, c := range res.Scale {
		s.Scale = append(s.Scale, savedCell{Problem: c.Problem.Name, Concurrency: c.Concurrency, Budget: c.Budget,
			Seeds: c.Seeds, Methods: c.Methods, Traces: c.Traces})
	}
	enc := json.NewEncoder(w)
	return enc.Encode(s)
}

// Load reads what Save wrote.
func Load(r io.Reader) (*Results, RunInfo, error) {
	var s saved
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return nil, RunInfo{}, err
	}
	res := &Results{Optuna: s.Optuna, OptunaRan: s.OptunaRan}
	var err error
	if res.Cells, err = loadCells(s.Cells); err != nil {
		return nil, RunInfo{}, err
	}
	if res.Scale, err = loadCells(s.Scale); err != nil {
		return nil, RunInfo{}, err
	}
	return res, s.Info, nil
}

// loadCells turns saved cells back into cells.
func loadCells(saved []savedCell) ([]*Cell, error) {
	var out []*Cell
	probs := map[string]*functions.Problem{}
	for _, c := range saved {
		p := probs[c.Problem]
		if p == nil {
			if p = functions.ByName(c.Problem); p == nil {
				return nil, fmt.Errorf("saved run: unknown problem %q", c.Problem)
			}
			probs[c.Problem] = p
		}
		for _, m := range c.Methods {
			if len(c.Traces[m]) != c.Seeds {
				return nil, fmt.Errorf("saved run: %s at concurrency %d: %d traces of %s for %d seeds",
					c.Problem, c.Concurrency, len(c.Traces[m]), m, c.Seeds)
			}
		}
		out = append(out, &Cell{Problem: p, Concurrency: c.Concurrency, Budget: c.Budget, Seeds: c.Seeds,
			Methods: c.Methods, Traces: c.Traces})
	}
	return out, nil
}

// Merge combines the results of runs of the benchmark made apart into the
// results of one: seeds 1 to 20 with seeds 21 to 40 (-first-seed), or
// hone's methods with baselines run on another day. Per problem and
// concurrency, each method keeps its runs of every seed, in seed order.
// The runs are deterministic, so a method's run of a seed found in
// several parts must be the same run (same regrets at the same budgets,
// same steps and trials); a difference means the parts ran different
// code, and Merge refuses it. Every method of a cell must have run the
// same seeds, and the parts must agree on each cell's budget and on
// Optuna's version where it ran. The info of the merge has the earliest
// start, the sums of the wall and CPU times, each part's load, and the
// parts' distinct commands, one per line.
//
// only, if not nil, holds for each part the methods to take from it (nil:
// every method): those methods' runs in the earlier parts are dropped, so
// that a part run again with new code replaces what it ran.
func Merge(parts []*Results, infos []RunInfo, only [][]string) (*Results, RunInfo, error) {
	if len(parts) == 0 || len(parts) != len(infos) || only != nil && len(only) != len(parts) {
		return nil, RunInfo{}, fmt.Errorf("merge: %d results, %d infos and %d method lists", len(parts), len(infos), len(only))
	}
	if only == nil {
		only = make([][]string, len(parts))
	}
	out := &Results{}
	for i, p := range parts {
		if !p.OptunaRan {
			if out.Optuna == "" {
				out.Optuna = p.Optuna
			}
			continue
		}
		if out.OptunaRan && out.Optuna != p.Optuna {
			return nil, RunInfo{}, fmt.Errorf("merge: part %d ran Optuna %q, an earlier part %q", i+1, p.Optuna, out.Optuna)
		}
		out.Optuna, out.OptunaRan = p.Optuna, true
	}
	var err error
	if out.Cells, err = mergeCells(parts, only, func(r *Results) []*Cell { return r.Cells }); err != nil {
		return nil, RunInfo{}, err
	}
	if out.Scale, err = mergeCells(parts, only, func(r *Results) []*Cell { return r.Scale }); err != nil {
		return nil, RunInfo{}, fmt.Errorf("%w (the runs at %d steps)", err, ScaleSteps)
	}
	return out, mergeInfo(infos), nil
}

// mergeInfo is the info of merged parts (Merge).
func mergeInfo(infos []RunInfo) RunInfo {
	info := infos[0]
	var cmds, modes, loads []string
	for i, in := range infos {
		if i > 0 {
			if in.Start.Before(info.Start) {
				info.Start = in.Start
			}
			info.Elapsed += in.Elapsed
			info.CPUTime += in.CPUTime
			info.CPUs = max(info.CPUs, in.CPUs)
			info.Parallel = max(info.Parallel, in.Parallel)
			if info.TimerOverhead == 0 {
				info.TimerOverhead = in.TimerOverhead
			}
		}
		if !slices.Contains(cmds, in.Command) {
			cmds = append(cmds, in.Command)
		}
		if !slices.Contains(modes, in.Mode) {
			modes = append(modes, in.Mode)
		}
		if in.Load != "" {
			loads = append(loads, fmt.Sprintf("%s (part %d)", in.Load, i+1))
		}
	}
	info.Command, info.Mode, info.Load = strings.Join(cmds, "\n"), strings.Join(modes, "+"), strings.Join(loads, "; ")
	return info
}

// mergeCells merges the cells that of picks from each part, taking from
// part i only the methods only[i] if it is not nil (Merge).
func mergeCells(parts []*Results, only [][]string, of func(*Results) []*Cell) ([]*Cell, error) {
	type key struct {
		problem     string
		concurrency int
	}
	var order []key
	cells := map[key]*Cell{}
	runs := map[key]map[string]map[uint64]*Trace{}
	for i, part := range parts {
		for _, byMethod := range runs {
			for _, m := range only[i] {
				delete(byMethod, m)
			}
		}
		for _, c := range of(part) {
			k := key{c.Problem.Name, c.Concurrency}
			m := cells[k]
			if m == nil {
				m = &Cell{Problem: c.Problem, Concurrency: c.Concurrency, Budget: c.Budget, Traces: map[string][]*Trace{}}
				cells[k], runs[k] = m, map[string]map[uint64]*Trace{}
				order = append(order, k)
			} else if m.Budget != c.Budget {
				return nil, fmt.Errorf("merge: %s at concurrency %d: budget %g in part %d, %g before", k.problem, k.concurrency, c.Budget, i+1, m.Budget)
			}
			for method, ts := range c.Traces {
				if only[i] != nil && !slices.Contains(only[i], method) {
					continue
				}
				bySeed := runs[k][method]
				if bySeed == nil {
					bySeed = map[uint64]*Trace{}
					runs[k][method] = bySeed
				}
				for _, t := range ts {
					if prev, ok := bySeed[t.Seed]; ok {
						if !sameRun(prev, t) {
							return nil, fmt.Errorf("merge: %s at concurrency %d: %s's run of seed %d in part %d differs from an earlier part's (final regret %g against %g): the parts ran different code",
								k.problem, k.concurrency, method, t.Seed, i+1, t.Final(), prev.Final())
						}
						continue
					}
					bySeed[t.Seed] = t
				}
			}
		}
	}
	var out []*Cell
	for _, k := range order {
		c := cells[k]
		var first string
		var seeds []uint64
		for _, method := range reportOrder(runs[k]) {
			s := slices.Sorted(maps.Keys(runs[k][method]))
			if first == "" {
				first, seeds = method, s
			} else if !slices.Equal(s, seeds) {
				return nil, fmt.Errorf("merge: %s at concurrency %d: %s ran seeds %s, %s ran %s: every method of a cell must run the same seeds",
					k.problem, k.concurrency, method, seedList(s), first, seedList(seeds))
			}
			c.Methods = append(c.Methods, method)
			for _, seed := range s {
				c.Traces[method] = append(c.Traces[method], runs[k][method][seed])
			}
		}
		c.Seeds = len(seeds)
		out = append(out, c)
	}
	return out, nil
}

// sameRun reports whether a and b record the same run: the same regrets at
// the same budgets, budget spent, steps, evaluations and trials (their
// CPU and wall times may differ).
func sameRun(a, b *Trace) bool {
	return a.Method == b.Method && a.Problem == b.Problem && a.Seed == b.Seed && a.Concurrency == b.Concurrency &&
		a.Budget == b.Budget && a.Spent == b.Spent && a.Steps == b.Steps && a.FullEvals == b.FullEvals &&
		a.Trials == b.Trials && slices.Equal(a.Points, b.Points)
}

// reportOrder returns the methods of runs in report order (Methods), any
// unknown ones last, by name.
func reportOrder[V any](runs map[string]V) []string {
	var out []string
	for _, m := range Methods() {
		if _, ok := runs[m]; ok {
			out = append(out, m)
		}
	}
	var rest []string
	for m := range runs {
		if !slices.Contains(out, m) {
			rest = append(rest, m)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// seedList writes seeds compactly: "1-20, 31".
func seedList(seeds []uint64) string {
	var parts []string
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", seeds[i], seeds[j]))
		} else {
			parts = append(parts, fmt.Sprint(seeds[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

package tpe

import (
	"math"
	"slices"

	"github.com/hone-tune/hone/pareto"
)

// tinyWeight is the kernel weight of a good observation that adds nothing
// to the good set's hypervolume (Optuna's EPS): a dominated one, or an
// infeasible one beside feasible ones.
const tinyWeight = 1e-12

// splitGeneral is split for several objectives or constraints: the good
// rows are the k observations that rank first by non-dominated sorting
// under constrained domination (pareto.TopFronts, the first fronts of
// pareto.SortConstrained: feasible ones
// first, by their Pareto ranks, then infeasible ones by their total
// violation), filled front by front; of the front that does not fit,
// the subset chosen by greedy hypervolume subset selection (several
// objectives, a feasible front) or the earliest suggested (one objective,
// or an infeasible front). The bad rows are the others with the liars,
// capped to the newest maxBad. With several objectives the good rows
// carry their kernel weights (row.w): their hypervolume contributions
// within the good set (see goodWeights). Both are in suggestion order.
func splitGeneral(rows []row, k int, multi bool) (good, bad []row) {
	var obs []int // indices of the observations in rows
	for i, r := range rows {
		if !r.liar {
			obs = append(obs, i)
		}
	}
	k = min(max(k, 0), len(obs))
	pts := make([][]float64, len(obs))
	viol := make([]float64, len(obs))
	for j, i := range obs {
		pts[j], viol[j] = rows[i].losses, rows[i].viol
	}
	chosen := make([]bool, len(rows))
	n := 0
	for _, f := range pareto.TopFronts(pts, viol, k) {
		if n >= k {
			break
		}
		pick := f
		if n+len(f) > k {
			switch {
			case multi && viol[f[0]] <= 0:
				pick = greedySubset(pts, f, k-n)
			default:
				pick = f[:k-n]
			}
		}
		for _, j := range pick {
			chosen[obs[j]] = true
		}
		n += len(pick)
	}
	good = make([]row, 0, k)
	bad = make([]row, 0, len(rows)-k)
	for i, r := range rows {
		if chosen[i] {
			good = append(good, r)
		} else {
			bad = append(bad, r)
		}
	}
	if multi {
		goodWeights(good)
	}
	if n := len(bad) - maxBad; n > 0 {
		bad = bad[n:] // the newest maxBad
	}
	return good, bad
}

// greedySubset returns k of the points pts[f[j]] (one front) chosen
// greedily for their hypervolume: each step takes the point that adds the
// most to the hypervolume of those taken (the earliest on ties), with the
// front's reference point (pareto.Reference). This is Optuna's solution
// of the hypervolume subset selection problem; its result is in the
// order taken.
func greedySubset(pts [][]float64, f []int, k int) []int {
	cand := make([][]float64, len(f))
	for j, i := range f {
		cand[j] = pts[i]
	}
	ref := pareto.Reference(cand)
	used := make([]bool, len(f))
	var sel []int
	var selPts [][]float64
	hv := 0.0
	for len(sel) < k {
		best, bestGain := -1, -1.0
		for j, p := range cand {
			if used[j] {
				continue
			}
			if gain := pareto.Hypervolume(append(selPts[:len(selPts):len(selPts)], p), ref) - hv; gain > bestGain {
				best, bestGain = j, gain
			}
		}
		used[best] = true
		sel = append(sel, f[best])
		selPts = append(selPts, cand[best])
		hv = pareto.Hypervolume(selPts, ref)
	}
	return sel
}

// goodWeights sets the kernel weights of the good rows with several
// objectives, as Optuna's multi-objective TPE does: each feasible row's
// exclusive contribution to the hypervolume of the feasible good rows,
// plus tinyWeight, divided by the largest, so that the rows that extend
// the front most weigh 1 and dominated ones almost nothing. The reference
// point is pareto.Reference of those rows (Optuna takes max(1.1·w,
// 0.9·w) of their worst values w, which depends on where zero is). An
// infeasible good row (there are fewer feasible observations than good
// ones) weighs tinyWeight beside feasible ones, and 1 when no good row is
// feasible, so that the model then follows the least violating ones.
func goodWeights(good []row) {
	var feas []int
	for i, r := range good {
		if r.viol <= 0 {
			feas = append(feas, i)
		}
	}
	for i := range good {
		good[i].w = tinyWeight
		if len(feas) == 0 {
			good[i].w = 1
		}
	}
	switch len(feas) {
	case 0:
		return
	case 1:
		good[feas[0]].w = 1
		return
	}
	pts := make([][]float64, len(feas))
	for j, i := range feas {
		pts[j] = good[i].losses
	}
	contrib := pareto.HypervolumeContributions(pts, pareto.Reference(pts))
	for j := range contrib {
		contrib[j] += tinyWeight
	}
	top := slices.Max(contrib)
	for j, i := range feas {
		good[i].w = contrib[j] / top
	}
}

// rungSplitGeneral is rung training for several objectives or constraints
// (the fidelity check is off, so every observed trial counts; n of them):
// the good rows are the first gamma(n) trials taken budget by budget from
// the highest down, all those of a budget while they fit, and of the
// budget that does not fit, those splitGeneral chooses among its trials by
// their losses and violations there. With several objectives the good
// rows of each budget are weighted by their hypervolume contributions
// among the good rows of that budget only (goodWeights), so that losses at
// different budgets are never compared. The bad rows are the newest
// maxBad of the other observed trials but the running ones (unless
// runningBad) and the liars, as in rungTraining.
// Both are in suggestion order.
func (s *Searcher) rungSplitGeneral(n int) (good, bad []row) {
	k := min(max(s.gamma(n), 0), n)
	multi := len(s.objs) > 1
	isGood := make(map[int]bool, k)
	good = make([]row, 0, k)
	at := 0 // s.ranked holds the trials by budget, highest first
	for lv := len(s.budgets) - 1; lv >= 0 && len(good) < k; lv-- {
		level := make([]row, 0, s.perLevel[lv])
		for _, t := range s.ranked[at : at+s.perLevel[lv]] {
			level = append(level, row{seq: t.seq, loss: t.topLoss, x: t.x, level: t.top, losses: t.topLosses, viol: t.topViol})
		}
		at += s.perLevel[lv]
		slices.SortFunc(level, func(a, b row) int { return a.seq - b.seq })
		if len(good)+len(level) > k {
			level, _ = splitGeneral(level, k-len(good), multi)
		} else if multi {
			goodWeights(level)
		}
		for _, r := range level {
			isGood[r.seq] = true
		}
		good = append(good, level...)
	}
	slices.SortFunc(good, func(a, b row) int { return a.seq - b.seq })
	bad = make([]row, 0, min(maxBad, len(s.all)))
	for i := len(s.all) - 1; i >= 0 && len(bad) < maxBad; i-- {
		switch t := s.all[i]; {
		case t.top >= 0 && isGood[t.seq]:
		case t.top >= 0 && !t.done && !s.runningBad: // not judged yet
		case t.top >= 0:
			bad = append(bad, row{seq: t.seq, loss: t.topLoss, x: t.x, level: t.top, losses: t.topLosses, viol: t.topViol})
		case s.liar && !t.done:
			bad = append(bad, row{seq: t.seq, loss: math.Inf(1), x: t.x, liar: true})
		}
	}
	slices.Reverse(bad)
	return good, bad
}

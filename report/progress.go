package report

import (
	"cmp"
	"math"
	"slices"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/results"
)

// Progress is the best value of the metric found so far as the experiment
// went on, against the time since it began and against the budget spent.
// Results are taken in the order they arrived (their timestamp; results of
// the same second in the order of their trials' creation, each trial's in
// its own order). The budget after a result is the sum, over the results
// so far, of how far each advanced its trial's time attribute: a
// training_iteration of 1, 2, 3 spends 3, whatever the trial. A result
// whose time attribute is not above its trial's previous one (a restore
// from an earlier checkpoint) spends nothing.
//
// The best is over single results, so it can be better than the best
// trial's score when the scope is not all (a trial whose last result is
// worse than an earlier one).
type Progress struct {
	// Metric is the metric, TimeAttr the result field the budget sums.
	Metric   string `json:"metric"`
	TimeAttr string `json:"time_attr"`
	// Points are the results that improved the best, and the last result
	// (so that the curve reaches the end of the experiment), in order.
	Points []ProgressPoint `json:"points"`
	// Results counts the results with a finite value of the metric.
	Results int `json:"results"`
	// Budget is the budget spent by every result.
	Budget float64 `json:"budget"`
	// Elapsed is the seconds from the experiment's beginning to its last
	// result.
	Elapsed float64 `json:"elapsed_s"`
	// NoTime says some result has no timestamp: Time is then the order of
	// the results rather than seconds.
	NoTime bool `json:"no_time,omitempty"`
}

// ProgressPoint is the best so far after one result.
type ProgressPoint struct {
	// Time is the result's seconds since the experiment began; Budget the
	// budget spent up to and including it.
	Time   float64 `json:"time_s"`
	Budget float64 `json:"budget"`
	// Best is the best value so far, ID the trial that reported it.
	Best float64 `json:"best"`
	ID   string  `json:"id"`
}

// BestSoFar returns the progress of the best value of info.Metric, with
// the budget in info.TimeAttr; no points without a metric or a result
// that has it.
func BestSoFar(e *results.Experiment, info Info) (Progress, error) {
	p := Progress{Metric: info.Metric, TimeAttr: info.TimeAttr, Points: []ProgressPoint{}}
	if info.Metric == "" {
		return p, nil
	}
	mode := info.Mode
	if !mode.Valid() {
		mode = hone.Min
	}
	type res struct {
		at     float64 // timestamp, seconds
		trial  int     // the trial's index
		row    int     // the row's index in its trial
		id     string
		spent  float64
		y      float64
		scored bool
	}
	var all []res
	noTime := false
	for _, t := range e.Trials {
		rows, err := t.Results()
		if err != nil {
			return p, err
		}
		prevT, at := 0.0, math.Inf(-1)
		for i, r := range rows {
			if ts, ok := r.Value(hone.FieldTimestamp); ok && isFinite(ts) {
				at = max(at, ts) // a trial's results never go back in time
			} else {
				noTime = true
			}
			x := res{at: at, trial: t.Index, row: i, id: t.ID}
			if tv, ok := r.Value(info.TimeAttr); ok && isFinite(tv) {
				if tv > prevT {
					x.spent = tv - prevT
				}
				prevT = tv
			}
			if y, ok := r.Value(info.Metric); ok && isFinite(y) {
				x.y, x.scored = y, true
			}
			all = append(all, x)
		}
	}
	if noTime {
		// Without timestamps, the order of the trials' creation.
		for i := range all {
			all[i].at = 0
		}
	}
	slices.SortFunc(all, func(a, b res) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.trial, b.trial), cmp.Compare(a.row, b.row))
	})
	origin := 0.0
	if len(all) > 0 && !noTime {
		origin = all[0].at
		if b := float64(e.Began) / 1e9; e.Began > 0 && b <= origin {
			origin = b
		}
	}
	p.NoTime = noTime
	for i, x := range all {
		p.Budget += x.spent
		at := x.at - origin
		if noTime {
			at = float64(i + 1)
		}
		p.Elapsed = at
		if !x.scored {
			continue
		}
		p.Results++
		if len(p.Points) == 0 || mode.Better(x.y, p.Points[len(p.Points)-1].Best) {
			p.Points = append(p.Points, ProgressPoint{Time: at, Budget: p.Budget, Best: x.y, ID: x.id})
		}
	}
	if len(p.Points) > 0 {
		if last := p.Points[len(p.Points)-1]; last.Time != p.Elapsed || last.Budget != p.Budget {
			p.Points = append(p.Points, ProgressPoint{Time: p.Elapsed, Budget: p.Budget, Best: last.Best, ID: last.ID})
		}
	}
	return p, nil
}

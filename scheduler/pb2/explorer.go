package pb2

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"github.com/hone-tune/hone"
)

// explorer is PB2's explore step, a pbt.Explorer. It keeps every record
// (memory grows with the number of perturbation checks, as in Ray) and
// builds the GP's data set from them at each explore.
type explorer struct {
	keys    []string   // the bound keys, sorted
	paths   [][]string // each key split at "/"
	lo, hi  []float64
	log     []bool // each key modelled on a log scale (Config.LogScale)
	maxRows int
	fitRows int
	starts  int

	rows    []record
	maxTime float64 // the latest time of any record
	// lastExploration is the latest record time when the current round
	// began; current holds the hyperparameters chosen in this round.
	lastExploration float64
	current         [][]float64
	fallbacks       int // explores whose GP could not be fit
}

// record is one perturbation check of a trial (or, for a clone, the
// donor's state it starts from).
type record struct {
	trial  string
	time   float64
	vals   []float64 // the hyperparameters, in key order
	reward float64   // the score: higher is better
}

// sample is one row of the GP's data set: y = Δreward/Δtime between two
// consecutive records of one trial with one configuration.
type sample struct {
	trial  string
	time   float64 // the later record's time
	before float64 // the earlier record's reward
	reward float64 // the later record's reward
	vals   []float64
	y      float64
}

func newExplorer(cfg Config) *explorer {
	e := &explorer{maxRows: cfg.MaxRows, fitRows: cfg.FitRows, starts: cfg.Starts, maxTime: math.Inf(-1)}
	for _, k := range sortedKeys(cfg.Bounds) {
		e.keys = append(e.keys, k)
		e.paths = append(e.paths, strings.Split(k, "/"))
		e.lo = append(e.lo, cfg.Bounds[k][0])
		e.hi = append(e.hi, cfg.Bounds[k][1])
		e.log = append(e.log, cfg.LogScale[k])
	}
	return e
}

// values returns cfg's hyperparameters in key order; ok is false if one
// is missing or not a number.
func (e *explorer) values(cfg hone.Config) (vals []float64, ok bool) {
	vals = make([]float64, len(e.keys))
	for i, p := range e.paths {
		v, found := cfg.Lookup(p...)
		if !found {
			return nil, false
		}
		if vals[i], ok = hone.Number(v); !ok || math.IsNaN(vals[i]) || math.IsInf(vals[i], 0) {
			return nil, false
		}
	}
	return vals, true
}

// Observe records a perturbation check of t.
func (e *explorer) Observe(t *hone.Trial, time, score float64, cfg hone.Config) {
	vals, ok := e.values(cfg)
	if !ok || math.IsNaN(time) || math.IsInf(time, 0) {
		return
	}
	e.rows = append(e.rows, record{trial: t.ID, time: time, vals: vals, reward: score})
	e.maxTime = math.Max(e.maxTime, time)
}

// Explore returns t's new configuration: donorCfg with the bound keys set
// by the GP bandit. As in Ray, a record later than the last explore's
// starts a new round, which forgets the configurations chosen so far.
func (e *explorer) Explore(r *rand.Rand, t, donor *hone.Trial, donorCfg hone.Config) hone.Config {
	newRound := e.maxTime > e.lastExploration
	if newRound {
		e.current = nil
	}
	vals, out := e.explore(r, t.ID, donor.ID, donorCfg)
	if newRound {
		e.lastExploration = e.maxTime
	}
	if vals != nil {
		e.current = append(e.current, vals)
	}
	return out
}

// explore chooses target's hyperparameters from donor's and records the
// clone's starting point; it returns them in key order (nil if the donor's
// are not numbers) and the new configuration.
func (e *explorer) explore(r *rand.Rand, target, donor string, donorCfg hone.Config) ([]float64, hone.Config) {
	out := donorCfg.Clone()
	if out == nil {
		out = hone.Config{}
	}
	data := e.dataset()
	last := -1
	for i := range data {
		if data[i].trial == donor {
			last = i
		}
	}
	if last < 0 {
		// No improvement of the donor is known yet: keep its configuration.
		vals, ok := e.values(donorCfg)
		if !ok {
			return nil, out
		}
		return vals, out
	}
	x := e.selectConfig(r, data, data[last], e.current)
	vals := make([]float64, len(e.keys))
	for i, p := range e.paths {
		prev, _ := out.Lookup(p...)
		v := e.cast(prev, x[i], i)
		set(out, p, v)
		vals[i], _ = hone.Number(v)
	}
	// The clone starts from the donor's weights: its next record measures
	// the improvement from the donor's latest score.
	e.rows = append(e.rows, record{trial: target, time: data[last].time, vals: vals, reward: data[last].reward})
	return vals, out
}

// cast gives x, within key i's bounds, the type of the value it replaces:
// an int stays an int (truncated, then clamped to the integers within the
// bounds) when the bounds hold an integer; anything else becomes float64.
func (e *explorer) cast(prev any, x float64, i int) any {
	lo, hi := math.Ceil(e.lo[i]), math.Floor(e.hi[i])
	n := math.Min(math.Max(math.Trunc(x), lo), hi)
	if lo > hi || math.Abs(n) > 1<<53 {
		return x
	}
	switch prev.(type) {
	case int:
		return int(n)
	case int64:
		return int64(n)
	case int32:
		return int32(n)
	}
	return x
}

// set stores v at path in cfg, making the maps on the way.
func set(cfg hone.Config, path []string, v any) {
	m := map[string]any(cfg)
	for _, k := range path[:len(path)-1] {
		switch sub := m[k].(type) {
		case map[string]any:
			m = sub
		case hone.Config:
			m = sub
		default:
			next := map[string]any{}
			m[k] = next
			m = next
		}
	}
	m[path[len(path)-1]] = v
}

// dataset builds the GP's rows from the records (Ray's data frame): sorted
// by time, each record that follows an earlier one of the same trial and
// hyperparameters gives a row with y = Δreward/Δtime, if Δtime > 0 and y is
// finite; the latest maxRows rows are kept, in time order.
func (e *explorer) dataset() []sample {
	idx := make([]int, len(e.rows))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return e.rows[idx[a]].time < e.rows[idx[b]].time })
	prev := map[string]int{}
	var out []sample
	for _, i := range idx {
		rec := e.rows[i]
		key := groupKey(rec)
		j, seen := prev[key]
		prev[key] = i
		if !seen {
			continue
		}
		dt := rec.time - e.rows[j].time
		if !(dt > 0) {
			continue
		}
		y := (rec.reward - e.rows[j].reward) / dt
		if math.IsNaN(y) || math.IsInf(y, 0) {
			continue
		}
		out = append(out, sample{trial: rec.trial, time: rec.time, before: e.rows[j].reward,
			reward: rec.reward, vals: rec.vals, y: y})
	}
	if len(out) > e.maxRows {
		out = out[len(out)-e.maxRows:]
	}
	return out
}

// groupKey identifies a record's trial and hyperparameters exactly.
func groupKey(r record) string {
	var b strings.Builder
	b.WriteString(r.trial)
	for _, v := range r.vals {
		if v == 0 {
			v = 0 // -0 and 0 are one group
		}
		b.WriteByte(0)
		b.WriteString(strconv.FormatUint(math.Float64bits(v), 16))
	}
	return b.String()
}

// scale maps v from [lo, hi] to [0, 1], as Ray's normalize.
func scale(v, lo, hi float64) float64 { return (v - lo) / (hi - lo + 1e-8) }

// selectConfig fits the GP to data and returns the hyperparameters
// maximising UCB at the time and prior reward of from (the donor's latest
// row), penalising current (the hyperparameters chosen this round).
func (e *explorer) selectConfig(r *rand.Rand, data []sample, from sample, current [][]float64) []float64 {
	d := len(e.keys)
	tlo, thi := math.Inf(1), math.Inf(-1)
	rlo, rhi := math.Inf(1), math.Inf(-1)
	for _, s := range data {
		tlo, thi = math.Min(tlo, s.time), math.Max(thi, s.time)
		rlo, rhi = math.Min(rlo, s.before), math.Max(rhi, s.before)
	}
	row := func(t, before float64, vals []float64) []float64 {
		x := make([]float64, 2+d)
		x[0], x[1] = scale(t, tlo, thi), scale(before, rlo, rhi)
		for i, v := range vals {
			x[2+i] = e.unit(i, v)
		}
		return x
	}
	x := make([][]float64, len(data))
	ys := make([]float64, len(data))
	for i, s := range data {
		x[i] = row(s.time, s.before, s.vals)
		ys[i] = s.y
	}
	y := standardize(ys)
	fixed := row(from.time, from.before, nil)[:2]
	var pending [][]float64
	for _, c := range current {
		p := row(0, 0, c)
		p[0], p[1] = fixed[0], fixed[1]
		pending = append(pending, p)
	}
	z, ok := bandit(r, x, y, fixed, pending, e.fitRows, e.starts)
	if !ok {
		e.fallbacks++
		z = make([]float64, d)
		for i := range z {
			z[i] = r.Float64()
		}
	}
	out := make([]float64, d)
	for i := range out {
		out[i] = e.fromUnit(i, z[i])
	}
	return out
}

// unit maps value v of hyperparameter i to the GP's coordinate, its place
// within the bounds (0 at the low bound, 1 at the high one): linear, or
// for a key of Config.LogScale the place of log v within the logarithms
// of the bounds (a value below the low bound counts as the low bound).
func (e *explorer) unit(i int, v float64) float64 {
	if e.log[i] {
		return scale(math.Log(math.Max(v, e.lo[i])), math.Log(e.lo[i]), math.Log(e.hi[i]))
	}
	return scale(v, e.lo[i], e.hi[i])
}

// fromUnit is unit's inverse on [0, 1], clamped to the bounds.
func (e *explorer) fromUnit(i int, z float64) float64 {
	lo, hi := e.lo[i], e.hi[i]
	v := lo + z*(hi-lo)
	if e.log[i] {
		v = math.Exp(math.Log(lo) + z*(math.Log(hi)-math.Log(lo)))
	}
	return math.Min(math.Max(v, lo), hi)
}

// standardize returns (y − mean)/(std + 1e-8) clipped to [−2, 2], as Ray.
func standardize(ys []float64) []float64 {
	mean := 0.0
	for _, v := range ys {
		mean += v
	}
	mean /= float64(len(ys))
	ss := 0.0
	for _, v := range ys {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / float64(len(ys)))
	out := make([]float64, len(ys))
	for i, v := range ys {
		out[i] = math.Min(math.Max((v-mean)/(sd+1e-8), -2), 2)
	}
	return out
}

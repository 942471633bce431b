package dehb

import (
	"fmt"
	"math"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/pyfloat"
)

// Config holds the budgets of DEHB's HyperBand brackets: the parameters of
// the dehb scheduler. Start from DefaultConfig.
type Config struct {
	// TimeAttr is the result field that measures a trial's budget
	// (default training_iteration).
	TimeAttr string
	// MaxT is the largest budget (DEHB's max_budget); default 81.
	MaxT float64
	// GracePeriod is the smallest budget a job may have (DEHB's
	// min_budget); default 1. The lowest level is the smallest
	// MaxT/η^k that is at least GracePeriod.
	GracePeriod float64
	// ReductionFactor is η (DEHB's eta): budgets are η apart and a rung
	// keeps 1/η of its configurations; default 3.
	ReductionFactor float64
}

// DefaultConfig returns max_t 81, grace period 1 and η 3: budgets 1, 3,
// 9, 27 and 81.
func DefaultConfig() Config {
	return Config{TimeAttr: hone.FieldTrainingIteration, MaxT: 81, GracePeriod: 1, ReductionFactor: 3}
}

// Validate names the first invalid parameter (zero fields count as their
// defaults).
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

// withDefaults fills zero fields and validates the rest.
func (c Config) withDefaults() (Config, error) {
	def := DefaultConfig()
	if c.TimeAttr == "" {
		c.TimeAttr = def.TimeAttr
	}
	if c.MaxT == 0 {
		c.MaxT = def.MaxT
	}
	if c.GracePeriod == 0 {
		c.GracePeriod = def.GracePeriod
	}
	if c.ReductionFactor == 0 {
		c.ReductionFactor = def.ReductionFactor
	}
	switch {
	case !(c.GracePeriod > 0) || math.IsInf(c.GracePeriod, 0):
		return c, invalid("grace_period", "grace_period = %v: must be a finite number > 0", c.GracePeriod)
	case !(c.MaxT > c.GracePeriod) || math.IsInf(c.MaxT, 0):
		return c, invalid("max_t", "max_t = %v: must be a finite number > grace_period (%v)", c.MaxT, c.GracePeriod)
	case !(c.ReductionFactor > 1) || math.IsInf(c.ReductionFactor, 0):
		return c, invalid("reduction_factor", "reduction_factor = %v: must be a finite number > 1", c.ReductionFactor)
	}
	if levelCount(c) < 2 {
		return c, invalid("max_t", "max_t = %v: must be at least grace_period × reduction_factor (%v), for two budgets", c.MaxT, c.GracePeriod*c.ReductionFactor)
	}
	if k := levelCount(c) - 1; k > maxLevels {
		return c, invalid("max_t", "max_t / grace_period = %v: more than %d budget levels at reduction_factor %v", c.MaxT/c.GracePeriod, maxLevels, c.ReductionFactor)
	}
	return c, nil
}

// maxLevels bounds the number of budget levels, and with them the size of
// the most aggressive bracket (η^K configurations).
const maxLevels = 12

// levelCount is K+1, the number of budget levels: ⌊log_η(max_t/grace) +
// 1e-9⌋ + 1. The small tolerance keeps a ratio that is an exact power of η
// (81/1 at η 3) from losing a level to rounding in the logarithms.
func levelCount(c Config) int {
	return int(math.Floor(math.Log(c.MaxT/c.GracePeriod)/math.Log(c.ReductionFactor)+1e-9)) + 1
}

// schedule is DEHB's HyperBand: K+1 budget levels and, for bracket j,
// s = K − (j mod (K+1)) halvings starting at level K − s.
type schedule struct {
	cfg    Config
	levels []float64 // budgets, lowest first; the last is MaxT
	pop    []int     // population size per level
}

func newSchedule(cfg Config) *schedule {
	n := levelCount(cfg)
	sc := &schedule{cfg: cfg, levels: make([]float64, n), pop: make([]int, n)}
	k := n - 1
	for i := range sc.levels {
		sc.levels[i] = cfg.MaxT / pyfloat.Pow(cfg.ReductionFactor, k-i)
	}
	sc.levels[k] = cfg.MaxT
	for s := 0; s <= k; s++ {
		for r, m := range sc.rungs(s) {
			sc.pop[k-s+r] = max(sc.pop[k-s+r], m)
		}
	}
	return sc
}

// k is the index of the highest level.
func (sc *schedule) k() int { return len(sc.levels) - 1 }

// rungs returns how many configurations each rung of a bracket with s
// halvings evaluates, as DEHB computes them: n0 = ⌊(K+1)/(s+1)⌋ · η^s
// (truncated to an integer) and n_i = max(⌊n0 · η^−i⌋, 1).
func (sc *schedule) rungs(s int) []int {
	eta := sc.cfg.ReductionFactor
	n0 := math.Trunc(math.Floor(float64(sc.k()+1)/float64(s+1)) * pyfloat.Pow(eta, s))
	out := make([]int, s+1)
	for i := range out {
		out[i] = max(int(n0*pyfloat.Pow(eta, -i)), 1)
	}
	return out
}

// reached reports whether time t has reached level l's budget, allowing
// for rounding in the budget (MaxT/η^k need not be exact).
func (sc *schedule) reached(t float64, l int) bool {
	return t >= sc.levels[l]*(1-1e-9)
}

// bracket is one successive-halving bracket of DEHB's HyperBand, with
// DEHB's bookkeeping (its SHBracketManager): per rung the jobs it takes,
// has given out and has had answered. A rung's jobs are given out only
// once every job of the rungs before it has been answered (synchronous
// successive halving within a bracket); brackets themselves run at once.
type bracket struct {
	id     int
	first  int   // level of rung 0
	n      []int // jobs per rung (cut short when no more can be made)
	issued []int
	done   []int
	cur    int // the rung whose jobs are given out
}

func newBracket(sc *schedule, id int) *bracket {
	k := sc.k()
	s := k - id%(k+1)
	n := sc.rungs(s)
	return &bracket{id: id, first: k - s, n: n, issued: make([]int, len(n)), done: make([]int, len(n))}
}

// pending reports whether rung r has jobs not given out yet.
func (b *bracket) pending(r int) bool { return b.issued[r] < b.n[r] }

// waiting reports whether rung r has jobs given out and not answered.
func (b *bracket) waiting(r int) bool { return b.done[r] < b.issued[r] }

// previousWaits reports whether a rung below the current one has jobs in
// flight and none left to give out: the current rung must wait for them.
func (b *bracket) previousWaits() bool {
	for r := range b.cur {
		if b.waiting(r) && !b.pending(r) {
			return true
		}
	}
	return false
}

func (b *bracket) anyPending() bool {
	for r := range b.n {
		if b.pending(r) {
			return true
		}
	}
	return false
}

func (b *bracket) anyWaiting() bool {
	for r := range b.n {
		if b.waiting(r) {
			return true
		}
	}
	return false
}

// finished reports whether every job was given out and answered.
func (b *bracket) finished() bool { return !b.anyPending() && !b.anyWaiting() }

// eligible reports whether the bracket can give out a job now.
func (b *bracket) eligible() bool { return !b.previousWaits() && b.anyPending() }

// next returns the rung whose job is given out next: the current one, or
// the one after it, or -1.
func (b *bracket) next() int {
	if b.pending(b.cur) {
		return b.cur
	}
	if r := (b.cur + 1) % len(b.n); b.pending(r) {
		return r
	}
	return -1
}

// register counts a job given out at rung r and moves on to the next
// rung once the current one has none left.
func (b *bracket) register(r int) {
	b.issued[r]++
	b.advance()
}

// advance moves past a current rung with no job left to give out.
func (b *bracket) advance() {
	if !b.pending(b.cur) {
		b.cur = (b.cur + 1) % len(b.n)
	}
}

// cut ends rung r with the jobs it has given out (no more can be made).
func (b *bracket) cut(r int) {
	b.n[r] = b.issued[r]
	b.advance()
}

// invalid is the error of Validate for param: a *hone.ParamError.
func invalid(param, format string, args ...any) error {
	return &hone.ParamError{Plugin: "dehb", Param: param, Err: fmt.Errorf(format, args...)}
}

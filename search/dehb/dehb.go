// Package dehb is DEHB (Awad, Mallik and Hutter, 2021): differential
// evolution on HyperBand's budgets, asynchronous as in the paper's
// reference implementation (automl/DEHB). It is a pair: the Searcher makes
// every decision and the Scheduler carries them out on running trials, so
// the spec names both (searcher: dehb, scheduler: dehb) and NewScheduler
// (or Scheduler.Bind) joins them. docs/SEMANTICS.md §4 states the rules.
//
// # Budgets and brackets
//
// The budgets are levels of the time attribute, η apart from MaxT down:
// MaxT/η^k for k = K … 0, K = ⌊log_η(MaxT/GracePeriod) + 1e-9⌋ >= 1 (so
// the lowest level is at least GracePeriod, and an exact power keeps it). Bracket j (0, 1, …) halves s = K − (j
// mod K+1) times from level K − s: its rung i evaluates n_i = max(⌊n_0 ·
// η^−i⌋, 1) configurations at level K − s + i, with n_0 = ⌊(K+1)/(s+1)⌋ ·
// η^s (DEHB's sizes). Each level has a population of the largest n any
// bracket evaluates there, initialised with uniform points of the unit
// cube (points_to_evaluate first, at the lowest level) that count as not
// yet evaluated.
//
// # Jobs
//
// A job is a configuration to evaluate at a level, for a rung of a
// bracket, competing for one member (the target) of the level's
// population; targets are taken in turn, round robin. The next job comes
// from the first bracket (in the order they started) that has one to give
// and is not waiting for the answers of an earlier rung; when there is
// none, a new bracket starts (brackets run at once; within a bracket the
// rungs are synchronous, as in DEHB). Its configuration is:
//
//   - a promotion, in the rungs after the first of the first K+1
//     brackets (DEHB's first iteration, successive halving): the best
//     evaluated member of the level below whose trial waits there
//     (paused) and whose vector is not in this level's population
//     already; the trial resumes from its checkpoint to the higher
//     budget. Without such a member, the job is a DE offspring instead.
//     hone: the reference implementation promotes only while the latest
//     bracket started is one of the first K+1, so with many trials at
//     once the first brackets lose their promotions to brackets started
//     early; hone asks of the job's own bracket, as the paper describes;
//   - the target itself, if it was never evaluated nor given out and its
//     configuration was never suggested (a uniform initial member: the
//     random initialisation of the paper's first bracket);
//   - else a DE offspring: the rand/1 mutant r1 + F·(r2 − r3) of three
//     distinct members drawn from the parent pool, the best n_i members of
//     the level below (of the same level for a bracket's first rung), with
//     DEHB's filler (when the pool has fewer than 3, 4 − size mutants of
//     the whole population are added); binomial crossover with the target
//     (each coordinate from the mutant with probability CR, at least one);
//     coordinates outside [0, 1] redrawn uniformly. hone: an offspring
//     whose configuration was suggested before (a crossover that changed
//     only a categorical coordinate within its cell, say) is drawn again,
//     up to 10 times, and then replaced by a uniform point, so that a
//     configuration is not trained twice from scratch while the space
//     has others.
//
// A new configuration becomes a new trial (Suggest), which runs until its
// time attribute reaches the level's budget. Its loss there (the metric
// for mode min, −metric for max; non-finite counts as +Inf) replaces the
// target if it is no worse (immediate asynchronous DE selection). The
// trial then pauses if it holds its member and a promotion from its level
// may still come, else stops; paused trials that no promotion can take any
// more are stopped. A trial that ends before its budget is evaluated by
// its last result if it made progress in the job, else at +Inf.
//
// # Encoding
//
// Configurations live in the space's unit-cube encoding
// (space.Space.ToUnit): continuous, integer and quantized parameters by
// their position in the range (log scale for log domains), a choice by
// the cell of its index, so a categorical value is a continuous
// coordinate rounded down to a cell (DEHB's encoding). A vector is
// decoded with space.Space.FromUnit; members keep their vectors, not the
// decoded values.
//
// # Determinism
//
// Every random number comes from one PCG seeded with Options.Seed, and
// every decision depends only on the sequence of calls, never on map
// order, so a resume that replays the journal rebuilds the searcher
// exactly; it keeps no state of its own beyond that (like the schedulers,
// it does not implement hone.Stateful).
package dehb

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/space"
)

// stream is the second PCG word; the first is the user's seed.
const stream = 0x686f6e652d646568 // "hone-deh"

// Options configures a Searcher. Zero numeric fields (other than
// NumSamples and Seed) take the defaults of DefaultOptions.
type Options struct {
	// Metric is the result field to optimise and Mode whether it is
	// minimised or maximised; both are required.
	Metric string
	Mode   hone.Mode
	// NumSamples is the number of trials (new configurations) to create;
	// -1 means no end. Promotions continue existing trials and do not
	// count.
	NumSamples int
	// Seed seeds the searcher's random-number generator.
	Seed uint64
	// MaxConcurrent caps the trials with a job in flight (waiting to
	// start, running, or promoted): at the cap Suggest decides no job and
	// returns hone.ErrNotNow. Trials paused for a promotion, or stopping,
	// do not count. 0 means no cap.
	MaxConcurrent int
	// Points are the first members of the lowest level's population, in
	// order (Ray's points_to_evaluate): the first jobs there evaluate
	// them as they are. Keys a point leaves out are sampled. There may be
	// at most as many as that population holds, and every value must be
	// one the space can encode.
	Points []map[string]any
	// MutationFactor is F of the rand/1 mutation, in (0, 2]; default 0.5.
	MutationFactor float64
	// CrossoverProb is CR of the binomial crossover, in [0, 1]; default
	// 0.5. Set it negative for 0 (one coordinate of the mutant only).
	CrossoverProb float64
}

// DefaultOptions returns DEHB's defaults: F = 0.5 and CR = 0.5.
func DefaultOptions() Options { return Options{MutationFactor: 0.5, CrossoverProb: 0.5} }

// objective is the objective Metric and Mode name.
func (o Options) objective() hone.Objective { return hone.Objective{Metric: o.Metric, Mode: o.Mode} }

func (o Options) withDefaults() (Options, error) {
	def := DefaultOptions()
	if o.MutationFactor == 0 {
		o.MutationFactor = def.MutationFactor
	}
	switch {
	case o.CrossoverProb == 0:
		o.CrossoverProb = def.CrossoverProb
	case o.CrossoverProb < 0:
		o.CrossoverProb = 0
	}
	switch {
	case o.Metric == "":
		return o, invalid("metric", "metric is required")
	case !o.Mode.Valid():
		return o, invalid("mode", "mode = %q: allowed values are \"min\" and \"max\"", o.Mode)
	case o.NumSamples < -1:
		return o, invalid("num_samples", "num_samples = %d: must be -1 (until stopped) or >= 0", o.NumSamples)
	case o.MaxConcurrent < 0:
		return o, invalid("max_concurrent", "max_concurrent = %d: must be >= 0 (0: no limit)", o.MaxConcurrent)
	case !(o.MutationFactor > 0 && o.MutationFactor <= 2):
		return o, invalid("mutation_factor", "mutation_factor = %v: must be in (0, 2]", o.MutationFactor)
	case !(o.CrossoverProb <= 1):
		return o, invalid("crossover_prob", "crossover_prob = %v: must be in [0, 1]", o.CrossoverProb)
	}
	return o, nil
}

// Searcher is DEHB's searcher: the populations, the brackets and every
// job. It implements hone.Searcher; its Scheduler calls the rest. Like
// every searcher it is called from one goroutine only.
type Searcher struct {
	space space.Space
	opts  Options
	dim   int
	pcg   *rand.PCG
	rng   *rand.Rand

	sc     *schedule // nil until bound to a Scheduler
	levels [][]member
	parent []int // per level, the next target (round robin)

	active  []*bracket // started and not finished, in start order
	started int        // brackets started
	n       int        // trials created

	seen     map[string]bool // the configurations suggested, as JSON
	trials   map[string]*trialRec
	promoted []*trialRec // promoted trials not yet running, in decision order

	jobs map[string][]Job // every job given to each trial, for reports
}

// Job is a job DEHB gave a trial: to run until its time attribute reaches
// Budget, the budget of level Level, for rung Rung of bracket Bracket.
type Job struct {
	Bracket int
	Rung    int
	Level   int
	Budget  float64
}

// Jobs returns the jobs trial id was given, in the order they were given:
// its first, then its promotions (for reports; it plays no part in any
// decision).
func (s *Searcher) Jobs(id string) []Job { return slices.Clone(s.jobs[id]) }

// BracketBudgets returns the budgets of bracket b's rungs, lowest first
// (nil before the searcher is bound to a scheduler).
func (s *Searcher) BracketBudgets(b int) []float64 {
	if s.sc == nil || b < 0 {
		return nil
	}
	k := s.sc.k()
	h := k - b%(k+1)
	return slices.Clone(s.sc.levels[k-h : k-h+len(s.sc.rungs(h))])
}

// record notes that trial id was given job j.
func (s *Searcher) record(id string, j *job) {
	s.jobs[id] = append(s.jobs[id], Job{Bracket: j.b.id, Rung: j.rung, Level: j.level, Budget: s.sc.levels[j.level]})
}

// member is one individual of a level's population.
type member struct {
	x         []float64
	cfg       map[string]any // what to suggest when evaluated as it is; nil: decode x
	loss      float64
	evaluated bool   // a job answered for it; false for an initial member
	issued    bool   // an initial member given out as a job as it is
	trial     string // the trial that evaluated it
}

// job is a configuration given out for evaluation at a level.
type job struct {
	b     *bracket
	rung  int
	level int
	slot  int // the target's index in the level's population
	x     []float64
	from  float64 // the trial's time when the job began
}

// trialRec is what the searcher knows of a trial it created.
type trialRec struct {
	id         string
	seq        int       // creation order
	job        *job      // the job in flight; nil between jobs
	level      int       // the level of its last answered job; -1 before
	x          []float64 // its vector
	time       float64   // its latest time attribute
	paused     bool      // told to pause, waiting for a promotion
	dispatched bool      // promoted and handed to the controller to run
}

// New returns a DEHB searcher over sp. It validates sp and opts and
// checks the points; the budgets come from the Scheduler it is bound to.
func New(sp space.Space, opts Options) (*Searcher, error) {
	if err := sp.Validate(); err != nil {
		return nil, &hone.ParamError{Plugin: "dehb", Err: err}
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	dim := 0
	for _, p := range sp.Params() {
		if p.Dim >= 0 {
			dim++
		}
	}
	s := &Searcher{space: sp, dim: dim, trials: map[string]*trialRec{}, seen: map[string]bool{}, jobs: map[string][]Job{}}
	check := rand.New(rand.NewPCG(0, 0))
	pts := opts.Points
	opts.Points = nil
	for i, p := range pts {
		if err := sp.CheckPoint(p); err != nil {
			return nil, invalid("points_to_evaluate", "points_to_evaluate[%d]: %w", i, err)
		}
		if _, err := sp.ToUnit(sp.Resolve(p, check)); err != nil {
			return nil, invalid("points_to_evaluate", "points_to_evaluate[%d]: %w", i, err)
		}
		opts.Points = append(opts.Points, map[string]any(hone.Config(p).Clone()))
	}
	s.opts = opts
	s.pcg = rand.NewPCG(opts.Seed, stream)
	s.rng = rand.New(s.pcg)
	return s, nil
}

// bind sets the budgets. It is an error to bind a searcher twice to
// different budgets or after it has made a suggestion.
func (s *Searcher) bind(cfg Config) error {
	if s.sc != nil {
		if s.sc.cfg == cfg {
			return nil
		}
		return &hone.ParamError{Plugin: "dehb", Err: errors.New("the searcher is bound to another dehb scheduler already")}
	}
	sc := newSchedule(cfg)
	if len(s.opts.Points) > sc.pop[0] {
		return invalid("points_to_evaluate", "points_to_evaluate: %d points, but the lowest budget's population holds %d", len(s.opts.Points), sc.pop[0])
	}
	s.sc = sc
	return nil
}

// init draws the initial populations, on the first suggestion.
func (s *Searcher) init() {
	s.levels = make([][]member, len(s.sc.levels))
	s.parent = make([]int, len(s.sc.levels))
	for l, n := range s.sc.pop {
		pop := make([]member, n)
		for i := range pop {
			m := member{loss: math.Inf(1)}
			if l == 0 && i < len(s.opts.Points) {
				m.cfg = s.space.Resolve(s.opts.Points[i], s.rng)
				m.x, _ = s.space.ToUnit(m.cfg) // checked by New
			} else {
				m.x = uniform(s.rng, s.dim)
			}
			pop[i] = m
		}
		s.levels[l] = pop
	}
}

// exhausted reports whether no more trials may be created.
func (s *Searcher) exhausted() bool { return s.opts.NumSamples >= 0 && s.n >= s.opts.NumSamples }

// Suggest returns the configuration of the next job that needs a new
// trial. It returns hone.ErrNotNow while a promoted trial waits to be
// chosen to run, while MaxConcurrent trials have a job in flight, when
// the next job promotes a paused trial (the scheduler then runs it), or
// while every bracket waits for answers and no more trials may be
// created; hone.ErrSearchDone once no job can come any more.
func (s *Searcher) Suggest(trialID string) (hone.Config, error) {
	if s.sc == nil {
		return nil, &hone.ParamError{Plugin: "dehb", Err: errors.New("the searcher needs the dehb scheduler (scheduler: dehb) to run its jobs")}
	}
	if s.levels == nil {
		s.init()
	}
	if s.waitingPromotion() || s.opts.MaxConcurrent > 0 && s.Live() >= s.opts.MaxConcurrent {
		return nil, hone.ErrNotNow
	}
	j, promo, cfg, err := s.nextJob()
	switch {
	case err != nil:
		return nil, err
	case promo:
		return nil, hone.ErrNotNow
	case j == nil:
		if s.inFlight() {
			return nil, hone.ErrNotNow
		}
		return nil, hone.ErrSearchDone
	}
	s.trials[trialID] = &trialRec{id: trialID, seq: s.n, job: j, level: -1, x: j.x}
	s.record(trialID, j)
	s.n++
	return hone.Config(cfg), nil
}

// waitingPromotion reports whether a promoted trial was not handed to the
// controller yet: the next job waits for it, so at most one decision is
// ahead of the free trial slots.
func (s *Searcher) waitingPromotion() bool {
	for _, r := range s.promoted {
		if !r.dispatched {
			return true
		}
	}
	return false
}

// inFlight reports whether some job awaits its answer.
func (s *Searcher) inFlight() bool {
	for _, b := range s.active {
		if b.anyWaiting() {
			return true
		}
	}
	return false
}

// nextJob decides the next job: a promotion (promo, the trial is marked
// promoted), or a new configuration (j and cfg), or nothing (all brackets
// wait, or no trial may be created).
func (s *Searcher) nextJob() (j *job, promo bool, cfg map[string]any, err error) {
	for {
		b := s.nextBracket()
		if b == nil {
			if s.exhausted() {
				return nil, false, nil, nil
			}
			b = newBracket(s.sc, s.started)
			s.started++
			s.active = append(s.active, b)
		}
		r := b.next()
		if r < 0 { // not reached: an eligible bracket has a rung to give out
			for i := range b.n {
				b.cut(i)
			}
			s.clean()
			continue
		}
		level := b.first + r
		if r > 0 && b.id <= s.sc.k() {
			if t := s.candidate(level - 1); t != nil {
				s.issue(b, r, t, level)
				return nil, true, nil, nil
			}
		}
		if s.exhausted() {
			b.cut(r)
			s.clean()
			continue
		}
		j, cfg, err := s.offspring(b, r, level)
		if err != nil {
			return nil, false, nil, err
		}
		return j, false, cfg, nil
	}
}

// nextBracket returns the first active bracket that can give out a job.
func (s *Searcher) nextBracket() *bracket {
	for _, b := range s.active {
		if b.eligible() {
			return b
		}
	}
	return nil
}

// clean drops finished brackets.
func (s *Searcher) clean() {
	s.active = slices.DeleteFunc(s.active, (*bracket).finished)
}

// takeSlot returns level l's next target, round robin.
func (s *Searcher) takeSlot(l int) int {
	i := s.parent[l]
	s.parent[l] = (i + 1) % len(s.levels[l])
	return i
}

// candidate returns the trial to promote from level l: the best evaluated
// member (ties: the lower index) whose trial is paused at l, not already
// promoted, and whose vector is not in level l+1's population.
func (s *Searcher) candidate(l int) *trialRec {
	pop := s.levels[l]
	var best *trialRec
	bestLoss := math.Inf(1)
	for _, m := range pop {
		if !m.evaluated {
			continue
		}
		t := s.trials[m.trial]
		if t == nil || !t.paused || t.job != nil || t.level != l || !slices.Equal(t.x, m.x) {
			continue
		}
		if s.inPopulation(l+1, m.x) {
			continue
		}
		if best == nil || m.loss < bestLoss {
			best, bestLoss = t, m.loss
		}
	}
	return best
}

func (s *Searcher) inPopulation(l int, x []float64) bool {
	for _, m := range s.levels[l] {
		if slices.Equal(m.x, x) {
			return true
		}
	}
	return false
}

// issue gives trial t the promotion job at rung r of b (level l).
func (s *Searcher) issue(b *bracket, r int, t *trialRec, l int) {
	b.register(r)
	t.job = &job{b: b, rung: r, level: l, slot: s.takeSlot(l), x: t.x, from: t.time}
	s.record(t.id, t.job)
	t.paused = false
	t.dispatched = false
	s.promoted = append(s.promoted, t)
}

// offspring makes the job of a new configuration at rung r of b (level
// l): the target as it is if it is an initial member never given out and
// its configuration is new, else a DE offspring of it. An offspring whose
// configuration was suggested before (a mutation that changed only a
// categorical coordinate within its cell, say) is drawn again, up to
// redraws times, and then replaced by a uniform point.
func (s *Searcher) offspring(b *bracket, r, l int) (*job, map[string]any, error) {
	slot := s.takeSlot(l)
	target := &s.levels[l][slot]
	b.register(r)
	j := &job{b: b, rung: r, level: l, slot: slot}
	if !target.evaluated && !target.issued {
		target.issued = true
		cfg := target.cfg
		if cfg != nil {
			cfg = hone.Config(cfg).Clone()
		} else {
			var err error
			if cfg, err = s.decode(target.x); err != nil {
				return nil, nil, err
			}
		}
		if s.fresh(cfg) {
			j.x = target.x
			return j, cfg, nil
		}
	}
	lower := l
	if r > 0 {
		lower = l - 1
	}
	pool := s.parentPool(lower, b.n[r])
	if len(pool) < 3 {
		all := s.everyone() // at least 4 members: there are two levels
		for range 3 - len(pool) + 1 {
			pool = append(pool, mutateRand1(s.rng, all, s.opts.MutationFactor))
		}
	}
	for i := 0; ; i++ {
		if i < redraws {
			mutant := mutateRand1(s.rng, pool, s.opts.MutationFactor)
			j.x = fixBounds(s.rng, crossoverBin(s.rng, target.x, mutant, s.opts.CrossoverProb))
		} else {
			j.x = uniform(s.rng, s.dim)
		}
		cfg, err := s.decode(j.x)
		if err != nil {
			return nil, nil, err
		}
		if s.fresh(cfg) || i == redraws {
			return j, cfg, nil
		}
	}
}

// redraws is how often an offspring that repeats a configuration is drawn
// again before a uniform point replaces it.
const redraws = 10

func (s *Searcher) decode(x []float64) (map[string]any, error) {
	cfg, err := s.space.FromUnit(x, s.rng)
	if err != nil {
		return nil, fmt.Errorf("dehb: decode: %w", err)
	}
	return cfg, nil
}

// fresh reports whether cfg was never suggested (and records it when so).
func (s *Searcher) fresh(cfg map[string]any) bool {
	b, err := json.Marshal(cfg)
	if err != nil {
		return true // not comparable: take it as new
	}
	k := string(b)
	if s.seen[k] {
		return false
	}
	s.seen[k] = true
	return true
}

// parentPool returns the vectors of the best n members of level l
// (unevaluated ones last; ties by index): DEHB's parents for mutation.
func (s *Searcher) parentPool(l, n int) [][]float64 {
	pop := s.levels[l]
	idx := make([]int, len(pop))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmpLoss(pop[a], pop[b]) })
	out := make([][]float64, 0, n)
	for _, i := range idx[:min(n, len(idx))] {
		out = append(out, pop[i].x)
	}
	return out
}

// cmpLoss orders members best first; unevaluated ones count as +Inf.
func cmpLoss(a, b member) int {
	la, lb := a.loss, b.loss
	if !a.evaluated {
		la = math.Inf(1)
	}
	if !b.evaluated {
		lb = math.Inf(1)
	}
	switch {
	case la < lb:
		return -1
	case la > lb:
		return 1
	}
	return 0
}

// everyone returns every member's vector, level by level.
func (s *Searcher) everyone() [][]float64 {
	var out [][]float64
	for _, pop := range s.levels {
		for _, m := range pop {
			out = append(out, m.x)
		}
	}
	return out
}

// answer completes t's job with loss: DE selection at the job's target,
// the bracket's count, and t's level.
func (s *Searcher) answer(t *trialRec, loss float64) {
	j := t.job
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		loss = math.Inf(1)
	}
	t.job = nil
	t.level = j.level
	t.paused, t.dispatched = false, false
	s.unpromote(t)
	j.b.done[j.rung]++
	m := &s.levels[j.level][j.slot]
	if !m.evaluated || loss <= m.loss {
		*m = member{x: j.x, loss: loss, evaluated: true, trial: t.id}
	}
	s.clean()
}

func (s *Searcher) unpromote(t *trialRec) {
	s.promoted = slices.DeleteFunc(s.promoted, func(r *trialRec) bool { return r == t })
}

// pausedTrials returns the trials waiting for a promotion (not yet
// promoted), in creation order.
func (s *Searcher) pausedTrials() []*trialRec {
	var out []*trialRec
	for _, t := range s.trials {
		if t.paused && t.job == nil {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *trialRec) int { return a.seq - b.seq })
	return out
}

// holds reports whether t's vector still holds a member of its level.
func (s *Searcher) holds(t *trialRec) bool {
	if t.level < 0 {
		return false
	}
	for _, m := range s.levels[t.level] {
		if m.trial == t.id && slices.Equal(m.x, t.x) {
			return true
		}
	}
	return false
}

// promotable reports whether a promotion from level l may still be
// decided: one of the first K+1 brackets that has started still has
// promotions to give into level l+1, or one that will promote into it has
// yet to start (and may: trials can still be created).
func (s *Searcher) promotable(l int) bool {
	k := s.sc.k()
	if l >= k {
		return false
	}
	for _, b := range s.active {
		if r := l + 1 - b.first; b.id <= k && r > 0 && b.pending(r) {
			return true
		}
	}
	// Bracket j of the first K+1 starts at level j and promotes into
	// every level above it.
	return !s.exhausted() && s.started <= l
}

// OnResult does nothing: the Scheduler sees every result first and
// answers jobs.
func (s *Searcher) OnResult(string, *hone.Result) {}

// OnTrialComplete answers the job of a trial that ended before its
// budget (by its last result if it made progress in the job, else +Inf)
// and forgets the trial.
func (s *Searcher) OnTrialComplete(trialID string, last *hone.Result, failed bool) {
	t := s.trials[trialID]
	if t == nil {
		return
	}
	if t.job != nil {
		loss := math.Inf(1)
		if tv, l, ok := s.values(last); ok && !failed && tv > t.job.from {
			loss = l
		}
		s.answer(t, loss)
	}
	s.unpromote(t)
	delete(s.trials, trialID)
}

// values returns r's time attribute and loss, ok false when r lacks
// either as a number.
func (s *Searcher) values(r *hone.Result) (tv, loss float64, ok bool) {
	if r == nil || s.sc == nil {
		return 0, 0, false
	}
	tv, ok1 := r.Value(s.sc.cfg.TimeAttr)
	obj := s.opts.objective()
	v, ok2 := obj.Value(r)
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	return tv, obj.Loss(v), true
}

// Live returns the number of trials with a job in flight: the count
// MaxConcurrent caps.
func (s *Searcher) Live() int {
	n := 0
	for _, t := range s.trials {
		if t.job != nil {
			n++
		}
	}
	return n
}

// Suggested returns the number of trials created so far.
func (s *Searcher) Suggested() int { return s.n }

// Budgets returns the budget levels, lowest first (nil before the
// searcher is bound to a scheduler).
func (s *Searcher) Budgets() []float64 {
	if s.sc == nil {
		return nil
	}
	return slices.Clone(s.sc.levels)
}

// Brackets returns the number of brackets started.
func (s *Searcher) Brackets() int { return s.started }

// Best returns the loss and vector of the best evaluated member at level
// l, and false if none was evaluated.
func (s *Searcher) Best(l int) (loss float64, x []float64, ok bool) {
	if l < 0 || l >= len(s.levels) {
		return 0, nil, false
	}
	for _, m := range s.levels[l] {
		if m.evaluated && (!ok || m.loss < loss) {
			loss, x, ok = m.loss, slices.Clone(m.x), true
		}
	}
	return loss, x, ok
}

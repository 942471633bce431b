// Package pbt is Population Based Training (Jaderberg et al. 2017) on
// persistent checkpoints, with Ray Tune's semantics (docs/SEMANTICS.md §4): at each
// perturbation interval, trials in the upper quantile save a checkpoint and
// trials in the lower quantile clone a random upper-quantile donor — its
// checkpoint (pinned until restored) and its explored configuration.
package pbt

import (
	"encoding/json"
	"fmt"
	"math"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/hone-tune/hone"
)

// Config holds PBT's parameters. The zero value of every field means its
// documented default (Ray Tune's), so Config{Mutations: m} is PBT with
// Ray's defaults; the fields whose default is not their zero value and
// whose zero value is a valid setting (QuantileFraction,
// ResampleProbability, LogConfig, RequireAttrs) are pointers, nil meaning
// the default: write ResampleProbability: new(0.0) to never resample.
type Config struct {
	// Metric and Mode default to the experiment's.
	Metric string
	Mode   hone.Mode
	// Weights, one per objective of an experiment with several, make the
	// scheduler rank trials by their weighted sum (hone.Objectives'
	// Scalarized): each objective's value as a score, higher being better,
	// times its weight. Metric must then be empty.
	Weights []float64
	// TimeAttr measures training progress ("" means time_total_s).
	TimeAttr string
	// PerturbationInterval: a trial is considered at most once per this
	// much time (0 means 60).
	PerturbationInterval float64
	// BurnInPeriod: no perturbation before this much time (default 0).
	BurnInPeriod float64
	// QuantileFraction in [0, 0.5] (nil means 0.25; 0 never exploits).
	QuantileFraction *float64
	// ResampleProbability of drawing a fresh value, in [0, 1] (nil means
	// 0.25).
	ResampleProbability *float64
	// PerturbationFactors multiply numbers (nil means 1.2, 0.8).
	PerturbationFactors []float64
	// Mutations: per key, a list ([]any: neighbours by index), a
	// distribution (anything with Sample(*rand.Rand) any, e.g. a
	// space.Domain), a func(*rand.Rand) any, or a nested map of those.
	// With an Explorer, mutations only give the initial samples of missing
	// keys and name the keys shown in a perturbed trial's tag.
	Mutations map[string]any
	// Explore, if set, runs after the mutations (or the Explorer) on the
	// new configuration.
	Explore func(cfg hone.Config) hone.Config
	// Explorer, if set, replaces the mutation-based explore step (PB2's GP
	// bandit is one). Nil keeps PBT's own explore.
	Explorer Explorer
	// Synch waits for every live trial at each perturbation time.
	Synch bool
	// LogConfig writes pbt_global.txt and pbt_policy_<id>.txt (nil means
	// true).
	LogConfig *bool
	// RequireAttrs fails a trial whose result lacks the metric or the time
	// attr, with an error naming the missing field; false lets such
	// results continue, with one warning (nil means true).
	RequireAttrs *bool
}

// DefaultConfig returns Ray's defaults, every field spelt out. It is the
// zero Config with its defaults filled in.
func DefaultConfig() Config { return Config{}.withDefaults() }

// withDefaults returns c with every zero-valued field that has a default
// set to it. Pointers are fresh, so callers may change what they point to.
func (c Config) withDefaults() Config {
	if c.TimeAttr == "" {
		c.TimeAttr = hone.FieldTimeTotal
	}
	if c.PerturbationInterval == 0 {
		c.PerturbationInterval = 60
	}
	if c.QuantileFraction == nil {
		c.QuantileFraction = new(0.25)
	}
	if c.ResampleProbability == nil {
		c.ResampleProbability = new(0.25)
	}
	if c.PerturbationFactors == nil {
		c.PerturbationFactors = []float64{1.2, 0.8}
	}
	if c.LogConfig == nil {
		c.LogConfig = new(true)
	}
	if c.RequireAttrs == nil {
		c.RequireAttrs = new(true)
	}
	return c
}

// Validate names the first invalid parameter. Zero values are valid where
// they stand for a default.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Mode.Validate() != nil:
		return &hone.ParamError{Plugin: "pbt", Param: "mode", Err: c.Mode.Validate()}
	case len(c.Mutations) == 0 && c.Explore == nil && c.Explorer == nil:
		return invalid("hyperparam_mutations", "hyperparam_mutations or custom_explore_fn is required")
	case !(c.PerturbationInterval > 0):
		return invalid("perturbation_interval", "perturbation_interval = %v: must be > 0", c.PerturbationInterval)
	case c.BurnInPeriod < 0:
		return invalid("burn_in_period", "burn_in_period = %v: must be >= 0", c.BurnInPeriod)
	case !(*c.QuantileFraction >= 0 && *c.QuantileFraction <= 0.5):
		return invalid("quantile_fraction", "quantile_fraction = %v: must be in [0, 0.5]", *c.QuantileFraction)
	case !(*c.ResampleProbability >= 0 && *c.ResampleProbability <= 1):
		return invalid("resample_probability", "resample_probability = %v: must be in [0, 1]", *c.ResampleProbability)
	case len(c.PerturbationFactors) == 0:
		return invalid("perturbation_factors", "perturbation_factors: at least one factor is required")
	}
	return checkMutations("hyperparam_mutations", c.Mutations)
}

func checkMutations(where string, m map[string]any) error {
	for k, v := range m {
		switch x := v.(type) {
		case []any:
			if len(x) == 0 {
				return invalid(where+"."+k, "%s.%s: an empty list", where, k)
			}
		case map[string]any:
			if err := checkMutations(where+"."+k, x); err != nil {
				return err
			}
		case hone.Config:
			if err := checkMutations(where+"."+k, x); err != nil {
				return err
			}
		case func(*randRand) any, interface{ Sample(*randRand) any }:
		default:
			return invalid(where+"."+k, "%s.%s: %T is not a mutation: use a list, a distribution, a func(*rand.Rand) any, or a nested map", where, k, v)
		}
	}
	return nil
}

// Scheduler is PBT. It is used on the controller's goroutine only.
type Scheduler struct {
	cfg Config // defaults filled in
	// The pointer fields of cfg, read once.
	quantile, resample      float64
	logConfig, requireAttrs bool
	// Ranking is the objective, and CheckObjectives (hone.MultiObjective).
	hone.Ranking

	state    map[string]*trialState
	order    []string // trials in add order
	nextSync float64
	warned   bool
	// exploiting marks trials waiting for a donor's save to resolve: they
	// are not chosen to run until the exploit is done or skipped.
	exploiting map[string]bool
	// waits holds, per trial whose save is in flight, what is to be done
	// when it resolves (OnTrialSave), in the order it was asked for.
	waits map[string][]wait
	// saveSeq numbers the saves PBT asked for (saveRef.seq).
	saveSeq uint64
	stats   Stats

	// rank holds the scored trials that are not finished, worst first
	// (rank.go): the quantiles are its ends. synced is how much of order
	// it (and the run queue) has taken in.
	rank   []rankEntry
	synced int
	// runq, parked and gen are the run queue of ChooseTrialToRun
	// (rank.go); nanTimes counts trials whose training time is NaN, which
	// the queue cannot order as the scan does.
	runq     runHeap
	parked   []runEntry
	gen      uint64
	nanTimes int
}

// Stats counts what PBT did.
type Stats struct {
	Checkpoints   int // saves scheduled for upper-quantile trials
	Perturbations int // exploits carried out
	Skipped       int // exploits skipped: the donor had no checkpoint
}

type trialState struct {
	origTag         string
	lastScore       float64
	hasScore        bool
	lastTrainTime   float64
	lastPerturbTime float64
	// lastCheckpoint is the save scheduled at the trial's last
	// perturbation in the upper quantile (nil: none, or released).
	lastCheckpoint *saveRef
	// inFlight is the save PBT asked for that has not resolved yet;
	// ScheduleSave joins a save in flight, so asking again shares it.
	inFlight *saveRef
	held     *hone.Checkpoint // pinned: what lastCheckpoint resolved to
	lastIter int

	// Bookkeeping of rank.go.
	id     string
	idx    int    // position in Scheduler.order
	gone   bool   // told by a hook that it finished or is failing
	ranked bool   // in Scheduler.rank
	queued uint64 // generation of its current run-queue entry; 0: none
	parked bool   // its current run-queue entry is in Scheduler.parked
}

// saveRef is a save PBT asked for: in flight until done, then its outcome.
// seq tells two saves of one trial apart.
type saveRef struct {
	seq  uint64
	done bool
	cp   *hone.Checkpoint
	err  string
}

// outcome returns the checkpoint of a done save, or why there is none.
func (r *saveRef) outcome() (*hone.Checkpoint, string) {
	if r.cp != nil {
		return r.cp, ""
	}
	if r.err != "" {
		return nil, "its save failed: " + r.err
	}
	return nil, "its save produced no checkpoint"
}

// wait is what is to be done when a trial's save in flight resolves: pin
// the checkpoint as the trial's donor checkpoint if the save is still its
// lastCheckpoint (pin, seq), or make trial clone the saving trial.
type wait struct {
	pin   bool
	seq   uint64
	trial string
}

// New returns a PBT scheduler. Zero-valued fields take their defaults
// (see Config).
func New(cfg Config) (*Scheduler, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Scheduler{cfg: cfg, state: map[string]*trialState{}, exploiting: map[string]bool{}, waits: map[string][]wait{},
		quantile: *cfg.QuantileFraction, resample: *cfg.ResampleProbability,
		logConfig: *cfg.LogConfig, requireAttrs: *cfg.RequireAttrs,
		nextSync: math.Max(cfg.PerturbationInterval, cfg.BurnInPeriod),
		Ranking:  hone.Ranking{Plugin: "pbt", Own: hone.Objective{Metric: cfg.Metric, Mode: cfg.Mode}, Weights: cfg.Weights}}, nil
}

// Config returns the scheduler's parameters, every default filled in; its
// pointers and slices are the caller's.
func (s *Scheduler) Config() Config {
	c := s.cfg
	c.QuantileFraction, c.ResampleProbability = new(s.quantile), new(s.resample)
	c.LogConfig, c.RequireAttrs = new(s.logConfig), new(s.requireAttrs)
	c.PerturbationFactors = slices.Clone(c.PerturbationFactors)
	return c
}

// Stats returns the counts so far.
func (s *Scheduler) Stats() Stats { return s.stats }

// objective is what the scheduler ranks trials by: its own metric and
// mode, each defaulting to the experiment's primary objective's, or with
// several objectives their weighted sum (hone.Ranking).
func (s *Scheduler) objective(c hone.Control) hone.Objective { return s.Ranking.Objective(c) }

// OnTrialAdd gives every mutated key missing from t's configuration an
// initial sample.
func (s *Scheduler) OnTrialAdd(c hone.Control, t *hone.Trial) {
	if st, ok := s.state[t.ID]; ok {
		s.rejoin(t, st) // a retry
		return
	}
	s.state[t.ID] = &trialState{origTag: t.Tag}
	s.order = append(s.order, t.ID)
	cfg := t.Config.Clone()
	if cfg == nil {
		cfg = hone.Config{}
	}
	if fill(map[string]any(cfg), s.cfg.Mutations, c.Rand()) {
		c.SetConfig(t, cfg, "")
	}
}

// fill samples the mutated keys missing from cfg; it reports whether it
// added any.
func fill(cfg map[string]any, muts map[string]any, r *randRand) bool {
	added := false
	for _, k := range sortedKeys(muts) {
		m := muts[k]
		if sub, ok := asMap(m); ok {
			inner, ok := asMap(cfg[k])
			if !ok {
				inner = map[string]any{}
				cfg[k] = inner
				added = true
			}
			if fill(inner, sub, r) {
				added = true
			}
			continue
		}
		if _, ok := cfg[k]; !ok {
			cfg[k] = sample(m, r)
			added = true
		}
	}
	return added
}

// OnResult decides at each perturbation interval: record the score, then
// checkpoint (upper quantile) or exploit (lower quantile).
func (s *Scheduler) OnResult(c hone.Control, t *hone.Trial, r *hone.Result) hone.Decision {
	st := s.state[t.ID]
	if st == nil {
		return hone.Continue
	}
	obj := s.objective(c)
	tv, ok1 := r.Value(s.cfg.TimeAttr)
	mv, ok2 := obj.Value(r)
	if !ok1 || !ok2 {
		if s.requireAttrs {
			return s.missing(c, t, r, obj.Metric, ok1)
		}
		if !s.warned {
			s.warned = true
			c.Logf("pbt: a result of trial %s has no %q or no %q; such results continue", t.ID, s.cfg.TimeAttr, obj.Metric)
		}
		return hone.Continue
	}
	st.lastIter = r.TrainingIteration
	if tv < s.cfg.BurnInPeriod || tv-st.lastPerturbTime < s.cfg.PerturbationInterval {
		return hone.Continue
	}
	s.setScore(st, obj.Score(mv))
	s.setTrainTime(st, tv)
	if s.cfg.Explorer != nil {
		s.cfg.Explorer.Observe(t, tv, st.lastScore, t.Config)
	}

	if !s.cfg.Synch {
		st.lastPerturbTime = tv
		q := s.view(c)
		dec := hone.Continue
		if waiting(c, t) {
			dec = hone.Pause // time-multiplex a population larger than the slots
		}
		if exploited := s.checkpointOrExploit(c, t, q); exploited {
			return hone.Noop
		}
		if s.exploiting[t.ID] {
			return hone.Pause // waits, saved, for the donor's checkpoint
		}
		return dec
	}

	// Synchronous: wait until every live trial reached the sync time.
	for _, id := range s.order {
		o := c.Trial(id)
		if id == t.ID || o == nil || o.Status.Finished() {
			continue
		}
		if s.state[id].lastTrainTime < s.nextSync {
			return hone.Pause
		}
	}
	q := s.view(c)
	lower, upper := q.lists()
	var ordered []*hone.Trial
	ordered = append(ordered, upper...)
	for _, id := range s.order {
		o := c.Trial(id)
		if o != nil && !o.Status.Finished() && !q.inLower(o) && !q.inUpper(o) {
			ordered = append(ordered, o)
		}
	}
	ordered = append(ordered, lower...)
	exploitedSelf := false
	for _, o := range ordered {
		s.state[o.ID].lastPerturbTime = tv
		if s.checkpointOrExploit(c, o, q) && o == t {
			exploitedSelf = true
		}
	}
	maxTrain := 0.0
	for _, id := range s.order {
		maxTrain = math.Max(maxTrain, s.state[id].lastTrainTime)
	}
	s.nextSync = math.Max(s.nextSync+s.cfg.PerturbationInterval, maxTrain)
	if exploitedSelf {
		return hone.Noop
	}
	return hone.Pause
}

// missing fails t, whose result r lacks the time attr (hasTime false) or
// the metric, with an error naming the field: PBT cannot rank a trial
// without both (require_attrs). With a Control that cannot fail trials
// (not hone.TrialFailer), t is stopped and the error logged.
func (s *Scheduler) missing(c hone.Control, t *hone.Trial, r *hone.Result, metric string, hasTime bool) hone.Decision {
	field, what := metric, "metric"
	if !hasTime {
		field, what = s.cfg.TimeAttr, "time_attr"
	}
	msg := fmt.Sprintf("pbt: result %d has no %q (the %s), which PBT needs to rank trials: "+
		"report it in every result, or set require_attrs to false to let such results continue",
		r.TrainingIteration, field, what)
	if f, ok := c.(hone.TrialFailer); ok {
		f.FailTrial(t, msg)
		return hone.Noop
	}
	c.Logf("%s; stopping the trial", msg)
	return hone.Stop
}

// waiting reports whether a trial other than t is PENDING or PAUSED.
func waiting(c hone.Control, t *hone.Trial) bool {
	if q, ok := c.(hone.OldestByStatus); ok {
		for _, st := range []hone.Status{hone.StatusPending, hone.StatusPaused} {
			if o := q.Oldest(st); o != nil && o != t {
				return true
			}
		}
		return false
	}
	for _, o := range c.Trials() {
		if o != t && (o.Status == hone.StatusPending || o.Status == hone.StatusPaused) {
			return true
		}
	}
	return false
}

// less orders scores worst first; NaN is the worst.
func less(a, b float64) bool {
	if math.IsNaN(a) {
		return !math.IsNaN(b)
	}
	return a < b
}

// checkpointOrExploit saves t if it is in the upper quantile, and makes it
// clone a random upper-quantile donor if it is in the lower one. It reports
// whether t was exploited at once.
func (s *Scheduler) checkpointOrExploit(c hone.Control, t *hone.Trial, q quantileView) bool {
	st := s.state[t.ID]
	if q.inUpper(t) {
		ref := s.save(c, t, st)
		st.lastCheckpoint = ref
		s.stats.Checkpoints++
		// Hold a pin on the saved checkpoint while it is t's donor
		// checkpoint, so retention cannot delete it before a lower trial
		// clones it (Ray's bug with small num_to_keep).
		if ref.done {
			s.hold(c, st, ref)
		} else {
			s.waits[t.ID] = append(s.waits[t.ID], wait{pin: true, seq: ref.seq})
		}
	} else {
		st.lastCheckpoint = nil
	}
	if !q.inLower(t) {
		return false
	}
	donor := q.upper(c.Rand().IntN(q.k))
	ref := s.state[donor.ID].lastCheckpoint
	if ref == nil {
		s.skip(c, t, donor, "it has no checkpoint scheduled")
		return false
	}
	if ref.done {
		if ref.cp == nil {
			_, why := ref.outcome()
			s.skip(c, t, donor, why)
			return false
		}
		c.PauseTrial(t, false)
		s.exploit(c, t, donor, ref.cp)
		return true
	}
	// The donor's save is in flight: t pauses (saving its own progress, so
	// nothing is lost if the exploit is skipped) and clones when the save
	// resolves (OnTrialSave), without blocking the runner.
	s.exploiting[t.ID] = true
	s.waits[donor.ID] = append(s.waits[donor.ID], wait{trial: t.ID})
	return false
}

// save asks for a save of t and returns it: the save in flight that PBT
// asked for before if there is one (ScheduleSave joins it), else a new
// one, done at once if the trial is not running.
func (s *Scheduler) save(c hone.Control, t *hone.Trial, st *trialState) *saveRef {
	f := c.ScheduleSave(t)
	if !f.Done() && st.inFlight != nil {
		return st.inFlight
	}
	s.saveSeq++
	ref := &saveRef{seq: s.saveSeq}
	if f.Done() {
		cp, err := f.Result()
		ref.done, ref.cp = true, cp
		if err != nil {
			ref.err = err.Error()
		}
		return ref
	}
	st.inFlight = ref
	return ref
}

// hold pins the checkpoint of ref, st's lastCheckpoint, in place of the
// one st held.
func (s *Scheduler) hold(c hone.Control, st *trialState, ref *saveRef) {
	if ref.cp == nil || st.lastCheckpoint != ref {
		return
	}
	c.Pin(ref.cp)
	c.Unpin(st.held)
	st.held = ref.cp
}

// OnTrialSave implements hone.SaveListener: a save of t resolved. If PBT
// asked for it, it pins the checkpoint as t's donor checkpoint and carries
// out (or skips) the exploits that waited on it, in the order they were
// decided.
func (s *Scheduler) OnTrialSave(c hone.Control, t *hone.Trial, cp *hone.Checkpoint, err error) {
	st := s.state[t.ID]
	if st == nil || st.inFlight == nil {
		return
	}
	ref := st.inFlight
	st.inFlight = nil
	ref.done, ref.cp = true, cp
	if err != nil {
		ref.err = err.Error()
	}
	ws := s.waits[t.ID]
	delete(s.waits, t.ID)
	for _, w := range ws {
		if w.pin {
			if st.lastCheckpoint != nil && st.lastCheckpoint.seq == w.seq {
				s.hold(c, st, st.lastCheckpoint)
			}
			continue
		}
		delete(s.exploiting, w.trial)
		lower := c.Trial(w.trial)
		if lower == nil || lower.Status.Finished() {
			continue
		}
		if cp == nil {
			_, why := ref.outcome()
			s.skip(c, lower, t, why)
			continue
		}
		s.exploit(c, lower, t, cp)
	}
}

func (s *Scheduler) skip(c hone.Control, t, donor *hone.Trial, why string) {
	s.stats.Skipped++
	c.Logf("pbt: not exploiting donor %s for trial %s: %s", donor.ID, t.ID, why)
}

// exploit gives t the explored configuration of donor, the donor's
// checkpoint as restore point (pinned) and its perturbation and training
// times, and logs the policy.
func (s *Scheduler) exploit(c hone.Control, t, donor *hone.Trial, cp *hone.Checkpoint) {
	st, ds := s.state[t.ID], s.state[donor.ID]
	newCfg := s.newConfig(c.Rand(), t, donor)
	tag := fmt.Sprintf("%s@perturbed[%s]", st.origTag, mutatedTag(newCfg, s.cfg.Mutations))
	if s.logConfig {
		s.logPolicy(c, t, donor, cp, newCfg)
	}
	c.SetConfig(t, newCfg, tag)
	c.SetRestore(t, cp)
	st.lastPerturbTime = ds.lastPerturbTime
	s.setTrainTime(st, ds.lastTrainTime)
	s.stats.Perturbations++
	c.Logf("pbt: trial %s clones %s from %s (score %.6g -> %.6g): %s", t.ID, donor.ID, cp.Path, st.lastScore, ds.lastScore, tag)
}

// GlobalLog is the experiment-wide policy log; PolicyLog is per trial.
const GlobalLog = "pbt_global.txt"

// PolicyLog returns the policy log's path of a trial (in its directory).
func PolicyLog(t *hone.Trial) string { return path.Join(t.Dir, "pbt_policy_"+t.ID+".txt") }

// logPolicy writes one exploit. The donor iteration is the one of the
// checkpoint t restores (where the new configuration takes over), which is
// earlier than the donor's latest result when the donor trained on after
// saving.
func (s *Scheduler) logPolicy(c hone.Control, t, donor *hone.Trial, cp *hone.Checkpoint, newCfg hone.Config) {
	line, err := json.Marshal([]any{s.state[t.ID].origTag, s.state[donor.ID].origTag,
		s.state[t.ID].lastIter, cp.Iteration, donor.Config, newCfg})
	if err != nil {
		c.Logf("pbt: policy log: %v", err)
		return
	}
	c.AppendLine(GlobalLog, string(line))
	c.CopyFile(PolicyLog(donor), PolicyLog(t))
	c.AppendLine(PolicyLog(t), string(line))
}

// ChooseTrialToRun returns the PENDING or PAUSED trial with the least
// training time (ties: the first added; sync: only those behind the next
// sync time), skipping trials waiting for an exploit.
func (s *Scheduler) ChooseTrialToRun(c hone.Control) *hone.Trial {
	s.catchUp()
	if s.nanTimes > 0 {
		return s.scanForRun(c) // NaN is unordered: only the scan gives the scan's pick
	}
	t := s.chooseQueued(c)
	if t == nil && s.lostWaiting(c) {
		// The queue lost a waiting trial, which only a Control that broke
		// the hook contract can cause: take every live trial in again,
		// and answer with the scan rather than leave a trial stranded.
		s.resync(c)
		return s.scanForRun(c)
	}
	return t
}

// scanForRun is ChooseTrialToRun by a scan of every trial.
func (s *Scheduler) scanForRun(c hone.Control) *hone.Trial {
	var best *hone.Trial
	for _, id := range s.order {
		t := c.Trial(id)
		if t == nil || (t.Status != hone.StatusPending && t.Status != hone.StatusPaused) || s.exploiting[id] {
			continue
		}
		st := s.state[id]
		if s.cfg.Synch && st.lastTrainTime >= s.nextSync {
			continue
		}
		if best == nil || st.lastTrainTime < s.state[best.ID].lastTrainTime {
			best = t
		}
	}
	return best
}

// lostWaiting reports whether a PENDING or PAUSED trial is missing from
// the run queue. It is a guard against a hang, not part of the algorithm:
// under the hook contract no trial is ever missing. With the controller's
// OldestByStatus it only looks at the oldest trial of each status (cheap,
// and what a stranded experiment comes down to once every other waiting
// trial has run); without it, it scans.
func (s *Scheduler) lostWaiting(c hone.Control) bool {
	lost := func(t *hone.Trial) bool {
		st := s.state[t.ID]
		return st != nil && st.queued == 0
	}
	if q, ok := c.(hone.OldestByStatus); ok {
		for _, status := range []hone.Status{hone.StatusPending, hone.StatusPaused} {
			if o := q.Oldest(status); o != nil && lost(o) {
				return true
			}
		}
		return false
	}
	for _, id := range s.order {
		if t := c.Trial(id); t != nil && (t.Status == hone.StatusPending || t.Status == hone.StatusPaused) && lost(t) {
			return true
		}
	}
	return false
}

// OnTrialComplete releases the pin on t's donor checkpoint: finished
// trials leave the quantiles, so they are never donors again.
func (s *Scheduler) OnTrialComplete(c hone.Control, t *hone.Trial, _ *hone.Result) {
	s.leave(t)
	s.release(c, t)
}

// OnTrialError takes t out of the quantiles (it is about to turn ERROR, or
// PENDING again and then OnTrialAdd puts it back); a retried trial keeps
// its state.
func (s *Scheduler) OnTrialError(_ hone.Control, t *hone.Trial) { s.leave(t) }

// OnTrialRemove takes t out of the quantiles, as OnTrialError does, and
// releases the pin on its donor checkpoint once it is finished (a retried
// trial is removed and added again).
func (s *Scheduler) OnTrialRemove(c hone.Control, t *hone.Trial) {
	s.leave(t)
	if t.Status.Finished() {
		s.release(c, t)
	}
}

func (s *Scheduler) release(c hone.Control, t *hone.Trial) {
	if st := s.state[t.ID]; st != nil && st.held != nil {
		c.Unpin(st.held)
		st.held, st.lastCheckpoint = nil, nil
	}
}

func asMap(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return x, true
	case hone.Config:
		return map[string]any(x), true
	}
	return nil, false
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// mutatedTag renders the mutated keys of cfg as "k=v,..." (sorted).
func mutatedTag(cfg hone.Config, muts map[string]any) string {
	var parts []string
	var walk func(prefix string, cfg map[string]any, muts map[string]any)
	walk = func(prefix string, cfg map[string]any, muts map[string]any) {
		for _, k := range sortedKeys(muts) {
			name := prefix + k
			if sub, ok := asMap(muts[k]); ok {
				inner, _ := asMap(cfg[k])
				walk(name+"/", inner, sub)
				continue
			}
			parts = append(parts, name+"="+short(cfg[k]))
		}
	}
	walk("", map[string]any(cfg), muts)
	return strings.Join(parts, ",")
}

func short(v any) string {
	if f, ok := v.(float64); ok && f != math.Trunc(f) {
		return fmt.Sprintf("%.4g", f)
	}
	return fmt.Sprint(v)
}

// invalid is the error of Validate for param: a *hone.ParamError.
func invalid(param, format string, args ...any) error {
	return &hone.ParamError{Plugin: "pbt", Param: param, Err: fmt.Errorf(format, args...)}
}

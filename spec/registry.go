package spec

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/scheduler/asha"
	"github.com/hone-tune/hone/scheduler/fifo"
	"github.com/hone-tune/hone/scheduler/hyperband"
	"github.com/hone-tune/hone/scheduler/median"
	"github.com/hone-tune/hone/scheduler/pb2"
	"github.com/hone-tune/hone/scheduler/pbt"
	"github.com/hone-tune/hone/search/bohb"
	"github.com/hone-tune/hone/search/dehb"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/search/tpe"
	"github.com/hone-tune/hone/space"
)

// SearcherPlugin is one entry of the searcher table.
type SearcherPlugin struct {
	// Doc says in one line what the searcher does.
	Doc string
	// Read reads the searcher's parameters from p, reporting bad values
	// with p.Errorf, and returns the function that builds the searcher for
	// a valid spec, or nil after reporting a bad parameter. Read must ask p
	// for every parameter the searcher knows, on every call: a key it did
	// not ask for is reported as unknown. The
	// builder may be called several times (validation, then each run) and
	// must return a fresh searcher each time.
	Read func(p *Params) func(s *Spec) (hone.Searcher, error)
	// Objectives says in a few words how the searcher takes several
	// objectives and constraints, or is "" when it optimises one objective
	// (its searcher does not implement hone.MultiObjective).
	Objectives string
}

// SchedulerPlugin is one entry of the scheduler table. Its fields mean
// what SearcherPlugin's do.
type SchedulerPlugin struct {
	Doc        string
	Read       func(p *Params) func(s *Spec) (hone.Scheduler, error)
	Objectives string
}

// searchers is the searcher table: every name a spec may give under
// searcher.name.
var searchers = map[string]SearcherPlugin{
	"random": {
		Doc:        "random and grid search: num_samples samples of the space, each expanding every grid domain (Ray Tune's BasicVariantGenerator)",
		Read:       readRandom,
		Objectives: "samples as with one objective; the results give the Pareto front",
	},
	"grid": {
		Doc:        "the random searcher under another name: grid domains are enumerated, other domains sampled",
		Read:       readRandom,
		Objectives: "samples as with one objective; the results give the Pareto front",
	},
	"tpe": {
		Doc:        "tree-structured Parzen estimator: densities of good and bad trials (Optuna's TPE), pending trials as liars, fed at ASHA's or HyperBand's rungs",
		Read:       readTPE,
		Objectives: "multi-objective TPE: good trials by non-dominated sorting, weighted by hypervolume contribution; constraints by constrained domination; at asha's or hyperband's rungs, ranked by the highest rung reached first (fidelity_check off)",
	},
	"nsga2": {
		Doc:        "NSGA-II: a genetic algorithm whose parents are the best trials by non-dominated sorting and crowding distance (Optuna's NSGAIISampler)",
		Read:       readNSGA2,
		Objectives: "non-dominated sorting and crowding distance, constraints by constrained domination",
	},
	"bohb": {
		Doc:  "BOHB's KDE model, fed at each milestone: with scheduler hyperband_for_bohb (BOHB) or asha (asynchronous BOHB)",
		Read: readBOHB,
	},
	"dehb": {
		Doc:  "DEHB: differential evolution on HyperBand's budgets, asynchronous (Awad et al. 2021): use with scheduler dehb",
		Read: readDEHB,
	},
}

// The auto searcher builds another entry of the table, so it joins it at
// init, after the table exists.
func init() {
	searchers["auto"] = SearcherPlugin{
		Doc:        "chooses random, tpe, nsga2 or bohb from the spec (scheduler, space, objectives, num_samples, concurrency); hone validate says which and why",
		Read:       readAutoSearcher,
		Objectives: "chooses a searcher that takes them",
	}
}

// MultiObjectiveSearchers returns the searchers that take several
// objectives and constraints (hone.MultiObjective), by name, each with a
// few words on how.
func MultiObjectiveSearchers() map[string]string {
	return takingObjectives(searchers, func(p SearcherPlugin) string { return p.Objectives })
}

// MultiObjectiveSchedulers is MultiObjectiveSearchers for schedulers.
func MultiObjectiveSchedulers() map[string]string {
	return takingObjectives(schedulers, func(p SchedulerPlugin) string { return p.Objectives })
}

// takingObjectives returns the entries of table that take several
// objectives, by name, with how (their Objectives field).
func takingObjectives[P any](table map[string]P, how func(P) string) map[string]string {
	out := map[string]string{}
	for n, p := range table {
		if h := how(p); h != "" {
			out[n] = h
		}
	}
	return out
}

// schedulers is the scheduler table: every name a spec may give under
// scheduler.name.
var schedulers = map[string]SchedulerPlugin{
	"fifo": {
		Doc:        "first in, first out: every trial runs to its end, oldest first",
		Read:       readFIFO,
		Objectives: "compares no trials",
	},
	"asha": {
		Doc:        "asynchronous successive halving: stops trials below the top 1/reduction_factor at each rung (Ray Tune's ASHAScheduler)",
		Read:       readASHA,
		Objectives: "MO-ASHA: ranks a rung's trials by non-dominated sorting (constraints by Deb's rule), ties by crowding distance",
	},
	"hyperband": {
		Doc:        "synchronous HyperBand: brackets pause trials at milestones and keep the best 1/reduction_factor",
		Read:       func(p *Params) func(*Spec) (hone.Scheduler, error) { return readHyperBand(p, false) },
		Objectives: "keeps a bracket's best by non-dominated sorting (constraints by Deb's rule), ties by crowding distance",
	},
	"dehb": {
		Doc:  "DEHB's brackets: runs each job of the dehb searcher to its budget, pausing trials a promotion may resume",
		Read: readDEHBScheduler,
	},
	"hyperband_for_bohb": {
		Doc:  "HyperBand for BOHB: the most aggressive bracket first; milestones feed the bohb searcher",
		Read: func(p *Params) func(*Spec) (hone.Scheduler, error) { return readHyperBand(p, true) },
	},
	"median": {
		Doc:        "median stopping rule: stops trials whose best result is below the median of the others' running means",
		Read:       readMedian,
		Objectives: "ranks trials by their weighted sum (weights), without constraints",
	},
	"pbt": {
		Doc:        "population based training: lower-quantile trials clone upper-quantile ones (checkpoint and explored config)",
		Read:       readPBT,
		Objectives: "ranks trials by their weighted sum (weights), without constraints",
	},
	"pbt_replay": {
		Doc:  "replays the hyperparameter schedule of a PBT policy log (pbt_policy_<id>.txt) on one trial: set num_samples to 1",
		Read: readPBTReplay,
	},
	"pb2": {
		Doc:        "population based bandits: PBT whose clones take hyperparameters chosen by a GP bandit within hyperparam_bounds",
		Read:       readPB2,
		Objectives: "ranks trials by their weighted sum (weights), without constraints",
	},
	"auto": {
		Doc:        "asha when trials have a budget (max_t or stop.training_iteration), else fifo; hone validate says which and why",
		Read:       readAutoScheduler,
		Objectives: "chooses a scheduler that takes them",
	},
}

// Searchers returns the known searcher names, sorted, and their docs.
func Searchers() (names []string, docs map[string]string) {
	return tableDocs(searchers, func(p SearcherPlugin) string { return p.Doc })
}

// Schedulers returns the known scheduler names, sorted, and their docs.
func Schedulers() (names []string, docs map[string]string) {
	return tableDocs(schedulers, func(p SchedulerPlugin) string { return p.Doc })
}

// tableDocs returns the names of a plugin table, sorted, and their docs.
func tableDocs[P any](table map[string]P, doc func(P) string) (names []string, docs map[string]string) {
	docs = make(map[string]string, len(table))
	for n, p := range table {
		docs[n] = doc(p)
	}
	return sortedKeys(docs), docs
}

// readRandom reads no parameter: the random searcher is configured by the
// top-level search_space, num_samples, points_to_evaluate and seed.
func readRandom(*Params) func(s *Spec) (hone.Searcher, error) {
	return func(s *Spec) (hone.Searcher, error) {
		return random.New(s.SearchSpace, s.NumSamples, s.PointsToEvaluate, s.Seed)
	}
}

// readFIFO reads no parameter.
func readFIFO(*Params) func(s *Spec) (hone.Scheduler, error) {
	return func(*Spec) (hone.Scheduler, error) { return fifo.New(), nil }
}

// readASHA reads ASHA's parameters: metric and mode (default: the
// experiment's), time_attr, max_t, grace_period, reduction_factor, brackets,
// stop_last_trials and promotion, with Ray Tune's defaults.
func readASHA(p *Params) func(s *Spec) (hone.Scheduler, error) {
	def := asha.DefaultConfig()
	cfg := asha.Config{
		Metric:          p.String("metric", ""),
		Mode:            hone.Mode(p.String("mode", "")),
		TimeAttr:        p.String("time_attr", def.TimeAttr),
		MaxT:            p.Float("max_t", def.MaxT),
		GracePeriod:     p.Float("grace_period", def.GracePeriod),
		ReductionFactor: p.Float("reduction_factor", def.ReductionFactor),
		Brackets:        p.Int("brackets", def.Brackets),
		StopLastTrials:  p.Bool("stop_last_trials", def.StopLastTrials),
		Promotion:       asha.Promotion(p.String("promotion", string(asha.PromotePercentile))),
	}
	ok := true
	check := func(bad bool, key, format string, args ...any) {
		if bad {
			p.Errorf(key, format, args...)
			ok = false
		}
	}
	if cfg.Mode != "" && !cfg.Mode.Valid() {
		p.notAllowed("mode", modeNames(), "allowed values are min and max, got %q", cfg.Mode)
		ok = false
	}
	check(cfg.TimeAttr == "", "time_attr", "must not be empty")
	check(cfg.GracePeriod <= 0, "grace_period", "must be > 0, got %s", formatNum(cfg.GracePeriod))
	check(cfg.MaxT <= 0, "max_t", "must be > 0, got %s", formatNum(cfg.MaxT))
	check(cfg.MaxT > 0 && cfg.GracePeriod > 0 && cfg.MaxT < cfg.GracePeriod, "max_t",
		"must be >= grace_period (%s), got %s", formatNum(cfg.GracePeriod), formatNum(cfg.MaxT))
	check(cfg.ReductionFactor <= 1, "reduction_factor", "must be > 1, got %s", formatNum(cfg.ReductionFactor))
	check(cfg.Brackets < 1, "brackets", "must be >= 1, got %d", cfg.Brackets)
	if !slices.Contains(asha.Promotions(), cfg.Promotion) {
		p.notAllowed("promotion", []string{string(asha.PromotePercentile), string(asha.PromoteTop)}, "allowed values are %s and %s, got %q",
			asha.PromotePercentile, asha.PromoteTop, cfg.Promotion)
		ok = false
	}
	if !ok {
		return nil
	}
	return func(s *Spec) (hone.Scheduler, error) {
		if _, err := objective(s, hone.Objective{Metric: cfg.Metric, Mode: cfg.Mode}); err != nil {
			return nil, err
		}
		cfg := cfg
		// The BOHB searcher learns from the results ASHA records at its
		// rungs: asynchronous BOHB (docs/SEMANTICS.md §4).
		cfg.BudgetInfo = s.Searcher.Name == "bohb"
		return asha.New(cfg)
	}
}

// readSearcher looks up the searcher and reads its parameters.
func (s *Spec) readSearcher(c *collector) func(*Spec) (hone.Searcher, error) {
	name, known := s.Searcher.Name, sortedKeys(searchers)
	entry, ok := searchers[name]
	if !ok {
		c.notAllowed(nil, "searcher.name", known, "%s", unknownName("searcher", name, known))
		return nil
	}
	p := newParams(c, "searcher", s.Searcher.Node, searcherKeys...)
	p.plugin = name
	build := entry.Read(p)
	p.finish()
	return build
}

// readScheduler looks up the scheduler and reads its parameters.
func (s *Spec) readScheduler(c *collector) func(*Spec) (hone.Scheduler, error) {
	name, known := s.Scheduler.Name, sortedKeys(schedulers)
	entry, ok := schedulers[name]
	if !ok {
		c.notAllowed(nil, "scheduler.name", known, "%s", unknownName("scheduler", name, known))
		return nil
	}
	p := newParams(c, "scheduler", s.Scheduler.Node, schedulerKeys...)
	p.plugin = name
	build := entry.Read(p)
	p.finish()
	return build
}

// Params are a plugin's parameters: the keys of its section other than
// name (and max_concurrent for searchers). A plugin's Read asks for each
// parameter with a default; a parameter of the wrong type is reported, with
// its line, and the default returned. Null values count as absent.
type Params struct {
	c        *collector
	path     string
	plugin   string // the plugin's name, for messages
	reserved []string
	vals     map[string]pair
	order    []string
	asked    []string
	// resolved, when not nil, records the value each parameter resolved to
	// (its default when unset), for comparing plugins' settings.
	resolved map[string]any
}

func newParams(c *collector, path string, node *yaml.Node, reserved ...string) *Params {
	p := &Params{c: c, path: path, reserved: reserved, vals: map[string]pair{}}
	if node == nil {
		return p
	}
	// Decoding reported malformed keys already; skip them quietly here.
	node = deref(node)
	for i := 0; node.Kind == yaml.MappingNode && i+1 < len(node.Content); i += 2 {
		kn := deref(node.Content[i])
		if kn == nil || kn.Kind != yaml.ScalarNode || kn.ShortTag() == "!!merge" {
			continue
		}
		k := kn.Value
		if _, dup := p.vals[k]; dup || slices.Contains(reserved, k) {
			continue
		}
		p.vals[k] = pair{key: k, keyNode: kn, valNode: node.Content[i+1], path: join(path, k)}
		p.order = append(p.order, k)
	}
	return p
}

// lookup marks key as known and returns its value node, if set.
func (p *Params) lookup(key string) (pair, bool) {
	if !slices.Contains(p.asked, key) {
		p.asked = append(p.asked, key)
	}
	e, ok := p.vals[key]
	if !ok || isNull(e.valNode) {
		p.resolve(key, nil)
		return pair{}, false
	}
	if p.resolved != nil {
		v, _ := (&collector{lines: map[string]pos{}}).value(e.valNode, e.path, 0)
		p.resolved[key] = v
	}
	return e, true
}

// resolve records that key resolved to v, if p records values.
func (p *Params) resolve(key string, v any) {
	if p.resolved != nil {
		p.resolved[key] = v
	}
}

// Has reports whether key is set (to something other than null).
func (p *Params) Has(key string) bool {
	_, ok := p.lookup(key)
	return ok
}

// Int returns the integer parameter key, or def.
func (p *Params) Int(key string, def int) int {
	v := def
	if e, ok := p.lookup(key); ok {
		if x, ok := p.c.integer(e.valNode, e.path); ok {
			v = x
		}
	}
	p.resolve(key, v)
	return v
}

// Float returns the numeric parameter key, or def.
func (p *Params) Float(key string, def float64) float64 {
	v := def
	if e, ok := p.lookup(key); ok {
		if x, ok := p.c.number(e.valNode, e.path); ok {
			v = x
		}
	}
	p.resolve(key, v)
	return v
}

// Bool returns the boolean parameter key, or def.
func (p *Params) Bool(key string, def bool) bool {
	v := def
	if e, ok := p.lookup(key); ok {
		if x, ok := p.c.boolean(e.valNode, e.path); ok {
			v = x
		}
	}
	p.resolve(key, v)
	return v
}

// String returns the string parameter key, or def.
func (p *Params) String(key, def string) string {
	v := def
	if e, ok := p.lookup(key); ok {
		if x, ok := p.c.str(e.valNode, e.path); ok {
			v = x
		}
	}
	p.resolve(key, v)
	return v
}

// Invalid reports the error of a plugin's Validate at the parameter it
// names, the Param of a *hone.ParamError in its chain (the first key of a
// dotted Param): the error is pinned to that key's line when the spec sets
// it, else to fallback. The spec's Error wraps err.
func (p *Params) Invalid(err error, fallback string) {
	key := fallback
	var pe *hone.ParamError
	if errors.As(err, &pe) {
		if name, _, _ := strings.Cut(pe.Param, "."); name != "" {
			if _, set := p.vals[name]; set {
				key = name
			}
		}
	}
	p.errorAt(key, "%v", err).Err = err
}

// Errorf reports a problem with parameter key at its line, e.g.
// p.Errorf("reduction_factor", "must be > 1, got %v", rf).
func (p *Params) Errorf(key, format string, args ...any) { p.errorAt(key, format, args...) }

// notAllowed reports a value of parameter key outside allowed, which the
// Error names in Allowed.
func (p *Params) notAllowed(key string, allowed []string, format string, args ...any) {
	p.errorAt(key, format, args...).Allowed = sorted(allowed)
}

// errorAt reports a problem with parameter key at its line and returns it.
func (p *Params) errorAt(key, format string, args ...any) *Error {
	path := join(p.path, key)
	if e, ok := p.vals[key]; ok {
		return p.c.nodeErrorf(e.valNode, path, format, args...)
	}
	return p.c.errorf(path, format, args...)
}

// finish reports every parameter Read did not ask for.
func (p *Params) finish() {
	allowed := append(slices.Clone(p.reserved), p.asked...)
	for _, k := range p.order {
		if !slices.Contains(p.asked, k) {
			e := p.vals[k]
			p.c.notAllowed(e.keyNode, e.path, allowed, "%s", unknownKeyAt(k, p.path, p.plugin, allowed))
		}
	}
}

// objective returns a plugin's objective: its own metric and mode, each
// defaulting to the experiment's primary objective's (hone.Objective.Or).
func objective(s *Spec, own hone.Objective) (hone.Objective, error) {
	o := own.Or(s.ResolvedObjectives().Primary())
	if o.Metric == "" {
		return o, errors.New("needs a metric to compare trials: set metric (at the top level, or in this section)")
	}
	return o, nil
}

// readTPE reads TPE's parameters: n_startup_trials, n_ei_candidates,
// prior_weight, consider_endpoints, multivariate, constant_liar and
// fidelity_check (see tpeDefaults for the defaults of the last three;
// with several objectives or constraints fidelity_check defaults to
// false, since TPE applies it to one objective only, and true is refused).
func readTPE(p *Params) func(s *Spec) (hone.Searcher, error) {
	o := tpe.Options{
		NStartupTrials:    p.Int("n_startup_trials", 10),
		NEICandidates:     p.Int("n_ei_candidates", 24),
		PriorWeight:       p.Float("prior_weight", 1),
		ConsiderEndpoints: p.Bool("consider_endpoints", false),
		Multivariate:      p.Bool("multivariate", tpeDefaults.Multivariate),
		ConstantLiar:      p.Bool("constant_liar", tpeDefaults.ConstantLiar),
		FidelityCheck:     p.Bool("fidelity_check", tpeDefaults.FidelityCheck),
	}
	checkSet := p.Has("fidelity_check") // after the reads, which set the schema's order
	if o.NStartupTrials < 0 {
		p.Errorf("n_startup_trials", "must be >= 0, got %d", o.NStartupTrials)
		return nil
	}
	if o.NEICandidates < 1 {
		p.Errorf("n_ei_candidates", "must be >= 1, got %d", o.NEICandidates)
		return nil
	}
	return func(s *Spec) (hone.Searcher, error) {
		obj, err := objective(s, hone.Objective{})
		if err != nil {
			return nil, err
		}
		o := o
		o.Metric, o.Mode, o.NumSamples, o.Seed, o.Points = obj.Metric, obj.Mode, s.NumSamples, s.Seed, s.PointsToEvaluate
		o.FidelityNeighbours = s.rulesBefore(2)
		o.RunningBad = s.rulesBefore(3)
		if s.severalObjectives() {
			o.Objectives, o.Constraints = s.ResolvedObjectives(), s.Constraints
			o.FidelityCheck = o.FidelityCheck && checkSet
		}
		return tpe.New(s.SearchSpace, o)
	}
}

// tpeDefaults holds the spec's defaults of TPE's switches, which differ
// from the Go API's zero values (Optuna's defaults): a spec is a user's
// experiment, run in parallel and often under ASHA or HyperBand, where
// these settings do better (docs/SEMANTICS.md §5).
var tpeDefaults = tpe.Options{Multivariate: true, ConstantLiar: true, FidelityCheck: true}

// readBOHB reads the BOHB searcher's parameters (HpBandSter's names):
// min_points_in_model, top_n_percent, num_samples_kde, random_fraction,
// bandwidth_factor, min_bandwidth, and hone's constant_liar and
// fidelity_check (default true); max_concurrent is the searcher's own.
// With scheduler asha (asynchronous BOHB) min_bandwidth defaults to 0.02
// and constant_liar to true (bohb.AsyncOptions), else to HpBandSter's 1e-3
// and false.
func readBOHB(p *Params) func(s *Spec) (hone.Searcher, error) {
	def := bohb.DefaultOptions()
	o := bohb.Options{
		MinPointsInModel: p.Int("min_points_in_model", 0),
		TopNPercent:      p.Int("top_n_percent", def.TopNPercent),
		NumCandidates:    p.Int("num_samples_kde", def.NumCandidates),
		RandomFraction:   p.Float("random_fraction", def.RandomFraction),
		BandwidthFactor:  p.Float("bandwidth_factor", def.BandwidthFactor),
		MinBandwidth:     p.Float("min_bandwidth", 0), // 0: the scheduler's default
		FidelityCheck:    p.Bool("fidelity_check", true),
	}
	liarSet := p.Has("constant_liar")
	liar := p.Bool("constant_liar", false)
	if o.TopNPercent < 1 || o.TopNPercent > 99 {
		p.Errorf("top_n_percent", "must be in [1, 99], got %d", o.TopNPercent)
		return nil
	}
	if o.RandomFraction < 0 || o.RandomFraction > 1 {
		p.Errorf("random_fraction", "must be in [0, 1], got %s", formatNum(o.RandomFraction))
		return nil
	}
	if p.Has("min_bandwidth") && !(o.MinBandwidth > 0) {
		p.Errorf("min_bandwidth", "must be > 0, got %s", formatNum(o.MinBandwidth))
		return nil
	}
	if o.RandomFraction == 0 {
		o.RandomFraction = -1 // bohb: a negative fraction means "never random once a model exists"
	}
	return func(s *Spec) (hone.Searcher, error) {
		obj, err := objective(s, hone.Objective{})
		if err != nil {
			return nil, err
		}
		o := o
		async := s.Scheduler.Name == "asha"
		if o.MinBandwidth == 0 {
			o.MinBandwidth = def.MinBandwidth
			if async {
				o.MinBandwidth = bohb.AsyncOptions().MinBandwidth
			}
		}
		o.ConstantLiar = liar
		if !liarSet {
			o.ConstantLiar = async
		}
		o.Metric, o.Mode, o.NumSamples, o.Seed, o.Points = obj.Metric, obj.Mode, s.NumSamples, s.Seed, s.PointsToEvaluate
		o.MaxConcurrent = s.Searcher.MaxConcurrent
		o.FidelityNeighbours = s.rulesBefore(2)
		return bohb.New(s.SearchSpace, o)
	}
}

// readDEHB reads the DEHB searcher's parameters (DEHB's names):
// mutation_factor and crossover_prob. It needs scheduler dehb, which
// gives it the budgets.
func readDEHB(p *Params) func(s *Spec) (hone.Searcher, error) {
	def := dehb.DefaultOptions()
	o := dehb.Options{
		MutationFactor: p.Float("mutation_factor", def.MutationFactor),
		CrossoverProb:  p.Float("crossover_prob", def.CrossoverProb),
	}
	if !(o.MutationFactor > 0 && o.MutationFactor <= 2) {
		p.Errorf("mutation_factor", "must be in (0, 2], got %s", formatNum(o.MutationFactor))
		return nil
	}
	if !(o.CrossoverProb >= 0 && o.CrossoverProb <= 1) {
		p.Errorf("crossover_prob", "must be in [0, 1], got %s", formatNum(o.CrossoverProb))
		return nil
	}
	if o.CrossoverProb == 0 {
		o.CrossoverProb = -1 // dehb: a negative probability means 0
	}
	return func(s *Spec) (hone.Searcher, error) {
		if s.Scheduler.Name != "dehb" {
			return nil, &hone.ParamError{Plugin: "dehb", Err: fmt.Errorf("needs scheduler dehb, which runs its jobs (the scheduler is %s)", s.Scheduler.Name)}
		}
		obj, err := objective(s, hone.Objective{})
		if err != nil {
			return nil, err
		}
		o := o
		o.Metric, o.Mode, o.NumSamples, o.Seed, o.Points = obj.Metric, obj.Mode, s.NumSamples, s.Seed, s.PointsToEvaluate
		o.MaxConcurrent = s.Searcher.MaxConcurrent
		return dehb.New(s.SearchSpace, o)
	}
}

// readDEHBScheduler reads the DEHB scheduler's parameters: time_attr,
// max_t (DEHB's max_budget), grace_period (min_budget) and
// reduction_factor (eta). It needs searcher dehb.
func readDEHBScheduler(p *Params) func(s *Spec) (hone.Scheduler, error) {
	def := dehb.DefaultConfig()
	cfg := dehb.Config{
		TimeAttr:        p.String("time_attr", def.TimeAttr),
		MaxT:            p.Float("max_t", def.MaxT),
		GracePeriod:     p.Float("grace_period", def.GracePeriod),
		ReductionFactor: p.Float("reduction_factor", def.ReductionFactor),
	}
	if cfg.TimeAttr == "" {
		p.Errorf("time_attr", "must not be empty")
		return nil
	}
	if err := cfg.Validate(); err != nil {
		p.Invalid(err, "max_t")
		return nil
	}
	return func(s *Spec) (hone.Scheduler, error) {
		if s.Searcher.Name != "dehb" {
			return nil, &hone.ParamError{Plugin: "dehb", Err: fmt.Errorf("needs searcher dehb, which decides its jobs (the searcher is %s)", s.Searcher.Name)}
		}
		return dehb.NewScheduler(cfg, nil)
	}
}

// readHyperBand reads HyperBand's parameters: metric, mode, time_attr,
// max_t, reduction_factor, stop_last_trials.
func readHyperBand(p *Params, forBOHB bool) func(s *Spec) (hone.Scheduler, error) {
	def := hyperband.DefaultConfig()
	cfg := hyperband.Config{
		Metric:          p.String("metric", ""),
		Mode:            hone.Mode(p.String("mode", "")),
		TimeAttr:        p.String("time_attr", def.TimeAttr),
		MaxT:            p.Float("max_t", def.MaxT),
		ReductionFactor: p.Float("reduction_factor", def.ReductionFactor),
		StopLastTrials:  p.Bool("stop_last_trials", def.StopLastTrials),
	}
	if err := cfg.Validate(); err != nil {
		p.Invalid(err, "max_t")
		return nil
	}
	return func(s *Spec) (hone.Scheduler, error) {
		if _, err := objective(s, hone.Objective{Metric: cfg.Metric, Mode: cfg.Mode}); err != nil {
			return nil, err
		}
		if forBOHB {
			return hyperband.NewForBOHB(cfg, nil)
		}
		return hyperband.New(cfg)
	}
}

// readMedian reads the median stopping rule's parameters: metric, mode,
// time_attr, grace_period, min_samples_required, min_time_slice, hard_stop.
func readMedian(p *Params) func(s *Spec) (hone.Scheduler, error) {
	def := median.DefaultConfig()
	cfg := median.Config{
		Metric:             p.String("metric", ""),
		Mode:               hone.Mode(p.String("mode", "")),
		Weights:            p.Floats("weights"),
		TimeAttr:           p.String("time_attr", def.TimeAttr),
		GracePeriod:        p.Float("grace_period", def.GracePeriod),
		MinSamplesRequired: p.Int("min_samples_required", def.MinSamplesRequired),
		MinTimeSlice:       p.Float("min_time_slice", def.MinTimeSlice),
		HardStop:           p.Bool("hard_stop", def.HardStop),
	}
	if err := cfg.Validate(); err != nil {
		p.Invalid(err, "grace_period")
		return nil
	}
	return func(s *Spec) (hone.Scheduler, error) {
		if _, err := objective(s, hone.Objective{Metric: cfg.Metric, Mode: cfg.Mode}); err != nil {
			return nil, err
		}
		return median.New(cfg)
	}
}

// readPBTReplay reads policy_file, the PBT policy log to replay (a path
// relative to the working directory, which defaults to the spec's).
func readPBTReplay(p *Params) func(s *Spec) (hone.Scheduler, error) {
	file := p.String("policy_file", "")
	if file == "" {
		p.Errorf("policy_file", "is required: the pbt_policy_<id>.txt file of the trial whose schedule to replay")
		return nil
	}
	return func(s *Spec) (hone.Scheduler, error) {
		if s.NumSamples != 1 {
			return nil, fmt.Errorf("scheduler pbt_replay replays one schedule on one trial: set num_samples to 1, not %d", s.NumSamples)
		}
		path := file
		if !filepath.IsAbs(path) {
			path = filepath.Join(s.WorkingDir, path)
		}
		return pbt.NewReplay(path)
	}
}

// readPopulation reads the parameters PBT and PB2 share: metric, mode,
// time_attr, perturbation_interval, burn_in_period, quantile_fraction,
// synch, log_config and require_attrs, with def's defaults.
func readPopulation(p *Params, def pbt.Config) pbt.Config {
	return pbt.Config{
		Metric:               p.String("metric", ""),
		Mode:                 hone.Mode(p.String("mode", "")),
		Weights:              p.Floats("weights"),
		TimeAttr:             p.String("time_attr", def.TimeAttr),
		PerturbationInterval: p.Float("perturbation_interval", def.PerturbationInterval),
		BurnInPeriod:         p.Float("burn_in_period", def.BurnInPeriod),
		QuantileFraction:     new(p.Float("quantile_fraction", *def.QuantileFraction)),
		Synch:                p.Bool("synch", def.Synch),
		LogConfig:            new(p.Bool("log_config", *def.LogConfig)),
		RequireAttrs:         new(p.Bool("require_attrs", *def.RequireAttrs)),
	}
}

// readPBT reads PBT's parameters (Ray Tune's names): metric, mode,
// time_attr, perturbation_interval, burn_in_period, quantile_fraction,
// resample_probability, perturbation_factors, hyperparam_mutations, synch,
// log_config, require_attrs. A mutation is a list (neighbours by index), a
// search-space domain ({loguniform: [...]}, ...), or a nested map of those.
func readPBT(p *Params) func(s *Spec) (hone.Scheduler, error) {
	def := pbt.DefaultConfig()
	cfg := readPopulation(p, def)
	cfg.ResampleProbability = new(p.Float("resample_probability", *def.ResampleProbability))
	cfg.PerturbationFactors = def.PerturbationFactors
	if e, ok := p.lookup("perturbation_factors"); ok {
		var fs []float64
		if err := e.valNode.Decode(&fs); err != nil || len(fs) == 0 {
			p.Errorf("perturbation_factors", "want a non-empty list of numbers, e.g. [1.2, 0.8]")
			return nil
		}
		cfg.PerturbationFactors = fs
	}
	e, ok := p.lookup("hyperparam_mutations")
	if !ok {
		p.Errorf("hyperparam_mutations", "is required: the keys PBT perturbs, each a list or a domain")
		return nil
	}
	var raw map[string]any
	if err := e.valNode.Decode(&raw); err != nil {
		p.Errorf("hyperparam_mutations", "want a map of key: list or domain, got %v", err)
		return nil
	}
	muts, err := mutations(raw)
	if err != nil {
		p.Errorf("hyperparam_mutations", "%v", err)
		return nil
	}
	cfg.Mutations = muts
	if err := cfg.Validate(); err != nil {
		p.Invalid(err, "hyperparam_mutations")
		return nil
	}
	return func(s *Spec) (hone.Scheduler, error) {
		if _, err := objective(s, hone.Objective{Metric: cfg.Metric, Mode: cfg.Mode}); err != nil {
			return nil, err
		}
		return pbt.New(cfg)
	}
}

// mutations turns decoded YAML into PBT mutations: lists stay lists, a
// one-key map naming a domain becomes that domain, other maps recurse.
func mutations(raw map[string]any) (map[string]any, error) {
	out := map[string]any{}
	for k, v := range raw {
		switch x := v.(type) {
		case []any:
			out[k] = x
		case map[string]any:
			sp, err := space.Decode(map[string]any{k: x})
			if err != nil {
				return nil, err
			}
			if d, ok := sp[k].(space.Domain); ok {
				out[k] = d
				continue
			}
			inner, err := mutations(x)
			if err != nil {
				return nil, fmt.Errorf("%s.%w", k, err)
			}
			out[k] = inner
		default:
			return nil, fmt.Errorf("%s: want a list of values or a domain such as {uniform: [0, 1]}, got %v", k, v)
		}
	}
	return out, nil
}

// readPB2 reads PB2's parameters (Ray Tune's names): metric, mode,
// time_attr, perturbation_interval, burn_in_period, quantile_fraction,
// synch, log_config, require_attrs, and hyperparam_bounds: per key a
// [low, high] pair of numbers, {loguniform: [low, high]} for a key PB2
// models on a log scale (hone's), or a nested map of those.
func readPB2(p *Params) func(s *Spec) (hone.Scheduler, error) {
	cfg := pb2.DefaultConfig()
	cfg.PBT = readPopulation(p, cfg.PBT)
	ok := true
	check := func(bad bool, key, format string, args ...any) {
		if bad {
			p.Errorf(key, format, args...)
			ok = false
		}
	}
	pc := cfg.PBT
	if pc.Mode != "" && !pc.Mode.Valid() {
		p.notAllowed("mode", modeNames(), "allowed values are min and max, got %q", pc.Mode)
		ok = false
	}
	check(pc.TimeAttr == "", "time_attr", "must not be empty")
	check(!(pc.PerturbationInterval > 0), "perturbation_interval", "must be > 0, got %s", formatNum(pc.PerturbationInterval))
	check(pc.BurnInPeriod < 0, "burn_in_period", "must be >= 0, got %s", formatNum(pc.BurnInPeriod))
	q := *pc.QuantileFraction
	check(!(q >= 0 && q <= 0.5), "quantile_fraction", "must be in [0, 0.5], got %s", formatNum(q))
	e, has := p.lookup("hyperparam_bounds")
	if !has {
		p.Errorf("hyperparam_bounds", "is required: the keys PB2 tunes, each [low, high], e.g. {lr: [0.0001, 0.1]}")
		return nil
	}
	cfg.Bounds, cfg.LogScale = map[string][2]float64{}, map[string]bool{}
	if !p.c.bounds(e.valNode, e.path, "", cfg.Bounds, cfg.LogScale) || !ok {
		return nil
	}
	if len(cfg.Bounds) == 0 {
		p.Errorf("hyperparam_bounds", "is empty: give at least one key with [low, high]")
		return nil
	}
	if err := cfg.Validate(); err != nil {
		p.Invalid(err, "hyperparam_bounds")
		return nil
	}
	return func(s *Spec) (hone.Scheduler, error) {
		if _, err := objective(s, hone.Objective{Metric: cfg.PBT.Metric, Mode: cfg.PBT.Mode}); err != nil {
			return nil, err
		}
		return pb2.New(cfg)
	}
}

// bounds reads PB2's hyperparam_bounds at path into out, keys joined
// with "/" under prefix: each value is [low, high] (numbers, low <= high),
// {loguniform: [low, high]} (the same, on a log scale: noted in logs,
// with 0 < low), or a nested map of those. It reports whether all were
// valid.
func (c *collector) bounds(n *yaml.Node, path, prefix string, out map[string][2]float64, logs map[string]bool) bool {
	ps, ok := c.pairs(n, path)
	if !ok {
		return false
	}
	for _, e := range ps {
		v := deref(e.valNode)
		switch {
		case v != nil && v.Kind == yaml.MappingNode && isLogBound(v):
			b, ok1 := c.bound(deref(v.Content[1]), join(e.path, "loguniform"))
			switch {
			case !ok1:
				ok = false
			case !(b[0] > 0):
				c.nodeErrorf(v.Content[1], join(e.path, "loguniform"), "a log scale needs low > 0, got [%s, %s]", formatNum(b[0]), formatNum(b[1]))
				ok = false
			default:
				out[prefix+e.key] = b
				logs[prefix+e.key] = true
			}
		case v != nil && v.Kind == yaml.MappingNode:
			ok = c.bounds(v, e.path, prefix+e.key+"/", out, logs) && ok
		case v != nil && v.Kind == yaml.SequenceNode:
			b, ok1 := c.bound(v, e.path)
			if ok1 {
				out[prefix+e.key] = b
			}
			ok = ok1 && ok
		default:
			c.nodeErrorf(e.valNode, e.path, "want [low, high], {loguniform: [low, high]} or a nested map of bounds, got %s", describe(e.valNode))
			ok = false
		}
	}
	return ok
}

// isLogBound reports whether mapping n is {loguniform: [...]}: its only
// key is loguniform and its value a list (a nested key of that name
// holding a map stays a nested key).
func isLogBound(n *yaml.Node) bool {
	if len(n.Content) != 2 {
		return false
	}
	k, v := deref(n.Content[0]), deref(n.Content[1])
	return k != nil && k.Kind == yaml.ScalarNode && k.Value == "loguniform" && v != nil && v.Kind == yaml.SequenceNode
}

// bound reads one PB2 bound, [low, high] with low <= high, at path.
func (c *collector) bound(v *yaml.Node, path string) ([2]float64, bool) {
	if v == nil || v.Kind != yaml.SequenceNode || len(v.Content) != 2 {
		n := 0
		if v != nil {
			n = len(v.Content)
		}
		c.nodeErrorf(v, path, "want [low, high], got a list of %d values", n)
		return [2]float64{}, false
	}
	lo, ok1 := c.number(v.Content[0], index(path, 0))
	hi, ok2 := c.number(v.Content[1], index(path, 1))
	switch {
	case !ok1 || !ok2:
		return [2]float64{}, false
	case lo > hi:
		c.nodeErrorf(v, path, "want [low, high] with low <= high, got [%s, %s]", formatNum(lo), formatNum(hi))
		return [2]float64{}, false
	}
	return [2]float64{lo, hi}, true
}

// Floats returns the parameter key, a list of numbers, or nil; it has no
// default.
func (p *Params) Floats(key string) []float64 {
	v := listParam(p, key, "numbers, e.g. [1, 0.01]", p.c.number)
	if v == nil {
		p.resolve(key, nil) // shown without a default
	} else {
		p.resolve(key, v)
	}
	return v
}

// Strings returns the parameter key, a list of strings, or nil.
func (p *Params) Strings(key string) []string {
	v := listParam(p, key, "strings, e.g. [--constraint=a100]", p.c.text)
	p.resolve(key, v)
	return v
}

// listParam reads the parameter key, a list of what elem reads (want says
// what, for the error), or nil when the spec does not set it.
func listParam[T any](p *Params, key, want string, elem func(n *yaml.Node, path string) (T, bool)) []T {
	var v []T
	e, ok := p.lookup(key)
	if !ok {
		return nil
	}
	d := deref(e.valNode)
	if d == nil || d.Kind != yaml.SequenceNode {
		p.c.nodeErrorf(e.valNode, e.path, "want a list of %s, got %s", want, describe(e.valNode))
		return nil
	}
	for i, n := range d.Content {
		if x, ok := elem(n, index(e.path, i)); ok {
			v = append(v, x)
		}
	}
	return v
}

// Param is one parameter of a plugin, as its table entry reads it: the key
// under the plugin's section and the value it takes when a spec leaves it
// out (nil when it has none: a required parameter, or one read only when
// set).
type Param struct {
	Name    string
	Default any
}

// Parameters returns the parameters that plugin name of kind ("searcher",
// "scheduler" or "executor") reads, in the order its entry reads them,
// with their defaults: the plugin's parameter schema. It comes from the
// table entry itself, whose Read asks for every parameter it knows on
// every call, so the schema and the validation cannot disagree. It returns
// nil for an unknown kind or name.
func Parameters(kind, name string) []Param {
	p := recordingParams(kind, nil)
	if !readPlugin(kind, name, p) {
		return nil
	}
	out := make([]Param, 0, len(p.asked))
	for _, k := range p.asked {
		out = append(out, Param{Name: k, Default: p.resolved[k]})
	}
	return out
}

// recordingParams returns the parameters of a plugin section of kind
// ("searcher", "scheduler" or "executor"; node nil: none set) that
// record the value each one resolves to, reporting nothing.
func recordingParams(kind string, node *yaml.Node) *Params {
	reserved := schedulerKeys
	switch kind {
	case "searcher":
		reserved = searcherKeys
	case "executor":
		reserved = executorKeys
	}
	p := newParams(&collector{lines: map[string]pos{}}, kind, node, reserved...)
	p.resolved = map[string]any{}
	return p
}

// readPlugin has the table entry of plugin name of kind read p, and
// reports whether there is such an entry.
func readPlugin(kind, name string, p *Params) bool {
	switch e, s, x := searchers[name], schedulers[name], executors[name]; {
	case kind == "searcher" && e.Read != nil:
		e.Read(p)
	case kind == "scheduler" && s.Read != nil:
		s.Read(p)
	case kind == "executor" && x.Read != nil:
		x.Read(p)
	default:
		return false
	}
	return true
}

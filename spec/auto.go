package spec

import (
	"fmt"
	"math"
	"strings"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/scheduler/asha"
	"github.com/hone-tune/hone/scheduler/fifo"
	"github.com/hone-tune/hone/scheduler/hyperband"
	"github.com/hone-tune/hone/search/nsga2"
	"github.com/hone-tune/hone/space"
)

// The choices of searcher: auto and scheduler: auto (docs/SEMANTICS.md §5
// has the table). Both are functions of the spec alone, so the same spec
// resolves the same way on every machine and in every session; a resume
// whose spec would resolve otherwise is refused (Compare).

// autoStartup is the number of results TPE waits for before its model is
// used (its n_startup_trials default): the searcher chooses random search
// when fewer than autoStartup suggestions would be left for the model.
const autoStartup = 10

// autoEta is the reduction factor of the ASHA that scheduler: auto
// chooses, and autoRungs the number of rungs below max_t it aims for
// (AutoASHA).
const (
	autoEta   = 3
	autoRungs = 3
)

// AutoASHA is the ASHA that scheduler: auto chooses for trials that report
// timeAttr up to maxT (at least η² = 9): reduction factor η = 3, one
// bracket, promotion top, and the grace period maxT/η^k with k the largest
// of 1 to 3 that keeps it at 1 or more. Its rungs are anchored at maxT, as
// HyperBand's budgets are: the top rung is maxT itself (or, for the few
// budgets no float times η^k equals, such as 29, the float just below
// it, which a trial reaching maxT reaches too), so no trial is
// stopped a fraction of a rung short of the full budget (with maxT 10, the
// rungs are 10/9, 10/3 and 10, where a grace period of 1 would stop trials
// at 9, having spent nine tenths of a full run for nothing).
func AutoASHA(timeAttr string, maxT float64) asha.Config {
	k := autoRungs
	for k > 1 && maxT/math.Pow(autoEta, float64(k)) < 1 {
		k--
	}
	d := math.Pow(autoEta, float64(k))
	grace := maxT / d
	for grace*d > maxT {
		grace = math.Nextafter(grace, 0)
	}
	return asha.Config{TimeAttr: timeAttr, MaxT: maxT, GracePeriod: grace, ReductionFactor: autoEta,
		Brackets: 1, StopLastTrials: true, Promotion: asha.PromoteTop}
}

// RulesVersion is the version of the rules hone's plugins decide by, as a
// new experiment records it (Spec.Rules). A resume builds the plugins by
// the rules its experiment was started with, since a replay by other rules
// would decide otherwise and be refused. The versions:
//
//   - 1: scheduler: auto's ASHA has grace period max(1, ⌊max_t/27⌋), and
//     the fidelity check judges each budget against the next one only
//     (fidelity.Rule.Neighbours); experiments that record no version
//     were started under these rules.
//   - 2: AutoASHA's rungs anchored at max_t, and the fidelity check's
//     links reach the highest budget with enough trials.
//   - 3: TPE at rungs leaves the trials still running out of its bad
//     observations (tpe.Options.RunningBad is the earlier rule).
const RulesVersion = 3

// rulesBefore reports whether s's experiment was started under a rules
// version older than v.
func (s *Spec) rulesBefore(v int) bool { return s.Rules != 0 && s.Rules < v }

// autoChoice is what the auto entries resolve to.
type autoChoice struct {
	Searcher  string // the searcher in effect: auto's choice, or the one named
	Scheduler string // likewise
	// ASHA and MaxT are the parameters of the ASHA or HyperBand for BOHB
	// that scheduler: auto chose.
	ASHA asha.Config
	MaxT float64
	// Why say, in a sentence each, why auto chose as it did ("" for a
	// plugin that is named, not auto).
	SearcherWhy, SchedulerWhy string
}

// autoSchedulerParams reads scheduler: auto's parameters from the
// section as written, without reporting errors (readAutoScheduler does).
func (s *Spec) autoSchedulerParams() (timeAttr string, maxT float64) {
	p := newParams(&collector{lines: map[string]pos{}}, "scheduler", s.Scheduler.Node, schedulerKeys...)
	return readAutoParams(p)
}

// readAutoParams reads time_attr (default training_iteration) and max_t
// (default: stop.training_iteration when time_attr is
// training_iteration, which the caller fills in; 0 here).
func readAutoParams(p *Params) (timeAttr string, maxT float64) {
	return p.String("time_attr", hone.FieldTrainingIteration), p.Float("max_t", 0)
}

// auto resolves searcher: auto and scheduler: auto.
func (s *Spec) auto() autoChoice {
	ch := autoChoice{Searcher: s.Searcher.Name, Scheduler: s.Scheduler.Name}
	if ch.Scheduler == "auto" {
		s.autoScheduler(&ch)
	}
	if ch.Searcher == "auto" {
		s.autoSearcher(&ch)
	}
	return ch
}

// autoScheduler chooses the scheduler: HyperBand for BOHB under the BOHB
// searcher; ASHA when a budget max_t is known (scheduler.max_t, or
// stop.training_iteration) and leaves room for rungs, with several
// objectives or constraints too (MO-ASHA); FIFO otherwise.
func (s *Spec) autoScheduler(ch *autoChoice) {
	attr, maxT := s.autoSchedulerParams()
	from := "scheduler.max_t"
	if maxT <= 0 && attr == hone.FieldTrainingIteration && s.Stop.TrainingIteration > 0 {
		maxT, from = float64(s.Stop.TrainingIteration), "stop.training_iteration"
	}
	if ch.Searcher == "bohb" {
		ch.Scheduler = "hyperband_for_bohb"
		ch.MaxT = maxT
		if !(maxT >= 1) || math.IsInf(maxT, 0) {
			ch.MaxT = hyperband.DefaultConfig().MaxT
			from = "HyperBand's default"
		}
		ch.SchedulerWhy = fmt.Sprintf("the bohb searcher learns at HyperBand's milestones (max_t %s, from %s)", formatNum(ch.MaxT), from)
		return
	}
	minT := math.Pow(autoEta, 2)
	switch {
	case s.Metric == "":
		ch.Scheduler = "fifo"
		ch.SchedulerWhy = "no metric to compare trials by"
	case !(maxT > 0) || math.IsInf(maxT, 0):
		ch.Scheduler = "fifo"
		ch.SchedulerWhy = "no budget to stop trials early at: set scheduler.max_t (with time_attr) or stop.training_iteration for ASHA"
	case maxT < minT:
		ch.Scheduler = "fifo"
		ch.SchedulerWhy = fmt.Sprintf("max_t %s (from %s) is below %s: too short for successive halving", formatNum(maxT), from, formatNum(minT))
	default:
		ch.Scheduler = "asha"
		ch.ASHA = AutoASHA(attr, maxT)
		grace := fmt.Sprintf("%s (max_t/%s, so that its top rung is max_t itself)", formatNum(ch.ASHA.GracePeriod), formatNum(maxT/ch.ASHA.GracePeriod))
		if s.rulesBefore(2) {
			ch.ASHA.GracePeriod = math.Max(1, math.Floor(maxT/math.Pow(autoEta, autoRungs)))
			grace = formatNum(ch.ASHA.GracePeriod) + " (the rule this experiment started with: max(1, ⌊max_t/27⌋))"
		}
		ch.SchedulerWhy = fmt.Sprintf("trials report %s up to max_t %s (from %s): ASHA with grace_period %s, reduction_factor %d and promotion top stops weak trials early, without waiting for others",
			attr, formatNum(maxT), from, grace, autoEta)
		if s.severalObjectives() {
			ch.SchedulerWhy += "; with " + s.objectivesText() + " it is MO-ASHA, which ranks a rung's trials by non-dominated sorting"
		}
	}
}

// autoSearcher chooses the searcher from the scheduler in effect, the
// space, num_samples and the concurrency.
func (s *Spec) autoSearcher(ch *autoChoice) {
	dims, grid := 0, false
	if s.SearchSpace.Validate() == nil {
		for _, p := range s.SearchSpace.Params() {
			switch p.Kind {
			case space.KindFunc:
			case space.KindGrid:
				grid = true
				dims++
			default:
				dims++
			}
		}
	}
	conc := s.MaxConcurrentTrials
	if conc <= 0 {
		conc = s.Searcher.MaxConcurrent
	}
	n := s.NumSamples
	need := 2*autoStartup + max(conc, 0)
	switch {
	case s.Metric == "":
		ch.Searcher = "random"
		ch.SearcherWhy = "no metric to learn from"
	case ch.Scheduler == "pbt" || ch.Scheduler == "pb2" || ch.Scheduler == "pbt_replay":
		ch.Searcher = "random"
		ch.SearcherWhy = "scheduler " + ch.Scheduler + " explores configurations itself; its population starts from random samples"
	case ch.Scheduler == "hyperband_for_bohb":
		ch.Searcher = "bohb"
		ch.SearcherWhy = "scheduler hyperband_for_bohb feeds the bohb searcher at its milestones"
	case grid:
		ch.Searcher = "random"
		ch.SearcherWhy = "the search space has grid domains, which the random searcher enumerates"
	case dims == 0:
		ch.Searcher = "random"
		ch.SearcherWhy = "the search space has no parameter to model"
	case s.severalObjectives():
		s.autoMultiObjective(ch, n, need, conc)
	case n != -1 && n < need:
		ch.Searcher = "random"
		ch.SearcherWhy = fewSamplesWhy(n, need, conc)
	default:
		ch.Searcher = "tpe"
		var how []string
		if dims > 1 && tpeDefaults.Multivariate {
			how = append(how, "a joint density over the "+fmt.Sprint(dims)+" parameters")
		} else {
			how = append(how, "a density per parameter")
		}
		if tpeDefaults.ConstantLiar {
			how = append(how, "pending trials as liars, so trials suggested together do not repeat each other")
		}
		switch ch.Scheduler {
		case "asha", "hyperband":
			how = append(how, "fed at "+ch.Scheduler+"'s rungs")
			if tpeDefaults.FidelityCheck {
				how[len(how)-1] += ", with the fidelity check"
			}
		}
		budget := "no end to num_samples"
		if n != -1 {
			budget = fmt.Sprintf("num_samples %d leaves the model at least %d suggestions", n, n-autoStartup-max(conc, 0))
		}
		ch.SearcherWhy = budget + "; TPE with " + strings.Join(how, ", ")
	}
}

// fewSamplesWhy says why num_samples n, below need with conc trials at
// once (0: unknown), leaves a model too few suggestions.
func fewSamplesWhy(n, need, conc int) string {
	concText := ""
	if conc > 0 {
		concText = fmt.Sprintf(" with %d trials at once", conc)
	}
	return fmt.Sprintf("num_samples %d is below %d: a model, which waits for %d results%s, would make fewer than %d suggestions",
		n, need, autoStartup, concText, autoStartup)
}

// autoMultiObjective chooses the searcher for several objectives or
// constraints (docs/SEMANTICS.md §5 has the evidence, bench/mobench):
// random search when num_samples leaves a model fewer than autoStartup
// suggestions; NSGA-II without end to num_samples or from
// autoNSGA2Samples on, where its generations have time to converge and
// the model's cost grows; else multi-objective TPE, which has the best
// median hypervolume at a few hundred trials.
func (s *Spec) autoMultiObjective(ch *autoChoice, n, need, conc int) {
	what := s.objectivesText()
	switch {
	case n != -1 && n < need:
		ch.Searcher = "random"
		ch.SearcherWhy = what + ", " + fewSamplesWhy(n, need, conc) + "; random search samples the space evenly for their Pareto front"
	case n == -1 || n >= autoNSGA2Samples:
		ch.Searcher = "nsga2"
		budget := "no end to num_samples"
		if n != -1 {
			budget = fmt.Sprintf("num_samples %d is at least %d", n, autoNSGA2Samples)
		}
		ch.SearcherWhy = fmt.Sprintf("%s, %s: NSGA-II (population %d) has generations enough to converge to their Pareto front, at a cost per trial that does not grow",
			what, budget, nsga2.DefaultOptions().PopulationSize)
	default:
		ch.Searcher = "tpe"
		ch.SearcherWhy = fmt.Sprintf("%s, num_samples %d leaves the model at least %d suggestions: multi-objective TPE (good trials by non-dominated sorting, weighted by their hypervolume contributions), the best median hypervolume at a few hundred trials on bench/mobench",
			what, n, n-autoStartup-max(conc, 0))
	}
}

// autoNSGA2Samples is the num_samples from which searcher: auto chooses
// NSGA-II over multi-objective TPE with several objectives: at 1000 trials
// NSGA-II's median hypervolume on bench/mobench is the better on ZDT1 and
// ZDT3 by far, TPE's on DTLZ2 by less (docs/SEMANTICS.md §5).
const autoNSGA2Samples = 1000

// AutoChoices returns, for a spec whose searcher or scheduler is auto, one line
// per auto section saying what it resolves to and why, as hone validate
// prints them; nil when neither is auto.
func (s *Spec) AutoChoices() []string {
	if s.Searcher.Name != "auto" && s.Scheduler.Name != "auto" {
		return nil
	}
	ch := s.auto()
	var out []string
	if s.Searcher.Name == "auto" {
		out = append(out, fmt.Sprintf("searcher auto: %s: %s", ch.Searcher, ch.SearcherWhy))
	}
	if s.Scheduler.Name == "auto" {
		out = append(out, fmt.Sprintf("scheduler auto: %s: %s", ch.schedulerText(), ch.SchedulerWhy))
	}
	return out
}

// schedulerText names the scheduler in effect, with its parameters when
// auto chose it.
func (ch autoChoice) schedulerText() string {
	switch {
	case ch.Scheduler == "asha" && ch.ASHA.MaxT > 0:
		a := ch.ASHA
		return fmt.Sprintf("asha (time_attr %s, max_t %s, grace_period %s, reduction_factor %s, promotion %s)",
			a.TimeAttr, formatNum(a.MaxT), formatNum(a.GracePeriod), formatNum(a.ReductionFactor), a.Promotion)
	case ch.Scheduler == "hyperband_for_bohb" && ch.MaxT > 0:
		return fmt.Sprintf("hyperband_for_bohb (max_t %s)", formatNum(ch.MaxT))
	}
	return ch.Scheduler
}

// readAutoSearcher reads no parameter: searcher: auto builds the searcher
// it resolves to, with that searcher's defaults.
func readAutoSearcher(*Params) func(s *Spec) (hone.Searcher, error) {
	return func(s *Spec) (hone.Searcher, error) {
		ch := s.auto()
		entry, ok := searchers[ch.Searcher]
		if !ok || ch.Searcher == "auto" {
			return nil, fmt.Errorf("auto: resolved to unknown searcher %q", ch.Searcher)
		}
		c := &collector{lines: map[string]pos{}}
		build := entry.Read(newParams(c, "searcher", nil, searcherKeys...))
		if build == nil || len(c.errs) > 0 {
			return nil, fmt.Errorf("auto: %s's defaults: %v", ch.Searcher, c.errs)
		}
		return build(s)
	}
}

// readAutoScheduler reads time_attr and max_t (see auto.go): scheduler:
// auto builds the scheduler it resolves to.
func readAutoScheduler(p *Params) func(s *Spec) (hone.Scheduler, error) {
	attr, maxT := readAutoParams(p)
	ok := true
	if attr == "" {
		p.Errorf("time_attr", "must not be empty")
		ok = false
	}
	if p.Has("max_t") && !(maxT > 0) {
		p.Errorf("max_t", "must be > 0, got %s", formatNum(maxT))
		ok = false
	}
	if !ok {
		return nil
	}
	return func(s *Spec) (hone.Scheduler, error) {
		ch := s.auto()
		switch ch.Scheduler {
		case "asha":
			if _, err := objective(s, hone.Objective{}); err != nil {
				return nil, err
			}
			return asha.New(ch.ASHA)
		case "hyperband_for_bohb":
			if _, err := objective(s, hone.Objective{}); err != nil {
				return nil, err
			}
			cfg := hyperband.DefaultConfig()
			cfg.TimeAttr, cfg.MaxT = attr, ch.MaxT
			return hyperband.NewForBOHB(cfg, nil)
		}
		return fifo.New(), nil
	}
}

// severalObjectives reports whether the spec has several objectives or a
// constraint, which only plugins that implement hone.MultiObjective take.
func (s *Spec) severalObjectives() bool { return len(s.Objectives) > 1 || len(s.Constraints) > 0 }

// objectivesText says what the spec optimises, for a choice's reason:
// "2 objectives (acc, latency_ms)", with its constraints if any.
func (s *Spec) objectivesText() string {
	objs := s.ResolvedObjectives()
	t := fmt.Sprintf("%d objectives (%s)", len(objs), strings.Join(objs.Metrics(), ", "))
	if len(objs) == 1 {
		t = "objective " + objs[0].Metric
	}
	if n := len(s.Constraints); n > 0 {
		t += fmt.Sprintf(" under %d constraints", n)
	}
	return t
}

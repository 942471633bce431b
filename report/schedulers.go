package report

import (
	"math"
	"slices"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/results"
)

// Outcomes of a trial at a rung.
const (
	// OutcomePromoted: the trial went on past the rung.
	OutcomePromoted = "promoted"
	// OutcomeStopped: the trial ended at the rung before max_t, and not
	// on its own: the scheduler stopped it.
	OutcomeStopped = "stopped"
	// OutcomeCompleted: the trial ended at the rung at max_t, or said it
	// was done.
	OutcomeCompleted = "completed"
	// OutcomePaused: the trial is paused at the rung (HyperBand waits for
	// its bracket).
	OutcomePaused = "paused"
	// OutcomePending: the trial is at the rung and still running, or
	// waiting to run.
	OutcomePending = "pending"
	// OutcomeError: the trial failed at the rung.
	OutcomeError = "error"
)

// Rungs shows successive halving: for each milestone, the trials that
// reached it, their metric there and what became of them.
type Rungs struct {
	// Plan is the scheduler's rung structure.
	Plan RungPlan `json:"plan"`
	// Metric is the metric the values are of.
	Metric string `json:"metric"`
	// Rungs are the milestones, lowest first, of all brackets together.
	Rungs []Rung `json:"rungs"`
	// Brackets are the rungs of each bracket, when Info.Brackets says
	// which trials ran in which; empty otherwise.
	Brackets []BracketRungs `json:"brackets"`
	// BracketsNote says why the brackets are not shown, when they are
	// not.
	BracketsNote string `json:"brackets_note,omitempty"`
}

// BracketRungs are the rungs of one bracket and the trials that ran in it.
type BracketRungs struct {
	// Label names the bracket (Bracket.Label).
	Label string `json:"label"`
	// Trials counts the trials the bracket took.
	Trials int `json:"trials"`
	// Members are the ids of the trials it took, in the order it took
	// them, whether or not they reached a rung yet.
	Members []string `json:"members"`
	// Rungs are its milestones, lowest first, each with the bracket's
	// trials that reached it and what became of them there.
	Rungs []Rung `json:"rungs"`
}

// Rung is one milestone.
type Rung struct {
	// Milestone is the value of the time attribute the rung is at.
	Milestone float64 `json:"milestone"`
	// Counts are the trials that reached it by outcome.
	Counts map[string]int `json:"counts"`
	// Reached counts the trials that reached it.
	Reached int `json:"reached"`
	// Trials are those that reached it, best first, at most the limit
	// asked for.
	Trials []RungTrial `json:"trials"`
}

// RungTrial is a trial at a rung.
type RungTrial struct {
	ID string `json:"id"`
	// Value is the metric of its first result at or past the milestone,
	// the one the scheduler judged it by; nil when not a finite number.
	Value *float64 `json:"value"`
	// Outcome is one of the Outcome constants.
	Outcome string `json:"outcome"`
}

// SuccessiveHalving returns the rungs of an experiment whose scheduler
// has them (info.Rungs), with at most maxTrials trials listed per rung
// (all when maxTrials <= 0); nil when it has none. A trial is at a rung
// once a result's time attribute reaches the milestone. Rungs are every
// milestone of every bracket together; when info.Brackets says which
// trials ran in which bracket (a Replay of the journal), Brackets are the
// rungs of each bracket with its own trials, a trial's outcome judged at
// that bracket's milestones.
func SuccessiveHalving(e *results.Experiment, info Info, maxTrials int) (*Rungs, error) {
	if info.Rungs == nil {
		return nil, nil
	}
	plan := *info.Rungs
	out := &Rungs{Plan: plan, Metric: info.Metric, Brackets: []BracketRungs{}}
	var err error
	if out.Rungs, err = rungsOf(e.Trials, nil, info, plan.Milestones, plan.MaxT, maxTrials); err != nil {
		return nil, err
	}
	switch {
	case info.Brackets == nil:
		out.BracketsNote = "which trials ran in which bracket is not known"
	case info.Brackets.Note != "":
		out.BracketsNote = info.Brackets.Note
	}
	if info.Brackets == nil {
		return out, nil
	}
	for _, b := range info.Brackets.Brackets {
		var ts []*results.Trial
		for _, id := range b.Trials {
			if t := e.Trial(id); t != nil {
				ts = append(ts, t)
			}
		}
		rs, err := rungsOf(ts, b.At, info, b.Milestones, b.Milestones[len(b.Milestones)-1], maxTrials)
		if err != nil {
			return nil, err
		}
		out.Brackets = append(out.Brackets, BracketRungs{Label: b.Label, Trials: len(b.Trials), Members: b.Trials, Rungs: rs})
	}
	return out, nil
}

// rungsOf returns the rungs at milestones ms of trials ts, max_t being
// maxT (see SuccessiveHalving); with at, a trial is at only the rungs at
// lists for it (Bracket.At).
func rungsOf(ts []*results.Trial, at map[string][]int, info Info, ms []float64, maxT float64, maxTrials int) ([]Rung, error) {
	out := []Rung{}
	for _, m := range ms {
		out = append(out, Rung{Milestone: m, Counts: map[string]int{}, Trials: []RungTrial{}})
	}
	mode := info.Mode
	if !mode.Valid() {
		mode = hone.Min
	}
	for _, t := range ts {
		rs, err := trialRungs(t, info, ms, maxT)
		if err != nil {
			return nil, err
		}
		for i, rt := range rs {
			if at != nil && !slices.Contains(at[t.ID], i) {
				continue
			}
			g := &out[i]
			g.Counts[rt.Outcome]++
			g.Reached++
			g.Trials = append(g.Trials, rt.RungTrial)
		}
	}
	for i := range out {
		g := &out[i]
		slices.SortStableFunc(g.Trials, func(a, b RungTrial) int {
			switch {
			case a.Value != nil && b.Value == nil:
				return -1
			case a.Value == nil && b.Value != nil:
				return 1
			case a.Value == nil:
				return 0
			case mode.Better(*a.Value, *b.Value):
				return -1
			case mode.Better(*b.Value, *a.Value):
				return 1
			}
			return 0
		})
		if maxTrials > 0 && len(g.Trials) > maxTrials {
			g.Trials = g.Trials[:maxTrials]
		}
	}
	return out, nil
}

// TrialRung is a rung a trial reached.
type TrialRung struct {
	Milestone float64 `json:"milestone"`
	// Bracket is the label of the bracket the rung is of, "" when not
	// known.
	Bracket string `json:"bracket,omitempty"`
	RungTrial
}

// TrialRungs returns the rungs trial t reached, lowest first, with its
// metric there and what became of it (see SuccessiveHalving); none when
// info has no rungs. When info.Brackets says which bracket t ran in, the
// rungs are that bracket's, each with its label (a trial a retry put in
// another bracket has the rungs of each); otherwise they are every
// milestone of the scheduler.
func TrialRungs(t *results.Trial, info Info) ([]TrialRung, error) {
	if info.Rungs == nil {
		return nil, nil
	}
	bs := info.Brackets.Of(t.ID)
	if len(bs) == 0 {
		return trialRungs(t, info, info.Rungs.Milestones, info.Rungs.MaxT)
	}
	var out []TrialRung
	for _, i := range bs {
		b := info.Brackets.Brackets[i]
		rs, err := trialRungs(t, info, b.Milestones, b.Milestones[len(b.Milestones)-1])
		if err != nil {
			return nil, err
		}
		for k := range rs {
			if b.At != nil && !slices.Contains(b.At[t.ID], k) {
				continue
			}
			rs[k].Bracket = b.Label
			out = append(out, rs[k])
		}
	}
	return out, nil
}

// trialRungs returns the rungs among ms that t reached, max_t being maxT.
func trialRungs(t *results.Trial, info Info, ms []float64, maxT float64) ([]TrialRung, error) {
	plan := info.Rungs
	rows, err := t.Results()
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	last := rows[len(rows)-1]
	lastT, _ := last.Value(plan.TimeAttr)
	done, _ := last[hone.FieldDone].(bool)
	var out []TrialRung
	for _, m := range ms {
		at := slices.IndexFunc(rows, func(r results.Row) bool {
			v, ok := r.Value(plan.TimeAttr)
			return ok && v >= m
		})
		if at < 0 {
			break // later rungs are higher
		}
		rt := TrialRung{Milestone: m, RungTrial: RungTrial{ID: t.ID}}
		if v, ok := rows[at].Value(info.Metric); ok && isFinite(v) {
			rt.Value = ptr(v)
		}
		switch {
		case at < len(rows)-1:
			rt.Outcome = OutcomePromoted
		case t.Status == hone.StatusError:
			rt.Outcome = OutcomeError
		case t.Status == hone.StatusPaused:
			rt.Outcome = OutcomePaused
		case t.Status == hone.StatusTerminated && (done || lastT >= maxT):
			rt.Outcome = OutcomeCompleted
		case t.Status == hone.StatusTerminated:
			rt.Outcome = OutcomeStopped
		default:
			rt.Outcome = OutcomePending
		}
		out = append(out, rt)
	}
	return out, nil
}

// Lineage shows PBT's exploits: which trial cloned which, when, and the
// hyperparameters it went on with.
type Lineage struct {
	Exploits []ExploitView `json:"exploits"`
	// Schedules are each trial's hyperparameters over training iterations
	// (results.Trial.Schedule), for the keys that changed anywhere.
	Schedules []Schedule `json:"schedules"`
	// Keys are the configuration keys (as NumericLeaves names them) that
	// some exploit changed, sorted.
	Keys []string `json:"keys"`
}

// ExploitView is one exploit.
type ExploitView struct {
	// Iteration is the target's training iteration when it exploited.
	Iteration int `json:"iteration"`
	// Target and Donor are the original tags of the trial that exploited
	// and of the one it cloned; TargetID and DonorID their ids ("" when
	// the tag names no trial).
	Target   string `json:"target"`
	TargetID string `json:"target_id"`
	Donor    string `json:"donor"`
	DonorID  string `json:"donor_id"`
	// DonorIteration is the iteration of the donor's checkpoint restored.
	DonorIteration int `json:"donor_iteration"`
	// Changes are the hyperparameters explore changed, by key.
	Changes []Change `json:"changes"`
	// DonorConfig is the donor's configuration, Config the one the
	// target went on with.
	DonorConfig map[string]any `json:"donor_config"`
	Config      map[string]any `json:"config"`
}

// Change is a hyperparameter an exploit's explore step changed from the
// donor's value.
type Change struct {
	// Key is the hyperparameter, as NumericLeaves names it.
	Key string `json:"key"`
	// From is the donor's value, To the new one; nil where absent.
	From any `json:"from"`
	To   any `json:"to"`
}

// Schedule is one trial's hyperparameters over time.
type Schedule struct {
	ID string `json:"id"`
	// Steps are in the order of training.
	Steps []Step `json:"steps"`
}

// Step is a schedule segment: from training iteration From on, Values.
type Step struct {
	From int `json:"from"`
	// Values are the changed keys' values (Lineage.Keys).
	Values map[string]any `json:"values"`
}

// PBTLineage returns the exploits of a PBT or PB2 experiment; nil when it
// has none.
func PBTLineage(e *results.Experiment) (*Lineage, error) {
	xs, err := e.Exploits()
	if err != nil {
		return nil, err
	}
	if len(xs) == 0 {
		return nil, nil
	}
	out := &Lineage{Exploits: []ExploitView{}, Schedules: []Schedule{}}
	changed := map[string]bool{}
	for _, x := range xs {
		v := ExploitView{Iteration: x.TargetIteration, Target: x.Target, TargetID: x.TargetID,
			Donor: x.Donor, DonorID: x.DonorID, DonorIteration: x.DonorIteration,
			DonorConfig: x.DonorConfig, Config: x.Config, Changes: []Change{}}
		from, to := NumericLeaves(x.DonorConfig), NumericLeaves(x.Config)
		keys := map[string]bool{}
		for k := range from {
			keys[k] = true
		}
		for k := range to {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			if Text(from[k]) != Text(to[k]) {
				v.Changes = append(v.Changes, Change{Key: k, From: from[k], To: to[k]})
				changed[k] = true
			}
		}
		out.Exploits = append(out.Exploits, v)
	}
	out.Keys = sortedKeys(changed)
	for _, t := range e.Trials {
		steps, err := t.Schedule()
		if err != nil {
			return nil, err
		}
		s := Schedule{ID: t.ID}
		for _, st := range steps {
			leaves := NumericLeaves(st.Config)
			vals := map[string]any{}
			for k := range changed {
				if v, ok := leaves[k]; ok {
					if f, ok := hone.Number(v); !ok || !math.IsNaN(f) {
						vals[k] = v
					}
				}
			}
			s.Steps = append(s.Steps, Step{From: st.From, Values: vals})
		}
		out.Schedules = append(out.Schedules, s)
	}
	return out, nil
}

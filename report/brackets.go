package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/controller"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/scheduler/asha"
	"github.com/hone-tune/hone/scheduler/hyperband"
	"github.com/hone-tune/hone/search/dehb"
	"github.com/hone-tune/hone/spec"
)

// Bracket is one bracket of successive halving and the trials the
// scheduler put in it.
type Bracket struct {
	// Label names it: "bracket 0" under ASHA, "band 0 · s=4" under
	// HyperBand (band, then HyperBand's s, the number of halvings).
	Label string `json:"label"`
	// Milestones are its rungs, lowest first; the last is where its
	// trials end (max_t, or HyperBand's truncation of it).
	Milestones []float64 `json:"milestones"`
	// Trials are the trials it took, in the order it took them.
	Trials []string `json:"trials"`
	// At says, for DEHB, at which of Milestones (by index) each trial
	// ran in the bracket: a DEHB trial runs a job for one rung, and a
	// promotion may continue it at a rung of another bracket. nil: every
	// trial runs in the bracket from its first rung on (ASHA,
	// HyperBand).
	At map[string][]int `json:"-"`
}

// Assignment is the brackets of an experiment and which trials ran in
// which, as its scheduler assigned them.
type Assignment struct {
	// Brackets are every bracket that took a trial, in the scheduler's
	// order; empty when they are not known (Note says why).
	Brackets []Bracket `json:"brackets"`
	// Note says why the brackets are not known, "" when they are.
	Note string `json:"note,omitempty"`
	of   map[string][]int
}

// Of returns the indexes in Brackets of the brackets trial id ran in (one,
// unless a retry put it in another).
func (a *Assignment) Of(id string) []int {
	if a == nil {
		return nil
	}
	return a.of[id]
}

// Replay rebuilds an experiment's scheduler by replaying its journal into
// a controller built from its stored spec, as a resume does, to learn
// which bracket each trial ran in: the journal records the scheduler's
// inputs, not its state. It only reads: it writes nothing and starts no
// trial. Update reads what the journal gained since the last call and
// feeds only that to the same controller, so it can follow a running
// experiment. Not safe for concurrent use.
type Replay struct {
	dir  string
	spec *spec.Spec
	note string // why the brackets cannot be known; set for good

	tail   *journal.Tail
	ctl    *controller.Controller
	sched  hone.Scheduler
	search hone.Searcher
	lines  int // journal lines fed, after the header
	// made are the trial records the replay made that the journal has
	// not shown yet: each must match the journal's next one.
	made    []*controller.Record
	seen    int // trials of ctl looked at for a bracket
	diverge string
	ashaOf  map[string][]int // ASHA: trial -> brackets, in the order assigned
	ashaIDs []string         // ASHA: trials in the order they were assigned
	dirty   bool
	asg     *Assignment
}

// NewReplay returns a Replay of the experiment in dir, or nil when its
// scheduler has no brackets (no spec names ASHA, HyperBand or HyperBand
// for BOHB, or DEHB). An experiment whose brackets cannot be rebuilt (no spec: one
// run from Go) gives a Replay whose Assignment says why.
func NewReplay(dir string) (*Replay, error) {
	r := &Replay{dir: dir}
	path := filepath.Join(dir, SpecFile)
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		r.note = "the experiment has no spec (it was run from Go), so its scheduler cannot be rebuilt to tell which bracket each trial ran in"
		return r, nil
	}
	if err != nil {
		return nil, fmt.Errorf("replay the experiment: %w", err)
	}
	s, err := spec.Decode(data, path, dir)
	if err != nil {
		return nil, fmt.Errorf("replay the experiment: %w", err)
	}
	r.spec = s
	exp, err := s.BuildReplay()
	if err != nil {
		r.note = fmt.Sprintf("the experiment's searcher and scheduler cannot be rebuilt from its spec: %v", err)
		return r, nil
	}
	if !hasBrackets(exp.Scheduler) {
		return nil, nil
	}
	return r, nil
}

// hasBrackets reports whether Replay knows sc's brackets.
func hasBrackets(sc hone.Scheduler) bool {
	switch sc.(type) {
	case *asha.Scheduler, *hyperband.Scheduler, *dehb.Scheduler:
		return true
	}
	return false
}

// reset starts the replay again from the journal's start.
func (r *Replay) reset() {
	r.tail = journal.NewTail(filepath.Join(r.dir, journal.FileName))
	r.ctl, r.sched, r.lines, r.seen, r.diverge, r.made = nil, nil, 0, 0, "", nil
	r.ashaOf, r.ashaIDs = map[string][]int{}, nil
	r.dirty = true
}

// Update feeds the controller the journal lines written since the last
// call, and reports whether the brackets may have changed. A journal that
// shrank (a resume cut its tail) is replayed again from its start.
func (r *Replay) Update() (bool, error) {
	if r.note != "" || r.diverge != "" {
		return false, nil
	}
	if r.tail == nil {
		r.reset()
	}
	lines, err := r.tail.Next()
	if errors.Is(err, journal.ErrShrunk) {
		r.reset()
		lines, err = r.tail.Next()
	}
	var corrupt *journal.CorruptError
	if err != nil && !errors.As(err, &corrupt) {
		return false, fmt.Errorf("replay the experiment: %w", err)
	}
	jerr := err
	if len(lines) > 0 && r.ctl == nil {
		if err := r.start(r.tail.Header()); err != nil {
			r.note = err.Error()
			r.dirty = true
			return true, nil
		}
	}
	for _, l := range lines {
		r.lines++
		if l.Event != nil {
			if len(r.made) > 0 {
				r.diverged(fmt.Sprintf("it created trial %s, which the journal does not record", r.made[0].Trial))
				return true, nil
			}
			r.ctl.Step(*l.Event)
			for _, a := range r.ctl.Ready() {
				if a.Kind == controller.ActRecord && a.Record != nil && a.Record.Op == "trial" {
					rec := *a.Record
					r.made = append(r.made, &rec)
				}
			}
			r.observe(l.Event)
			r.dirty = true
			continue
		}
		if l.Rec == nil || l.Rec.Op != "trial" {
			continue
		}
		if len(r.made) == 0 || !journal.SameRecord(r.made[0], l.Rec) {
			r.diverged(fmt.Sprintf("it did not create trial %s with config %v where the journal does (line %d)",
				l.Rec.Trial, map[string]any(l.Rec.Config), r.lines+1))
			return true, nil
		}
		r.made = r.made[1:]
	}
	if jerr != nil {
		return len(lines) > 0, fmt.Errorf("replay the experiment: %w", jerr)
	}
	return len(lines) > 0, nil
}

// diverged stops the replay: the spec no longer replays the journal.
func (r *Replay) diverged(what string) {
	r.diverge = "replaying the journal with the experiment's spec went another way: " + what +
		"; the spec was changed since the run, so which bracket each trial ran in is not known"
	r.dirty = true
}

// start builds the controller the journal's first session ran with.
func (r *Replay) start(h journal.Header) error {
	exp, err := r.spec.BuildReplay()
	if err != nil {
		return fmt.Errorf("the experiment's searcher and scheduler cannot be rebuilt from its spec: %w", err)
	}
	if exp.Seed != h.Seed {
		return fmt.Errorf("the experiment's spec has seed %d but its journal %d: the brackets cannot be rebuilt", exp.Seed, h.Seed)
	}
	pool := hone.Resources{CPU: float64(runtime.NumCPU())}
	if h.Settings != nil {
		pool = h.Settings.Pool
	}
	ctl, err := controller.New(exp, pool)
	if err != nil {
		return fmt.Errorf("rebuild the experiment's controller: %w", err)
	}
	if h.Settings != nil {
		err = ctl.ApplySettings(*h.Settings)
	} else {
		// A journal from before hone recorded settings (see
		// runner.Resume).
		old := ctl.Settings()
		old.StartsAnnounced, old.SpareIDs = false, false
		err = ctl.ApplySettings(old)
	}
	if err != nil {
		return fmt.Errorf("rebuild the experiment's controller: %w", err)
	}
	r.ctl, r.sched, r.search = ctl, exp.Scheduler, exp.Searcher
	return nil
}

// observe records the ASHA brackets of the trials the last input created
// or added again (a retry, a resume that restarts failed trials).
func (r *Replay) observe(in *hone.Event) {
	a, ok := r.sched.(*asha.Scheduler)
	if !ok {
		return
	}
	trials := r.ctl.Trials()
	look := func(id string) {
		b := a.Bracket(id)
		if b < 0 {
			return
		}
		bs := r.ashaOf[id]
		if len(bs) == 0 {
			r.ashaIDs = append(r.ashaIDs, id)
		}
		if len(bs) == 0 || bs[len(bs)-1] != b {
			r.ashaOf[id] = append(bs, b)
		}
	}
	for _, t := range trials[r.seen:] {
		look(t.ID)
	}
	r.seen = len(trials)
	if in.Kind == hone.EventResume {
		for _, t := range trials {
			look(t.ID)
		}
	} else if in.TrialID != "" {
		look(in.TrialID)
	}
}

// Assignment returns the brackets as of the last Update. The value is not
// changed afterwards.
func (r *Replay) Assignment() *Assignment {
	if !r.dirty && r.asg != nil {
		return r.asg
	}
	r.dirty = false
	out := &Assignment{Brackets: []Bracket{}, of: map[string][]int{}}
	switch {
	case r.note != "":
		out.Note = r.note
	case r.diverge != "":
		out.Note = r.diverge
	case r.sched == nil:
	default:
		switch sc := r.sched.(type) {
		case *asha.Scheduler:
			r.ashaBrackets(sc, out)
		case *hyperband.Scheduler:
			hyperbandBrackets(sc, out)
		case *dehb.Scheduler:
			if sr, ok := r.search.(*dehb.Searcher); ok {
				dehbBrackets(sr, r.ctl.Trials(), out)
			}
		}
	}
	r.asg = out
	return out
}

func (r *Replay) ashaBrackets(sc *asha.Scheduler, out *Assignment) {
	cfg := sc.Config()
	idx := map[int]int{} // ASHA's bracket -> index in out
	for b := range cfg.Brackets {
		ms := sc.Milestones(b)
		if len(ms) == 0 || ms[len(ms)-1] < cfg.MaxT {
			ms = append(ms, cfg.MaxT)
		}
		idx[b] = len(out.Brackets)
		out.Brackets = append(out.Brackets, Bracket{Label: fmt.Sprintf("bracket %d", b), Milestones: ms, Trials: []string{}})
	}
	for _, id := range r.ashaIDs {
		for _, b := range r.ashaOf[id] {
			i := idx[b]
			out.Brackets[i].Trials = append(out.Brackets[i].Trials, id)
			out.of[id] = append(out.of[id], i)
		}
	}
}

func hyperbandBrackets(sc *hyperband.Scheduler, out *Assignment) {
	for band, bs := range sc.Brackets() {
		for _, b := range bs {
			if b.Skipped || len(b.Members) == 0 {
				continue
			}
			var ms []float64
			for _, g := range b.Rungs {
				ms = append(ms, g.R)
			}
			slices.Sort(ms)
			ms = slices.Compact(ms)
			i := len(out.Brackets)
			out.Brackets = append(out.Brackets, Bracket{Label: fmt.Sprintf("band %d · s=%d", band, b.S), Milestones: ms,
				Trials: slices.Clone(b.Members)})
			for _, id := range b.Members {
				out.of[id] = append(out.of[id], i)
			}
		}
	}
}

// dehbBrackets places each trial in the brackets of its jobs (DEHB's
// searcher makes them: a trial's first job, then its promotions).
func dehbBrackets(sr *dehb.Searcher, trials []*hone.Trial, out *Assignment) {
	idx := map[int]int{} // DEHB's bracket -> index in out
	for b := range sr.Brackets() {
		idx[b] = len(out.Brackets)
		out.Brackets = append(out.Brackets, Bracket{Label: fmt.Sprintf("bracket %d", b), Milestones: sr.BracketBudgets(b),
			Trials: []string{}, At: map[string][]int{}})
	}
	for _, t := range trials {
		for _, j := range sr.Jobs(t.ID) {
			i, ok := idx[j.Bracket]
			if !ok {
				continue
			}
			b := &out.Brackets[i]
			if len(b.At[t.ID]) == 0 {
				b.Trials = append(b.Trials, t.ID)
				out.of[t.ID] = append(out.of[t.ID], i)
			}
			b.At[t.ID] = append(b.At[t.ID], j.Rung)
		}
	}
}

// Brackets replays the journal of the experiment in dir from its start
// and returns its brackets (see Replay); nil when its scheduler has none.
func Brackets(dir string) (*Assignment, error) {
	r, err := NewReplay(dir)
	if err != nil || r == nil {
		return nil, err
	}
	if _, err := r.Update(); err != nil {
		return nil, err
	}
	return r.Assignment(), nil
}

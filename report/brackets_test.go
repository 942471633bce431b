package report_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/spectest"
	"github.com/hone-tune/hone/report"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/asha"
	"github.com/hone-tune/hone/scheduler/hyperband"
	"github.com/hone-tune/hone/search/dehb"
	"github.com/hone-tune/hone/spec"
)

// watch is a callback that, on each result, records the bracket the live
// scheduler put the trial in, and replays the journal as written so far
// with one Replay that follows the run.
type watch struct {
	hone.NopCallback
	t      *testing.T
	dir    string
	sched  hone.Scheduler
	search hone.Searcher
	live   map[string]string // trial -> the live scheduler's bracket
	replay *report.Replay
}

// OnTrialStart records the trial's bracket: a trial is in its bracket
// from before it starts (ASHA forgets it once it ends).
func (w *watch) OnTrialStart(tr *hone.Trial) { w.record(tr.ID) }

func (w *watch) record(id string) {
	switch sc := w.sched.(type) {
	case *asha.Scheduler:
		if b := sc.Bracket(id); b >= 0 {
			w.live[id] = "bracket " + string(rune('0'+b))
		}
	case *hyperband.Scheduler:
		w.live = liveHyperBand(sc)
	case *dehb.Scheduler:
		// placed names a trial in several brackets by the last.
		last := -1
		for _, j := range w.search.(*dehb.Searcher).Jobs(id) {
			last = max(last, j.Bracket)
		}
		if last >= 0 {
			w.live[id] = "bracket " + string(rune('0'+last))
		}
	}
}

// OnTrialResult replays the journal as written so far.
func (w *watch) OnTrialResult(tr *hone.Trial, _ *hone.Result) {
	w.record(tr.ID)
	if w.replay == nil {
		r, err := report.NewReplay(w.dir)
		if err != nil || r == nil {
			w.t.Errorf("replay: %v %v", r, err)
			return
		}
		w.replay = r
	}
	if _, err := w.replay.Update(); err != nil {
		w.t.Errorf("replay while running: %v", err)
		return
	}
	a := w.replay.Assignment()
	if a.Note != "" {
		w.t.Errorf("replay while running: %s", a.Note)
	}
	// The journal on disk may lag the run: what the replay placed must
	// agree with the live scheduler.
	got := placed(a)
	for id := range got {
		w.record(id) // a trial created but not started yet
	}
	for id, b := range got {
		if w.live[id] != b {
			w.t.Errorf("while running, trial %s: replay says %s, the scheduler %q", id, b, w.live[id])
		}
	}
}

// liveHyperBand returns the brackets HyperBand put the trials in.
func liveHyperBand(sc *hyperband.Scheduler) map[string]string {
	out := map[string]string{}
	for band, bs := range sc.Brackets() {
		for _, b := range bs {
			for _, id := range b.Members {
				out[id] = "band " + string(rune('0'+band)) + " · s=" + string(rune('0'+b.S))
			}
		}
	}
	return out
}

// placed returns each trial's bracket label.
func placed(a *report.Assignment) map[string]string {
	out := map[string]string{}
	for _, b := range a.Brackets {
		for _, id := range b.Trials {
			out[id] = b.Label
		}
	}
	return out
}

// runWatched runs the spec to its end, watched by a watch.
func runWatched(t *testing.T, body string, exec hone.Executor) (string, *watch) {
	t.Helper()
	plan, dir := spectest.Prepare(t, body)
	w := &watch{t: t, dir: dir, sched: plan.Experiment.Scheduler, search: plan.Experiment.Searcher, live: map[string]string{}}
	plan.Experiment.Callbacks = append(plan.Experiment.Callbacks, w)
	spectest.Finish(t, plan, exec)
	if sc, ok := w.sched.(*hyperband.Scheduler); ok {
		w.live = liveHyperBand(sc)
	}
	return dir, w
}

// checkBrackets compares the brackets read from a finished run, by a
// replay from the start and by the replay that followed the run, with the
// live scheduler's, and the rungs per bracket with them.
func checkBrackets(t *testing.T, dir string, w *watch, brackets int) {
	t.Helper()
	a, err := report.Brackets(dir)
	if err != nil || a == nil {
		t.Fatalf("brackets: %v %v", a, err)
	}
	if a.Note != "" {
		t.Fatal(a.Note)
	}
	got := placed(a)
	if len(got) == 0 || !mapsEqual(got, w.live) {
		t.Fatalf("brackets replayed %v, the scheduler's %v", got, w.live)
	}
	labels := map[string]bool{}
	for _, b := range got {
		labels[b] = true
	}
	if len(labels) < brackets {
		t.Errorf("trials ran in %d brackets, want at least %d: %v", len(labels), brackets, got)
	}
	if w.replay == nil {
		t.Fatal("the run was not followed")
	}
	if _, err := w.replay.Update(); err != nil {
		t.Fatal(err)
	}
	if followed := placed(w.replay.Assignment()); !mapsEqual(followed, got) {
		t.Errorf("the replay that followed the run says %v, a fresh one %v", followed, got)
	}

	e, info := openExp(t, dir)
	info.Brackets = a
	rg, err := report.SuccessiveHalving(e, info, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rg.BracketsNote != "" || len(rg.Brackets) != len(a.Brackets) {
		t.Fatalf("rungs: %d brackets, note %q", len(rg.Brackets), rg.BracketsNote)
	}
	total := 0
	for i, b := range rg.Brackets {
		ab := a.Brackets[i]
		if b.Label != ab.Label || b.Trials != len(ab.Trials) || len(b.Rungs) != len(ab.Milestones) {
			t.Errorf("bracket %s: %+v, assigned %+v", ab.Label, b, ab)
		}
		total += b.Trials
		for k, g := range b.Rungs {
			for _, rt := range g.Trials {
				if !slices.Contains(ab.Trials, rt.ID) {
					t.Errorf("bracket %s shows trial %s, which ran elsewhere", ab.Label, rt.ID)
				}
			}
			if g.Counts[report.OutcomePaused]+g.Counts[report.OutcomePending] != 0 {
				t.Errorf("bracket %s rung %v of a finished run: %v", ab.Label, g.Milestone, g.Counts)
			}
			if k+1 < len(b.Rungs) && g.Counts[report.OutcomePromoted] != b.Rungs[k+1].Reached {
				t.Errorf("bracket %s rung %v promoted %d, the next reached by %d", ab.Label, g.Milestone, g.Counts[report.OutcomePromoted], b.Rungs[k+1].Reached)
			}
		}
	}
	if total != len(e.Trials) {
		t.Errorf("the brackets hold %d trials, the experiment %d", total, len(e.Trials))
	}
	for _, tr := range e.Trials {
		rs, err := report.TrialRungs(tr, info)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.Bracket != got[tr.ID] {
				t.Errorf("trial %s: a rung of %q, it ran in %q", tr.ID, r.Bracket, got[tr.ID])
			}
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestBracketsOfASHA(t *testing.T) {
	dir, w := runWatched(t, spectest.CurveSpec(7, 30, `scheduler: {name: asha, max_t: 27, grace_period: 1, reduction_factor: 3, brackets: 3}
max_concurrent_trials: 4
`), sim.New(sim.Curve{MaxIterations: 27}.New))
	checkBrackets(t, dir, w, 3)
}

func TestBracketsOfHyperBand(t *testing.T) {
	dir, w := runWatched(t, spectest.CurveSpec(4, 20, `scheduler: {name: hyperband, max_t: 9, reduction_factor: 3}
max_concurrent_trials: 4
`), sim.New(sim.Curve{MaxIterations: 9}.New))
	checkBrackets(t, dir, w, 2)
}

func TestBracketsOfBOHB(t *testing.T) {
	dir, w := runWatched(t, spectest.CurveSpec(5, 20, `searcher: {name: bohb}
scheduler: {name: hyperband_for_bohb, max_t: 9, reduction_factor: 3}
max_concurrent_trials: 4
`), sim.New(sim.Curve{MaxIterations: 9}.New))
	checkBrackets(t, dir, w, 2)
}

func TestBracketsUnknown(t *testing.T) {
	dir := spectest.Run(t, spectest.CurveSpec(5, 4, `scheduler: {name: fifo}
`), sim.New(sim.Curve{MaxIterations: 3}.New))
	if a, err := report.Brackets(dir); a != nil || err != nil {
		t.Errorf("FIFO: brackets %+v, %v", a, err)
	}
	if err := os.Remove(filepath.Join(dir, report.SpecFile)); err != nil {
		t.Fatal(err)
	}
	r, err := report.NewReplay(dir)
	if err != nil || r == nil {
		t.Fatalf("without a spec: %v %v", r, err)
	}
	if a := r.Assignment(); a.Note == "" || len(a.Brackets) != 0 {
		t.Errorf("without a spec: %+v", a)
	}
}

// TestBracketsOfDEHB places each trial of a DEHB run at the rungs of the
// brackets its jobs were for, as the live searcher gave them.
func TestBracketsOfDEHB(t *testing.T) {
	dir, w := runWatched(t, spectest.CurveSpec(3, 30, `searcher: {name: dehb, max_concurrent: 3}
scheduler: {name: dehb, max_t: 9, grace_period: 1, reduction_factor: 3}
`), sim.New(sim.Curve{MaxIterations: 9}.New))
	sr := w.search.(*dehb.Searcher)
	live := map[string][]string{} // trial -> "bracket b rung r", in order
	e, info := openExp(t, dir)
	if info.Rungs == nil || !slices.Equal(info.Rungs.Milestones, []float64{1, 3, 9}) {
		t.Fatalf("DEHB's budgets: %+v", info.Rungs)
	}
	promoted := 0
	for _, tr := range e.Trials {
		for _, j := range sr.Jobs(tr.ID) {
			live[tr.ID] = append(live[tr.ID], "bracket "+string(rune('0'+j.Bracket))+" rung "+string(rune('0'+j.Rung)))
		}
		promoted += max(0, len(sr.Jobs(tr.ID))-1)
	}
	if promoted == 0 {
		t.Error("DEHB promoted no trial; the test needs it to")
	}
	a, err := report.Brackets(dir)
	if err != nil || a == nil || a.Note != "" {
		t.Fatalf("brackets: %+v, %v", a, err)
	}
	info.Brackets = a
	got := map[string][]string{}
	for _, tr := range e.Trials {
		rs, err := report.TrialRungs(tr, info)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			b := a.Brackets[slices.IndexFunc(a.Brackets, func(b report.Bracket) bool { return b.Label == r.Bracket })]
			got[tr.ID] = append(got[tr.ID], r.Bracket+" rung "+string(rune('0'+slices.Index(b.Milestones, r.Milestone))))
		}
	}
	for id, want := range live {
		// A job that ended before its budget (none here: the simulated
		// trials run to it) would not show as a rung reached.
		if !slices.Equal(got[id], want) {
			t.Errorf("trial %s: rungs %v, jobs %v", id, got[id], want)
		}
	}
	rg, err := report.SuccessiveHalving(e, info, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rg.Brackets) != sr.Brackets() || len(rg.Brackets) < 2 {
		t.Errorf("%d brackets shown, %d started", len(rg.Brackets), sr.Brackets())
	}
}

// TestBracketsOfAChangedSpec replays a journal with a spec that makes
// other trials: the brackets are not shown, and the note says why.
func TestBracketsOfAChangedSpec(t *testing.T) {
	body := spectest.CurveSpec(5, 6, `scheduler: {name: asha, max_t: 9, grace_period: 1, reduction_factor: 3, brackets: 2}
`)
	dir := spectest.Run(t, body, sim.New(sim.Curve{MaxIterations: 9}.New))
	changed := strings.Replace(body, "rate: {uniform: [0.05, 0.5]}", "rate: {uniform: [0.6, 0.9]}", 1)
	if err := os.WriteFile(filepath.Join(dir, report.SpecFile), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := report.Brackets(dir)
	if err != nil || a == nil {
		t.Fatalf("brackets: %+v, %v", a, err)
	}
	if len(a.Brackets) != 0 || !strings.Contains(a.Note, "the spec was changed") {
		t.Errorf("a changed spec: %d brackets, note %q", len(a.Brackets), a.Note)
	}
	e, info := openExp(t, dir)
	info.Brackets = a
	rg, err := report.SuccessiveHalving(e, info, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rg.Brackets) != 0 || rg.BracketsNote != a.Note || rg.Rungs[0].Reached != 6 {
		t.Errorf("rungs: %d brackets, note %q, %d at the first rung", len(rg.Brackets), rg.BracketsNote, rg.Rungs[0].Reached)
	}
}

// stopAfter cancels the run at its n-th result.
type stopAfter struct {
	hone.NopCallback
	n      int
	cancel context.CancelFunc
}

func (s *stopAfter) OnTrialResult(*hone.Trial, *hone.Result) {
	if s.n--; s.n == 0 {
		s.cancel()
	}
}

// TestBracketsAcrossAResume stops an ASHA run with three brackets midway
// and resumes it: one replay follows both sessions, and the brackets equal
// those the schedulers of both assigned.
func TestBracketsAcrossAResume(t *testing.T) {
	body := spectest.CurveSpec(9, 24, `scheduler: {name: asha, max_t: 27, grace_period: 1, reduction_factor: 3, brackets: 3}
max_concurrent_trials: 4
`)
	base := t.TempDir()
	path := filepath.Join(base, "exp.yaml")
	dir := filepath.Join(base, "exp")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, report.SpecFile), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	session := func(w *watch, resume bool) *watch {
		s, err := spec.Parse([]byte(body), path, base)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := spec.Build(s, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		next := &watch{t: t, dir: dir, sched: plan.Experiment.Scheduler, search: plan.Experiment.Searcher, live: map[string]string{}}
		if w != nil {
			next.live, next.replay = w.live, w.replay
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		plan.Experiment.Callbacks = append(plan.Experiment.Callbacks, next)
		if !resume {
			plan.Experiment.Callbacks = append(plan.Experiment.Callbacks, &stopAfter{n: 40, cancel: cancel})
		}
		plan.Options.Executor, plan.Options.Log = sim.New(sim.Curve{MaxIterations: 27}.New), io.Discard
		if resume {
			_, err = runner.Resume(ctx, plan.Experiment, plan.Options, hone.ResumeFlags{Unfinished: true})
		} else {
			_, err = runner.Run(ctx, plan.Experiment, plan.Options)
		}
		if err := errors.Join(err, plan.Close()); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		return next
	}
	w := session(nil, false)
	if w.replay == nil {
		t.Fatal("the first session was not followed")
	}
	if _, err := w.replay.Update(); err != nil {
		t.Fatal(err)
	}
	first := len(placed(w.replay.Assignment()))
	w = session(w, true)
	if first == 0 || first >= 24 {
		t.Errorf("the first session placed %d of 24 trials; the test needs it to stop midway", first)
	}
	checkBrackets(t, dir, w, 2)
}

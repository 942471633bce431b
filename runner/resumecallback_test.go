package runner_test

import (
	"context"
	"io"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/trial"
)

// resumeRecorder is a hone.ResumeCallback that records what
// OnExperimentResume was given: each trial's status and last iteration.
type resumeRecorder struct {
	hone.NopCallback
	calls  int
	trials map[string]string // id -> "STATUS@iteration"
}

func (r *resumeRecorder) OnExperimentResume(trials []*hone.Trial) {
	r.calls++
	r.trials = map[string]string{}
	for _, t := range trials {
		it := -1
		if t.LastResult != nil {
			it = t.LastResult.TrainingIteration
		}
		r.trials[t.ID] = string(t.Status) + "@" + itoa(it)
	}
}

// itoa renders an iteration, -1 (no result) as "-".
func itoa(i int) string {
	if i < 0 {
		return "-"
	}
	return strconv.Itoa(i)
}

// TestResumeCallback checks that Resume hands a ResumeCallback every trial
// of the earlier session, as the journal left it (its last result
// included), before any trial runs again, and that Run does not call it.
func TestResumeCallback(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rc")
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	seen := 0
	fn := func(c context.Context, s trial.Session) error {
		return quadratic(c, &countingSession{Session: s, onReport: func() {
			mu.Lock()
			defer mu.Unlock()
			seen++
			if seen == 15 {
				cancel()
			}
		}})
	}
	rec := &resumeRecorder{}
	exp := experiment(t, dir, 6)
	exp.Callbacks = append(exp.Callbacks, rec)
	out, err := runner.Run(ctx, exp, runner.Options{Dir: dir, Executor: inproc.NewFunc(fn), Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Interrupted || rec.calls != 0 {
		t.Fatalf("run: interrupted %v, OnExperimentResume called %d times; want true and 0", out.Interrupted, rec.calls)
	}
	want := map[string]string{}
	for _, tr := range out.Trials {
		it := -1
		if tr.LastResult != nil {
			it = tr.LastResult.TrainingIteration
		}
		want[tr.ID] = string(tr.Status) + "@" + itoa(it)
	}
	var atResume map[string]string
	started := 0
	exp = experiment(t, dir, 6)
	exp.Callbacks = append(exp.Callbacks, rec)
	fn2 := func(c context.Context, s trial.Session) error {
		mu.Lock()
		if atResume == nil {
			atResume = rec.trials // the first trial to run again
		}
		started++
		mu.Unlock()
		return quadratic(c, s)
	}
	if _, err := runner.Resume(context.Background(), exp, runner.Options{Dir: dir, Executor: inproc.NewFunc(fn2), Log: io.Discard},
		hone.ResumeFlags{Unfinished: true}); err != nil {
		t.Fatal(err)
	}
	if rec.calls != 1 || started == 0 {
		t.Fatalf("resume: OnExperimentResume called %d times, %d trials started; want 1 and some", rec.calls, started)
	}
	for id, w := range want {
		if got := atResume[id]; got != w {
			t.Errorf("trial %s at the resume: %s, want %s as the run left it", id, got, w)
		}
	}
	if len(atResume) != len(want) {
		t.Errorf("OnExperimentResume got %d trials, want %d: %v", len(atResume), len(want), atResume)
	}
}

package runner_test

import (
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/hyperband"
	"github.com/hone-tune/hone/search/bohb"
	"github.com/hone-tune/hone/space"
	"github.com/hone-tune/hone/store/local"
)

var writeLegacy = flag.String("write-legacy-journal", "", "run the legacy-ids experiment into this directory and stop")

// legacyExperiment is BOHB under HyperBand for BOHB on the sim executor:
// the searcher declines suggestions (hone.ErrNotNow) while its brackets
// are full and while two of its trials run (MaxConcurrent), so the
// controller asks for suggestions it does not get.
func legacyExperiment(t *testing.T) *hone.Experiment {
	sp := space.Space{"rate": space.Uniform(0.01, 1), "step_seconds": 60}
	sr, err := bohb.New(sp, bohb.Options{Metric: "loss", Mode: hone.Min, NumSamples: 20, Seed: 3, MaxConcurrent: 2})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := hyperband.NewForBOHB(hyperband.Config{MaxT: 9, ReductionFactor: 3, StopLastTrials: true}, sr)
	if err != nil {
		t.Fatal(err)
	}
	return &hone.Experiment{Name: "legacy", Metric: "loss", Mode: hone.Min, Searcher: sr, Scheduler: sc, MaxConcurrentTrials: 4, Seed: 3}
}

func legacyOptions(t *testing.T, dir string) runner.Options {
	st, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return runner.Options{Dir: dir, Store: st, Log: io.Discard, Executor: sim.New(sim.Curve{MaxIterations: 9}.New)}
}

// TestLegacyJournalIDs: testdata/legacy-ids holds the journal of
// legacyExperiment as hone wrote it before Settings.SpareIDs, when every
// suggestion asked for drew a trial id whether the searcher made it or
// not. Its header has no spare_ids, so a resume replays it with the ids
// it drew then; replayed with the new rule, the trials' ids would not
// match the journal's records and the resume would refuse it.
func TestLegacyJournalIDs(t *testing.T) {
	if *writeLegacy != "" {
		if _, err := runner.Run(context.Background(), legacyExperiment(t), legacyOptions(t, *writeLegacy)); err != nil {
			t.Fatal(err)
		}
		t.Skip("wrote the legacy journal")
	}
	src, err := os.ReadFile(filepath.Join("testdata", "legacy-ids", journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, journal.FileName), src, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runner.Resume(context.Background(), legacyExperiment(t), legacyOptions(t, dir), hone.ResumeFlags{})
	if err != nil {
		t.Fatalf("resume of a journal without spare_ids: %v", err)
	}
	if len(out.Trials) == 0 {
		t.Fatal("no trials after the resume")
	}
	for _, tr := range out.Trials {
		if !tr.Status.Finished() {
			t.Errorf("trial %s is %s after resuming a finished experiment", tr.ID, tr.Status)
		}
	}
	// A run of the same experiment today draws other ids: the journal
	// exercises the old rule.
	fresh, err := runner.Run(context.Background(), legacyExperiment(t), legacyOptions(t, filepath.Join(t.TempDir(), "fresh")))
	if err != nil {
		t.Fatal(err)
	}
	same := len(fresh.Trials) == len(out.Trials)
	for i := 0; same && i < len(out.Trials); i++ {
		same = fresh.Trials[i].ID == out.Trials[i].ID
	}
	if same {
		t.Error("a fresh run drew the legacy journal's ids: the fixture does not exercise declined suggestions")
	}
}

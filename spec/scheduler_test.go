package spec

import (
	"slices"
	"strings"
	"testing"

	"github.com/hone-tune/hone/scheduler/asha"
)

// TestBuildScheduler builds the scheduler of a spec whose command does not
// exist and whose resources this machine cannot give, as a reader of an
// experiment run elsewhere does (with Decode), and refuses a bad scheduler
// section.
func TestBuildScheduler(t *testing.T) {
	base := "command: [/no/such/command]\nmetric: loss\nresources: {cpu: 100000}\nsearch_space:\n  lr: {uniform: [0, 1]}\n"
	s, err := Decode([]byte(base+"scheduler: {name: asha, max_t: 27, reduction_factor: 3}\n"), "experiment.yaml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err == nil {
		t.Fatal("the spec validates on this machine; the test needs one that does not")
	}
	sc, err := s.BuildScheduler()
	if err != nil {
		t.Fatal(err)
	}
	a, ok := sc.(*asha.Scheduler)
	if !ok {
		t.Fatalf("scheduler %T", sc)
	}
	attr, rungs := a.Rungs()
	if attr != "training_iteration" || !slices.Equal(rungs, []float64{1, 3, 9, 27}) {
		t.Fatalf("rungs %s %v", attr, rungs)
	}
	s, err = Decode([]byte(base+"scheduler: {name: asha, max_t: -1}\n"), "experiment.yaml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.BuildScheduler(); err == nil || !strings.Contains(err.Error(), "max_t") {
		t.Fatalf("a negative max_t: %v", err)
	}
}

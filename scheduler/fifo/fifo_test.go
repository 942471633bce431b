package fifo

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hone-tune/hone"
)

type view struct{ trials []*hone.Trial }

func (v view) Trials() []*hone.Trial { return v.trials }
func (v view) Trial(id string) *hone.Trial {
	for _, t := range v.trials {
		if t.ID == id {
			return t
		}
	}
	return nil
}
func (view) Now() time.Time                { return time.Time{} }
func (view) Rand() *rand.Rand              { return nil }
func (view) Constraints() hone.Constraints { return nil }

func (view) Objectives() hone.Objectives                { return nil }
func (view) ScheduleSave(*hone.Trial) *hone.SaveFuture  { return nil }
func (view) PauseTrial(*hone.Trial, bool)               {}
func (view) StopTrial(*hone.Trial)                      {}
func (view) SetConfig(*hone.Trial, hone.Config, string) {}
func (view) SetRestore(*hone.Trial, *hone.Checkpoint)   {}
func (view) Logf(string, ...any)                        {}
func (view) AppendLine(string, string)                  {}
func (view) Pin(*hone.Checkpoint)                       {}
func (view) Unpin(*hone.Checkpoint)                     {}
func (view) CopyFile(string, string)                    {}

// TestChooseTrialToRun pins docs/SEMANTICS.md §4 FIFO: oldest PENDING first, then
// oldest PAUSED, else nothing; every result continues.
func TestChooseTrialToRun(t *testing.T) {
	mk := func(id string, s hone.Status) *hone.Trial { return &hone.Trial{ID: id, Status: s} }
	cases := []struct {
		trials []*hone.Trial
		want   string
	}{
		{[]*hone.Trial{mk("a", hone.StatusRunning), mk("b", hone.StatusPaused), mk("c", hone.StatusPending), mk("d", hone.StatusPending)}, "c"},
		{[]*hone.Trial{mk("a", hone.StatusTerminated), mk("b", hone.StatusPaused), mk("c", hone.StatusPaused)}, "b"},
		{[]*hone.Trial{mk("a", hone.StatusTerminated), mk("b", hone.StatusError), mk("c", hone.StatusRunning)}, ""},
	}
	for i, c := range cases {
		got := New().ChooseTrialToRun(view{c.trials})
		id := ""
		if got != nil {
			id = got.ID
		}
		if id != c.want {
			t.Errorf("case %d: chose %q, want %q", i, id, c.want)
		}
	}
	if d := New().OnResult(view{}, mk("a", hone.StatusRunning), &hone.Result{}); d != hone.Continue {
		t.Errorf("OnResult = %v, want CONTINUE", d)
	}
}

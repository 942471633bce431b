package searchbench

import (
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone/bench/functions"
)

// part makes results of one cell (branin at concurrency 4, budget 8) with
// a run of each method for each seed, whose final regret is 1/seed plus
// shift.
func part(seeds []uint64, shift float64, methods ...string) *Results {
	c := &Cell{Problem: functions.ByName("branin"), Concurrency: 4, Budget: 8, Seeds: len(seeds), Methods: methods,
		Traces: map[string][]*Trace{}}
	for _, m := range methods {
		for _, s := range seeds {
			c.Traces[m] = append(c.Traces[m], &Trace{Method: m, Problem: "branin", Seed: s, Concurrency: 4, Budget: 8,
				Spent: 8, Points: []Point{{2, 5}, {6, 1/float64(s) + shift}}, Steps: 40, FullEvals: 3, Trials: 9})
		}
	}
	return &Results{Cells: []*Cell{c}}
}

func TestMerge(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	infos := []RunInfo{
		{Command: "cd bench && go run ./cmd/searchbench", Mode: "default", Start: t0.Add(time.Hour), Elapsed: time.Hour, CPUTime: 2 * time.Hour, Load: "1 at the start, 2 at the end"},
		{Command: "cd bench && go run ./cmd/searchbench -first-seed 3", Mode: "default", Start: t0, Elapsed: 30 * time.Minute, CPUTime: time.Hour},
	}
	// Seeds 1 and 2 of random and tpe, then seeds 3 and 4 of both and of
	// auto's 1 to 4 (random's seed 2 again, the same run).
	a := part([]uint64{1, 2}, 0, "tpe", "random")
	b := part([]uint64{3, 4}, 0, "random", "tpe")
	b.Cells[0].Traces["random"] = append(b.Cells[0].Traces["random"], part([]uint64{2}, 0, "random").Cells[0].Traces["random"]...)
	res, info, err := Merge([]*Results{a, b}, infos, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != 1 {
		t.Fatalf("%d cells, want 1", len(res.Cells))
	}
	c := res.Cells[0]
	if c.Seeds != 4 || strings.Join(c.Methods, ",") != "random,tpe" {
		t.Fatalf("cell of %d seeds, methods %v; want 4 seeds, random then tpe", c.Seeds, c.Methods)
	}
	for _, m := range c.Methods {
		for i, tr := range c.Traces[m] {
			if tr.Seed != uint64(i+1) || tr.Final() != 1/float64(i+1) {
				t.Errorf("%s's run %d: seed %d, final %g; want seed %d, final %g", m, i, tr.Seed, tr.Final(), i+1, 1/float64(i+1))
			}
		}
	}
	if !info.Start.Equal(t0) || info.Elapsed != 90*time.Minute || info.CPUTime != 3*time.Hour || info.Mode != "default" {
		t.Errorf("info start %v, elapsed %v, CPU %v, mode %q", info.Start, info.Elapsed, info.CPUTime, info.Mode)
	}
	if info.Command != infos[0].Command+"\n"+infos[1].Command || info.Load != "1 at the start, 2 at the end (part 1)" {
		t.Errorf("info command %q, load %q", info.Command, info.Load)
	}

	// Hone's methods from one part, the baselines from another.
	if res, _, err := Merge([]*Results{part([]uint64{1, 2}, 0, "random"), part([]uint64{1, 2}, 0, "random", "auto")}, infos, nil); err != nil {
		t.Errorf("merging methods: %v", err)
	} else if got := strings.Join(res.Cells[0].Methods, ","); got != "random,auto" {
		t.Errorf("methods %s, want random,auto", got)
	}

	// A part run again with new code replaces the methods it is taken for.
	if res, _, err := Merge([]*Results{part([]uint64{1, 2}, 0, "random", "tpe", "auto"), part([]uint64{1, 2}, 0.5, "random", "auto")},
		infos, [][]string{nil, {"auto"}}); err != nil {
		t.Errorf("replacing auto: %v", err)
	} else {
		c := res.Cells[0]
		if got := strings.Join(c.Methods, ","); got != "random,tpe,auto" {
			t.Errorf("methods %s, want random,tpe,auto", got)
		}
		if c.Traces["auto"][0].Final() != 1.5 || c.Traces["tpe"][0].Final() != 1 || c.Traces["random"][0].Final() != 1 {
			t.Errorf("finals auto %g, tpe %g, random %g; want auto's from the second part (1.5), the others from the first (1)",
				c.Traces["auto"][0].Final(), c.Traces["tpe"][0].Final(), c.Traces["random"][0].Final())
		}
	}

	for _, bad := range []struct {
		name  string
		parts []*Results
		want  string
	}{
		{"a seed's run differs", []*Results{part([]uint64{1, 2}, 0, "random"), part([]uint64{2, 3}, 0.5, "random")},
			"random's run of seed 2 in part 2 differs"},
		{"uneven seeds", []*Results{part([]uint64{1, 2}, 0, "random", "tpe"), part([]uint64{3}, 0, "random")},
			"tpe ran seeds 1-2, random ran 1-3"},
		{"budgets differ", []*Results{part([]uint64{1}, 0, "random"), func() *Results {
			r := part([]uint64{2}, 0, "random")
			r.Cells[0].Budget = 16
			return r
		}()}, "budget 16 in part 2, 8 before"},
		{"Optuna versions differ", []*Results{{Optuna: "Optuna 3.1.0", OptunaRan: true}, {Optuna: "Optuna 3.6.1", OptunaRan: true}},
			"part 2 ran Optuna"},
	} {
		if _, _, err := Merge(bad.parts, infos, nil); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: error %v, want one containing %q", bad.name, err, bad.want)
		}
	}
}

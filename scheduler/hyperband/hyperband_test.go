package hyperband

import (
	"errors"
	"flag"
	"slices"
	"strconv"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/scenario"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of the scenario scripts in testdata/")

func config(args map[string]string) Config {
	cfg := DefaultConfig()
	if v, ok := args["max_t"]; ok {
		cfg.MaxT, _ = strconv.ParseFloat(v, 64)
	}
	if v, ok := args["eta"]; ok {
		cfg.ReductionFactor, _ = strconv.ParseFloat(v, 64)
	}
	if args["stop_last"] == "false" {
		cfg.StopLastTrials = false
	}
	return cfg
}

// TestScenarios pins docs/SEMANTICS.md §4 HyperBand and HyperBand for BOHB with
// scripts in testdata/.
func TestScenarios(t *testing.T) {
	scenario.Run(t, "testdata/*.txt", *rewrite, map[string]scenario.SchedulerFactory{
		"hyperband": func(args map[string]string) (hone.Scheduler, error) { return New(config(args)) },
		"hb_bohb":   func(args map[string]string) (hone.Scheduler, error) { return NewForBOHB(config(args), nil) },
	})
}

// TestBracketSizes pins the bands of docs/SEMANTICS.md §4: s_max+1 =
// round(log(max_t)/log(η)) + 1 brackets (half to even), bracket s with
// n0 = ceil((s_max+1)/(s+1)·η^s) trials and first milestone
// int(max_t·η^-s), skipped when 0 (see also TestRaySchedules);
// Ray fills s = 0 first, BOHB the most aggressive bracket first.
func TestBracketSizes(t *testing.T) {
	type bk struct {
		s, n0 int
		r0    float64
	}
	cases := []struct {
		maxT, eta float64
		want      []bk // in fill order (Ray)
	}{
		{81, 3, []bk{{0, 5, 81}, {1, 8, 27}, {2, 15, 9}, {3, 34, 3}, {4, 81, 1}}},
		{9, 3, []bk{{0, 3, 9}, {1, 5, 3}, {2, 9, 1}}},
		{4, 2, []bk{{0, 3, 4}, {1, 3, 2}, {2, 4, 1}}},
		{100, 4, []bk{{0, 4, 100}, {1, 8, 25}, {2, 22, 6}, {3, 64, 1}}},
		{10, 5, []bk{{0, 2, 10}, {1, 5, 2}}},
		{1, 3, []bk{{0, 1, 1}}},
	}
	for _, c := range cases {
		for _, bohb := range []bool{false, true} {
			cfg := DefaultConfig()
			cfg.MaxT, cfg.ReductionFactor = c.maxT, c.eta
			s, err := newScheduler(cfg, bohb, nil)
			if err != nil {
				t.Fatal(err)
			}
			total := 0
			for _, b := range c.want {
				total += b.n0
			}
			for i := 0; i < total+1; i++ { // one more opens a second band
				s.OnTrialAdd(nil, &hone.Trial{ID: strconv.Itoa(i)})
			}
			bands := s.Brackets()
			if len(bands) != 2 || len(bands[0]) != len(c.want) {
				t.Fatalf("max_t=%v η=%v bohb=%v: %d bands, first with %d brackets; want 2 and %d", c.maxT, c.eta, bohb, len(bands), len(bands[0]), len(c.want))
			}
			for k, got := range bands[0] {
				want := c.want[k]
				if bohb {
					want = c.want[len(c.want)-1-k]
				}
				if got.S != want.s || got.Capacity != want.n0 || got.Milestone != want.r0 || len(got.Live) != want.n0 {
					t.Errorf("max_t=%v η=%v bohb=%v bracket %d: %+v, want s=%d n0=%d r0=%v full", c.maxT, c.eta, bohb, k, got, want.s, want.n0, want.r0)
				}
			}
			if len(bands[1]) != 1 || len(bands[1][0].Live) != 1 {
				t.Errorf("max_t=%v η=%v: the extra trial did not open a new band: %+v", c.maxT, c.eta, bands[1])
			}
		}
	}
}

// TestSkippedBracket: brackets whose first milestone would be 0 are skipped.
func TestSkippedBracket(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxT, cfg.ReductionFactor = 5, 4 // s_max+1 = round(1.16)+1 = 2: r0 = 5, 1
	s, _ := New(cfg)
	cfg.MaxT = 3 // s_max+1 = round(0.79)+1 = 2: r0 = 3, 0 -> skipped
	s2, _ := New(cfg)
	for i := 0; i < 6; i++ {
		s.OnTrialAdd(nil, &hone.Trial{ID: strconv.Itoa(i)})
		s2.OnTrialAdd(nil, &hone.Trial{ID: strconv.Itoa(i)})
	}
	if b := s.Brackets()[0]; len(b) != 2 || b[1].Skipped {
		t.Fatalf("max_t=5 η=4: %+v", b)
	}
	for _, band := range s2.Brackets() {
		for k, b := range band {
			if k == 1 && !b.Skipped {
				t.Fatalf("max_t=3 η=4: bracket 1 (r0 = 0) not skipped: %+v", band)
			}
		}
	}
}

// TestFinishedBracketTakesNoNewTrials: a bracket whose trials have all
// ended does not look empty to new trials; they open the next bracket
// (else every later trial would run alone in one bracket).
func TestFinishedBracketTakesNoNewTrials(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxT, cfg.ReductionFactor = 9, 3 // BOHB order: s=2 (9 trials), s=1 (5), s=0 (3)
	s, _ := NewForBOHB(cfg, nil)
	for i := 0; i < 9; i++ {
		tr := &hone.Trial{ID: strconv.Itoa(i), Status: hone.StatusTerminated}
		s.OnTrialAdd(nil, tr)
		s.OnTrialRemove(nil, tr) // ends at once, as a capped searcher's trials may
	}
	s.OnTrialAdd(nil, &hone.Trial{ID: "next"})
	band := s.Brackets()[0]
	if len(band) != 2 || band[1].S != 1 || len(band[1].Live) != 1 {
		t.Fatalf("the 10th trial did not open bracket s=1: %+v", band)
	}
}

// floorAdvisor is a fidelity.Advisor with a fixed floor.
type floorAdvisor float64

func (f floorAdvisor) Floor() float64 { return float64(f) }

// TestAdvisorSkipsBrackets: new brackets whose first milestone is below
// the advisor's floor are skipped; the bracket without halving never is.
func TestAdvisorSkipsBrackets(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxT, cfg.ReductionFactor = 27, 3 // BOHB order: r0 = 1, 3, 9, 27
	for _, tc := range []struct {
		floor float64
		want  []float64 // the first milestones of the brackets opened in band 0
	}{
		{0, []float64{1, 3, 9, 27}},
		{3, []float64{3, 9, 27}},
		{9, []float64{9, 27}},
		{100, []float64{27}},
	} {
		s, err := NewForBOHB(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.SetAdvisor(floorAdvisor(tc.floor))
		for i := range 60 {
			s.OnTrialAdd(nil, &hone.Trial{ID: strconv.Itoa(i)})
		}
		var got []float64
		for _, b := range s.Brackets()[0] {
			if !b.Skipped {
				got = append(got, b.Rungs[0].R)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("floor %v: first milestones %v, want %v", tc.floor, got, tc.want)
		}
	}
}

func TestRungs(t *testing.T) {
	for _, tc := range []struct {
		maxT, eta float64
		want      []float64
	}{
		{81, 3, []float64{1, 3, 9, 27, 81}},
		{1000, 3, []float64{1, 3, 4, 9, 12, 27, 36, 37, 81, 108, 111, 243, 324, 333, 729, 972, 999, 1000}},
		{3, 4, []float64{3}},
	} {
		cfg := DefaultConfig()
		cfg.MaxT, cfg.ReductionFactor = tc.maxT, tc.eta
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if attr, got := s.Rungs(); attr != hone.FieldTrainingIteration || !slices.Equal(got, tc.want) {
			t.Errorf("max_t %v η %v: rungs %s %v, want %v", tc.maxT, tc.eta, attr, got, tc.want)
		}
	}
}

// TestCheckObjectives: HyperBand takes several objectives and constraints
// (its own metric or mode then refused as a *hone.ParamError); HyperBand
// for BOHB takes neither, with an error wrapping hone.ErrOneObjective.
func TestCheckObjectives(t *testing.T) {
	two := hone.Objectives{{Metric: "acc", Mode: hone.Max}, {Metric: "latency_ms", Mode: hone.Min}}
	below := 100.0
	cs := hone.Constraints{{Metric: "mem_mb", Below: &below}}
	for _, c := range []struct {
		bohb   bool
		metric string
		mode   hone.Mode
		objs   hone.Objectives
		param  string // "" accepted, "-" ErrOneObjective
	}{
		{false, "", "", two, ""},
		{false, "loss", "", two[:1], ""},
		{false, "acc", "", two, "metric"},
		{false, "", hone.Min, two, "mode"},
		{true, "", "", two, "-"},
		{true, "", "", two[:1], "-"},
	} {
		cfg := DefaultConfig()
		cfg.Metric, cfg.Mode = c.metric, c.mode
		s, err := newScheduler(cfg, c.bohb, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = s.CheckObjectives(c.objs, cs)
		var pe *hone.ParamError
		switch c.param {
		case "":
			if err != nil {
				t.Errorf("%+v: %v", c, err)
			}
		case "-":
			if !errors.Is(err, hone.ErrOneObjective) {
				t.Errorf("%+v: %v, want ErrOneObjective", c, err)
			}
		default:
			if !errors.As(err, &pe) || pe.Plugin != "hyperband" || pe.Param != c.param {
				t.Errorf("%+v: %v, want a *hone.ParamError for %s", c, err, c.param)
			}
		}
	}
}

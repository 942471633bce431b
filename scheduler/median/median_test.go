package median

import (
	"flag"
	"strconv"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/scenario"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of the scenario scripts in testdata/")

func factory(args map[string]string) (hone.Scheduler, error) {
	cfg := DefaultConfig()
	cfg.TimeAttr = hone.FieldTrainingIteration
	if v, ok := args["grace"]; ok {
		cfg.GracePeriod, _ = strconv.ParseFloat(v, 64)
	}
	if v, ok := args["min_samples"]; ok {
		cfg.MinSamplesRequired, _ = strconv.Atoi(v)
	}
	if v, ok := args["slice"]; ok {
		cfg.MinTimeSlice, _ = strconv.ParseFloat(v, 64)
	}
	if v, ok := args["weights"]; ok {
		for _, w := range strings.Split(v, ",") {
			x, _ := strconv.ParseFloat(w, 64)
			cfg.Weights = append(cfg.Weights, x)
		}
	}
	if args["hard_stop"] == "false" {
		cfg.HardStop = false
	}
	return New(cfg)
}

// TestScenarios pins docs/SEMANTICS.md §4's median stopping rule.
func TestScenarios(t *testing.T) {
	scenario.Run(t, "testdata/*.txt", *rewrite, map[string]scenario.SchedulerFactory{"median": factory})
}

func TestMedianAndValidate(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median of 3 = %v", m)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of 4 = %v", m)
	}
	cfg := DefaultConfig()
	cfg.MinSamplesRequired = 0
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "min_samples_required = 0: must be >= 1") {
		t.Errorf("got %v", err)
	}
}

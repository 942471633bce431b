package mobench

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/hone-tune/hone/bench/mofunctions"
)

// TestMOASHARuns: MO-ASHA on the multi-fidelity problem spends its budget,
// passes Check, stops most trials below full fidelity, and its arrivals
// give the trace's hypervolume at the full budget; the same seed gives the
// same trace.
func TestMOASHARuns(t *testing.T) {
	p := mofunctions.DTLZ2MFProblem()
	e := MOASHA()
	tr, arr, err := e.Run(context.Background(), p, 3, 12)
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(p, tr); err != nil {
		t.Fatal(err)
	}
	if tr.Spent > 12 || tr.Spent < 11 {
		t.Errorf("spent %v of 12", tr.Spent)
	}
	full := len(tr.Full(p))
	if full == 0 || full != len(arr) || 2*full > len(tr.Evals) {
		t.Errorf("%d trials, %d at full fidelity, %d arrivals: want some, as many arrivals, and most trials stopped early", len(tr.Evals), full, len(arr))
	}
	if hv, want := HypervolumeAt(p, arr, 12), tr.Hypervolume(p); hv != want {
		t.Errorf("HypervolumeAt(budget) = %v, the trace's = %v", hv, want)
	}
	for k := 1; k < len(arr); k++ {
		if arr[k].Spent < arr[k-1].Spent {
			t.Fatalf("arrivals out of order: %v then %v", arr[k-1].Spent, arr[k].Spent)
		}
	}
	again, _, err := e.Run(context.Background(), p, 3, 12)
	if err != nil {
		t.Fatal(err)
	}
	if again.Spent != tr.Spent || len(again.Evals) != len(tr.Evals) || again.Hypervolume(p) != tr.Hypervolume(p) {
		t.Errorf("seed 3 twice: spent %v and %v, %d and %d trials", tr.Spent, again.Spent, len(tr.Evals), len(again.Evals))
	}
	// A shorter run is the prefix of the longer one.
	short, _, err := e.Run(context.Background(), p, 3, 6)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := short.Hypervolume(p), HypervolumeAt(p, arr, 6); got != want {
		t.Errorf("budget 6: hypervolume %v, the longer run's at 6 %v", got, want)
	}
}

// TestMedianCurve checks the curve against HypervolumeAt at every budget
// where it changes and between, and Reach against the curve.
func TestMedianCurve(t *testing.T) {
	p := mofunctions.DTLZ2MFProblem()
	var runs [][]Arrival
	for seed := uint64(1); seed <= 3; seed++ {
		_, arr, err := MOASHA().Run(context.Background(), p, seed, 8)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, arr)
	}
	c := MedianCurve(p, runs)
	if len(c.Budget) == 0 {
		t.Fatal("no arrivals")
	}
	for i, b := range c.Budget {
		for _, at := range []float64{b, b + 1e-3} {
			var hv []float64
			for _, arr := range runs {
				hv = append(hv, HypervolumeAt(p, arr, at))
			}
			if got, want := c.At(at), median(hv); got != want || at == b && c.Median[i] != want {
				t.Fatalf("at %v: curve %v, median of the seeds %v", at, got, want)
			}
		}
		if i > 0 && c.Median[i] < c.Median[i-1] {
			t.Fatalf("the median falls at %v", b)
		}
	}
	if c.At(0) != 0 {
		t.Errorf("At(0) = %v, want 0", c.At(0))
	}
	last := c.Median[len(c.Median)-1]
	if r := c.Reach(last); !(r <= c.Budget[len(c.Budget)-1]) || c.At(r) < last {
		t.Errorf("Reach(%v) = %v", last, r)
	}
	if r := c.Reach(last + 1); !math.IsNaN(r) {
		t.Errorf("Reach beyond the last = %v, want NaN", r)
	}
}

// TestExperimentsPassCheck: every experiment method's trace on the
// multi-fidelity problem passes Check, spends its budget, and reaches
// full fidelity with fewer trials than it starts.
func TestExperimentsPassCheck(t *testing.T) {
	p := mofunctions.DTLZ2MFProblem()
	for _, e := range AllExperiments() {
		tr, arr, err := e.Run(context.Background(), p, 1, 10)
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		if err := Check(p, tr); err != nil {
			t.Errorf("%s: %v", e.Name, err)
		}
		if tr.Spent < 9 || len(arr) == 0 || len(arr) >= len(tr.Evals) {
			t.Errorf("%s: spent %v of 10, %d trials, %d at full fidelity", e.Name, tr.Spent, len(tr.Evals), len(arr))
		}
	}
}

// TestHoneCPU: hone's methods, plain searchers and experiments, measure
// their searcher's and scheduler's CPU time, and the report shows it.
func TestHoneCPU(t *testing.T) {
	p := mofunctions.DTLZ2MFProblem()
	tr, _, err := TPEMOASHA().Run(context.Background(), p, 1, 6)
	if err != nil {
		t.Fatal(err)
	}
	if tr.CPU <= 0 {
		t.Errorf("tpe-mo-asha: cpu %v", tr.CPU)
	}
	tr, err = NSGA2().Run(context.Background(), p, 1, 6)
	if err != nil {
		t.Fatal(err)
	}
	if tr.CPU <= 0 {
		t.Errorf("nsga2: cpu %v", tr.CPU)
	}
	for _, c := range []struct {
		cpu  []time.Duration
		want string
	}{
		{nil, "-"},
		{[]time.Duration{0, 0}, "-"},
		{[]time.Duration{2345 * time.Microsecond}, "2.3ms"},
		{[]time.Duration{42 * time.Millisecond, 44 * time.Millisecond}, "43ms"},
		{[]time.Duration{99900 * time.Microsecond}, "100ms"},
		{[]time.Duration{110 * time.Millisecond}, "0.11s"},
		{[]time.Duration{16480 * time.Millisecond}, "16.48s"},
	} {
		if got := (&Cell{CPU: c.cpu}).cpuText(); got != c.want {
			t.Errorf("cpu %v: %q, want %q", c.cpu, got, c.want)
		}
	}
}

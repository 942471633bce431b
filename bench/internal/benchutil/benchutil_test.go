package benchutil

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"
)

func TestRunAll(t *testing.T) {
	jobs := []int{1, 2, 3, 4, 5}
	out := make([]int, len(jobs))
	last := 0
	err := RunAll(context.Background(), 2, jobs,
		func(_ context.Context, j int) (int, error) { return j * j, nil },
		func(j, r, n int) { out[j-1], last = r, n })
	if err != nil {
		t.Fatal(err)
	}
	if last != len(jobs) {
		t.Errorf("done counted %d runs, want %d", last, len(jobs))
	}
	for i, r := range out {
		if r != jobs[i]*jobs[i] {
			t.Errorf("job %d: got %d", jobs[i], r)
		}
	}
	boom := errors.New("boom")
	err = RunAll(context.Background(), 3, jobs,
		func(_ context.Context, j int) (int, error) {
			if j == 2 {
				return 0, boom
			}
			return j, nil
		},
		func(int, int, int) {})
	if !errors.Is(err, boom) {
		t.Errorf("got %v, want %v", err, boom)
	}
}

func TestNumRatio(t *testing.T) {
	for v, want := range map[float64]string{math.NaN(): "n/a", 0: "0", 1.23456: "1.235", 1e-5: "1e-05", 123456: "1.23e+05"} {
		if got := Num(v); got != want {
			t.Errorf("Num(%v) = %q, want %q", v, got, want)
		}
	}
	if got := Ratio(2.5); got != "2.5×" {
		t.Errorf("Ratio(2.5) = %q", got)
	}
	if got := Ratio(math.Inf(1)); got != "n/a" {
		t.Errorf("Ratio(+Inf) = %q", got)
	}
}

func TestLogTicks(t *testing.T) {
	var labels []string
	for _, tk := range (LogTicks{}).Ticks(1, 1000) {
		if tk.Value < 1 || tk.Value > 1000 {
			t.Errorf("tick %v outside [1, 1000]", tk.Value)
		}
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if want := []string{"1", "10", "100", "1000"}; len(labels) != len(want) {
		t.Errorf("labels %q, want %q", labels, want)
	}
}

func TestRepeat(t *testing.T) {
	var b bytes.Buffer
	if err := Repeat(&b, 7, []byte("abc")); err != nil {
		t.Fatal(err)
	}
	if b.String() != "abcabca" {
		t.Errorf("got %q", b.String())
	}
}

func TestQuantile(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		vals []float64
		p    float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, 0.5, 2.5},
		{[]float64{1, 2, 3, 4}, 0.25, 1.75},
		{[]float64{5}, 0.75, 5},
		{[]float64{1, inf}, 0.5, inf},
		{[]float64{1, 2, inf}, 0.5, 2},
		{[]float64{inf, inf}, 0.25, inf},
	} {
		if got := Quantile(c.vals, c.p); got != c.want {
			t.Errorf("Quantile(%v, %v) = %v, want %v", c.vals, c.p, got, c.want)
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("quantile of nothing is not NaN")
	}
}

package pbtbench

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/sim"
)

func TestQuartiles(t *testing.T) {
	if q := quartiles([]float64{math.NaN(), 3, 1, 2}); q != (Quartiles{1.5, 2, 2.5}) {
		t.Errorf("quartiles = %+v", q)
	}
}

func TestTraceValueAt(t *testing.T) {
	tr := &Trace{Points: []Point{{2, 10}, {5, 7}}}
	for _, c := range []struct {
		b    int
		want float64
	}{{2, 10}, {4, 10}, {5, 7}, {99, 7}} {
		if got := tr.ValueAt(c.b); got != c.want {
			t.Errorf("ValueAt(%d) = %v, want %v", c.b, got, c.want)
		}
	}
	if !math.IsNaN(tr.ValueAt(1)) || tr.Final() != 7 {
		t.Errorf("ValueAt(1) = %v, Final = %v", tr.ValueAt(1), tr.Final())
	}
}

// steps runs n steps of a trainable and returns the last metrics.
func steps(t *testing.T, tr sim.Trainable, n int) map[string]any {
	t.Helper()
	var last sim.Step
	for range n {
		s, err := tr.Step()
		if err != nil {
			t.Fatal(err)
		}
		last = s
	}
	return last.Metrics
}

func number(t *testing.T, m map[string]any, k string) float64 {
	t.Helper()
	v, ok := hone.Number(m[k])
	if !ok {
		t.Fatalf("metric %s = %v", k, m[k])
	}
	return v
}

// TestToy: one step is θᵢ ← θᵢ − 2ηhᵢθᵢ, and h = (1, 1) reaches ToyBest.
func TestToy(t *testing.T) {
	p := Toy(10, 4)
	tr, err := p.Model(1)(hone.Config{"h0": 0.5, "h1": 0.25}, "a")
	if err != nil {
		t.Fatal(err)
	}
	m := steps(t, tr, 1)
	t0, t1 := 0.9*(1-2*ToyEta*0.5), 0.9*(1-2*ToyEta*0.25)
	if got, want := number(t, m, "Q"), ToyQ(t0, t1); math.Abs(got-want) > 1e-15 {
		t.Errorf("Q after one step = %v, want %v", got, want)
	}
	best, _ := p.Model(1)(hone.Config{"h0": 1.0, "h1": 1.0}, "b")
	m = steps(t, best, 10)
	if got := number(t, m, "Q"); math.Abs(got-ToyBest(10)) > 1e-12 {
		t.Errorf("Q with h = (1, 1) after 10 steps = %v, want %v", got, ToyBest(10))
	}
	if _, err := p.Model(1)(hone.Config{"h0": 1.5, "h1": 0.0}, "c"); err == nil {
		t.Error("h0 = 1.5 was accepted")
	}
}

// TestNQM: a member's true loss follows ExpectedLoss, its reported loss is
// within the observation noise, and the documented optimum holds: the
// best schedule beats the best fixed rate.
func TestNQM(t *testing.T) {
	m := DefaultNQM()
	p := LRSchedule(m, 40, 10)
	tr, err := p.Model(7)(hone.Config{"lr": 0.3}, "a")
	if err != nil {
		t.Fatal(err)
	}
	got := steps(t, tr, 40)
	sched := make([]float64, 40)
	for i := range sched {
		sched[i] = 0.3
	}
	want := m.ExpectedLoss(sched)
	if v := number(t, got, MetricTrue); math.Abs(v-want) > 1e-12*want {
		t.Errorf("true loss %v, want %v", v, want)
	}
	if v := number(t, got, "loss"); math.Abs(math.Log(v/want)) > 6*m.ObsNoise {
		t.Errorf("reported loss %v too far from %v", v, want)
	}
	lr, constLoss := m.BestConstant(40)
	pieces, schedLoss := m.BestSchedule(40, 10)
	if !(lr > m.LRLo && lr < m.LRHi) || len(pieces) != 4 {
		t.Errorf("best constant lr %v, schedule %v", lr, pieces)
	}
	if !(schedLoss < 0.8*constLoss) {
		t.Errorf("best schedule %v does not beat the best fixed lr %v", schedLoss, constLoss)
	}
	if !(pieces[0] > pieces[len(pieces)-1]) {
		t.Errorf("best schedule %v does not decay", pieces)
	}
	if _, err := p.Model(7)(hone.Config{"lr": 2.0}, "b"); err == nil {
		t.Error("lr = 2 was accepted")
	}
}

// TestSaveLoad: a member restored from a saved state continues exactly as
// the original.
func TestSaveLoad(t *testing.T) {
	for _, c := range []struct {
		p   *Problem
		cfg hone.Config
	}{
		{Toy(20, 4), hone.Config{"h0": 0.3, "h1": 0.8}},
		{LRSchedule(DefaultNQM(), 20, 5), hone.Config{"lr": 0.05}},
	} {
		a, _ := c.p.Model(3)(c.cfg, "x")
		steps(t, a, 5)
		state, err := a.Save()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := c.p.Model(3)(c.cfg, "x")
		if err := b.Load(state); err != nil {
			t.Fatal(err)
		}
		ma, mb := steps(t, a, 3), steps(t, b, 3)
		if !reflect.DeepEqual(ma, mb) {
			t.Errorf("%s: restored member reports %v, original %v", c.p.Name, mb, ma)
		}
		if err := b.Load(state[:len(state)-1]); err == nil {
			t.Errorf("%s: a truncated state was loaded", c.p.Name)
		}
	}
}

// TestRunSmoke runs the smoke configuration (2 seeds, population 4, a few
// steps) and checks real properties of the results.
func TestRunSmoke(t *testing.T) {
	toy := Toy(12, 4)
	lr := LRSchedule(DefaultNQM(), 20, 5)
	results, err := Run(context.Background(), Config{Problems: []*Problem{toy, lr}, Pops: []int{4}, Seeds: 2, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 {
		t.Fatalf("%d results", len(results))
	}
	initialQ := ToyQ(ToyTheta0, ToyTheta0)
	exploits := 0
	for _, r := range results {
		if !reflect.DeepEqual(r.Methods, Methods()) {
			t.Errorf("%s: methods %v, want %v", r.Title(), r.Methods, Methods())
		}
		for _, m := range r.Methods {
			for _, tr := range r.Traces[m] {
				if tr == nil {
					t.Fatalf("%s %s: a seed did not run", r.Title(), m)
				}
				if f := tr.Final(); math.IsNaN(f) || math.IsInf(f, 0) || math.IsNaN(tr.ValueAt(r.Budget())) {
					t.Errorf("%s %s seed %d: final %v", r.Title(), m, tr.Seed, f)
				}
				if tr.Steps < r.Budget() {
					t.Errorf("%s %s seed %d: %d steps, under the budget %d", r.Title(), m, tr.Seed, tr.Steps, r.Budget())
				}
				if m != MethodRandom {
					exploits += tr.Exploits
				}
				if r.Problem == toy && !(tr.Final() > initialQ) {
					t.Errorf("toy %s seed %d: final Q %v does not beat the initial %v", m, tr.Seed, tr.Final(), initialQ)
				}
				if r.Problem == toy && tr.Final() > ToyBest(toy.Steps)+1e-12 {
					t.Errorf("toy %s seed %d: final Q %v beats the best possible %v", m, tr.Seed, tr.Final(), ToyBest(toy.Steps))
				}
			}
		}
		// Same seed, same initial population: before any exploit the
		// methods see the same results.
		if a, b := r.Traces[MethodRandom][0].ValueAt(1), r.Traces[MethodPBT][0].ValueAt(1); a != b {
			t.Errorf("%s: first result %v (random) vs %v (pbt)", r.Title(), a, b)
		}
	}
	if exploits == 0 {
		t.Error("PBT never exploited")
	}
	var buf bytes.Buffer
	WriteReport(&buf, results)
	for _, want := range []string{"### toy, population 4", "### lr-schedule, population 4", "| pbt |", "| pb2-synch |", "PB2 vs PBT", "| toy | 4 | pb2 vs pbt |", "Reference: "} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, buf.String())
		}
	}
	dir := t.TempDir()
	for _, r := range results {
		path, err := r.Plot(dir)
		if err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(path); err != nil || st.Size() == 0 {
			t.Errorf("plot %s: %v", path, err)
		}
	}
}

// TestDeterministic: the same seed gives the same trace.
func TestDeterministic(t *testing.T) {
	p := LRSchedule(DefaultNQM(), 20, 5)
	for _, m := range []string{MethodPBT, MethodPB2} {
		a, err := RunOne(context.Background(), m, p, 4, 5, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		b, err := RunOne(context.Background(), m, p, 4, 5, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Points, b.Points) || a.Steps != b.Steps || a.Exploits != b.Exploits {
			t.Errorf("%s: two runs with seed 5 differ:\n%+v\n%+v", m, a, b)
		}
	}
}

func TestSignTest(t *testing.T) {
	for _, c := range []struct {
		k, n int
		want float64
	}{{0, 0, 1}, {5, 10, 1}, {12, 16, 2 * 2517.0 / 65536}, {10, 10, 2.0 / 1024}, {0, 10, 2.0 / 1024}} {
		if got := signTest(c.k, c.n); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("signTest(%d, %d) = %v, want %v", c.k, c.n, got, c.want)
		}
	}
}

func TestBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{Problems: []*Problem{Toy(8, 4)}, Methods: []string{"nope"}},
		{Problems: []*Problem{Toy(8, 4)}, Pops: []int{1}},
	} {
		if _, err := Run(context.Background(), cfg); err == nil {
			t.Errorf("Run(%+v) succeeded", cfg)
		}
	}
}

// TestExploitLatency measures 1 MB twice and checks that every figure is
// positive and that nothing is left behind.
func TestExploitLatency(t *testing.T) {
	dir := t.TempDir()
	figs, err := ExploitLatency(context.Background(), ExploitConfig{Sizes: []int64{1 << 20}, Reps: func(int64) int { return 2 }, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 1 || figs[0].Size != 1<<20 || figs[0].Reps != 2 {
		t.Fatalf("figures %+v", figs)
	}
	f := figs[0]
	for _, d := range []time.Duration{f.Commit, f.Restore, f.Link, f.Copy, f.CommitPlusRestore, f.CommitPlusCopy} {
		if d <= 0 {
			t.Errorf("a figure is not positive: %+v", f)
		}
	}
	var buf bytes.Buffer
	if err := WriteExploitReport(&buf, "header", figs); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(buf.String()), "\n"); len(lines) != 5 || !strings.Contains(lines[1], "1 MB") || !strings.Contains(lines[1], ": ratio ") {
		t.Errorf("report:\n%s", buf.String())
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

func TestVerifyExploitInPlace(t *testing.T) {
	dir := t.TempDir()
	chk, err := VerifyExploitInPlace(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if chk.Exploits == 0 || chk.CrossRestores < chk.Exploits || filepath.Base(chk.Example[1]) == "" {
		t.Errorf("check %+v", chk)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{1 << 20: "1 MB", 10 << 20: "10 MB", 1 << 30: "1 GB", 1536: "1536 B", 2048: "2 KB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
)

// TestCompare runs the whole comparison at the default seed and checks
// the paper's claims on what the workers reported, read back with package
// results: PBT reaches Q ≥ 1.19, grid search does not, and explore only
// and exploit only stay below PBT. It also checks that the reported
// numbers are consistent with the toy's dynamics, that PBT's lineage
// records exploits with donors, and that the plots are real PNG images.
func TestCompare(t *testing.T) {
	dir := t.TempDir()
	p := DefaultParams()
	var out bytes.Buffer
	if err := run(context.Background(), &out, dir, dir, p, io.Discard); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out.String())

	byName := map[string]*Run{}
	for _, s := range Strategies() {
		r, err := ReadRun(filepath.Join(dir, s.Name), s, p)
		if err != nil {
			t.Fatal(err)
		}
		byName[s.Name] = r
		checkRun(t, r)
	}
	sum := func(name string) Summary { return byName[name].Summary() }
	pbtSum := sum(StrategyPBT)
	if pbtSum.Best < Threshold || pbtSum.Reached == 0 {
		t.Errorf("PBT: best Q %.4f, reached at step %d; want Q >= %g", pbtSum.Best, pbtSum.Reached, Threshold)
	}
	if g := sum(StrategyGrid); g.Best >= Threshold {
		t.Errorf("grid search: best Q %.4f; want < %g", g.Best, Threshold)
	}
	for _, name := range []string{StrategyExploreOnly, StrategyExploitOnly} {
		if s := sum(name); s.Best >= pbtSum.Best || s.Reached != 0 {
			t.Errorf("%s: best Q %.4f (reached at step %d); want below PBT's %.4f and never >= %g", name, s.Best, s.Reached, pbtSum.Best, Threshold)
		}
	}

	// Lineage: PBT's workers cloned each other, and the policy logs name
	// the donors.
	pr := byName[StrategyPBT]
	tags := map[string]bool{}
	for _, w := range pr.Workers {
		tags[originalTag(w.Trial.Tag)] = true
	}
	exploits := 0
	for _, w := range pr.Workers {
		lin, err := w.Trial.Lineage()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range lin {
			if !tags[e.Donor] || !tags[e.Target] || e.Donor == e.Target {
				t.Errorf("worker %s: exploit %+v: want a target and a donor that are two of %v", w.Name, e, tags)
			}
			if e.DonorIteration%p.Interval != 0 {
				t.Errorf("worker %s: exploit at donor step %d, not a multiple of %d", w.Name, e.DonorIteration, p.Interval)
			}
			if e.Target == originalTag(w.Trial.Tag) {
				exploits++
			}
		}
		sched, err := w.Trial.Schedule()
		if err != nil {
			t.Fatal(err)
		}
		if len(sched) != len(lin)+1 {
			t.Errorf("worker %s: %d schedule steps for %d exploits", w.Name, len(sched), len(lin))
		}
	}
	if exploits == 0 {
		t.Error("PBT: no worker's lineage shows an exploit of its own")
	}
	// Exploit only clones too, but never changes h: every h it ever
	// trained with is one of the two it started with.
	for _, w := range byName[StrategyExploitOnly].Workers {
		for _, pt := range w.Points {
			if !(pt.H0 == 1 && pt.H1 == 0) && !(pt.H0 == 0 && pt.H1 == 1) {
				t.Fatalf("exploit only: worker %s trained with h = (%g, %g) at step %d", w.Name, pt.H0, pt.H1, pt.Step)
			}
		}
	}

	for _, name := range []string{ThetaPlot, QPlot, LineagePlot} {
		checkPNG(t, filepath.Join(dir, name))
	}
}

// checkRun checks what r's workers reported: a result per step up to
// Steps, Q consistent with θ, and θ following from the previous θ by one
// gradient step with the reported h — except where a worker cloned
// another, which only PBT and exploit only do, at exploit steps.
func checkRun(t *testing.T, r *Run) {
	t.Helper()
	p := r.Params
	if len(r.Workers) != 2 {
		t.Fatalf("%s: %d workers, want 2", r.Strategy.Name, len(r.Workers))
	}
	clones := r.Strategy.Name == StrategyPBT || r.Strategy.Name == StrategyExploitOnly
	jumps := 0
	for _, w := range r.Workers {
		if w.Trial.Status != hone.StatusTerminated {
			t.Errorf("%s: worker %s ended %s", r.Strategy.Name, w.Name, w.Trial.Status)
		}
		if last := w.Points[len(w.Points)-1].Step; last != p.Steps {
			t.Errorf("%s: worker %s stopped at step %d, want %d", r.Strategy.Name, w.Name, last, p.Steps)
		}
		prev := [2]float64{thetaStart, thetaStart}
		for k, pt := range w.Points {
			theta := [2]float64{pt.Theta0, pt.Theta1}
			if math.Abs(Q(theta)-pt.Q) > 1e-12 {
				t.Fatalf("%s: worker %s step %d: Q = %v, but θ = %v gives %v", r.Strategy.Name, w.Name, pt.Step, pt.Q, theta, Q(theta))
			}
			want := [2]float64{prev[0] * (1 - 2*p.Eta*pt.H0), prev[1] * (1 - 2*p.Eta*pt.H1)}
			if k > 0 && pt.Step != w.Points[k-1].Step+1 {
				t.Fatalf("%s: worker %s: step %d follows step %d", r.Strategy.Name, w.Name, pt.Step, w.Points[k-1].Step)
			}
			if math.Abs(want[0]-theta[0]) > 1e-12 || math.Abs(want[1]-theta[1]) > 1e-12 {
				if !clones || (pt.Step-1)%p.Interval != 0 {
					t.Fatalf("%s: worker %s step %d: θ = %v does not follow from %v with h = (%g, %g)",
						r.Strategy.Name, w.Name, pt.Step, theta, prev, pt.H0, pt.H1)
				}
				jumps++
			}
			prev = theta
		}
	}
	if clones && jumps == 0 {
		t.Errorf("%s: no worker ever took another's θ", r.Strategy.Name)
	}
}

// checkPNG checks that path is a PNG image of a plausible size.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b := img.Bounds()
	if fi.Size() < 10_000 || b.Dx() < 400 || b.Dy() < 150 {
		t.Errorf("%s: %d bytes, %dx%d pixels: want a real plot", path, fi.Size(), b.Dx(), b.Dy())
	}
}

// TestDeterministic runs PBT — the strategy whose two workers interact —
// twice with one seed and checks that the workers report the same
// numbers, and that another seed explores differently.
func TestDeterministic(t *testing.T) {
	p := DefaultParams()
	p.Steps = 16
	var s Strategy
	for _, x := range Strategies() {
		if x.Name == StrategyPBT {
			s = x
		}
	}
	trace := func(seed uint64) string {
		q := p
		q.Seed = seed
		dir := filepath.Join(t.TempDir(), "pbt")
		if err := runStrategy(context.Background(), dir, s, q, io.Discard); err != nil {
			t.Fatal(err)
		}
		r, err := ReadRun(dir, s, q)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, w := range r.Workers {
			for _, pt := range w.Points {
				fmt.Fprintf(&b, "%s %+v\n", w.Name, pt)
			}
		}
		return b.String()
	}
	a, b := trace(p.Seed), trace(p.Seed)
	if a != b {
		t.Errorf("same seed, different results:\n%s\n%s", a, b)
	}
	if c := trace(p.Seed + 1); c == a {
		t.Error("another seed gave the same results")
	}
}

// TestToy checks one gradient step and a checkpoint round trip.
func TestToy(t *testing.T) {
	tr := &Toy{Eta: 0.1}
	if err := tr.Setup(hone.Config{ParamH: []any{1.0, 0.5}}); err != nil {
		t.Fatal(err)
	}
	m, err := tr.Step(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// θ0 = 0.9·(1 − 0.2), θ1 = 0.9·(1 − 0.1).
	want := map[string]float64{MetricTheta0: 0.72, MetricTheta1: 0.81, MetricQ: 1.2 - 0.72*0.72 - 0.81*0.81,
		MetricQHat: 1.2 - 0.72*0.72 - 0.5*0.81*0.81, MetricH0: 1, MetricH1: 0.5}
	for k, v := range want {
		if got := m[k].(float64); math.Abs(got-v) > 1e-12 {
			t.Errorf("%s = %v, want %v", k, got, v)
		}
	}
	dir := t.TempDir()
	if err := tr.Save(dir); err != nil {
		t.Fatal(err)
	}
	other := &Toy{Eta: 0.1}
	if err := other.Setup(hone.Config{ParamH: []any{0.0, 0.0}}); err != nil {
		t.Fatal(err)
	}
	if err := other.Load(dir); err != nil {
		t.Fatal(err)
	}
	if other.theta != tr.theta {
		t.Errorf("loaded θ = %v, saved %v", other.theta, tr.theta)
	}
	for _, bad := range []hone.Config{{}, {ParamH: 1.0}, {ParamH: []any{1.0}}, {ParamH: []any{1.0, "x"}}} {
		if err := (&Toy{Eta: 0.1}).Setup(bad); err == nil {
			t.Errorf("Setup(%v): no error", bad)
		}
	}
}

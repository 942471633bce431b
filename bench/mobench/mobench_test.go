package mobench

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/hone-tune/hone/bench/mofunctions"
	"github.com/hone-tune/hone/pareto"
)

// checkPoints returns the grid the Python port is checked on for p: the
// two corners and the centre of the box, a Pareto-optimal configuration
// (x₁ = 0.3, the distance variables at their optimum), and 20 uniform
// configurations.
func checkPoints(p *mofunctions.Problem) [][]float64 {
	n := len(p.Dims)
	lo, hi, mid, opt := make([]float64, n), slices.Repeat([]float64{1}, n), slices.Repeat([]float64{0.5}, n), make([]float64, n)
	opt[0] = 0.3
	if p.Family == "dtlz2" {
		opt = slices.Repeat([]float64{0.5}, n)
		opt[0], opt[1] = 0.3, 0.8
	}
	pts := [][]float64{lo, hi, mid, opt}
	r := rand.New(rand.NewPCG(11, 12))
	for range 20 {
		pts = append(pts, p.RandomConfig(r))
	}
	return pts
}

// TestOptunaPortMatchesGo runs the driver's check mode (only Python
// needed, not Optuna) over every problem's grid and compares the
// objective vectors at every step, the step costs, the reference points,
// the fronts' hypervolumes and the problems' shapes with the Go problems,
// to 1e-12 relative.
func TestOptunaPortMatchesGo(t *testing.T) {
	if _, err := os.Stat(DefaultPython); err != nil {
		t.Skipf("PYTHON PORT NOT CHECKED: no %s (%v)", DefaultPython, err)
	}
	type point struct {
		Problem string    `json:"problem"`
		X       []float64 `json:"x"`
	}
	var pts []point
	for _, p := range mofunctions.Problems() {
		for _, x := range checkPoints(p) {
			if err := p.Check(x); err != nil {
				t.Fatal(err)
			}
			pts = append(pts, point{p.Name, x})
		}
	}
	in, _ := json.Marshal(pts)
	out, err := python(context.Background(), DefaultPython, in, "check")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Problems map[string]struct {
			Ref        []float64 `json:"ref"`
			FrontHV    float64   `json:"front_hv"`
			Objectives int       `json:"objectives"`
			Steps      int       `json:"steps"`
			Dims       []string  `json:"dims"`
		} `json:"problems"`
		Points []struct {
			Values [][]float64 `json:"values"`
			Costs  []float64   `json:"costs"`
		} `json:"points"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	close := func(a, b float64) bool { return a == b || math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)) }
	if len(res.Problems) != len(mofunctions.Problems()) {
		t.Errorf("the port has %d problems, Go %d", len(res.Problems), len(mofunctions.Problems()))
	}
	for _, p := range mofunctions.Problems() {
		q, ok := res.Problems[p.Name]
		if !ok {
			t.Errorf("%s is not ported", p.Name)
			continue
		}
		var dims []string
		for _, d := range p.Dims {
			dims = append(dims, d.Name)
		}
		if !slices.Equal(q.Ref, p.Ref) || !close(q.FrontHV, p.FrontHV) || q.Objectives != p.Objectives || q.Steps != p.Steps || !slices.Equal(q.Dims, dims) {
			t.Errorf("%s: the port's %+v differs from Go's ref %v, front HV %v, %d objectives, %d steps, dims %v",
				p.Name, q, p.Ref, p.FrontHV, p.Objectives, p.Steps, dims)
		}
	}
	if len(res.Points) != len(pts) {
		t.Fatalf("%d answers to %d points", len(res.Points), len(pts))
	}
	bad := 0
	for i, pt := range pts {
		p := mofunctions.ByName(pt.Problem)
		got := res.Points[i]
		if len(got.Values) != p.Steps || len(got.Costs) != p.Steps {
			t.Fatalf("%s: %d values and %d costs for %d steps", p.Name, len(got.Values), len(got.Costs), p.Steps)
		}
		for u := 1; u <= p.Steps; u++ {
			want := p.At(pt.X, u)
			ok := len(got.Values[u-1]) == len(want)
			for j := 0; ok && j < len(want); j++ {
				ok = close(got.Values[u-1][j], want[j])
			}
			if !ok {
				bad++
				t.Errorf("%s at %v, step %d: Python %v, Go %v", p.Name, pt.X, u, got.Values[u-1], want)
			}
			if !close(got.Costs[u-1], p.Cost(u)) {
				bad++
				t.Errorf("%s step %d: cost %v in Python, %v in Go", p.Name, u, got.Costs[u-1], p.Cost(u))
			}
		}
		if bad > 10 {
			t.Fatal("too many differences")
		}
	}
}

// TestOptunaMethods runs each Optuna sampler for 20 trials on ZDT1 and
// DTLZ2 twice: the traces pass Check and repeat exactly.
func TestOptunaMethods(t *testing.T) {
	v, err := OptunaVersion(context.Background(), "")
	if err != nil {
		t.Skipf("OPTUNA BASELINES NOT CHECKED: %v", err)
	}
	t.Logf("Optuna %s", v)
	for _, m := range Optuna("") {
		for _, name := range []string{"zdt1", "dtlz2"} {
			p := mofunctions.ByName(name)
			a, err := m.Run(context.Background(), p, 3, 20)
			if err != nil {
				t.Fatal(err)
			}
			if err := Check(p, a); err != nil {
				t.Errorf("%s on %s: %v", m.Name, name, err)
			}
			if len(a.Evals) != 20 || a.Spent != 20 || a.CPU <= 0 {
				t.Errorf("%s on %s: %d evaluations, spent %v, cpu %v", m.Name, name, len(a.Evals), a.Spent, a.CPU)
			}
			b, err := m.Run(context.Background(), p, 3, 20)
			if err != nil {
				t.Fatal(err)
			}
			for i := range a.Evals {
				if !slices.Equal(a.Evals[i].X, b.Evals[i].X) || !slices.Equal(a.Evals[i].Values, b.Evals[i].Values) {
					t.Fatalf("%s on %s: trial %d differs between two runs of seed 3", m.Name, name, i)
				}
			}
		}
	}
}

func TestRandomMethod(t *testing.T) {
	m := Random()
	for _, p := range mofunctions.Problems() {
		a, err := m.Run(context.Background(), p, 1, 30.5)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(p, a); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if len(a.Evals) != 30 || a.Spent != 30 {
			t.Errorf("%s: %d evaluations, spent %v; want 30", p.Name, len(a.Evals), a.Spent)
		}
		b, _ := m.Run(context.Background(), p, 1, 30)
		c, _ := m.Run(context.Background(), p, 2, 30)
		if !slices.Equal(a.Evals[7].X, b.Evals[7].X) || slices.Equal(a.Evals[7].X, c.Evals[7].X) {
			t.Errorf("%s: seeds do not decide the configurations", p.Name)
		}
	}
}

func TestCheckRejects(t *testing.T) {
	p := mofunctions.ByName("dtlz2-mf")
	x := p.RandomConfig(rand.New(rand.NewPCG(1, 2)))
	good := &Trace{Budget: 1, Spent: 0.3 + 0.4, Evals: []Eval{{X: x, Step: 3, Values: p.At(x, 3)}, {X: x, Step: 4, Values: p.At(x, 4)}}}
	if err := Check(p, good); err != nil {
		t.Fatalf("a good trace: %v", err)
	}
	for name, tr := range map[string]*Trace{
		"overspent":   {Budget: 0.5, Spent: 0.7, Evals: good.Evals},
		"wrong spent": {Budget: 1, Spent: 0.5, Evals: good.Evals},
		"wrong value": {Budget: 1, Spent: 0.3, Evals: []Eval{{X: x, Step: 3, Values: p.At(x, 4)}}},
		"bad step":    {Budget: 2, Spent: 0, Evals: []Eval{{X: x, Step: 11, Values: p.At(x, 11)}}},
		"outside":     {Budget: 2, Spent: 1, Evals: []Eval{{X: append(slices.Clone(x[1:]), 2), Step: 10, Values: p.At(x, 10)}}},
	} {
		if err := Check(p, tr); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if slices.Equal(p.At(x, 3), p.At(x, 4)) {
		t.Fatal("steps 3 and 4 agree: the wrong-value case checks nothing")
	}
	// Only full-fidelity evaluations count towards the hypervolume.
	if n := len(good.Full(p)); n != 0 {
		t.Errorf("%d full-fidelity evaluations in a trace of steps 3 and 4", n)
	}
}

func TestRunAndReport(t *testing.T) {
	var log bytes.Buffer
	ps := []*mofunctions.Problem{mofunctions.ByName("zdt1"), mofunctions.ByName("dtlz2")}
	rep, err := Run(context.Background(), Config{Problems: ps, Methods: []Method{Random()}, Seeds: 3, Budget: 100, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Cells) != 2 || len(rep.Cells[1].HV) != 3 {
		t.Fatalf("cells %+v", rep.Cells)
	}
	for _, c := range rep.Cells {
		p := mofunctions.ByName(c.Problem)
		for _, hv := range c.HV {
			if hv < 0 || hv > p.FrontHV {
				t.Errorf("%s: hypervolume %v outside [0, %v]", c.Problem, hv, p.FrontHV)
			}
		}
	}
	if rep.Cells[1].Median() <= 0 {
		t.Errorf("random search on DTLZ2 scores %v after 100 trials", rep.Cells[1].Median())
	}
	var out bytes.Buffer
	if err := rep.Write(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "dtlz2") || !strings.Contains(out.String(), "random") || strings.Count(log.String(), "\n") != 6 {
		t.Errorf("report:\n%s\nlog:\n%s", out.String(), log.String())
	}
	if _, err := Select(append([]Method{Random()}, Optuna("")...), "optuna-motpe,random"); err != nil {
		t.Error(err)
	}
	if _, err := Select([]Method{Random()}, "nope"); err == nil {
		t.Error("Select accepts an unknown method")
	}
	if got := median([]float64{3, 1, 2, 10}); got != 2.5 {
		t.Errorf("median = %v", got)
	}
}

// TestHypervolumeMatchesOptuna compares package pareto's hypervolume with
// Optuna's (its WFG implementation) on 90 random sets of 1 to 60 points in
// two, three and four dimensions, some of them beyond the reference
// point, and on an Optuna run's evaluations, to 1e-9 relative.
func TestHypervolumeMatchesOptuna(t *testing.T) {
	if _, err := OptunaVersion(context.Background(), ""); err != nil {
		t.Skipf("HYPERVOLUME NOT CHECKED AGAINST OPTUNA: %v", err)
	}
	type set struct {
		Points [][]float64 `json:"points"`
		Ref    []float64   `json:"ref"`
	}
	r := rand.New(rand.NewPCG(13, 14))
	var sets []set
	for i := range 90 {
		d := 2 + i%3
		n := 1 + r.IntN(60)
		s := set{Ref: slices.Repeat([]float64{1}, d)}
		for range n {
			p := make([]float64, d)
			for j := range p {
				p[j] = 1.1 * r.Float64()
			}
			s.Points = append(s.Points, p)
		}
		sets = append(sets, s)
	}
	p := mofunctions.ByName("dtlz2")
	tr, err := Optuna("")[1].Run(context.Background(), p, 1, 60)
	if err != nil {
		t.Fatal(err)
	}
	sets = append(sets, set{Points: tr.Full(p), Ref: p.Ref})
	in, _ := json.Marshal(sets)
	out, err := python(context.Background(), DefaultPython, in, "hv")
	if err != nil {
		t.Fatal(err)
	}
	var want []float64
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(sets) {
		t.Fatalf("%d answers to %d sets", len(want), len(sets))
	}
	for i, s := range sets {
		got := pareto.Hypervolume(s.Points, s.Ref)
		if math.Abs(got-want[i]) > 1e-9*math.Max(1, want[i]) {
			t.Errorf("set %d (%d points, %d-D): pareto %v, Optuna %v", i, len(s.Points), len(s.Ref), got, want[i])
		}
	}
	if last := want[len(want)-1]; last <= 0 {
		t.Errorf("the Optuna run's hypervolume is %v", last)
	}
}

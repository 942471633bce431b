package searchbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hone-tune/hone/bench/functions"
)

// checkPoints returns the grid the Python port is checked on for p: the
// centre and the two corners of the box, and 20 uniform configurations
// (keys 1..20), each with its run key.
func checkPoints(p *functions.Problem) [][]float64 {
	lo := make([]float64, len(p.Dims))
	hi := make([]float64, len(p.Dims))
	mid := make([]float64, len(p.Dims))
	for i, d := range p.Dims {
		lo[i], hi[i] = d.Lo, d.Hi
		mid[i] = (d.Lo + d.Hi) / 2
		if d.Int || d.Categorical() {
			mid[i] = math.Floor(mid[i])
		}
	}
	pts := [][]float64{lo, hi, mid}
	for k := uint64(1); k <= 20; k++ {
		pts = append(pts, p.RandomConfig(k))
	}
	return pts
}

// TestOptunaPortMatchesGo runs the Optuna driver's check mode (no Optuna
// needed, only Python) over every problem's grid and compares the value
// at every step, the true value, every step cost and the optimum with the
// Go functions, to 1e-9 relative.
func TestOptunaPortMatchesGo(t *testing.T) {
	if _, err := os.Stat(Python); err != nil {
		t.Skipf("PYTHON PORT NOT CHECKED: no %s (%v)", Python, err)
	}
	dir := t.TempDir()
	if err := writeOptunaScripts(dir); err != nil {
		t.Fatal(err)
	}
	type point struct {
		Problem string    `json:"problem"`
		X       []float64 `json:"x"`
		Key     uint64    `json:"key"`
	}
	var pts []point
	for _, p := range functions.Problems() {
		for i, x := range checkPoints(p) {
			if err := p.Check(x); err != nil {
				t.Fatal(err)
			}
			pts = append(pts, point{p.Name, x, functions.Key(uint64(i), fmt.Sprint("check-", i))})
		}
	}
	in, _ := json.Marshal(pts)
	cmd := exec.Command(Python, "run.py", "check")
	cmd.Dir, cmd.Env, cmd.Stdin = dir, pythonEnv(), bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run.py check: %v\n%s", err, stderr.String())
	}
	var res struct {
		Problems []string `json:"problems"`
		Points   []struct {
			Values  []float64 `json:"values"`
			True    float64   `json:"true"`
			Costs   []float64 `json:"costs"`
			Optimum float64   `json:"optimum"`
		} `json:"points"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range functions.Problems() {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, res.Problems) {
		t.Errorf("the port's problems %v, Go's %v", res.Problems, names)
	}
	if len(res.Points) != len(pts) {
		t.Fatalf("%d answers to %d points", len(res.Points), len(pts))
	}
	close := func(a, b float64) bool { return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
	bad := 0
	for i, pt := range pts {
		p := functions.ByName(pt.Problem)
		got := res.Points[i]
		run := p.NewRun(pt.X, pt.Key)
		for u := 1; u <= p.Steps; u++ {
			v := run.Step()
			if u > len(got.Values) || !close(got.Values[u-1], v) {
				bad++
				t.Errorf("%s at %v, step %d: Python %v, Go %v", p.Name, pt.X, u, got.Values, v)
				break
			}
			if !close(got.Costs[u-1], p.StepCost(u)) {
				bad++
				t.Errorf("%s step %d: cost %v in Python, %v in Go", p.Name, u, got.Costs[u-1], p.StepCost(u))
			}
		}
		if !close(got.True, p.True(pt.X)) || !close(got.Optimum, p.Optimum) {
			bad++
			t.Errorf("%s at %v: true %v / optimum %v in Python, %v / %v in Go", p.Name, pt.X, got.True, got.Optimum, p.True(pt.X), p.Optimum)
		}
		if bad > 10 {
			t.Fatal("too many differences")
		}
	}
}

// TestEnsureOptunaWithoutPython: with no interpreter there, Optuna is
// reported unavailable, with the reason, and nothing is installed.
func TestEnsureOptunaWithoutPython(t *testing.T) {
	saved := Python
	Python = filepath.Join(t.TempDir(), "no-python3")
	defer func() { Python = saved }()
	var log bytes.Buffer
	if v, err := ensureOptuna(&log); err == nil || !strings.Contains(err.Error(), Python) {
		t.Errorf("ensureOptuna = %q, %v; want an error naming %s", v, err, Python)
	}
	if log.Len() != 0 {
		t.Errorf("it tried to install: %s", log.String())
	}
}

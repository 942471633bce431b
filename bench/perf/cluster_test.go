package perf

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/hone-tune/hone/internal/slurmtest"
)

// checkShapeRows checks that the rows are of shape, that
// each prefix names want[prefix] of them, that every figure, baseline,
// ratio and sample is a finite positive number, that the counts checked
// agree, and that the table has every row.
func checkShapeRows(t *testing.T, shape string, rows []Row, text string, want map[string]int) {
	t.Helper()
	got := map[string]int{}
	for _, r := range rows {
		if r.Shape != shape {
			t.Errorf("row of shape %s: %s", r.Shape, r.Name)
			continue
		}
		for p := range want {
			if strings.HasPrefix(r.Name, p) {
				got[p]++
			}
		}
		for _, v := range append(append([]float64{r.Value, r.Base, r.Ratio()}, r.Samples...), r.BaseSamples...) {
			if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
				t.Errorf("%s: figure, baseline, ratio or sample %v, want a finite positive number", r.Name, v)
			}
		}
		if len(r.Samples) == 0 || len(r.BaseSamples) == 0 {
			t.Errorf("%s: no samples", r.Name)
		}
		if r.Observed != r.Expected {
			t.Errorf("%s: observed %d, expected %d", r.Name, r.Observed, r.Expected)
		}
		if !strings.Contains(text, "| "+r.Shape+": "+r.Name+" | ") {
			t.Errorf("no table row for %s", r.Name)
		}
	}
	for p, n := range want {
		if got[p] != n {
			t.Errorf("%d rows %q…, want %d\n%s", got[p], p, n, text)
		}
	}
}

// TestSmokeCluster runs the cluster shape's variants that need no Slurm
// cluster at smoke sizes: results over TCP against the Unix socket, and
// the driver's CPU per simulated cluster trial, whose journal must hold
// every result the simulated trials reported.
func TestSmokeCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("builds helper programs and runs experiments")
	}
	cfg := SmokeConfig()
	cfg.Dir = t.TempDir()
	cfg.PlotDir = ""
	cfg.Only = []string{ShapeCluster + "/" + clusterTCP, ShapeCluster + "/" + clusterCPU}
	var out bytes.Buffer
	rows, err := Run(context.Background(), cfg, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, &out)
	}
	checkShapeRows(t, ShapeCluster, rows, out.String(), map[string]int{
		"results over TCP":              len(cfg.Cluster.TCPConcurrency),
		"driver CPU per running trial,": len(cfg.Cluster.CPUTrials),
	})
	for _, r := range rows {
		if strings.HasPrefix(r.Name, "driver CPU") && r.Expected < int64(slicesMin(cfg.Cluster.CPUTrials)) {
			t.Errorf("%s: %d results reported, want at least one per trial", r.Name, r.Expected)
		}
	}
	if ents, err := os.ReadDir(cfg.Dir); err != nil || len(ents) != 0 {
		t.Errorf("scratch directory not cleaned up: %v, %d entries", err, len(ents))
	}
}

// slicesMin returns the smallest of s.
func slicesMin(s []int) int {
	m := s[0]
	for _, v := range s[1:] {
		m = min(m, v)
	}
	return m
}

// TestSmokeClusterSlurm runs the cluster shape's variants that need the
// Slurm test cluster (scripts/with-slurm.sh starts one; scripts/test.sh
// does) at smoke sizes: step-mode launches inside an allocation against
// srun by hand, and job mode's poll against a per-job loop, whose held
// jobs must be gone from the queue afterwards. It skips, loudly, without
// the cluster.
func TestSmokeClusterSlurm(t *testing.T) {
	if testing.Short() {
		t.Skip("runs jobs on the Slurm test cluster")
	}
	slurmtest.RequireExclusive(t) // the allocation takes both nodes
	cfg := SmokeConfig()
	cfg.Dir = t.TempDir()
	cfg.PlotDir = ""
	cfg.Only = []string{ShapeCluster + "/" + clusterLaunch, ShapeCluster + "/" + clusterPoll}
	var out bytes.Buffer
	rows, err := Run(context.Background(), cfg, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, &out)
	}
	text := out.String()
	checkShapeRows(t, ShapeCluster, rows, text, map[string]int{
		"step-mode trial launches":               2 * len(cfg.Cluster.LaunchConcurrency),
		"step-mode launches of the command true": len(cfg.Cluster.LaunchConcurrency),
		"job mode's poll of":                     len(cfg.Cluster.PollJobs),
	})
	name := "hone-bench-poll-" + strconv.Itoa(os.Getpid())
	if !strings.Contains(text, name) {
		t.Fatalf("the output does not name the poll's jobs %s:\n%s", name, text)
	}
	left, err := exec.Command("squeue", "--noheader", "--name="+name, "--format=%i %T").Output()
	if err != nil {
		t.Fatalf("squeue: %v", err)
	}
	if s := strings.TrimSpace(string(left)); s != "" {
		t.Errorf("the poll's jobs are still in the queue:\n%s", s)
	}
	if ents, err := os.ReadDir(cfg.Dir); err != nil || len(ents) != 0 {
		t.Errorf("scratch directory not cleaned up: %v, %d entries", err, len(ents))
	}
}

// TestClusterNeedsSlurm checks that the variants that need a Slurm
// cluster fail without one, saying how to start the test cluster.
func TestClusterNeedsSlurm(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no Slurm command can be found
	for _, v := range []string{clusterLaunch, clusterPoll} {
		cfg := SmokeConfig()
		cfg.Dir = t.TempDir()
		cfg.PlotDir = ""
		cfg.Only = []string{ShapeCluster + "/" + v}
		_, err := Run(context.Background(), cfg, &bytes.Buffer{})
		if !errors.Is(err, errNoSlurm) || !strings.Contains(err.Error(), "with-slurm.sh") {
			t.Errorf("cluster/%s without Slurm: %v, want an error naming scripts/with-slurm.sh", v, err)
		}
	}
}

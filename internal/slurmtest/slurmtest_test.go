package slurmtest_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone/internal/slurmtest"
)

// TestClusterRunsOnBothNodes runs one srun over both nodes of the test
// cluster: each node runs the task once.
func TestClusterRunsOnBothNodes(t *testing.T) {
	c := slurmtest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "srun", "--partition="+c.Partition, "-N2", "--ntasks-per-node=1",
		"--chdir="+t.TempDir(), "printenv", "SLURMD_NODENAME")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("srun -N2: %v\n%s", err, stderr)
	}
	got := strings.Fields(string(out))
	slices.Sort(got)
	if want := c.Nodes; !slices.Equal(got, want) {
		t.Fatalf("srun -N2 printenv SLURMD_NODENAME printed %q, want each of %q once", got, want)
	}
}

// TestRequireSkipsWithoutCluster runs this package's cluster test in a
// test binary of its own without the script's environment: it skips, and
// says loudly how to run it.
func TestRequireSkipsWithoutCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestClusterRunsOnBothNodes$", "-test.v")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, slurmtest.Env+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("test binary without %s: %v\n%s", slurmtest.Env, err, out)
	}
	for _, want := range []string{"--- SKIP: TestClusterRunsOnBothNodes", "SKIPPED: " + slurmtest.Env, "scripts/test.sh"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output without %s lacks %q:\n%s", slurmtest.Env, want, out)
		}
	}
}

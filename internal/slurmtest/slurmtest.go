// Package slurmtest gives tests the real two-node Slurm cluster that
// scripts/test.sh starts (scripts/slurm.sh), or skips them loudly when
// there is none.
//
// Test packages run in parallel processes, and some tests take a node
// down: every test holds a lock on the cluster while it uses it, shared
// (Require) or exclusive (RequireExclusive), so that no test sees another
// test's node failure. Tests that share the cluster share its CPUs too:
// where Slurm puts a job, and whether it runs at once or waits, depends on
// what the others run. A test whose assertions depend on that (its jobs
// spread over both nodes, or several run at once) takes the cluster
// exclusively, and RequireExclusive returns only once no job is left on
// it, so that every CPU is free.
package slurmtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The environment variables scripts/slurm.sh exports.
const (
	// Env is set to 1 when the cluster is up.
	Env = "HONE_TEST_SLURM"
	// EnvConf is the cluster's slurm.conf; SLURM_CONF is set to it too,
	// so Slurm's commands run by the tests talk to the cluster.
	EnvConf = "HONE_TEST_SLURM_CONF"
	// EnvPartition is the partition of every node.
	EnvPartition = "HONE_TEST_SLURM_PARTITION"
	// EnvUrgent is a partition of every node whose jobs preempt those of
	// EnvPartition.
	EnvUrgent = "HONE_TEST_SLURM_URGENT"
	// EnvNodes lists the node names, separated by spaces.
	EnvNodes = "HONE_TEST_SLURM_NODES"
	// EnvNodeCtl is the script that takes a node down and brings it back.
	EnvNodeCtl = "HONE_TEST_SLURM_NODECTL"
	// EnvLock is the file the tests lock while they use the cluster.
	EnvLock = "HONE_TEST_SLURM_LOCK"
)

// lockBound is how long a test waits for the cluster's lock before it
// fails: longer than any other test holds it.
const lockBound = 10 * time.Minute

// idleBound is how long RequireExclusive waits, once it holds the lock,
// for the jobs the tests before it left to end: they cancel their jobs as
// they end, and a cancelled job holds its CPUs until its processes are
// gone (KillWait, 5 s, at most after SIGTERM).
const idleBound = 2 * time.Minute

// Cluster is the test cluster's settings.
type Cluster struct {
	// Conf is the path of the cluster's slurm.conf.
	Conf string
	// Partition is the partition of every node.
	Partition string
	// Urgent is a partition of every node whose jobs preempt Partition's:
	// a job there that needs a node cancels the jobs of Partition on it,
	// which end PREEMPTED. A test that submits one takes the cluster with
	// RequireExclusive.
	Urgent string
	// Nodes are the node names, "n1" and "n2".
	Nodes []string
	// NodeCtl is the path of the node control script: NodeCtl stop|kill|
	// start|resume NODE.
	NodeCtl string
}

// Require returns the cluster, holding a shared lock on it until the test
// ends, or skips the test with a loud message when scripts/test.sh did not
// start one.
func Require(t testing.TB) Cluster {
	t.Helper()
	return require(t, syscall.LOCK_SH)
}

// RequireExclusive is Require for a test that takes nodes down, preempts
// jobs or needs every node to itself (every CPU free: its jobs must spread
// over both nodes, or run all at once): its lock is exclusive, so the test
// waits until no other test uses the cluster, and none starts until it
// ends. It returns once the cluster runs no job, not even one that an
// earlier test cancelled and that is still ending.
func RequireExclusive(t testing.TB) Cluster {
	t.Helper()
	c := require(t, syscall.LOCK_EX)
	waitIdle(t)
	return c
}

// waitIdle waits until squeue lists no job (a cancelled job is listed,
// COMPLETING, until its processes are gone and its CPUs free), and fails
// the test, listing the jobs, if that takes longer than idleBound.
func waitIdle(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(idleBound)
	for {
		out, err := exec.Command("squeue", "--noheader", "--format=%i %T %N %j").CombinedOutput()
		jobs := strings.TrimSpace(string(out))
		if err == nil && jobs == "" {
			return
		}
		if time.Now().After(deadline) {
			if err != nil {
				t.Fatalf("the test cluster's queue: squeue: %v: %s", err, jobs)
			}
			t.Fatalf("the test cluster still runs jobs %v after the other tests released it (id state nodes name):\n%s", idleBound, jobs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func require(t testing.TB, how int) Cluster {
	t.Helper()
	if os.Getenv(Env) == "" {
		t.Skip("SKIPPED: " + Env + " is not set; scripts/test.sh installs Slurm and starts a real " +
			"two-node cluster (scripts/slurm.sh) and sets it. Run the tests through scripts/test.sh to cover Slurm.")
	}
	c := Cluster{
		Conf:      os.Getenv(EnvConf),
		Partition: os.Getenv(EnvPartition),
		Urgent:    os.Getenv(EnvUrgent),
		Nodes:     strings.Fields(os.Getenv(EnvNodes)),
		NodeCtl:   os.Getenv(EnvNodeCtl),
	}
	lock := os.Getenv(EnvLock)
	if c.Conf == "" || c.Partition == "" || c.Urgent == "" || len(c.Nodes) == 0 || c.NodeCtl == "" || lock == "" {
		t.Fatalf("%s is set, but not all of %s, %s, %s, %s, %s, %s: source scripts/slurm.sh whole",
			Env, EnvConf, EnvPartition, EnvUrgent, EnvNodes, EnvNodeCtl, EnvLock)
	}
	if got := os.Getenv("SLURM_CONF"); got != c.Conf {
		t.Fatalf("SLURM_CONF=%q, want the test cluster's %q", got, c.Conf)
	}
	f, err := lockCluster(lock, how)
	if err != nil {
		t.Fatalf("lock the test cluster: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return c
}

// lockCluster takes the lock file at path with flock (how: LOCK_SH or
// LOCK_EX) and returns it open, which holds the lock until it is closed.
//
// The tests wait for it in turn: each holds a second file, the queue
// (path.queue), exclusively while it waits, and lets the queue go once it
// has the lock. With flock alone, shared holders would starve an exclusive
// waiter, which polls for a moment when no test holds the lock: the next
// test of a package takes the lock shared as soon as the one before it
// lets it go, so an exclusive waiter could wait for every test another
// package runs (minutes, for cmd/hone's). Through the queue, a test that
// waits keeps the later ones from taking the lock before it: an exclusive
// waiter waits only for the tests that hold the lock when it comes.
func lockCluster(path string, how int) (*os.File, error) {
	deadline := time.Now().Add(lockBound)
	queue, err := os.OpenFile(path+".queue", os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer queue.Close()
	if err := flockBy(queue, syscall.LOCK_EX, deadline); err != nil {
		return nil, fmt.Errorf("%s: %w", queue.Name(), err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if err := flockBy(f, how, deadline); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// flockBy takes the flock how of f, polling until deadline.
func flockBy(f *os.File, how int, deadline time.Time) error {
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ControlNode runs the node control script: op is "stop" (the node's slurmd
// ends; its jobs' processes go on), "kill" (the slurmd and every process of
// the node's jobs are killed), "start" (the slurmd starts, and ControlNode
// returns once the node answers) or "resume" (a down or drained node
// returns to service).
func (c Cluster) ControlNode(op, node string) error {
	out, err := exec.Command(c.NodeCtl, op, node).CombinedOutput()
	if err != nil {
		return fmt.Errorf("nodectl %s %s: %w: %s", op, node, err, strings.TrimSpace(string(out)))
	}
	return nil
}

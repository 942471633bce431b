package slurm

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/slurm/slurmcmd"
)

// Pool returns the resources the experiment's trials share: in step mode
// the allocation's (its CPUs and memory on every node), in job mode the
// nodes of the partition (every node of the cluster without one), so
// that hone never has more trials waiting in Slurm's queue than the
// cluster can run at once.
func Pool(ctx context.Context, o Options) (hone.Resources, error) {
	c, err := Capacity(ctx, o)
	return c.Pool, err
}

// Cluster is what a cluster offers the experiment's trials: the pool they
// share, and each node's part of it. A trial runs on one node (--nodes=1),
// so it must fit a node, not just the pool.
type Cluster struct {
	Pool  hone.Resources
	Nodes []Node
}

// Node is one node's resources.
type Node struct {
	Name string // "" where Slurm does not say (inside an allocation)
	hone.Resources
}

// Capacity returns the pool as Pool does, with the nodes that make it up.
func Capacity(ctx context.Context, o Options) (Cluster, error) {
	mode, err := resolve(o.Mode)
	if err != nil {
		return Cluster{}, err
	}
	if mode == Step {
		return allocationPool(os.Getenv)
	}
	args := []string{"--noheader", "--Node", "--format=%N|%c|%m|%G"}
	if o.Partition != "" {
		if err := checkPartition(ctx, o.Env, o.Partition); err != nil {
			return Cluster{}, err
		}
		args = append(args, "--partition="+o.Partition)
	}
	ctx, cancel := context.WithTimeout(ctx, cmdTimeout)
	defer cancel()
	out, err := slurmcmd.Exec{Env: o.Env}.Run(ctx, "sinfo", args...)
	if err != nil {
		return Cluster{}, fmt.Errorf("the cluster's nodes: %w", err)
	}
	return parseNodes(string(out))
}

// parseNodes reads sinfo's node lines ("n1|2|4000|gpu:4"), each node once,
// and sums them into the pool.
func parseNodes(out string) (Cluster, error) {
	var c Cluster
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) != 4 || seen[f[0]] {
			continue
		}
		seen[f[0]] = true
		cpus, err := strconv.Atoi(f[1])
		if err != nil {
			return Cluster{}, fmt.Errorf("sinfo: node %s has %q CPUs", f[0], f[1])
		}
		mem, _ := strconv.ParseInt(strings.TrimSuffix(f[2], "+"), 10, 64)
		n := Node{Name: f[0], Resources: hone.Resources{CPU: float64(cpus), Memory: mem << 20, GPU: float64(gresCount(f[3], "gpu"))}}
		c.Nodes = append(c.Nodes, n)
		c.Pool.CPU += n.CPU
		c.Pool.Memory += n.Memory
		c.Pool.GPU += n.GPU
	}
	if len(seen) == 0 {
		return Cluster{}, fmt.Errorf("sinfo lists no node")
	}
	return c, nil
}

// gresCount returns how many of name a node's gres ("gpu:a100:4(S:0-1),mps:100") has.
func gresCount(gres, name string) int {
	n := 0
	for _, g := range strings.Split(gres, ",") {
		g, _, _ = strings.Cut(g, "(")
		parts := strings.Split(g, ":")
		if len(parts) < 2 || parts[0] != name {
			continue
		}
		if c, err := strconv.Atoi(parts[len(parts)-1]); err == nil {
			n += c
		}
	}
	return n
}

// allocationPool reads the allocation's CPUs and memory, per node, from
// the environment Slurm gives a job.
func allocationPool(getenv func(string) string) (Cluster, error) {
	var c Cluster
	cpus, err := expandCounts(getenv("SLURM_JOB_CPUS_PER_NODE"))
	if err != nil {
		return c, fmt.Errorf("SLURM_JOB_CPUS_PER_NODE: %w", err)
	}
	var mem int64
	if mb, err := strconv.ParseInt(getenv("SLURM_MEM_PER_NODE"), 10, 64); err == nil && mb > 0 {
		mem = mb << 20
	}
	for _, n := range cpus {
		c.Nodes = append(c.Nodes, Node{Resources: hone.Resources{CPU: float64(n), Memory: mem}})
		c.Pool.CPU += float64(n)
		c.Pool.Memory += mem
	}
	return c, nil
}

// expandCounts expands Slurm's compressed per-node counts, "2(x3),1" to
// [2 2 2 1].
func expandCounts(s string) ([]int, error) {
	if s == "" {
		return nil, fmt.Errorf("not set: is this an allocation?")
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		v, rep := part, 1
		if i := strings.Index(part, "(x"); i >= 0 && strings.HasSuffix(part, ")") {
			n, err := strconv.Atoi(part[i+2 : len(part)-1])
			if err != nil {
				return nil, fmt.Errorf("%q: bad repeat", s)
			}
			v, rep = part[:i], n
		}
		c, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("%q: not a count", s)
		}
		for range rep {
			out = append(out, c)
		}
	}
	return out, nil
}

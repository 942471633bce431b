package perf

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"time"

	"github.com/hone-tune/hone/bench/process"
	"github.com/hone-tune/hone/executor/slurm"
)

// Variants of the cluster shape, as -only takes them (cluster/launch …).
const (
	clusterLaunch = "launch"
	clusterTCP    = "tcp"
	clusterCPU    = "cpu"
	clusterPoll   = "poll"
)

// ClusterConfig sizes the cluster shape: what running trials on a Slurm
// cluster (executor/slurm) costs hone, each figure beside a baseline
// measured in the same run.
//
//   - launch (needs a Slurm cluster): inside an allocation, step mode's
//     launch to exit of LaunchTrials trials of a minimal Go trial program
//     (bench/process's proctrial "report 1": it connects, reports once
//     and exits), LaunchConcurrency at a time, through the slurm
//     executor driven directly (no runner); against `srun --exclusive
//     -N1 -n1 true` by hand and against srun of the same trial program
//     by hand, reporting to a minimal TCP server: the same work without
//     hone. And hone's launches of the command true as the trial against
//     `srun true` by hand: what hone adds to launching a command. The
//     kinds take turns launch by launch (in blocks of 3k launches k at a
//     time; see StepLaunchMain). And the CPU and memory of idle sruns,
//     one per running trial in step mode.
//   - tcp: subprocess trials reporting as fast as hone answers
//     (bench/process), over the executor's TCP server
//     (process.Options.Listen 127.0.0.1:0) against over their Unix
//     sockets, taking turns.
//   - cpu: the driver's CPU per running trial while CPUTrials simulated
//     cluster trials (bench/cmd/simtrials, a process of its own) report
//     every CPUEvery over TCP, through runner.Run with the process
//     executor, the journal, a durable local store and the per-trial
//     files, as `hone run` has them: getrusage of hone's process over
//     CPUWindow, per trial and second, against the same at the next
//     smaller number of trials (flat means a constant cost per trial).
//   - poll (needs a Slurm cluster): what job mode's poller costs, one
//     squeue over the experiment's PollJobs jobs (held, so pending) per
//     poll interval, against a naive loop of one squeue per job per
//     interval: squeue's CPU and slurmctld's, per interval.
type ClusterConfig struct {
	// LaunchTrials trials of each kind run in each of LaunchReps
	// repetitions, LaunchConcurrency[i] at a time, each a step of one CPU
	// and LaunchMemMB of memory (--mem by hand, a memory resource through
	// hone: a step that asks for no memory may take all the allocation's
	// memory on its node, and then runs alone there). The launch variant
	// also starts as many trials as the largest concurrency at once
	// through hone without a memory resource, to see whether they run at
	// once.
	LaunchTrials, LaunchReps int
	LaunchConcurrency        []int
	LaunchMemMB              int
	// LaunchSqueueNoop, for diagnosis, has hone's squeue calls run a
	// no-op (steplaunch -squeue-noop), so that what they cost drops out.
	LaunchSqueueNoop bool
	// IdleSruns steps that sleep are started by hand after the launch
	// measurements, and the CPU of their srun processes (on the driver's
	// machine, one per running trial in step mode) measured over
	// IdleWindow.
	IdleSruns  int
	IdleWindow time.Duration
	// Nodes, TasksPerNode and MemPerNodeMB size the allocation of the
	// launch variant (salloc -N --ntasks-per-node --cpus-per-task=1
	// --mem); Partition, when set, is its partition and that of the poll
	// variant's jobs.
	Nodes, TasksPerNode, MemPerNodeMB int
	Partition                         string
	// TCPResults results are reported by each of TCPConcurrency[i] trials
	// at once, TCPReps times over each transport.
	TCPResults     int
	TCPConcurrency []int
	TCPReps        int
	// CPUTrials are the numbers of simulated trials, each reporting every
	// CPUEvery; the driver's CPU is measured over CPUWindow, CPUSettle
	// after every trial was welcomed.
	CPUTrials                      []int
	CPUEvery, CPUWindow, CPUSettle time.Duration
	// CPUFilesMaxOpen, when positive, is the per-trial files' cap on
	// trials with open files (callback.WithMaxOpen) in the cpu variant;
	// 0 keeps the default (256), as `hone run` does.
	CPUFilesMaxOpen int
	// PollJobs are the numbers of jobs in the queue of the poll variant;
	// PollCalls squeue calls of each kind are timed at each. PollInterval
	// is job mode's poll interval.
	PollJobs     []int
	PollCalls    int
	PollInterval time.Duration
}

// DefaultClusterConfig is the cluster shape of a full run.
func DefaultClusterConfig() ClusterConfig {
	return ClusterConfig{
		LaunchTrials: 30, LaunchReps: 7, LaunchConcurrency: []int{1, 4}, LaunchMemMB: 100,
		IdleSruns: 4, IdleWindow: 10 * time.Second,
		Nodes: 2, TasksPerNode: 2, MemPerNodeMB: 1500,
		TCPResults: 2000, TCPConcurrency: []int{2, 16}, TCPReps: 5,
		CPUTrials: []int{100, 250, 500}, CPUEvery: time.Second, CPUWindow: 20 * time.Second, CPUSettle: 3 * time.Second,
		PollJobs: []int{100, 250, 500}, PollCalls: 10, PollInterval: slurm.DefaultPoll,
	}
}

// SmokeClusterConfig is the cluster shape at sizes that run in seconds.
func SmokeClusterConfig() ClusterConfig {
	return ClusterConfig{
		LaunchTrials: 4, LaunchReps: 1, LaunchConcurrency: []int{1, 2}, LaunchMemMB: 100,
		IdleSruns: 2, IdleWindow: time.Second,
		Nodes: 2, TasksPerNode: 2, MemPerNodeMB: 1500,
		TCPResults: 20, TCPConcurrency: []int{2}, TCPReps: 1,
		CPUTrials: []int{4, 8}, CPUEvery: 100 * time.Millisecond, CPUWindow: time.Second, CPUSettle: 200 * time.Millisecond,
		PollJobs: []int{3}, PollCalls: 2, PollInterval: slurm.DefaultPoll,
	}
}

// check fails for a size that is not positive.
func (c ClusterConfig) check() error {
	pos := func(s []int) bool {
		if len(s) == 0 {
			return false
		}
		for _, v := range s {
			if v < 1 {
				return false
			}
		}
		return true
	}
	if c.LaunchTrials < 1 || c.LaunchReps < 1 || !pos(c.LaunchConcurrency) || c.LaunchMemMB < 1 || c.IdleSruns < 1 || c.IdleWindow <= 0 ||
		c.Nodes < 1 || c.TasksPerNode < 1 || c.MemPerNodeMB < 1 || c.TCPResults < 1 || !pos(c.TCPConcurrency) || c.TCPReps < 1 ||
		!pos(c.CPUTrials) || c.CPUEvery <= 0 || c.CPUWindow <= 0 || c.CPUSettle < 0 || c.CPUFilesMaxOpen < 0 || !pos(c.PollJobs) || c.PollCalls < 1 ||
		c.PollInterval <= 0 {
		return fmt.Errorf("every size must be positive: %+v", c)
	}
	return nil
}

// errNoSlurm is the error of the cluster shape's variants that need a
// Slurm cluster, without one.
var errNoSlurm = errors.New("no Slurm cluster (the launch and poll variants need salloc, srun, sbatch, squeue, scancel and " +
	"scontrol on the PATH and a controller that answers): from the repository root, " +
	"`bash scripts/with-slurm.sh sh -c 'cd bench && go run ./cmd/perfbench -only cluster'` starts the test cluster, " +
	"runs the shape and stops the cluster")

// cluster measures the cluster shape's variants cfg selects.
func (b *bench) cluster(ctx context.Context) error {
	for _, v := range []struct {
		name  string
		slurm bool
		run   func(context.Context) error
	}{
		{clusterLaunch, true, b.clusterLaunches},
		{clusterTCP, false, b.clusterTCP},
		{clusterCPU, false, b.clusterCPU},
		{clusterPoll, true, b.clusterPoll},
	} {
		if !b.want(ShapeCluster, v.name) {
			continue
		}
		if v.slurm {
			if err := slurmUp(ctx); err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
		}
		if err := v.run(ctx); err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
	}
	return nil
}

// slurmUp checks that Slurm's commands are there and the controller
// answers.
func slurmUp(ctx context.Context) error {
	for _, name := range []string{"salloc", "srun", "sbatch", "squeue", "scancel", "scontrol", "sinfo"} {
		if _, err := exec.LookPath(name); err != nil {
			return fmt.Errorf("%w: %s not found", errNoSlurm, name)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "sinfo", "--noheader", "--format=%D").CombinedOutput(); err != nil {
		return fmt.Errorf("%w: sinfo: %v: %s", errNoSlurm, err, out)
	}
	return nil
}

// helper returns the helper program pkg of the bench module ("./cmd/…"),
// built into the scratch directory at its first use.
func (b *bench) helper(ctx context.Context, pkg string) (string, error) {
	if p, ok := b.helpers[pkg]; ok {
		return p, nil
	}
	out := filepath.Join(b.scratch, "bin", path.Base(pkg))
	b.logf("building %s", pkg)
	if err := process.Build(ctx, "", pkg, out); err != nil {
		return "", fmt.Errorf("build %s: %w", pkg, err)
	}
	if b.helpers == nil {
		b.helpers = map[string]string{}
	}
	b.helpers[pkg] = out
	return out, nil
}

// ratioAtLeast is a target on the ratio: Value ÷ Base ≥ v.
func ratioAtLeast(text string, v float64) Target {
	return Target{Text: text, Met: func(r Row) bool { return r.Ratio() >= v }}
}

// ratioAtMost is a target on the ratio: Value ÷ Base ≤ v.
func ratioAtMost(text string, v float64) Target {
	return Target{Text: text, Met: func(r Row) bool { return r.Ratio() <= v }}
}

// pairedRatios returns a[i] ÷ b[i] for the samples measured side by side.
func pairedRatios(a, b []float64) []float64 {
	out := make([]float64, 0, min(len(a), len(b)))
	for i := range min(len(a), len(b)) {
		out = append(out, a[i]/b[i])
	}
	return out
}

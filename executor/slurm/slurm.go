// Package slurm runs trials on a Slurm cluster. It is the process
// executor (package process) with a Launcher that starts each trial's
// command through Slurm, so that trials on the cluster speak the same
// protocol as local ones, over TCP: a trial connects back to the driver's
// address (Options.Listen) with its own token.
//
// Two modes:
//
//   - step: inside an allocation (SLURM_JOB_ID is set, as under
//     `sbatch -N4 --wrap "hone run exp.yaml"`), each trial is a job step,
//     `srun --exclusive -N1 -n1 ...` sized by the trial's resources. srun
//     runs on the driver's machine for as long as the step runs; a step
//     is stopped through scancel (srun would answer a SIGTERM by killing
//     its task at once; squeue tells the step's id when a stop needs it),
//     and Prepare cancels the steps a killed run left.
//   - job: from a login node, each trial is a job of its own, submitted
//     with sbatch (--no-requeue: hone retries failed trials itself, from
//     their latest checkpoint). One squeue call per poll interval follows
//     every job of the experiment.
//
// Resources map to --cpus-per-task (the CPUs rounded up), --mem (MiB) and
// --gres=gpu:N plus custom resources as gres. A failure the cluster
// causes (a node failure, a time limit, out of memory, preemption, a
// cancellation by someone else) is the trial's failure, with the job's
// state and reason, and hone retries the trial under max_failures.
//
// Every job and step is named hone-<experiment key>-<trial id> and, for
// jobs, carries the experiment's key in its comment, so a resumed driver
// finds what its killed predecessor left and cancels it before any trial
// starts: no trial ever runs twice at once.
//
// A trial may wait in the queue (a PENDING job, a step waiting for
// resources in its allocation): the executor announces starts
// (hone.StartAnnouncer), one hone.EventStarted per start when squeue
// shows the job running (the step listed) or the trial's hello arrives,
// whichever comes first, and a trial's trial_timeout and report_timeout
// count from then, not from its submission.
//
// Every node must see the experiment's storage. In job mode, where a
// trial's node is known only once it runs, every trial's command runs
// behind a check that its node sees the trial's staging directory: a node
// that does not stops the experiment (a StorageError, which wraps
// hone.ErrStopExperiment) rather than failing trial after trial. The
// check also sets HONE_HOST to the node's Slurm name, which the trial's
// hello passes on. In step mode the executor's Prepare runs the same
// check once on every node of the allocation, before any trial starts: a
// node that does not see the storage keeps the experiment from starting
// (a NodeStorageError), and each trial's command then runs as its step's
// task itself, its hello naming the node from SLURMD_NODENAME, which
// Slurm sets in every step.
//
// When the experiment lives in an object store (Options.Process.Store),
// the trial's command runs behind the node agent instead (`hone agent`,
// package agent): the node restores from and commits checkpoints to the
// store itself, so nodes need no shared filesystem, only the store and
// hone's binary (Options.Hone). A node that cannot reach the store stops
// the experiment the same way.
package slurm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path"
	"strings"
	"time"

	"github.com/hone-tune/hone/executor/process"
	"github.com/hone-tune/hone/executor/slurm/slurmcmd"
)

// Mode says how trials run on the cluster.
type Mode string

// The modes.
const (
	// Auto is Step inside an allocation (SLURM_JOB_ID set), else Job.
	Auto Mode = "auto"
	// Step runs each trial as a job step of the current allocation.
	Step Mode = "step"
	// Job submits each trial as a job of its own.
	Job Mode = "job"
)

// Options configures the executor.
type Options struct {
	// Process holds the command, environment, working directory and stop
	// grace of the trials, as for the process executor. Its Listen is the
	// driver's address the trials connect to (default ":0": every
	// interface, a free port, advertised as this machine's address), its
	// Launch is set by New.
	Process process.Options
	// Mode is Auto (the default), Step or Job.
	Mode Mode
	// Partition, Account, QOS and Time (a Slurm time limit such as
	// "2:00:00") are passed to sbatch (job mode) or srun (step mode) when
	// set.
	Partition, Account, QOS, Time string
	// SbatchArgs and SrunArgs are extra arguments for every sbatch (job
	// mode) or srun (step mode).
	SbatchArgs, SrunArgs []string
	// Key identifies the experiment in job names and comments (see
	// ExperimentKey).
	Key string
	// Poll is how often job mode asks squeue about the experiment's jobs
	// (default 2s).
	Poll time.Duration
	// Env is the environment of the Slurm commands themselves (default:
	// hone's).
	Env []string
	// Hone is the path of the hone binary on the nodes, which runs the
	// node agent (hone agent) of trials whose experiment lives in an
	// object store (Process.Store). Default: this hone's own path, as on
	// a cluster where every node sees the same software.
	Hone string
	// NodeCache is the node agent's cache directory on the nodes, where
	// it keeps the checkpoints it downloads and commits (default: the
	// agent's, hone-node-<uid> in the node's temporary directory).
	NodeCache string
}

// DefaultPoll is the poll interval of job mode.
const DefaultPoll = 2 * time.Second

// ExperimentKey returns a short key for the experiment directory dir,
// used in job names: the same directory gives the same key.
func ExperimentKey(dir string) string {
	h := sha256.Sum256([]byte(dir))
	return hex.EncodeToString(h[:5])
}

// StoreKey returns the key (as ExperimentKey) of the experiment at the
// object-store URL u: its scheme, bucket and path, not its query, nor
// the local working copy, which is another directory on every machine,
// so that a resume from any machine finds the jobs of the run before.
func StoreKey(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ExperimentKey(u)
	}
	return ExperimentKey(p.Scheme + "://" + p.Host + "/" + strings.Trim(path.Clean("/"+p.Path), "/"))
}

// InAllocation reports whether hone runs inside a Slurm allocation.
func InAllocation() bool { return os.Getenv("SLURM_JOB_ID") != "" }

// resolve returns the mode trials run in: Step or Job.
func resolve(m Mode) (Mode, error) {
	switch m {
	case "", Auto:
		if InAllocation() {
			return Step, nil
		}
		return Job, nil
	case Step:
		if !InAllocation() {
			return "", errors.New("mode step runs trials as steps of the current allocation, but SLURM_JOB_ID is not set (run hone inside sbatch or salloc, or use mode job)")
		}
		return Step, nil
	case Job:
		return Job, nil
	}
	return "", fmt.Errorf("mode %q: allowed values are auto, step and job", m)
}

// New returns an executor that runs trials on the cluster. It checks
// first that the Slurm commands are there and, when set, that the
// partition exists, so that a wrong setting is an error before any trial
// starts.
func New(ctx context.Context, o Options) (*process.Executor, error) {
	if o.Key == "" {
		return nil, errors.New("slurm executor: Options.Key is empty")
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	mode, err := resolve(o.Mode)
	if err != nil {
		return nil, fmt.Errorf("slurm executor: %w", err)
	}
	need := []string{"srun", "squeue", "scancel", "scontrol"}
	if mode == Job {
		need = []string{"sbatch", "squeue", "scancel", "scontrol"}
	}
	for _, name := range need {
		if _, err := exec.LookPath(name); err != nil {
			return nil, fmt.Errorf("slurm executor: %s not found in PATH: is this a Slurm node?", name)
		}
	}
	if o.Partition != "" {
		if err := checkPartition(ctx, o.Env, o.Partition); err != nil {
			return nil, fmt.Errorf("slurm executor: %w", err)
		}
	}
	if o.Process.Store != "" && o.Hone == "" {
		if o.Hone, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("slurm executor: the path of hone for the node agent: %w", err)
		}
	}
	c := slurmcmd.Client{Runner: slurmcmd.Exec{Env: o.Env}}
	popts := o.Process
	if popts.Listen == "" {
		popts.Listen = ":0"
	}
	if mode == Step {
		popts.Launch = newStepLauncher(c, o)
	} else {
		popts.Launch = newJobLauncher(c, o)
	}
	ex, err := process.New(popts)
	if err != nil {
		return nil, fmt.Errorf("slurm executor: %w", err)
	}
	return ex, nil
}

// jobName names a trial's job or step.
func jobName(key, trialID string) string { return namePrefix(key) + trialID }

// namePrefix starts the names of the experiment's jobs and steps.
func namePrefix(key string) string { return "hone-" + key + "-" }

// cmdTimeout bounds one Slurm command: a controller that does not answer
// is an error, not a hang.
const cmdTimeout = 60 * time.Second

// checkPartition fails when the partition does not exist.
func checkPartition(ctx context.Context, env []string, partition string) error {
	ctx, cancel := context.WithTimeout(ctx, cmdTimeout)
	defer cancel()
	out, err := slurmcmd.Exec{Env: env}.Run(ctx, "scontrol", "--oneliner", "show", "partition", partition)
	if err != nil || !strings.Contains(string(out), "PartitionName="+partition+" ") {
		return fmt.Errorf("partition %q does not exist on this cluster: %w", partition, errOr(err, "scontrol does not show it"))
	}
	return nil
}

// errOr returns err, or an error saying msg when err is nil.
func errOr(err error, msg string) error {
	if err != nil {
		return err
	}
	return errors.New(msg)
}

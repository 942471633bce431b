package slurmcmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrNoJob is the error of Client.Job for a job that Slurm no longer
// knows, or never knew.
var ErrNoJob = errors.New("slurm does not know the job")

// invalidJobID is what squeue and scontrol print for a job id slurmctld
// does not know.
const invalidJobID = "Invalid job id specified"

// Client runs Slurm's commands through a Runner.
type Client struct {
	// Runner runs the commands; nil is Exec{}.
	Runner Runner
}

func (c Client) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	r := c.Runner
	if r == nil {
		r = Exec{}
	}
	return r.Run(ctx, name, args...)
}

// Submit submits argv as a job of its own (JobArgs) and returns its id.
// When sbatch refuses the job, the error carries sbatch's standard error,
// which names what it refused ("invalid partition specified: nope").
func (c Client) Submit(ctx context.Context, o JobOptions, argv []string) (string, error) {
	args, err := JobArgs(o, argv)
	if err != nil {
		return "", fmt.Errorf("submit: %w", err)
	}
	out, err := c.run(ctx, "sbatch", args...)
	if err != nil {
		return "", fmt.Errorf("submit job %s: %w", o.Name, err)
	}
	id, err := ParseSbatch(out)
	if err != nil {
		return "", fmt.Errorf("submit job %s: %w", o.Name, err)
	}
	return id, nil
}

// Queue lists the jobs q selects with one squeue (QueueArgs), those that
// ended too while slurmctld still keeps them. Jobs it no longer keeps are
// not listed; a query by ids of such jobs alone lists none.
func (c Client) Queue(ctx context.Context, q Query) ([]Job, error) {
	out, err := c.run(ctx, "squeue", QueueArgs(q)...)
	if err != nil {
		// squeue --jobs fails when it knows none of the ids, and ignores
		// the ones it does not know when it knows another.
		if len(q.IDs) > 0 && strings.Contains(stderrOf(err), invalidJobID) {
			return nil, nil
		}
		return nil, fmt.Errorf("queue: %w", err)
	}
	jobs, err := ParseQueue(out)
	if err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	return jobs, nil
}

// Steps lists the running steps of the jobs jobIDs (every job's when
// none) with one squeue (StepsArgs).
func (c Client) Steps(ctx context.Context, jobIDs ...string) ([]Step, error) {
	out, err := c.run(ctx, "squeue", StepsArgs(jobIDs...)...)
	if err != nil {
		return nil, fmt.Errorf("steps: %w", err)
	}
	steps, err := ParseSteps(out)
	if err != nil {
		return nil, fmt.Errorf("steps: %w", err)
	}
	return steps, nil
}

// Hostnames expands nodelist, a node list in Slurm's compressed form
// ("n[1-3],gpu07"), to its node names, in order, with one scontrol
// (HostnamesArgs).
func (c Client) Hostnames(ctx context.Context, nodelist string) ([]string, error) {
	out, err := c.run(ctx, "scontrol", HostnamesArgs(nodelist)...)
	if err != nil {
		return nil, fmt.Errorf("hostnames of %s: %w", nodelist, err)
	}
	names := ParseHostnames(out)
	if len(names) == 0 {
		return nil, fmt.Errorf("hostnames of %s: scontrol printed none", nodelist)
	}
	return names, nil
}

// Cancel cancels the jobs or steps ids with one scancel, or sends them
// signal when it is not "" (CancelArgs says what each does). Ids that
// Slurm no longer knows are no error.
func (c Client) Cancel(ctx context.Context, signal string, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := c.run(ctx, "scancel", CancelArgs(signal, ids...)...); err != nil {
		return fmt.Errorf("cancel %s: %w", strings.Join(ids, ","), err)
	}
	return nil
}

// Job returns job id as Slurm last knows it, its exit code included: from
// scontrol while slurmctld keeps the job (MinJobAge after it ended, 300 s
// by default), else from sacct. The error wraps ErrNoJob when neither
// knows it, and ErrNoAccounting too when the cluster keeps no accounting.
func (c Client) Job(ctx context.Context, id string) (Job, error) {
	out, err := c.run(ctx, "scontrol", ScontrolArgs(id)...)
	if err == nil {
		m, err := ParseScontrol(out)
		if err != nil {
			return Job{}, fmt.Errorf("job %s: %w", id, err)
		}
		j, err := JobFromScontrol(m)
		if err != nil {
			return Job{}, fmt.Errorf("job %s: %w", id, err)
		}
		return j, nil
	}
	if !strings.Contains(stderrOf(err), invalidJobID) {
		return Job{}, fmt.Errorf("job %s: %w", id, err)
	}
	out, err = c.run(ctx, "sacct", SacctArgs(id)...)
	j, found, perr := ParseSacct(id, out, stderrOf(err))
	switch {
	case errors.Is(perr, ErrNoAccounting):
		return Job{}, fmt.Errorf("job %s: %w: slurmctld no longer keeps it, and %w", id, ErrNoJob, ErrNoAccounting)
	case err != nil:
		return Job{}, fmt.Errorf("job %s: slurmctld no longer keeps it: %w", id, err)
	case perr != nil:
		return Job{}, fmt.Errorf("job %s: %w", id, perr)
	case !found:
		return Job{}, fmt.Errorf("job %s: %w", id, ErrNoJob)
	}
	return j, nil
}

package slurmcmd

import "testing"

func TestMemoryKill(t *testing.T) {
	for _, tc := range []struct {
		what, stderr, want string
	}{
		{
			// sbatch --mem=100M of a Python script that grows a buffer
			// by 50 MB every half second, with OverMemoryKill: the job
			// ended FAILED, signal 9 (scontrol_over_memory.txt).
			"batch job", string(readTestdata(t, "stderr_over_memory_job.txt")),
			"StepId=2.batch exceeded memory limit (118538240 > 104857600), being killed",
		},
		{
			// The same script as srun --mem=100M inside an allocation:
			// srun exited 137.
			"step", string(readTestdata(t, "stderr_over_memory_step.txt")),
			"StepId=3.0 exceeded memory limit (118595584 > 104857600), being killed",
		},
		{
			// A job preempted (scontrol_preempted.txt).
			"preempted", string(readTestdata(t, "stderr_preempted.txt")), "",
		},
		{
			// The notice alone, as the allocation's batch script gets it
			// when one of its steps is killed.
			"notice", "slurmstepd-n1: error: Exceeded job memory limit\n", "Exceeded job memory limit",
		},
		{
			// Slurm's words under task/cgroup (task_cgroup_memory.c; the
			// test cluster has no cgroups).
			"cgroup", "Traceback\nslurmstepd: error: Detected 1 oom-kill event(s) in StepId=7.batch. Some of your processes may have been killed by the cgroup out-of-memory handler.\r\n",
			"Detected 1 oom-kill event(s) in StepId=7.batch. Some of your processes may have been killed by the cgroup out-of-memory handler.",
		},
		{"trial's own words", "error: StepId=2.batch exceeded memory limit (1 > 0), being killed\n" +
			"my slurmstepd says: error: Exceeded job memory limit\n" +
			"slurmstepd-n1: info: StepId=2.batch exceeded memory limit (1 > 0), being killed\n", ""},
		{"nothing", "", ""},
		{"other error", "slurmstepd-n2: error: *** JOB 9 ON n2 CANCELLED AT 2026-12-04T18:36:03 ***\n", ""},
	} {
		if got := MemoryKill(tc.stderr); got != tc.want {
			t.Errorf("%s: MemoryKill = %q, want %q", tc.what, got, tc.want)
		}
	}
}

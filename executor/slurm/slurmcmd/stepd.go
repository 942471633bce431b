package slurmcmd

import "strings"

// MemoryKill returns what slurmstepd wrote into a job's or step's
// standard error when Slurm killed it for using more memory than it asked
// for, without slurmstepd's "slurmstepd-n1: error: " prefix, or "" when
// slurmstepd wrote nothing of the kind. stderr must be this run's output
// alone: the line of an earlier run would be taken for this one's.
//
// A cluster that enforces memory by polling (JobAcctGatherParams=
// OverMemoryKill, without cgroups) writes, and Slurm 22.05 then calls the
// job FAILED (signal 9) and srun exits 137, never OUT_OF_MEMORY:
//
//	slurmstepd-n1: error: StepId=2.batch exceeded memory limit (118538240 > 104857600), being killed
//	slurmstepd-n1: error: Exceeded job memory limit
//
// A cluster that enforces it with cgroups (task/cgroup, ConstrainRAMSpace)
// writes, for a job Slurm calls OUT_OF_MEMORY:
//
//	slurmstepd: error: Detected 1 oom-kill event(s) in StepId=7.batch. Some of your processes may have been killed by the cgroup out-of-memory handler.
//
// Of several such lines, the first one with figures (the limit, or the
// count of kills) is returned, else the first. Only slurmstepd's lines
// count: a trial that prints the same words is not taken at its word.
func MemoryKill(stderr string) string {
	var first string
	for _, line := range strings.Split(stderr, "\n") {
		msg, ok := stepdError(line)
		if !ok {
			continue
		}
		switch {
		case strings.Contains(msg, " exceeded memory limit ("), strings.Contains(msg, " oom-kill event(s) in "):
			return msg
		case first == "" && strings.Contains(msg, "Exceeded job memory limit"):
			first = msg
		}
	}
	return first
}

// stepdError returns the message of one of slurmstepd's error lines,
// "slurmstepd: error: MSG" or "slurmstepd-NODE: error: MSG".
func stepdError(line string) (string, bool) {
	line = strings.TrimSpace(strings.TrimRight(line, "\r"))
	if !strings.HasPrefix(line, "slurmstepd") {
		return "", false
	}
	who, msg, ok := strings.Cut(line, ": error: ")
	if !ok || strings.ContainsAny(who, " \t") {
		return "", false
	}
	return strings.TrimSpace(msg), true
}

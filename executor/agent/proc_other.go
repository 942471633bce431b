//go:build !linux

package agent

import "syscall"

// childAttr: without a parent-death signal, the trial outlives an agent
// killed outright; Slurm's process tracking still ends it with the job.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

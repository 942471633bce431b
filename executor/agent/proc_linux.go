package agent

import "syscall"

// childAttr has the kernel kill the trial when the agent dies (a job
// cancelled with SIGKILL kills the agent first).
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }

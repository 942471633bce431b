//go:build linux

package process

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// waitEnd waits for the process to end and reaps it. Before reaping it, it
// kills whatever is left of its process group: until the process is
// reaped, its id (the group's id) cannot be reused.
func (p *proc) waitEnd() error {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, p.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	p.sigMu.Lock()
	_ = syscall.Kill(-p.pid, syscall.SIGKILL)
	p.gone = true
	p.sigMu.Unlock()
	return p.cmd.Wait()
}

//go:build !linux

package process

import "syscall"

// waitEnd waits for the process to end and reaps it, then kills whatever
// is left of its process group (whose members keep the group's id from
// being reused).
func (p *proc) waitEnd() error {
	err := p.cmd.Wait()
	p.sigMu.Lock()
	p.gone = true
	_ = syscall.Kill(-p.pid, syscall.SIGKILL)
	p.sigMu.Unlock()
	return err
}

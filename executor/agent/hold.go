package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// hold keeps the node's copy of the checkpoint cp for the trial's run: it
// takes a shared lock on the checkpoint's lock file in dir before the
// copy is downloaded or reused. release, once the trial has ended, takes
// the lock exclusively if no other agent of this node holds it, and then
// removes the copy: a node's cache holds the checkpoints its running
// trials restored from, and no more. Trials of one node that restore the
// same checkpoint at once (PBT's clones of one donor) share one download.
func (a *agent) hold(dir, cp string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("lock directory: %w", err)
	}
	sum := sha256.Sum256([]byte(cp))
	f, err := os.OpenFile(filepath.Join(dir, hex.EncodeToString(sum[:12])), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock the checkpoint %s: %w", cp, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock the checkpoint %s: %w", cp, err)
	}
	return func() {
		defer f.Close()
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			return // another trial of this node still uses it
		}
		if err := a.store.Forget(cp); err != nil {
			a.say(err)
		}
	}, nil
}

//go:build unix

package callback

import "syscall"

// defaultMaxOpen is how many trials keep their files open by default: an
// eighth of the process's file descriptors (the runtime raises the soft
// limit to the hard one), at least 256 and at most 4096, so that an
// experiment with hundreds of trials reporting at once (a cluster's)
// does not close and reopen files at every result.
func defaultMaxOpen() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 256
	}
	return int(min(max(lim.Cur/8, 256), 4096))
}

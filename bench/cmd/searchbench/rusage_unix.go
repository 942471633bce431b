//go:build unix

package main

import (
	"syscall"
	"time"
)

// cpuUsed returns the CPU time (user and system) this process and its
// waited-for children have used.
func cpuUsed() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}

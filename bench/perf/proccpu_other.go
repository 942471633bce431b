//go:build !linux

package perf

import "time"

// procCPU returns 0: the CPU time of another process is read from /proc,
// which only Linux has.
func procCPU(int) time.Duration { return 0 }

// procChildren returns none: a process's children are read from /proc,
// which only Linux has.
func procChildren(int) []int { return nil }

// threadsCPU returns 0: it reads /proc, which only Linux has.
func threadsCPU(int) time.Duration { return 0 }

// procMemKB returns zeros: it reads /proc, which only Linux has.
func procMemKB(int) (rss, pss int64) { return 0, 0 }

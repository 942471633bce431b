//go:build !unix

package main

import "time"

// cpuUsed returns 0: the CPU time is not known here.
func cpuUsed() time.Duration { return 0 }

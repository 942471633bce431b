//go:build !linux

package searchbench

import "time"

var cpuStart = time.Now()

// threadCPU stands in for the thread's CPU clock where there is none: it
// returns wall time, which counts whatever else the machine does.
func threadCPU() time.Duration { return time.Since(cpuStart) }

// cpuClock names what threadCPU measures, for the report.
const cpuClock = "wall time (no thread CPU clock on this system)"

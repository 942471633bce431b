//go:build !linux

package benchutil

import "time"

// CPUClock names what CPUMeter measures, for the reports.
const CPUClock = "wall time (no thread CPU clock on this system)"

// clockMark stands in for a reading of the thread's CPU clock where there
// is none: a wall-clock time, so what it measures counts whatever else
// the machine does.
type clockMark time.Time

// markClock returns the current wall-clock time.
func markClock() clockMark { return clockMark(time.Now()) }

// since returns the wall time elapsed since m.
func (m clockMark) since() time.Duration { return time.Since(time.Time(m)) }

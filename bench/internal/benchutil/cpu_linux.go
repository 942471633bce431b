package benchutil

import (
	"time"

	"golang.org/x/sys/unix"
)

// CPUClock names what CPUMeter measures, for the reports.
const CPUClock = "the calling thread's CPU clock (CLOCK_THREAD_CPUTIME_ID)"

// clockMark is a reading of the calling OS thread's CPU clock.
type clockMark time.Duration

// markClock reads the CPU time the calling OS thread has used
// (CLOCK_THREAD_CPUTIME_ID); 0 if the clock cannot be read.
func markClock() clockMark {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return clockMark(ts.Nano())
}

// since returns the CPU time the calling thread has used since m.
func (m clockMark) since() time.Duration { return time.Duration(markClock() - m) }

package perf

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the unit of the CPU times of /proc/PID/stat (USER_HZ,
// 100 on every Linux architecture hone runs on).
const clockTicks = 100

// procCPU returns the CPU time (user and system) process pid has used,
// from /proc/PID/stat, or 0 when it cannot be read.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// After the command's ")": state is field 3, utime 14, stime 15.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(u+st) * time.Second / clockTicks
}

// procChildren returns the ids of the children of process pid (every
// thread's), from /proc, or none when they cannot be read.
func procChildren(pid int) []int {
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, w := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(w); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// threadsCPU returns the CPU time of the live threads of process pid, to
// the nanosecond (the first field of each thread's schedstat), or 0 when
// it cannot be read. Threads that have ended are not counted: it suits
// long-lived processes whose threads live as long.
func threadsCPU(pid int) time.Duration {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		if ns, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			sum += time.Duration(ns)
		}
	}
	return sum
}

// procMemKB returns the resident memory of process pid in KiB, whole
// (Rss) and its proportional share of pages shared with other processes
// (Pss), from /proc/PID/smaps_rollup, or zeros when it cannot be read.
func procMemKB(pid int) (rss, pss int64) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "Rss:":
			rss = n
		case "Pss:":
			pss = n
		}
	}
	return rss, pss
}

//go:build linux

package process

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sysProcAttr puts a trial process in a process group of its own and has
// the kernel kill it when hone dies. The kernel sends the parent-death
// signal when the thread that forked the child ends: the executor never
// forks from a goroutine locked to its thread, and Go's threads outlive
// their goroutines otherwise. Go's fork also checks, after arming the
// signal, that the parent has not died already.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// reapWait bounds how long Prepare waits for a killed leftover to be gone:
// an orphan killed with SIGKILL may linger a moment until init reaps it.
const reapWait = 10 * time.Second

// procInfo is what /proc/<pid>/stat says of a process.
type procInfo struct {
	pid   int
	state byte
	pgrp  int
	start uint64 // clock ticks after boot
}

// readStat reads /proc/<pid>/stat.
func readStat(pid int) (procInfo, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, err
	}
	// pid (comm) state ppid pgrp ...: comm may hold spaces and
	// parentheses; field 22 is the start time.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return procInfo{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	pgrp, err1 := strconv.Atoi(f[2])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return procInfo{}, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	return procInfo{pid: pid, state: f[0][0], pgrp: pgrp, start: start}, nil
}

// bootID identifies this boot of the machine ("" if unknown).
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// local reports whether rec names a process of this machine since its
// last boot; records without the fields count as local.
func local(rec *procRecord, host, boot string) bool {
	return (rec.Host == "" || rec.Host == host) && (rec.Boot == "" || boot == "" || rec.Boot == boot)
}

// startTime returns the start time of process pid.
func startTime(pid int) (uint64, error) {
	pi, err := readStat(pid)
	return pi.start, err
}

// listProcs returns every process of the machine that is not a zombie.
func listProcs() ([]procInfo, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []procInfo
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		pi, err := readStat(pid)
		if err != nil || pi.state == 'Z' || pi.state == 'X' {
			continue // gone meanwhile, or dead and waiting to be reaped
		}
		out = append(out, pi)
	}
	return out, nil
}

// hasToken reports whether process pid's environment holds one of tokens
// as HONE_TOKEN.
func hasToken(pid int, tokens map[string]bool) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("HONE_TOKEN=")); ok && tokens[string(v)] {
			return true
		}
	}
	return false
}

// leftovers returns the running processes that belong to the recorded
// trials: a recorded process whose start time matches, the members of
// its process group (while its id is not another process's), and every
// process whose environment carries a recorded token.
func leftovers(recs []*procRecord) ([]procInfo, error) {
	procs, err := listProcs()
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	byPID := make(map[int]procInfo, len(procs))
	for _, pi := range procs {
		byPID[pi.pid] = pi
	}
	groups := map[int]uint64{} // pgid -> the recorded leader's start time
	tokens := map[string]bool{}
	minStart := ^uint64(0)
	for _, rec := range recs {
		if rec.Token != "" {
			tokens[rec.Token] = true
		}
		minStart = min(minStart, rec.Start)
		// A live process with the id but another start time reuses the
		// id: its group is not the trial's.
		if pi, ok := byPID[rec.PID]; !ok || pi.start == rec.Start {
			groups[rec.PID] = rec.Start
		}
	}
	var out []procInfo
	for _, pi := range procs {
		if pi.pid == self || pi.pid <= 1 || pi.start < minStart {
			continue
		}
		if start, ok := groups[pi.pgrp]; ok && pi.start >= start {
			out = append(out, pi)
			continue
		}
		if len(tokens) > 0 && hasToken(pi.pid, tokens) {
			out = append(out, pi)
		}
	}
	return out, nil
}

// reapLeftovers kills the trial processes recorded in dir that are still
// running, waits until they are gone, and removes the records.
func reapLeftovers(dir string) error {
	recs, files, err := readProcRecords(dir)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return nil
	}
	// Processes of another machine, or of an earlier boot, are not here.
	host, _ := os.Hostname()
	boot := bootID()
	here := recs[:0]
	for _, rec := range recs {
		if local(rec, host, boot) {
			here = append(here, rec)
		}
	}
	recs = here
	self := os.Getpid()
	selfStart, _ := startTime(self)
	for _, rec := range recs {
		if rec.Owner == self && rec.OwnerStart == selfStart {
			continue // an executor of this process that was abandoned
		}
		if st, err := startTime(rec.Owner); err == nil && st == rec.OwnerStart {
			return fmt.Errorf("trial process %d is run by hone process %d, which is still running", rec.PID, rec.Owner)
		}
	}
	deadline := time.Now().Add(reapWait)
	for len(recs) > 0 {
		left, err := leftovers(recs)
		if err != nil {
			return err
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d does not die after SIGKILL", left[0].pid)
		}
		for _, pi := range left {
			// Still the same process: it has not been reaped.
			if cur, err := readStat(pi.pid); err == nil && cur.start == pi.start {
				_ = syscall.Kill(pi.pid, syscall.SIGKILL)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	_ = os.Remove(filepath.Clean(dir))
	return nil
}

package chaos

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// markerEnv is the environment variable every process of a chaos
// experiment carries: hone gets it from the harness and trials inherit it
// (the spec's env sets it too).
const markerEnv = "CHAOS_MARK"

// proc is a live process found in /proc.
type proc struct {
	pid     int
	cmdline string
}

func (p proc) String() string { return fmt.Sprintf("pid %d (%s)", p.pid, p.cmdline) }

// marked returns the live (not zombie) processes whose environment holds
// markerEnv=mark, other than this one.
func marked(mark string) []proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(markerEnv + "=" + mark)
	self := os.Getpid()
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X' {
			continue // a zombie waits only for its reaper
		}
		env, err := os.ReadFile(filepath.Join(dir, "environ"))
		if err != nil {
			continue
		}
		found := false
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				found = true
				break
			}
		}
		if !found {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		c := strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))
		if len(c) > 120 {
			c = c[:120] + "..."
		}
		out = append(out, proc{pid: pid, cmdline: c})
	}
	return out
}

// waitGone polls until no process carries mark or the window passed, and
// returns those still alive.
func waitGone(mark string, window time.Duration) []proc {
	deadline := time.Now().Add(window)
	for {
		left := marked(mark)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// killMarked ends, by pid, the processes the harness's own experiments left
// (after a check has recorded them), so that they do not disturb what
// follows.
func killMarked(mark string) {
	for _, p := range marked(mark) {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
	waitGone(mark, 2*time.Second)
}

package perf

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"
)

// maxDirtyDirs is how many directories with uncommitted changes
// describeRevision names.
const maxDirtyDirs = 8

// describeRevision names the commit of the working tree the suite runs in
// (git rev-parse in the current directory) and the directories holding
// uncommitted changes, e.g. "at 0822b72 with uncommitted changes in
// runner, bench/perf", or says why it cannot.
func describeRevision(ctx context.Context) string {
	rev, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return fmt.Sprintf("at an unknown commit (git rev-parse: %v)", err)
	}
	s := "at " + strings.TrimSpace(string(rev))
	status, err := exec.CommandContext(ctx, "git", "status", "--porcelain").Output()
	if err != nil {
		return s + fmt.Sprintf(" (git status: %v)", err)
	}
	var dirs []string
	for line := range strings.Lines(string(status)) {
		line = strings.TrimRight(line, "\n")
		if len(line) < 4 {
			continue
		}
		p := line[3:]
		if _, to, ok := strings.Cut(p, " -> "); ok {
			p = to
		}
		d := path.Dir(strings.Trim(p, `"`))
		if d == "." {
			d = "(root)"
		}
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return s + ", a clean tree"
	}
	slices.Sort(dirs)
	more := ""
	if len(dirs) > maxDirtyDirs {
		more = fmt.Sprintf(" and %d more", len(dirs)-maxDirtyDirs)
		dirs = dirs[:maxDirtyDirs]
	}
	return s + " with uncommitted changes in " + strings.Join(dirs, ", ") + more
}

// loadAverage returns the 1, 5 and 15 minute load averages of
// /proc/loadavg, or says why it cannot.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	f := bytes.Fields(b)
	if len(f) < 3 {
		return fmt.Sprintf("unknown (/proc/loadavg: %q)", b)
	}
	return string(bytes.Join(f[:3], []byte(" "))) + " (1, 5, 15 min)"
}

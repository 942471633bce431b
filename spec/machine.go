package spec

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// machine is what this computer can give trials: the figures a spec's
// per-trial resources are checked against and the pool Build hands the
// runner.
type machine struct {
	cpus int
	// memory is the memory trials may use together, in bytes: the
	// physical memory, or the memory limit of hone's control group when
	// that is lower (a batch job's allocation). 0 means unknown: no limit.
	memory int64
}

// thisMachine reads the machine's figures. CPUs are the ones this process
// may run on (runtime.NumCPU); memory is read on Linux only.
func thisMachine() machine {
	m := machine{cpus: runtime.NumCPU()}
	if runtime.GOOS != "linux" {
		return m
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		m.memory, _ = memTotal(f)
		_ = f.Close() // read-only; nothing to lose
	}
	if lim := cgroupMemoryLimit(); lim > 0 && (m.memory == 0 || lim < m.memory) {
		m.memory = lim
	}
	return m
}

// memTotal returns the MemTotal line of /proc/meminfo, in bytes.
func memTotal(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			break
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("meminfo: bad MemTotal %q", rest)
		}
		mult := int64(1)
		if len(f) > 1 {
			switch strings.ToLower(f[1]) {
			case "kb":
				mult = 1024
			case "mb":
				mult = 1024 * 1024
			default:
				return 0, fmt.Errorf("meminfo: unknown unit %q", f[1])
			}
		}
		if n > math.MaxInt64/mult {
			return 0, fmt.Errorf("meminfo: MemTotal %q too large", rest)
		}
		return n * mult, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("meminfo: %w", err)
	}
	return 0, fmt.Errorf("meminfo: no MemTotal line")
}

// cgroupMemoryLimit returns the memory limit of this process's control
// group (cgroup v2 memory.max, or v1 memory.limit_in_bytes), or 0 when
// there is none or it cannot be read.
func cgroupMemoryLimit() int64 {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	var best int64
	consider := func(file string) {
		b, err := os.ReadFile(file)
		if err != nil {
			return
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
		// v1 writes a huge page-aligned number for "no limit".
		if err != nil || n <= 0 || n >= 1<<62 {
			return
		}
		if best == 0 || n < best {
			best = n
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var root, file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			root, file = "/sys/fs/cgroup", "memory.max"
		case contains(strings.Split(parts[1], ","), "memory"):
			root, file = "/sys/fs/cgroup/memory", "memory.limit_in_bytes"
		default:
			continue
		}
		// Inside a cgroup namespace the group is the mount's root.
		consider(filepath.Join(root, filepath.Clean("/"+parts[2]), file))
		consider(filepath.Join(root, file))
	}
	return best
}

// formatSize renders a byte count with the largest binary unit it reaches,
// to one decimal: 512B, 1.5KiB, 23.5GiB.
func formatSize(b int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, i := float64(b), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	s := strconv.FormatFloat(math.Floor(v*10)/10, 'f', -1, 64)
	return s + units[i]
}

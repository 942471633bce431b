package perf

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
)

// profiler writes pprof profiles of measurements when asked to: the CPU
// profile of a hone run to <cpu>-<name>.pprof, the heap profile after it to
// <mem>-<name>.pprof. Heap profiles hold the live heap at that moment and
// the allocations since the process started: compare two with
// go tool pprof -diff_base, or run one shape with -only.
type profiler struct {
	cpu, mem string
}

// fileName returns prefix-name.pprof with name made safe for a file name.
func fileName(prefix, name string) string {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '-'
	}, name)
	return prefix + "-" + clean + ".pprof"
}

// startCPU starts the CPU profile of measurement name and returns the
// function that stops it and closes the file. Without a CPU prefix both do
// nothing.
func (p profiler) startCPU(name string) (stop func() error, err error) {
	if p.cpu == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(fileName(p.cpu, name))
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		return nil
	}, nil
}

// heap writes the heap profile of measurement name, after a GC, when a
// memory prefix is set.
func (p profiler) heap(name string) error {
	if p.mem == "" {
		return nil
	}
	f, err := os.Create(fileName(p.mem, name))
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("heap profile: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	return nil
}

// profiled runs fn under the CPU profile of name (when first is true and
// profiling is on) and writes the heap profile of name after it.
func (p profiler) profiled(name string, first bool, fn func() error) error {
	if !first {
		return fn()
	}
	stop, err := p.startCPU(name)
	if err != nil {
		return err
	}
	err = fn()
	if serr := stop(); err == nil {
		err = serr
	}
	if err != nil {
		return err
	}
	return p.heap(name)
}

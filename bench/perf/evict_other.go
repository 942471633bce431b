//go:build !(linux && (amd64 || arm64))

package perf

// evict does nothing where posix_fadvise is not wired up.
func evict(string) {}

//go:build !linux

package perf

// describeFS says that the filesystem is not identified outside Linux.
func describeFS(string) string { return "an unidentified filesystem (tmpfs detection needs Linux)" }

// settle does nothing outside Linux.
func settle() {}

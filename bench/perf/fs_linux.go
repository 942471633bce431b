package perf

import (
	"fmt"
	"syscall"
)

// Filesystem magic numbers of statfs(2), for describeFS.
const (
	tmpfsMagic   = 0x01021994
	ext4Magic    = 0xef53
	xfsMagic     = 0x58465342
	btrfsMagic   = 0x9123683e
	overlayMagic = 0x794c7630
	zfsMagic     = 0x2fc12fc1
	nfsMagic     = 0x6969
)

// describeFS names the filesystem holding dir and says whether it is
// tmpfs (memory, so fsync costs nothing and "disk" figures are memory
// figures).
func describeFS(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return fmt.Sprintf("an unknown filesystem (statfs: %v)", err)
	}
	var name string
	switch uint64(st.Type) {
	case tmpfsMagic:
		return "tmpfs (memory: fsync is free, disk figures are memory figures)"
	case ext4Magic:
		name = "ext2/3/4"
	case xfsMagic:
		name = "xfs"
	case btrfsMagic:
		name = "btrfs"
	case overlayMagic:
		name = "overlayfs"
	case zfsMagic:
		name = "zfs"
	case nfsMagic:
		name = "nfs"
	default:
		name = fmt.Sprintf("filesystem type %#x", uint64(st.Type))
	}
	return name + " (not tmpfs)"
}

// settle flushes the filesystems' pending work (writeback, journal commits
// and, on a filesystem mounted with discard, the discards of freed
// blocks) so that removing a big file does not slow the next timed
// operation. It is called outside every timing.
func settle() { syscall.Sync() }

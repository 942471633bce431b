package chaos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// smallDisk is a small filesystem mounted for a disk-full experiment: a
// loop-mounted ext4 image, or a tmpfs with a size limit where loop devices
// are not available.
type smallDisk struct {
	Dir   string // the mount point
	Kind  string // "ext4 loop image" or "tmpfs"
	image string
}

// diskSize is the size of the small filesystem: room for one experiment's
// files with a margin, small enough to fill in a moment.
const diskSize = 24 << 20

// mountSmallDisk mounts a small filesystem at dir (created). It needs root;
// the error says why it could not.
func mountSmallDisk(dir string) (*smallDisk, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("not running as root: cannot mount a small filesystem")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	img := dir + ".img"
	var why []string
	if err := os.WriteFile(img, nil, 0o644); err == nil {
		if err := os.Truncate(img, diskSize); err == nil {
			out, err := exec.Command("mkfs.ext4", "-q", "-m", "0", "-F", img).CombinedOutput()
			if err == nil {
				out, err = exec.Command("mount", "-o", "loop", img, dir).CombinedOutput()
				if err == nil {
					return &smallDisk{Dir: dir, Kind: "ext4 loop image", image: img}, nil
				}
				why = append(why, fmt.Sprintf("mount -o loop: %v: %s", err, strings.TrimSpace(string(out))))
			} else {
				why = append(why, fmt.Sprintf("mkfs.ext4: %v: %s", err, strings.TrimSpace(string(out))))
			}
		}
		os.Remove(img)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", diskSize), "tmpfs", dir).CombinedOutput()
	if err == nil {
		return &smallDisk{Dir: dir, Kind: "tmpfs"}, nil
	}
	why = append(why, fmt.Sprintf("mount -t tmpfs: %v: %s", err, strings.TrimSpace(string(out))))
	return nil, errors.New(strings.Join(why, "; "))
}

// fill writes a filler file until the filesystem is full, then gives back
// slack bytes (so that the next few writes succeed and a later one fails,
// as on a disk filling up), and returns its path and size.
func (d *smallDisk) fill(slack int64) (string, int64, error) {
	p := filepath.Join(d.Dir, "chaos_filler")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return p, 0, fmt.Errorf("create filler: %w", err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	var n int64
	for chunk := len(buf); chunk > 0; {
		k, err := f.Write(buf[:chunk])
		n += int64(k)
		if err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				chunk /= 2 // fill the last blocks too
				continue
			}
			return p, n, fmt.Errorf("write filler: %w", err)
		}
	}
	n = max(n-slack, 0)
	if err := f.Truncate(n); err != nil {
		return p, n, fmt.Errorf("truncate filler: %w", err)
	}
	_ = f.Sync()
	return p, n, nil
}

// unmount unmounts the filesystem (lazily if it is busy) and removes its
// image.
func (d *smallDisk) unmount() error {
	out, err := exec.Command("umount", d.Dir).CombinedOutput()
	if err != nil {
		out2, err2 := exec.Command("umount", "-l", d.Dir).CombinedOutput()
		if err2 != nil {
			return fmt.Errorf("umount %s: %v: %s; %s", d.Dir, err, out, out2)
		}
	}
	if d.image != "" {
		return os.Remove(d.image)
	}
	return nil
}

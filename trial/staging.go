package trial

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/hone-tune/hone"
)

// StagingDirName is hone.StagingDirName: the directory under a trial
// directory where checkpoints are staged before hone commits them.
const StagingDirName = hone.StagingDirName

// Stager hands out fresh staging directories <trialDir>/.staging/<n>, n =
// 0, 1, 2, ... skipping names that already exist, so directories left by an
// earlier run of the trial are never reused. It is safe for concurrent use.
// Executors own one per trial start; the directories it returns belong to
// the caller.
type Stager struct {
	dir  string // the trial directory
	root string // dir/.staging

	mu   sync.Mutex
	next int
}

// NewStager returns a Stager for the trial directory dir (absolute). No
// directory is created until the first call to New.
func NewStager(dir string) *Stager {
	return &Stager{dir: dir, root: filepath.Join(dir, StagingDirName)}
}

// New creates and returns a new empty staging directory.
func (s *Stager) New() (string, error) {
	if s.dir == "" {
		return "", errors.New("staging dir: trial has no directory")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(s.root, 0o755); err != nil {
		return "", fmt.Errorf("staging dir: %w", err)
	}
	for {
		dir := filepath.Join(s.root, strconv.Itoa(s.next))
		s.next++
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("staging dir: %w", err)
		}
	}
}

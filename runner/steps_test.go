package runner_test

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/hone-tune/hone/trial"
)

// restoredStep is the step a counting trainable restores: the number in
// the file "step" of its checkpoint, or 0 without one.
func restoredStep(s trial.Session) (int, error) {
	d := s.Checkpoint()
	if d == "" {
		return 0, nil
	}
	b, err := os.ReadFile(filepath.Join(d, "step"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(b))
}

// savedStep stages a checkpoint holding step (what restoredStep reads)
// and returns the report option that carries it.
func savedStep(s trial.Session, step int) ([]trial.ReportOption, error) {
	d, err := s.StagingDir()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(d, "step"), []byte(strconv.Itoa(step)), 0o644); err != nil {
		return nil, err
	}
	return []trial.ReportOption{trial.WithCheckpoint(d)}, nil
}

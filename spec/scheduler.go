package spec

import (
	"fmt"

	"github.com/hone-tune/hone"
)

// BuildScheduler makes the spec's scheduler alone, for readers of an
// experiment that want its parameters, such as the rungs of ASHA or
// HyperBand. Only the scheduler's section and the objective are checked:
// the rest of the spec need not be runnable on this machine (its command
// and working directory may be gone), so s may come from Decode.
func (s *Spec) BuildScheduler() (hone.Scheduler, error) {
	c := &collector{file: s.file, lines: s.lines}
	build := s.readScheduler(c)
	if err := c.result(); err != nil {
		return nil, err
	}
	if build == nil {
		return nil, fmt.Errorf("scheduler %q: cannot be built", s.Scheduler.Name)
	}
	sc, err := build(s)
	if err != nil {
		return nil, fmt.Errorf("scheduler %s: %w", s.Scheduler.Name, err)
	}
	return sc, nil
}

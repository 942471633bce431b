package results

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/hone-tune/hone/internal/journal"
)

// Live follows an experiment directory while its experiment runs: each
// Update applies the journal lines and the result rows written since the
// last one to the same Experiment, reading only what is new. It is not
// safe for concurrent use; callers that share it guard it themselves.
type Live struct {
	exp  *Experiment
	tail *journal.Tail
}

// OpenLive reads the experiment in dir as Open does and returns a Live
// that keeps it up to date.
func OpenLive(dir string) (*Live, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open experiment: %w", err)
	}
	l := &Live{}
	if err := l.reset(dir); err != nil {
		return nil, err
	}
	if _, err := l.Update(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Live) reset(dir string) error {
	l.exp = &Experiment{Dir: dir, byID: map[string]*Trial{}}
	l.tail = journal.NewTail(filepath.Join(dir, journal.FileName))
	return nil
}

// Experiment returns the experiment as of the last Update. After an
// Update that reports Reset, it is a new value.
func (l *Live) Experiment() *Experiment { return l.exp }

// Changes says what an Update found.
type Changes struct {
	// Reset is true when the experiment was read again from the start (a
	// resume cut the journal, or rewrote a result file shorter).
	Reset bool
	// Journal counts the journal lines applied.
	Journal int
	// Rows counts the result rows read.
	Rows int
	// Trials are the ids of the trials whose state or rows changed, in
	// creation order.
	Trials []string
}

// Any reports whether anything changed.
func (c Changes) Any() bool { return c.Reset || c.Journal > 0 || c.Rows > 0 }

// Update applies what was written since the last Update: journal lines
// first, then the new rows of every trial that is not finished, or whose
// result file holds fewer rows than the journal counts.
func (l *Live) Update() (Changes, error) {
	var ch Changes
	lines, err := l.tail.Next()
	if errors.Is(err, journal.ErrShrunk) {
		if err := l.reset(l.exp.Dir); err != nil {
			return ch, err
		}
		ch.Reset = true
		lines, err = l.tail.Next()
	}
	var corrupt *journal.CorruptError
	if err != nil && !errors.As(err, &corrupt) {
		return ch, fmt.Errorf("follow experiment: %w", err)
	}
	// A corrupt line: the lines before it are applied, and the error is
	// returned at the end (and again by every later Update).
	jerr := err
	h := l.tail.Header()
	l.exp.Name, l.exp.Seed = h.Name, h.Seed
	touched := map[string]bool{}
	for _, ln := range lines {
		l.exp.apply(ln)
		switch {
		case ln.Rec != nil:
			touched[ln.Rec.Trial] = true
		case ln.Event != nil && ln.Event.TrialID != "":
			touched[ln.Event.TrialID] = true
		}
	}
	ch.Journal = len(lines)
	for _, t := range l.exp.Trials {
		if t.read && t.Status.Finished() && len(t.rows) >= t.Reported && !touched[t.ID] {
			continue
		}
		before := len(t.rows)
		n, err := t.Update()
		if err != nil {
			return ch, err
		}
		if len(t.rows) < before {
			ch.Reset = true
		}
		ch.Rows += n
		if n > 0 {
			touched[t.ID] = true
		}
	}
	for _, t := range l.exp.Trials {
		if touched[t.ID] {
			ch.Trials = append(ch.Trials, t.ID)
		}
	}
	if jerr != nil {
		return ch, fmt.Errorf("follow experiment: %w", jerr)
	}
	return ch, nil
}

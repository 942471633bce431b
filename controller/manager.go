package controller

import (
	"math"
	"path"
	"sort"

	"github.com/hone-tune/hone"
)

// Manager is one trial's checkpoint manager: it registers committed
// checkpoints (each path at most once), remembers the latest, and applies
// the retention policy of hone.CheckpointConfig. It does no I/O: Prune
// returns the checkpoints to delete and the caller deletes them.
//
// A nil *Manager is a manager with no checkpoints for its read methods
// (Latest, Has, Checkpoints, Best, Prune): the controller makes a trial's
// manager only at its first checkpoint.
type Manager struct {
	cfg      *hone.CheckpointConfig // shared, read only
	trialDir string
	entries  []*entry          // in registration order
	byPath   map[string]*entry // made at the first registration
	next     int               // next checkpoint index
}

type entry struct {
	cp    *hone.Checkpoint
	score float64 // NaN when missing
	seq   int     // registration order
}

// NewManager returns a manager for the trial whose directory (relative to
// the experiment) is trialDir.
func NewManager(cfg hone.CheckpointConfig, trialDir string) *Manager {
	return newManager(&cfg, trialDir)
}

// newManager is NewManager with a configuration that many managers share
// (the experiment's), which nobody changes.
func newManager(cfg *hone.CheckpointConfig, trialDir string) *Manager {
	return &Manager{cfg: cfg, trialDir: trialDir}
}

// NextPath returns the index and relative path the next checkpoint of this
// trial commits to. It reserves nothing: registering a checkpoint at that
// index advances it.
func (m *Manager) NextPath() (int, string) {
	return m.next, path.Join(m.trialDir, hone.CheckpointDirName(m.next))
}

// Register records a committed checkpoint together with the result that
// produced it (for the score). Registering a path already registered is a
// no-op and returns false.
func (m *Manager) Register(cp *hone.Checkpoint, r *hone.Result) bool {
	if _, dup := m.byPath[cp.Path]; dup {
		return false
	}
	score := math.NaN()
	if m.cfg.ScoreAttribute != "" {
		if v, ok := r.Value(m.cfg.ScoreAttribute); ok {
			score = v
		}
	}
	e := &entry{cp: cp, score: score, seq: len(m.entries)}
	if n := len(m.entries); n > 0 {
		e.seq = m.entries[n-1].seq + 1
	}
	m.entries = append(m.entries, e)
	if m.byPath == nil {
		m.byPath = map[string]*entry{}
	}
	m.byPath[cp.Path] = e
	if cp.Index >= m.next {
		m.next = cp.Index + 1
	}
	return true
}

// Latest returns the most recently registered checkpoint that is still
// kept, or nil.
func (m *Manager) Latest() *hone.Checkpoint {
	if m == nil || len(m.entries) == 0 {
		return nil
	}
	return m.entries[len(m.entries)-1].cp
}

// Has reports whether path is a kept checkpoint of this manager.
func (m *Manager) Has(path string) bool {
	if m == nil {
		return false
	}
	_, ok := m.byPath[path]
	return ok
}

// Checkpoints returns the kept checkpoints in registration order.
func (m *Manager) Checkpoints() []*hone.Checkpoint {
	if m == nil {
		return nil
	}
	out := make([]*hone.Checkpoint, len(m.entries))
	for i, e := range m.entries {
		out[i] = e.cp
	}
	return out
}

// Best returns the best kept checkpoint by the score attribute (or the
// latest, when ranking by recency).
func (m *Manager) Best() *hone.Checkpoint {
	if m == nil || len(m.entries) == 0 {
		return nil
	}
	ranked := m.ranked()
	return ranked[len(ranked)-1].cp
}

// ranked returns the entries from worst to best.
func (m *Manager) ranked() []*entry {
	r := append([]*entry(nil), m.entries...)
	if m.cfg.ScoreAttribute == "" {
		return r // registration order is recency order
	}
	order := m.cfg.ScoreOrder
	if order == "" {
		order = hone.Max
	}
	sort.SliceStable(r, func(i, j int) bool {
		a, b := r[i], r[j]
		// worse first: NaN is the worst; ties broken by age (older worse).
		if order.Better(b.score, a.score) {
			return true
		}
		if order.Better(a.score, b.score) {
			return false
		}
		return a.seq < b.seq
	})
	return r
}

// Prune applies num_to_keep: while more than NumToKeep checkpoints are kept,
// it drops the worst one that is neither the latest nor pinned, and returns
// the dropped checkpoints for the caller to delete.
func (m *Manager) Prune(pinned func(path string) bool) []*hone.Checkpoint {
	if m == nil || m.cfg.NumToKeep <= 0 || len(m.entries) <= m.cfg.NumToKeep {
		return nil
	}
	latest := m.Latest()
	var drop []*hone.Checkpoint
	excess := len(m.entries) - m.cfg.NumToKeep
	for _, e := range m.ranked() {
		if excess == 0 {
			break
		}
		if e.cp == latest || pinned(e.cp.Path) {
			continue
		}
		drop = append(drop, e.cp)
		excess--
	}
	for _, cp := range drop {
		m.remove(cp.Path)
	}
	return drop
}

func (m *Manager) remove(p string) {
	delete(m.byPath, p)
	for i, e := range m.entries {
		if e.cp.Path == p {
			m.entries = append(m.entries[:i], m.entries[i+1:]...)
			return
		}
	}
}

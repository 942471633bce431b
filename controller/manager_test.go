package controller

import (
	"fmt"
	"math"
	"path"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/hone-tune/hone"
)

const mgrTrialDir = "trainable_0000abcd_0_x=1_2026-01-01_00-00-00"

// mgrScore is one checkpoint's score in a table: a value, NaN, or missing.
type mgrScore struct {
	v       float64
	missing bool
}

func mgrV(v float64) mgrScore { return mgrScore{v: v} }

var (
	mgrNaN  = mgrScore{v: math.NaN()}
	mgrNone = mgrScore{missing: true}
)

func mgrCheckpoint(i int) *hone.Checkpoint {
	return &hone.Checkpoint{TrialID: "0000abcd", Index: i, Path: path.Join(mgrTrialDir, hone.CheckpointDirName(i)), Iteration: i + 1}
}

// mgrResult is the result that produced checkpoint i, reporting attr = s
// (under "acc" when attr is empty, so that recency tables carry scores that
// must be ignored).
func mgrResult(i int, attr string, s mgrScore) *hone.Result {
	r := &hone.Result{TrialID: "0000abcd", TrainingIteration: i + 1, Metrics: map[string]any{"other": 1.0}}
	if attr == "" {
		attr = "acc"
	}
	if !s.missing {
		r.Metrics[attr] = s.v
	}
	return r
}

func mgrIndices(cps []*hone.Checkpoint) []int {
	out := []int{}
	for _, cp := range cps {
		out = append(out, cp.Index)
	}
	return out
}

func mgrNoPins(string) bool { return false }

func TestManagerRetention(t *testing.T) {
	tests := []struct {
		name   string
		cfg    hone.CheckpointConfig
		scores []mgrScore // one checkpoint per score, registered in order
		pinned []int      // checkpoint indices pinned throughout
		kept   []int      // kept at the end, registration order
		drops  []int      // everything Prune returned, in order
	}{
		{
			name:   "recency keeps the 2 newest",
			cfg:    hone.CheckpointConfig{NumToKeep: 2},
			scores: []mgrScore{mgrV(9), mgrV(8), mgrV(7), mgrV(6), mgrV(5)},
			kept:   []int{3, 4},
			drops:  []int{0, 1, 2},
		},
		{
			name:   "recency ignores scores without score_attribute",
			cfg:    hone.CheckpointConfig{NumToKeep: 1, ScoreOrder: hone.Min},
			scores: []mgrScore{mgrV(1), mgrV(100), mgrV(50)},
			kept:   []int{2},
			drops:  []int{0, 1},
		},
		{
			name:   "score max keeps the highest and the latest",
			cfg:    hone.CheckpointConfig{NumToKeep: 2, ScoreAttribute: "acc", ScoreOrder: hone.Max},
			scores: []mgrScore{mgrV(5), mgrV(1), mgrV(9), mgrV(3), mgrV(2)},
			kept:   []int{2, 4},
			drops:  []int{1, 0, 3},
		},
		{
			name:   "score order defaults to max",
			cfg:    hone.CheckpointConfig{NumToKeep: 2, ScoreAttribute: "acc"},
			scores: []mgrScore{mgrV(5), mgrV(1), mgrV(9), mgrV(3), mgrV(2)},
			kept:   []int{2, 4},
			drops:  []int{1, 0, 3},
		},
		{
			name:   "score min keeps the lowest and the latest",
			cfg:    hone.CheckpointConfig{NumToKeep: 2, ScoreAttribute: "loss", ScoreOrder: hone.Min},
			scores: []mgrScore{mgrV(5), mgrV(1), mgrV(9), mgrV(3), mgrV(2)},
			kept:   []int{1, 4},
			drops:  []int{0, 2, 3},
		},
		{
			name:   "score on an auto field",
			cfg:    hone.CheckpointConfig{NumToKeep: 2, ScoreAttribute: hone.FieldTrainingIteration, ScoreOrder: hone.Min},
			scores: []mgrScore{mgrNone, mgrNone, mgrNone, mgrNone},
			kept:   []int{0, 3},
			drops:  []int{1, 2},
		},
		{
			name:   "NaN and missing rank lowest under max",
			cfg:    hone.CheckpointConfig{NumToKeep: 2, ScoreAttribute: "acc", ScoreOrder: hone.Max},
			scores: []mgrScore{mgrNaN, mgrV(7), mgrNone, mgrV(3)},
			kept:   []int{1, 3},
			drops:  []int{0, 2},
		},
		{
			name:   "NaN and missing rank lowest under min",
			cfg:    hone.CheckpointConfig{NumToKeep: 2, ScoreAttribute: "loss", ScoreOrder: hone.Min},
			scores: []mgrScore{mgrNaN, mgrV(7), mgrNone, mgrV(3)},
			kept:   []int{1, 3},
			drops:  []int{0, 2},
		},
		{
			name:   "NaN ranks below -Inf",
			cfg:    hone.CheckpointConfig{NumToKeep: 2, ScoreAttribute: "acc", ScoreOrder: hone.Max},
			scores: []mgrScore{mgrV(math.Inf(-1)), mgrNaN, mgrV(0)},
			kept:   []int{0, 2},
			drops:  []int{1},
		},
		{
			name:   "latest is kept even when it is the worst",
			cfg:    hone.CheckpointConfig{NumToKeep: 2, ScoreAttribute: "acc", ScoreOrder: hone.Max},
			scores: []mgrScore{mgrV(9), mgrV(8), mgrV(1), mgrV(0.5)},
			kept:   []int{0, 3},
			drops:  []int{1, 2},
		},
		{
			name:   "latest NaN is kept with num_to_keep 1",
			cfg:    hone.CheckpointConfig{NumToKeep: 1, ScoreAttribute: "acc", ScoreOrder: hone.Max},
			scores: []mgrScore{mgrV(9), mgrNaN},
			kept:   []int{1},
			drops:  []int{0},
		},
		{
			name:   "ties: the older goes first",
			cfg:    hone.CheckpointConfig{NumToKeep: 2, ScoreAttribute: "acc", ScoreOrder: hone.Max},
			scores: []mgrScore{mgrV(4), mgrV(4), mgrV(4), mgrV(1)},
			kept:   []int{2, 3},
			drops:  []int{0, 1},
		},
		{
			name:   "num_to_keep 0 keeps all",
			cfg:    hone.CheckpointConfig{NumToKeep: 0, ScoreAttribute: "acc"},
			scores: []mgrScore{mgrV(1), mgrV(2), mgrNaN, mgrV(0), mgrNone, mgrV(3)},
			kept:   []int{0, 1, 2, 3, 4, 5},
			drops:  []int{},
		},
		{
			name:   "pinned checkpoints are kept",
			cfg:    hone.CheckpointConfig{NumToKeep: 1},
			scores: []mgrScore{mgrV(0), mgrV(0), mgrV(0), mgrV(0)},
			pinned: []int{0},
			kept:   []int{0, 3},
			drops:  []int{1, 2},
		},
		{
			name:   "a pinned worst checkpoint is kept and counts toward num_to_keep",
			cfg:    hone.CheckpointConfig{NumToKeep: 2, ScoreAttribute: "loss", ScoreOrder: hone.Min},
			scores: []mgrScore{mgrV(100), mgrV(1), mgrV(50), mgrV(2)},
			pinned: []int{0},
			kept:   []int{0, 3},
			drops:  []int{1, 2},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager(tc.cfg, mgrTrialDir)
			pins := map[string]bool{}
			for _, i := range tc.pinned {
				pins[mgrCheckpoint(i).Path] = true
			}
			pinned := func(p string) bool { return pins[p] }
			drops := []int{}
			for i, s := range tc.scores {
				cp := mgrCheckpoint(i)
				if !m.Register(cp, mgrResult(i, tc.cfg.ScoreAttribute, s)) {
					t.Fatalf("Register(%s) = false for a new path", cp.Path)
				}
				if m.Latest() != cp {
					t.Fatalf("Latest() = %v right after registering %s", m.Latest(), cp.Path)
				}
				for _, d := range m.Prune(pinned) {
					if d == cp {
						t.Fatalf("Prune dropped the latest checkpoint %s", d.Path)
					}
					if pins[d.Path] {
						t.Fatalf("Prune dropped pinned checkpoint %s", d.Path)
					}
					if m.Has(d.Path) {
						t.Fatalf("Has(%s) after Prune returned it", d.Path)
					}
					drops = append(drops, d.Index)
				}
			}
			if got := mgrIndices(m.Checkpoints()); !slices.Equal(got, tc.kept) {
				t.Errorf("kept %v, want %v", got, tc.kept)
			}
			if !slices.Equal(drops, tc.drops) {
				t.Errorf("dropped %v, want %v", drops, tc.drops)
			}
			if last := len(tc.scores) - 1; m.Latest() == nil || m.Latest().Index != last {
				t.Errorf("Latest() = %v, want index %d", m.Latest(), last)
			}
			for _, i := range tc.kept {
				if !m.Has(mgrCheckpoint(i).Path) {
					t.Errorf("Has(checkpoint %d) = false, want true", i)
				}
			}
		})
	}
}

// One Prune over many excess checkpoints drops them worst first.
func TestManagerPruneOnceDropsWorstFirst(t *testing.T) {
	m := NewManager(hone.CheckpointConfig{NumToKeep: 2, ScoreAttribute: "acc", ScoreOrder: hone.Max}, mgrTrialDir)
	scores := []mgrScore{mgrV(5), mgrV(1), mgrV(9), mgrNaN, mgrV(3), mgrV(2)}
	for i, s := range scores {
		m.Register(mgrCheckpoint(i), mgrResult(i, "acc", s))
	}
	if got := m.Prune(mgrNoPins); !slices.Equal(mgrIndices(got), []int{3, 1, 4, 0}) {
		t.Errorf("Prune dropped %v, want [3 1 4 0] (NaN, then worst to best, never the latest)", mgrIndices(got))
	}
	if got := mgrIndices(m.Checkpoints()); !slices.Equal(got, []int{2, 5}) {
		t.Errorf("kept %v, want [2 5]", got)
	}
	if got := m.Prune(mgrNoPins); len(got) != 0 {
		t.Errorf("second Prune dropped %v, want nothing", mgrIndices(got))
	}
}

func TestManagerRegisterTwiceIsNoop(t *testing.T) {
	for _, cfg := range []hone.CheckpointConfig{
		{},
		{NumToKeep: 1},
		{NumToKeep: 2, ScoreAttribute: "acc", ScoreOrder: hone.Max},
	} {
		t.Run(fmt.Sprintf("%+v", cfg), func(t *testing.T) {
			m := NewManager(cfg, mgrTrialDir)
			first := mgrCheckpoint(0)
			if !m.Register(first, mgrResult(0, "acc", mgrV(1))) {
				t.Fatal("first Register = false")
			}
			// Same path, a different value and a better score.
			again := *first
			again.Iteration = 99
			if m.Register(&again, mgrResult(0, "acc", mgrV(1000))) {
				t.Error("Register of an already registered path = true, want false")
			}
			if m.Register(first, mgrResult(0, "acc", mgrV(1))) {
				t.Error("Register of the same pointer again = true, want false")
			}
			cps := m.Checkpoints()
			if len(cps) != 1 || cps[0] != first {
				t.Fatalf("Checkpoints() = %v, want only the first registration", cps)
			}
			if m.Latest() != first {
				t.Errorf("Latest() = %+v, want the first registration", m.Latest())
			}
			// The duplicate must not have changed the recorded score.
			second := mgrCheckpoint(1)
			m.Register(second, mgrResult(1, "acc", mgrV(2)))
			if m.Register(second, nil) {
				t.Error("Register of the latest again = true, want false")
			}
			if got := mgrIndices(m.Checkpoints()); !slices.Equal(got, []int{0, 1}) {
				t.Errorf("Checkpoints() = %v, want [0 1]", got)
			}
			if i, _ := m.NextPath(); i != 2 {
				t.Errorf("NextPath index = %d, want 2", i)
			}
			if cfg.ScoreAttribute != "" && m.Best() != second {
				t.Errorf("Best() = %+v: the duplicate's score 1000 must be ignored", m.Best())
			}
		})
	}
}

func TestManagerNextPath(t *testing.T) {
	m := NewManager(hone.CheckpointConfig{NumToKeep: 1}, mgrTrialDir)
	i, p := m.NextPath()
	if i != 0 || p != mgrTrialDir+"/checkpoint_000000" {
		t.Fatalf("NextPath() = %d, %q; want 0, %q", i, p, mgrTrialDir+"/checkpoint_000000")
	}
	if i2, p2 := m.NextPath(); i2 != i || p2 != p {
		t.Errorf("NextPath reserved something: second call = %d, %q", i2, p2)
	}
	steps := []struct {
		register int
		next     int
	}{
		{0, 1},
		{1, 2},
		{5, 6}, // jumps past a gap
		{3, 6}, // an older index does not move it back
		{6, 7},
	}
	for _, s := range steps {
		m.Register(mgrCheckpoint(s.register), nil)
		m.Prune(mgrNoPins)
		i, p := m.NextPath()
		if want := path.Join(mgrTrialDir, hone.CheckpointDirName(s.next)); i != s.next || p != want {
			t.Errorf("after registering %d: NextPath() = %d, %q; want %d, %q", s.register, i, p, s.next, want)
		}
	}
	// Pruned indices are never handed out again.
	for _, cp := range m.Checkpoints() {
		if i, _ := m.NextPath(); i <= cp.Index {
			t.Errorf("NextPath index %d <= kept index %d", i, cp.Index)
		}
	}
	// A trial directory with a slash joins cleanly.
	m2 := NewManager(hone.CheckpointConfig{}, "a/b/")
	if _, p := m2.NextPath(); p != "a/b/checkpoint_000000" {
		t.Errorf("NextPath with trailing slash = %q", p)
	}
}

func TestManagerBest(t *testing.T) {
	tests := []struct {
		name   string
		cfg    hone.CheckpointConfig
		scores []mgrScore
		best   int
	}{
		{"recency: the latest", hone.CheckpointConfig{}, []mgrScore{mgrV(9), mgrV(1), mgrV(5)}, 2},
		{"max", hone.CheckpointConfig{ScoreAttribute: "acc", ScoreOrder: hone.Max}, []mgrScore{mgrV(5), mgrV(9), mgrNaN, mgrV(1)}, 1},
		{"default order is max", hone.CheckpointConfig{ScoreAttribute: "acc"}, []mgrScore{mgrV(5), mgrV(9), mgrV(1)}, 1},
		{"min", hone.CheckpointConfig{ScoreAttribute: "loss", ScoreOrder: hone.Min}, []mgrScore{mgrV(5), mgrV(9), mgrNone, mgrV(1), mgrV(3)}, 3},
		{"NaN never best under min", hone.CheckpointConfig{ScoreAttribute: "loss", ScoreOrder: hone.Min}, []mgrScore{mgrNaN, mgrV(1e9), mgrNaN}, 1},
		{"all missing: the latest", hone.CheckpointConfig{ScoreAttribute: "loss", ScoreOrder: hone.Min}, []mgrScore{mgrNone, mgrNaN, mgrNone}, 2},
		{"ties: the newest", hone.CheckpointConfig{ScoreAttribute: "acc"}, []mgrScore{mgrV(2), mgrV(7), mgrV(7), mgrV(1)}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager(tc.cfg, mgrTrialDir)
			if m.Best() != nil || m.Latest() != nil {
				t.Fatalf("empty manager: Best() = %v, Latest() = %v; want nil", m.Best(), m.Latest())
			}
			for i, s := range tc.scores {
				m.Register(mgrCheckpoint(i), mgrResult(i, tc.cfg.ScoreAttribute, s))
			}
			if b := m.Best(); b == nil || b.Index != tc.best {
				t.Errorf("Best() = %+v, want index %d", b, tc.best)
			}
			// Best does not reorder or drop anything.
			if got := mgrIndices(m.Checkpoints()); len(got) != len(tc.scores) || !slices.IsSorted(got) {
				t.Errorf("Checkpoints() after Best = %v", got)
			}
		})
	}
	// Best only looks at kept checkpoints.
	m := NewManager(hone.CheckpointConfig{NumToKeep: 1, ScoreAttribute: "acc"}, mgrTrialDir)
	m.Register(mgrCheckpoint(0), mgrResult(0, "acc", mgrV(100)))
	m.Register(mgrCheckpoint(1), mgrResult(1, "acc", mgrV(1)))
	m.Prune(mgrNoPins)
	if b := m.Best(); b == nil || b.Index != 1 {
		t.Errorf("Best() after pruning the best = %+v, want index 1", b)
	}
}

// mgrModel is what the property test knows about a manager.
type mgrModel struct {
	cfg     hone.CheckpointConfig
	m       *Manager
	scores  map[string]float64 // path -> score the checkpoint was registered with (NaN if none)
	seq     map[string]int     // path -> registration order
	ever    []string           // every path ever registered, in order
	dropped map[string]bool    // every path Prune returned
	pins    map[string]bool
	n       int
}

// worse reports whether a ranks strictly below b under the model's policy.
func (s *mgrModel) worse(a, b string) bool {
	if s.cfg.ScoreAttribute != "" {
		order := s.cfg.ScoreOrder
		if order == "" {
			order = hone.Max
		}
		sa, sb := s.scores[a], s.scores[b]
		if order.Better(sb, sa) {
			return true
		}
		if order.Better(sa, sb) {
			return false
		}
	}
	return s.seq[a] < s.seq[b]
}

func (s *mgrModel) check(t *rapid.T) {
	cps := s.m.Checkpoints()
	seen := map[string]bool{}
	for _, cp := range cps {
		if seen[cp.Path] {
			t.Fatalf("path %s is in Checkpoints() twice: %v", cp.Path, mgrIndices(cps))
		}
		seen[cp.Path] = true
		if !s.m.Has(cp.Path) {
			t.Fatalf("Has(%s) = false for a kept checkpoint", cp.Path)
		}
		if s.dropped[cp.Path] {
			t.Fatalf("%s is kept after Prune returned it", cp.Path)
		}
	}
	for _, p := range s.ever {
		if !seen[p] && !s.dropped[p] {
			t.Fatalf("%s vanished without Prune returning it", p)
		}
		if s.dropped[p] && s.m.Has(p) {
			t.Fatalf("Has(%s) = true after Prune returned it", p)
		}
	}
	if len(s.ever) > 0 && (s.m.Latest() == nil || s.m.Latest().Path != s.ever[len(s.ever)-1]) {
		t.Fatalf("Latest() = %v, want the last registered %s", s.m.Latest(), s.ever[len(s.ever)-1])
	}
	if len(cps) > 0 && cps[len(cps)-1] != s.m.Latest() {
		t.Fatalf("Latest() is not the last of Checkpoints()")
	}
	if s.cfg.NumToKeep == 0 && len(cps) != len(s.ever) {
		t.Fatalf("num_to_keep 0: %d kept of %d registered", len(cps), len(s.ever))
	}
}

func TestManagerProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := hone.CheckpointConfig{NumToKeep: rapid.IntRange(0, 4).Draw(t, "num_to_keep")}
		if rapid.Bool().Draw(t, "by_score") {
			cfg.ScoreAttribute = "score"
			cfg.ScoreOrder = rapid.SampledFrom([]hone.Mode{"", hone.Max, hone.Min}).Draw(t, "order")
		}
		s := &mgrModel{cfg: cfg, m: NewManager(cfg, mgrTrialDir), scores: map[string]float64{},
			seq: map[string]int{}, dropped: map[string]bool{}, pins: map[string]bool{}}
		scoreGen := rapid.SampledFrom([]mgrScore{mgrNaN, mgrNone, mgrV(-1), mgrV(0), mgrV(1), mgrV(2.5), mgrV(math.Inf(1)), mgrV(math.Inf(-1))})

		t.Repeat(map[string]func(*rapid.T){
			"register": func(t *rapid.T) {
				i, p := s.m.NextPath()
				if slices.Contains(s.ever, p) {
					t.Fatalf("NextPath returned %s, registered before", p)
				}
				sc := scoreGen.Draw(t, "score")
				cp := &hone.Checkpoint{TrialID: "0000abcd", Index: i, Path: p, Iteration: i + 1}
				if !s.m.Register(cp, mgrResult(i, cfg.ScoreAttribute, sc)) {
					t.Fatalf("Register(%s) = false for a new path", p)
				}
				v := math.NaN()
				if !sc.missing {
					v = sc.v
				}
				s.scores[p], s.seq[p] = v, s.n
				s.n++
				s.ever = append(s.ever, p)
				if s.m.Latest() != cp {
					t.Fatalf("Latest() is not the checkpoint just registered")
				}
			},
			"reregister": func(t *rapid.T) {
				cps := s.m.Checkpoints()
				if len(cps) == 0 {
					t.Skip("nothing registered")
				}
				old := rapid.SampledFrom(cps).Draw(t, "existing")
				dup := *old
				dup.Iteration += 1000
				before := s.m.Checkpoints()
				ni, _ := s.m.NextPath()
				if s.m.Register(&dup, mgrResult(old.Index, cfg.ScoreAttribute, scoreGen.Draw(t, "score"))) {
					t.Fatalf("Register(%s) again = true", old.Path)
				}
				if after := s.m.Checkpoints(); !slices.Equal(after, before) {
					t.Fatalf("re-registering changed Checkpoints(): %v -> %v", mgrIndices(before), mgrIndices(after))
				}
				if ni2, _ := s.m.NextPath(); ni2 != ni {
					t.Fatalf("re-registering moved NextPath from %d to %d", ni, ni2)
				}
			},
			"pin": func(t *rapid.T) {
				if len(s.ever) == 0 {
					t.Skip("nothing registered")
				}
				p := rapid.SampledFrom(s.ever).Draw(t, "path")
				s.pins[p] = !s.pins[p]
			},
			"prune": func(t *rapid.T) {
				before := s.m.Checkpoints()
				latest := s.m.Latest()
				drop := s.m.Prune(func(p string) bool { return s.pins[p] })
				after := s.m.Checkpoints()
				if s.m.Latest() != latest {
					t.Fatalf("Prune changed Latest() from %v to %v", latest, s.m.Latest())
				}
				inDrop := map[string]bool{}
				for _, d := range drop {
					// (a) never the latest, never a pinned one.
					if latest != nil && d.Path == latest.Path {
						t.Fatalf("Prune returned the latest checkpoint %s", d.Path)
					}
					if s.pins[d.Path] {
						t.Fatalf("Prune returned pinned checkpoint %s", d.Path)
					}
					// (d) only registered ones, each at most once ever.
					if !slices.Contains(before, d) {
						t.Fatalf("Prune returned %s, which is not a kept checkpoint", d.Path)
					}
					if inDrop[d.Path] || s.dropped[d.Path] {
						t.Fatalf("Prune returned %s twice", d.Path)
					}
					inDrop[d.Path] = true
				}
				// What is kept is exactly what was kept minus what was dropped.
				var want []*hone.Checkpoint
				for _, cp := range before {
					if !inDrop[cp.Path] {
						want = append(want, cp)
					}
				}
				if !slices.Equal(after, want) {
					t.Fatalf("after Prune kept %v, want %v", mgrIndices(after), mgrIndices(want))
				}
				for p := range inDrop {
					s.dropped[p] = true
				}
				k := cfg.NumToKeep
				if k == 0 {
					if len(drop) != 0 {
						t.Fatalf("num_to_keep 0: Prune dropped %v", mgrIndices(drop))
					}
					return
				}
				// (b) at most max(num_to_keep, 1 + pinned kept).
				pinnedKept := 0
				for _, cp := range after {
					if s.pins[cp.Path] {
						pinnedKept++
					}
				}
				if len(after) > max(k, 1+pinnedKept) {
					t.Fatalf("%d kept > max(num_to_keep %d, 1 + %d pinned)", len(after), k, pinnedKept)
				}
				// Never drops below num_to_keep, and over it only
				// protected checkpoints remain.
				if len(after) < min(len(before), k) {
					t.Fatalf("Prune went from %d to %d, below num_to_keep %d", len(before), len(after), k)
				}
				if len(after) > k {
					for _, cp := range after {
						if cp != latest && !s.pins[cp.Path] {
							t.Fatalf("%d kept > num_to_keep %d, yet unprotected %s kept", len(after), k, cp.Path)
						}
					}
				}
				// The dropped are the worst: none ranks above an
				// unprotected kept one.
				for _, d := range drop {
					for _, cp := range after {
						if cp == latest || s.pins[cp.Path] {
							continue
						}
						if s.worse(cp.Path, d.Path) {
							t.Fatalf("dropped %s (score %v) but kept worse %s (score %v)", d.Path, s.scores[d.Path], cp.Path, s.scores[cp.Path])
						}
					}
				}
			},
			"": s.check,
		})
	})
}

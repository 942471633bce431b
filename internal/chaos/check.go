package chaos

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/controller"
	"github.com/hone-tune/hone/internal/journal"
	"github.com/hone-tune/hone/spec"
)

// result is one result as the journal holds it (replayed) or as a trial's
// file holds it.
type result struct {
	iter int    // training_iteration, as hone counted it
	step int    // the trainer's own count, restored from its checkpoint
	run  string // the id of the trial process that reported it
	done bool
}

func (r result) String() string {
	return fmt.Sprintf("it %d (step %d of run %s)", r.iter, r.step, r.run)
}

// trialState is a trial as the experiment's journal describes it.
type trialState struct {
	id      string
	dir     string // absolute
	status  hone.Status
	err     string
	results []result       // replayed from the journal's inputs, in order
	ckpts   map[string]int // registered and not deleted: path (relative) -> iteration
	// endedBy names the input whose step recorded the trial TERMINATED
	// when that input cannot be a stopper, the scheduler or the trial
	// ending it (another trial's exit, an interrupt, a tick); "" otherwise.
	endedBy string

	// What the replayed controller holds for the trial.
	replayStatus hone.Status
	lastIter     int  // training_iteration of its latest result
	savedIter    int  // iteration of its latest registered checkpoint, -1 if none
	donor        bool // its next start restores another trial's checkpoint (PBT)
	// reportedLast: its latest result came in the journal's last session
	// (after its last resume), from the run that wrote the journal last.
	reportedLast bool
	// unregistered lists the checkpoints the records name that the
	// replayed controller does not hold.
	unregistered []string
}

// state is an experiment as its journal describes it: the records read
// back, and the results a replay of its inputs through the controller
// gives (exactly what hone resume rebuilds).
type state struct {
	trials    []*trialState
	byID      map[string]*trialState
	ckptIters map[int]bool // iterations of every checkpoint ever registered
}

// readState reads and replays the journal of the experiment in dir with
// the experiment's stored spec, as hone resume DIR does.
func readState(dir string) (st *state, err error) {
	j, err := journal.Read(filepath.Join(dir, journal.FileName))
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	st = &state{byID: map[string]*trialState{}, ckptIters: map[int]bool{}}
	for _, l := range j.Lines {
		r := l.Rec
		if r == nil {
			continue
		}
		t := st.byID[r.Trial]
		switch r.Op {
		case "trial":
			t = &trialState{id: r.Trial, dir: filepath.Join(dir, filepath.FromSlash(r.Dir)), ckpts: map[string]int{}}
			st.byID[r.Trial] = t
			st.trials = append(st.trials, t)
		case "status":
			if t != nil {
				t.status, t.err = r.Status, r.Error
			}
		case "ckpt":
			if t != nil {
				t.ckpts[r.Path] = r.Iteration
				st.ckptIters[r.Iteration] = true
			}
		case "ckdel":
			if t != nil {
				delete(t.ckpts, r.Path)
			}
		case "drop":
			delete(st.byID, r.Trial)
			for i, x := range st.trials {
				if x.ID() == r.Trial {
					st.trials = append(st.trials[:i], st.trials[i+1:]...)
					break
				}
			}
		}
	}
	s, err := storedSpec(dir)
	if err != nil {
		return nil, err
	}
	plan, err := spec.Build(s, dir, nil)
	if err != nil {
		return nil, fmt.Errorf("build the stored spec: %w", err)
	}
	defer plan.Close()
	ctl, err := controller.New(plan.Experiment, plan.Options.Pool)
	if err != nil {
		return nil, fmt.Errorf("controller for replay: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("replaying the journal panicked: %v", p)
		}
	}()
	was := map[string]hone.Status{} // statuses as the replay recorded them
	interruptAt, resumeAt, resultAt := -1, -1, map[string]int{}
	for i, l := range j.Lines {
		if l.Event == nil {
			continue
		}
		switch l.Event.Kind {
		case hone.EventInterrupt:
			interruptAt = i
		case hone.EventResult:
			resultAt[l.Event.TrialID] = i
		case hone.EventResume:
			resumeAt = i
		}
		ctl.Step(*l.Event)
		for _, a := range ctl.Ready() {
			if a.Kind == controller.ActRecord && a.Record.Op == "status" {
				prev := was[a.Record.Trial]
				was[a.Record.Trial] = a.Record.Status
				if t := st.byID[a.Record.Trial]; t != nil && a.Record.Status == hone.StatusTerminated {
					t.endedBy = ""
					r, ok := resultAt[a.Record.Trial]
					undecided := ok && r > interruptAt && interruptAt >= 0
					if !stopsTrials(l.Event, a.Record.Trial, prev, undecided) {
						t.endedBy = fmt.Sprintf("%s input of trial %q", l.Event.Kind, l.Event.TrialID)
						if l.Event.Err != "" {
							first, _, _ := strings.Cut(l.Event.Err, "\n")
							t.endedBy += fmt.Sprintf(" (it failed: %.100s)", first)
						}
					}
				}
			}
			if a.Kind != controller.ActNotify || a.Note != controller.NoteResult || a.Result == nil {
				continue
			}
			t := st.byID[a.Trial.ID]
			if t == nil {
				continue
			}
			t.results = append(t.results, result{
				iter: a.Result.TrainingIteration,
				step: intOf(a.Result.Metrics["step"]),
				run:  fmt.Sprint(a.Result.Metrics["run"]),
				done: a.Result.Done,
			})
		}
	}
	for _, t := range st.trials {
		rt := ctl.Trial(t.id)
		if rt == nil {
			t.replayStatus = "(absent)"
			continue
		}
		t.replayStatus = rt.Status
		if i, ok := resultAt[t.id]; ok && i > resumeAt {
			t.reportedLast = true
		}
		if rt.LastResult != nil {
			t.lastIter = rt.LastResult.TrainingIteration
		}
		t.savedIter = -1
		if rt.Checkpoint != nil {
			t.savedIter = rt.Checkpoint.Iteration
		}
		t.donor = rt.RestoreFrom != nil && rt.RestoreFrom.TrialID != t.id
		for p := range t.ckpts {
			if !ctl.Registered(p) {
				t.unregistered = append(t.unregistered, p)
			}
		}
		sort.Strings(t.unregistered)
	}
	return st, nil
}

// stopsTrials reports whether a step on in may end trial id, whose status
// was prev, legitimately: results (stoppers, schedulers, a trial's done),
// a save resolving a cached stop, a clean exit of any trial (a paused
// trial's exit lets HyperBand process its bracket), a resume ending a
// paused trial or one whose last result came in while the previous run
// was stopping (the scheduler decides what the interrupted run left
// undecided); a failure ends only the failed trial.
func stopsTrials(in *hone.Event, id string, prev hone.Status, undecided bool) bool {
	switch in.Kind {
	case hone.EventResult, hone.EventSaved:
		return true
	case hone.EventExited:
		return in.Err == "" || in.TrialID == id
	case hone.EventResume:
		return prev == hone.StatusPaused || undecided
	}
	return false
}

// ID returns the trial's id.
func (t *trialState) ID() string { return t.id }

// storedSpec reads the experiment's spec as hone resume DIR does: its
// spec.yaml, relative paths resolved against the original spec's
// directory, deciding by the rules' version its origin records.
func storedSpec(dir string) (*spec.Spec, error) {
	p := filepath.Join(dir, "spec.yaml")
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read the stored spec: %w", err)
	}
	base, rules := dir, 1 // an origin without a version: version 1
	if o, err := os.ReadFile(filepath.Join(dir, "spec_origin.json")); err == nil {
		var or struct {
			SpecDir string `json:"spec_dir"`
			Rules   int    `json:"rules"`
		}
		if json.Unmarshal(o, &or) == nil {
			if or.SpecDir != "" {
				base = or.SpecDir
			}
			if or.Rules > 0 {
				rules = or.Rules
			}
		}
	}
	s, err := spec.Parse(data, p, base)
	if err != nil {
		return nil, fmt.Errorf("parse the stored spec: %w", err)
	}
	s.Rules = rules
	s.Storage, s.Name = filepath.Dir(dir), filepath.Base(dir)
	return s, nil
}

func intOf(v any) int {
	f, ok := hone.Number(v)
	if !ok {
		return -1
	}
	return int(f)
}

// readResultFile reads a trial's result.json; every line must be a JSON
// object (a torn or merged line is a problem).
func readResultFile(p string) ([]result, error) {
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []result
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		var row map[string]any
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			return out, fmt.Errorf("line %d is not a JSON object (%v): %.80q", n, err, sc.Bytes())
		}
		out = append(out, result{iter: intOf(row[hone.FieldTrainingIteration]), step: intOf(row["step"]), run: fmt.Sprint(row["run"])})
	}
	return out, sc.Err()
}

// readProgressFile reads a trial's progress.csv.
func readProgressFile(p string) ([]result, error) {
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, k := range []string{hone.FieldTrainingIteration, "step", "run"} {
		if _, ok := col[k]; !ok {
			return nil, fmt.Errorf("header has no column %q: %v", k, header)
		}
	}
	var out []result
	for n := 2; ; n++ {
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("record %d: %w", n, err)
		}
		get := func(k string) string {
			if i := col[k]; i < len(rec) {
				return rec[i]
			}
			return ""
		}
		it, err1 := strconv.Atoi(get(hone.FieldTrainingIteration))
		step, err2 := strconv.Atoi(get("step"))
		if err1 != nil || err2 != nil {
			return out, fmt.Errorf("record %d: training_iteration %q, step %q are not integers", n, get(hone.FieldTrainingIteration), get("step"))
		}
		out = append(out, result{iter: it, step: step, run: get("run")})
	}
}

// compareRows says how a file's rows differ from the journal's results,
// or returns "" when they are the same, once each, in order.
func compareRows(want, got []result) string {
	seen := map[[2]string]int{}
	for i, g := range got {
		k := [2]string{g.run, strconv.Itoa(g.step)}
		if j, ok := seen[k]; ok {
			return fmt.Sprintf("row %d repeats row %d (%v); file iterations %s, journal %s", i+1, j+1, g, iters(got), iters(want))
		}
		seen[k] = i
	}
	for i := 0; i < len(want) || i < len(got); i++ {
		switch {
		case i >= len(got):
			return fmt.Sprintf("%d of the journal's %d results are missing from the file, from %v on; file iterations %s, journal %s", len(want)-len(got), len(want), want[i], iters(got), iters(want))
		case i >= len(want):
			return fmt.Sprintf("the file has %d rows the journal does not hold, from %v on; file iterations %s, journal %s", len(got)-len(want), got[i], iters(got), iters(want))
		case got[i].iter != want[i].iter || got[i].step != want[i].step || got[i].run != want[i].run:
			return fmt.Sprintf("row %d is %v, the journal's result %d is %v; file iterations %s, journal %s", i+1, got[i], i+1, want[i], iters(got), iters(want))
		}
	}
	return ""
}

// iters renders a sequence of iterations compactly: 1-5,4-9.
func iters(rs []result) string {
	if len(rs) == 0 {
		return "(none)"
	}
	var b strings.Builder
	start := rs[0].iter
	for i := 1; i <= len(rs); i++ {
		if i < len(rs) && rs[i].iter == rs[i-1].iter+1 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if end := rs[i-1].iter; end != start {
			fmt.Fprintf(&b, "%d-%d", start, end)
		} else {
			fmt.Fprintf(&b, "%d", start)
		}
		if i < len(rs) {
			start = rs[i].iter
		}
	}
	return b.String()
}

// leftovers lists what a crash may leave that hone must clean: the store's
// temporary and trash directories, staged checkpoints and hone-* temporary
// directories, under root.
func leftovers(root string) []string {
	var out []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		name := d.Name()
		rel, _ := filepath.Rel(root, p)
		switch {
		case p == root:
		case strings.HasPrefix(name, ".tmp-"), strings.HasPrefix(name, ".trash-"), d.IsDir() && strings.HasPrefix(name, "hone-"):
			out = append(out, rel)
			if d.IsDir() {
				return filepath.SkipDir
			}
		case filepath.Base(filepath.Dir(p)) == ".staging":
			out = append(out, rel)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// dirEntries lists the names in dir.
func dirEntries(dir string) []string {
	es, _ := os.ReadDir(dir)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// fileHash returns the content of each trial's row files, to tell whether
// a later resume changed them.
func rowFiles(st *state) map[string]string {
	out := map[string]string{}
	for _, t := range st.trials {
		for _, f := range []string{"result.json", "progress.csv"} {
			b, _ := os.ReadFile(filepath.Join(t.dir, f))
			out[t.id+"/"+f] = string(b)
		}
	}
	return out
}

// Package scenario runs scenario scripts against a real controller: a
// script feeds it inputs (results, saves, exits, ticks, resumes) and pins
// the actions it answers with, in the style of etcd-raft's datadriven
// tests. Controller and scheduler tests share it.
package scenario

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/controller"
	"github.com/hone-tune/hone/stopper"
)

// SchedulerFactory makes the scheduler an "experiment" line names with
// scheduler=NAME; args are the line's other key=value pairs.
type SchedulerFactory func(args map[string]string) (hone.Scheduler, error)

// Run runs every scenario script matching glob as a subtest. A script is a
// sequence of blocks: a command line, "----", and the expected output,
// ending at an empty line; lines starting with # before the first block
// are kept as its header. With rewrite, the expected output is regenerated
// instead of compared (review the diff). Trials are named t0, t1, ... by
// creation order. Schedulers are chosen with "experiment scheduler=NAME":
// "script" (the default) is a FIFO scheduler whose decisions and Control
// calls the script queues with the decide, on-result and unpause commands;
// other names come from schedulers.
func Run(t *testing.T, glob string, rewrite bool, schedulers map[string]SchedulerFactory) {
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios match %s: %v", glob, err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runScript(t, f, rewrite, schedulers) })
	}
}

type block struct {
	comment   string // "#" lines just before the command, kept on rewrite
	cmd, want string
	line      int
}

func parseScript(t *testing.T, path string) []block {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []block
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	lineNo := 0
	var cur *block
	inWant := false
	comment := ""
	header := true // the file's leading comment is written separately
	for sc.Scan() {
		lineNo++
		l := sc.Text()
		switch {
		case cur == nil:
			if strings.HasPrefix(l, "#") {
				if !header {
					comment += l + "\n"
				}
				continue
			}
			if strings.TrimSpace(l) == "" {
				header = false
				continue
			}
			header = false
			cur = &block{cmd: l, line: lineNo, comment: comment}
			comment = ""
		case !inWant:
			if l != "----" {
				t.Fatalf("%s:%d: want ---- after command, got %q", path, lineNo, l)
			}
			inWant = true
		default:
			if l == "" {
				out = append(out, *cur)
				cur, inWant = nil, false
				continue
			}
			cur.want += l + "\n"
		}
	}
	if cur != nil {
		out = append(out, *cur)
	}
	return out
}

func runScript(t *testing.T, path string, rewrite bool, schedulers map[string]SchedulerFactory) {
	blocks := parseScript(t, path)
	h := &harness{t: t, factories: schedulers}
	var rewritten strings.Builder
	data, _ := os.ReadFile(path)
	// keep the header comments of the file when rewriting
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		rewritten.WriteString(l + "\n")
	}
	for _, b := range blocks {
		got := h.run(b.cmd)
		if rewrite {
			fmt.Fprintf(&rewritten, "\n%s%s\n----\n%s", b.comment, b.cmd, got)
			continue
		}
		if got != b.want {
			t.Errorf("%s:%d: %s\n--- got\n%s--- want\n%s", path, b.line, b.cmd, got, b.want)
		}
	}
	if rewrite {
		if err := os.WriteFile(path, []byte(strings.TrimLeft(rewritten.String(), "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// harness drives a Controller with script commands.
type harness struct {
	t     *testing.T
	c     *controller.Controller
	exp   *hone.Experiment
	now   time.Time
	sched *scriptScheduler // nil unless the scheduler is "script"
	srch  *listSearcher
	log   []hone.Event // every input, for replay
	names map[string]string

	factories map[string]SchedulerFactory
	schedName string
	args      map[string]string
	announced bool // the first session's executor announces starts
}

func (h *harness) name(id string) string {
	if tr := h.c.Trial(id); tr != nil {
		return fmt.Sprintf("t%d", tr.Index)
	}
	if n, ok := h.names[id]; ok {
		return n
	}
	return id
}

func (h *harness) trial(name string) *hone.Trial {
	for _, tr := range h.c.Trials() {
		if fmt.Sprintf("t%d", tr.Index) == name {
			return tr
		}
	}
	h.t.Fatalf("no trial %s", name)
	return nil
}

func (h *harness) run(cmd string) string {
	fields := strings.Fields(cmd)
	args := map[string]string{}
	var pos []string
	for _, f := range fields[1:] {
		if k, v, ok := strings.Cut(f, "="); ok {
			args[k] = v
		} else {
			pos = append(pos, f)
		}
	}
	if fields[0] == "experiment" {
		if err := h.setup(args); err != nil {
			return "error: " + err.Error() + "\n"
		}
		return "ok\n"
	}
	if at, ok := args["at"]; ok {
		d, err := time.ParseDuration(at)
		if err != nil {
			h.t.Fatalf("bad at=%q", at)
		}
		h.now = h.start().Add(d)
		delete(args, "at")
	} else {
		h.now = h.now.Add(time.Second)
	}
	in := hone.Event{Time: h.now.UnixNano()}
	switch fields[0] {
	case "begin":
		in.Kind = hone.EventBegin
	case "tick":
		in.Kind = hone.EventTick
	case "interrupt":
		in.Kind = hone.EventInterrupt
	case "resume":
		in.Kind = hone.EventResume
		f := hone.ResumeFlags{Unfinished: args["unfinished"] != "false"}
		if v, ok := args["starts"]; ok {
			// resume starts=announced|at-start: with an executor that
			// announces starts, or one whose trials run at Start.
			st := h.c.Settings()
			st.StartsAnnounced = startsAnnounced(h.t, v)
			f.Settings = &st
		}
		for _, p := range pos {
			switch p {
			case "errored":
				f.Errored = true
			case "restart":
				f.RestartErrored = true
			}
		}
		in.Resume = &f
	case "replay":
		return h.replay()
	case "result", "saved", "exited", "startfail", "started":
		tr := h.trial(pos[0])
		in.TrialID = tr.ID
		in.Kind = map[string]hone.EventKind{"result": hone.EventResult, "saved": hone.EventSaved, "exited": hone.EventExited,
			"startfail": hone.EventStartFailed, "started": hone.EventStarted}[fields[0]]
		if host, ok := args["host"]; ok {
			in.Hostname = host
			delete(args, "host")
		}
		if e, ok := args["err"]; ok {
			in.Err = strings.ReplaceAll(e, "_", " ")
			delete(args, "err")
		}
		for _, p := range pos[1:] {
			switch p {
			case "ckpt":
				idx, p, _ := h.c.NextCheckpointPath(tr.ID)
				in.Checkpoint = &hone.CheckpointRef{Index: idx, Path: p}
			case "done":
				in.Done = true
			}
		}
		if len(args) > 0 {
			in.Metrics = map[string]any{}
			for k, v := range args {
				if q, err := strconv.Unquote(v); err == nil {
					in.Metrics[k] = q // loss="0.5": a string
				} else if f, err := strconv.ParseFloat(v, 64); err == nil {
					in.Metrics[k] = f
				} else {
					in.Metrics[k] = v
				}
			}
		}
	case "decide":
		h.needScript(fields[0])
		// decide t1 pause|stop|continue|noop: the script scheduler's next decision for t1
		h.sched.next[h.trial(pos[0]).ID] = map[string]hone.Decision{"pause": hone.Pause, "stop": hone.Stop, "continue": hone.Continue, "noop": hone.Noop}[pos[1]]
		return "ok\n"
	case "on-result":
		h.needScript(fields[0])
		// on-result t1 <action...>: run a Control action during t1's next OnResult
		h.sched.hooks[h.trial(pos[0]).ID] = append(h.sched.hooks[h.trial(pos[0]).ID], pos[1:])
		return "ok\n"
	case "ctl":
		// ctl <action...>: call a Control action now (outside any decision)
		out := h.control(pos)
		return out + h.render(h.c.Ready())
	case "unpause":
		h.needScript(fields[0])
		h.sched.ready = append(h.sched.ready, h.trial(pos[0]).ID)
		return "ok\n"
	case "status":
		return h.status()
	case "checkpoints":
		return h.checkpoints(pos[0])
	default:
		h.t.Fatalf("unknown command %q", fields[0])
	}
	h.log = append(h.log, in)
	h.c.Step(in)
	return h.render(h.c.Ready())
}

func (h *harness) start() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

// setup makes the experiment of an "experiment" line; the error is
// controller.New's.
func (h *harness) setup(args map[string]string) error {
	atoi := func(k string, def int) int {
		if v, ok := args[k]; ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				h.t.Fatalf("%s=%q", k, v)
			}
			return n
		}
		return def
	}
	h.now = h.start()
	h.srch = &listSearcher{n: atoi("samples", 1), wait: args["wait"] == "true"}
	if args["log_search"] == "true" {
		h.srch.log = func(format string, a ...any) { h.c.Control().Logf(format, a...) }
	}
	h.schedName, h.args = args["scheduler"], args
	if h.schedName == "" {
		h.schedName = "script"
	}
	sched := h.newScheduler()
	exp := &hone.Experiment{
		Name: "scenario", Metric: args["metric"], Mode: hone.Mode(args["mode"]),
		Searcher: h.srch, Scheduler: sched,
		MaxConcurrentTrials: atoi("max_concurrent", 0),
		MaxPendingTrials:    atoi("pending", 0),
		Checkpoint: hone.CheckpointConfig{NumToKeep: atoi("num_to_keep", 0), ScoreAttribute: args["score"],
			ScoreOrder: hone.Mode(args["score_order"]), Frequency: atoi("frequency", 0), AtEnd: args["at_end"] == "true"},
		Failure: hone.FailureConfig{MaxFailures: atoi("max_failures", 0), FailFast: args["fail_fast"] == "true"},
		Seed:    1,
	}
	if v, ok := args["objectives"]; ok { // objectives=acc:max,lat:min
		for _, o := range strings.Split(v, ",") {
			m, mode, _ := strings.Cut(o, ":")
			exp.Objectives = append(exp.Objectives, hone.Objective{Metric: m, Mode: hone.Mode(mode)})
		}
	}
	if v, ok := args["constraints"]; ok { // constraints=mem:below:100,acc:above:0.5
		for _, c := range strings.Split(v, ",") {
			parts := strings.Split(c, ":")
			if len(parts) != 3 {
				h.t.Fatalf("constraints=%q: want metric:below|above:value, comma-separated", v)
			}
			f, err := strconv.ParseFloat(parts[2], 64)
			if err != nil || parts[1] != "below" && parts[1] != "above" {
				h.t.Fatalf("constraints=%q: want metric:below|above:value, comma-separated", v)
			}
			cn := hone.Constraint{Metric: parts[0], Below: &f}
			if parts[1] == "above" {
				cn.Below, cn.Above = nil, &f
			}
			exp.Constraints = append(exp.Constraints, cn)
		}
	}
	if v, ok := args["stop_iters"]; ok {
		n, _ := strconv.Atoi(v)
		exp.Stoppers = append(exp.Stoppers, stopper.MaxIterations(n))
	}
	if v, ok := args["stop_at"]; ok { // stop_at=field:value, a threshold (mode max)
		field, val, _ := strings.Cut(v, ":")
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			h.t.Fatalf("stop_at=%q: want field:value", v)
		}
		exp.Stoppers = append(exp.Stoppers, stopper.Threshold{Field: field, Value: f, Mode: hone.Max})
	}
	for k, f := range map[string]*time.Duration{"budget": &exp.TimeBudget, "trial_timeout": &exp.TrialTimeout, "report_timeout": &exp.ReportTimeout} {
		if v, ok := args[k]; ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				h.t.Fatalf("%s=%q: %v", k, v, err)
			}
			*f = d
		}
	}
	if v, ok := args["trial_cpu"]; ok {
		f, _ := strconv.ParseFloat(v, 64)
		exp.Resources = hone.Resources{CPU: f}
	}
	if v, ok := args["trial_cpu_fn"]; ok { // trials sized one by one (ResourcesFn)
		f, _ := strconv.ParseFloat(v, 64)
		exp.ResourcesFn = func(hone.Config) hone.Resources { return hone.Resources{CPU: f} }
	}
	pool := hone.Resources{CPU: float64(atoi("cpus", 8))}
	c, err := controller.New(exp, pool)
	if err != nil {
		return err
	}
	h.announced = startsAnnounced(h.t, args["starts"])
	c.SetStartsAnnounced(h.announced)
	h.c, h.exp, h.log = c, exp, nil
	return nil
}

// startsAnnounced reads starts=announced|at-start ("" is at-start): whether
// the executor announces when a started trial runs (a cluster's queue), or
// its trials run at Start.
func startsAnnounced(t *testing.T, v string) bool {
	switch v {
	case "announced":
		return true
	case "", "at-start":
		return false
	}
	t.Fatalf("starts=%q: want announced or at-start", v)
	return false
}

// replay rebuilds a fresh controller from every input so far (as resume
// does after a crash) and reports whether its trials match.
func (h *harness) replay() string {
	before := h.status()
	srch := &listSearcher{n: h.srch.n, wait: h.srch.wait, log: h.srch.log}
	old := h.sched
	sched := h.newScheduler()
	if old != nil {
		// The script scheduler's queued decisions were consumed in the
		// first run; replay needs them again, so it records what it decided.
		h.sched.replay = old.decided
	}
	exp := *h.exp
	exp.Searcher, exp.Scheduler = srch, sched
	c, err := controller.New(&exp, h.c.Pool())
	if err != nil {
		h.t.Fatal(err)
	}
	c.SetStartsAnnounced(h.announced) // as the runner takes it from the journal's header
	for _, in := range h.log {
		c.Step(in)
		c.Ready()
	}
	h.c, h.srch = c, srch
	if old != nil {
		h.sched.decided = old.decided
	}
	after := h.status()
	if before != after {
		return "replay differs:\n" + after
	}
	return "replay matches\n"
}

func (h *harness) control(pos []string) string {
	ctl := h.c.Control()
	tr := h.trial(pos[1])
	switch pos[0] {
	case "pause":
		ctl.PauseTrial(tr, len(pos) > 2 && pos[2] == "save")
	case "stop":
		ctl.StopTrial(tr)
	case "save":
		f := ctl.ScheduleSave(tr)
		if f.Done() {
			cp, err := f.Result()
			h.c.Control().Logf("future of %s resolved: %s err=%v", tr.ID, cpText(cp), err)
		} else {
			// Logged when the save resolves (scriptScheduler.OnTrialSave),
			// once per request.
			if h.sched.awaiting == nil {
				h.sched.awaiting = map[string]int{}
			}
			h.sched.awaiting[tr.ID]++
		}
		if h.sched.futures == nil {
			h.sched.futures = map[string]*hone.SaveFuture{}
		}
		if prev := h.sched.futures[tr.ID]; prev != nil && !prev.Done() {
			if prev == f {
				h.c.Control().Logf("same future as the one in flight")
			} else {
				h.c.Control().Logf("a second future while one is in flight")
			}
		}
		h.sched.futures[tr.ID] = f
	case "restore":
		// restore t1 t0: t1 restores from t0's latest checkpoint
		ctl.SetRestore(tr, h.c.Manager(h.trial(pos[2]).ID).Latest())
	case "config":
		ctl.SetConfig(tr, hone.Config{"x": pos[2]}, tr.Tag+"@perturbed[x="+pos[2]+"]")
	default:
		h.t.Fatalf("unknown control action %q", pos[0])
	}
	return ""
}

func (h *harness) render(acts []controller.Action) string {
	var b strings.Builder
	for _, a := range acts {
		switch a.Kind {
		case controller.ActRecord:
			r := a.Record
			switch r.Op {
			case "status":
				fmt.Fprintf(&b, "%s -> %s\n", h.name(r.Trial), r.Status)
			case "trial":
				if h.names == nil {
					h.names = map[string]string{}
				}
				h.names[r.Trial] = fmt.Sprintf("t%d", r.Index)
				fmt.Fprintf(&b, "%s added config=%s\n", h.name(r.Trial), cfgText(r.Config))
			case "ckpt":
				fmt.Fprintf(&b, "%s registered %s (iter %d)\n", h.name(r.Trial), filepath.Base(r.Path), r.Iteration)
			case "ckdel":
				fmt.Fprintf(&b, "%s deleted %s\n", h.name(r.Trial), filepath.Base(r.Path))
			case "config":
				fmt.Fprintf(&b, "%s config=%s tag=%s\n", h.name(r.Trial), cfgText(r.Config), r.Tag)
			case "drop":
				fmt.Fprintf(&b, "%s dropped\n", h.name(r.Trial))
			}
		case controller.ActStart:
			fmt.Fprintf(&b, "start %s restore=%s iter=%d\n", h.name(a.Trial.ID), h.cpName(a.Checkpoint), a.Iteration)
		case controller.ActDirect:
			fmt.Fprintf(&b, "direct %s %s\n", h.name(a.Trial.ID), a.Directive)
		case controller.ActDelete:
			fmt.Fprintf(&b, "delete %s\n", h.cpName(a.Checkpoint))
		case controller.ActNotify:
			if a.Note == controller.NoteError {
				fmt.Fprintf(&b, "error %s: %s\n", h.name(a.Trial.ID), a.Err)
			}
			if a.Note == controller.NoteEnd {
				b.WriteString("experiment end\n")
			}
		case controller.ActAppend:
			fmt.Fprintf(&b, "append %s: %s\n", h.ids(a.Path), h.ids(a.Text))
		case controller.ActCopy:
			fmt.Fprintf(&b, "copy %s -> %s\n", h.ids(a.Src), h.ids(a.Path))
		case controller.ActLog:
			fmt.Fprintf(&b, "log: %s\n", h.ids(a.Text))
		}
	}
	if b.Len() == 0 {
		return "(nothing)\n"
	}
	return b.String()
}

func (h *harness) ids(s string) string {
	for _, tr := range h.c.Trials() {
		s = strings.ReplaceAll(s, tr.Dir, fmt.Sprintf("t%d", tr.Index))
		s = strings.ReplaceAll(s, tr.ID, fmt.Sprintf("t%d", tr.Index))
	}
	return s
}

func (h *harness) cpName(cp *hone.Checkpoint) string {
	if cp == nil {
		return "-"
	}
	return fmt.Sprintf("%s/%s", h.name(cp.TrialID), cp.Name())
}

func (h *harness) status() string {
	var b strings.Builder
	for _, tr := range h.c.Trials() {
		fmt.Fprintf(&b, "t%d %s restore=%s failures=%d", tr.Index, tr.Status, h.cpName(tr.RestoreFrom), tr.Failures)
		if h.c.HasProcess(tr.ID) {
			b.WriteString(" alive")
		}
		if tr.Saving != nil {
			b.WriteString(" saving")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "done=%v", h.c.Done())
	if err := h.c.Err(); err != nil {
		fmt.Fprintf(&b, " err=%q", h.ids(err.Error()))
	}
	if stuck, _ := h.c.Stuck(); stuck {
		b.WriteString(" stuck")
	}
	b.WriteString("\n")
	return b.String()
}

func (h *harness) checkpoints(name string) string {
	m := h.c.Manager(h.trial(name).ID)
	var parts []string
	for _, cp := range m.Checkpoints() {
		p := cp.Name()
		if h.c.Pinned(cp.Path) {
			p += "(pinned)"
		}
		parts = append(parts, p)
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "(none)\n"
	}
	return strings.Join(parts, " ") + "\n"
}

// listSearcher suggests {"x": i} for i < n, then finishes. With a log
// function it reports the calls it gets.
type listSearcher struct {
	n, i      int
	wait      bool
	completed []string
	log       func(format string, args ...any)
}

// CheckObjectives accepts several objectives: the script's searcher
// learns from no result (hone.MultiObjective).
func (*listSearcher) CheckObjectives(hone.Objectives, hone.Constraints) error { return nil }

func (s *listSearcher) Suggest(string) (hone.Config, error) {
	if s.i >= s.n {
		return nil, hone.ErrSearchDone
	}
	if s.wait {
		return nil, hone.ErrNotNow
	}
	s.i++
	return hone.Config{"x": float64(s.i - 1)}, nil
}
func (s *listSearcher) OnResult(id string, _ *hone.Result) {
	if s.log != nil {
		s.log("search: OnResult %s", id)
	}
}
func (s *listSearcher) OnTrialComplete(id string, _ *hone.Result, failed bool) {
	s.completed = append(s.completed, id)
	if s.log != nil {
		s.log("search: OnTrialComplete %s failed=%v", id, failed)
	}
}

// scriptScheduler is FIFO plus decisions and Control actions queued by the
// script, and a ready-to-unpause list.
type scriptScheduler struct {
	h       *harness
	next    map[string]hone.Decision
	hooks   map[string][][]string
	ready   []string
	futures map[string]*hone.SaveFuture
	// awaiting counts the script's save requests per trial whose save is
	// in flight.
	awaiting map[string]int
	decided  []hone.Decision // every decision, in order (for replay)
	replay   []hone.Decision
}

func (s *scriptScheduler) OnTrialAdd(c hone.Control, t *hone.Trial) {
	c.Logf("sched: OnTrialAdd %s", t.ID)
}
func (s *scriptScheduler) OnResult(c hone.Control, t *hone.Trial, r *hone.Result) hone.Decision {
	if s.replay != nil {
		d := s.replay[0]
		s.replay = s.replay[1:]
		return d
	}
	for _, hook := range s.hooks[t.ID] {
		s.h.control(hook)
	}
	delete(s.hooks, t.ID)
	d, ok := s.next[t.ID]
	if !ok {
		d = hone.Continue
	}
	delete(s.next, t.ID)
	s.decided = append(s.decided, d)
	return d
}
func (s *scriptScheduler) OnTrialComplete(c hone.Control, t *hone.Trial, _ *hone.Result) {
	c.Logf("sched: OnTrialComplete %s", t.ID)
}
func (s *scriptScheduler) OnTrialError(c hone.Control, t *hone.Trial) {
	c.Logf("sched: OnTrialError %s", t.ID)
}
func (s *scriptScheduler) OnTrialRemove(c hone.Control, t *hone.Trial) {
	c.Logf("sched: OnTrialRemove %s", t.ID)
}

// OnTrialSave implements hone.SaveListener: it logs the resolution of the
// save the script asked for, once per request.
func (s *scriptScheduler) OnTrialSave(c hone.Control, t *hone.Trial, cp *hone.Checkpoint, err error) {
	for range s.awaiting[t.ID] {
		c.Logf("future of %s resolved: %s err=%v", t.ID, cpText(cp), err)
	}
	delete(s.awaiting, t.ID)
}

func (s *scriptScheduler) ChooseTrialToRun(c hone.Control) *hone.Trial {
	for _, tr := range c.Trials() {
		if tr.Status == hone.StatusPending {
			return tr
		}
	}
	for i, id := range s.ready {
		if tr := c.Trial(id); tr != nil && tr.Status == hone.StatusPaused {
			s.ready = append(s.ready[:i], s.ready[i+1:]...)
			return tr
		}
	}
	return nil
}

// newScheduler makes the experiment's scheduler; for "script" it also sets
// h.sched.
func (h *harness) newScheduler() hone.Scheduler {
	if h.schedName == "script" {
		h.sched = &scriptScheduler{h: h, next: map[string]hone.Decision{}, hooks: map[string][][]string{}}
		return h.sched
	}
	h.sched = nil
	f, ok := h.factories[h.schedName]
	if !ok {
		h.t.Fatalf("unknown scheduler %q", h.schedName)
	}
	sc, err := f(h.args)
	if err != nil {
		h.t.Fatalf("scheduler %s: %v", h.schedName, err)
	}
	return sc
}

func (h *harness) needScript(cmd string) {
	if h.sched == nil {
		h.t.Fatalf("%s needs scheduler=script", cmd)
	}
}

// cfgText renders a configuration as sorted "k=v" pairs.
func cfgText(cfg hone.Config) string {
	var parts []string
	hone.Flatten("", map[string]any(cfg), func(k string, v any) { parts = append(parts, fmt.Sprintf("%s=%v", k, v)) })
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func cpText(cp *hone.Checkpoint) string {
	if cp == nil {
		return "scratch"
	}
	return cp.Path
}

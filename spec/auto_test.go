package spec

import (
	"fmt"
	"github.com/hone-tune/hone"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hone-tune/hone/scheduler/asha"
	"github.com/hone-tune/hone/scheduler/fifo"
	"github.com/hone-tune/hone/scheduler/hyperband"
	"github.com/hone-tune/hone/search"
	"github.com/hone-tune/hone/search/bohb"
	"github.com/hone-tune/hone/search/nsga2"
	"github.com/hone-tune/hone/search/random"
	"github.com/hone-tune/hone/search/tpe"
)

const autoBase = `command: [x]
metric: loss
num_samples: 100
search_space:
  lr: {loguniform: [0.0001, 0.1]}
  width: {choice: [16, 32, 64]}
searcher: auto
scheduler: auto
`

// autoSpec returns autoBase with the top-level keys of extra (one line
// each, or indented blocks) in place of its own.
func autoSpec(extra string) string {
	blocks := func(src string) (keys []string, body map[string]string) {
		body = map[string]string{}
		var cur string
		for _, l := range strings.SplitAfter(src, "\n") {
			if l == "" {
				continue
			}
			if !strings.HasPrefix(l, " ") {
				cur, _, _ = strings.Cut(l, ":")
				if _, seen := body[cur]; !seen {
					keys = append(keys, cur)
				}
				body[cur] = ""
			}
			body[cur] += l
		}
		return keys, body
	}
	keys, body := blocks(autoBase)
	ek, eb := blocks(extra)
	for _, k := range ek {
		if _, ok := body[k]; !ok {
			keys = append(keys, k)
		}
		body[k] = eb[k]
	}
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(body[k])
	}
	return b.String()
}

// TestAutoTable pins the rows of the table in docs/SEMANTICS.md §5.
func TestAutoTable(t *testing.T) {
	for _, tc := range []struct {
		name, extra         string
		searcher, scheduler string
	}{
		{"no budget", "", "tpe", "fifo"},
		{"training_iteration", "stop: {training_iteration: 100}\n", "tpe", "asha (time_attr training_iteration, max_t 100, grace_period 3.7037037037037037, reduction_factor 3, promotion top)"},
		{"power of three", "stop: {training_iteration: 81}\n", "tpe", "asha (time_attr training_iteration, max_t 81, grace_period 3, reduction_factor 3, promotion top)"},
		{"scheduler max_t", "scheduler: {name: auto, time_attr: epoch, max_t: 30}\n", "tpe", "asha (time_attr epoch, max_t 30, grace_period 1.1111111111111112, reduction_factor 3, promotion top)"},
		{"two rungs", "stop: {training_iteration: 10}\n", "tpe", "asha (time_attr training_iteration, max_t 10, grace_period 1.1111111111111112, reduction_factor 3, promotion top)"},
		{"shortest", "stop: {training_iteration: 9}\n", "tpe", "asha (time_attr training_iteration, max_t 9, grace_period 1, reduction_factor 3, promotion top)"},
		{"max_t too short", "stop: {training_iteration: 8}\n", "tpe", "fifo"},
		{"time attr without max_t", "scheduler: {name: auto, time_attr: epoch}\nstop: {training_iteration: 100}\n", "tpe", "fifo"},
		{"few samples", "num_samples: 19\n", "random", "fifo"},
		{"enough samples", "num_samples: 20\n", "tpe", "fifo"},
		{"few samples for the concurrency", "num_samples: 30\nmax_concurrent_trials: 16\n", "random", "fifo"},
		{"searcher concurrency", "num_samples: 30\nsearcher: {name: auto, max_concurrent: 16}\n", "random", "fifo"},
		{"unbounded", "num_samples: -1\nmax_concurrent_trials: 64\n", "tpe", "fifo"},
		{"grid", "search_space: {lr: {grid: [1, 2]}, x: {uniform: [0, 1]}}\n", "random", "fifo"},
		{"constants only", "search_space: {lr: 1}\n", "random", "fifo"},
		{"no metric", "metric: null\nstop: {training_iteration: 100}\n", "random", "fifo"},
		{"pbt", "scheduler: {name: pbt, hyperparam_mutations: {lr: [0.1, 0.01]}}\n", "random", "pbt"},
		{"hyperband for bohb", "scheduler: {name: hyperband_for_bohb, max_t: 27}\n", "bohb", "hyperband_for_bohb"},
		{"named asha", "scheduler: {name: asha, max_t: 27}\n", "tpe", "asha"},
		{"bohb, auto scheduler", "searcher: bohb\nstop: {training_iteration: 27}\n", "bohb", "hyperband_for_bohb (max_t 27)"},
		{"bohb without a budget", "searcher: bohb\n", "bohb", "hyperband_for_bohb (max_t 81)"},
		{"several objectives", "metric: null\nobjectives: [{metric: loss}, {metric: ms}]\nstop: {training_iteration: 100}\n", "tpe", "asha (time_attr training_iteration, max_t 100, grace_period 3.7037037037037037, reduction_factor 3, promotion top)"},
		{"several objectives, few samples", "metric: null\nobjectives: [{metric: loss}, {metric: ms}]\nnum_samples: 19\n", "random", "fifo"},
		{"several objectives, many samples", "metric: null\nobjectives: [{metric: loss}, {metric: ms}]\nnum_samples: 1000\n", "nsga2", "fifo"},
		{"several objectives, unbounded", "metric: null\nobjectives: [{metric: loss}, {metric: ms}]\nnum_samples: -1\n", "nsga2", "fifo"},
		{"several objectives, grid", "metric: null\nobjectives: [{metric: loss}, {metric: ms}]\nsearch_space: {lr: {grid: [1, 2]}}\n", "random", "fifo"},
		{"a constraint", "constraints: [{metric: mem, below: 1}]\n", "tpe", "fifo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parse(t, autoSpec(tc.extra))
			if err != nil {
				t.Fatal(err)
			}
			ch := s.auto()
			if ch.Searcher != tc.searcher || ch.schedulerText() != tc.scheduler {
				t.Fatalf("auto chose searcher %s, scheduler %s; want %s, %s\n%s\n%s", ch.Searcher, ch.schedulerText(), tc.searcher, tc.scheduler, ch.SearcherWhy, ch.SchedulerWhy)
			}
			lines := s.AutoChoices()
			if len(lines) == 0 || !strings.HasPrefix(lines[0], "searcher auto: ") && !strings.HasPrefix(lines[0], "scheduler auto: ") {
				t.Fatalf("AutoChoices() = %q", lines)
			}
			for _, l := range lines {
				if strings.HasSuffix(l, ": ") {
					t.Fatalf("a choice without its reason: %q", l)
				}
			}
			// What it builds is what it says.
			sr, sc := s.check(&collector{lines: map[string]pos{}})
			if sr == nil || sc == nil {
				t.Fatal("the spec did not build")
			}
			if l, ok := sr.(*search.StatefulLimiter); ok {
				sr = l.Inner()
			}
			var gotSr, gotSc string
			switch sr.(type) {
			case *random.Searcher:
				gotSr = "random"
			case *tpe.Searcher:
				gotSr = "tpe"
			case *bohb.Searcher:
				gotSr = "bohb"
			case *nsga2.Searcher:
				gotSr = "nsga2"
			}
			switch sc.(type) {
			case *fifo.Scheduler:
				gotSc = "fifo"
			case *asha.Scheduler:
				gotSc = "asha"
			case *hyperband.Scheduler:
				gotSc = "hyperband_for_bohb"
			default:
				gotSc = ch.Scheduler
			}
			if gotSr != ch.Searcher || gotSc != ch.Scheduler {
				t.Fatalf("built %T and %T for %s and %s", sr, sc, ch.Searcher, ch.Scheduler)
			}
			if a, ok := sc.(*asha.Scheduler); ok && ch.ASHA.MaxT > 0 {
				attr, rungs := a.Rungs()
				if attr != ch.ASHA.TimeAttr || rungs[len(rungs)-1] != ch.ASHA.MaxT || len(rungs) < 3 {
					t.Fatalf("asha rungs %s %v for %+v", attr, rungs, ch.ASHA)
				}
			}
		})
	}
}

// TestAutoASHAAnchored pins that auto's ASHA ends its rungs at max_t: for
// every budget from 9 to 3000 steps, and fractional ones, the grace period
// is at least 1, the top milestone ASHA builds is max_t, or a hair below
// it, never above (where no trial would reach it), and there are two or
// three rungs below it (three from 27 on).
func TestAutoASHAAnchored(t *testing.T) {
	budgets := []float64{9.5, 10.25, 26.999, 27.5, 99.9, 1e6 + 0.1}
	for m := 9; m <= 3000; m++ {
		budgets = append(budgets, float64(m))
	}
	for _, maxT := range budgets {
		cfg := AutoASHA("epoch", maxT)
		sc, err := asha.New(cfg)
		if err != nil {
			t.Fatalf("max_t %v: %v", maxT, err)
		}
		ms := sc.Milestones(0)
		if cfg.GracePeriod < 1 || ms[0] != cfg.GracePeriod {
			t.Fatalf("max_t %v: grace %v, milestones %v", maxT, cfg.GracePeriod, ms)
		}
		// max_t itself, or, where no float times 27 (or 9) is max_t (29,
		// 55, ...), a hair below it: a trial that reaches max_t records
		// there.
		if top := ms[len(ms)-1]; top > maxT || top < maxT*(1-1e-12) {
			t.Fatalf("max_t %v: top milestone %v (%v)", maxT, top, ms)
		}
		if below := len(ms) - 1; below < 2 || below > 3 || (maxT >= 27 && below != 3) {
			t.Fatalf("max_t %v: %d rungs below max_t (%v)", maxT, below, ms)
		}
	}
}

// An experiment started under rules version 1 (Spec.Rules) gets the
// grace period auto gave then, max(1, ⌊max_t/27⌋); version 2 (and 0, the
// current version) anchors the rungs at max_t.
func TestAutoLegacyRules(t *testing.T) {
	for _, tc := range []struct {
		rules int
		grace float64
	}{{0, 2}, {RulesVersion, 2}, {1, 1}} {
		s, err := parse(t, autoSpec("stop: {training_iteration: 18}\n"))
		if err != nil {
			t.Fatal(err)
		}
		s.Rules = tc.rules
		want := fmt.Sprintf("asha (time_attr training_iteration, max_t 18, grace_period %s, reduction_factor 3, promotion top)", formatNum(tc.grace))
		if got := s.auto().schedulerText(); got != want {
			t.Errorf("rules %d: %s, want %s", tc.rules, got, want)
		}
		plan, err := Build(s, t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		grace := plan.Experiment.Scheduler.(*asha.Scheduler).Config().GracePeriod
		plan.Close()
		if grace != tc.grace {
			t.Errorf("rules %d: the built ASHA's grace period %v, want %v", tc.rules, grace, tc.grace)
		}
	}
}

// Under rules version 1 the fidelity check judged each rung against the
// next one only; the TPE a spec builds follows the experiment's version.
// The rungs here (1, 3, 9, 27) each agree with the next while rung 1 ranks
// in reverse of 27 and rung 3 nearly so: version 1 trusts every rung,
// version 2 distrusts 1 and 3.
func TestLegacyRulesFidelityLinks(t *testing.T) {
	perm := []float64{5, 10, 2, 7, 0, 11, 3, 8, 1, 6, 9, 4}
	rungs := []int{1, 3, 9, 27}
	loss := func(i, k int) float64 {
		th := math.Pi * float64(k) / 3
		return -math.Cos(th)*(float64(i)-5.5) + math.Sin(th)*(perm[i]-5.5)
	}
	for _, tc := range []struct{ rules, floor int }{{1, 1}, {RulesVersion, 9}} {
		s, err := parse(t, autoSpec("stop: {training_iteration: 27}\nsearcher: tpe\n"))
		if err != nil {
			t.Fatal(err)
		}
		s.Rules = tc.rules
		plan, err := Build(s, t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		tp := plan.Experiment.Searcher.(*tpe.Searcher)
		for i := range perm {
			id := fmt.Sprint("t", i)
			if _, err := tp.Suggest(id); err != nil {
				t.Fatal(err)
			}
			for k, u := range rungs {
				tp.OnResult(id, &hone.Result{TrainingIteration: u, Metrics: map[string]any{"loss": loss(i, k)}})
			}
		}
		plan.Close()
		if f := tp.Floor(); f != float64(tc.floor) {
			t.Errorf("rules %d: floor %v, want %d; links %+v", tc.rules, f, tc.floor, tp.Links())
		}
	}
}

// The plan wires the scheduler's rungs into TPE and TPE into the
// scheduler as its advisor; with max_concurrent the searcher is limited.
func TestBuildWiresFidelity(t *testing.T) {
	s, err := parse(t, autoSpec("stop: {training_iteration: 81}\nsearcher: {name: tpe, max_concurrent: 4}\n"))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Build(s, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	l, ok := plan.Experiment.Searcher.(*search.StatefulLimiter)
	if !ok {
		t.Fatalf("searcher %T, want a limiter", plan.Experiment.Searcher)
	}
	tp := l.Inner().(*tpe.Searcher)
	attr, rungs := tp.Rungs()
	if attr != "training_iteration" || !slices.Equal(rungs, []float64{3, 9, 27, 81}) {
		t.Fatalf("tpe rungs %s %v, want ASHA's 3, 9, 27, 81", attr, rungs)
	}
	sc := plan.Experiment.Scheduler.(*asha.Scheduler)
	if _, r := sc.Rungs(); !slices.Equal(r, rungs) {
		t.Fatalf("asha rungs %v", r)
	}
	if p := sc.Config().Promotion; p != asha.PromoteTop {
		t.Fatalf("scheduler: auto built ASHA with promotion %q, want %q", p, asha.PromoteTop)
	}
	if sc.Advisor() != tp {
		t.Fatalf("asha's advisor is %v, want the tpe searcher", sc.Advisor())
	}

	// With fidelity_check off TPE still gets the rungs; ASHA gets an
	// advisor whose floor is always 0.
	s, err = parse(t, autoSpec("stop: {training_iteration: 81}\nsearcher: {name: tpe, fidelity_check: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	plan2, err := Build(s, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plan2.Close()
	if tp := plan2.Experiment.Searcher.(*tpe.Searcher); tp.Floor() != 0 {
		t.Fatal("floor without the check")
	}
}

func TestTPEParams(t *testing.T) {
	s, err := parse(t, autoSpec("searcher: {name: tpe, multivariate: false, constant_liar: false, fidelity_check: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(s, t.TempDir(), nil); err != nil {
		t.Fatal(err)
	}
	_, err = parse(t, autoSpec("searcher: {name: tpe, multivariate: yes please, constant_liar: 1}\nscheduler: {name: auto, max_t: -1, time_attr: \"\"}\n"))
	got := messages(t, err)
	want := []string{
		`experiment.yaml:7: searcher.multivariate: want true or false, got "yes please"`,
		`experiment.yaml:7: searcher.constant_liar: want true or false, got 1`,
		`experiment.yaml:8: scheduler.max_t: must be > 0, got -1`,
		`experiment.yaml:8: scheduler.time_attr: must not be empty`,
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("missing error %q in\n%s", w, strings.Join(got, "\n"))
		}
	}
	_, err = parse(t, autoSpec("searcher: {name: auto, n_startup_trials: 3}\n"))
	if got := messages(t, err); len(got) != 1 || !strings.Contains(got[0], "searcher.n_startup_trials: unknown key for searcher auto") {
		t.Errorf("errors %q", got)
	}
}

// A resume whose spec makes auto choose otherwise is refused, naming the
// choice; one that changes max_concurrent_trials without changing the
// choice is allowed.
func TestCompareAuto(t *testing.T) {
	dir := t.TempDir()
	load := func(src string) *Spec {
		t.Helper()
		p := filepath.Join(dir, "e.yaml")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	base := autoSpec("num_samples: 30\n")
	old := load(base + "max_concurrent_trials: 2\n")
	refused, allowed := Compare(old, load(base+"max_concurrent_trials: 16\n"))
	if !slices.Equal(refused, []string{`searcher.auto: "tpe" -> "random"`}) {
		t.Errorf("refused %q", refused)
	}
	if !slices.Equal(allowed, []string{"max_concurrent_trials: 2 -> 16"}) {
		t.Errorf("allowed %q", allowed)
	}
	refused, allowed = Compare(old, load(base+"max_concurrent_trials: 4\n"))
	if len(refused) != 0 || len(allowed) != 1 {
		t.Errorf("refused %q, allowed %q", refused, allowed)
	}
	refused, _ = Compare(load(base+"stop: {training_iteration: 27}\n"), load(base+"stop: {training_iteration: 81}\n"))
	want := []string{
		`scheduler.auto: "asha (time_attr training_iteration, max_t 27, grace_period 1, reduction_factor 3, promotion top)" -> "asha (time_attr training_iteration, max_t 81, grace_period 3, reduction_factor 3, promotion top)"`,
		"stop.training_iteration: 27 -> 81",
	}
	if !slices.Equal(refused, want) {
		t.Errorf("refused %q, want %q", refused, want)
	}
}

// Asynchronous BOHB: the plan marks ASHA's rung results for the bohb
// searcher and makes the searcher ASHA's advisor (docs/SEMANTICS.md §4),
// so that no trial stops at a rung the fidelity rule distrusts.
func TestBuildWiresAsyncBOHB(t *testing.T) {
	s, err := parse(t, autoSpec("searcher: bohb\nscheduler: {name: asha, max_t: 27, grace_period: 1, reduction_factor: 3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Build(s, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	b, ok := plan.Experiment.Searcher.(*bohb.Searcher)
	if !ok {
		t.Fatalf("searcher %T, want bohb", plan.Experiment.Searcher)
	}
	sc := plan.Experiment.Scheduler.(*asha.Scheduler)
	if !sc.Config().BudgetInfo {
		t.Error("asha does not mark its rung results for the bohb searcher")
	}
	if sc.Advisor() != b {
		t.Errorf("asha's advisor is %v, want the bohb searcher", sc.Advisor())
	}
}

// TestRunningTrialsRules: from rules version 3 TPE at rungs leaves the
// trials still running out of its bad observations; an experiment started
// under version 1 or 2 keeps counting them (tpe.Options.RunningBad). The
// same calls then give the same suggestions within each group and
// different ones across.
func TestRunningTrialsRules(t *testing.T) {
	suggest := func(rules int) string {
		s, err := parse(t, autoSpec("stop: {training_iteration: 27}\nsearcher: tpe\n"))
		if err != nil {
			t.Fatal(err)
		}
		s.Rules = rules
		plan, err := Build(s, t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer plan.Close()
		tp := plan.Experiment.Searcher.(*tpe.Searcher)
		var out []string
		for i := range 30 {
			id := fmt.Sprint("t", i)
			cfg, err := tp.Suggest(id)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(cfg))
			// Every third trial stays running after its first rung,
			// where it did well; the others stop there.
			loss := float64((i * 7) % 11)
			if i%3 == 0 {
				loss = -1
			}
			tp.OnResult(id, &hone.Result{TrainingIteration: 1, Metrics: map[string]any{"loss": loss}})
			if i%3 != 0 {
				tp.OnTrialComplete(id, nil, false)
			}
		}
		return strings.Join(out, "\n")
	}
	current, v3, v2, v1 := suggest(0), suggest(3), suggest(2), suggest(1)
	if current != v3 || v2 != v1 {
		t.Fatal("versions 0 and 3, or 1 and 2, suggested differently")
	}
	if current == v2 {
		t.Fatal("versions 2 and 3 suggested the same: the running trials' rule does not follow the experiment's version")
	}
}

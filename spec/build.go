package spec

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"strings"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/callback"
	"github.com/hone-tune/hone/progress"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/scheduler/hyperband"
	"github.com/hone-tune/hone/search"
	"github.com/hone-tune/hone/search/fidelity"
	"github.com/hone-tune/hone/stopper"
)

// Plan is a spec made runnable: the experiment, the runner options and how
// each trial's process starts. The caller makes the executor from Process
// (cmd/hone uses the process executor), sets Options.Executor, runs or
// resumes, and then calls Close.
type Plan struct {
	Experiment *hone.Experiment
	// Options has Dir, Pool and StopGrace set; Executor is left nil.
	Options runner.Options
	Process Process
	files   *callback.TrialFiles
}

// Process says how each trial's process is started.
type Process struct {
	Command   []string      // argv
	Env       []string      // "K=V", sorted, added to the environment
	Dir       string        // the working directory (absolute)
	StopGrace time.Duration // from asking a trial to stop to killing it
	GPUs      int           // the machine's GPUs, handed out to trials
	// ExperimentDir is the experiment's directory (absolute, local).
	ExperimentDir string
	// Store is the URL of the experiment's object store, when it lives in
	// one (ExperimentDir is then its local working copy): an executor
	// whose trials run on other machines has them commit their
	// checkpoints there themselves.
	Store string
	build *executorBuild
}

// minStopGrace is the least time an interrupted experiment waits for its
// trials to save and stop.
const minStopGrace = 30 * time.Second

// Build turns a valid spec into a Plan for the experiment directory dir.
// The experiment writes the per-trial files (callback.TrialFiles) under dir
// and, if stdout is not nil, a progress table to stdout. Build validates s
// first and returns the same Errors as Validate (which include a trial
// needing more CPUs or memory than the machine has). Options.Pool is the
// machine: its CPUs, the spec's gpus and custom_resources, and its memory
// (physical memory, or the control group's limit if lower; 0, no limit,
// where it cannot be read).
func Build(s *Spec, dir string, stdout io.Writer) (*Plan, error) {
	c := &collector{file: s.file, lines: s.lines}
	sr, sc := s.check(c)
	if err := c.result(); err != nil {
		return nil, err
	}
	m := thisMachine()
	pool := hone.Resources{
		CPU:    float64(m.cpus),
		GPU:    float64(s.GPUs),
		Memory: m.memory,
		Custom: maps.Clone(s.CustomResources),
	}
	if s.executor != nil && s.executor.pool != nil {
		p, nodes, err := s.executor.pool(context.Background())
		if err != nil {
			return nil, fmt.Errorf("the %s executor's resources: %w", s.Executor.Name, err)
		}
		pool = p
		// The cluster's pool is known only now: a trial it can never
		// hold, or that no single node can, is an error of the spec,
		// before any trial starts.
		c := &collector{file: s.file, lines: s.lines}
		s.checkPool(c, pool, "the "+s.Executor.Name+" executor's pool")
		if c.result() == nil {
			s.checkNodes(c, nodes, "the "+s.Executor.Name+" executor's pool")
		}
		if err := c.result(); err != nil {
			return nil, err
		}
	}
	files := callback.NewTrialFiles(dir)
	callbacks := []hone.Callback{files}
	if stdout != nil {
		var opts []progress.Option
		if objs := s.ResolvedObjectives(); len(objs) > 0 {
			opts = append(opts, progress.WithObjectives(objs, s.Constraints))
		}
		callbacks = append(callbacks, progress.New(stdout, opts...))
	}
	exp := s.experiment(sr, sc)
	exp.Callbacks = callbacks
	if err := exp.Validate(); err != nil {
		return nil, fmt.Errorf("build experiment: %w", err)
	}
	env := make([]string, 0, len(s.Env))
	for _, k := range sortedKeys(s.Env) {
		env = append(env, k+"="+s.Env[k])
	}
	return &Plan{
		Experiment: exp,
		Options: runner.Options{
			Dir:       dir,
			Pool:      pool,
			StopGrace: max(minStopGrace, 2*s.StopGrace),
		},
		Process: Process{
			Command:       append([]string(nil), s.Command...),
			Env:           env,
			Dir:           s.WorkingDir,
			StopGrace:     s.StopGrace,
			GPUs:          s.GPUs,
			build:         s.executor,
			ExperimentDir: absDir(dir),
		},
		files: files,
	}, nil
}

// BuildReplay makes the spec's experiment as Build does, searcher and
// scheduler wired alike, but without callbacks, executor or resource pool,
// and checking only what the searcher and the scheduler need: it is for
// readers that rebuild the state of an experiment by replaying its journal
// into a controller (as a resume does) and run nothing, so s may come from
// Decode and its command need not exist on this machine.
func (s *Spec) BuildReplay() (*hone.Experiment, error) {
	c := &collector{file: s.file, lines: s.lines}
	buildSearcher := s.readSearcher(c)
	buildScheduler := s.readScheduler(c)
	if err := c.result(); err != nil {
		return nil, err
	}
	if buildSearcher == nil || buildScheduler == nil {
		return nil, fmt.Errorf("searcher %q or scheduler %q: cannot be built", s.Searcher.Name, s.Scheduler.Name)
	}
	sr, err := buildSearcher(s)
	if err != nil {
		return nil, fmt.Errorf("searcher %s: %w", s.Searcher.Name, err)
	}
	sc, err := buildScheduler(s)
	if err != nil {
		return nil, fmt.Errorf("scheduler %s: %w", s.Scheduler.Name, err)
	}
	if b, ok := sc.(interface{ Bind(hone.Searcher) error }); ok {
		if err := b.Bind(sr); err != nil {
			return nil, fmt.Errorf("scheduler %s: %w", s.Scheduler.Name, err)
		}
	}
	exp := s.experiment(sr, sc)
	if err := exp.Validate(); err != nil {
		return nil, fmt.Errorf("build experiment: %w", err)
	}
	return exp, nil
}

// experiment wires the searcher and the scheduler together as a run needs
// them and returns the experiment without callbacks.
func (s *Spec) experiment(sr hone.Searcher, sc hone.Scheduler) *hone.Experiment {
	// HyperBand for BOHB tells the BOHB searcher of pauses, so paused
	// trials do not count against its concurrency limit.
	if ps, ok := sc.(interface{ SetPauser(hyperband.Pauser) }); ok {
		if p, ok := sr.(hyperband.Pauser); ok {
			ps.SetPauser(p)
		}
	}
	wireFidelity(sr, sc)
	// A searcher that counts its own live trials (BOHB and DEHB leave out
	// paused ones) applies max_concurrent itself.
	_, pauser := sr.(hyperband.Pauser)
	_, counts := sr.(interface{ Live() int })
	if s.Searcher.MaxConcurrent > 0 && !pauser && !counts {
		sr = search.Limit(sr, s.Searcher.MaxConcurrent)
	}
	metric, mode := s.Metric, s.Mode
	if len(s.Objectives) > 0 {
		metric, mode = "", "" // Objectives holds them all
	}
	return &hone.Experiment{
		Name:                s.Name,
		Trainable:           s.Trainable,
		Metric:              metric,
		Mode:                mode,
		Objectives:          s.Objectives,
		Constraints:         s.Constraints,
		Searcher:            sr,
		Scheduler:           sc,
		Stoppers:            s.stoppers(),
		MaxConcurrentTrials: s.MaxConcurrentTrials,
		MaxPendingTrials:    s.MaxPendingTrials,
		TrialTimeout:        s.TrialTimeout,
		ReportTimeout:       s.ReportTimeout,
		Resources:           s.Resources,
		Checkpoint:          s.Checkpoint,
		Failure:             s.Failure,
		TimeBudget:          s.Stop.TimeBudget,
		Seed:                s.Seed,
	}
}

// wireFidelity hands a searcher that models results at rungs (TPE) the
// rungs of a scheduler that has them (ASHA, HyperBand), and a scheduler
// that follows a fidelity advisor the searcher, when it is one (TPE, BOHB;
// docs/SEMANTICS.md §5).
func wireFidelity(sr hone.Searcher, sc hone.Scheduler) {
	if u, ok := sr.(fidelity.RungUser); ok {
		if src, ok := sc.(fidelity.RungSource); ok {
			u.SetRungs(src.Rungs())
		}
	}
	if u, ok := sc.(fidelity.AdvisorUser); ok {
		if a, ok := sr.(fidelity.Advisor); ok {
			u.SetAdvisor(a)
		}
	}
}

// Close flushes and closes the per-trial files and returns the first error
// met while writing them.
func (p *Plan) Close() error {
	if err := p.files.Close(); err != nil {
		return fmt.Errorf("trial files: %w", err)
	}
	return nil
}

// stoppers returns the stop conditions as hone.Stoppers, in a fixed order:
// the iteration limit, the thresholds as written, the plateau.
func (s *Spec) stoppers() []hone.Stopper {
	var out []hone.Stopper
	if n := s.Stop.TrainingIteration; n > 0 {
		out = append(out, stopper.MaxIterations(n))
	}
	for _, th := range s.Stop.Thresholds {
		out = append(out, stopper.Threshold{Field: th.Field, Value: th.Value, Mode: th.Mode})
	}
	if pl := s.Stop.Plateau; pl != nil {
		metric := pl.Metric
		if metric == "" {
			metric = s.Metric
		}
		out = append(out, &stopper.Plateau{Metric: metric, Std: pl.Std, NumResults: pl.NumResults, GracePeriod: pl.GracePeriod})
	}
	return out
}

// checkPool reports, at the resources key, each resource of which a trial
// needs more than pool, the pool's figure named by what.
func (s *Spec) checkPool(c *collector, pool hone.Resources, what string) {
	r := s.Resources
	if r.CPU > pool.CPU {
		c.errorf("resources.cpu", "each trial needs %s CPUs but %s has %s", formatNum(r.CPU), what, formatNum(pool.CPU))
	}
	if r.GPU > pool.GPU {
		c.errorf("resources.gpu", "each trial needs %s GPU(s) but %s has %s", formatNum(r.GPU), what, formatNum(pool.GPU))
	}
	if pool.Memory > 0 && r.Memory > pool.Memory {
		c.errorf("resources.memory", "each trial needs %s but %s has %s", formatSize(r.Memory), what, formatSize(pool.Memory))
	}
	for _, k := range sortedKeys(r.Custom) {
		if r.Custom[k] > pool.Custom[k] {
			c.errorf(join("resources.custom", k), "each trial needs %s but %s has %s", formatNum(r.Custom[k]), what, formatNum(pool.Custom[k]))
		}
	}
}

// checkNodes reports a trial that no node of nodes can hold although the
// pool they make up can: a trial runs on one node. It names the first
// resource no node has enough of, or, if each is on some node but never
// all on one, the resources key.
func (s *Spec) checkNodes(c *collector, nodes []node, what string) {
	if len(nodes) == 0 {
		return
	}
	r := s.Resources
	var most node
	for _, n := range nodes {
		if r.CPU <= n.CPU && r.GPU <= n.GPU && (n.Memory == 0 || r.Memory <= n.Memory) {
			return
		}
		most.CPU, most.GPU, most.Memory = max(most.CPU, n.CPU), max(most.GPU, n.GPU), max(most.Memory, n.Memory)
	}
	const one = "each trial runs on one node"
	switch {
	case r.CPU > most.CPU:
		c.errorf("resources.cpu", "%s and needs %s CPUs, but the largest node of %s has %s", one, formatNum(r.CPU), what, formatNum(most.CPU))
	case r.GPU > most.GPU:
		c.errorf("resources.gpu", "%s and needs %s GPU(s), but the largest node of %s has %s", one, formatNum(r.GPU), what, formatNum(most.GPU))
	case most.Memory > 0 && r.Memory > most.Memory:
		c.errorf("resources.memory", "%s and needs %s, but the largest node of %s has %s", one, formatSize(r.Memory), what, formatSize(most.Memory))
	default:
		var list []string
		for _, n := range nodes {
			list = append(list, fmt.Sprintf("%s%s CPUs, %s GPU(s), %s", nodeName(n), formatNum(n.CPU), formatNum(n.GPU), formatSize(n.Memory)))
		}
		c.errorf("resources", "%s, and no node of %s has all a trial needs (%s CPUs, %s GPU(s), %s); the nodes: %s",
			one, what, formatNum(r.CPU), formatNum(r.GPU), formatSize(r.Memory), strings.Join(list, "; "))
	}
}

// nodeName returns "NAME: " for a named node, "" otherwise.
func nodeName(n node) string {
	if n.name == "" {
		return ""
	}
	return n.name + ": "
}

// absDir returns dir made absolute (as it is if that fails).
func absDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// Package spec reads experiment specs: YAML files that say what to tune
// (a command, a search space, a metric) and how (searcher, scheduler, stop
// conditions, resources, checkpoint and failure policies). examples/
// reference.yaml documents every key.
//
// Parse and Load decode a spec with the gopkg.in/yaml.v3 node API and
// validate it, returning every problem at once as an Errors value whose
// lines read like compiler errors:
//
//	experiment.yaml:3: schedular: unknown key (did you mean "scheduler"?); allowed keys: ...
//	experiment.yaml:12: scheduler.reduction_factor: must be > 1, got 1
//
// Searchers and schedulers are named in the spec and looked up in one
// explicit table per plugin kind (see Searchers and Schedulers); each entry
// reads its own parameters, so unknown parameters are errors too. Build
// turns a valid spec into a hone.Experiment and the options of a run.
package spec

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/space"
)

// Spec is a decoded experiment spec. Parse fills in the defaults noted on
// each field; a Spec built in Go should start from Default.
type Spec struct {
	// Name names the experiment directory under Storage. Default: the spec
	// file's base name without its extension.
	Name string
	// Storage is the root directory of experiments, relative to the
	// current directory unless absolute, or a file:///abs/path URL (Parse
	// turns one into its path; see StorageDir), or an object-store URL
	// such as s3://bucket/prefix?endpoint=...&region=... (see StorageURL).
	// Other URL schemes are refused. Default "hone_results".
	Storage string
	// Trainable names what is trained; it starts every trial directory
	// name. Default "trainable".
	Trainable string
	// Metric and Mode are the objective (hone.Experiment's Metric and
	// Mode). Mode defaults to "min" when Metric is set.
	Metric string
	Mode   hone.Mode
	// Objectives are several objectives at once (hone.Experiment's
	// Objectives), the alternative to Metric and Mode; Parse fills Metric
	// and Mode with the first, the primary one, and turns a list of one
	// into Metric and Mode alone, so Objectives holds two or more, or none.
	Objectives hone.Objectives
	// Constraints make a configuration infeasible when its result breaks
	// one (hone.Experiment's Constraints).
	Constraints hone.Constraints
	// Seed seeds every random choice. Default 0.
	Seed uint64
	// NumSamples is how many times the search space is sampled (each
	// sample expands every grid domain); -1 samples until a stop condition
	// ends the experiment. Default 1.
	NumSamples int
	// SearchSpace is what the searcher samples.
	SearchSpace space.Space
	// PointsToEvaluate are configurations to try first.
	PointsToEvaluate []map[string]any
	// Searcher proposes configurations. Default: random.
	Searcher Plugin
	// Scheduler decides about running trials. Default: fifo.
	Scheduler Plugin
	// Executor says where trials run: "local" (the default: processes on
	// this machine) or "slurm" (a Slurm cluster), with its parameters.
	Executor Plugin
	executor *executorBuild // read from Executor by check
	// Stop holds the stop conditions.
	Stop Stop
	// Resources is what each trial needs. Default: 1 CPU. Validate
	// refuses a trial that needs more than the machine has at all: more
	// CPUs or memory than it has, more GPUs than GPUs, more of a custom
	// resource than CustomResources.
	Resources hone.Resources
	// MaxConcurrentTrials caps running trials; 0 means as many as resources
	// allow.
	MaxConcurrentTrials int
	// MaxPendingTrials caps the trials waiting PENDING (created, not yet
	// started) at once; 0 lets hone choose: max(16, ceil(1.1 × the trials
	// that can run at once)) for searchers that do not learn from results
	// (random, grid), 1 for the others.
	MaxPendingTrials int
	// Checkpoint is the checkpoint retention policy.
	Checkpoint hone.CheckpointConfig
	// Failure is the retry policy.
	Failure hone.FailureConfig
	// TrialTimeout ends a trial whose run (since it last started or
	// restored; a trial queued on a cluster starts when it leaves the
	// queue) lasts longer, as a failure; 0 means no limit.
	TrialTimeout time.Duration
	// ReportTimeout ends a running trial that has reported nothing (no
	// result, no checkpoint) for this long, as a failure; 0 means no
	// limit.
	ReportTimeout time.Duration
	// Command is the argv of the training program. Required.
	Command []string
	// Env holds environment variables added to every trial's environment.
	Env map[string]string
	// WorkingDir is where trials run (absolute after Parse). Default: the
	// spec file's directory.
	WorkingDir string
	// StopGrace is how long a trial has to exit once told to stop before
	// it is killed. Default 10 s.
	StopGrace time.Duration
	// GPUs is how many GPUs the machine has for trials. Default 0.
	GPUs int
	// CustomResources is how much of each custom resource (named in
	// Resources.Custom) the machine offers.
	CustomResources map[string]float64
	// Rules is the version of the rules hone's plugins decide by that the
	// experiment was started with (RulesVersion): not part of the spec's
	// text, but of the experiment, so that a resume replays it as it ran.
	// 0 means RulesVersion; see RulesVersion for the earlier ones.
	Rules int

	file  string         // the name errors use
	lines map[string]pos // key path → position, from Parse
}

// Plugin is the searcher or scheduler section of a spec.
type Plugin struct {
	// Name selects the plugin from its table.
	Name string
	// MaxConcurrent (searchers only) caps the trials the searcher has
	// suggested that are still live; 0 means no cap.
	MaxConcurrent int
	// Node is the section as written, whose keys besides name (and
	// max_concurrent for searchers) are the plugin's parameters; nil when
	// the section was a bare name or absent.
	Node *yaml.Node
}

// Stop holds a spec's stop conditions.
type Stop struct {
	// TrainingIteration stops a trial once its training_iteration reaches
	// it; 0 means no limit.
	TrainingIteration int
	// Thresholds stop a trial once a result field crosses a value, in the
	// order they were written.
	Thresholds []Threshold
	// TimeBudget stops the whole experiment after this long; 0 means no
	// limit.
	TimeBudget time.Duration
	// Plateau, if set, stops trials whose metric stopped moving.
	Plateau *Plateau
}

// Threshold stops a trial when a result field reaches Value: at or above
// it with Mode max (Ray's dict semantics, written `field: value` or
// `field: {above: value}`), at or below it with Mode min (`{below: value}`).
type Threshold struct {
	Field string
	Value float64
	Mode  hone.Mode
}

// Plateau configures stopper.Plateau.
type Plateau struct {
	Metric      string  // default: the experiment's metric
	Std         float64 // default 0.01
	NumResults  int     // default 4
	GracePeriod int     // default 4
}

// Default returns a spec holding every default value, for specs built in
// Go.
func Default() *Spec {
	return &Spec{
		Storage:    "hone_results",
		NumSamples: 1,
		Searcher:   Plugin{Name: "random"},
		Scheduler:  Plugin{Name: "fifo"},
		Executor:   Plugin{Name: "local"},
		Resources:  hone.Resources{CPU: 1},
		StopGrace:  10 * time.Second,
	}
}

// Load reads, decodes and validates the spec file at path (see Parse).
// Relative paths in the spec are relative to the file's directory.
func Load(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read spec: %w", err)
	}
	return Parse(data, path, filepath.Dir(path))
}

// Parse decodes and validates a spec. file names the spec in error
// messages and gives the default experiment name (its base name without
// extension); dir is the directory a relative working_dir is resolved
// against. The error, if any, is an Errors value holding every problem.
func Parse(data []byte, file, dir string) (*Spec, error) {
	return decodeSpec(data, file, dir, true)
}

// Decode decodes a spec as Parse does but checks only what decoding
// checks (syntax, types, known keys, a few values), not what Validate
// checks (ranges, the plugins, this machine): it is for reading the spec
// an experiment was started with to compare it with another (Compare),
// which must work even if that spec no longer validates here (another
// machine, a stricter hone). The spec it returns may not be valid.
func Decode(data []byte, file, dir string) (*Spec, error) {
	return decodeSpec(data, file, dir, false)
}

// decodeSpec is Parse, and Decode when validate is false.
func decodeSpec(data []byte, file, dir string, validate bool) (*Spec, error) {
	s := Default()
	s.file = file
	base := filepath.Base(file)
	s.Name = strings.TrimSuffix(base, filepath.Ext(base))
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	s.WorkingDir = absDir
	s.lines = map[string]pos{}
	c := &collector{file: file, lines: s.lines}

	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, Errors{syntaxError(file, err)}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	if isNull(root) {
		c.errorf("", "the spec is empty; it needs at least a command")
		return nil, c.result()
	}
	c.lines[""] = posOf(root)
	if d := deref(root); d.Kind != yaml.MappingNode {
		c.nodeErrorf(root, "", "a spec is a mapping of keys such as command and search_space, got %s", describe(root))
		return nil, c.result()
	}
	s.decode(c, root, absDir)
	if validate {
		s.check(c)
	}
	if err := c.result(); err != nil {
		return nil, err
	}
	return s, nil
}

// ResolvedObjectives returns the spec's objectives with their defaults
// (hone.Experiment.ResolvedObjectives): objectives when there are
// several, else the one of metric and mode, or none without a metric.
func (s *Spec) ResolvedObjectives() hone.Objectives {
	if len(s.Objectives) > 0 {
		return s.Objectives.WithDefaults()
	}
	return hone.Objective{Metric: s.Metric, Mode: s.Mode}.AsList()
}

// syntaxError turns a YAML parse error ("yaml: line 3: ...") into an
// Error that wraps it. gopkg.in/yaml.v3 reports a syntax error as text
// only (no type, no line field), so its text is the one read here.
func syntaxError(file string, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, after, ok := strings.Cut(rest, ": "); ok {
			if _, err := fmt.Sscanf(n, "%d", &line); err == nil {
				msg = after
			}
		}
	}
	return &Error{File: file, Line: line, Msg: "invalid YAML: " + msg, Err: err}
}

// decode reads the top-level mapping: types are checked here, values in
// check.
func (s *Spec) decode(c *collector, root *yaml.Node, dir string) {
	var topBudget time.Duration // time_budget_s at the top level
	oneObjective := false       // metric or mode is given
	c.fields(root, "", topKeys, func(p pair) {
		v, path := p.valNode, p.path
		switch p.key {
		case stopTimeBudget:
			if d, ok := c.budget(v, path); ok {
				topBudget = d
			}
		case "name":
			if x, ok := c.text(v, path); ok {
				s.Name = x
			}
		case "storage":
			if x, ok := c.str(v, path); ok {
				s.Storage = x
				if d, _, err := storageDir(x); err == nil {
					s.Storage = d // a file:// URL becomes its path
				}
			}
		case "trainable":
			if x, ok := c.str(v, path); ok {
				s.Trainable = x
			}
		case "metric":
			oneObjective = true
			if x, ok := c.str(v, path); ok {
				s.Metric = x
			}
		case "mode":
			oneObjective = true
			if x, ok := c.str(v, path); ok {
				s.Mode = hone.Mode(x)
			}
		case "objectives":
			s.decodeObjectives(c, v, path)
		case "constraints":
			s.decodeConstraints(c, v, path)
		case "seed":
			if x, ok := c.seed(v, path); ok {
				s.Seed = x
			}
		case "num_samples":
			if x, ok := c.integer(v, path); ok {
				s.NumSamples = x
			}
		case "search_space":
			s.decodeSpace(c, v, path)
		case "points_to_evaluate":
			s.decodePoints(c, v, path)
		case "searcher":
			s.Searcher = c.plugin(v, path, "random", true)
		case "scheduler":
			s.Scheduler = c.plugin(v, path, "fifo", false)
		case "executor":
			s.Executor = c.plugin(v, path, "local", false)
		case "stop":
			s.decodeStop(c, v, path)
		case "resources":
			s.decodeResources(c, v, path)
		case "max_concurrent_trials":
			if x, ok := c.integer(v, path); ok {
				s.MaxConcurrentTrials = x
			}
		case "max_pending_trials":
			if x, ok := c.integer(v, path); ok {
				if x < 1 {
					c.nodeErrorf(v, path, "must be >= 1 (leave it out to let hone choose), got %d", x)
				} else {
					s.MaxPendingTrials = x
				}
			}
		case "trial_timeout", "report_timeout":
			if x, ok := c.duration(v, path); ok {
				switch {
				case x <= 0:
					c.nodeErrorf(v, path, "must be > 0 (leave it out for no limit), got %v", x)
				case p.key == "trial_timeout":
					s.TrialTimeout = x
				default:
					s.ReportTimeout = x
				}
			}
		case "checkpoint":
			s.decodeCheckpoint(c, v, path)
		case "failure":
			c.fields(v, path, failureKeys, func(p pair) {
				switch p.key {
				case "max_failures":
					if x, ok := c.integer(p.valNode, p.path); ok {
						s.Failure.MaxFailures = x
					}
				case "fail_fast":
					if x, ok := c.boolean(p.valNode, p.path); ok {
						s.Failure.FailFast = x
					}
				}
			})
		case "command":
			if x, ok := c.argv(v, path); ok {
				s.Command = x
			}
		case "env":
			ps, ok := c.pairs(v, path)
			if !ok {
				break
			}
			s.Env = make(map[string]string, len(ps))
			for _, e := range ps {
				if isNull(e.valNode) {
					s.Env[e.key] = ""
				} else if x, ok := c.text(e.valNode, e.path); ok {
					s.Env[e.key] = x
				}
			}
		case "working_dir":
			if x, ok := c.str(v, path); ok {
				if !filepath.IsAbs(x) {
					x = filepath.Join(dir, x)
				}
				s.WorkingDir = filepath.Clean(x)
			}
		case "stop_grace":
			if x, ok := c.duration(v, path); ok {
				s.StopGrace = x
			}
		case "gpus":
			if x, ok := c.integer(v, path); ok {
				s.GPUs = x
			}
		case "custom_resources":
			s.CustomResources = c.amounts(v, path)
		}
	})
	s.resolveObjectives(c, oneObjective)
	s.Mode = hone.Objective{Metric: s.Metric, Mode: s.Mode}.WithDefaults().Mode
	// Ray Tune users write time_budget_s at the top level (TuneConfig):
	// it is stop.time_budget_s, which it may repeat but not contradict.
	if topBudget > 0 {
		if st := s.Stop.TimeBudget; st > 0 && st != topBudget {
			c.errorf(stopTimeBudget, "is %s but stop.%s is %s: they are the same setting; give it once",
				formatNum(topBudget.Seconds()), stopTimeBudget, formatNum(st.Seconds()))
		} else {
			s.Stop.TimeBudget = topBudget
		}
	}
}

// decodeSpace decodes search_space with the space package and maps its
// errors, which name a key path inside the space, to that key's line. Each
// parameter is decoded on its own first, so that every parameter's problem
// is reported at once; the whole space is decoded only when each of its
// parameters is valid (for what spans several, such as a grid's size).
func (s *Spec) decodeSpace(c *collector, v *yaml.Node, path string) {
	c.recordLines(v, path, 0)
	d := deref(v)
	if d == nil || d.Kind != yaml.MappingNode {
		c.nodeErrorf(v, path, "want a mapping of parameter names to domains, got %s", describe(v))
		return
	}
	if !s.decodeEach(c, d, path) {
		return
	}
	var sp space.Space
	if err := sp.UnmarshalYAML(d); err != nil {
		s.spaceError(c, path, err)
		return
	}
	s.SearchSpace = sp
}

// decodeEach decodes each parameter of the mapping m, at path, on its own
// and reports every one's problem; it reports whether all are valid. A
// parameter that is a sub-space is gone through the same way, so that its
// keys' problems are all reported too.
func (s *Spec) decodeEach(c *collector, m *yaml.Node, path string) bool {
	ok := true
	for i := 0; i+1 < len(m.Content); i += 2 {
		one := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: m.Content[i : i+2 : i+2]}
		var sp space.Space
		err := sp.UnmarshalYAML(one)
		if err == nil {
			continue
		}
		ok = false
		// A sub-space (a mapping that is not a domain such as
		// {randint: [5, 1]}): its keys' problems, each at its line.
		if v := deref(m.Content[i+1]); v != nil && v.Kind == yaml.MappingNode &&
			!(len(v.Content) == 2 && space.IsDomainName(v.Content[0].Value)) &&
			!s.decodeEach(c, v, join(path, m.Content[i].Value)) {
			continue
		}
		s.spaceError(c, path, err)
	}
	return ok
}

// spaceError reports err, an error of the space package about the space at
// path, at the line of the parameter its *space.Error names (Path), or at
// path. The spec's Error wraps err.
func (s *Spec) spaceError(c *collector, path string, err error) {
	errPath, msg := path, spaceText(err)
	var se *space.Error
	if errors.As(err, &se) && se.Op == "" && se.Path != "" {
		first, _, _ := strings.Cut(se.Path, ".") // a key path's first key
		if _, known := c.lines[join(path, first)]; known {
			errPath, msg = join(path, se.Path), se.Err.Error()
		}
	}
	c.errorf(errPath, "%s", msg).Err = err
}

// spaceText is the text of err, an error of the space package, without
// the package's "space: " (space.Error.Text).
func spaceText(err error) string {
	var se *space.Error
	if errors.As(err, &se) {
		return se.Text()
	}
	return err.Error()
}

// decodeObjectives decodes objectives: a list of {metric, mode}.
func (s *Spec) decodeObjectives(c *collector, v *yaml.Node, path string) {
	c.list(v, path, "{metric: NAME, mode: min or max}", func(e *yaml.Node, p string) {
		var o hone.Objective
		c.fields(e, p, []string{"metric", "mode"}, func(q pair) {
			if x, ok := c.str(q.valNode, q.path); ok {
				if q.key == "metric" {
					o.Metric = x
				} else {
					o.Mode = hone.Mode(x)
				}
			}
		})
		s.Objectives = append(s.Objectives, o)
	})
}

// decodeConstraints decodes constraints: a list of {metric, below, above}.
func (s *Spec) decodeConstraints(c *collector, v *yaml.Node, path string) {
	c.list(v, path, "{metric: NAME, below: MAX, above: MIN}", func(e *yaml.Node, p string) {
		var k hone.Constraint
		c.fields(e, p, []string{"metric", "below", "above"}, func(q pair) {
			switch q.key {
			case "metric":
				if x, ok := c.str(q.valNode, q.path); ok {
					k.Metric = x
				}
			case "below", "above":
				if x, ok := c.number(q.valNode, q.path); ok {
					if q.key == "below" {
						k.Below = &x
					} else {
						k.Above = &x
					}
				}
			}
		})
		s.Constraints = append(s.Constraints, k)
	})
}

// list walks the list of mappings v at path, calling fn with each and its
// path (objectives[0], ...); want says what an element looks like.
func (c *collector) list(v *yaml.Node, path, want string, fn func(e *yaml.Node, path string)) {
	d := deref(v)
	if d == nil || d.Kind != yaml.SequenceNode {
		c.nodeErrorf(v, path, "want a list of %s, got %s", want, describe(v))
		return
	}
	for i, e := range d.Content {
		p := index(path, i)
		c.lines[p] = posOf(e)
		fn(e, p)
	}
}

// resolveObjectives checks objectives and constraints once decoded, and
// makes Metric and Mode the primary objective: a list of one objective is
// the same experiment as its metric and mode. oneObjective says that the
// spec gives metric or mode, which objectives replaces.
func (s *Spec) resolveObjectives(c *collector, oneObjective bool) {
	for i, k := range s.Constraints {
		if err := k.Validate(); err != nil {
			c.errorf(index("constraints", i), "%v", err)
		}
	}
	if len(s.Objectives) == 0 {
		return
	}
	switch {
	case oneObjective:
		c.errorf("objectives", "objectives and metric/mode are both set: give metric and mode for one objective, or objectives alone")
	case s.Objectives.Validate() != nil:
		for i, o := range s.Objectives {
			switch {
			case o.Metric == "":
				c.errorf(index("objectives", i), "metric is empty: name a metric the trials report")
			case o.Mode != "" && !o.Mode.Valid():
				c.notAllowed(nil, index("objectives", i)+".mode", modeNames(), "allowed values are min and max, got %q", o.Mode)
			case slices.ContainsFunc(s.Objectives[:i], func(p hone.Objective) bool { return p.Metric == o.Metric }):
				c.errorf(index("objectives", i)+".metric", "%q is an earlier objective's metric already", o.Metric)
			}
		}
	}
	s.Objectives = s.Objectives.WithDefaults()
	s.Metric, s.Mode = s.Objectives[0].Metric, s.Objectives[0].Mode
	if len(s.Objectives) == 1 {
		s.Objectives = nil
	}
}

// decodePoints decodes points_to_evaluate: a list of mappings.
func (s *Spec) decodePoints(c *collector, v *yaml.Node, path string) {
	d := deref(v)
	if d == nil || d.Kind != yaml.SequenceNode {
		c.nodeErrorf(v, path, "want a list of configurations (mappings), got %s", describe(v))
		return
	}
	for i, e := range d.Content {
		p := index(path, i)
		c.lines[p] = posOf(e)
		if de := deref(e); de == nil || de.Kind != yaml.MappingNode {
			c.nodeErrorf(e, p, "want a mapping of parameter names to values, got %s", describe(e))
			continue
		}
		x, ok := c.value(e, p, 0)
		if ok {
			s.PointsToEvaluate = append(s.PointsToEvaluate, x.(map[string]any))
		}
	}
}

// plugin decodes a searcher or scheduler section: a bare name, or a
// mapping with name (default def), max_concurrent for searchers, and
// parameters, which the plugin's table entry reads in check.
func (c *collector) plugin(v *yaml.Node, path, def string, searcher bool) Plugin {
	if s, ok := scalar(v, tagStr); ok {
		return Plugin{Name: s.Value}
	}
	pl := Plugin{Name: def}
	if d := deref(v); d == nil || d.Kind != yaml.MappingNode {
		c.nodeErrorf(v, path, "want a name such as %q, or a mapping with name and parameters, got %s", def, describe(v))
		return pl
	}
	ps, ok := c.pairs(v, path)
	if !ok {
		return pl
	}
	pl.Node = deref(v)
	for _, p := range ps {
		switch {
		case p.key == "name":
			if x, ok := c.str(p.valNode, p.path); ok {
				pl.Name = x
			}
		case p.key == "max_concurrent" && searcher:
			if isNull(p.valNode) {
				continue
			}
			if x, ok := c.integer(p.valNode, p.path); ok {
				pl.MaxConcurrent = x
			}
		}
	}
	return pl
}

// Keys of the stop section that are not result fields.
const (
	stopTimeBudget = "time_budget_s"
	stopPlateau    = "plateau"
)

func (s *Spec) decodeStop(c *collector, v *yaml.Node, path string) {
	ps, ok := c.pairs(v, path)
	if !ok {
		return
	}
	for _, p := range ps {
		if isNull(p.valNode) {
			continue
		}
		switch p.key {
		case stopTimeBudget:
			if d, ok := c.budget(p.valNode, p.path); ok {
				s.Stop.TimeBudget = d
			}
		case stopPlateau:
			s.decodePlateau(c, p.valNode, p.path)
		case hone.FieldTrainingIteration:
			if _, isNum := scalar(p.valNode, tagInt, tagFloat); isNum {
				if x, ok := c.integer(p.valNode, p.path); ok {
					if x < 1 {
						c.nodeErrorf(p.valNode, p.path, "must be >= 1, got %d", x)
					} else {
						s.Stop.TrainingIteration = x
					}
				}
				continue
			}
			s.decodeThreshold(c, p)
		default:
			if near := closest(p.key, []string{stopTimeBudget, stopPlateau}); near != "" {
				c.nodeErrorf(p.keyNode, p.path, "unknown stop condition (did you mean %q?); other keys are result fields to stop at", near)
				continue
			}
			s.decodeThreshold(c, p)
		}
	}
}

// budget decodes a time budget: a number of seconds > 0.
func (c *collector) budget(n *yaml.Node, path string) (time.Duration, bool) {
	x, ok := c.number(n, path)
	if !ok {
		return 0, false
	}
	if x <= 0 || x > math.MaxInt64/float64(time.Second) {
		c.nodeErrorf(n, path, "must be > 0 (seconds), got %s", formatNum(x))
		return 0, false
	}
	return time.Duration(x * float64(time.Second)), true
}

// decodeThreshold decodes `field: value`, `field: {above: value}` or
// `field: {below: value}`.
func (s *Spec) decodeThreshold(c *collector, p pair) {
	if d := deref(p.valNode); d != nil && d.Kind == yaml.MappingNode {
		var th *Threshold
		c.fields(d, p.path, []string{"above", "below"}, func(q pair) {
			x, ok := c.number(q.valNode, q.path)
			if !ok {
				return
			}
			if th != nil {
				c.nodeErrorf(q.keyNode, p.path, "give one of above or below, not both")
				return
			}
			mode := hone.Max
			if q.key == "below" {
				mode = hone.Min
			}
			th = &Threshold{Field: p.key, Value: x, Mode: mode}
		})
		if th != nil {
			s.Stop.Thresholds = append(s.Stop.Thresholds, *th)
		} else if len(d.Content) == 0 {
			c.nodeErrorf(p.valNode, p.path, "want {above: value} or {below: value}, got an empty mapping")
		}
		return
	}
	if _, isNum := scalar(p.valNode, tagInt, tagFloat); !isNum {
		c.nodeErrorf(p.valNode, p.path, "want a number (stop when the result is >= it), {above: value} or {below: value}, got %s", describe(p.valNode))
		return
	}
	if x, ok := c.number(p.valNode, p.path); ok {
		s.Stop.Thresholds = append(s.Stop.Thresholds, Threshold{Field: p.key, Value: x, Mode: hone.Max})
	}
}

func (s *Spec) decodePlateau(c *collector, v *yaml.Node, path string) {
	pl := &Plateau{Std: 0.01, NumResults: 4, GracePeriod: 4}
	c.fields(v, path, plateauKeys, func(p pair) {
		switch p.key {
		case "metric":
			if x, ok := c.str(p.valNode, p.path); ok {
				pl.Metric = x
			}
		case "std":
			if x, ok := c.number(p.valNode, p.path); ok {
				pl.Std = x
			}
		case "num_results":
			if x, ok := c.integer(p.valNode, p.path); ok {
				pl.NumResults = x
			}
		case "grace_period":
			if x, ok := c.integer(p.valNode, p.path); ok {
				pl.GracePeriod = x
			}
		}
	})
	s.Stop.Plateau = pl
}

func (s *Spec) decodeResources(c *collector, v *yaml.Node, path string) {
	c.fields(v, path, resourceKeys, func(p pair) {
		switch p.key {
		case "cpu":
			if x, ok := c.number(p.valNode, p.path); ok {
				s.Resources.CPU = x
			}
		case "gpu":
			if x, ok := c.number(p.valNode, p.path); ok {
				s.Resources.GPU = x
			}
		case "memory":
			if x, ok := c.size(p.valNode, p.path); ok {
				s.Resources.Memory = x
			}
		case "custom":
			s.Resources.Custom = c.amounts(p.valNode, p.path)
		}
	})
}

// amounts decodes a mapping of resource names to numbers.
func (c *collector) amounts(v *yaml.Node, path string) map[string]float64 {
	ps, ok := c.pairs(v, path)
	if !ok {
		return nil
	}
	out := make(map[string]float64, len(ps))
	for _, p := range ps {
		if x, ok := c.number(p.valNode, p.path); ok {
			out[p.key] = x
		}
	}
	return out
}

func (s *Spec) decodeCheckpoint(c *collector, v *yaml.Node, path string) {
	c.fields(v, path, checkpointKeys, func(p pair) {
		switch p.key {
		case "num_to_keep":
			if x, ok := c.integer(p.valNode, p.path); ok {
				s.Checkpoint.NumToKeep = x
			}
		case "score_attribute":
			if x, ok := c.str(p.valNode, p.path); ok {
				s.Checkpoint.ScoreAttribute = x
			}
		case "score_order":
			if x, ok := c.str(p.valNode, p.path); ok {
				s.Checkpoint.ScoreOrder = hone.Mode(x)
			}
		case "frequency":
			if x, ok := c.integer(p.valNode, p.path); ok {
				s.Checkpoint.Frequency = x
			}
		case "at_end":
			if x, ok := c.boolean(p.valNode, p.path); ok {
				s.Checkpoint.AtEnd = x
			}
		}
	})
}

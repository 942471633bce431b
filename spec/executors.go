package spec

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/process"
	"github.com/hone-tune/hone/executor/slurm"
)

// ExecutorPlugin is one entry of the executor table. Read reads the
// executor's parameters from p, as SearcherPlugin's Read does, and
// returns how to build it, or nil after reporting a bad parameter.
type ExecutorPlugin struct {
	Doc  string
	Read func(p *Params) *executorBuild
}

// executorBuild makes an experiment's executor and says what its trials
// share.
type executorBuild struct {
	// new makes the executor for the trials described by proc.
	new func(ctx context.Context, proc Process) (hone.Executor, error)
	// pool, when not nil, is the resource pool of the trials (this
	// machine's otherwise), and the nodes that make it up when each trial
	// runs on one of them (nil: no such limit).
	pool func(ctx context.Context) (pool hone.Resources, nodes []node, err error)
}

// node is one machine of an executor's pool, which a trial must fit.
type node struct {
	name string // "" if unknown
	hone.Resources
}

// executors is the executor table: every name a spec may give under
// executor.name.
var executors = map[string]ExecutorPlugin{
	"local": {
		Doc:  "each trial a process of the command on this machine, sharing its CPUs, memory and gpus",
		Read: readLocal,
	},
	"slurm": {
		Doc:  "each trial a Slurm job step inside an allocation, or a job of its own from a login node; trials connect back over TCP",
		Read: readSlurm,
	},
}

// Executors returns the known executor names, sorted, and their docs.
func Executors() (names []string, docs map[string]string) {
	return tableDocs(executors, func(p ExecutorPlugin) string { return p.Doc })
}

// readLocal reads no parameter.
func readLocal(*Params) *executorBuild {
	return &executorBuild{new: func(_ context.Context, p Process) (hone.Executor, error) {
		return process.New(p.options())
	}}
}

// options are the process executor's options for p.
func (p Process) options() process.Options {
	return process.Options{Command: p.Command, Env: p.Env, Dir: p.Dir, StopGrace: p.StopGrace, GPUs: p.GPUs, Store: p.Store}
}

// readSlurm reads the slurm executor's parameters.
func readSlurm(p *Params) *executorBuild {
	o := slurm.Options{
		Mode:      slurm.Mode(p.String("mode", string(slurm.Auto))),
		Partition: p.String("partition", ""),
		Account:   p.String("account", ""),
		QOS:       p.String("qos", ""),
		Time:      p.String("time", ""),
	}
	o.Hone = p.String("hone_path", "")
	o.NodeCache = p.String("node_cache", "")
	o.SbatchArgs = p.Strings("sbatch_args")
	o.SrunArgs = p.Strings("srun_args")
	listen := p.String("listen", ":0")
	advertise := p.String("advertise", "")
	poll := p.Float("poll_interval_s", slurm.DefaultPoll.Seconds())
	ok := true
	if !slices.Contains([]slurm.Mode{slurm.Auto, slurm.Step, slurm.Job}, o.Mode) {
		p.notAllowed("mode", []string{string(slurm.Auto), string(slurm.Step), string(slurm.Job)}, "allowed values are auto, step and job, got %q", o.Mode)
		ok = false
	}
	if poll <= 0 {
		p.Errorf("poll_interval_s", "must be > 0, got %s", formatNum(poll))
		ok = false
	}
	if !ok {
		return nil
	}
	o.Poll = time.Duration(poll * float64(time.Second))
	return &executorBuild{
		new: func(ctx context.Context, proc Process) (hone.Executor, error) {
			o := o
			o.Process = proc.options()
			o.Process.GPUs = 0
			o.Process.Listen, o.Process.Advertise = listen, advertise
			o.Key = slurm.ExperimentKey(proc.ExperimentDir)
			if proc.Store != "" {
				o.Key = slurm.StoreKey(proc.Store)
			}
			return slurm.New(ctx, o)
		},
		pool: func(ctx context.Context) (hone.Resources, []node, error) {
			c, err := slurm.Capacity(ctx, o)
			nodes := make([]node, len(c.Nodes))
			for i, n := range c.Nodes {
				nodes[i] = node{name: n.Name, Resources: n.Resources}
			}
			return c.Pool, nodes, err
		},
	}
}

// readExecutor looks up the executor and reads its parameters.
func (s *Spec) readExecutor(c *collector) *executorBuild {
	name, known := s.Executor.Name, sortedKeys(executors)
	entry, ok := executors[name]
	if !ok {
		c.notAllowed(nil, "executor.name", known, "%s", unknownName("executor", name, known))
		return nil
	}
	p := newParams(c, "executor", s.Executor.Node, executorKeys...)
	p.plugin = name
	build := entry.Read(p)
	p.finish()
	return build
}

// NewExecutor makes the executor the spec names for the plan's trials. It
// checks the executor's settings first (a Slurm partition that does not
// exist is an error here, before any trial starts).
func (p Process) NewExecutor(ctx context.Context) (hone.Executor, error) {
	if p.build == nil {
		return nil, fmt.Errorf("no executor: the plan was not built by Build")
	}
	return p.build.new(ctx, p)
}

// SetExecutor makes the spec's executor name (the --executor flag): the
// same name keeps the spec's parameters, another one drops them.
func (s *Spec) SetExecutor(name string) {
	if name != s.Executor.Name {
		s.Executor = Plugin{Name: name}
	}
}

package spec

import (
	"reflect"
	"testing"

	"github.com/hone-tune/hone"
)

// TestExecutorSection: executor takes a name or a mapping; a wrong
// parameter is reported at its line with what is allowed, and a cluster's
// trials are not held to this machine's size.
func TestExecutorSection(t *testing.T) {
	const base = "command: [python3, train.py]\nsearch_space: {x: 1}\n"
	for _, tc := range []struct {
		name, src string
		want      []string
	}{{
		name: "bare name",
		src:  "executor: slurm\n",
	}, {
		name: "mapping",
		src:  "executor:\n  name: slurm\n  partition: gpu\n  sbatch_args: [--constraint=a100]\n  mode: job\n",
	}, {
		name: "trial bigger than this machine is fine on a cluster",
		src:  "executor: slurm\nresources: {cpu: 100000, gpu: 8, memory: 1000000000000000}\n",
	}, {
		name: "unknown executor",
		src:  "executor: kubernetes\n",
		want: []string{`experiment.yaml:3: executor.name: unknown executor "kubernetes"; known: local, slurm`},
	}, {
		name: "bad mode",
		src:  "executor: {name: slurm, mode: batch}\n",
		want: []string{`experiment.yaml:3: executor.mode: allowed values are auto, step and job, got "batch"`},
	}, {
		name: "args not a list",
		src:  "executor: {name: slurm, sbatch_args: --exclusive}\n",
		want: []string{`experiment.yaml:3: executor.sbatch_args: want a list of strings, e.g. [--constraint=a100], got "--exclusive"`},
	}, {
		name: "unknown parameter",
		src:  "executor: {name: slurm, partion: gpu}\n",
		want: []string{`experiment.yaml:3: executor.partion: unknown key (did you mean "partition"?); allowed keys: account, advertise, hone_path, listen, mode, name, node_cache, partition, poll_interval_s, qos, sbatch_args, srun_args, time`},
	}, {
		name: "local has no parameters",
		src:  "executor: {name: local, partition: gpu}\n",
		want: []string{`experiment.yaml:3: executor.partition: unknown key; allowed keys: name`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse([]byte(base+tc.src), "experiment.yaml", t.TempDir())
			if err == nil {
				err = s.Validate()
			}
			if got := messages(t, err); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestCheckPool: a trial that needs more of a resource than an executor's
// pool (a cluster's, known only when the plan is built) is an error at
// the resource's key, naming both figures.
func TestCheckPool(t *testing.T) {
	src := "command: [python3, train.py]\nexecutor: slurm\nresources: {cpu: 8, gpu: 2, memory: 4GiB, custom: {tpu: 1}}\n"
	s, err := Parse([]byte(src), "experiment.yaml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{file: s.file, lines: s.lines}
	s.checkPool(c, hone.Resources{CPU: 4, GPU: 2, Memory: 1 << 30}, "the slurm executor's pool")
	want := []string{
		`experiment.yaml:3: resources.cpu: each trial needs 8 CPUs but the slurm executor's pool has 4`,
		`experiment.yaml:3: resources.memory: each trial needs 4GiB but the slurm executor's pool has 1GiB`,
		`experiment.yaml:3: resources.custom.tpu: each trial needs 1 but the slurm executor's pool has 0`,
	}
	if got := messages(t, c.result()); !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n got %q\nwant %q", got, want)
	}
	c = &collector{file: s.file, lines: s.lines}
	s.checkPool(c, hone.Resources{CPU: 64, GPU: 8, Memory: 1 << 40, Custom: map[string]float64{"tpu": 4}}, "the pool")
	if err := c.result(); err != nil {
		t.Errorf("a pool that holds the trial: %v", err)
	}
}

// TestCheckNodes: a trial runs on one node, so a pool that holds it is
// not enough when no node does; the error names the resource no node has
// enough of, or lists the nodes when each resource is on some node but
// never all on one.
func TestCheckNodes(t *testing.T) {
	big := []node{
		{"n1", hone.Resources{CPU: 2, Memory: 4000 << 20}},
		{"n2", hone.Resources{CPU: 8, GPU: 4, Memory: 16000 << 20}},
	}
	split := []node{
		{"a", hone.Resources{CPU: 8, Memory: 1 << 30}},
		{"b", hone.Resources{CPU: 2, Memory: 16 << 30}},
	}
	for _, tc := range []struct {
		resources string
		nodes     []node
		want      []string
	}{
		{"{cpu: 3}", big, nil},
		{"{cpu: 8, gpu: 1, memory: 4GiB}", big, nil},
		{"{cpu: 100}", nil, nil},
		{"{cpu: 10}", big, []string{`experiment.yaml:3: resources.cpu: each trial runs on one node and needs 10 CPUs, but the largest node of the pool has 8`}},
		{"{gpu: 5}", big, []string{`experiment.yaml:3: resources.gpu: each trial runs on one node and needs 5 GPU(s), but the largest node of the pool has 4`}},
		{"{cpu: 1, memory: 20GiB}", big, []string{`experiment.yaml:3: resources.memory: each trial runs on one node and needs 20GiB, but the largest node of the pool has 15.6GiB`}},
		{"{cpu: 4, memory: 4GiB}", split, []string{`experiment.yaml:3: resources: each trial runs on one node, and no node of the pool has all a trial needs (4 CPUs, 0 GPU(s), 4GiB); the nodes: a: 8 CPUs, 0 GPU(s), 1GiB; b: 2 CPUs, 0 GPU(s), 16GiB`}},
	} {
		s, err := Parse([]byte("command: [python3, train.py]\nexecutor: slurm\nresources: "+tc.resources+"\n"), "experiment.yaml", t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		c := &collector{file: s.file, lines: s.lines}
		s.checkNodes(c, tc.nodes, "the pool")
		var got []string
		if err := c.result(); err != nil {
			got = messages(t, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("resources %s:\n got %q\nwant %q", tc.resources, got, tc.want)
		}
	}
}

package spec

import (
	"reflect"
	"testing"
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

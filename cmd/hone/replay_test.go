package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/inproc"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/spec"
	"github.com/hone-tune/hone/trial"
)

// accumulator is a checkpointing trainer: each iteration adds x to a sum
// kept in its checkpoint, and reports the x it trained with.
func accumulator(spec.Process) (hone.Executor, error) {
	return inproc.NewFunc(func(ctx context.Context, s trial.Session) error {
		x, _ := hone.Number(s.Config()["x"])
		sum := 0.0
		if cp := s.Checkpoint(); cp != "" {
			b, err := os.ReadFile(filepath.Join(cp, "sum"))
			if err != nil {
				return err
			}
			if err := json.Unmarshal(b, &sum); err != nil {
				return err
			}
		}
		for {
			sum += x
			dir, err := s.StagingDir()
			if err != nil {
				return err
			}
			b, _ := json.Marshal(sum)
			if err := os.WriteFile(filepath.Join(dir, "sum"), b, 0o644); err != nil {
				return err
			}
			if err := s.Report(trial.Metrics{"score": sum, "x": x}, trial.WithCheckpoint(dir)); err != nil {
				return err
			}
		}
	}), nil
}

// TestPBTReplay: `hone run` with scheduler pbt_replay replays the schedule
// of a policy log written by a PBT run: the replayed trial trains, at every
// iteration, with the configuration the original lineage had then.
func TestPBTReplay(t *testing.T) {
	c := cli{t: t, exec: accumulator}
	path, dir := writeSpec(t, "pbt", `metric: score
mode: max
seed: 3
search_space:
  x: {grid: [1, 2, 3, 4]}
scheduler:
  name: pbt
  time_attr: training_iteration
  perturbation_interval: 2
  quantile_fraction: 0.5
  resample_probability: 0
  hyperparam_mutations:
    x: [1, 2, 3, 4, 5, 6]
stop: {training_iteration: 12}
max_concurrent_trials: 2
command: [unused]
`)
	if code, out, errOut := c.run("run", path); code != exitOK {
		t.Fatalf("pbt run: exit %d\n%s\n%s", code, out, errOut)
	}
	exp, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The policy log with the longest lineage.
	var policy string
	var schedule []results.Step
	for _, tr := range exp.Trials {
		steps, err := tr.Schedule()
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) > len(schedule) {
			schedule, policy = steps, filepath.Join(tr.Dir, "pbt_policy_"+tr.ID+".txt")
		}
	}
	if len(schedule) < 2 {
		t.Fatalf("the PBT run made no exploit to replay")
	}

	body := fmt.Sprintf(`metric: score
mode: max
search_space:
  x: 1
scheduler: {name: pbt_replay, policy_file: %s}
stop: {training_iteration: 12}
command: [unused]
`, policy)
	rpath, rdir := writeSpec(t, "replay", body)
	if code, out, errOut := c.run("run", rpath); code != exitOK {
		t.Fatalf("replay run: exit %d\n%s\n%s", code, out, errOut)
	}
	rexp, err := results.Open(rdir)
	if err != nil || len(rexp.Trials) != 1 {
		t.Fatalf("replay: %v, %d trials", err, len(rexp.Trials))
	}
	rows, err := rexp.Trials[0].Results()
	if err != nil || len(rows) < 12 {
		t.Fatalf("replay results: %v, %d rows", err, len(rows))
	}
	// Iteration i trains with the configuration of the last step that
	// starts before it.
	want := func(it int) float64 {
		x := 0.0
		for _, st := range schedule {
			if st.From < it {
				x, _ = hone.Number(st.Config["x"])
			}
		}
		return x
	}
	seen := map[int]bool{}
	for _, row := range rows {
		it, _ := row.Value("training_iteration")
		x, _ := row.Value("x")
		if seen[int(it)] {
			continue // an iteration repeated after a restore
		}
		seen[int(it)] = true
		if x != want(int(it)) {
			t.Errorf("replayed iteration %v trained with x=%v, the schedule %v says %v", it, x, schedule, want(int(it)))
		}
	}

	// Errors: a missing policy file, and more than one sample.
	bad, _ := writeSpec(t, "bad", strings.Replace(body, policy, filepath.Join(t.TempDir(), "nope.txt"), 1))
	if code, _, errOut := c.run("run", bad); code == exitOK || !strings.Contains(errOut, "nope.txt") {
		t.Errorf("missing policy file: exit %d, %q", code, errOut)
	}
	many, _ := writeSpec(t, "many", body+"num_samples: 2\n")
	if code, _, errOut := c.run("run", many); code == exitOK || !strings.Contains(errOut, "set num_samples to 1, not 2") {
		t.Errorf("num_samples 2: exit %d, %q", code, errOut)
	}
	noFile, _ := writeSpec(t, "nofile", "metric: score\ncommand: [x]\nscheduler: {name: pbt_replay}\n")
	if code, _, errOut := c.run("validate", noFile); code != exitUsage || !strings.Contains(errOut, "scheduler.policy_file: is required") {
		t.Errorf("no policy_file: exit %d, %q", code, errOut)
	}
}

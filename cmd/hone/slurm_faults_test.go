package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/slurm"
	"github.com/hone-tune/hone/executor/slurm/slurmcmd"
	"github.com/hone-tune/hone/internal/slurmtest"
	"github.com/hone-tune/hone/results"
)

// faultTrainer is a trial in Python, through hone's client: it reports
// score = its own count of iterations, with a checkpoint holding the count
// at every report, every pause seconds, and continues from a restored
// checkpoint. Each start writes "start iteration=I restored=N" to stderr.
// On reaching iteration grow_at the first time (a marker file in the
// trial's directory remembers it), it grows a buffer by 32 MiB every 0.1 s
// up to 1.5 GiB, far beyond what the tests ask of Slurm, and fails
// unless it is killed before.
const faultTrainer = `import os
import sys
import time

sys.path.insert(0, %q)
import hone

cfg = hone.get_config()
last, pause, grow_at = int(cfg["last"]), float(cfg["pause"]), int(cfg.get("grow_at", 0))
i = 0
restore = hone.get_checkpoint()
if restore:
    with open(os.path.join(restore, "iter")) as f:
        i = int(f.read())
print("start iteration=%%d restored=%%d" %% (hone.get_iteration(), i), file=sys.stderr, flush=True)
while i < last:
    i += 1
    marker = os.path.join(hone.trial_dir(), "grew")
    if i == grow_at and not os.path.exists(marker):
        open(marker, "w").close()
        print("growing at iteration %%d" %% i, file=sys.stderr, flush=True)
        held = []
        for _ in range(48):
            held.append(b"\x01" * (32 << 20))
            time.sleep(0.1)
        print("not killed at 1.5 GiB", file=sys.stderr, flush=True)
        sys.exit(3)
    d = hone.checkpoint_dir()
    with open(os.path.join(d, "iter"), "w") as f:
        f.write(str(i))
    if hone.report({"score": i}, checkpoint_dir=d, done=i >= last) == "stop":
        break
    time.sleep(pause)
`

// faultSpec writes faultTrainer and an experiment named name over it with
// the given search space (last and pause in it) and further keys, and
// returns the spec's path and the experiment's directory.
func faultSpec(t *testing.T, name, space, extra string) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("SKIPPED: no python3: the trials are Python scripts")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "trainer.py")
	client := filepath.Join(repoRoot(t), "clients", "python")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(faultTrainer, client)), 0o644); err != nil {
		t.Fatal(err)
	}
	storage := filepath.Join(dir, "results")
	spec := fmt.Sprintf(`name: %s
metric: score
mode: max
search_space:
%s
checkpoint: {num_to_keep: 2}
storage: %s
command: [python3, %s]
%s`, name, space, storage, script, extra)
	path := filepath.Join(dir, "exp.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, filepath.Join(storage, name)
}

// jobOfHost returns the Slurm job a result's hostname names ("n1 (slurm
// job 12)" is 12), or "".
func jobOfHost(host string) string {
	_, rest, ok := strings.Cut(host, " (slurm job ")
	if !ok {
		return ""
	}
	return strings.TrimSuffix(rest, ")")
}

// checkContinued checks that the trial's results count its iterations 1 to
// last once each, with score equal to the iteration (the trial continued
// its own count from the checkpoint it was restored from, or the two
// would part), and returns the Slurm job and node of each result.
func checkContinued(t *testing.T, tr *results.Trial, last int) (jobs, nodes []string) {
	t.Helper()
	rows, err := tr.Results()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != last {
		t.Errorf("trial %s: %d results, want %d", tr.ID, len(rows), last)
	}
	for i, r := range rows {
		it := rowValue(t, tr, r, hone.FieldTrainingIteration)
		score := rowValue(t, tr, r, "score")
		if it != float64(i+1) || score != it {
			t.Errorf("trial %s: result %d has training_iteration %v and score %v, want %d and %d", tr.ID, i, it, score, i+1, i+1)
		}
		host, _ := r["hostname"].(string)
		node, _, _ := strings.Cut(host, " ")
		jobs, nodes = append(jobs, jobOfHost(host)), append(nodes, node)
	}
	return jobs, nodes
}

// oomSpec writes an experiment of one trial that asks for 200 MB and, on
// its first run past iteration oomGrowAt-1, grows far beyond it, with one
// retry and the executor given.
func oomSpec(t *testing.T, name, executor string) (string, string) {
	return faultSpec(t, name,
		fmt.Sprintf("  last: %d\n  pause: 0.3\n  grow_at: %d", oomLast, oomGrowAt),
		"resources: {cpu: 1, memory: 200000000}\nfailure: {max_failures: 1}\nexecutor: "+executor+"\n")
}

// The trials of oomSpec end at iteration oomLast and grow at oomGrowAt.
const oomLast, oomGrowAt = 8, 4

// checkOutOfMemory checks the experiment of oomSpec in dir: its trial was
// killed once, when it grew, and retried from its checkpoint of the
// iteration before, and it finished. It returns the trial's jobs (of each
// result, as its hostname names them) and its error.txt.
func checkOutOfMemory(t *testing.T, dir string) (jobs []string, errText string) {
	t.Helper()
	checkFinished(t, dir)
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Trials) != 1 {
		t.Fatalf("%d trials, want 1", len(e.Trials))
	}
	tr := e.Trials[0]
	if tr.Status != hone.StatusTerminated || tr.Failures != 1 {
		t.Errorf("trial %s: %s after %d failures, want TERMINATED after 1", tr.ID, tr.Status, tr.Failures)
	}
	jobs, _ = checkContinued(t, tr, oomLast)
	if starts := trialStarts(t, tr); len(starts) != 2 || starts[0] != [2]int{0, 0} || starts[1] != [2]int{oomGrowAt - 1, oomGrowAt - 1} {
		t.Errorf("trial %s: started at (iteration, restored) %v, want from scratch, then from the checkpoint of iteration %d", tr.ID, starts, oomGrowAt-1)
	}
	stderr, err := os.ReadFile(filepath.Join(tr.Dir, "stderr.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(stderr), fmt.Sprintf("growing at iteration %d\n", oomGrowAt)) || strings.Contains(string(stderr), "not killed") {
		t.Errorf("trial %s: want the run that grew killed by Slurm; stderr.log:\n%s", tr.ID, stderr)
	}
	b, err := os.ReadFile(filepath.Join(tr.Dir, "error.txt"))
	if err != nil {
		t.Fatalf("trial %s: error.txt: %v", tr.ID, err)
	}
	t.Logf("trial %s: error.txt:\n%s", tr.ID, b)
	return jobs, string(b)
}

// TestSlurmOutOfMemory runs a trial as a job that asks for 200 MB and, on
// its first run past iteration 3, grows far beyond it: the test cluster
// kills the job for its memory (Slurm 22.05 calls it FAILED, signal 9),
// hone retries the trial from its checkpoint of iteration 3, and the
// trial's error.txt says it ran out of memory, in slurmstepd's words.
func TestSlurmOutOfMemory(t *testing.T) {
	c := slurmtest.Require(t)
	path, dir := oomSpec(t, "oom", fmt.Sprintf("{name: slurm, partition: %s, poll_interval_s: 0.5}", c.Partition))
	code, out, errOut := runBinary(t, "run", path)
	if code != exitOK {
		t.Fatalf("hone run: exit %d\n%s%s", code, out, errOut)
	}
	jobs, errText := checkOutOfMemory(t, dir)
	runs := slices.Compact(jobs)
	if len(runs) != 2 || runs[0] == "" || runs[1] == "" {
		t.Fatalf("results came from the jobs %q, want two: the first run's and the retry's", runs)
	}
	want := "slurm job " + runs[0] + " ended FAILED on n"
	if !strings.Contains(errText, want) || !strings.Contains(errText, ", out of memory: StepId="+runs[0]+".batch exceeded memory limit (") {
		t.Errorf("error.txt does not say that job %s ran out of memory (%q, then slurmstepd's line):\n%s", runs[0], want, errText)
	}
}

// TestSlurmOutOfMemoryStep is TestSlurmOutOfMemory with the trial as a
// step of the allocation hone runs in: srun exits 137, and error.txt says
// the step ran out of memory.
func TestSlurmOutOfMemoryStep(t *testing.T) {
	c := slurmtest.Require(t)
	if buildErr != nil {
		t.Fatalf("hone binary: %v", buildErr)
	}
	path, dir := oomSpec(t, "oomstep", "{name: slurm, mode: step}")
	log := filepath.Join(filepath.Dir(path), "hone.log")
	out, err := exec.Command("sbatch", "--parsable", "-N1", "--ntasks=2", "--mem=1500M",
		"--partition="+c.Partition, "--output="+log, "--wrap=exec "+honeBin+" run "+path).CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch hone run: %v\n%s", err, out)
	}
	alloc := strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = exec.Command("scancel", alloc).Run() })
	// Polled here: sbatch --wait polls at growing intervals, up to half
	// a minute late.
	var sc slurmcmd.Client
	deadline := time.Now().Add(5 * time.Minute)
	for {
		j, err := sc.Job(context.Background(), alloc)
		if err != nil {
			t.Fatal(err)
		}
		if o := slurmcmd.Classify(j.State); o.Ended() {
			if o != slurmcmd.Completed {
				logText, _ := os.ReadFile(log)
				t.Fatalf("the job of hone run: %s\nhone's output:\n%s", j.Summary(), logText)
			}
			break
		}
		if time.Now().After(deadline) {
			logText, _ := os.ReadFile(log)
			t.Fatalf("the job of hone run did not end within 5 minutes: %s\nhone's output:\n%s", j.Summary(), logText)
		}
		time.Sleep(200 * time.Millisecond)
	}
	_, errText := checkOutOfMemory(t, dir)
	want := "slurm job " + alloc + " step hone-" + slurm.ExperimentKey(dir) + "-"
	if !strings.Contains(errText, want) || !strings.Contains(errText, "exit code 137, out of memory: StepId="+alloc+".") ||
		!strings.Contains(errText, " exceeded memory limit (") {
		t.Errorf("error.txt does not say that a step of job %s ran out of memory (%q, exit code 137, then slurmstepd's line):\n%s", alloc, want, errText)
	}
}

// TestSlurmPreemption runs two trials as jobs in the test partition and,
// once they have checkpointed, submits a job that takes one of their nodes
// whole to the urgent partition: the trials there end PREEMPTED, hone
// retries them from their checkpoints, they finish on the other node, and
// their error.txt says they were preempted.
func TestSlurmPreemption(t *testing.T) {
	c := slurmtest.RequireExclusive(t) // the urgent job takes a node whole
	const last = 40
	path, dir := faultSpec(t, "preempt",
		fmt.Sprintf("  x: {grid: [1, 2]}\n  last: %d\n  pause: 0.5", last),
		fmt.Sprintf("max_concurrent_trials: 2\nfailure: {max_failures: 3}\nexecutor: {name: slurm, partition: %s, poll_interval_s: 0.5}\n", c.Partition))
	prefix := "hone-" + slurm.ExperimentKey(dir) + "-"
	h := startHone(t, "run", path)
	waitJobs(t, prefix, 2, h.cmd)
	waitEachReports(t, dir, 2, 3, h.cmd)

	// The node of a running trial (n2 if one runs there), and the trials
	// that run on it.
	var node string
	onNode := map[string]string{} // trial id -> job id
	for _, j := range experimentJobs(t, prefix) {
		if f := strings.Fields(j); f[1] == "RUNNING" && (node == "" || f[2] == "n2") {
			node = f[2]
		}
	}
	for _, j := range experimentJobs(t, prefix) {
		if f := strings.Fields(j); f[1] == "RUNNING" && f[2] == node {
			onNode[strings.TrimPrefix(f[3], prefix)] = f[0]
		}
	}
	if node == "" || len(onNode) == 0 {
		t.Fatalf("no trial's job runs: %q", experimentJobs(t, prefix))
	}
	other := c.Nodes[0]
	if other == node {
		other = c.Nodes[1]
	}
	out, err := exec.Command("sbatch", "--parsable", "--partition="+c.Urgent, "--nodelist="+node, "--exclusive",
		"--job-name=hone-test-urgent", "--output=/dev/null", "--wrap=sleep 600").CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch to %s: %v %s", c.Urgent, err, out)
	}
	urgent := strings.TrimSpace(string(out))
	cancelUrgent := func() {
		if out, err := exec.Command("scancel", urgent).CombinedOutput(); err != nil {
			t.Errorf("scancel %s: %v %s", urgent, err, out)
		}
	}
	t.Cleanup(cancelUrgent)

	// The urgent job runs once the trials' jobs on its node are gone.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := exec.Command("squeue", "--noheader", "--jobs="+urgent, "--format=%T %N").Output()
		if err != nil {
			t.Fatalf("squeue --jobs=%s: %v", urgent, err)
		}
		if f := strings.Fields(string(out)); len(f) == 2 && f[0] == "RUNNING" {
			if f[1] != node {
				t.Fatalf("the urgent job runs on %s, want %s", f[1], node)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the urgent job %s does not run on %s after 2 minutes: %s; the experiment's jobs: %q",
				urgent, node, out, experimentJobs(t, prefix))
		}
		time.Sleep(200 * time.Millisecond)
	}
	h.wait(t, 5*time.Minute, exitOK)
	cancelUrgent()
	checkFinished(t, dir)
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Trials) != 2 {
		t.Errorf("%d trials, want 2", len(e.Trials))
	}
	for _, tr := range e.Trials {
		jobs, nodes := checkContinued(t, tr, last)
		job, preempted := onNode[tr.ID]
		if !preempted {
			continue
		}
		errText, err := os.ReadFile(filepath.Join(tr.Dir, "error.txt"))
		t.Logf("trial %s, preempted on %s: error.txt:\n%s", tr.ID, node, errText)
		if want := "slurm job " + job + " ended PREEMPTED on " + node; err != nil || !strings.Contains(string(errText), want) {
			t.Errorf("trial %s: error.txt does not say %q (%v):\n%s", tr.ID, want, err, errText)
		}
		if tr.Failures < 1 {
			t.Errorf("trial %s: %d failures, want its preemption counted", tr.ID, tr.Failures)
		}
		runs := slices.Compact(jobs)
		if len(runs) < 2 || runs[0] != job {
			t.Errorf("trial %s: results came from the jobs %q, want job %s's, then a retry's", tr.ID, runs, job)
		}
		if n := len(nodes); n == 0 || nodes[n-1] != other {
			t.Errorf("trial %s: results came from the nodes %q, want the last from %s, the node the urgent job left free", tr.ID, nodes, other)
		}
		starts := trialStarts(t, tr)
		if len(starts) < 2 || starts[0] != [2]int{0, 0} || starts[1][0] == 0 || starts[1][0] != starts[1][1] {
			t.Errorf("trial %s: started at (iteration, restored) %v, want from scratch, then from a checkpoint", tr.ID, starts)
		}
	}
}

// trialStarts returns the iteration hone restored each start of the trial
// at and the count the trial read from the checkpoint, from the "start
// iteration=I restored=N" lines of its stderr.log.
func trialStarts(t *testing.T, tr *results.Trial) [][2]int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(tr.Dir, "stderr.log"))
	if err != nil {
		t.Fatal(err)
	}
	var starts [][2]int
	for _, line := range strings.Split(string(b), "\n") {
		var it, restored int
		if n, _ := fmt.Sscanf(line, "start iteration=%d restored=%d", &it, &restored); n == 2 {
			starts = append(starts, [2]int{it, restored})
		}
	}
	return starts
}

// waitEachReports waits until each of the n trials of the experiment in
// dir has at least k results, or fails the test.
func waitEachReports(t *testing.T, dir string, n, k int, cmd *exec.Cmd) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if e, err := results.Open(dir); err == nil && len(e.Trials) >= n {
			ready := 0
			for _, tr := range e.Trials {
				if rows, _ := tr.Results(); len(rows) >= k {
					ready++
				}
			}
			if ready >= n {
				return
			}
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			out, errOut := output(cmd)
			t.Fatalf("not %d trials with %d results each within 2 minutes\n%s%s", n, k, out, errOut)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

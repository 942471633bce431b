package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/slurm"
	"github.com/hone-tune/hone/executor/slurm/slurmcmd"
	"github.com/hone-tune/hone/internal/slurmtest"
	"github.com/hone-tune/hone/results"
)

// slurmSpec writes an ASHA experiment over examples/python/train.py that
// runs its trials on the test cluster with the executor section given,
// and returns the spec's path and the storage directory.
func slurmSpec(t *testing.T, samples, epochs int, executor, extra string) (string, string) {
	t.Helper()
	return writeTrainSpec(t, func(storage, train string) string {
		return fmt.Sprintf(`name: onslurm
metric: accuracy
mode: max
seed: 5
num_samples: %d
search_space:
  lr: {loguniform: [0.01, 1.0]}
  momentum: {uniform: [0.0, 0.95]}
  hidden: {choice: [4, 8]}
  batch: 64
  epochs: %d
  checkpoint_every: 2
scheduler: {name: asha, max_t: %d, grace_period: 2, reduction_factor: 3}
max_concurrent_trials: 4
failure: {max_failures: 2}
storage: %s
command: [python3, %s]
executor: %s
%s`, samples, epochs, epochs, storage, train, executor, extra)
	})
}

// writeTrainSpec writes the spec body returns (given the storage
// directory and examples/python/train.py's path) to a new directory and
// returns the spec's path and the storage directory. It skips the test
// without python3.
func writeTrainSpec(t *testing.T, body func(storage, train string) string) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("SKIPPED: no python3: the example's trials are Python scripts")
	}
	dir := t.TempDir()
	storage := filepath.Join(dir, "results")
	path := filepath.Join(dir, "exp.yaml")
	src := body(storage, filepath.Join(repoRoot(t), "examples", "python", "train.py"))
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, storage
}

// experimentJobs returns the jobs of the test cluster whose names start
// with prefix, as "id state node" lines, ended ones included.
func experimentJobs(t *testing.T, prefix string) []string {
	t.Helper()
	out, err := exec.Command("squeue", "--noheader", "--states=all", "--format=%i %T %N %j").Output()
	if err != nil {
		t.Fatalf("squeue: %v", err)
	}
	var jobs []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) == 4 && strings.HasPrefix(f[3], prefix) {
			jobs = append(jobs, line)
		}
	}
	return jobs
}

// checkFinished checks that every trial of the experiment in dir ended
// TERMINATED with as many rows in its files as the journal has results,
// and returns the machines the rows came from.
func checkFinished(t *testing.T, dir string) map[string]bool {
	t.Helper()
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Trials) == 0 {
		t.Fatal("no trials")
	}
	journaled := journaledResults(t, dir)
	hosts := map[string]bool{}
	for _, tr := range e.Trials {
		if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s ended %s: %s", tr.ID, tr.Status, tr.Error)
		}
		rows, err := tr.Results()
		if err != nil || len(rows) != journaled[tr.ID] {
			t.Errorf("trial %s: %d rows (%v), %d results in the journal", tr.ID, len(rows), err, journaled[tr.ID])
		}
		for _, r := range rows {
			if h, ok := r["hostname"].(string); ok {
				hosts[h] = true
			}
		}
	}
	return hosts
}

// onNodes reports whether the hosts name both of the cluster's nodes.
func onNodes(hosts map[string]bool, nodes []string) bool {
	for _, n := range nodes {
		found := false
		for h := range hosts {
			if h == n || strings.HasPrefix(h, n+" ") {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// TestSlurmJobs runs an ASHA experiment from outside any allocation:
// every trial is a Slurm job of its own, its trials run on both nodes and
// report to hone over TCP, and nothing of the experiment is left in the
// queue.
func TestSlurmJobs(t *testing.T) {
	// Both nodes run trials only if both have CPUs free: a job of another
	// test that holds one node's CPUs puts every trial on the other.
	c := slurmtest.RequireExclusive(t)
	path, storage := slurmSpec(t, 6, 6, fmt.Sprintf("{name: slurm, partition: %s, poll_interval_s: 0.5}", c.Partition), "")
	code, out, errOut := runBinary(t, "run", path)
	if code != exitOK {
		t.Fatalf("hone run: exit %d\n%s%s", code, out, errOut)
	}
	dir := filepath.Join(storage, "onslurm")
	hosts := checkFinished(t, dir)
	if !onNodes(hosts, c.Nodes) {
		t.Errorf("the trials ran on %v, want both of %v", hosts, c.Nodes)
	}
	for h := range hosts {
		if !strings.Contains(h, " (slurm job ") {
			t.Errorf("a result's hostname %q does not name its node and Slurm job", h)
		}
	}
	code, status, statusErr := runBinary(t, "status", dir)
	if code != exitOK || !strings.Contains(status, "where") || !strings.Contains(status, " (slurm job ") {
		t.Errorf("hone status: exit %d, want a where column naming each trial's node and job:\n%s%s", code, status, statusErr)
	}
	jobs := experimentJobs(t, "hone-"+slurm.ExperimentKey(dir)+"-")
	if len(jobs) < 6 {
		t.Errorf("the queue shows %d jobs of the experiment, want one per trial start (6 at least):\n%s", len(jobs), strings.Join(jobs, "\n"))
	}
	for _, j := range jobs {
		if state := strings.Fields(j)[1]; state != "COMPLETED" {
			t.Errorf("a job of the experiment did not complete: %s", j)
		}
	}
}

// TestSlurmSteps runs the experiment from inside an allocation of both
// nodes, as `sbatch -N2 --wrap "hone run exp.yaml"` does: every trial is a
// job step, and they run on both nodes.
func TestSlurmSteps(t *testing.T) {
	c := slurmtest.RequireExclusive(t) // the allocation takes both nodes whole
	if buildErr != nil {
		t.Fatalf("hone binary: %v", buildErr)
	}
	// The trials ask for no memory, in an allocation made with --mem:
	// each step must still take only its share, so that steps share nodes.
	path, storage := slurmSpec(t, 4, 30, "{name: slurm, mode: step}", "")
	dir := filepath.Join(storage, "onslurm")
	log := filepath.Join(filepath.Dir(path), "hone.log")
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := exec.Command("sbatch", "--parsable", "--wait", "-N2", "--ntasks-per-node=2", "--cpus-per-task=1",
			"--mem=1500M", "--partition="+c.Partition, "--output="+log,
			"--wrap=exec "+honeBin+" run "+path).CombinedOutput()
		done <- result{out, err}
	}()
	// Watch the steps: the most of the experiment's on one node at once.
	prefix := "hone-" + slurm.ExperimentKey(dir) + "-"
	most := 0
	var r result
watch:
	for {
		select {
		case r = <-done:
			break watch
		case <-time.After(50 * time.Millisecond):
		}
		out, err := exec.Command("squeue", "--steps", "--noheader", "--format=%N %j").Output()
		if err != nil {
			continue
		}
		perNode := map[string]int{}
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) == 2 && strings.HasPrefix(f[1], prefix) {
				perNode[f[0]]++
				most = max(most, perNode[f[0]])
			}
		}
	}
	logText, _ := os.ReadFile(log)
	if r.err != nil {
		t.Fatalf("sbatch --wait hone run: %v\n%s\nhone's output:\n%s", r.err, r.out, logText)
	}
	hosts := checkFinished(t, dir)
	if !onNodes(hosts, c.Nodes) {
		t.Errorf("the trials ran on %v, want both of %v; hone's output:\n%s", hosts, c.Nodes, logText)
	}
	if most < 2 {
		t.Errorf("at most %d step of the experiment ran on a node at once, want 2 (each node has 2 CPUs of the allocation)", most)
	}
}

// TestSlurmBadPartition: a partition the cluster does not have is an error
// before any trial starts, naming it (exit 2).
func TestSlurmBadPartition(t *testing.T) {
	slurmtest.Require(t)
	path, storage := slurmSpec(t, 2, 2, "{name: slurm, partition: nosuchpart}", "")
	code, out, errOut := runBinary(t, "run", path)
	if code != exitUsage || !strings.Contains(errOut, `partition "nosuchpart"`) {
		t.Fatalf("hone run: exit %d, want %d naming the partition\n%s%s", code, exitUsage, out, errOut)
	}
	if e, err := results.Open(filepath.Join(storage, "onslurm")); err == nil && len(e.Trials) > 0 {
		t.Errorf("%d trials started", len(e.Trials))
	}

	// 3 CPUs: the two nodes have 4 together, but a trial runs on one
	// node, and each has 2.
	path, storage = slurmSpec(t, 2, 2, "slurm", "resources: {cpu: 3}\n")
	code, out, errOut = runBinary(t, "run", path)
	if code != exitUsage || !strings.Contains(errOut, "resources.cpu: each trial runs on one node and needs 3 CPUs, but the largest node of the slurm executor's pool has 2") {
		t.Fatalf("hone run with a trial bigger than a node: exit %d, want %d naming resources.cpu and the largest node\n%s%s", code, exitUsage, out, errOut)
	}
	if e, err := results.Open(filepath.Join(storage, "onslurm")); err == nil && len(e.Trials) > 0 {
		t.Errorf("%d trials started", len(e.Trials))
	}
}

// TestSlurmTrialBiggerThanCluster: a trial that needs more CPUs than the
// cluster's pool has, or than any one node has (a trial runs on one node),
// is an error of the spec before any trial starts, naming the key and the
// figure (exit 2); hone validate cannot know the cluster's size.
func TestSlurmTrialBiggerThanCluster(t *testing.T) {
	slurmtest.Require(t)
	path, storage := slurmSpec(t, 2, 2, "slurm", "resources: {cpu: 100000}\n")
	code, out, errOut := runBinary(t, "run", path)
	if code != exitUsage || !strings.Contains(errOut, "resources.cpu: each trial needs 100000 CPUs but the slurm executor's pool has ") {
		t.Fatalf("hone run: exit %d, want %d naming resources.cpu and the pool\n%s%s", code, exitUsage, out, errOut)
	}
	if e, err := results.Open(filepath.Join(storage, "onslurm")); err == nil && len(e.Trials) > 0 {
		t.Errorf("%d trials started", len(e.Trials))
	}
}

// waitJobs waits until the queue shows at least n running jobs whose
// names start with prefix, and returns their ids.
func waitJobs(t *testing.T, prefix string, n int, cmd *exec.Cmd) []string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var ids []string
		for _, j := range experimentJobs(t, prefix) {
			if f := strings.Fields(j); f[1] == "RUNNING" {
				ids = append(ids, f[0])
			}
		}
		if len(ids) >= n {
			return ids
		}
		if time.Now().After(deadline) {
			out, errOut := output(cmd)
			t.Fatalf("fewer than %d running jobs after 2 minutes\n%s%s", n, out, errOut)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// running is a hone process a test started and waits for.
type running struct {
	cmd  *exec.Cmd
	done chan error
}

// startHone starts the hone binary with args.
func startHone(t *testing.T, args ...string) *running {
	t.Helper()
	cmd := binary(t, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &running{cmd: cmd, done: make(chan error, 1)}
	go func() { r.done <- cmd.Wait() }()
	return r
}

// wait waits up to limit for hone to exit, and fails the test unless it
// exits with code want.
func (r *running) wait(t *testing.T, limit time.Duration, want int) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(limit):
		_ = r.cmd.Process.Kill()
		t.Fatalf("hone %v did not finish within %v", r.cmd.Args[1:], limit)
	}
	if code := r.cmd.ProcessState.ExitCode(); code != want {
		out, errOut := output(r.cmd)
		t.Fatalf("hone %v: exit %d, want %d\n%s%s", r.cmd.Args[1:], code, want, out, errOut)
	}
}

// TestSlurmScancel: a trial's job cancelled by hand is that trial's
// failure, with Slurm's state in error.txt; hone retries the trial from
// its latest checkpoint and the experiment completes.
func TestSlurmScancel(t *testing.T) {
	slurmtest.Require(t)
	// One trial, which no other can make ASHA stop before the scancel.
	path, storage := slurmSpec(t, 1, 100, "{name: slurm, poll_interval_s: 0.5}", "")
	dir := filepath.Join(storage, "onslurm")
	h := startHone(t, "run", path)
	ids := waitJobs(t, "hone-"+slurm.ExperimentKey(dir)+"-", 1, h.cmd)
	waitReports(t, dir, 4, h.cmd)
	if out, err := exec.Command("scancel", ids[0]).CombinedOutput(); err != nil {
		t.Fatalf("scancel %s: %v %s", ids[0], err, out)
	}
	h.wait(t, 5*time.Minute, exitOK)
	checkFinished(t, dir)
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	var errs []string
	for _, tr := range e.Trials {
		b, err := os.ReadFile(filepath.Join(tr.Dir, "error.txt"))
		errs = append(errs, string(b))
		if err == nil && strings.Contains(string(b), "slurm job "+ids[0]+" ended CANCELLED") {
			failed++
		}
	}
	if failed != 1 {
		t.Logf("error.txt files: %q", errs)
	}
	if failed != 1 {
		t.Errorf("%d trials say in error.txt that job %s was cancelled, want 1", failed, ids[0])
	}
}

// TestSlurmDriverKilled: hone SIGKILLed while its trials run as jobs; the
// resume cancels the jobs the killed run left before it starts any trial,
// so no trial runs twice at once, and the experiment completes with every
// result once.
func TestSlurmDriverKilled(t *testing.T) {
	slurmtest.Require(t)
	path, storage := slurmSpec(t, 2, 40, "{name: slurm, poll_interval_s: 0.5}", "")
	dir := filepath.Join(storage, "onslurm")
	prefix := "hone-" + slurm.ExperimentKey(dir) + "-"
	h := startHone(t, "run", path)
	old := waitJobs(t, prefix, 2, h.cmd)
	waitReports(t, dir, 4, h.cmd)
	_ = h.cmd.Process.Kill()
	<-h.done

	resume := startHone(t, "resume", dir)
	waitFresh(t, prefix, old, resume)
	resume.wait(t, 5*time.Minute, exitOK)
	checkFinished(t, dir)
	for _, j := range experimentJobs(t, prefix) {
		if f := strings.Fields(j); f[1] == "RUNNING" || f[1] == "PENDING" {
			t.Errorf("a job is left after the resume: %s", j)
		}
	}
}

// waitFresh waits until the resume r runs a job of the experiment (its
// jobs' names start with prefix) and fails the test if a job of the killed
// run (old) is still there beside it: the resume must have cancelled them
// before it started any.
func waitFresh(t *testing.T, prefix string, old []string, r *running) {
	t.Helper()
	for {
		var live []string
		for _, j := range experimentJobs(t, prefix) {
			if f := strings.Fields(j); f[1] == "RUNNING" || f[1] == "PENDING" {
				live = append(live, f[0])
			}
		}
		fresh, stale := false, false
		for _, id := range live {
			if slices.Contains(old, id) {
				stale = true
			} else {
				fresh = true
			}
		}
		if fresh && stale {
			t.Fatalf("a job of the killed run (%v) still runs beside the resumed run's: %v", old, live)
		}
		if fresh {
			return
		}
		select {
		case err := <-r.done:
			r.done <- err
			out, errOut := output(r.cmd)
			t.Fatalf("the resume ended before starting a job: exit %d\n%s%s", r.cmd.ProcessState.ExitCode(), out, errOut)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// pbtSlurmSpec writes a PBT experiment over examples/python/train.py whose
// trials are Slurm jobs, and returns the spec's path and the experiment's
// directory.
func pbtSlurmSpec(t *testing.T, population, epochs int) (string, string) {
	t.Helper()
	path, storage := writeTrainSpec(t, func(storage, train string) string {
		return fmt.Sprintf(`name: pbtslurm
metric: accuracy
mode: max
seed: 9
num_samples: %d
search_space:
  lr: {loguniform: [0.05, 1.0]}
  momentum: {choice: [0.0, 0.5, 0.9]}
  hidden: 16
  batch: 16
  epochs: %d
  checkpoint_every: 1
scheduler:
  name: pbt
  perturbation_interval: 10
  quantile_fraction: 0.25
  hyperparam_mutations:
    lr: {loguniform: [0.05, 1.0]}
max_concurrent_trials: %d
checkpoint: {num_to_keep: 2}
failure: {max_failures: 3}
storage: %s
command: [python3, %s]
executor: {name: slurm, poll_interval_s: 0.5}
`, population, epochs, population, storage, train)
	})
	return path, filepath.Join(storage, "pbtslurm")
}

// TestSlurmNodeFailure runs PBT with its trials as jobs on both nodes and
// takes node n2 down in the middle: the jobs that ran there end
// NODE_FAIL, their trials are retried from their checkpoints on n1, and
// the whole population reaches the last iteration.
func TestSlurmNodeFailure(t *testing.T) {
	c := slurmtest.RequireExclusive(t)
	const population, epochs = 4, 60
	path, dir := pbtSlurmSpec(t, population, epochs)
	h := startHone(t, "run", path)
	t.Cleanup(func() {
		_ = c.ControlNode("start", "n2")
		_ = c.ControlNode("resume", "n2")
	})
	prefix := "hone-" + slurm.ExperimentKey(dir) + "-"
	// After a few results, wait for a job running on n2 and take the node
	// down at once.
	waitReports(t, dir, 2*population, h.cmd)
	deadline := time.Now().Add(2 * time.Minute)
	var onN2 string
	for onN2 == "" {
		for _, j := range experimentJobs(t, prefix) {
			if f := strings.Fields(j); f[1] == "RUNNING" && f[2] == "n2" {
				onN2 = f[0]
			}
		}
		if onN2 != "" {
			break
		}
		if time.Now().After(deadline) {
			out, errOut := output(h.cmd)
			t.Fatalf("no job of the experiment ran on n2 within 2 minutes\n%s%s", out, errOut)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := c.ControlNode("kill", "n2"); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("scontrol", "update", "nodename=n2", "state=down", "reason=hone-test").CombinedOutput(); err != nil {
		t.Fatalf("scontrol update: %v %s", err, out)
	}
	h.wait(t, 8*time.Minute, exitOK)
	checkFinished(t, dir)
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Trials) != population {
		t.Errorf("%d trials, want the population of %d", len(e.Trials), population)
	}
	nodeFail := 0
	for _, tr := range e.Trials {
		rows, _ := tr.Results()
		if n := len(rows); n == 0 || rows[n-1]["training_iteration"] != float64(epochs) {
			t.Errorf("trial %s did not reach iteration %d", tr.ID, epochs)
		}
		if b, err := os.ReadFile(filepath.Join(tr.Dir, "error.txt")); err == nil && strings.Contains(string(b), "NODE_FAIL") {
			nodeFail++
		}
	}
	if nodeFail == 0 {
		t.Errorf("no trial's error.txt says its job ended NODE_FAIL (job %s ran on n2)", onN2)
	}
}

// TestSlurmExecutorFlag: --executor slurm runs a spec written for this
// machine on the cluster; an unknown name is a usage error naming the
// known ones.
func TestSlurmExecutorFlag(t *testing.T) {
	slurmtest.Require(t)
	path, storage := slurmSpec(t, 2, 4, "local", "")
	code, out, errOut := runBinary(t, "run", "--executor", "kubernetes", path)
	if code != exitUsage || !strings.Contains(errOut, `unknown executor "kubernetes"; known: local, slurm`) {
		t.Fatalf("--executor kubernetes: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runBinary(t, "run", "--executor", "slurm", path)
	if code != exitOK {
		t.Fatalf("--executor slurm: exit %d\n%s%s", code, out, errOut)
	}
	for h := range checkFinished(t, filepath.Join(storage, "onslurm")) {
		if !strings.Contains(h, "slurm job ") {
			t.Errorf("a result came from %q, not from a Slurm job", h)
		}
	}
}

// TestSlurmStorageNotShared: trials whose node does not see the
// experiment's storage stop the experiment with an error saying so, and
// are not failed: a resume once the storage is fixed continues them. The
// fault is injected through the job's environment: the staging directory
// hone made is then one the node does not have, as on a node without the
// shared filesystem.
func TestSlurmStorageNotShared(t *testing.T) {
	slurmtest.Require(t)
	path, storage := slurmSpec(t, 2, 4,
		"{name: slurm, poll_interval_s: 0.5, sbatch_args: ['--export=ALL,HONE_STAGING_DIR=/nonexistent/hone-staging']}", "")
	code, out, errOut := runBinary(t, "run", path)
	if code == exitOK || !strings.Contains(errOut, "the experiment's storage is not shared with node n") {
		t.Fatalf("hone run: exit %d, want a failure saying the storage is not shared\n%s%s", code, out, errOut)
	}
	dir := filepath.Join(storage, "onslurm")
	e, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range e.Trials {
		if tr.Status == hone.StatusError || tr.Failures > 0 {
			t.Errorf("trial %s: %s after %d failures: the storage's fault is not the trial's", tr.ID, tr.Status, tr.Failures)
		}
	}
	// Fixed (the spec without the fault), the experiment resumes.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fixed := strings.Replace(string(data), ", sbatch_args: ['--export=ALL,HONE_STAGING_DIR=/nonexistent/hone-staging']", "", 1)
	if err := os.WriteFile(path, []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runBinary(t, "resume", dir, "--spec", path)
	if code != exitOK {
		t.Fatalf("hone resume: exit %d\n%s%s", code, out, errOut)
	}
	checkFinished(t, dir)
}

// TestSlurmStorageNotSharedSteps: inside an allocation, the nodes are
// checked once, before any trial starts: a node that does not see the
// experiment's storage keeps the experiment from starting (exit 2, no
// trial), with an error naming the node and the directory hone made;
// fixed, the experiment runs. The fault is injected as in
// TestSlurmStorageNotShared, through the steps' environment: srun_args'
// --export gives the steps only HONE_STAGING_DIR, whose directory each
// node's check looks for, and one no node has. (--export=ALL,VAR=VALUE
// would not do: srun keeps a variable its own environment has.)
func TestSlurmStorageNotSharedSteps(t *testing.T) {
	c := slurmtest.RequireExclusive(t) // the allocation takes both nodes whole
	if buildErr != nil {
		t.Fatalf("hone binary: %v", buildErr)
	}
	const fault = ", srun_args: ['--export=HONE_STAGING_DIR=/nonexistent/hone-staging']"
	path, storage := slurmSpec(t, 2, 4, "{name: slurm, mode: step"+fault+"}", "")
	dir := filepath.Join(storage, "onslurm")
	work := filepath.Dir(path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fixed := filepath.Join(work, "fixed.yaml")
	if err := os.WriteFile(fixed, []byte(strings.Replace(string(data), fault, "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(work, "hone.log")
	script := filepath.Join(work, "job.sh")
	body := fmt.Sprintf("#!/bin/sh\n%s run %s\necho \"hone exit $?\"\n%s run %s\necho \"fixed exit $?\"\n", honeBin, path, honeBin, fixed)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sbatch", "--parsable", "--wait", "-N2", "--ntasks-per-node=2", "--cpus-per-task=1",
		"--mem=1500M", "--time=5", "--partition="+c.Partition, "--output="+log, script).CombinedOutput()
	logText, _ := os.ReadFile(log)
	if err != nil {
		t.Fatalf("sbatch --wait: %v\n%s\noutput:\n%s", err, out, logText)
	}
	first, second, _ := strings.Cut(string(logText), "hone exit ")
	if !strings.HasPrefix(second, strconv.Itoa(exitUsage)+"\n") ||
		!strings.Contains(first, "the experiment's storage is not shared with nodes "+strings.Join(c.Nodes, ", ")+" of the allocation ("+
			filepath.Join(dir, ".hone", "probe-")) {
		t.Fatalf("want hone run to exit %d naming both nodes and the directory it made in %s; output:\n%s", exitUsage, dir, logText)
	}
	if ents, err := os.ReadDir(filepath.Join(dir, ".hone")); err == nil && len(ents) > 0 {
		t.Errorf("the check left %d entries in %s", len(ents), filepath.Join(dir, ".hone"))
	}
	// hone run of the same experiment would refuse a directory whose
	// journal a started run had made.
	if !strings.Contains(second, "fixed exit 0") {
		t.Fatalf("the fixed spec did not run; output:\n%s", logText)
	}
	checkFinished(t, dir)
}

// TestSlurmInterrupt: Ctrl-C (SIGINT) stops an experiment whose trials
// are jobs: they save and stop, hone exits 3, no job of the experiment is
// left in the queue, and a resume finishes the experiment.
func TestSlurmInterrupt(t *testing.T) {
	slurmtest.Require(t)
	path, storage := slurmSpec(t, 2, 200, "{name: slurm, poll_interval_s: 0.5}", "")
	dir := filepath.Join(storage, "onslurm")
	prefix := "hone-" + slurm.ExperimentKey(dir) + "-"
	h := startHone(t, "run", path)
	waitJobs(t, prefix, 2, h.cmd)
	waitReports(t, dir, 4, h.cmd)
	if err := h.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	h.wait(t, 3*time.Minute, exitInterrupted)
	for _, j := range experimentJobs(t, prefix) {
		if f := strings.Fields(j); !slurmcmd.Classify(f[1]).Ended() {
			t.Errorf("a job is left after the stop: %s", j)
		}
	}
	code, out, errOut := runBinary(t, "resume", dir)
	if code != exitOK {
		t.Fatalf("hone resume: exit %d\n%s%s", code, out, errOut)
	}
	checkFinished(t, dir)
}

// TestSlurmStepLeftover: inside an allocation, a step of the experiment
// that a killed hone left running (here one started by hand under the
// experiment's step name) is cancelled by the next hone before it starts
// any trial.
func TestSlurmStepLeftover(t *testing.T) {
	c := slurmtest.RequireExclusive(t)
	if buildErr != nil {
		t.Fatalf("hone binary: %v", buildErr)
	}
	path, storage := slurmSpec(t, 2, 4, "{name: slurm, mode: step}", "resources: {cpu: 1, memory: 200000000}\n")
	dir := filepath.Join(storage, "onslurm")
	work := filepath.Dir(path)
	log := filepath.Join(work, "hone.log")
	script := filepath.Join(work, "job.sh")
	body := fmt.Sprintf(`#!/bin/sh
srun --exclusive -N1 -n1 --mem=100M --job-name=hone-%s-leftover sleep 600 &
left=$!
sleep 2
%s run %s
echo "hone exit $?"
if squeue --steps --noheader --format=%%j --jobs=$SLURM_JOB_ID | grep -q leftover; then
  echo "the leftover step still runs"
  kill $left
fi
wait $left
echo "leftover exit $?"
`, slurm.ExperimentKey(dir), honeBin, path)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sbatch", "--parsable", "--wait", "-N2", "--ntasks-per-node=2", "--cpus-per-task=1",
		"--mem=1500M", "--time=5", "--partition="+c.Partition, "--output="+log, script).CombinedOutput()
	logText, _ := os.ReadFile(log)
	if err != nil {
		t.Fatalf("sbatch --wait: %v\n%s\noutput:\n%s", err, out, logText)
	}
	if !strings.Contains(string(logText), "hone exit 0") || strings.Contains(string(logText), "still runs") ||
		!strings.Contains(string(logText), "leftover exit ") || strings.Contains(string(logText), "leftover exit 0") {
		t.Fatalf("want hone to succeed and the leftover step cancelled; output:\n%s", logText)
	}
	checkFinished(t, dir)
}

// TestSlurmTimeLimit: a trial whose job reaches the time limit fails with
// Slurm's TIMEOUT in error.txt (Slurm's shortest limit is a minute, and
// it ends a job up to half a minute after that: the test runs in parallel,
// after the package's other tests and beside other packages').
func TestSlurmTimeLimit(t *testing.T) {
	// t.Parallel pauses the test until the package's other tests have
	// ended; it takes the cluster's lock only then. Held through the
	// pause, the lock would keep every exclusive test out meanwhile, and
	// one of this package after this test for good (each would wait for
	// the other).
	t.Parallel()
	slurmtest.Require(t)
	path, storage := slurmSpec(t, 1, 100000, "{name: slurm, poll_interval_s: 0.5, time: '1'}", "")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// No retry: the first failure is final.
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), "max_failures: 2", "max_failures: 0", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runBinary(t, "run", path)
	if code != exitTrialErrors {
		t.Fatalf("hone run: exit %d, want %d (a trial failed)\n%s%s", code, exitTrialErrors, out, errOut)
	}
	e, err := results.Open(filepath.Join(storage, "onslurm"))
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Trials) != 1 || e.Trials[0].Status != hone.StatusError || !strings.Contains(e.Trials[0].Error, "ended TIMEOUT on n") {
		for _, tr := range e.Trials {
			t.Logf("trial %s %s: %s", tr.ID, tr.Status, tr.Error)
		}
		t.Fatal("want the one trial in ERROR, its job ended TIMEOUT")
	}
}

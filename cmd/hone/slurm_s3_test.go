package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/slurm"
	"github.com/hone-tune/hone/internal/slurmtest"
)

// objectStoreSpec writes a PBT experiment over examples/python/train.py
// whose storage is the object-store URL storage and whose trials run on
// the test cluster with the executor section given. It returns the
// spec's path.
func objectStoreSpec(t *testing.T, storage, executor string, population, epochs int) string {
	t.Helper()
	path, _ := writeTrainSpec(t, func(_, train string) string {
		return fmt.Sprintf(`name: pbts3
metric: accuracy
mode: max
seed: 4
num_samples: %d
search_space:
  lr: {loguniform: [0.05, 1.0]}
  momentum: {choice: [0.0, 0.5, 0.9]}
  hidden: 8
  batch: 16
  epochs: %d
  checkpoint_every: 1
scheduler:
  name: pbt
  perturbation_interval: 4
  quantile_fraction: 0.5
  hyperparam_mutations:
    lr: {loguniform: [0.05, 1.0]}
max_concurrent_trials: %d
checkpoint: {num_to_keep: 2}
failure: {max_failures: 2}
storage: %s
command: [sh, -c, 'echo "started $HONE_TRIAL_ID"; echo "to stderr" >&2; exec python3 "$0"', %s]
executor: %s
`, population, epochs, population, storage, train, executor)
	})
	return path
}

// checkObjectStoreRun checks an experiment on the object store whose
// trials ran behind the node agent: every trial TERMINATED at the last
// iteration, the checkpoints are in the bucket and none is left in its
// upload directories, no checkpoint's files ever were in the driver's
// cache or working copy, and the nodes' cache kept none once the trials
// ended. It returns how many trials restored from a checkpoint at least
// once (a PBT exploit, a retry, a resume), which the nodes downloaded.
func checkObjectStoreRun(t *testing.T, u, driverCache, nodeCache string, population, epochs int, nodes []string) (restored int) {
	t.Helper()
	st := openS3(t, u)
	e := downloadExperiment(t, st)
	if len(e.Trials) != population {
		t.Fatalf("%d trials, want %d", len(e.Trials), population)
	}
	hosts := map[string]bool{}
	exploited := 0
	for _, tr := range e.Trials {
		if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s ended %s: %s", tr.ID, tr.Status, tr.Error)
		}
		rows, err := tr.Results()
		if err != nil || len(rows) == 0 || rows[len(rows)-1]["training_iteration"] != float64(epochs) {
			t.Errorf("trial %s did not reach iteration %d (%d rows, %v)", tr.ID, epochs, len(rows), err)
		}
		again := false
		for _, r := range rows {
			if h, ok := r["hostname"].(string); ok {
				hosts[h] = true
			}
			it, _ := r["training_iteration"].(float64)
			since, _ := r["iterations_since_restore"].(float64)
			again = again || since < it
		}
		if again {
			restored++
		}
		rel, _ := filepath.Rel(filepathDirOf(tr.Dir), tr.Dir)
		committed, leftovers, err := st.List(context.Background(), filepath.ToSlash(rel))
		if err != nil {
			t.Fatal(err)
		}
		if len(committed) == 0 {
			t.Errorf("trial %s has no checkpoint in the bucket", tr.ID)
		}
		if len(leftovers) != 0 {
			t.Errorf("trial %s left %v in the bucket (an upload never linked, or a cut-short commit)", tr.ID, leftovers)
		}
	}
	if nodes != nil && !onNodes(hosts, nodes) {
		t.Errorf("the trials ran on %v, want both of %v", hosts, nodes)
	}
	policy, _ := filepath.Glob(filepath.Join(filepathDirOf(e.Trials[0].Dir), "*", "pbt_policy_*.txt"))
	for _, p := range policy {
		b, _ := os.ReadFile(p)
		exploited += strings.Count(string(b), "\n")
	}
	t.Logf("%d PBT exploits; %d of %d trials restored from a checkpoint", exploited, restored, population)
	// Nothing of a checkpoint on the driver's side: no download for a
	// restore, no staged copy for a commit.
	_ = filepath.WalkDir(driverCache, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), "checkpoint_") || d.Name() == hone.StagingDirName && hasEntries(p)) {
			t.Errorf("the driver's cache holds %s: a checkpoint passed through the driver", p)
		}
		if !d.IsDir() && strings.Contains(p, string(filepath.Separator)+"checkpoints"+string(filepath.Separator)) {
			t.Errorf("the driver's checkpoint cache holds %s", p)
		}
		return nil
	})
	_ = filepath.WalkDir(nodeCache, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(p, string(filepath.Separator)+"checkpoints"+string(filepath.Separator)) {
			t.Errorf("the nodes' cache still holds %s after the run", p)
		}
		return nil
	})
	return restored
}

// filepathDirOf is the experiment directory of a trial directory.
func filepathDirOf(trialDir string) string { return filepath.Dir(trialDir) }

// hasEntries reports whether the directory p holds anything.
func hasEntries(p string) bool {
	entries, err := os.ReadDir(p)
	return err == nil && len(entries) > 0
}

// TestSlurmObjectStorageJobs runs PBT with its experiment in the S3
// bucket and its trials as jobs: each node's agent restores from and
// commits checkpoints to the bucket itself, and uploads the trial's logs,
// with nothing of a checkpoint through the driver and no filesystem
// shared for the experiment.
func TestSlurmObjectStorageJobs(t *testing.T) {
	c := slurmtest.RequireExclusive(t) // the trials must find both nodes' CPUs free to run on both
	storage := s3Storage(t)
	driverCache, nodeCache := t.TempDir(), t.TempDir()
	const population, epochs = 4, 20
	path := objectStoreSpec(t, storage, fmt.Sprintf("{name: slurm, mode: job, partition: %s, poll_interval_s: 0.5, node_cache: %s}", c.Partition, nodeCache),
		population, epochs)
	code, out, errOut := runS3(t, driverCache, "run", path)
	if code != exitOK {
		t.Fatalf("hone run: exit %d\n%s%s", code, out, errOut)
	}
	u := expURL(storage, "pbts3")
	checkObjectStoreRun(t, u, driverCache, nodeCache, population, epochs, c.Nodes)
	// The logs stay on the nodes' side in job mode: the agent uploads them.
	st := openS3(t, u)
	e := downloadExperiment(t, st)
	for _, tr := range e.Trials {
		// PBT restarts trials: each run's output goes on from the last.
		b, err := os.ReadFile(filepath.Join(tr.Dir, "stdout.log"))
		if err != nil || strings.Count(string(b), "started "+tr.ID+"\n") < 1 {
			t.Errorf("trial %s: stdout.log in the bucket = %q (%v), want a line per run", tr.ID, b, err)
		}
		if runs := strings.Count(string(b), "started "); runs > 1 {
			t.Logf("trial %s ran %d times, its logs appended", tr.ID, runs)
		}
		if b, err := os.ReadFile(filepath.Join(tr.Dir, "stderr.log")); err != nil || !strings.Contains(string(b), "to stderr\n") {
			t.Errorf("trial %s: stderr.log in the bucket = %q (%v)", tr.ID, b, err)
		}
	}
	code, status, statusErr := runS3(t, driverCache, "status", u)
	if code != exitOK || !strings.Contains(status, " (slurm job ") {
		t.Errorf("hone status %s: exit %d, want each trial's node and job:\n%s%s", u, code, status, statusErr)
	}
}

// TestSlurmObjectStorageSteps is the same with hone inside an allocation
// and its trials as job steps, whose output srun carries back.
func TestSlurmObjectStorageSteps(t *testing.T) {
	c := slurmtest.RequireExclusive(t)
	storage := s3Storage(t)
	driverCache, nodeCache := t.TempDir(), t.TempDir()
	const population, epochs = 4, 20
	path := objectStoreSpec(t, storage, "{name: slurm, mode: step, node_cache: "+nodeCache+"}", population, epochs)
	log := filepath.Join(filepath.Dir(path), "hone.log")
	cmd := exec.Command("sbatch", "--parsable", "--wait", "-N2", "--ntasks-per-node=2", "--cpus-per-task=1",
		"--mem=1500M", "--partition="+c.Partition, "--output="+log,
		"--wrap=exec "+honeBin+" run "+path)
	cmd.Env = append(os.Environ(), "HONE_CACHE_DIR="+driverCache, "TMPDIR="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		logText, _ := os.ReadFile(log)
		t.Fatalf("sbatch --wait hone run: %v\n%s\nhone's output:\n%s", err, out, logText)
	}
	checkObjectStoreRun(t, expURL(storage, "pbts3"), driverCache, nodeCache, population, epochs, c.Nodes)
}

// TestSlurmObjectStorageDriverKilled: hone SIGKILLed while its trials run
// as jobs and commit to the bucket; a resume from the URL on "another
// machine" (an empty cache directory, so another working copy) finds and
// cancels the jobs the killed run left before it starts any, removes the
// uploads the killed run never copied to their place, and completes the
// experiment.
func TestSlurmObjectStorageDriverKilled(t *testing.T) {
	c := slurmtest.RequireExclusive(t) // the four trials run at once only on every CPU of the cluster
	storage := s3Storage(t)
	first, second, nodeCache := t.TempDir(), t.TempDir(), t.TempDir()
	const population, epochs = 4, 30
	path := objectStoreSpec(t, storage, fmt.Sprintf("{name: slurm, mode: job, partition: %s, poll_interval_s: 0.5, node_cache: %s}", c.Partition, nodeCache),
		population, epochs)
	u := expURL(storage, "pbts3")
	prefix := "hone-" + slurm.StoreKey(u) + "-"
	cmd := s3Binary(t, first, "run", path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	old := waitJobs(t, prefix, population, cmd)
	waitReports(t, workDir(t, first, u), 2*population, cmd)
	_ = cmd.Process.Kill()
	<-done

	resume := &running{cmd: s3Binary(t, second, "resume", u), done: make(chan error, 1)}
	if err := resume.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { resume.done <- resume.cmd.Wait() }()
	waitFresh(t, prefix, old, resume)
	resume.wait(t, 5*time.Minute, exitOK)
	if checkObjectStoreRun(t, u, second, nodeCache, population, epochs, nil) == 0 {
		t.Error("no trial restored from a checkpoint after the resume")
	}
	for _, j := range experimentJobs(t, prefix) {
		if f := strings.Fields(j); f[1] == "RUNNING" || f[1] == "PENDING" {
			t.Errorf("a job is left after the resume: %s", j)
		}
	}
}

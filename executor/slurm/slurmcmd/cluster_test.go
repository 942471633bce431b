package slurmcmd_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hone-tune/hone/executor/slurm/slurmcmd"
	"github.com/hone-tune/hone/internal/slurmtest"
)

// These tests run Slurm's commands against the real cluster that
// scripts/test.sh starts (scripts/slurm.sh), and skip without it.

// bound is how long a test waits for Slurm to do something it does within
// a few seconds: a bound, not an expectation.
const bound = 2 * time.Minute

// uniqueName returns a job name no other test run uses.
func uniqueName() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "hone-it-" + hex.EncodeToString(b[:])
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// submit submits argv and cancels the job when the test ends.
func submit(t *testing.T, ctx context.Context, c slurmcmd.Client, o slurmcmd.JobOptions, argv ...string) string {
	t.Helper()
	id, err := c.Submit(ctx, o, argv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Cancel(context.Background(), "", id) })
	return id
}

// jobOptions returns options that keep a job's files in the test's
// temporary directory.
func jobOptions(t *testing.T, cl slurmtest.Cluster, name string) slurmcmd.JobOptions {
	dir := t.TempDir()
	return slurmcmd.JobOptions{
		Name:      name,
		Partition: cl.Partition,
		Chdir:     dir,
		Output:    filepath.Join(dir, "slurm-%j.out"),
	}
}

// waitJob polls Job until done accepts the job, and returns it.
func waitJob(t *testing.T, ctx context.Context, c slurmcmd.Client, id string, what string, done func(slurmcmd.Job) bool) slurmcmd.Job {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		j, err := c.Job(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if done(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s is not %s within %v: %s", id, what, bound, j.Summary())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func ended(j slurmcmd.Job) bool { return slurmcmd.Classify(j.State).Ended() }

func running(j slurmcmd.Job) bool { return slurmcmd.Classify(j.State) == slurmcmd.Running }

// TestQueueAndCancel submits two jobs under one name, finds both with one
// squeue, cancels both with one scancel, and finds them cancelled.
func TestQueueAndCancel(t *testing.T) {
	cl := slurmtest.Require(t)
	ctx := testContext(t)
	var c slurmcmd.Client
	name := uniqueName()
	ids := make(map[string]string) // comment → id
	for _, comment := range []string{"hone trial=0001", "hone trial=0002"} {
		o := jobOptions(t, cl, name)
		o.Comment = comment
		ids[comment] = submit(t, ctx, c, o, "sleep", "30")
	}

	var jobs []slurmcmd.Job
	deadline := time.Now().Add(bound)
	for {
		var err error
		jobs, err = c.Queue(ctx, slurmcmd.Query{Names: []string{name}})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) == 2 && running(jobs[0]) && running(jobs[1]) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("squeue --name=%s: %+v, want two running jobs within %v", name, jobs, bound)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, j := range jobs {
		if j.Name != name || ids[j.Comment] != j.ID {
			t.Errorf("queued job %+v: want name %s and the comment it was submitted with (%v)", j, name, ids)
		}
		if j.State != "RUNNING" || j.Nodes == "" {
			t.Errorf("queued job %+v: want RUNNING on a node", j)
		}
	}
	// The same jobs by id.
	byID, err := c.Queue(ctx, slurmcmd.Query{IDs: []string{ids["hone trial=0001"], ids["hone trial=0002"]}})
	if err != nil || len(byID) != 2 {
		t.Fatalf("squeue --jobs: %+v, %v; want the two jobs", byID, err)
	}

	if err := c.Cancel(ctx, "", ids["hone trial=0001"], ids["hone trial=0002"]); err != nil {
		t.Fatal(err)
	}
	for comment, id := range ids {
		j := waitJob(t, ctx, c, id, "ended", ended)
		if o := slurmcmd.Classify(j.State); o != slurmcmd.Cancelled {
			t.Errorf("cancelled job: %s, classified %v; want cancelled", j.Summary(), o)
		}
		if j.Name != name || j.Comment != comment {
			t.Errorf("scontrol: job %s named %q with comment %q, want %q and %q", id, j.Name, j.Comment, name, comment)
		}
	}
	// squeue still lists them, ended, until MinJobAge has passed.
	jobs, err = c.Queue(ctx, slurmcmd.Query{Names: []string{name}})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if slurmcmd.Classify(j.State) != slurmcmd.Cancelled {
			t.Errorf("squeue after the cancel: %+v, want CANCELLED", j)
		}
	}
}

// TestExitCode finds a job that exits 3 failed with exit code 3.
func TestExitCode(t *testing.T) {
	cl := slurmtest.Require(t)
	ctx := testContext(t)
	var c slurmcmd.Client
	id := submit(t, ctx, c, jobOptions(t, cl, uniqueName()), "sh", "-c", "exit 3")
	j := waitJob(t, ctx, c, id, "ended", ended)
	if slurmcmd.Classify(j.State) != slurmcmd.Failed || j.ExitCode != 3 || j.Signal != 0 {
		t.Fatalf("job that exits 3: %+v, want FAILED with exit code 3", j)
	}
	if s := j.Summary(); !strings.Contains(s, "FAILED") || !strings.Contains(s, "exit code 3") {
		t.Errorf("Summary() = %q, want FAILED and exit code 3", s)
	}
}

// TestAwkwardArgv runs arguments a shell would mangle through sbatch
// --wrap: the job gets them as they are.
func TestAwkwardArgv(t *testing.T) {
	cl := slurmtest.Require(t)
	ctx := testContext(t)
	var c slurmcmd.Client
	args := []string{"", "two words", "it's", `"dq"`, `back\slash`, "$HOME", "`id`", "$(id)", "a;b", "*", "~", "new\nline", "#x", "ünï"}
	o := jobOptions(t, cl, uniqueName())
	id := submit(t, ctx, c, o, append([]string{"printf", `%s\0`}, args...)...)
	j := waitJob(t, ctx, c, id, "ended", ended)
	if slurmcmd.Classify(j.State) != slurmcmd.Completed || j.ExitCode != 0 {
		t.Fatalf("printf job: %s", j.Summary())
	}
	out, err := os.ReadFile(filepath.Join(o.Chdir, "slurm-"+id+".out"))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if !reflect.DeepEqual(got, args) {
		t.Errorf("the job got %q, want %q", got, args)
	}
}

// TestSignalOnly sends SIGTERM to a job that ends by itself on it: the job
// is not cancelled, it completes.
func TestSignalOnly(t *testing.T) {
	cl := slurmtest.Require(t)
	ctx := testContext(t)
	var c slurmcmd.Client
	o := jobOptions(t, cl, uniqueName())
	ready := filepath.Join(o.Chdir, "ready")
	id := submit(t, ctx, c, o, "sh", "-c", `trap 'exit 0' TERM; touch "$1"; while :; do sleep 0.1; done`, "sh", ready)
	waitFile(t, ready)
	if err := c.Cancel(ctx, "TERM", id); err != nil {
		t.Fatal(err)
	}
	j := waitJob(t, ctx, c, id, "ended", ended)
	if slurmcmd.Classify(j.State) != slurmcmd.Completed {
		t.Fatalf("job that exits 0 on SIGTERM: %s, want COMPLETED", j.Summary())
	}
}

// TestBadPartition submits to a partition the cluster does not have: the
// error carries sbatch's, which names it.
func TestBadPartition(t *testing.T) {
	cl := slurmtest.Require(t)
	ctx := testContext(t)
	var c slurmcmd.Client
	o := jobOptions(t, cl, uniqueName())
	o.Partition = "no-such-partition"
	id, err := c.Submit(ctx, o, []string{"true"})
	if err == nil {
		_ = c.Cancel(ctx, "", id)
		t.Fatalf("submitted job %s to a partition that does not exist", id)
	}
	var ce *slurmcmd.CmdError
	if !errors.As(err, &ce) || ce.ExitCode == 0 || !strings.Contains(ce.Stderr, "no-such-partition") {
		t.Fatalf("error %v: want a CmdError with sbatch's stderr", err)
	}
	for _, want := range []string{"submit job " + o.Name, "sbatch", "invalid partition", "no-such-partition"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestUnknownJob asks about a job id slurmctld does not know, on a
// cluster that keeps no accounting.
func TestUnknownJob(t *testing.T) {
	slurmtest.Require(t)
	ctx := testContext(t)
	var c slurmcmd.Client
	const id = "987654321"
	_, err := c.Job(ctx, id)
	if !errors.Is(err, slurmcmd.ErrNoJob) || !errors.Is(err, slurmcmd.ErrNoAccounting) {
		t.Errorf("Job(%s): %v, want ErrNoJob and ErrNoAccounting", id, err)
	}
	jobs, err := c.Queue(ctx, slurmcmd.Query{IDs: []string{id}})
	if err != nil || len(jobs) != 0 {
		t.Errorf("Queue(IDs: %s) = %+v, %v; want nothing", id, jobs, err)
	}
	if err := c.Cancel(ctx, "", id); err != nil {
		t.Errorf("Cancel(%s): %v", id, err)
	}
}

// TestNodeFailure runs a job on n2, stops n2's slurmd and sets the node
// down: the job ends NODE_FAIL on n2. n2 comes back for the next tests.
func TestNodeFailure(t *testing.T) {
	cl := slurmtest.RequireExclusive(t)
	ctx := testContext(t)
	var c slurmcmd.Client
	const node = "n2"
	t.Cleanup(func() {
		if err := cl.ControlNode("start", node); err != nil {
			t.Error(err)
		}
		if err := cl.ControlNode("resume", node); err != nil {
			t.Error(err)
		}
	})
	o := jobOptions(t, cl, uniqueName())
	o.Nodelist = node
	id := submit(t, ctx, c, o, "sleep", "300")
	j := waitJob(t, ctx, c, id, "running", running)
	if j.Nodes != node {
		t.Fatalf("job with --nodelist=%s runs on %q", node, j.Nodes)
	}
	if err := cl.ControlNode("stop", node); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(ctx, "scontrol", "update", "nodename="+node, "state=down", "reason=hone-test").CombinedOutput(); err != nil {
		t.Fatalf("scontrol update state=down: %v: %s", err, out)
	}
	j = waitJob(t, ctx, c, id, "ended", ended)
	if o := slurmcmd.Classify(j.State); o != slurmcmd.NodeFail {
		t.Fatalf("job on a node that went down: %s, classified %v; want node failure", j.Summary(), o)
	}
	if s := j.Summary(); !strings.Contains(s, "ended NODE_FAIL on "+node) {
		t.Errorf("Summary() = %q, want it to say NODE_FAIL on %s", s, node)
	}
}

// waitFile waits until path exists.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within %v", path, bound)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// srun starts srun with StepArgs in its own process group, and kills the
// group when the test ends.
func srun(t *testing.T, ctx context.Context, o slurmcmd.StepOptions, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, "srun", slurmcmd.StepArgs(o, argv)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return cmd
}

// waitStep polls Steps of job until present(step named name) holds, and
// returns that step (zero when absent).
func waitStep(t *testing.T, ctx context.Context, c slurmcmd.Client, job, name, what string, present bool) slurmcmd.Step {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		steps, err := c.Steps(ctx, job)
		if err != nil {
			t.Fatal(err)
		}
		var found slurmcmd.Step
		for _, s := range steps {
			if s.Name == name {
				found = s
			}
		}
		if (found.ID != "") == present {
			return found
		}
		if time.Now().After(deadline) {
			t.Fatalf("step %s of job %s is not %s within %v (steps: %+v)", name, job, what, bound, steps)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSteps runs trials as steps of one allocation, as a driver inside it
// would, and checks how each way of ending one works: a signal to the step
// through scancel reaches the task, SIGTERM to srun kills the task without
// a signal it can catch, SIGKILL to srun alone ends the step, and SIGKILL
// to srun's process group leaves the step running, where Steps finds it and
// Cancel ends it.
// TestHostnames: scontrol expands a compressed node list as
// SLURM_JOB_NODELIST has it.
func TestHostnames(t *testing.T) {
	cl := slurmtest.Require(t)
	var c slurmcmd.Client
	got, err := c.Hostnames(testContext(t), "n[1-2],x07")
	if want := []string{"n1", "n2", "x07"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Hostnames = %q, %v; want %q", got, err, want)
	}
	got, err = c.Hostnames(testContext(t), strings.Join(cl.Nodes, ","))
	if err != nil || !reflect.DeepEqual(got, cl.Nodes) {
		t.Errorf("Hostnames of the cluster's nodes = %q, %v; want %q", got, err, cl.Nodes)
	}
}

func TestSteps(t *testing.T) {
	cl := slurmtest.Require(t)
	ctx := testContext(t)
	var c slurmcmd.Client
	name := uniqueName()
	o := jobOptions(t, cl, name+"-alloc")
	o.Resources.CPUs = 2
	alloc := submit(t, ctx, c, o, "sleep", "600")
	waitJob(t, ctx, c, alloc, "running", running)
	dir := t.TempDir()
	step := func(s string) slurmcmd.StepOptions {
		return slurmcmd.StepOptions{Name: name + "-" + s, JobID: alloc, Resources: slurmcmd.Resources{CPUs: 1}, Chdir: dir}
	}
	// trap writes a file once it has set its SIGTERM trap, writes another
	// if the trap runs, and beats: it appends to a third every 0.1 s.
	trap := func(s string) []string {
		return []string{"sh", "-c", `trap 'touch "$1.term"; exit 7' TERM; touch "$1.ready"; while :; do echo >>"$1.beat"; sleep 0.1; done`, "sh", filepath.Join(dir, s)}
	}

	t.Run("scancel --signal=TERM reaches the task", func(t *testing.T) {
		cmd := srun(t, ctx, step("term"), trap("term")...)
		waitFile(t, filepath.Join(dir, "term.ready"))
		s := waitStep(t, ctx, c, alloc, name+"-term", "running", true)
		if s.JobID != alloc || !strings.HasPrefix(s.ID, alloc+".") || s.Nodes == "" {
			t.Errorf("step %+v: want a step of job %s on a node", s, alloc)
		}
		if err := c.Cancel(ctx, "TERM", s.ID); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 7 {
			t.Errorf("srun of a task that exits 7 on SIGTERM: %v, want exit status 7", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "term.term")); err != nil {
			t.Errorf("the task's trap did not run: %v", err)
		}
	})

	t.Run("SIGTERM to srun kills the task", func(t *testing.T) {
		cmd := srun(t, ctx, step("srunterm"), trap("srunterm")...)
		waitFile(t, filepath.Join(dir, "srunterm.ready"))
		waitStep(t, ctx, c, alloc, name+"-srunterm", "running", true)
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() == 7 || ee.ExitCode() == 0 {
			t.Errorf("srun after SIGTERM: %v, want a failure that is not the trap's exit 7", err)
		}
		waitStep(t, ctx, c, alloc, name+"-srunterm", "gone", false)
		if _, err := os.Stat(filepath.Join(dir, "srunterm.term")); err == nil {
			t.Error("the task caught SIGTERM; srun used to kill it with SIGKILL")
		}
	})

	t.Run("SIGKILL to srun alone ends the step", func(t *testing.T) {
		cmd := srun(t, ctx, step("srunkill"), trap("srunkill")...)
		waitFile(t, filepath.Join(dir, "srunkill.ready"))
		waitStep(t, ctx, c, alloc, name+"-srunkill", "running", true)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		waitStep(t, ctx, c, alloc, name+"-srunkill", "gone after srun's death", false)
	})

	t.Run("SIGKILL to srun's group leaves an orphan step", func(t *testing.T) {
		cmd := srun(t, ctx, step("orphan"), trap("orphan")...)
		waitFile(t, filepath.Join(dir, "orphan.ready"))
		waitStep(t, ctx, c, alloc, name+"-orphan", "running", true)
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		// The task still beats after srun and its watcher are gone.
		beat := filepath.Join(dir, "orphan.beat")
		want := beats(t, beat) + 3
		deadline := time.Now().Add(bound)
		for beats(t, beat) < want {
			if time.Now().After(deadline) {
				t.Fatalf("the orphan task stopped beating at %d beats", beats(t, beat))
			}
			time.Sleep(50 * time.Millisecond)
		}
		s := waitStep(t, ctx, c, alloc, name+"-orphan", "listed", true)
		if err := c.Cancel(ctx, "", s.ID); err != nil {
			t.Fatal(err)
		}
		waitStep(t, ctx, c, alloc, name+"-orphan", "gone after scancel", false)
	})
}

// beats counts the lines of path.
func beats(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// hog is a command that holds 400 MB until it has slept a minute: far
// beyond the 100 MB the memory tests ask for, and bounded if Slurm does
// not kill it.
var hog = []string{"sh", "-c", "{ head -c 400000000 /dev/zero; sleep 60; } | tail -c 400000000 >/dev/null"}

// TestOverMemory runs a job and a step that use more memory than they ask
// for: the test cluster enforces memory by polling (OverMemoryKill, no
// cgroups), and Slurm 22.05 kills both, calls the job FAILED (signal 9)
// and makes srun exit 137: only slurmstepd's line in their stderr says
// why, which MemoryKill finds.
func TestOverMemory(t *testing.T) {
	cl := slurmtest.Require(t)
	ctx := testContext(t)
	var c slurmcmd.Client
	o := jobOptions(t, cl, uniqueName())
	o.Resources.MemMB = 100
	o.Error = filepath.Join(o.Chdir, "stderr.log")
	id := submit(t, ctx, c, o, hog...)
	j := waitJob(t, ctx, c, id, "ended", ended)
	stderr, _ := os.ReadFile(o.Error)
	line := slurmcmd.MemoryKill(string(stderr))
	if slurmcmd.Classify(j.State) != slurmcmd.Failed || j.Signal != 9 || !strings.HasPrefix(line, "StepId="+id+".batch exceeded memory limit (") {
		t.Errorf("job over its memory: %s, MemoryKill %q; want FAILED, signal 9, and slurmstepd's line\nstderr:\n%s", j.Summary(), line, stderr)
	}

	alloc := submit(t, ctx, c, jobOptions(t, cl, uniqueName()), "sleep", "600")
	waitJob(t, ctx, c, alloc, "running", running)
	var out strings.Builder
	cmd := exec.CommandContext(ctx, "srun", slurmcmd.StepArgs(slurmcmd.StepOptions{Name: uniqueName(), JobID: alloc,
		Resources: slurmcmd.Resources{MemMB: 100}, Chdir: o.Chdir}, hog)...)
	cmd.Stderr = &out
	err := cmd.Run()
	line = slurmcmd.MemoryKill(out.String())
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 137 || !strings.HasPrefix(line, "StepId="+alloc+".0 exceeded memory limit (") {
		t.Errorf("step over its memory: srun %v, MemoryKill %q; want exit status 137 and slurmstepd's line\nstderr:\n%s", err, line, out.String())
	}
}

// TestPreempted runs a job on n2 and submits an exclusive one there to the
// urgent partition: the first ends PREEMPTED, and the urgent one runs.
func TestPreempted(t *testing.T) {
	cl := slurmtest.RequireExclusive(t) // the urgent job takes n2 whole
	ctx := testContext(t)
	var c slurmcmd.Client
	const node = "n2"
	o := jobOptions(t, cl, uniqueName())
	o.Nodelist = node
	id := submit(t, ctx, c, o, "sleep", "300")
	waitJob(t, ctx, c, id, "running", running)
	u := jobOptions(t, cl, uniqueName())
	u.Partition, u.Nodelist, u.Extra = cl.Urgent, node, []string{"--exclusive"}
	urgent := submit(t, ctx, c, u, "sleep", "300")
	j := waitJob(t, ctx, c, id, "ended", ended)
	if o := slurmcmd.Classify(j.State); o != slurmcmd.Preempted || j.Nodes != node {
		t.Fatalf("job preempted on %s: %s, classified %v; want preempted", node, j.Summary(), o)
	}
	if s := j.Summary(); !strings.HasPrefix(s, "slurm job "+id+" ended PREEMPTED on "+node) {
		t.Errorf("Summary() = %q, want it to say PREEMPTED on %s", s, node)
	}
	if u := waitJob(t, ctx, c, urgent, "running", running); u.Nodes != node {
		t.Errorf("the urgent job runs on %q, want %s", u.Nodes, node)
	}
}

package slurm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/process"
	"github.com/hone-tune/hone/executor/slurm/slurmcmd"
)

func TestResources(t *testing.T) {
	for _, tc := range []struct {
		in   hone.Resources
		want slurmcmd.Resources
	}{
		{hone.Resources{}, slurmcmd.Resources{CPUs: 1}},
		{hone.Resources{CPU: 0.5}, slurmcmd.Resources{CPUs: 1}},
		{hone.Resources{CPU: 2.2, Memory: 1<<30 + 1}, slurmcmd.Resources{CPUs: 3, MemMB: 1025}},
		{hone.Resources{CPU: 4, GPU: 1.5, Custom: map[string]float64{"tpu": 2, "lic": 0.1, "none": 0}},
			slurmcmd.Resources{CPUs: 4, GPUs: 2, Gres: []string{"lic:1", "tpu:2"}}},
	} {
		if got := resources(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("resources(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestExpandCounts(t *testing.T) {
	for in, want := range map[string][]int{"2": {2}, "2(x3)": {2, 2, 2}, "4(x2),1": {4, 4, 1}} {
		got, err := expandCounts(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("expandCounts(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "2(xa)"} {
		if _, err := expandCounts(bad); err == nil {
			t.Errorf("expandCounts(%q): no error", bad)
		}
	}
	env := map[string]string{"SLURM_JOB_CPUS_PER_NODE": "2(x2)", "SLURM_MEM_PER_NODE": "1500"}
	c, err := allocationPool(func(k string) string { return env[k] })
	if err != nil || c.Pool.CPU != 4 || c.Pool.Memory != 3000<<20 {
		t.Errorf("allocationPool = %v, %v; want 4 CPUs and 3000 MiB", c.Pool, err)
	}
	if len(c.Nodes) != 2 || c.Nodes[1].CPU != 2 || c.Nodes[1].Memory != 1500<<20 {
		t.Errorf("allocationPool nodes = %v; want two of 2 CPUs and 1500 MiB", c.Nodes)
	}
}

func TestParseNodes(t *testing.T) {
	// A node in two partitions is listed twice; it counts once.
	c, err := parseNodes("n1|2|4000|(null)\nn2|8|16000|gpu:a100:4(S:0-1),mps:100\nn2|8|16000|gpu:a100:4(S:0-1),mps:100\n")
	if r := c.Pool; err != nil || r.CPU != 10 || r.Memory != 20000<<20 || r.GPU != 4 {
		t.Errorf("parseNodes = %v, %v", r, err)
	}
	want := []Node{{"n1", hone.Resources{CPU: 2, Memory: 4000 << 20}}, {"n2", hone.Resources{CPU: 8, Memory: 16000 << 20, GPU: 4}}}
	if !reflect.DeepEqual(c.Nodes, want) {
		t.Errorf("parseNodes nodes = %v, want %v", c.Nodes, want)
	}
	if _, err := parseNodes(""); err == nil {
		t.Error("parseNodes of nothing: no error")
	}
}

// TestChecked runs the check every trial's command goes through with a
// real shell: it runs the command, awkward arguments intact, when the
// staging directory is there, and exits notShared saying why when not.
func TestChecked(t *testing.T) {
	staging := t.TempDir()
	argv := checked([]string{"printf", "%s|", "a b", "it's", "$HOME", ""})
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "HONE_STAGING_DIR="+staging)
	out, err := cmd.Output()
	if err != nil || string(out) != "a b|it's|$HOME||" {
		t.Errorf("checked command: %q, %v", out, err)
	}
	missing := filepath.Join(staging, "gone")
	cmd = exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "HONE_STAGING_DIR="+missing)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	var xe *exec.ExitError
	if !errors.As(err, &xe) || xe.ExitCode() != notShared || !strings.Contains(stderr.String(), missing+" does not exist on ") {
		t.Errorf("without the staging directory: %v, stderr %q", err, stderr.String())
	}
}

// TestFailure: how a failed job is told apart from a storage the node
// does not see.
func TestFailure(t *testing.T) {
	dir := t.TempDir()
	stderr := filepath.Join(dir, "stderr.log")
	if err := os.WriteFile(stderr, []byte("Traceback\nValueError: bad lr\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	failed := slurmcmd.Job{ID: "12", State: "FAILED", Nodes: "n1", ExitCode: 1}
	var je *JobError
	if err := failure(failed, dir, stderr, 0, false); !errors.As(err, &je) || !strings.Contains(err.Error(), "ValueError: bad lr") ||
		errors.Is(err, hone.ErrStopExperiment) {
		t.Errorf("a failed job: %v", err)
	}
	for _, j := range []slurmcmd.Job{
		{ID: "13", State: "FAILED", Nodes: "n2", ExitCode: notShared},
		{ID: "14", State: "FAILED", Nodes: "n2", ExitCode: 0},
	} {
		out := stderr
		if j.ExitCode == 0 {
			out = filepath.Join(dir, "never-written.log")
		}
		var se *StorageError
		if err := failure(j, dir, out, 0, false); !errors.As(err, &se) || !errors.Is(err, hone.ErrStopExperiment) ||
			!strings.Contains(err.Error(), "not shared with node n2") {
			t.Errorf("job %s: %v, want a StorageError", j.ID, err)
		}
	}
	// A job cancelled before it started has no output either: that is no
	// storage fault.
	cancelled := slurmcmd.Job{ID: "15", State: "CANCELLED"}
	if err := failure(cancelled, dir, filepath.Join(dir, "never-written.log"), 0, false); errors.Is(err, hone.ErrStopExperiment) {
		t.Errorf("a job cancelled while pending: %v", err)
	}
	// Behind the node agent (an object store), the logs are never on
	// hone's side: only the agent's status says the store is out of
	// reach.
	var se *StorageError
	if err := failure(slurmcmd.Job{ID: "16", State: "FAILED", Nodes: "n1", ExitCode: notShared}, dir, filepath.Join(dir, "never-written.log"), 0, true); !errors.As(err, &se) ||
		!errors.Is(err, hone.ErrStopExperiment) || !strings.Contains(err.Error(), "node n1 cannot reach the experiment's object store") {
		t.Errorf("an agent that cannot reach the store: %v, want a StorageError", err)
	}
	if err := failure(slurmcmd.Job{ID: "17", State: "FAILED", Nodes: "n1", ExitCode: 1}, dir, filepath.Join(dir, "never-written.log"), 0, true); errors.Is(err, hone.ErrStopExperiment) {
		t.Errorf("a failed trial behind the agent: %v, want a JobError", err)
	}
}

// TestFailureOutOfMemory: a job that slurmstepd killed for its memory
// fails out of memory, whatever state Slurm gives it, and the line of an
// earlier run of the trial, above where this run's output starts, does not
// count.
func TestFailureOutOfMemory(t *testing.T) {
	dir := t.TempDir()
	stderr := filepath.Join(dir, "stderr.log")
	earlier := "slurmstepd-n1: error: StepId=20.batch exceeded memory limit (118538240 > 104857600), being killed\n" +
		"slurmstepd-n1: error: Exceeded job memory limit\n"
	this := "start\nslurmstepd-n2: error: StepId=21.batch exceeded memory limit (220000256 > 209715200), being killed\n" +
		"slurmstepd-n2: error: Exceeded job memory limit\n"
	if err := os.WriteFile(stderr, []byte(earlier+this), 0o644); err != nil {
		t.Fatal(err)
	}
	j := slurmcmd.Job{ID: "21", State: "FAILED", Reason: "JobLaunchFailure", Nodes: "n2", Signal: 9}
	var je *JobError
	err := failure(j, dir, stderr, int64(len(earlier)), false)
	want := "slurm job 21 ended FAILED on n2 (JobLaunchFailure), signal 9, out of memory: " +
		"StepId=21.batch exceeded memory limit (220000256 > 209715200), being killed; stderr ends:\n"
	if !errors.As(err, &je) || je.Outcome() != slurmcmd.OutOfMemory || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("a job killed for its memory: %v, want %q...", err, want)
	}
	// The next run fails otherwise: the earlier runs' lines are no
	// part of its error.
	if err := os.WriteFile(stderr, []byte(earlier+this+"Traceback\nValueError: bad lr\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	j = slurmcmd.Job{ID: "22", State: "FAILED", Reason: "NonZeroExitCode", Nodes: "n1", ExitCode: 1}
	err = failure(j, dir, stderr, int64(len(earlier+this)), false)
	if !errors.As(err, &je) || je.Outcome() != slurmcmd.Failed || strings.Contains(err.Error(), "out of memory") {
		t.Errorf("a job that failed after one killed for its memory: %v (%v)", err, je.Outcome())
	}
	// Slurm's own state, with cgroups.
	j = slurmcmd.Job{ID: "23", State: "OUT_OF_MEMORY", Reason: "OutOfMemory", Nodes: "n1", ExitCode: 0, Signal: 0}
	if err := failure(j, dir, stderr, int64(len(earlier+this)), false); !errors.As(err, &je) || je.Outcome() != slurmcmd.OutOfMemory {
		t.Errorf("a job that ended OUT_OF_MEMORY: %v", err)
	}
}

// TestMemShare: a step that asks for no memory gets its CPUs' share of
// the allocation's memory on a node, so that steps share nodes.
func TestMemShare(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		cpus int
		want int
	}{
		{map[string]string{"SLURM_MEM_PER_NODE": "1500", "SLURM_CPUS_ON_NODE": "2"}, 1, 750},
		{map[string]string{"SLURM_MEM_PER_NODE": "1500", "SLURM_CPUS_ON_NODE": "2"}, 2, 1500},
		{map[string]string{"SLURM_MEM_PER_CPU": "1000", "SLURM_CPUS_ON_NODE": "4"}, 3, 3000},
		{map[string]string{"SLURM_CPUS_ON_NODE": "4"}, 1, 0},
		// salloc sets no SLURM_CPUS_ON_NODE: the fewest CPUs on a node.
		{map[string]string{"SLURM_MEM_PER_NODE": "1500", "SLURM_JOB_CPUS_PER_NODE": "2(x2)"}, 1, 750},
		{map[string]string{}, 1, 0},
	} {
		l := &stepLauncher{getenv: func(k string) string { return c.env[k] }}
		if got := l.memShare(c.cpus); got != c.want {
			t.Errorf("memShare(%d) with %v = %d, want %d", c.cpus, c.env, got, c.want)
		}
	}
}

// TestStoreKey: an experiment on an object store has one key wherever its
// working copy is and however its URL's query is written.
func TestStoreKey(t *testing.T) {
	a := StoreKey("s3://b/p/exp?endpoint=http://127.0.0.1:9000&region=us-east-1")
	if b := StoreKey("s3://b/p//exp/?region=us-east-1&endpoint=http://10.0.0.1:9000"); a != b {
		t.Errorf("the same experiment: keys %s and %s", a, b)
	}
	if c := StoreKey("s3://b/p/other?endpoint=http://127.0.0.1:9000"); a == c {
		t.Errorf("two experiments share the key %s", a)
	}
	if d := StoreKey("s3://c/p/exp"); a == d {
		t.Errorf("two buckets share the key %s", a)
	}
}

// squeueState is a Runner answering squeue with one job whose state the
// test sets: it stands in for the cluster only to control when the job
// leaves the queue.
type squeueState struct {
	mu    sync.Mutex
	state string
	nodes string
}

func (s *squeueState) set(state, nodes string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state, s.nodes = state, nodes
}

func (s *squeueState) Run(_ context.Context, name string, _ ...string) ([]byte, error) {
	if name != "squeue" {
		return nil, fmt.Errorf("%s: not squeue", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return []byte("12|" + s.state + "|None|" + s.nodes + "|hone-k-a|hone-experiment-k\n"), nil
}

// TestJobRunning: a job's Running is closed once a poll sees it running,
// not while it is pending, and its node is known by then.
func TestJobRunning(t *testing.T) {
	sq := &squeueState{state: "PENDING"}
	l := newJobLauncher(slurmcmd.Client{Runner: sq}, Options{Key: "k", Poll: time.Millisecond})
	j := &job{l: l, id: "12", name: "hone-k-a", submitted: make(chan struct{}), done: make(chan struct{}), running: make(chan struct{})}
	close(j.submitted)
	l.track(j)
	var _ process.Queued = j
	for range 20 { // polls that see it pending
		select {
		case <-j.Running():
			t.Fatal("Running closed while the job is pending")
		case <-time.After(5 * time.Millisecond):
		}
	}
	sq.set("RUNNING", "n2")
	select {
	case <-j.Running():
	case <-time.After(time.Minute):
		t.Fatal("Running not closed after the job ran")
	}
	if node, id := j.Where(); node != "n2" || id != "slurm job 12" {
		t.Errorf("Where = %q, %q once running; want n2, slurm job 12", node, id)
	}
	sq.set("COMPLETED", "n2")
	if err := j.Wait(); err != nil {
		t.Errorf("Wait = %v, want nil for a completed job", err)
	}
}

// fakeSlurm puts fake srun, scontrol and squeue first in PATH. srun logs
// its arguments, a line a call, to the file it returns, and runs the
// command after "--" on this machine as the node --nodelist names (n1
// without one), with SLURMD_NODENAME set: on the nodes FAKE_BLIND names
// with HONE_STAGING_DIR pointing nowhere, as on a node that does not see
// the storage, and on those FAKE_BROKEN names not at all, failing as srun
// does when it cannot create the step. scontrol show hostnames splits its
// list at the commas; squeue lists no step.
func fakeSlurm(t *testing.T) (log string) {
	t.Helper()
	bin := t.TempDir()
	log = filepath.Join(t.TempDir(), "srun.log")
	scripts := map[string]string{
		"srun": `#!/bin/sh
echo "$*" >>"$FAKE_SRUN_LOG"
node=n1
while [ "$#" -gt 0 ]; do
  case "$1" in
    --nodelist=*) node=${1#--nodelist=} ;;
    --) shift; break ;;
  esac
  shift
done
case " $FAKE_BROKEN " in *" $node "*) echo "srun: error: Unable to create step for job 7: Requested node configuration is not available" >&2; exit 1 ;; esac
case " $FAKE_BLIND " in *" $node "*) HONE_STAGING_DIR=/nonexistent/hone-staging ;; esac
SLURMD_NODENAME=$node
export HONE_STAGING_DIR SLURMD_NODENAME
exec "$@"
`,
		"scontrol": "#!/bin/sh\n[ \"$1 $2\" = \"show hostnames\" ] || exit 1\necho \"$3\" | tr , '\\n'\n",
		"squeue":   "#!/bin/sh\nexit 0\n",
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_SRUN_LOG", log)
	return log
}

// fakeStepLauncher returns a step launcher in an allocation of nodes
// (SLURM_JOB_NODELIST, "" for none), with the environment env adds to
// this process's.
func fakeStepLauncher(nodes string, env ...string) *stepLauncher {
	e := append(os.Environ(), env...)
	o := Options{Key: "k3y", Env: e}
	alloc := map[string]string{"SLURM_JOB_ID": "7", "SLURM_JOB_NODELIST": nodes}
	return &stepLauncher{c: slurmcmd.Client{Runner: slurmcmd.Exec{Env: e}}, o: o, job: "7",
		getenv: func(k string) string { return alloc[k] }, cancelling: newLimiter()}
}

// srunCalls returns the lines of the fake srun's log.
func srunCalls(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// TestCheckNodes: step mode's Prepare checks once on every node of the
// allocation that it sees the experiment's storage, with a directory it
// makes in its state directory and removes; a node that does not makes
// a NodeStorageError naming it and the directory, a node where the check
// cannot run another error naming it; trials start behind the check only
// when the nodes were not all seen.
func TestCheckNodes(t *testing.T) {
	log := fakeSlurm(t)
	prepare := func(t *testing.T, l *stepLauncher) (string, error) {
		t.Helper()
		state := filepath.Join(t.TempDir(), ".hone")
		err := l.Prepare(state)
		if _, rerr := os.Stat(state); !errors.Is(rerr, os.ErrNotExist) {
			t.Errorf("the state directory is there after Prepare (%v), want it removed with the probe, as it was made for it", rerr)
		}
		return state, err
	}

	t.Run("every node sees it", func(t *testing.T) {
		os.Remove(log)
		l := fakeStepLauncher("n1,n2,n3")
		if _, err := prepare(t, l); err != nil {
			t.Fatal(err)
		}
		calls := srunCalls(t, log)
		if len(calls) != 3 {
			t.Fatalf("%d sruns, want one per node:\n%s", len(calls), strings.Join(calls, "\n"))
		}
		for _, n := range []string{"n1", "n2", "n3"} {
			found := false
			for _, c := range calls {
				if strings.Contains(c, "--nodelist="+n+" ") && strings.Contains(c, "--job-name=hone-k3y-check-"+n+" ") &&
					strings.Contains(c, "-- /bin/sh -c test -d ") {
					found = true
				}
			}
			if !found {
				t.Errorf("no check on node %s:\n%s", n, strings.Join(calls, "\n"))
			}
		}
		if !l.nodesSeen.Load() {
			t.Error("the nodes were all seen, but trials would start behind the check")
		}
	})

	t.Run("a node that does not see it", func(t *testing.T) {
		l := fakeStepLauncher("n1,n2,n3", "FAKE_BLIND=n2 n3")
		state, err := prepare(t, l)
		var nse *NodeStorageError
		if !errors.As(err, &nse) || !reflect.DeepEqual(nse.Nodes, []string{"n2", "n3"}) || filepath.Dir(nse.Path) != state ||
			!strings.Contains(err.Error(), "not shared with nodes n2, n3 of the allocation ("+state+"/probe-") {
			t.Fatalf("Prepare: %v, want a NodeStorageError naming n2, n3 and the probe in %s", err, state)
		}
		if l.nodesSeen.Load() {
			t.Error("a node did not see the storage, yet trials would start without the check")
		}
	})

	t.Run("a node where the check cannot run", func(t *testing.T) {
		l := fakeStepLauncher("n1,n2", "FAKE_BROKEN=n2")
		_, err := prepare(t, l)
		var nse *NodeStorageError
		if err == nil || errors.As(err, &nse) || !strings.Contains(err.Error(), "node n2: ") ||
			!strings.Contains(err.Error(), "Unable to create step") {
			t.Fatalf("Prepare: %v, want an error naming n2 and srun's, not a NodeStorageError", err)
		}
	})

	t.Run("no node list", func(t *testing.T) {
		os.Remove(log)
		l := fakeStepLauncher("")
		if _, err := prepare(t, l); err != nil {
			t.Fatal(err)
		}
		if calls := srunCalls(t, log); len(calls) != 0 || l.nodesSeen.Load() {
			t.Errorf("without the allocation's nodes: %d sruns, seen %v; want none, and the check at every start", len(calls), l.nodesSeen.Load())
		}
	})
}

// TestStepLaunchBare: once Prepare saw every node, a trial's command is
// the step's task itself, HONE_HOST dropped so that the trial names the
// node from SLURMD_NODENAME, and its exit status is its own, 97 too;
// without that, it runs behind the check, which sets HONE_HOST.
func TestStepLaunchBare(t *testing.T) {
	log := fakeSlurm(t)
	run := func(t *testing.T, l *stepLauncher, script string) (string, error) {
		t.Helper()
		dir := t.TempDir()
		staging := filepath.Join(dir, "staging")
		if err := os.Mkdir(staging, 0o755); err != nil {
			t.Fatal(err)
		}
		spec := process.LaunchSpec{TrialID: "0001", Argv: []string{"/bin/sh", "-c", script},
			Env: append(os.Environ(), "HONE_HOST=from-hone", "HONE_STAGING_DIR="+staging), Dir: dir, TrialDir: dir,
			Stdout: filepath.Join(dir, "stdout.log"), Stderr: filepath.Join(dir, "stderr.log")}
		launched, err := l.Launch(spec)
		if err != nil {
			t.Fatal(err)
		}
		werr := launched.Wait()
		out, _ := os.ReadFile(spec.Stdout)
		return strings.TrimSpace(string(out)), werr
	}
	host := `echo "${HONE_HOST:-unset} $SLURMD_NODENAME"`

	l := fakeStepLauncher("n1,n2")
	if err := l.Prepare(filepath.Join(t.TempDir(), ".hone")); err != nil {
		t.Fatal(err)
	}
	os.Remove(log)
	out, err := run(t, l, host)
	if err != nil || out != "unset n1" {
		t.Errorf("a bare trial: printed %q, %v; want no HONE_HOST and the node's name", out, err)
	}
	if calls := srunCalls(t, log); len(calls) != 1 || !strings.HasSuffix(calls[0], " -- /bin/sh -c "+host) {
		t.Errorf("srun's arguments: %q, want the trial's command right after --", calls)
	}
	_, err = run(t, l, "exit 97")
	var je *JobError
	if !errors.As(err, &je) || errors.Is(err, hone.ErrStopExperiment) || je.Job.ExitCode != notShared {
		t.Errorf("a bare trial that exits 97: %v, want its JobError", err)
	}

	unseen := fakeStepLauncher("")
	if err := unseen.Prepare(filepath.Join(t.TempDir(), ".hone")); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, unseen, host); err != nil || out != "n1 n1" {
		t.Errorf("a trial behind the check: printed %q, %v; want HONE_HOST set to the node's name", out, err)
	}
}

package slurm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/user"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/agent"
	"github.com/hone-tune/hone/executor/process"
	"github.com/hone-tune/hone/executor/slurm/slurmcmd"
	"github.com/hone-tune/hone/wire"
)

// resources returns what one task asks of Slurm for r: the CPUs rounded
// up (at least one), the memory in MiB rounded up, whole GPUs, and each
// custom resource as a gres.
func resources(r hone.Resources) slurmcmd.Resources {
	out := slurmcmd.Resources{CPUs: max(1, int(math.Ceil(r.CPU))), GPUs: int(math.Ceil(r.GPU))}
	if r.Memory > 0 {
		out.MemMB = int((r.Memory + (1<<20 - 1)) >> 20)
	}
	names := make([]string, 0, len(r.Custom))
	for k := range r.Custom {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if n := int(math.Ceil(r.Custom[k])); n > 0 {
			out.Gres = append(out.Gres, k+":"+strconv.Itoa(n))
		}
	}
	return out
}

// stderrTail returns the last lines of a trial's stderr.log, for the
// error of a trial that failed.
func stderrTail(path string) string {
	const most = 4 << 10
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > most {
		_, _ = f.Seek(fi.Size()-most, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// stderrSize returns the size of a trial's stderr.log, 0 when it does not
// exist yet: where the output of the run about to start will begin.
func stderrSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// stderrSince returns what a trial's stderr.log holds from offset from on
// (its last 64 KiB at most): the output of one run of the trial.
func stderrSince(path string, from int64) string {
	const most = 64 << 10
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() <= from {
		return ""
	}
	from = max(from, fi.Size()-most)
	b, _ := io.ReadAll(io.NewSectionReader(f, from, fi.Size()-from))
	return string(b)
}

// JobError is why a trial's job or step failed: what Slurm says of its
// end (Job.Summary), the line in which slurmstepd said it killed the run
// for its memory, if it did, and the end of the trial's stderr.log.
type JobError struct {
	Job slurmcmd.Job
	// Memory is slurmstepd's word that the run used more memory than it
	// asked for (slurmcmd.MemoryKill), "" when it said nothing of the
	// kind. A cluster that enforces memory by polling rather than with
	// cgroups says it only there: its job ends FAILED, signal 9.
	Memory string
	Stderr string
}

func (e *JobError) Error() string {
	s := e.Job.Summary()
	if e.Memory != "" {
		s += ", out of memory: " + e.Memory
	}
	if e.Stderr != "" {
		s += "; stderr ends:\n" + e.Stderr
	}
	return s
}

// Outcome is what the job's end means: a node failure, a time limit...;
// OutOfMemory when slurmstepd said it killed the run for its memory,
// whatever state Slurm gave the job.
func (e *JobError) Outcome() slurmcmd.Outcome {
	if e.Memory != "" {
		return slurmcmd.OutOfMemory
	}
	return slurmcmd.Classify(e.Job.State)
}

// notShared is the exit status of a trial whose node does not see the
// trial's staging directory, which hone made on the driver's side of the
// storage just before: the storage is not shared with that node.
// The node agent exits with the same status when its node cannot reach
// the experiment's object store.
const notShared = agent.ExitStorage

// checked returns argv run behind a check that the node sees the trial's
// staging directory (see notShared), with HONE_HOST set to the node's
// Slurm name for the trial's hello. Job mode runs every trial behind it;
// step mode runs it once per node of the allocation before any trial
// starts (stepLauncher.checkNodes).
func checked(argv []string) []string {
	script := `test -d "$HONE_STAGING_DIR" || { echo "hone: $HONE_STAGING_DIR does not exist on $(hostname): the experiment's storage is not shared with this node" >&2; exit ` +
		strconv.Itoa(notShared) + `; }; ` + wire.EnvHost + `=${SLURMD_NODENAME:-$(hostname)} exec "$@"`
	return append([]string{"/bin/sh", "-c", script, "hone-trial"}, argv...)
}

// wrap returns the command to run for argv on a node: behind the node
// agent when the experiment lives in an object store (logs: the agent
// keeps and uploads the trial's logs, for a batch job, whose output stays
// on its node), else behind the staging check.
func wrap(o Options, argv []string, logs bool) []string {
	if o.Process.Store == "" {
		return checked(argv)
	}
	out := []string{o.Hone, "agent"}
	if logs {
		out = append(out, "--logs")
	}
	if o.NodeCache != "" {
		out = append(out, "--cache="+o.NodeCache)
	}
	return append(append(out, "--"), argv...)
}

// StorageError is a trial that could not run because its node does not
// see the experiment's storage. It wraps hone.ErrStopExperiment: every
// trial would fail the same way, so the experiment stops.
type StorageError struct {
	Job      slurmcmd.Job
	TrialDir string
	// Remote is set when the storage is an object store the node's
	// agent could not reach.
	Remote bool
}

func (e *StorageError) Error() string {
	where := "its node"
	if e.Job.Nodes != "" {
		where = "node " + e.Job.Nodes
	}
	if e.Remote {
		return fmt.Sprintf("slurm job %s: %s cannot reach the experiment's object store (the trial's stderr.log says why): "+
			"check the nodes' network and credentials, and that hone is at the same path there (docs/CLUSTER.md)", e.Job.ID, where)
	}
	return fmt.Sprintf("slurm job %s: the experiment's storage is not shared with %s (%s is not there): "+
		"put the storage on a filesystem every node mounts at the same path (docs/CLUSTER.md)", e.Job.ID, where, e.TrialDir)
}

// Unwrap returns hone.ErrStopExperiment.
func (e *StorageError) Unwrap() error { return hone.ErrStopExperiment }

// NodeStorageError is nodes of the allocation that do not see the
// experiment's storage, found in step mode before any trial starts: the
// directory Path, which hone made on its side of the storage, is not
// there on them. The experiment does not start.
type NodeStorageError struct {
	Nodes []string
	Path  string
}

func (e *NodeStorageError) Error() string {
	which := "node " + e.Nodes[0]
	if len(e.Nodes) > 1 {
		which = "nodes " + strings.Join(e.Nodes, ", ")
	}
	return fmt.Sprintf("the experiment's storage is not shared with %s of the allocation (%s, which hone made on its side, is not there): "+
		"put the storage on a filesystem every node mounts at the same path (docs/CLUSTER.md)", which, e.Path)
}

// failure returns why a job or step of the trial in trialDir failed: a
// StorageError when it exited notShared, or when it failed without a
// stderr.log where the driver sees the trial's directory (Slurm could not
// open its output files on the node), else a JobError. The run's output
// starts at offset from of stderr.log, which holds the earlier runs' too.
// remote says the trial ran behind the node agent (an object store).
func failure(j slurmcmd.Job, trialDir, stderr string, from int64, remote bool) error {
	_, err := os.Stat(stderr)
	if j.ExitCode == notShared || (!remote && slurmcmd.Classify(j.State) == slurmcmd.Failed && errors.Is(err, os.ErrNotExist)) {
		return &StorageError{Job: j, TrialDir: trialDir, Remote: remote}
	}
	return &JobError{Job: j, Memory: slurmcmd.MemoryKill(stderrSince(stderr, from)), Stderr: stderrTail(stderr)}
}

// limiter bounds the Slurm commands of one kind in flight, so that
// hundreds of trials starting or stopping at once do not flood the
// controller.
type limiter chan struct{}

// maxInFlight is how many commands of one kind run at once.
const maxInFlight = 8

func newLimiter() limiter { return make(limiter, maxInFlight) }

// do runs f once fewer than maxInFlight others run.
func (l limiter) do(f func()) {
	l <- struct{}{}
	defer func() { <-l }()
	f()
}

// call runs f with the bound of one Slurm command.
func call[T any](f func(ctx context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	return f(ctx)
}

// ---------------------------------------------------------------------
// Step mode

// stepLauncher runs each trial as `srun` of one task inside the current
// allocation.
type stepLauncher struct {
	c          slurmcmd.Client
	o          Options
	job        string              // SLURM_JOB_ID
	getenv     func(string) string // the allocation's environment
	cancelling limiter
	// nodesSeen is set once Prepare saw every node of the allocation see
	// the experiment's storage: trials then start without the check.
	nodesSeen atomic.Bool
}

func newStepLauncher(c slurmcmd.Client, o Options) *stepLauncher {
	return &stepLauncher{c: c, o: o, job: os.Getenv("SLURM_JOB_ID"), getenv: os.Getenv,
		cancelling: newLimiter()}
}

// lookup asks squeue once for the allocation's steps and records the id
// and node of s. Only a stop needs a step's id (scancel), so it is asked
// for then, not while the step starts.
func (l *stepLauncher) lookup(s *step) {
	steps, err := call(func(ctx context.Context) ([]slurmcmd.Step, error) { return l.c.Steps(ctx, l.job) })
	if err != nil {
		return
	}
	for _, st := range steps {
		if st.Name == s.name {
			s.mu.Lock()
			s.id, s.node = st.ID, st.Nodes
			s.mu.Unlock()
			s.ran.Do(func() { close(s.running) }) // squeue lists a step once it runs
			return
		}
	}
}

// memShare returns the memory, in MB, of a step of cpus CPUs that asks
// for none: its CPUs' share of the allocation's memory on a node. A step
// without --mem in an allocation made with --mem would take all of the
// node's memory and run alone there. 0 when the allocation does not say
// (then Slurm's default per CPU applies).
func (l *stepLauncher) memShare(cpus int) int {
	getenv := l.getenv
	if perCPU, err := strconv.Atoi(getenv("SLURM_MEM_PER_CPU")); err == nil && perCPU > 0 {
		return perCPU * cpus
	}
	perNode, err1 := strconv.Atoi(getenv("SLURM_MEM_PER_NODE"))
	onNode, err2 := strconv.Atoi(getenv("SLURM_CPUS_ON_NODE"))
	if err2 != nil {
		// salloc does not set it: the fewest CPUs the allocation has on
		// a node.
		counts, err := expandCounts(getenv("SLURM_JOB_CPUS_PER_NODE"))
		if err == nil && len(counts) > 0 {
			onNode, err2 = slices.Min(counts), nil
		}
	}
	if err1 != nil || err2 != nil || perNode <= 0 || onNode <= 0 {
		return 0
	}
	return max(1, perNode*cpus/onNode)
}

// Launch starts srun for the trial, its output appended to the trial's
// logs.
func (l *stepLauncher) Launch(spec process.LaunchSpec) (process.Launched, error) {
	stdout, err := os.OpenFile(spec.Stdout, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	defer stdout.Close()
	stderr, err := os.OpenFile(spec.Stderr, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	defer stderr.Close()
	var from int64 // where this run's output starts
	if fi, err := stderr.Stat(); err == nil {
		from = fi.Size()
	}
	name := jobName(l.o.Key, spec.TrialID)
	argv, env, bare := spec.Argv, spec.Env, l.o.Process.Store == "" && l.nodesSeen.Load()
	if bare {
		// The trial's command is the step's task itself; the trial's
		// hello names its node from SLURMD_NODENAME.
		env = withoutHost(env)
	} else {
		argv = wrap(l.o, argv, false)
	}
	extra := l.o.SrunArgs
	if l.o.Time != "" {
		extra = append([]string{"--time=" + l.o.Time}, extra...)
	}
	res := resources(spec.Resources)
	if res.MemMB == 0 {
		res.MemMB = l.memShare(res.CPUs)
	}
	args := slurmcmd.StepArgs(slurmcmd.StepOptions{Name: name, Resources: res,
		Chdir: spec.Dir, Extra: extra}, argv)
	cmd := exec.Command("srun", args...)
	cmd.Env = env
	cmd.Dir = spec.Dir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Its own process group: a Ctrl-C at hone's terminal reaches the
	// step only through hone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("srun: %w", err)
	}
	s := &step{l: l, cmd: cmd, name: name, stderr: spec.Stderr, stderrFrom: from, trialDir: spec.TrialDir, bare: bare,
		ended: make(chan struct{}), running: make(chan struct{})}
	return s, nil
}

// withoutHost returns env without HONE_HOST, so that a trial that runs
// as the step's task itself names the node Slurm set SLURMD_NODENAME to,
// never a HONE_HOST of hone's own environment.
func withoutHost(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, wire.EnvHost+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// Prepare cancels the steps of this experiment that a killed run of hone
// left in the allocation, and waits until they are gone; then it checks
// that every node of the allocation sees the experiment's storage
// (checkNodes), with stateDir, hone's directory in the experiment.
func (l *stepLauncher) Prepare(stateDir string) error {
	if err := l.cancelLeft(); err != nil {
		return fmt.Errorf("end the trials of an earlier run: %w", err)
	}
	if l.o.Process.Store != "" {
		return nil // the node agent checks the store at every start
	}
	return l.checkNodes(stateDir)
}

// cancelLeft cancels the steps of this experiment that a killed run of
// hone left in the allocation, and waits until they are gone.
func (l *stepLauncher) cancelLeft() error {
	mine := func() ([]string, error) {
		steps, err := call(func(ctx context.Context) ([]slurmcmd.Step, error) { return l.c.Steps(ctx, l.job) })
		if err != nil {
			return nil, fmt.Errorf("list the allocation's steps: %w", err)
		}
		var ids []string
		for _, s := range steps {
			if strings.HasPrefix(s.Name, namePrefix(l.o.Key)) {
				ids = append(ids, s.ID)
			}
		}
		return ids, nil
	}
	return cancelLeft(mine, func(ids []string) error {
		_, err := call(func(ctx context.Context) (struct{}, error) { return struct{}{}, l.c.Cancel(ctx, "KILL", ids...) })
		return err
	})
}

// checkNodes checks once per node of the allocation what job mode checks
// at every start: that the node sees the experiment's storage. It makes
// a directory in stateDir, on hone's side of the storage, runs the check
// (checked, with HONE_STAGING_DIR set to that directory) as a step on
// every node, maxInFlight nodes at a time, and removes the directory
// (and stateDir, if that leaves it empty).
// Once every node saw it, trials start with no check of their own. A
// node that did not is a NodeStorageError: the experiment does not
// start. Without the allocation's node list (SLURM_JOB_NODELIST),
// trials keep the check at every start.
func (l *stepLauncher) checkNodes(stateDir string) error {
	list := l.getenv("SLURM_JOB_NODELIST")
	if list == "" {
		return nil
	}
	nodes, err := call(func(ctx context.Context) ([]string, error) { return l.c.Hostnames(ctx, list) })
	if err != nil {
		return fmt.Errorf("the allocation's nodes: %w", err)
	}
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return fmt.Errorf("check that the nodes see the experiment's storage: %w", err)
	}
	probe, err := os.MkdirTemp(stateDir, "probe-")
	if err != nil {
		return fmt.Errorf("check that the nodes see the experiment's storage: %w", err)
	}
	defer func() {
		os.Remove(probe)
		os.Remove(stateDir) // when empty: the process executor makes it again when it needs it
	}()
	errs := make([]error, len(nodes))
	checking := newLimiter()
	var wg sync.WaitGroup
	for i, node := range nodes {
		wg.Go(func() { checking.do(func() { errs[i] = l.checkNode(node, probe) }) })
	}
	wg.Wait()
	var missing []string
	var failed []error
	for i, err := range errs {
		var ce *slurmcmd.CmdError
		switch {
		case err == nil:
		case errors.As(err, &ce) && ce.ExitCode == notShared:
			missing = append(missing, nodes[i])
		default:
			failed = append(failed, fmt.Errorf("node %s: %w", nodes[i], err))
		}
	}
	if len(missing) > 0 {
		return &NodeStorageError{Nodes: missing, Path: probe}
	}
	if len(failed) > 0 {
		return fmt.Errorf("check that the nodes see the experiment's storage: %w", errors.Join(failed...))
	}
	l.nodesSeen.Store(true)
	return nil
}

// checkNode runs the storage check for the directory probe as a step of
// one CPU on node, sized and named as a trial's (a killed run's is
// cancelled by the next Prepare), and returns srun's error: a
// *slurmcmd.CmdError with exit status notShared when the node does not
// see probe.
func (l *stepLauncher) checkNode(node, probe string) error {
	res := slurmcmd.Resources{CPUs: 1, MemMB: l.memShare(1)}
	args := slurmcmd.StepArgs(slurmcmd.StepOptions{Name: namePrefix(l.o.Key) + "check-" + node, Resources: res,
		Nodelist: node, Chdir: "/", Extra: l.o.SrunArgs}, checked([]string{"true"}))
	env := append(slices.Clip(l.o.Env), wire.EnvStagingDir+"="+probe)
	_, err := call(func(ctx context.Context) ([]byte, error) { return slurmcmd.Exec{Env: env}.Run(ctx, "srun", args...) })
	return err
}

// cancelLeft cancels what mine lists and waits, for at most two minutes,
// until mine lists nothing.
func cancelLeft(mine func() ([]string, error), cancel func([]string) error) error {
	ids, err := mine()
	if err != nil || len(ids) == 0 {
		return err
	}
	if err := cancel(ids); err != nil {
		return fmt.Errorf("cancel what an earlier run left (%s): %w", strings.Join(ids, ", "), err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		left, err := mine()
		if err != nil {
			return err
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("what an earlier run left is still there after two minutes: %s", strings.Join(left, ", "))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// step is one trial's srun.
type step struct {
	l          *stepLauncher
	cmd        *exec.Cmd
	name       string
	stderr     string
	stderrFrom int64 // where the step's output starts in stderr
	trialDir   string
	bare       bool          // the trial's command is the step's task: no check, no agent
	ended      chan struct{} // closed once srun has been waited for
	running    chan struct{} // closed once squeue showed the step
	ran        sync.Once

	mu   sync.Mutex
	id   string // the step's id ("123.4"), once squeue showed it
	node string
}

// Running is closed once squeue showed the step, which it lists once the
// step runs. Step mode asks squeue only when a stop needs the step's id,
// so the trial's hello mostly says first that the step runs (a step may
// wait in its allocation for resources other steps hold).
func (s *step) Running() <-chan struct{} { return s.running }

// stepID returns the step's id, asking squeue once more if it is not
// known yet.
func (s *step) stepID() string {
	s.mu.Lock()
	id := s.id
	s.mu.Unlock()
	if id == "" {
		s.l.lookup(s)
		s.mu.Lock()
		id = s.id
		s.mu.Unlock()
	}
	return id
}

// Signal stops the step: SIGTERM goes to the step's task through scancel
// (srun would answer a SIGTERM of its own by killing the task at once);
// SIGKILL kills the task and srun. A step Slurm has not created yet is
// ended by signalling srun, which then gives it up.
func (s *step) Signal(sig syscall.Signal) error {
	select {
	case <-s.ended:
		return nil
	default:
	}
	id := s.stepID()
	var err error
	if id != "" {
		signal := "TERM"
		if sig == syscall.SIGKILL {
			signal = "KILL"
		}
		s.l.cancelling.do(func() {
			_, err = call(func(ctx context.Context) (struct{}, error) { return struct{}{}, s.l.c.Cancel(ctx, signal, id) })
		})
	}
	if id == "" || sig == syscall.SIGKILL {
		// srun alone, not its group: its watcher then cancels the step.
		if kerr := s.cmd.Process.Signal(sig); kerr != nil && !errors.Is(kerr, os.ErrProcessDone) {
			err = errors.Join(err, kerr)
		}
	}
	return err
}

// Wait waits for srun to end.
func (s *step) Wait() error {
	err := s.cmd.Wait()
	close(s.ended)
	if err == nil {
		return nil
	}
	s.mu.Lock()
	id, node := s.id, s.node
	s.mu.Unlock()
	if id == "" {
		id = s.l.job + " step " + s.name
	}
	j := slurmcmd.Job{ID: id, State: "FAILED", Nodes: node, ExitCode: -1, Signal: -1}
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		if ws, ok := xe.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			j.Reason = "srun ended by " + ws.Signal().String()
		} else {
			j.ExitCode = xe.ExitCode()
		}
	} else {
		j.Reason = err.Error()
	}
	if s.bare {
		// No check ran: an exit status of notShared is the trial's own.
		return &JobError{Job: j, Memory: slurmcmd.MemoryKill(stderrSince(s.stderr, s.stderrFrom)), Stderr: stderrTail(s.stderr)}
	}
	return failure(j, s.trialDir, s.stderr, s.stderrFrom, s.l.o.Process.Store != "")
}

// Where is the step's node, once squeue showed it (the trial's hello
// names it first), and the step's id, or the allocation's job while the
// step's is not known.
func (s *step) Where() (node, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.id == "" {
		return "", "slurm job " + s.l.job
	}
	return s.node, "slurm step " + s.id
}

// ---------------------------------------------------------------------
// Job mode

// jobLauncher submits each trial as a job and follows the experiment's
// jobs with one squeue call per poll.
type jobLauncher struct {
	c    slurmcmd.Client
	o    Options
	user string

	submitting, cancelling limiter // sbatch and scancel calls in flight

	mu      sync.Mutex
	jobs    map[string]*job // by job id, while not ended
	polling bool
}

func newJobLauncher(c slurmcmd.Client, o Options) *jobLauncher {
	u := ""
	if cu, err := user.Current(); err == nil {
		u = cu.Username
	}
	return &jobLauncher{c: c, o: o, user: u, jobs: make(map[string]*job),
		submitting: newLimiter(), cancelling: newLimiter()}
}

// comment is the comment of every job of the experiment.
func (l *jobLauncher) comment() string { return "hone-experiment-" + l.o.Key }

// jobOptions returns sbatch's options for one trial.
func (l *jobLauncher) jobOptions(spec process.LaunchSpec) slurmcmd.JobOptions {
	extra := l.o.SbatchArgs
	if l.o.Time != "" {
		extra = append([]string{"--time=" + l.o.Time}, extra...)
	}
	o := slurmcmd.JobOptions{
		Name: jobName(l.o.Key, spec.TrialID), Comment: l.comment(),
		Partition: l.o.Partition, Account: l.o.Account, QOS: l.o.QOS,
		Resources: resources(spec.Resources), Chdir: spec.Dir,
		Output: spec.Stdout, Error: spec.Stderr,
		Extra: append([]string{"--open-mode=append"}, extra...),
	}
	if l.o.Process.Store != "" {
		// The trial's directory is not on the node: the agent keeps
		// the logs, and uploads them.
		o.Output, o.Error = "/dev/null", "/dev/null"
	}
	return o
}

// Launch submits the trial's job in the background: a submission that
// fails is the trial's failure, and Launch itself never waits on Slurm.
func (l *jobLauncher) Launch(spec process.LaunchSpec) (process.Launched, error) {
	o := l.jobOptions(spec)
	argv := wrap(l.o, spec.Argv, true)
	if _, err := slurmcmd.JobArgs(o, argv); err != nil {
		return nil, err
	}
	j := &job{l: l, name: o.Name, stderr: spec.Stderr, stderrFrom: stderrSize(spec.Stderr), trialDir: spec.TrialDir,
		submitted: make(chan struct{}), done: make(chan struct{}), running: make(chan struct{})}
	c := slurmcmd.Client{Runner: slurmcmd.Exec{Env: spec.Env}} // --export=ALL: the trial's environment
	go func() {
		var id string
		var err error
		l.submitting.do(func() {
			id, err = call(func(ctx context.Context) (string, error) { return c.Submit(ctx, o, argv) })
		})
		j.mu.Lock()
		j.id = id
		kill := j.killed
		j.mu.Unlock()
		close(j.submitted)
		if err != nil {
			j.finish(&JobError{Job: slurmcmd.Job{ID: "(not submitted)", State: "FAILED", Reason: err.Error(), ExitCode: -1, Signal: -1}})
			return
		}
		l.track(j)
		if kill {
			_ = j.Signal(syscall.SIGKILL)
		}
	}()
	return j, nil
}

// track follows j until it ends.
func (l *jobLauncher) track(j *job) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.jobs[j.id] = j
	if !l.polling {
		l.polling = true
		go l.poll()
	}
}

// poll asks squeue about every tracked job at once, every Poll while
// any is tracked, and ends the jobs that ended.
func (l *jobLauncher) poll() {
	for {
		time.Sleep(l.o.Poll)
		l.mu.Lock()
		ids := make([]string, 0, len(l.jobs))
		for id := range l.jobs {
			ids = append(ids, id)
		}
		if len(ids) == 0 {
			l.polling = false
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		listed, err := call(func(ctx context.Context) ([]slurmcmd.Job, error) {
			return l.c.Queue(ctx, slurmcmd.Query{IDs: ids})
		})
		if err != nil {
			continue // the controller may be busy: ask again
		}
		seen := make(map[string]slurmcmd.Job, len(listed))
		for _, q := range listed {
			seen[q.ID] = q
		}
		var ended []*job
		var states []slurmcmd.Job
		l.mu.Lock()
		for _, id := range ids {
			j := l.jobs[id]
			q, ok := seen[id]
			if ok {
				j.setNode(q.Nodes)
				o := slurmcmd.Classify(q.State)
				if o == slurmcmd.Running {
					j.ran.Do(func() { close(j.running) })
				}
				if !o.Ended() {
					continue
				}
			}
			delete(l.jobs, id)
			ended = append(ended, j)
			states = append(states, q) // zero when squeue no longer lists it
		}
		l.mu.Unlock()
		for i, j := range ended {
			j.finish(l.endOf(j, states[i]))
		}
	}
}

// endOf returns how j ended, q being squeue's last line of it (zero if
// squeue no longer lists it): nil when it completed, else its JobError.
func (l *jobLauncher) endOf(j *job, q slurmcmd.Job) error {
	if slurmcmd.Classify(q.State) == slurmcmd.Completed {
		return nil
	}
	// scontrol (or sacct) tells the exit code, and the end of a job squeue
	// no longer lists.
	full, err := call(func(ctx context.Context) (slurmcmd.Job, error) { return l.c.Job(ctx, j.id) })
	switch {
	case err == nil:
		q = full
	case q.State == "":
		q = slurmcmd.Job{ID: j.id, State: "UNKNOWN", Reason: "the job left the queue without a known end: " + err.Error(),
			ExitCode: -1, Signal: -1}
	}
	if slurmcmd.Classify(q.State) == slurmcmd.Completed {
		return nil
	}
	return failure(q, j.trialDir, j.stderr, j.stderrFrom, l.o.Process.Store != "")
}

// Prepare cancels the jobs of this experiment that a killed run of hone
// left, and waits until they are gone.
func (l *jobLauncher) Prepare(string) error {
	mine := func() ([]string, error) {
		jobs, err := call(func(ctx context.Context) ([]slurmcmd.Job, error) {
			return l.c.Queue(ctx, slurmcmd.Query{User: l.user})
		})
		if err != nil {
			return nil, fmt.Errorf("list the experiment's jobs: %w", err)
		}
		var ids []string
		for _, q := range jobs {
			if strings.HasPrefix(q.Name, namePrefix(l.o.Key)) && !slurmcmd.Classify(q.State).Ended() {
				ids = append(ids, q.ID)
			}
		}
		return ids, nil
	}
	err := cancelLeft(mine, func(ids []string) error {
		_, err := call(func(ctx context.Context) (struct{}, error) { return struct{}{}, l.c.Cancel(ctx, "", ids...) })
		return err
	})
	if err != nil {
		return fmt.Errorf("end the trials of an earlier run: %w", err)
	}
	return nil
}

// job is one trial's job.
type job struct {
	l          *jobLauncher
	name       string
	stderr     string
	stderrFrom int64 // where the job's output starts in stderr
	trialDir   string
	submitted  chan struct{} // closed once sbatch answered
	done       chan struct{} // closed by finish
	err        error         // set before done is closed
	once       sync.Once
	running    chan struct{} // closed once squeue showed the job running
	ran        sync.Once

	mu     sync.Mutex
	id     string // set before submitted is closed; "" if sbatch failed
	killed bool   // SIGKILL came before the submission
	node   string
}

func (j *job) setNode(n string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if n != "" {
		j.node = n
	}
}

func (j *job) finish(err error) {
	j.once.Do(func() {
		j.err = err
		close(j.done)
	})
}

// Signal asks the job's processes to stop (SIGTERM, to the batch script
// and its steps; a job not running yet is cancelled) or cancels the job
// (SIGKILL).
func (j *job) Signal(sig syscall.Signal) error {
	j.mu.Lock()
	select {
	case <-j.submitted:
	default:
		if sig == syscall.SIGKILL {
			j.killed = true // cancelled as soon as sbatch answers
		}
		j.mu.Unlock()
		return nil
	}
	id, node := j.id, j.node
	j.mu.Unlock()
	select {
	case <-j.done:
		return nil
	default:
	}
	if id == "" {
		return nil
	}
	signal := "" // cancel
	if sig == syscall.SIGTERM && node != "" {
		signal = "TERM"
	}
	var err error
	j.l.cancelling.do(func() {
		_, err = call(func(ctx context.Context) (struct{}, error) { return struct{}{}, j.l.c.Cancel(ctx, signal, id) })
	})
	return err
}

// Running is closed once a poll sees the job running: it left the queue
// (the trial's hello may say so first).
func (j *job) Running() <-chan struct{} { return j.running }

// Wait waits for the job to end.
func (j *job) Wait() error {
	<-j.done
	return j.err
}

// Where is the job's node, once squeue showed it running, and its id.
func (j *job) Where() (node, id string) {
	select {
	case <-j.submitted:
	default:
		return "", ""
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.id == "" {
		return "", ""
	}
	return j.node, "slurm job " + j.id
}

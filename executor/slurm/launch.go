package slurm

import (
	"bytes"
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
	"syscall"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/process"
)

// resourceArgs returns the arguments that size one task for r.
func resourceArgs(r hone.Resources) []string {
	cpus := max(1, int(math.Ceil(r.CPU)))
	args := []string{"--cpus-per-task=" + strconv.Itoa(cpus)}
	if r.Memory > 0 {
		mib := (r.Memory + (1<<20 - 1)) >> 20
		args = append(args, "--mem="+strconv.FormatInt(mib, 10)+"M")
	}
	var gres []string
	if g := int(math.Ceil(r.GPU)); g > 0 {
		gres = append(gres, "gpu:"+strconv.Itoa(g))
	}
	names := make([]string, 0, len(r.Custom))
	for k := range r.Custom {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if n := int(math.Ceil(r.Custom[k])); n > 0 {
			gres = append(gres, k+":"+strconv.Itoa(n))
		}
	}
	if len(gres) > 0 {
		args = append(args, "--gres="+strings.Join(gres, ","))
	}
	return args
}

// stderrTail returns the last lines of a trial's stderr.log, for the
// error of a trial that failed.
func stderrTail(path string) string {
	const max = 4 << 10
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		_, _ = f.Seek(fi.Size()-max, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// JobError is why a trial's job or step failed.
type JobError struct {
	// ID is the job id (job mode) or the step's name (step mode).
	ID string
	// State is Slurm's state of the job (FAILED, NODE_FAIL, TIMEOUT,
	// OUT_OF_MEMORY, PREEMPTED, CANCELLED, ...), or "" in step mode.
	State string
	// Reason, Node and ExitCode are what Slurm says of the end.
	Reason, Node string
	ExitCode     int
	// Stderr is the end of the trial's stderr.log.
	Stderr string
}

func (e *JobError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "slurm job %s", e.ID)
	if e.State != "" {
		fmt.Fprintf(&b, " ended %s", e.State)
	} else {
		b.WriteString(" failed")
	}
	if e.Node != "" {
		fmt.Fprintf(&b, " on %s", e.Node)
	}
	if e.Reason != "" && e.Reason != "None" {
		fmt.Fprintf(&b, " (%s)", e.Reason)
	}
	if e.ExitCode != 0 {
		fmt.Fprintf(&b, " with exit code %d", e.ExitCode)
	}
	if e.Stderr != "" {
		b.WriteString("; stderr ends:\n" + e.Stderr)
	}
	return b.String()
}

// ---------------------------------------------------------------------
// Step mode

// stepLauncher runs each trial as `srun` of one task inside the current
// allocation.
type stepLauncher struct {
	c   *cli
	o   Options
	job string // SLURM_JOB_ID
}

func newStepLauncher(c *cli, o Options) *stepLauncher {
	return &stepLauncher{c: c, o: o, job: os.Getenv("SLURM_JOB_ID")}
}

// stepArgs returns srun's arguments for one trial.
func (l *stepLauncher) stepArgs(spec process.LaunchSpec) []string {
	args := []string{"--exclusive", "-N1", "-n1", "--kill-on-bad-exit=1", "--quiet",
		"--job-name=" + jobName(l.o.Key, spec.TrialID), "--chdir=" + spec.Dir}
	args = append(args, resourceArgs(spec.Resources)...)
	if l.o.Time != "" {
		args = append(args, "--time="+l.o.Time)
	}
	args = append(args, l.o.SrunArgs...)
	args = append(args, "--")
	return append(args, spec.Argv...)
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
	cmd := exec.Command("srun", l.stepArgs(spec)...)
	cmd.Env = spec.Env
	cmd.Dir = spec.Dir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Its own process group: a Ctrl-C at hone's terminal reaches srun
	// only through hone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("srun: %w", err)
	}
	s := &step{l: l, cmd: cmd, name: jobName(l.o.Key, spec.TrialID), stderr: spec.Stderr,
		ended: make(chan struct{})}
	go s.findNode()
	return s, nil
}

// findNode asks squeue which node runs the step, until it knows or the
// step ended: srun itself does not say.
func (s *step) findNode() {
	for delay := 200 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		select {
		case <-s.ended:
			return
		case <-time.After(delay):
		}
		out, err := s.l.c.run(context.Background(), "squeue", "--steps", "--noheader", "--jobs="+s.l.job, "--format=%j|%N|%i")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Split(strings.TrimSpace(line), "|")
			if len(f) == 3 && f[0] == s.name && f[1] != "" {
				s.mu.Lock()
				s.node = f[1] + " (slurm step " + f[2] + ")"
				s.mu.Unlock()
				return
			}
		}
	}
}

// Prepare cancels the steps of this experiment that a killed run of hone
// left in the allocation.
func (l *stepLauncher) Prepare(string) error {
	ctx := context.Background()
	out, err := l.c.run(ctx, "squeue", "--steps", "--noheader", "--jobs="+l.job, "--format=%i|%j")
	if err != nil {
		return fmt.Errorf("list the allocation's steps: %w", err)
	}
	var ids []string
	for _, line := range strings.Split(string(out), "\n") {
		id, name, ok := strings.Cut(strings.TrimSpace(line), "|")
		if ok && strings.HasPrefix(name, namePrefix(l.o.Key)) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if _, err := l.c.run(ctx, "scancel", ids...); err != nil {
		return fmt.Errorf("cancel the steps of an earlier run: %w", err)
	}
	return waitGone(ctx, func() (bool, error) {
		out, err := l.c.run(ctx, "squeue", "--steps", "--noheader", "--jobs="+l.job, "--format=%i")
		if err != nil {
			return false, err
		}
		for _, line := range strings.Split(string(out), "\n") {
			if slices.Contains(ids, strings.TrimSpace(line)) {
				return false, nil
			}
		}
		return true, nil
	})
}

// waitGone polls gone until it reports true, for at most two minutes.
func waitGone(ctx context.Context, gone func() (bool, error)) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ok, err := gone()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("the jobs of an earlier run are still there after two minutes")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// step is one trial's srun.
type step struct {
	l      *stepLauncher
	cmd    *exec.Cmd
	name   string
	stderr string
	ended  chan struct{}
	once   sync.Once
	mu     sync.Mutex
	node   string // where it runs, once findNode knows
}

// Signal forwards SIGTERM to srun, which passes it to the task; SIGKILL
// kills srun and cancels the step.
func (s *step) Signal(sig syscall.Signal) error {
	select {
	case <-s.ended:
		return nil
	default:
	}
	err := syscall.Kill(-s.cmd.Process.Pid, sig)
	if sig == syscall.SIGKILL {
		s.once.Do(func() {
			_, _ = s.l.c.run(context.Background(), "scancel", "--jobname="+s.name, s.l.job)
		})
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
	je := &JobError{ID: s.l.job + " step " + s.name, Stderr: stderrTail(s.stderr)}
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		je.ExitCode = xe.ExitCode()
		if ws, ok := xe.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			je.Reason = "srun killed by " + ws.Signal().String()
		}
	} else {
		je.Reason = err.Error()
	}
	return je
}

// Where is the step's node and id, once squeue told them.
func (s *step) Where() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.node
}

// ---------------------------------------------------------------------
// Job mode

// jobLauncher submits each trial as a job and follows the experiment's
// jobs with one squeue call per poll.
type jobLauncher struct {
	c    *cli
	o    Options
	user string

	mu      sync.Mutex
	jobs    map[string]*job // by job id, while not ended
	polling bool
}

func newJobLauncher(c *cli, o Options) *jobLauncher {
	u := "root"
	if cu, err := user.Current(); err == nil {
		u = cu.Username
	}
	return &jobLauncher{c: c, o: o, user: u, jobs: make(map[string]*job)}
}

// comment is the comment of every job of the experiment.
func (l *jobLauncher) comment() string { return "hone experiment " + l.o.Key }

// sbatchArgs returns sbatch's arguments for one trial.
func (l *jobLauncher) sbatchArgs(spec process.LaunchSpec) []string {
	args := []string{"--parsable", "--no-requeue", "--job-name=" + jobName(l.o.Key, spec.TrialID),
		"--comment=" + l.comment(), "--output=" + spec.Stdout, "--error=" + spec.Stderr,
		"--open-mode=append", "--chdir=" + spec.Dir, "--export=ALL", "--nodes=1", "--ntasks=1"}
	for _, o := range []struct{ flag, v string }{
		{"--partition", l.o.Partition}, {"--account", l.o.Account}, {"--qos", l.o.QOS}, {"--time", l.o.Time},
	} {
		if o.v != "" {
			args = append(args, o.flag+"="+o.v)
		}
	}
	args = append(args, resourceArgs(spec.Resources)...)
	args = append(args, l.o.SbatchArgs...)
	return append(args, "--wrap=exec "+shellJoin(spec.Argv))
}

// Launch submits the trial's job in the background: a submission that
// fails is the trial's failure, and Launch itself never waits on Slurm.
func (l *jobLauncher) Launch(spec process.LaunchSpec) (process.Launched, error) {
	j := &job{l: l, name: jobName(l.o.Key, spec.TrialID), stderr: spec.Stderr,
		submitted: make(chan struct{}), done: make(chan struct{})}
	args := l.sbatchArgs(spec)
	env := spec.Env
	go func() {
		out, err := l.runEnv(env, "sbatch", args...)
		if err == nil {
			j.id, err = parseSbatch(out)
		}
		j.mu.Lock()
		j.submitErr = err
		cancelled := j.cancelled
		j.mu.Unlock()
		close(j.submitted)
		if err != nil {
			j.finish(&JobError{ID: "(not submitted)", Reason: err.Error()})
			return
		}
		l.track(j)
		if cancelled {
			_ = j.Signal(syscall.SIGKILL)
		}
	}()
	return j, nil
}

// runEnv runs a Slurm command with env.
func (l *jobLauncher) runEnv(env []string, name string, args ...string) ([]byte, error) {
	c := &cli{env: env}
	return c.run(context.Background(), name, args...)
}

// parseSbatch reads the job id from sbatch --parsable ("123" or
// "123;cluster").
func parseSbatch(out []byte) (string, error) {
	id, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	if id == "" || strings.ContainsAny(id, " \n") {
		return "", fmt.Errorf("sbatch printed %q, want a job id", out)
	}
	return id, nil
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

// queueLine is one job in squeue's output.
type queueLine struct {
	id, state, reason, node, name string
}

// queue lists the user's jobs: one call for every job of the
// experiment.
func (l *jobLauncher) queue(ctx context.Context) ([]queueLine, error) {
	out, err := l.c.run(ctx, "squeue", "--noheader", "--states=all", "--user="+l.user, "--format=%i|%T|%r|%N|%j")
	if err != nil {
		return nil, err
	}
	var jobs []queueLine
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.SplitN(strings.TrimSpace(line), "|", 5)
		if len(f) == 5 {
			jobs = append(jobs, queueLine{f[0], f[1], f[2], f[3], f[4]})
		}
	}
	return jobs, nil
}

// active reports whether a job in this state may still run.
func active(state string) bool {
	switch state {
	case "PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING", "SIGNALING", "STAGE_OUT", "REQUEUE_HOLD", "REQUEUE_FED":
		return true
	}
	return false
}

// poll asks squeue about the experiment's jobs every Poll while any is
// tracked, and ends the jobs that ended.
func (l *jobLauncher) poll() {
	ctx := context.Background()
	for {
		time.Sleep(l.o.Poll)
		l.mu.Lock()
		if len(l.jobs) == 0 {
			l.polling = false
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		lines, err := l.queue(ctx)
		if err != nil {
			continue // the controller may be busy: ask again
		}
		seen := make(map[string]queueLine, len(lines))
		for _, q := range lines {
			seen[q.id] = q
		}
		l.mu.Lock()
		var ended []*job
		for id, j := range l.jobs {
			q, ok := seen[id]
			if ok {
				j.setNode(q.node)
				if active(q.state) {
					continue
				}
			}
			delete(l.jobs, id)
			j.last, j.known = q, ok
			ended = append(ended, j)
		}
		l.mu.Unlock()
		for _, j := range ended {
			j.finish(l.endOf(ctx, j))
		}
	}
}

// endOf returns how j ended: nil when it completed, else its JobError.
func (l *jobLauncher) endOf(ctx context.Context, j *job) error {
	q := j.last
	if j.known && q.state == "COMPLETED" {
		return nil
	}
	je := &JobError{ID: j.id, State: q.state, Reason: q.reason, Node: q.node}
	// scontrol tells the exit code (and the state of a job that left
	// squeue's list).
	if out, err := l.c.run(ctx, "scontrol", "show", "job", "-o", j.id); err == nil {
		kv := parseScontrol(out)
		if je.State == "" {
			je.State = kv["JobState"]
		}
		if je.Node == "" {
			je.Node = kv["NodeList"]
		}
		if je.Reason == "" {
			je.Reason = kv["Reason"]
		}
		if code, _, ok := strings.Cut(kv["ExitCode"], ":"); ok {
			je.ExitCode, _ = strconv.Atoi(code)
		}
	}
	if je.State == "COMPLETED" {
		return nil
	}
	if je.State == "" {
		je.State = "UNKNOWN"
		je.Reason = "the job left the queue without a known end"
	}
	je.Stderr = stderrTail(j.stderr)
	return je
}

// parseScontrol reads `scontrol show job -o` output into its fields.
func parseScontrol(out []byte) map[string]string {
	kv := make(map[string]string)
	for _, f := range bytes.Fields(out) {
		if k, v, ok := strings.Cut(string(f), "="); ok {
			kv[k] = v
		}
	}
	return kv
}

// Prepare cancels the jobs of this experiment that a killed run of hone
// left, and waits until they are gone.
func (l *jobLauncher) Prepare(string) error {
	ctx := context.Background()
	mine := func() ([]string, error) {
		lines, err := l.queue(ctx)
		if err != nil {
			return nil, fmt.Errorf("list the experiment's jobs: %w", err)
		}
		var ids []string
		for _, q := range lines {
			if strings.HasPrefix(q.name, namePrefix(l.o.Key)) && active(q.state) {
				ids = append(ids, q.id)
			}
		}
		return ids, nil
	}
	ids, err := mine()
	if err != nil || len(ids) == 0 {
		return err
	}
	if _, err := l.c.run(ctx, "scancel", ids...); err != nil {
		return fmt.Errorf("cancel the jobs of an earlier run: %w", err)
	}
	return waitGone(ctx, func() (bool, error) {
		left, err := mine()
		return len(left) == 0, err
	})
}

// job is one trial's job.
type job struct {
	l         *jobLauncher
	name      string
	stderr    string
	submitted chan struct{} // closed once sbatch answered
	id        string        // set before submitted is closed

	mu        sync.Mutex
	submitErr error
	cancelled bool // killed before it was submitted
	node      string
	last      queueLine // guarded by l.mu until finish
	known     bool
	done      chan struct{}
	err       error
	once      sync.Once
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
// and its steps; a job still pending is cancelled) or cancels the job
// (SIGKILL).
func (j *job) Signal(sig syscall.Signal) error {
	j.mu.Lock()
	select {
	case <-j.submitted:
	default:
		if sig == syscall.SIGKILL {
			j.cancelled = true
		}
		j.mu.Unlock()
		return nil
	}
	node := j.node
	j.mu.Unlock()
	if j.id == "" {
		return nil
	}
	select {
	case <-j.done:
		return nil
	default:
	}
	args := []string{j.id} // SIGKILL, or a job not running yet: cancel it
	if sig == syscall.SIGTERM && node != "" {
		args = []string{"--signal=TERM", "--full", j.id}
	}
	_, err := j.l.c.run(context.Background(), "scancel", args...)
	return err
}

// Wait waits for the job to end.
func (j *job) Wait() error {
	<-j.done
	return j.err
}

// Where is the job id and its node once it runs.
func (j *job) Where() string {
	select {
	case <-j.submitted:
	default:
		return ""
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.id == "" {
		return ""
	}
	if j.node == "" {
		return "slurm job " + j.id
	}
	return j.node + " (slurm job " + j.id + ")"
}

// shellJoin quotes argv for sh.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// shellQuote quotes s for sh, leaving plain words as they are.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

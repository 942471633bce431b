package slurmcmd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Resources is what one trial's task asks of Slurm. Zero fields are left
// to Slurm's defaults.
type Resources struct {
	// CPUs is the number of CPUs of the task (--cpus-per-task); 0 is 1.
	CPUs int
	// MemMB is the memory of the task in megabytes (--mem); 0 is the
	// partition's default (DefMemPerCPU and the like).
	MemMB int
	// GPUs is the number of GPUs of the task (gpu:N in --gres).
	GPUs int
	// Gres are other generic resources, each "name:count" or
	// "name:type:count" (--gres).
	Gres []string
}

func (r Resources) check() error {
	if r.CPUs < 0 || r.MemMB < 0 || r.GPUs < 0 {
		return fmt.Errorf("resources %+v: negative count", r)
	}
	for _, g := range r.Gres {
		if g == "" || strings.ContainsAny(g, ", \t\n") {
			return fmt.Errorf("gres %q: want name:count", g)
		}
	}
	return nil
}

// args returns the flags of r common to srun and sbatch.
func (r Resources) args() []string {
	var a []string
	if r.CPUs > 0 {
		a = append(a, "--cpus-per-task="+strconv.Itoa(r.CPUs))
	}
	if r.MemMB > 0 {
		a = append(a, "--mem="+strconv.Itoa(r.MemMB)+"M")
	}
	var gres []string
	if r.GPUs > 0 {
		gres = append(gres, "gpu:"+strconv.Itoa(r.GPUs))
	}
	gres = append(gres, r.Gres...)
	if len(gres) > 0 {
		a = append(a, "--gres="+strings.Join(gres, ","))
	}
	return a
}

// StepOptions is how StepArgs runs a trial as one job step.
type StepOptions struct {
	// Name is the step's name (--job-name), how squeue --steps shows it.
	Name string
	// JobID is the allocation the step runs in (--jobid); "" is the
	// allocation srun runs in (SLURM_JOB_ID).
	JobID string
	// Resources are the task's.
	Resources Resources
	// Nodelist is the node the step must run on (--nodelist), e.g. "n2";
	// "" is any of the allocation's.
	Nodelist string
	// Chdir is the task's working directory (--chdir); "" is srun's.
	Chdir string
	// Output and Error are files the task's standard output and error go
	// to on its node (--output, --error); "" sends them through srun.
	Output, Error string
	// Extra are more srun options, placed after the others so that they
	// win.
	Extra []string
}

// StepArgs returns the arguments of srun (without "srun") that run argv as
// one job step of one task on one node, with its own CPUs (--exclusive),
// inside an allocation:
//
//	--exclusive --nodes=1 --ntasks=1 [--cpus-per-task=C] [--mem=MBM]
//	[--gres=gpu:N,...] [--job-name=NAME] [--jobid=ID] [--nodelist=N]
//	[--chdir=DIR] [--output=F] [--error=F] --kill-on-bad-exit=1 --quiet
//	[EXTRA...] -- ARGV...
//
// Negative resources are left out. See the package documentation for how
// to stop such a step: not with SIGTERM to srun.
func StepArgs(o StepOptions, argv []string) []string {
	a := []string{"--exclusive", "--nodes=1", "--ntasks=1"}
	a = append(a, o.Resources.args()...)
	a = appendOpt(a, "--job-name", o.Name)
	a = appendOpt(a, "--jobid", o.JobID)
	a = appendOpt(a, "--nodelist", o.Nodelist)
	a = appendOpt(a, "--chdir", o.Chdir)
	a = appendOpt(a, "--output", o.Output)
	a = appendOpt(a, "--error", o.Error)
	a = append(a, "--kill-on-bad-exit=1", "--quiet")
	a = append(a, o.Extra...)
	a = append(a, "--")
	return append(a, argv...)
}

// JobOptions is how JobArgs submits a trial as a job of its own.
type JobOptions struct {
	// Name is the job's name (--job-name); Query.Names finds jobs by it.
	// It must not hold white space or "|" (squeue's and scontrol's output
	// could not be read back).
	Name string
	// Comment is the job's comment (--comment). It may hold spaces, but no
	// control characters, and no word of it may read like one of
	// scontrol's keys (a capital letter, then letters, digits, "_", "/"
	// or ":", then "="): "hone experiment 3f2a" and "trial=0001" read back
	// whole, "Trial=0001" would not.
	Comment string
	// Partition, Account and QOS are passed on when set.
	Partition, Account, QOS string
	// Time is the job's time limit (--time), rounded up to a second;
	// Slurm rounds it up to a minute. 0 is the partition's.
	Time time.Duration
	// Nodelist are the nodes the job must run on (--nodelist), e.g. "n2".
	Nodelist string
	// Resources are the job's single task's.
	Resources Resources
	// Chdir is the job's working directory (--chdir); "" is sbatch's.
	Chdir string
	// Output and Error are the files of the job's standard output and
	// error (--output, --error); "" is Slurm's slurm-%j.out in Chdir.
	Output, Error string
	// Extra are more sbatch options, placed after the others so that they
	// win, e.g. "--signal=B:TERM@60". --wrap is not allowed.
	Extra []string
}

// JobArgs returns the arguments of sbatch (without "sbatch") that submit
// argv as a job of one task on one node that is never requeued:
//
//	--parsable --no-requeue [--job-name=NAME] [--comment=C] [--partition=P]
//	[--account=A] [--qos=Q] [--time=T] --nodes=1 --ntasks=1
//	[--cpus-per-task=C] [--mem=MBM] [--gres=...] [--nodelist=N]
//	[--chdir=DIR] [--output=F] [--error=F] --export=ALL [EXTRA...]
//	--wrap=exec ARGV...
//
// The job runs argv through /bin/sh with every argument quoted (Quote), so
// the job's exit status is argv's own. ParseSbatch reads sbatch's output.
func JobArgs(o JobOptions, argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("job: no command")
	}
	if err := checkWord("job name", o.Name); err != nil {
		return nil, err
	}
	if err := checkComment(o.Comment); err != nil {
		return nil, err
	}
	if err := o.Resources.check(); err != nil {
		return nil, fmt.Errorf("job %s: %w", o.Name, err)
	}
	if o.Time < 0 {
		return nil, fmt.Errorf("job %s: time limit %v: negative", o.Name, o.Time)
	}
	for _, e := range o.Extra {
		if e == "--wrap" || strings.HasPrefix(e, "--wrap=") {
			return nil, fmt.Errorf("job %s: extra option %q: the command is argv", o.Name, e)
		}
	}
	a := []string{"--parsable", "--no-requeue"}
	a = appendOpt(a, "--job-name", o.Name)
	a = appendOpt(a, "--comment", o.Comment)
	a = appendOpt(a, "--partition", o.Partition)
	a = appendOpt(a, "--account", o.Account)
	a = appendOpt(a, "--qos", o.QOS)
	if o.Time > 0 {
		a = append(a, "--time="+FormatTime(o.Time))
	}
	a = append(a, "--nodes=1", "--ntasks=1")
	a = append(a, o.Resources.args()...)
	a = appendOpt(a, "--nodelist", o.Nodelist)
	a = appendOpt(a, "--chdir", o.Chdir)
	a = appendOpt(a, "--output", o.Output)
	a = appendOpt(a, "--error", o.Error)
	a = append(a, "--export=ALL")
	a = append(a, o.Extra...)
	return append(a, "--wrap="+wrap(argv)), nil
}

// checkWord accepts "" and text that squeue's and scontrol's output keep
// in one field: no white space, control characters or "|".
func checkWord(what, s string) error {
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == '|' {
			return fmt.Errorf("%s %q: white space, control characters and | are not allowed", what, s)
		}
	}
	return nil
}

// checkComment accepts "" and comments that squeue's and scontrol's
// output give back whole (see JobOptions.Comment).
func checkComment(s string) error {
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("job comment %q: control characters are not allowed", s)
		}
	}
	for _, w := range strings.Fields(s) {
		if _, _, ok := cutKey(w); ok {
			return fmt.Errorf("job comment %q: the word %q reads like a key of scontrol's output", s, w)
		}
	}
	return nil
}

func appendOpt(a []string, flag, value string) []string {
	if value == "" {
		return a
	}
	return append(a, flag+"="+value)
}

// FormatTime renders d, rounded up to a second, as Slurm's time limits are
// written: "HH:MM:SS", or "D-HH:MM:SS" from a day on.
func FormatTime(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	days, s := s/86400, s%86400
	hms := fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
	if days > 0 {
		return strconv.FormatInt(days, 10) + "-" + hms
	}
	return hms
}

// wrap is the sbatch --wrap command that runs argv in place of the shell.
// exec would take an argv[0] that starts with "-" for its own option.
func wrap(argv []string) string {
	if strings.HasPrefix(argv[0], "-") {
		return Quote(argv)
	}
	return "exec " + Quote(argv)
}

// Quote returns argv as words of a POSIX shell command line: each word as
// it is when it holds only characters no shell treats specially, else in
// single quotes, where a single quote of its own closes the quotes, is
// escaped with a backslash and opens them again.
func Quote(argv []string) string {
	var b strings.Builder
	for i, w := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quoteWord(w))
	}
	return b.String()
}

func quoteWord(w string) string {
	if w == "" {
		return "''"
	}
	plain := true
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-+=:,./@%", r)) {
			plain = false
			break
		}
	}
	if plain {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// Query selects jobs for QueueArgs. Its filters add up: a job must match
// each that is set.
type Query struct {
	// Names are job names (--name); a name must not hold a comma.
	Names []string
	// IDs are job ids (--jobs).
	IDs []string
	// User is a user name or id (--user); "" is every user.
	User string
}

// queueFormat is squeue's output format for jobs, read by ParseQueue: one
// line a job, the comment last so that a "|" in it cannot shift a field.
const queueFormat = "%i|%T|%r|%N|%j|%k"

// QueueArgs returns the arguments of squeue that list the jobs q selects,
// in every state squeue still knows (a job leaves it MinJobAge after it
// ended, 300 s by default), in the format ParseQueue reads. One squeue
// serves every job of an experiment: poll by name or by the ids at once.
func QueueArgs(q Query) []string {
	a := []string{"--noheader", "--states=all", "--format=" + queueFormat}
	if len(q.Names) > 0 {
		a = append(a, "--name="+strings.Join(q.Names, ","))
	}
	if len(q.IDs) > 0 {
		a = append(a, "--jobs="+strings.Join(q.IDs, ","))
	}
	return appendOpt(a, "--user", q.User)
}

// stepsFormat is squeue's output format for steps, read by ParseSteps: the
// step's name last, so that a "|" in it cannot shift a field.
const stepsFormat = "%i|%N|%j"

// StepsArgs returns the arguments of squeue that list the running steps of
// the jobs jobIDs (every job's when none), in the format ParseSteps reads:
// how a driver that restarts in its allocation finds the steps an earlier
// driver left running.
func StepsArgs(jobIDs ...string) []string {
	a := []string{"--steps", "--noheader", "--format=" + stepsFormat}
	if len(jobIDs) > 0 {
		a = append(a, "--jobs="+strings.Join(jobIDs, ","))
	}
	return a
}

// HostnamesArgs returns the arguments of scontrol that expand a node
// list in Slurm's compressed form ("n[1-3],gpu07", as SLURM_JOB_NODELIST
// has it) to one node name a line, read by ParseHostnames.
func HostnamesArgs(nodelist string) []string {
	return []string{"show", "hostnames", nodelist}
}

// ScontrolArgs returns the arguments of scontrol that show job id on one
// line, read by ParseScontrol.
func ScontrolArgs(id string) []string {
	return []string{"--oneliner", "show", "job", id}
}

// sacctFormat is the fields SacctArgs asks for, read by ParseSacct.
const sacctFormat = "JobID,JobName,State,ExitCode,NodeList,Reason"

// SacctArgs returns the arguments of sacct that show job id from the
// accounting database, read by ParseSacct.
func SacctArgs(id string) []string {
	return []string{"--parsable2", "--noheader", "--jobs=" + id, "--format=" + sacctFormat}
}

// CancelArgs returns the arguments of scancel for ids, job ids ("123") or
// step ids ("123.4"). With signal "" they cancel: Slurm sends SIGCONT and
// SIGTERM to every process of the job or step, SIGKILL KillWait later
// (30 s by default), and a job ends CANCELLED. With a signal ("TERM",
// "USR1"...) they send that signal only, to every step of a job and its
// batch shell (--full), and what follows is up to the program.
func CancelArgs(signal string, ids ...string) []string {
	var a []string
	if signal != "" {
		a = append(a, "--signal="+signal, "--full")
	}
	return append(a, ids...)
}

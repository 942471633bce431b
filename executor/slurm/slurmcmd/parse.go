package slurmcmd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ParseSbatch returns the job id sbatch --parsable printed: "123", or
// "123;cluster" on a cluster of a federation. It also reads the
// "Submitted batch job 123" of sbatch without --parsable.
func ParseSbatch(out []byte) (string, error) {
	s := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[i+1:])
	}
	s = strings.TrimPrefix(s, "Submitted batch job ")
	id, _, _ := strings.Cut(s, ";")
	if !isJobID(id) {
		return "", fmt.Errorf("sbatch printed %q, not a job id", strings.TrimSpace(string(out)))
	}
	return id, nil
}

// isJobID reports whether s is a job id: decimal digits.
func isJobID(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// Job is one job as squeue, scontrol or sacct show it.
type Job struct {
	// ID is the job id, "123" ("123_4" for an element of an array).
	ID string
	// Name and Comment are the job's; Comment is "" when it has none.
	Name, Comment string
	// State is Slurm's job state, "RUNNING", "COMPLETED", "NODE_FAIL"...;
	// Classify tells what it means.
	State string
	// Reason is why the job waits or ended, "Resources",
	// "NonZeroExitCode", "TimeLimit"...; "" for Slurm's "None".
	Reason string
	// Nodes are the job's nodes, "n2" or "n[1-2]"; "" before it has any.
	Nodes string
	// ExitCode is the exit status of the job's batch script, and Signal
	// the signal that ended it (scontrol's ExitCode=3:0 is 3 and 0). Both
	// are -1 when unknown: squeue does not show them.
	ExitCode, Signal int
}

// ParseQueue reads the output of squeue run with QueueArgs: one job a
// line.
func ParseQueue(out []byte) ([]Job, error) {
	var jobs []Job
	for _, line := range lines(out) {
		f := strings.SplitN(line, "|", 6)
		if len(f) != 6 {
			return nil, fmt.Errorf("squeue line %q: %d fields, want 6 (%s)", line, len(f), queueFormat)
		}
		jobs = append(jobs, Job{
			ID:       f[0],
			State:    f[1],
			Reason:   noneToEmpty(f[2]),
			Nodes:    f[3],
			Name:     f[4],
			Comment:  nullToEmpty(f[5]),
			ExitCode: -1,
			Signal:   -1,
		})
	}
	return jobs, nil
}

// Step is one running job step as squeue --steps shows it.
type Step struct {
	// ID is the step id, "123.4" ("123.batch" for a batch script).
	ID string
	// JobID is the id of the step's job, "123".
	JobID string
	// Nodes are the step's nodes.
	Nodes string
	// Name is the step's name.
	Name string
}

// ParseSteps reads the output of squeue run with StepsArgs: one step a
// line.
func ParseSteps(out []byte) ([]Step, error) {
	var steps []Step
	for _, line := range lines(out) {
		f := strings.SplitN(line, "|", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("squeue --steps line %q: %d fields, want 3 (%s)", line, len(f), stepsFormat)
		}
		job, _, ok := strings.Cut(f[0], ".")
		if !ok {
			return nil, fmt.Errorf("squeue --steps line %q: %q is not a step id", line, f[0])
		}
		steps = append(steps, Step{ID: f[0], JobID: job, Nodes: f[1], Name: f[2]})
	}
	return steps, nil
}

// ParseHostnames reads the output of scontrol run with HostnamesArgs: one
// node name a line.
func ParseHostnames(out []byte) []string {
	var names []string
	for _, l := range lines(out) {
		names = append(names, strings.TrimSpace(l))
	}
	return names
}

// ParseScontrol reads the output of scontrol --oneliner show job ID into
// its KEY=VALUE pairs, e.g. "JobState" → "FAILED", "ExitCode" → "3:0".
// It reads the first job of the output.
//
// scontrol separates pairs with spaces but does not quote values, which
// may hold spaces ("Reason=ReqNodeNotAvail, UnavailableNodes:n2"); a word
// that does not start like a key (a capital letter, then letters, digits
// and _/:, then "=") continues the value before it, and of a key that
// appears twice the first value counts, as Slurm's own keys come before
// the free texts (Comment, Command) that could hold one.
func ParseScontrol(out []byte) (map[string]string, error) {
	ls := lines(out)
	if len(ls) == 0 {
		return nil, errors.New("scontrol printed nothing")
	}
	m := make(map[string]string)
	var key string
	var val strings.Builder
	flush := func() {
		if key == "" {
			return
		}
		if _, dup := m[key]; !dup {
			m[key] = strings.TrimRight(val.String(), " ")
		}
	}
	for _, w := range strings.Split(ls[0], " ") {
		if k, v, ok := cutKey(w); ok {
			flush()
			key = k
			val.Reset()
			val.WriteString(v)
			continue
		}
		if key == "" {
			return nil, fmt.Errorf("scontrol line %q: %q before the first KEY=VALUE", ls[0], w)
		}
		val.WriteByte(' ')
		val.WriteString(w)
	}
	flush()
	if m["JobId"] == "" {
		return nil, fmt.Errorf("scontrol line %q: no JobId", ls[0])
	}
	return m, nil
}

// cutKey splits a word "Key=value" whose key looks like scontrol's.
func cutKey(w string) (key, value string, ok bool) {
	k, v, found := strings.Cut(w, "=")
	if !found || k == "" || k[0] < 'A' || k[0] > 'Z' {
		return "", "", false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '/' || r == ':') {
			return "", "", false
		}
	}
	return k, v, true
}

// JobFromScontrol returns the job ParseScontrol read.
func JobFromScontrol(m map[string]string) (Job, error) {
	j := Job{
		ID:      m["JobId"],
		Name:    m["JobName"],
		Comment: nullToEmpty(m["Comment"]),
		State:   m["JobState"],
		Reason:  noneToEmpty(m["Reason"]),
		Nodes:   noneToEmpty(m["NodeList"]),
	}
	if j.ID == "" || j.State == "" {
		return Job{}, fmt.Errorf("scontrol: job %q without JobId or JobState", j.ID)
	}
	var err error
	j.ExitCode, j.Signal, err = parseExitCode(m["ExitCode"])
	if err != nil {
		return Job{}, fmt.Errorf("scontrol: job %s: %w", j.ID, err)
	}
	return j, nil
}

// parseExitCode reads Slurm's "STATUS:SIGNAL", e.g. "3:0" or "0:15".
func parseExitCode(s string) (code, sig int, err error) {
	c, g, ok := strings.Cut(s, ":")
	if ok {
		code, err = strconv.Atoi(c)
		if err == nil {
			sig, err = strconv.Atoi(g)
		}
	}
	if !ok || err != nil {
		return -1, -1, fmt.Errorf("exit code %q: want STATUS:SIGNAL", s)
	}
	return code, sig, nil
}

// ErrNoAccounting is the error of ParseSacct when the cluster keeps no
// accounting (AccountingStorageType=accounting_storage/none): sacct can
// tell nothing.
var ErrNoAccounting = errors.New("slurm accounting storage is disabled")

// ParseSacct returns job id from the output of sacct run with SacctArgs,
// or from sacct's standard error when it failed: ErrNoAccounting when the
// cluster keeps no accounting. found is false when sacct does not list
// the job (yet).
func ParseSacct(id string, out []byte, stderr string) (j Job, found bool, err error) {
	if strings.Contains(stderr, "accounting storage is disabled") {
		return Job{}, false, ErrNoAccounting
	}
	for _, line := range lines(out) {
		f := strings.Split(line, "|")
		if len(f) != 6 {
			return Job{}, false, fmt.Errorf("sacct line %q: %d fields, want 6 (%s)", line, len(f), sacctFormat)
		}
		if f[0] != id {
			continue // its steps: 123.batch, 123.extern, 123.0
		}
		j = Job{ID: f[0], Name: f[1], State: f[2], Nodes: noneToEmpty(f[4]), Reason: noneToEmpty(f[5])}
		// sacct writes "CANCELLED by 0": who cancelled it.
		j.State, _, _ = strings.Cut(j.State, " ")
		j.ExitCode, j.Signal, err = parseExitCode(f[3])
		if err != nil {
			return Job{}, false, fmt.Errorf("sacct: job %s: %w", id, err)
		}
		return j, true, nil
	}
	return Job{}, false, nil
}

// lines returns the non-empty lines of out, without their line ends.
func lines(out []byte) []string {
	var ls []string
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimRight(l, "\r")
		if strings.TrimSpace(l) != "" {
			ls = append(ls, l)
		}
	}
	return ls
}

// noneToEmpty returns "" for Slurm's words for no reason and no nodes.
func noneToEmpty(s string) string {
	switch s {
	case "None", "(null)", "None assigned":
		return ""
	}
	return s
}

// nullToEmpty returns "" for Slurm's word for an unset text, "(null)".
func nullToEmpty(s string) string {
	if s == "(null)" {
		return ""
	}
	return s
}

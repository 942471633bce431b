package slurmcmd

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The files in testdata are the output of Slurm 22.05's commands,
// captured on the cluster of scripts/slurm.sh (see each test).

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseSbatch(t *testing.T) {
	for _, tc := range []struct {
		out     string
		want    string
		wantErr bool
	}{
		{out: string(readTestdata(t, "sbatch_parsable.txt")), want: "21"},
		{out: string(readTestdata(t, "sbatch_plain.txt")), want: "20"},
		{out: "123;cluster2\n", want: "123"},
		{out: "  77  \n", want: "77"},
		{out: "sbatch: warning: something\n42\n", want: "42"},
		{out: "", wantErr: true},
		{out: "Submitted batch job\n", wantErr: true},
		{out: "12a\n", wantErr: true},
		{out: ";cluster\n", wantErr: true},
	} {
		got, err := ParseSbatch([]byte(tc.out))
		if tc.wantErr {
			if err == nil {
				t.Errorf("ParseSbatch(%q) = %q, want an error", tc.out, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSbatch(%q) = %q, %v; want %q", tc.out, got, err, tc.want)
		}
	}
}

func TestParseQueue(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []Job
	}{
		{
			// Four jobs named hone-q: cancelled while running, exited 3,
			// pending for a drained node (the reason holds a space), and
			// running.
			file: "squeue_jobs.txt",
			want: []Job{
				{ID: "14", State: "CANCELLED", Nodes: "n1", Name: "hone-q", Comment: "trial=0004", ExitCode: -1, Signal: -1},
				{ID: "13", State: "FAILED", Reason: "NonZeroExitCode", Nodes: "n1", Name: "hone-q", Comment: "trial=0003", ExitCode: -1, Signal: -1},
				{ID: "11", State: "PENDING", Reason: "ReqNodeNotAvail, UnavailableNodes:n2", Name: "hone-q", Comment: "trial=0001", ExitCode: -1, Signal: -1},
				{ID: "12", State: "RUNNING", Nodes: "n1", Name: "hone-q", Comment: "trial=0002", ExitCode: -1, Signal: -1},
			},
		},
		{
			// Three jobs of two nodes each waiting behind an allocation
			// without a comment.
			file: "squeue_pending.txt",
			want: []Job{
				{ID: "12", State: "PENDING", Reason: "Resources", Name: "pend", Comment: "k=1", ExitCode: -1, Signal: -1},
				{ID: "13", State: "PENDING", Reason: "Priority", Name: "pend", Comment: "k=2", ExitCode: -1, Signal: -1},
				{ID: "14", State: "PENDING", Reason: "Priority", Name: "pend", Comment: "k=3", ExitCode: -1, Signal: -1},
				{ID: "10", State: "RUNNING", Nodes: "n1", Name: "alloc", ExitCode: -1, Signal: -1},
			},
		},
	} {
		got, err := ParseQueue(readTestdata(t, tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.file, got, tc.want)
		}
	}
}

func TestParseQueueEdges(t *testing.T) {
	jobs, err := ParseQueue(nil)
	if err != nil || len(jobs) != 0 {
		t.Errorf("ParseQueue(empty) = %v, %v; want no jobs", jobs, err)
	}
	// A comment with "|" stays whole: it is the last field.
	jobs, err = ParseQueue([]byte("5|RUNNING|None|n2|x|a|b|c\n"))
	if err != nil || len(jobs) != 1 || jobs[0].Comment != "a|b|c" || jobs[0].Nodes != "n2" {
		t.Errorf("ParseQueue(comment with |) = %+v, %v", jobs, err)
	}
	if _, err := ParseQueue([]byte("5|RUNNING|None\n")); err == nil || !strings.Contains(err.Error(), "5|RUNNING|None") {
		t.Errorf("ParseQueue(short line) error = %v, want one quoting the line", err)
	}
}

func TestParseSteps(t *testing.T) {
	// Two steps of a batch job, one named with a space and a "|", and the
	// batch step.
	got, err := ParseSteps(readTestdata(t, "squeue_steps.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Step{
		{ID: "25.0", JobID: "25", Nodes: "n1", Name: "hone trial|b"},
		{ID: "25.1", JobID: "25", Nodes: "n1", Name: "hone-trial-a"},
		{ID: "25.batch", JobID: "25", Nodes: "n1", Name: "batch"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if _, err := ParseSteps([]byte("25|n1|x\n")); err == nil {
		t.Error("ParseSteps accepted a job id for a step id")
	}
	if _, err := ParseSteps([]byte("25.0\n")); err == nil {
		t.Error("ParseSteps accepted a line of one field")
	}
}

func TestParseHostnames(t *testing.T) {
	got := ParseHostnames([]byte("n1\nn2\r\n\ngpu07\n"))
	if want := []string{"n1", "n2", "gpu07"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := ParseHostnames(nil); len(got) != 0 {
		t.Errorf("of nothing: %q", got)
	}
}

func TestParseScontrol(t *testing.T) {
	for _, tc := range []struct {
		file    string
		want    Job
		outcome Outcome
		summary string
	}{
		{
			// exit 0
			file:    "scontrol_completed.txt",
			want:    Job{ID: "6", Name: "wrap", State: "COMPLETED", Nodes: "n1", ExitCode: 0, Signal: 0},
			outcome: Completed,
			summary: "slurm job 6 ended COMPLETED on n1",
		},
		{
			// --wrap 'exit 3'
			file:    "scontrol_failed_exit3.txt",
			want:    Job{ID: "4", Name: "hone-exp1", Comment: "trial=t2", State: "FAILED", Reason: "NonZeroExitCode", Nodes: "n1", ExitCode: 3},
			outcome: Failed,
			summary: "slurm job 4 ended FAILED on n1 (NonZeroExitCode), exit code 3",
		},
		{
			// scancel of a job whose script exits 7 on SIGTERM
			file:    "scontrol_cancelled.txt",
			want:    Job{ID: "5", Name: "c1", State: "CANCELLED", Nodes: "n1", ExitCode: 7},
			outcome: Cancelled,
			summary: "slurm job 5 ended CANCELLED on n1, exit code 7",
		},
		{
			// scancel --signal=TERM --full of sleep 30: Slurm calls a job
			// a signal ended FAILED. Its comment holds a space and an "=".
			file:    "scontrol_signal_term.txt",
			want:    Job{ID: "3", Name: "hone-exp1", Comment: "trial=t1 exp=e", State: "FAILED", Reason: "JobLaunchFailure", Nodes: "n1", Signal: 15},
			outcome: Failed,
			summary: "slurm job 3 ended FAILED on n1 (JobLaunchFailure), signal 15",
		},
		{
			// sleep 200 with --time=0:02, which Slurm rounds up to a
			// minute; it ended 27 s past its limit.
			file:    "scontrol_timeout.txt",
			want:    Job{ID: "8", Name: "wrap", State: "TIMEOUT", Reason: "TimeLimit", Nodes: "n2", Signal: 15},
			outcome: Timeout,
			summary: "slurm job 8 ended TIMEOUT on n2 (TimeLimit), signal 15",
		},
		{
			// sleep 120 on n2, whose slurmd was stopped and which was set
			// down.
			file:    "scontrol_node_fail.txt",
			want:    Job{ID: "11", Name: "nf", State: "NODE_FAIL", Reason: "NodeDown", Nodes: "n2"},
			outcome: NodeFail,
			summary: "slurm job 11 ended NODE_FAIL on n2 (NodeDown)",
		},
		{
			// sbatch --mem=100M of a script that grows a buffer past it,
			// killed by JobAcctGatherParams=OverMemoryKill: Slurm 22.05
			// calls it FAILED, signal 9, not OUT_OF_MEMORY; slurmstepd's
			// line in its stderr says why (MemoryKill).
			file:    "scontrol_over_memory.txt",
			want:    Job{ID: "2", Name: "wrap", State: "FAILED", Reason: "JobLaunchFailure", Nodes: "n1", Signal: 9},
			outcome: Failed,
			summary: "slurm job 2 ended FAILED on n1 (JobLaunchFailure), signal 9",
		},
		{
			// sleep in partition debug on n2, preempted by an
			// exclusive job of partition urgent (PreemptMode=CANCEL).
			file:    "scontrol_preempted.txt",
			want:    Job{ID: "4", Name: "wrap", State: "PREEMPTED", Nodes: "n2", Signal: 9},
			outcome: Preempted,
			summary: "slurm job 4 ended PREEMPTED on n2, signal 9",
		},
		{
			file:    "scontrol_pending.txt",
			want:    Job{ID: "14", Name: "pend", Comment: "k=3", State: "PENDING", Reason: "Priority"},
			outcome: Pending,
			summary: "slurm job 14 is PENDING (Priority)",
		},
		{
			// scontrol writes the spaces of a reason as "_".
			file:    "scontrol_pending_reqnode.txt",
			want:    Job{ID: "11", Name: "hone-q", Comment: "trial=0001", State: "PENDING", Reason: "ReqNodeNotAvail,_UnavailableNodes:n2"},
			outcome: Pending,
			summary: "slurm job 11 is PENDING (ReqNodeNotAvail,_UnavailableNodes:n2)",
		},
	} {
		m, err := ParseScontrol(readTestdata(t, tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		got, err := JobFromScontrol(m)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.file, got, tc.want)
		}
		if o := Classify(got.State); o != tc.outcome {
			t.Errorf("%s: Classify(%q) = %v, want %v", tc.file, got.State, o, tc.outcome)
		}
		if s := got.Summary(); s != tc.summary {
			t.Errorf("%s: Summary() = %q, want %q", tc.file, s, tc.summary)
		}
	}
}

func TestParseScontrolFields(t *testing.T) {
	m, err := ParseScontrol(readTestdata(t, "scontrol_signal_term.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"AllocNode:Sid": "localhost:11765",
		"CPUs/Task":     "1",
		"TRES":          "cpu=1,mem=1000M,node=1,billing=1",
		"Power":         "",
		"StdErr":        "/tmp/o1",
		"WorkDir":       "/tmp",
		"TimeLimit":     "UNLIMITED",
	} {
		if got, ok := m[k]; !ok || got != want {
			t.Errorf("%s = %q (present %v), want %q", k, got, ok, want)
		}
	}
	// A value that reads like a key later in a free text does not replace
	// Slurm's own.
	m, err = ParseScontrol([]byte("JobId=9 JobState=RUNNING Comment=x JobState=FAILED\n"))
	if err != nil || m["JobState"] != "RUNNING" || m["Comment"] != "x" {
		t.Errorf("duplicate key: %v, %v", m, err)
	}
	for _, bad := range []string{"", "\n", "slurm_load_jobs error: Invalid job id specified", "JobName=x JobState=RUNNING"} {
		if _, err := ParseScontrol([]byte(bad)); err == nil {
			t.Errorf("ParseScontrol(%q) accepted it", bad)
		}
	}
	if _, err := JobFromScontrol(map[string]string{"JobId": "1", "JobState": "FAILED", "ExitCode": "x"}); err == nil {
		t.Error("JobFromScontrol accepted ExitCode=x")
	}
}

func TestParseSacct(t *testing.T) {
	// sacct's output could not be captured here (the test cluster keeps no
	// accounting); these lines follow sacct --parsable2's documented form:
	// the job, then its steps.
	out := "123|hone-trial|CANCELLED by 0|0:15|n2|None\n" +
		"123.batch|batch|CANCELLED|0:15|n2|\n" +
		"123.extern|extern|COMPLETED|0:0|n2|\n"
	j, found, err := ParseSacct("123", []byte(out), "")
	want := Job{ID: "123", Name: "hone-trial", State: "CANCELLED", Nodes: "n2", Signal: 15}
	if err != nil || !found || j != want {
		t.Errorf("ParseSacct = %+v, %v, %v; want %+v", j, found, err, want)
	}
	if _, found, err := ParseSacct("124", []byte(out), ""); err != nil || found {
		t.Errorf("ParseSacct of a job it does not list: found %v, %v", found, err)
	}
	// Captured: sacct on the test cluster.
	_, _, err = ParseSacct("4", nil, string(readTestdata(t, "sacct_disabled.txt")))
	if !errors.Is(err, ErrNoAccounting) {
		t.Errorf("ParseSacct without accounting: %v, want ErrNoAccounting", err)
	}
	if _, _, err := ParseSacct("1", []byte("1|x|FAILED\n"), ""); err == nil {
		t.Error("ParseSacct accepted a line of three fields")
	}
}

func TestClassify(t *testing.T) {
	for state, want := range map[string]Outcome{
		"PENDING":        Pending,
		"REQUEUE_HOLD":   Pending,
		"RUNNING":        Running,
		"COMPLETING":     Running,
		"CONFIGURING":    Running,
		"SUSPENDED":      Running,
		"COMPLETED":      Completed,
		"FAILED":         Failed,
		"CANCELLED":      Cancelled,
		"CANCELLED by 0": Cancelled,
		"cancelled":      Cancelled,
		"TIMEOUT":        Timeout,
		"DEADLINE":       Timeout,
		"NODE_FAIL":      NodeFail,
		"BOOT_FAIL":      NodeFail,
		"OUT_OF_MEMORY":  OutOfMemory,
		"PREEMPTED":      Preempted,
		"":               Unknown,
		"WHATEVER":       Unknown,
	} {
		if got := Classify(state); got != want {
			t.Errorf("Classify(%q) = %v, want %v", state, got, want)
		}
	}
	for o, ended := range map[Outcome]bool{Unknown: false, Pending: false, Running: false, Completed: true, Failed: true, Cancelled: true, Timeout: true, NodeFail: true, OutOfMemory: true, Preempted: true} {
		if o.Ended() != ended {
			t.Errorf("%v.Ended() = %v, want %v", o, o.Ended(), ended)
		}
	}
	if s := NodeFail.String(); s != "node failure" {
		t.Errorf("NodeFail.String() = %q", s)
	}
}

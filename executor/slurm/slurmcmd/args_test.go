package slurmcmd

import (
	"bytes"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// awkwardArgv are arguments a shell would split, expand or choke on.
var awkwardArgv = [][]string{
	{"echo", "plain"},
	{"echo", ""},
	{"echo", "two words", "  spaces  "},
	{"echo", "it's", `"double"`, `back\slash`, "$HOME", "`id`", "$(id)", "a;b", "a&b", "a|b", "<in", ">out"},
	{"echo", "*", "?", "[a]", "~", "~root", "#not a comment", "!", "{a,b}"},
	{"echo", "new\nline", "tab\there", "'", "''", `'\''`},
	{"echo", "ünïcødé", "日本", "--flag=value", "-n"},
	{"FOO=bar", "x"},
}

// TestQuoteThroughShell runs each quoted command line through /bin/sh,
// as sbatch --wrap does, and checks the words sh passes on.
func TestQuoteThroughShell(t *testing.T) {
	for _, argv := range awkwardArgv {
		// printf prints each word of the quoted line with a NUL after it.
		line := "printf '%s\\0' " + Quote(argv)
		out, err := exec.Command("/bin/sh", "-c", line).Output()
		if err != nil {
			t.Fatalf("sh -c %q: %v", line, err)
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		if !reflect.DeepEqual(got, argv) {
			t.Errorf("sh -c %q passed %q, want %q", line, got, argv)
		}
	}
}

func TestQuotePlainWords(t *testing.T) {
	if got, want := Quote([]string{"python3", "-u", "train.py", "--lr=0.1", "a/b.c", "x,y:z", "user@host", "50%"}),
		"python3 -u train.py --lr=0.1 a/b.c x,y:z user@host 50%"; got != want {
		t.Errorf("Quote = %q, want %q", got, want)
	}
	if got, want := Quote([]string{"a b", "it's"}), `'a b' 'it'\''s'`; got != want {
		t.Errorf("Quote = %q, want %q", got, want)
	}
}

// TestWrapExecs checks that the wrapped command replaces the shell, so the
// job's exit status and signals are the program's own.
func TestWrapExecs(t *testing.T) {
	if got, want := wrap([]string{"python3", "t.py"}), "exec python3 t.py"; got != want {
		t.Errorf("wrap = %q, want %q", got, want)
	}
	if got, want := wrap([]string{"-weird"}), "-weird"; got != want {
		t.Errorf("wrap = %q, want %q", got, want)
	}
	var out bytes.Buffer
	cmd := exec.Command("/bin/sh", "-c", wrap([]string{"sh", "-c", "echo $$; exit 3"})+"\necho not reached")
	cmd.Stdout = &out
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 3 {
		t.Fatalf("wrapped exit 3: %v", err)
	}
	if strings.Contains(out.String(), "not reached") {
		t.Error("the shell went on after the wrapped command")
	}
	if strings.TrimSpace(out.String()) != strconv.Itoa(cmd.Process.Pid) {
		t.Errorf("wrapped command ran as pid %s, not as the shell's %d", strings.TrimSpace(out.String()), cmd.Process.Pid)
	}
}

func TestStepArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    StepOptions
		argv []string
		want []string
	}{
		{
			name: "defaults",
			argv: []string{"python3", "train.py"},
			want: []string{"--exclusive", "--nodes=1", "--ntasks=1", "--kill-on-bad-exit=1", "--quiet", "--", "python3", "train.py"},
		},
		{
			name: "everything",
			o: StepOptions{
				Name: "hone-3f2a", JobID: "77", Nodelist: "n2",
				Resources: Resources{CPUs: 4, MemMB: 8000, GPUs: 2, Gres: []string{"nvme:1"}},
				Chdir:     "/scratch/t", Output: "/scratch/t/out", Error: "/scratch/t/err",
				Extra: []string{"--overlap"},
			},
			argv: []string{"--looks-like-a-flag", "x y"},
			want: []string{"--exclusive", "--nodes=1", "--ntasks=1", "--cpus-per-task=4", "--mem=8000M", "--gres=gpu:2,nvme:1",
				"--job-name=hone-3f2a", "--jobid=77", "--nodelist=n2", "--chdir=/scratch/t", "--output=/scratch/t/out", "--error=/scratch/t/err",
				"--kill-on-bad-exit=1", "--quiet", "--overlap", "--", "--looks-like-a-flag", "x y"},
		},
		{
			name: "negative resources left out",
			o:    StepOptions{Resources: Resources{CPUs: -1, MemMB: -5, GPUs: -2}},
			argv: []string{"x"},
			want: []string{"--exclusive", "--nodes=1", "--ntasks=1", "--kill-on-bad-exit=1", "--quiet", "--", "x"},
		},
	} {
		if got := StepArgs(tc.o, tc.argv); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestJobArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    JobOptions
		argv []string
		want []string
	}{
		{
			name: "defaults",
			argv: []string{"python3", "train.py"},
			want: []string{"--parsable", "--no-requeue", "--nodes=1", "--ntasks=1", "--export=ALL", "--wrap=exec python3 train.py"},
		},
		{
			name: "everything",
			o: JobOptions{
				Name: "hone-exp", Comment: "hone experiment 3f2a trial=7", Partition: "gpu", Account: "ml", QOS: "high",
				Time:      90*time.Minute + 500*time.Millisecond,
				Nodelist:  "n2",
				Resources: Resources{CPUs: 2, MemMB: 1500, GPUs: 1},
				Chdir:     "/exp/t", Output: "/exp/t/slurm.out", Error: "/exp/t/slurm.err",
				Extra: []string{"--signal=B:TERM@60", "--time=3:00:00"},
			},
			argv: []string{"python3", "train.py", "--lr", "1e-3", "a b"},
			want: []string{"--parsable", "--no-requeue", "--job-name=hone-exp", "--comment=hone experiment 3f2a trial=7", "--partition=gpu",
				"--account=ml", "--qos=high", "--time=01:30:01", "--nodes=1", "--ntasks=1", "--cpus-per-task=2", "--mem=1500M",
				"--gres=gpu:1", "--nodelist=n2", "--chdir=/exp/t", "--output=/exp/t/slurm.out", "--error=/exp/t/slurm.err",
				"--export=ALL", "--signal=B:TERM@60", "--time=3:00:00", "--wrap=exec python3 train.py --lr 1e-3 'a b'"},
		},
	} {
		got, err := JobArgs(tc.o, tc.argv)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestJobArgsRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    JobOptions
		argv []string
		want string
	}{
		{"no command", JobOptions{}, nil, "no command"},
		{"name with space", JobOptions{Name: "a b"}, []string{"x"}, `job name "a b"`},
		{"name with bar", JobOptions{Name: "a|b"}, []string{"x"}, `job name "a|b"`},
		{"comment with newline", JobOptions{Comment: "a\nb"}, []string{"x"}, "job comment"},
		{"comment with a key", JobOptions{Comment: "hone Trial=3"}, []string{"x"}, `"Trial=3" reads like a key`},
		{"negative cpus", JobOptions{Resources: Resources{CPUs: -1}}, []string{"x"}, "negative"},
		{"bad gres", JobOptions{Resources: Resources{Gres: []string{"a:1,b:2"}}}, []string{"x"}, `gres "a:1,b:2"`},
		{"negative time", JobOptions{Time: -time.Second}, []string{"x"}, "negative"},
		{"wrap in extra", JobOptions{Extra: []string{"--wrap=true"}}, []string{"x"}, "--wrap=true"},
	} {
		_, err := JobArgs(tc.o, tc.argv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestFormatTime(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Second:                    "00:00:01",
		time.Millisecond:               "00:00:01",
		2 * time.Minute:                "00:02:00",
		90 * time.Minute:               "01:30:00",
		23*time.Hour + 59*time.Minute:  "23:59:00",
		24 * time.Hour:                 "1-00:00:00",
		50*time.Hour + 3*time.Second:   "2-02:00:03",
		100*24*time.Hour + time.Minute: "100-00:01:00",
	} {
		if got := FormatTime(d); got != want {
			t.Errorf("FormatTime(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestQueueArgs(t *testing.T) {
	for _, tc := range []struct {
		q    Query
		want []string
	}{
		{Query{}, []string{"--noheader", "--states=all", "--format=%i|%T|%r|%N|%j|%k"}},
		{Query{Names: []string{"hone-a", "hone-b"}}, []string{"--noheader", "--states=all", "--format=%i|%T|%r|%N|%j|%k", "--name=hone-a,hone-b"}},
		{Query{IDs: []string{"1", "22"}, User: "me"}, []string{"--noheader", "--states=all", "--format=%i|%T|%r|%N|%j|%k", "--jobs=1,22", "--user=me"}},
	} {
		if got := QueueArgs(tc.q); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("QueueArgs(%+v) = %q, want %q", tc.q, got, tc.want)
		}
	}
	if got, want := StepsArgs("7", "8"), []string{"--steps", "--noheader", "--format=%i|%N|%j", "--jobs=7,8"}; !reflect.DeepEqual(got, want) {
		t.Errorf("StepsArgs = %q, want %q", got, want)
	}
	if got, want := CancelArgs("", "1", "2.3"), []string{"1", "2.3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("CancelArgs = %q, want %q", got, want)
	}
	if got, want := CancelArgs("TERM", "1"), []string{"--signal=TERM", "--full", "1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("CancelArgs = %q, want %q", got, want)
	}
	if got, want := ScontrolArgs("5"), []string{"--oneliner", "show", "job", "5"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ScontrolArgs = %q, want %q", got, want)
	}
	if got, want := SacctArgs("5"), []string{"--parsable2", "--noheader", "--jobs=5", "--format=JobID,JobName,State,ExitCode,NodeList,Reason"}; !reflect.DeepEqual(got, want) {
		t.Errorf("SacctArgs = %q, want %q", got, want)
	}
}

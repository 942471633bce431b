package spec

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// TestRefusedInput checks that names, storage values and resources that
// cannot work are spec errors naming the key.
func TestRefusedInput(t *testing.T) {
	m := thisMachine()
	for _, tc := range []struct {
		name, src string
		want      []string
	}{{
		name: "name with a newline",
		src:  "command: [x]\nname: \"a\\nb\"\n",
		want: []string{`experiment.yaml:2: name: must not contain control characters such as newlines or tabs, got "a\nb"`},
	}, {
		name: "name with a tab",
		src:  "command: [x]\nname: \"a\\tb\"\n",
		want: []string{`experiment.yaml:2: name: must not contain control characters such as newlines or tabs, got "a\tb"`},
	}, {
		name: "name with NUL",
		src:  "command: [x]\nname: \"a\\0b\"\n",
		want: []string{`experiment.yaml:2: name: must not contain control characters such as newlines or tabs, got "a\x00b"`},
	}, {
		name: "name of spaces",
		src:  "command: [x]\nname: \" \"\n",
		want: []string{`experiment.yaml:2: name: must contain a visible character, got " "`},
	}, {
		name: "name of an invisible character",
		src:  "command: [x]\nname: \"\\u200b\\u3000\"\n",
		want: []string{`experiment.yaml:2: name: must contain a visible character, got "\u200b\u3000"`},
	}, {
		name: "name with a backslash",
		src:  "command: [x]\nname: 'a\\b'\n",
		want: []string{`experiment.yaml:2: name: names a directory under storage, so it cannot contain a slash, got "a\\b"`},
	}, {
		name: "trainable with a newline",
		src:  "command: [x]\ntrainable: \"mlp\\r\\n\"\n",
		want: []string{`experiment.yaml:2: trainable: must not contain control characters such as newlines or tabs, got "mlp\r\n"`},
	}, {
		name: "trainable of spaces",
		src:  "command: [x]\ntrainable: \"  \"\n",
		want: []string{`experiment.yaml:2: trainable: must contain a visible character, got "  "`},
	}, {
		name: "environment variable names",
		src:  "command: [x]\nenv:\n  \"A\\nB\": 1\n  \"C D\": 2\n  \"E=F\": 3\n  OK: \"multi\\nline\"\n",
		want: []string{
			`experiment.yaml:3: env.A\nB: not a valid environment variable name`,
			`experiment.yaml:4: env.C D: not a valid environment variable name`,
			`experiment.yaml:5: env.E=F: not a valid environment variable name`,
		},
	}, {
		name: "object storage without a bucket",
		src:  "command: [x]\nstorage: s3:///results\n",
		want: []string{`experiment.yaml:2: storage: s3 URL names no bucket: want s3://BUCKET/PREFIX`},
	}, {
		name: "object storage with credentials",
		src:  "command: [x]\nstorage: s3://AKIA:hunter2@bucket/results\n",
		want: []string{`experiment.yaml:2: storage: s3 URL must not carry credentials; they come from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE or the shared config)`},
	}, {
		name: "http storage",
		src:  "command: [x]\nstorage: \"HTTPS://example/results\"\n",
		want: []string{`experiment.yaml:2: storage: unsupported URL scheme "HTTPS"; allowed: a local path, file:///abs/path, or s3://bucket/prefix?endpoint=...&region=...`},
	}, {
		name: "file URL with a host",
		src:  "command: [x]\nstorage: file://server/results\n",
		want: []string{`experiment.yaml:2: storage: file URL names host "server"; only local paths are supported: file:///abs/path`},
	}, {
		name: "relative file URL",
		src:  "command: [x]\nstorage: \"file://\"\n",
		want: []string{`experiment.yaml:2: storage: want file:///abs/path (an absolute path, no query), got "file://"`},
	}, {
		name: "storage with a newline",
		src:  "command: [x]\nstorage: \"results\\n\"\n",
		want: []string{`experiment.yaml:2: storage: must be a path or a URL, without control characters, got "results\n"`},
	}, {
		name: "more CPUs than the machine",
		src:  fmt.Sprintf("command: [x]\nresources:\n  cpu: %d\n", m.cpus+1),
		want: []string{fmt.Sprintf(`experiment.yaml:3: resources.cpu: each trial needs %d CPUs but this machine has %d`, m.cpus+1, m.cpus)},
	}, {
		name: "more GPUs than gpus",
		src:  "command: [x]\ngpus: 2\nresources:\n  gpu: 3\n",
		want: []string{`experiment.yaml:4: resources.gpu: each trial needs 3 GPU(s) but gpus, the number the machine has, is 2`},
	}, {
		name: "more of a custom resource than offered",
		src:  "command: [x]\ncustom_resources: {tpu: 2}\nresources:\n  custom: {tpu: 2.5}\n",
		want: []string{`experiment.yaml:4: resources.custom.tpu: each trial needs 2.5 but custom_resources.tpu is 2`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parse(t, tc.src)
			if s != nil {
				t.Errorf("Parse accepted the spec")
			}
			if got := messages(t, err); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestRefusedNameInGo checks Validate of a spec built in Go, as the CLI
// does after --name.
func TestRefusedNameInGo(t *testing.T) {
	for _, name := range []string{" ", "\t", "x\ny", "\u00a0", "a/b"} {
		s := Default()
		s.WorkingDir, s.Command, s.Name = t.TempDir(), []string{"true"}, name
		err := s.Validate()
		if got := messages(t, err); len(got) != 1 || !strings.HasPrefix(got[0], "name: ") {
			t.Errorf("name %q: %q", name, got)
		}
	}
	for _, name := range []string{"exp", "ünï cödé", " padded ", "a.b-c_d"} {
		s := Default()
		s.WorkingDir, s.Command, s.Name = t.TempDir(), []string{"true"}, name
		if err := s.Validate(); err != nil {
			t.Errorf("name %q refused: %v", name, err)
		}
	}
}

// TestTrainableSlash checks that a trainable with a slash is accepted:
// trial directory names replace it.
func TestTrainableSlash(t *testing.T) {
	if s, err := parse(t, "command: [x]\ntrainable: models/mlp\n"); err != nil || s.Trainable != "models/mlp" {
		t.Errorf("trainable with a slash: %v", err)
	}
}

func TestStorage(t *testing.T) {
	for in, want := range map[string]string{
		"hone_results":            "hone_results",
		"/srv/results":            "/srv/results",
		"file:///srv/results":     "/srv/results",
		"file://localhost/srv/r/": "/srv/r",
		"FILE:///srv/a%20b":       "/srv/a b",
		"./s3://x":                "./s3://x",
		"C://data":                "C://data",
	} {
		s, err := parse(t, "command: [x]\nstorage: \""+in+"\"\n")
		if err != nil {
			t.Errorf("storage %q: %v", in, err)
			continue
		}
		if s.Storage != want {
			t.Errorf("storage %q: Storage = %q, want %q", in, s.Storage, want)
		}
		if d, err := s.StorageDir(); err != nil || d != want {
			t.Errorf("storage %q: StorageDir = %q, %v", in, d, err)
		}
	}
	s := Default()
	s.Storage = "gs://bucket"
	if _, err := s.StorageDir(); err == nil || err.Error() != `storage: unsupported URL scheme "gs"; allowed: a local path, file:///abs/path, or s3://bucket/prefix?endpoint=...&region=...` {
		t.Errorf("StorageDir(gs://) = %v", err)
	}
	if u, ok := s.StorageURL(); ok {
		t.Errorf("StorageURL(gs://) = %q, true", u)
	}
	// An object store: the experiment's URL is the storage URL's path
	// joined with the name, the query kept; it is no directory.
	s, err := parse(t, "command: [x]\nname: run1\nstorage: \"s3://bucket/a/b?endpoint=http://127.0.0.1:9000&region=us-east-1\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if u, ok := s.StorageURL(); !ok || u != "s3://bucket/a/b/run1?endpoint=http://127.0.0.1:9000&region=us-east-1" {
		t.Errorf("StorageURL = %q, %v", u, ok)
	}
	if d, err := s.StorageDir(); err == nil {
		t.Errorf("StorageDir of an s3 storage = %q, nil; want an error", d)
	}
	s.Storage = "s3://bucket"
	if u, _ := s.StorageURL(); u != "s3://bucket/run1" {
		t.Errorf("StorageURL of a bucket without prefix = %q", u)
	}
}

// TestMemory checks that memory is a resource of the machine: a request
// above the machine's memory is refused at validate, and Build's pool
// holds the machine's memory.
func TestMemory(t *testing.T) {
	m := thisMachine()
	if runtime.GOOS == "linux" && m.memory <= 0 {
		t.Fatalf("no memory figure on Linux: %+v", m)
	}
	if m.memory <= 0 {
		t.Skipf("no memory figure on %s: memory is not limited there", runtime.GOOS)
	}
	_, err := parse(t, "command: [x]\nresources:\n  memory: 1000TiB\n")
	want := []string{fmt.Sprintf("experiment.yaml:3: resources.memory: each trial needs 1000TiB but this machine has %s (%d bytes)", formatSize(m.memory), m.memory)}
	if got := messages(t, err); !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n got %q\nwant %q", got, want)
	}
	// Exactly the machine's memory fits.
	s, err := parse(t, fmt.Sprintf("command: [x]\nresources:\n  memory: %d\n", m.memory))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Build(s, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Options.Pool.Memory != m.memory || plan.Experiment.Resources.Memory != m.memory {
		t.Errorf("pool memory %d, trial memory %d, want %d", plan.Options.Pool.Memory, plan.Experiment.Resources.Memory, m.memory)
	}
}

func TestMemTotal(t *testing.T) {
	got, err := memTotal(strings.NewReader("MemFree:  10 kB\nMemTotal:       24683664 kB\n"))
	if err != nil || got != 24683664*1024 {
		t.Errorf("memTotal = %d, %v", got, err)
	}
	for _, in := range []string{"", "MemTotal: x kB\n", "MemTotal: 5 GB\n", "MemTotal:\n"} {
		if got, err := memTotal(strings.NewReader(in)); err == nil {
			t.Errorf("memTotal(%q) = %d, want an error", in, got)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for in, want := range map[int64]string{
		0: "0B", 512: "512B", 1536: "1.5KiB", 1 << 30: "1GiB", 24683664 * 1024: "23.5GiB", 1000 << 40: "1000TiB",
	} {
		if got := formatSize(in); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", in, got, want)
		}
	}
}

// TestErrorsStayOneLine checks that keys with control characters are
// escaped in errors, so each error is one line.
func TestErrorsStayOneLine(t *testing.T) {
	for src, want := range map[string]string{
		"command: [x]\nmetric: m\nscheduler: {name: pbt, hyperparam_mutations: {\"a\\nb\": 3}}\n": `experiment.yaml:3: scheduler.hyperparam_mutations: a\nb: want a list of values or a domain such as {uniform: [0, 1]}, got 3`,
		"command: [x]\n\"a\\rb\": 1\n":                                 `experiment.yaml:2: a\rb: unknown key; allowed keys: ` + strings.Join(sorted(topKeys), ", "),
		"command: [x]\nsearch_space: {\"a\\nb\": {uniform: [1, 0]}}\n": `experiment.yaml:2: search_space.a\nb.uniform: want [low, high] with low < high, got [1, 0]`,
	} {
		_, err := parse(t, src)
		if got := messages(t, err); len(got) != 1 || got[0] != want {
			t.Errorf("errors:\n got %q\nwant %q", got, want)
		}
	}
	if got := printable("ok \"quoted\" \\ é\x00\x7f\xff\u0085"); got != `ok "quoted" \ é\x00\x7f\xff\u0085` {
		t.Errorf("printable = %q", got)
	}
}

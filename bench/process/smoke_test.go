package process

import (
	"bytes"
	"context"
	"math"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// figureLine matches a figure as Figure.String prints it.
var figureLine = regexp.MustCompile(`^(.+?) (\S+) vs (.+) (\S+)/s: ratio (\S+)$`)

// TestSmoke runs the benchmark in smoke mode, the real code path with tiny
// sizes, and checks that it prints every figure with finite positive
// numbers. The numbers themselves are not checked.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs processes")
	}
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), []string{"-smoke", "-q"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, &stdout, &stderr)
	}
	out := stdout.String()
	_, pyErr := exec.LookPath("python3")
	want := map[string]bool{ // what, baseline
		"go launches/s|fork+exec /bin/true, one at a time":         false,
		"go launches/s|fork+exec /bin/true, 2 at a time":           false,
		"go launches/s|the trial program run by hand, 2 at a time": false,
		"go launches/s|the trial program run by hand, 2 at a time, after making one at a time the directories, socket and files hone makes per trial": false,
		"go results/s, 2 trials|pipe round trip + JSON decode, 2 at a time":                                                                           false,
		"go results/s, 16 trials|pipe round trip + JSON decode, 16 at a time":                                                                         false,
	}
	if pyErr == nil {
		for _, k := range []string{
			"python launches/s|fork+exec /bin/true, one at a time",
			"python launches/s|fork+exec /bin/true, 2 at a time",
			"python launches/s|the trial script run by hand, 2 at a time",
			"python results/s, 2 trials|pipe round trip + JSON decode, 2 at a time",
			"python results/s, 2 trials|pipe round trip via a Python echo + JSON decode, 2 at a time",
			"python results/s, 16 trials|pipe round trip + JSON decode, 16 at a time",
			"python results/s, 16 trials|pipe round trip via a Python echo + JSON decode, 16 at a time",
		} {
			want[k] = false
		}
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "procbench: ") {
		t.Errorf("no header line:\n%s", out)
	}
	for _, line := range lines[1:] {
		if strings.HasPrefix(line, "note: ") {
			continue
		}
		m := figureLine.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("not a figure: %q", line)
			continue
		}
		for _, s := range []string{m[2], m[4], m[5]} {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
				t.Errorf("%q: %q is not a finite positive number", line, s)
			}
		}
		key := m[1] + "|" + m[3]
		seen, ok := want[key]
		switch {
		case !ok:
			t.Errorf("unexpected figure %q", line)
		case seen:
			t.Errorf("figure printed twice: %q", line)
		}
		want[key] = true
	}
	for k, seen := range want {
		if !seen {
			t.Errorf("missing figure %q in:\n%s", k, out)
		}
	}
	if pyErr != nil && !strings.Contains(out, "note: Python figures skipped") {
		t.Errorf("no note that the Python figures were skipped:\n%s", out)
	}
}

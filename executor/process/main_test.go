package process_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// scripted is the path of the test trial program, built by TestMain from
// testdata/scripted.
var scripted string

func TestMain(m *testing.M) {
	if mode := os.Getenv(parentEnv); mode != "" {
		// The test binary run by a test as the hone process it kills.
		os.Exit(parentMain(mode))
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "process-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	scripted = filepath.Join(dir, "scripted")
	if err := build(scripted, "./testdata/scripted"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			return 1
		}
	}
	return code
}

// build compiles the package at pkg into the program out, with the race
// detector when the tests run with it.
func build(out, pkg string) error {
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	args := []string{"build", "-o", out}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command(gobin, append(args, pkg)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// testEnv returns the environment entries every test trial gets: under
// the race detector, no second of sleep at the exit of every trial
// program (a race still fails the trial, with exit status 66).
func testEnv() []string {
	if raceEnabled {
		return []string{"GORACE=atexit_sleep_ms=0"}
	}
	return nil
}

// waitFile waits until path exists and holds a line, and returns its
// lines.
func waitFile(t *testing.T, path string) []string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.Fields(string(b))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within a minute", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

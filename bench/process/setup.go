package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// benchModule is the path of the bench module, as its go.mod names it.
const benchModule = "github.com/hone-tune/hone/bench"

// benchDir returns the bench module's source directory: dir if given,
// else the one this file was compiled from, else the working directory or
// its bench subdirectory.
func benchDir(dir string) (string, error) {
	var candidates []string
	if dir != "" {
		candidates = []string{dir}
	} else {
		if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
			candidates = append(candidates, filepath.Dir(filepath.Dir(file)))
		}
		if wd, err := os.Getwd(); err == nil {
			candidates = append(candidates, wd, filepath.Join(wd, "bench"), filepath.Dir(wd))
		}
	}
	for _, c := range candidates {
		data, err := os.ReadFile(filepath.Join(c, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module "+benchModule+"\n")) {
			return filepath.Abs(c)
		}
	}
	return "", fmt.Errorf("cannot find the source of %s (tried %s); run procbench from the bench module or pass -src", benchModule, strings.Join(candidates, ", "))
}

// goTool returns the go command.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// buildTrial builds cmd/proctrial of the bench module in dir into out.
func buildTrial(ctx context.Context, dir, out string) error {
	return build(ctx, dir, "./process/cmd/proctrial", out)
}

// build builds the package pkg ("./cmd/...") of the bench module in dir
// into out.
func build(ctx context.Context, dir, pkg, out string) error {
	cmd := exec.CommandContext(ctx, goTool(), "build", "-o", out, pkg)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}

// Build builds the command pkg of the bench module (a path relative to
// the module, e.g. "./cmd/simtrials") into out, from the bench module's
// source in srcDir ("" finds it as procbench does): the helper programs
// other suites run as processes of their own.
func Build(ctx context.Context, srcDir, pkg, out string) error {
	dir, err := benchDir(srcDir)
	if err != nil {
		return err
	}
	return build(ctx, dir, pkg, out)
}

// BuildTrial builds the Go trial program cmd/proctrial into out, from the
// bench module's source in srcDir ("" finds it as procbench does), for
// other suites that run it (perfbench's overhead shape runs
// "proctrial sleep 1s").
func BuildTrial(ctx context.Context, srcDir, out string) error {
	dir, err := benchDir(srcDir)
	if err != nil {
		return err
	}
	return buildTrial(ctx, dir, out)
}

// pythonTrial is the Python trial script and the interpreter that runs it.
type pythonTrial struct {
	python string // the interpreter itself, not a wrapper such as a pyenv shim
	script string
}

// command returns the argv running the script with args.
func (p *pythonTrial) command(args ...string) []string {
	return append([]string{p.python, p.script}, args...)
}

// pyTrialScript is the Python counterpart of cmd/proctrial: "report N"
// reports N results through hone.py, the last one done; "echo" copies
// standard input to standard output line by line.
const pyTrialScript = `import sys

import hone


def echo():
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        line = inp.readline()
        if not line:
            return
        out.write(line)
        out.flush()


def report(n):
    for i in range(1, n + 1):
        if hone.report({"loss": 1.0 / i, "step": i}, done=(i == n)) == "stop":
            return


if __name__ == "__main__":
    if sys.argv[1:] == ["echo"]:
        echo()
    elif len(sys.argv) == 3 and sys.argv[1] == "report":
        report(int(sys.argv[2]))
    else:
        sys.exit("usage: proctrial.py report N | proctrial.py echo")
`

// findPython finds python3 (3.8 or newer, as hone.py needs) and writes the
// trial script next to a copy of clients/python/hone.py from the hone
// module that the bench module in dir uses, in tmp.
func findPython(ctx context.Context, dir, tmp string) (*pythonTrial, error) {
	launcher, err := exec.LookPath("python3")
	if err != nil {
		return nil, errors.New("no python3 in PATH")
	}
	// The interpreter's own path: a wrapper such as a pyenv shim would add
	// its own start-up time to every launch.
	out, err := exec.CommandContext(ctx, launcher, "-c",
		"import sys; print(sys.executable); sys.exit(0 if sys.version_info >= (3, 8) else 3)").Output()
	if err != nil {
		return nil, fmt.Errorf("%s is not Python 3.8 or newer (%v)", launcher, err)
	}
	python := strings.TrimSpace(string(out))
	if python == "" {
		python = launcher
	}
	cmd := exec.CommandContext(ctx, goTool(), "list", "-m", "-f", "{{.Dir}}", "github.com/hone-tune/hone")
	cmd.Dir = dir
	root, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("locate the hone module: %w", err)
	}
	client, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(root)), "clients", "python", "hone.py"))
	if err != nil {
		return nil, err
	}
	pyDir := filepath.Join(tmp, "python")
	if err := os.MkdirAll(pyDir, 0o755); err != nil {
		return nil, err
	}
	// A copy of hone.py next to the script: Python finds it on its path
	// and caches its bytecode in the temporary directory, not in the
	// repository.
	if err := os.WriteFile(filepath.Join(pyDir, "hone.py"), client, 0o644); err != nil {
		return nil, err
	}
	script := filepath.Join(pyDir, "proctrial.py")
	if err := os.WriteFile(script, []byte(pyTrialScript), 0o644); err != nil {
		return nil, err
	}
	return &pythonTrial{python: python, script: script}, nil
}

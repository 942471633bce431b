package hone_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
)

// TestPythonClientVersion checks that the Python client's version, which
// pip installs it under, is hone's.
func TestPythonClientVersion(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("clients", "python", "hone.py"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^__version__ = "([^"]+)"$`).FindSubmatch(src)
	if m == nil {
		t.Fatal(`clients/python/hone.py has no line __version__ = "..."`)
	}
	if got := string(m[1]); got != hone.Version {
		t.Errorf("the Python client's version is %s, hone's is %s: give both the same", got, hone.Version)
	}
}

// TestPythonClientInstalls installs the Python client with pip into a
// fresh virtual environment, offline (no package index), and checks that
// the installed module is the client at hone's version. It skips where
// python3 has no venv module.
func TestPythonClientInstalls(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	venv := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.Command(py, "-m", "venv", venv).CombinedOutput(); err != nil {
		t.Skipf("python3 -m venv: %v\n%s", err, out)
	}
	bin := filepath.Join(venv, "bin")
	pip := exec.Command(filepath.Join(bin, "pip"), "install", "--no-index", "--no-cache-dir", "--disable-pip-version-check", "-q", "./clients/python")
	pip.Env = append(os.Environ(), "PIP_CONFIG_FILE="+os.DevNull)
	if out, err := pip.CombinedOutput(); err != nil {
		t.Fatalf("pip install --no-index ./clients/python: %v\n%s", err, out)
	}
	show := exec.Command(filepath.Join(bin, "python"), "-c", "import hone; print(hone.__version__); print(hone.__file__)")
	show.Dir = t.TempDir() // not the repository, whose hone.py is not on the path anyway
	out, err := show.Output()
	if err != nil {
		t.Fatalf("import the installed client: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || lines[0] != hone.Version || !strings.HasPrefix(lines[1], venv) {
		t.Errorf("the installed client: %q; want version %s from %s", lines, hone.Version, venv)
	}
	// Building left nothing behind in the client's directory.
	entries, err := os.ReadDir(filepath.Join("clients", "python"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch e.Name() {
		case "hone.py", "test_hone.py", "pyproject.toml", "backend", "__pycache__":
		default:
			t.Errorf("clients/python holds %s after the install", e.Name())
		}
	}
}

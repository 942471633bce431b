package mobench

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hone-tune/hone/bench/mofunctions"
)

// The Optuna driver and its port of the problems, written to a temporary
// directory to run.
//
//go:embed optuna/mo_run.py optuna/mo_problems.py
var optunaScripts embed.FS

// DefaultPython is the interpreter the Optuna driver runs with by default:
// Debian's, which python3-optuna installs into (python3 on PATH may be
// another one).
const DefaultPython = "/usr/bin/python3"

// Optuna returns the Optuna methods, run with the interpreter python
// (DefaultPython if empty): NSGAIISampler ("optuna-nsga2") and
// multi-objective TPESampler ("optuna-motpe"), see optuna/mo_run.py. A
// run takes floor(budget) trials at full fidelity.
func Optuna(python string) []Method {
	if python == "" {
		python = DefaultPython
	}
	var ms []Method
	// Each method's name and the driver's name for its sampler.
	for _, s := range [][2]string{{"optuna-nsga2", "nsga2"}, {"optuna-motpe", "motpe"}} {
		name, sampler := s[0], s[1]
		ms = append(ms, Method{Name: name, Run: func(ctx context.Context, p *mofunctions.Problem, seed uint64, budget float64) (*Trace, error) {
			return runOptuna(ctx, python, name, sampler, p, seed, budget)
		}})
	}
	return ms
}

// writeScripts writes the driver and the port into dir.
func writeScripts(dir string) error {
	for _, name := range []string{"mo_run.py", "mo_problems.py"} {
		data, err := optunaScripts.ReadFile("optuna/" + name)
		if err != nil {
			return fmt.Errorf("reading the embedded %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}

// pythonEnv is the environment of the Python processes: a fixed hash
// seed, no bytecode files, and one thread per numerical library.
func pythonEnv() []string {
	return append(os.Environ(), "PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1",
		"OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "MKL_NUM_THREADS=1")
}

// python runs the driver in a temporary directory with args and stdin,
// returning its standard output.
func python(ctx context.Context, interp string, stdin []byte, args ...string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "mobench-optuna-")
	if err != nil {
		return nil, fmt.Errorf("temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := writeScripts(dir); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, interp, append([]string{"mo_run.py"}, args...)...)
	cmd.Dir, cmd.Env = dir, pythonEnv()
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s mo_run.py %s: %w: %s", interp, strings.Join(args, " "), err, lastLine(stderr.Bytes()))
	}
	return out, nil
}

// lastLine returns the last non-empty line of out.
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// OptunaVersion returns the version of Optuna the interpreter imports
// (DefaultPython if empty), or why it cannot.
func OptunaVersion(ctx context.Context, interp string) (string, error) {
	if interp == "" {
		interp = DefaultPython
	}
	if _, err := os.Stat(interp); err != nil {
		return "", fmt.Errorf("no %s: %w", interp, err)
	}
	out, err := python(ctx, interp, nil, "version")
	if err != nil {
		return "", fmt.Errorf("optuna is not available (as root: apt-get install -y python3-optuna): %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// optunaLine is a line of mo_run.py run's output: a trial, or the last
// line with the trial count and the CPU time.
type optunaLine struct {
	Trial  *int      `json:"trial"`
	X      []float64 `json:"x"`
	Values []float64 `json:"values"`
	Trials *int      `json:"trials"`
	CPU    float64   `json:"cpu"`
}

// runOptuna runs one Optuna study of floor(budget) trials and reads its
// trace.
func runOptuna(ctx context.Context, interp, name, sampler string, p *mofunctions.Problem, seed uint64, budget float64) (*Trace, error) {
	trials := int(math.Floor(budget + budgetSlack))
	out, err := python(ctx, interp, nil, "run", p.Name, sampler, strconv.FormatUint(seed, 10), strconv.Itoa(trials))
	if err != nil {
		return nil, err
	}
	tr := &Trace{Problem: p.Name, Method: name, Seed: seed, Budget: budget}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	done := false
	for sc.Scan() {
		var l optunaLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("the driver's line %q: %w", sc.Text(), err)
		}
		switch {
		case l.Trial != nil:
			if *l.Trial != len(tr.Evals) {
				return nil, fmt.Errorf("the driver's trial %d comes after %d trials", *l.Trial, len(tr.Evals))
			}
			tr.Evals = append(tr.Evals, Eval{X: l.X, Step: p.Steps, Values: l.Values})
			tr.Spent += p.Cost(p.Steps)
		case l.Trials != nil:
			if *l.Trials != len(tr.Evals) {
				return nil, fmt.Errorf("the driver counts %d trials, it printed %d", *l.Trials, len(tr.Evals))
			}
			tr.CPU = time.Duration(l.CPU * float64(time.Second))
			done = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the driver's output: %w", err)
	}
	if !done {
		return nil, errors.New("the driver's output ends without its summary line")
	}
	return tr, nil
}

package searchbench

import (
	"bufio"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hone-tune/hone/bench/functions"
)

// The Optuna driver and its port of the problems, written to a temporary
// directory to run.
//
//go:embed optuna/run.py optuna/problems.py
var optunaScripts embed.FS

// Python is the interpreter the Optuna driver runs with: Debian's, which
// python3-optuna installs into (python3 on PATH may be another one).
var Python = "/usr/bin/python3"

// OptunaPackage is the Debian package that provides Optuna (3.1 on
// Debian 12).
const OptunaPackage = "python3-optuna"

// writeOptunaScripts writes run.py and problems.py into dir.
func writeOptunaScripts(dir string) error {
	for _, name := range []string{"run.py", "problems.py"} {
		data, err := optunaScripts.ReadFile("optuna/" + name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// pythonEnv is the environment of the Python processes: the scripts'
// directory first on the module path, a fixed hash seed, no bytecode
// files, and one thread per numerical library (the runs execute side by
// side).
func pythonEnv() []string {
	return append(os.Environ(), "PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1",
		"OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "MKL_NUM_THREADS=1")
}

var (
	optunaOnce    sync.Once
	optunaVersion string
	optunaErr     error
)

// EnsureOptuna makes sure Python can import Optuna, installing Debian's
// python3-optuna with apt-get when it cannot and this process runs as
// root; what it does goes to log. It returns Optuna's version, or why
// Optuna is not available. It does its work once per process; the
// package, once installed, serves every later run on the machine.
func EnsureOptuna(log io.Writer) (string, error) {
	optunaOnce.Do(func() { optunaVersion, optunaErr = ensureOptuna(log) })
	return optunaVersion, optunaErr
}

func ensureOptuna(log io.Writer) (string, error) {
	dir, err := os.MkdirTemp("", "searchbench-optuna-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	if err := writeOptunaScripts(dir); err != nil {
		return "", err
	}
	version := func() (string, error) {
		cmd := exec.Command(Python, "run.py", "version")
		cmd.Dir, cmd.Env = dir, pythonEnv()
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("%s cannot import optuna: %v: %s", Python, err, lastLine(out))
		}
		return strings.TrimSpace(string(out)), nil
	}
	if v, err := version(); err == nil {
		return v, nil
	} else if _, serr := os.Stat(Python); serr != nil {
		return "", fmt.Errorf("no %s: %w", Python, serr)
	} else if os.Geteuid() != 0 {
		return "", fmt.Errorf("%w; not root, so %s is not installed (as root: apt-get install -y %s)", err, OptunaPackage, OptunaPackage)
	}
	apt, err := exec.LookPath("apt-get")
	if err != nil {
		return "", fmt.Errorf("optuna missing and no apt-get to install %s", OptunaPackage)
	}
	install := func(args ...string) error {
		fmt.Fprintf(log, "searchbench: %s %s\n", apt, strings.Join(args, " "))
		cmd := exec.Command(apt, args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("apt-get %s: %v: %s", args[0], err, lastLine(out))
		}
		return nil
	}
	lock := []string{"-o", "DPkg::Lock::Timeout=600"}
	if err := install(append([]string{"install", "-y", "-q"}, append(lock, OptunaPackage)...)...); err != nil {
		// The package lists may be missing or stale.
		if uerr := install(append([]string{"update", "-q"}, lock...)...); uerr != nil {
			return "", fmt.Errorf("%v; %v", err, uerr)
		}
		if err := install(append([]string{"install", "-y", "-q"}, append(lock, OptunaPackage)...)...); err != nil {
			return "", err
		}
	}
	return version()
}

// lastLine returns the last non-empty line of out.
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// optunaPool keeps Python worker processes (run.py serve), each running
// one job at a time, at most max of them.
type optunaPool struct {
	dir  string
	sem  chan struct{}
	mu   sync.Mutex
	idle []*optunaWorker
	all  []*optunaWorker
}

type optunaWorker struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// newOptunaPool writes the scripts into dir and returns a pool of at most
// max workers, started as needed.
func newOptunaPool(dir string, max int) (*optunaPool, error) {
	if err := writeOptunaScripts(dir); err != nil {
		return nil, err
	}
	return &optunaPool{dir: dir, sem: make(chan struct{}, max)}, nil
}

func (p *optunaPool) get(ctx context.Context) (*optunaWorker, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return w, nil
	}
	p.mu.Unlock()
	cmd := exec.Command(Python, "run.py", "serve")
	cmd.Dir, cmd.Env, cmd.Stderr = p.dir, pythonEnv(), os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		<-p.sem
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		<-p.sem
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		<-p.sem
		return nil, err
	}
	w := &optunaWorker{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	p.mu.Lock()
	p.all = append(p.all, w)
	p.mu.Unlock()
	return w, nil
}

// put returns a healthy worker to the pool; a broken one is killed.
func (p *optunaPool) put(w *optunaWorker, broken bool) {
	p.mu.Lock()
	if broken {
		w.cmd.Process.Kill()
	} else {
		p.idle = append(p.idle, w)
	}
	p.mu.Unlock()
	<-p.sem
}

// close ends every worker.
func (p *optunaPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.all {
		w.in.Close()
		done := make(chan struct{})
		go func() { w.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			w.cmd.Process.Kill()
			<-done
		}
	}
	p.all, p.idle = nil, nil
}

// optunaJob and optunaResult are run.py serve's protocol.
type optunaJob struct {
	Problem     string  `json:"problem"`
	Method      string  `json:"method"`
	Seed        uint64  `json:"seed"`
	Budget      float64 `json:"budget"`
	Concurrency int     `json:"concurrency"`
}

type optunaResult struct {
	Error  string               `json:"error"`
	Events [][3]float64         `json:"events"`
	Config map[string][]float64 `json:"configs"`
	Trials int                  `json:"trials"`
	Spent  float64              `json:"spent"`
	CPU    float64              `json:"cpu"`
}

// runOptuna runs one Optuna job (pruner "tpe-hyperband" or "tpe-sh") in
// a worker and replays its steps through the Go budget accounting, which
// must agree with the driver's.
func runOptuna(ctx context.Context, pool *optunaPool, method, pruner string, p *functions.Problem, seed uint64, budget float64, concurrency int) (*Trace, error) {
	if pool == nil {
		return nil, errors.New("optuna is not available")
	}
	fail := func(err error) (*Trace, error) {
		return nil, fmt.Errorf("%s on %s, seed %d, concurrency %d: %w", method, p.Name, seed, concurrency, err)
	}
	w, err := pool.get(ctx)
	if err != nil {
		return fail(err)
	}
	start := time.Now()
	job, _ := json.Marshal(optunaJob{Problem: p.Name, Method: pruner, Seed: seed, Budget: budget, Concurrency: concurrency})
	type reply struct {
		line []byte
		err  error
	}
	ch := make(chan reply, 1)
	go func() {
		if _, err := w.in.Write(append(job, '\n')); err != nil {
			ch <- reply{err: err}
			return
		}
		line, err := w.out.ReadBytes('\n')
		ch <- reply{line, err}
	}()
	var r reply
	select {
	case r = <-ch:
	case <-ctx.Done():
		pool.put(w, true)
		return fail(ctx.Err())
	}
	if r.err != nil {
		pool.put(w, true)
		return fail(fmt.Errorf("optuna worker: %w", r.err))
	}
	pool.put(w, false)
	var res optunaResult
	if err := json.Unmarshal(r.line, &res); err != nil {
		return fail(fmt.Errorf("optuna worker's reply: %w", err))
	}
	if res.Error != "" {
		return fail(errors.New(res.Error))
	}
	rec := newRecorder(p, method, seed, budget)
	for i, ev := range res.Events {
		n, u, v := int(ev[0]), int(ev[1]), ev[2]
		x := res.Config[strconv.Itoa(n)]
		if err := p.Check(x); err != nil {
			return fail(fmt.Errorf("trial %d: %w", n, err))
		}
		if !rec.add(u, v, func() []float64 { return x }) {
			return fail(fmt.Errorf("step %d of %d (trial %d, step %d) exceeds the budget here but not in the driver", i+1, len(res.Events), n, u))
		}
	}
	if d := rec.tr.Spent - res.Spent; d > 1e-6 || d < -1e-6 {
		return fail(fmt.Errorf("budget spent %v here, %v in the driver", rec.tr.Spent, res.Spent))
	}
	tr := rec.tr
	tr.Trials = res.Trials
	tr.Concurrency = concurrency
	tr.CPU = time.Duration(res.CPU * float64(time.Second))
	tr.Wall = time.Since(start)
	return tr, nil
}

//go:build linux

package process_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/process"
	"github.com/hone-tune/hone/runner"
)

// alive reports whether process pid is running (not gone, not a zombie
// waiting for init).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || !strings.HasPrefix(string(b[i+1:]), " Z")
}

// waitDead waits until process pid is no longer running; an orphan killed
// with SIGKILL may take a moment to be reaped.
func waitDead(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s (process %d) still running", what, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func pids(t *testing.T, lines []string) []int {
	t.Helper()
	var out []int
	for _, l := range lines {
		n, err := strconv.Atoi(l)
		if err != nil {
			t.Fatalf("pid %q: %v", l, err)
		}
		out = append(out, n)
	}
	return out
}

// TestTrialDiesWithHone: when the hone process is killed with SIGKILL,
// its trial process dies too.
func TestTrialDiesWithHone(t *testing.T) {
	dir := t.TempDir()
	parent := startParent(t, "executor", dir, parentCmdEnv+`=echo $$ > "$HONE_TRIAL_DIR/pid"; exec sleep 300`)
	pid := pids(t, waitFile(t, filepath.Join(dir, "a", "pid")))[0]
	if !alive(pid) {
		t.Fatalf("trial process %d not running before the kill", pid)
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	waitDead(t, pid, "the trial of the killed hone")
}

// TestLeftoverReaped: a trial's child that outlives a killed hone (the
// parent-death signal reaches only the trial's own process) is killed by
// the next Prepare of the experiment directory, from the record of the
// trial process; the records go.
func TestLeftoverReaped(t *testing.T) {
	dir := t.TempDir()
	parent := startParent(t, "executor", dir,
		parentCmdEnv+`=sleep 300 & echo $! > "$HONE_TRIAL_DIR/pid"; echo 'HONE_REPORT {}'; wait`)
	child := pids(t, waitFile(t, filepath.Join(dir, "a", "pid")))[0]
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	records := filepath.Join(dir, process.StateDirName, "procs")
	// The trial may write its pid before hone has written the record
	// (aside, then renamed into place).
	deadline := time.Now().Add(time.Minute)
	for {
		entries, err := os.ReadDir(records)
		var named []string
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), ".") {
				named = append(named, e.Name())
			}
		}
		if err == nil && len(named) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("records of trial processes while the trial runs: %v, %v; want one", named, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	if !alive(child) {
		t.Fatalf("the trial's child %d died with hone: nothing left to reap", child)
	}
	ex := newExecutor(t, shell("true"))
	if err := ex.Prepare(dir); err != nil {
		t.Fatal(err)
	}
	if alive(child) {
		t.Fatalf("the trial's child %d still running after Prepare", child)
	}
	if entries, err := os.ReadDir(records); len(entries) != 0 || (err != nil && !errors.Is(err, os.ErrNotExist)) {
		t.Errorf("records after Prepare: %v, %v; want none", entries, err)
	}
	if err := ex.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, process.StateDirName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after Close: %v, want it removed", process.StateDirName, err)
	}
}

// hidden returns the files and directories in root whose name shows
// hone's: its temporary directories, and its state directory.
func hidden(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n := d.Name(); strings.HasPrefix(n, "hone-") || n == process.StateDirName {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestKilledRunResumes kills a run with SIGKILL while its trials run,
// with the experiment directory at a short path (sockets under it) and at
// one too long for a socket (sockets in TMPDIR), and resumes it: the
// trials' processes die with hone; their children, left running, are
// killed when resume starts, before any trial runs again; and after the
// resumed run ends, neither TMPDIR nor the experiment directory holds a
// temporary directory of hone's.
func TestKilledRunResumes(t *testing.T) {
	for _, c := range []struct {
		name   string
		subdir string
		inTmp  bool // the socket directory is in TMPDIR
	}{
		{"ShortPath", "exp", false},
		{"LongPath", filepath.Join(strings.Repeat("d", 60), strings.Repeat("e", 40), "exp"), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			tmp := filepath.Join(root, "tmp")
			if err := os.Mkdir(tmp, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("TMPDIR", tmp)
			dir := filepath.Join(root, c.subdir)
			parent := startParent(t, "runner", dir)
			var trialDirs []string
			deadline := time.Now().Add(time.Minute)
			for len(trialDirs) < 2 {
				if time.Now().After(deadline) {
					t.Fatalf("trials did not start within a minute: %v", trialDirs)
				}
				time.Sleep(20 * time.Millisecond)
				trialDirs, _ = filepath.Glob(filepath.Join(dir, "*", "kids"))
			}
			// At least one checkpoint of each.
			for _, k := range trialDirs {
				for {
					if m, _ := filepath.Glob(filepath.Join(filepath.Dir(k), "checkpoint_*")); len(m) > 0 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("no checkpoint in %s within a minute", filepath.Dir(k))
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			if err := parent.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = parent.Wait()

			var kids []int
			for _, k := range trialDirs {
				td := filepath.Dir(k)
				for _, pid := range pids(t, waitFile(t, filepath.Join(td, "pids"))) {
					waitDead(t, pid, "a trial of the killed hone")
				}
				kids = append(kids, pids(t, waitFile(t, k))...)
			}
			for _, pid := range kids {
				t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
				if !alive(pid) {
					t.Fatalf("the trial's child %d died with hone: nothing left to reap", pid)
				}
			}
			if left := hidden(t, tmp); c.inTmp != (len(left) == 1) {
				t.Fatalf("TMPDIR after the kill holds %v; want the socket directory there: %v", left, c.inTmp)
			}

			exp, opts, err := ckptExperiment(dir)
			if err != nil {
				t.Fatal(err)
			}
			// Resume's first start is after the leftovers are gone.
			opts.Executor = &checkStart{Executor: opts.Executor.(*process.Executor), t: t, kids: kids}
			out, err := runner.Resume(context.Background(), exp, opts, hone.ResumeFlags{Unfinished: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range out.Trials {
				if tr.Status != hone.StatusTerminated || tr.LastResult == nil || tr.LastResult.TrainingIteration != 30 {
					t.Errorf("trial %s: %s at %+v after resume, want TERMINATED at iteration 30", tr.ID, tr.Status, tr.LastResult)
				}
			}
			for _, k := range trialDirs {
				if n := len(waitFile(t, filepath.Join(filepath.Dir(k), "pids"))); n != 2 {
					t.Errorf("%s: %d starts, want 2 (a start after resume)", filepath.Dir(k), n)
				}
			}
			if left := hidden(t, tmp); len(left) > 0 {
				t.Errorf("TMPDIR after the resumed run: %v", left)
			}
			if left := hidden(t, dir); len(left) > 0 {
				t.Errorf("experiment directory after the resumed run: %v", left)
			}
		})
	}
}

// checkStart checks, at every start, that no leftover of the killed run
// is running.
type checkStart struct {
	*process.Executor
	t    *testing.T
	kids []int
}

func (c *checkStart) Start(spec hone.StartSpec) error {
	for _, pid := range c.kids {
		if alive(pid) {
			c.t.Errorf("trial %s starts while process %d of the killed run still runs", spec.TrialID, pid)
		}
	}
	return c.Executor.Start(spec)
}

// TestPrepareMakesNothing: Prepare of a directory without leftovers
// creates nothing there; the first trial's files appear under .hone and
// Close removes them.
func TestPrepareMakesNothing(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dir := filepath.Join(t.TempDir(), "exp")
	ex := newExecutor(t, shell(`echo 'HONE_REPORT {}'; exec sleep 300`))
	if err := ex.Prepare(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Prepare made %s: %v", dir, err)
	}
	start(t, ex, "a", filepath.Join(dir, "a"), hone.Resources{})
	result(t, ex, "a")
	if entries, err := os.ReadDir(filepath.Join(dir, process.StateDirName, "procs")); err != nil || len(entries) != 1 {
		t.Errorf("records while the trial runs: %v, %v; want one", entries, err)
	}
	if _, err := os.Stat(filepath.Join(dir, process.StateDirName, "tmp")); err != nil {
		t.Errorf("socket directory: %v", err)
	}
	direct(t, ex, "a", hone.DirectStop)
	if err := exitErr(t, ex, "a"); err != nil {
		t.Fatal(err)
	}
	if err := ex.Close(); err != nil {
		t.Fatal(err)
	}
	if left := hidden(t, dir); len(left) > 0 {
		t.Errorf("after Close: %v", left)
	}
	if left := hidden(t, os.Getenv("TMPDIR")); len(left) > 0 {
		t.Errorf("TMPDIR after Close: %v", left)
	}
}

// TestStartFromLockedThread: a trial started from a goroutine that locked
// its thread and then returned (which ends the thread) keeps running: the
// parent-death signal follows the thread that forked, and the executor
// forks from a thread of its own.
func TestStartFromLockedThread(t *testing.T) {
	ex := newExecutor(t, shell(`sleep 0.3; echo 'HONE_REPORT {"n":1}'; exec sleep 300`))
	dir := t.TempDir()
	errc := make(chan error, 1)
	startLocked := func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		errc <- ex.Start(hone.StartSpec{TrialID: "a", Dir: dir})
	}
	go func() {
		runtime.LockOSThread()
		if syscall.Gettid() != os.Getpid() {
			startLocked()
			return
		}
		// Go never ends the main thread: start from another one, which
		// this goroutine keeps the main thread from being.
		defer runtime.UnlockOSThread()
		done := make(chan struct{})
		go func() {
			defer close(done)
			startLocked()
		}()
		<-done
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	result(t, ex, "a")
	direct(t, ex, "a", hone.DirectStop)
	if err := exitErr(t, ex, "a"); err != nil {
		t.Fatal(err)
	}
}

// TestStartOnFullDisk: with the experiment directory on a full file
// system, trials still start: the sockets go to TMPDIR, the trial goes
// unrecorded (it still dies with hone), and Close leaves nothing behind.
func TestStartOnFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED: mounting a small tmpfs needs root; the full-disk start is not tested")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k,nr_inodes=3", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("SKIPPED: cannot mount a tmpfs (%v: %s); the full-disk start is not tested", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })
	exp := filepath.Join(mnt, "exp")
	if err := os.Mkdir(exp, 0o755); err != nil {
		t.Fatal(err)
	}
	fill, err := os.Create(filepath.Join(exp, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = fill.Write(make([]byte, 4096))
	}
	fill.Close()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling the file system: %v, want ENOSPC", err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ex := newExecutor(t, shell(`echo 'HONE_REPORT {"n":1}'`))
	if err := ex.Prepare(exp); err != nil {
		t.Fatal(err)
	}
	start(t, ex, "a", "", hone.Resources{})
	result(t, ex, "a")
	direct(t, ex, "a", hone.DirectContinue)
	if err := exitErr(t, ex, "a"); err != nil {
		t.Fatal(err)
	}
	if err := ex.Close(); err != nil {
		t.Fatal(err)
	}
	if left := hidden(t, tmp); len(left) > 0 {
		t.Errorf("TMPDIR after Close: %v", left)
	}
	if left := hidden(t, exp); len(left) > 0 {
		t.Errorf("experiment directory after Close: %v", left)
	}
}

//go:build linux

package process

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sleeper starts a process in a group of its own that a test ends.
func sleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// exited reports whether cmd's process has ended (it is reaped here).
func exited(t *testing.T, cmd *exec.Cmd) bool {
	t.Helper()
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(2 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return false
	}
}

func writeRecord(t *testing.T, state string, rec procRecord) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(state, procsDirName), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := recordProc(state, here(rec)); err != nil {
		t.Fatal(err)
	}
}

// deadOwner is the record of a hone process that has ended: a pid no
// process has (beyond the kernel's maximum).
func deadOwner(rec procRecord) procRecord {
	rec.Owner, rec.OwnerStart = 1<<22+1, 1
	return rec
}

// here fills in this machine and boot, unless rec names others.
func here(rec procRecord) procRecord {
	if rec.Host == "" {
		rec.Host, _ = os.Hostname()
	}
	if rec.Boot == "" {
		rec.Boot = bootID()
	}
	return rec
}

// TestReapChecksStartTime: a recorded process whose id now belongs to a
// process that started at another time is left alone; the one the record
// names is killed; a torn record is removed.
func TestReapChecksStartTime(t *testing.T) {
	state := filepath.Join(t.TempDir(), StateDirName)
	reused, trial := sleeper(t), sleeper(t)
	st, err := startTime(trial.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	rst, err := startTime(reused.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	writeRecord(t, state, deadOwner(procRecord{PID: reused.Process.Pid, Start: rst + 1, Token: "aa"}))
	writeRecord(t, state, deadOwner(procRecord{PID: trial.Process.Pid, Start: st, Token: "bb"}))
	if err := os.WriteFile(filepath.Join(state, procsDirName, "123"), []byte(`{"pid":12`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := reapLeftovers(filepath.Join(state, procsDirName)); err != nil {
		t.Fatal(err)
	}
	if !exited(t, trial) {
		t.Error("the recorded process is still running")
	}
	if err := syscall.Kill(reused.Process.Pid, 0); err != nil {
		t.Errorf("the process that reuses a recorded id was killed: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(state, procsDirName)); len(entries) != 0 {
		t.Errorf("records left: %v", entries)
	}
}

// TestReapRefusesLiveOwner: trials recorded by a hone process that is
// still running are not killed; Prepare says who runs them.
func TestReapRefusesLiveOwner(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, StateDirName)
	owner, trial := sleeper(t), sleeper(t)
	ost, _ := startTime(owner.Process.Pid)
	st, _ := startTime(trial.Process.Pid)
	writeRecord(t, state, procRecord{PID: trial.Process.Pid, Start: st, Owner: owner.Process.Pid, OwnerStart: ost})
	ex, err := New(Options{Command: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	err = ex.Prepare(dir)
	if err == nil || !strings.Contains(err.Error(), "which is still running") {
		t.Fatalf("Prepare = %v, want an error naming the running owner", err)
	}
	if err := syscall.Kill(trial.Process.Pid, 0); err != nil {
		t.Errorf("the live owner's trial was killed: %v", err)
	}
}

// TestReapOnlyHere: records written on another machine (a shared file
// system) or before a reboot name no process here, even when a process
// here has the same id and start time; they are removed, the process
// left alone.
func TestReapOnlyHere(t *testing.T) {
	host, _ := os.Hostname()
	for _, c := range []struct{ name, host, boot string }{
		{"OtherHost", host + "-elsewhere", bootID()},
		{"OtherBoot", host, "00000000-0000-0000-0000-000000000000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), StateDirName)
			p := sleeper(t)
			st, err := startTime(p.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			writeRecord(t, state, deadOwner(procRecord{PID: p.Process.Pid, Start: st, Host: c.host, Boot: c.boot}))
			if err := reapLeftovers(filepath.Join(state, procsDirName)); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(p.Process.Pid, 0); err != nil {
				t.Errorf("the process was killed: %v", err)
			}
			if entries, _ := os.ReadDir(filepath.Join(state, procsDirName)); len(entries) != 0 {
				t.Errorf("records left: %v", entries)
			}
		})
	}
}

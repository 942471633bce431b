package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hone-tune/hone/trial"
)

var dashboardURL = regexp.MustCompile(`dashboard (?:of .* )?at (http://[^/ ]+/)`)

// startCLI runs hone with args in the background and returns its stderr
// and a channel with its exit code.
func startCLI(ctx context.Context, c cli, args ...string) (*syncBuffer, <-chan int) {
	var out, errb syncBuffer
	a := newApp(&out, &errb)
	if c.exec != nil {
		a.newExecutor = c.exec
	}
	code := make(chan int, 1)
	go func() { code <- a.execute(ctx, args) }()
	return &errb, code
}

// waitURL waits for the dashboard's address in stderr.
func waitURL(t *testing.T, errb *syncBuffer, code <-chan int) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if m := dashboardURL.FindStringSubmatch(errb.String()); m != nil {
			return m[1]
		}
		select {
		case c := <-code:
			t.Fatalf("hone exited with %d before printing the dashboard's address:\n%s", c, errb.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("no dashboard address within a minute:\n%s", errb.String())
	return ""
}

func getSummary(t *testing.T, url string) (trials int, counts map[string]int) {
	t.Helper()
	resp, err := http.Get(url + "api/summary")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s struct {
		Trials int            `json:"trials"`
		Counts map[string]int `json:"counts"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s.Trials, s.Counts
}

// TestRunDashboard serves the dashboard alongside hone run: the address is
// printed at the start, and the dashboard shows the trials while they run.
func TestRunDashboard(t *testing.T) {
	seen := make(chan struct{})
	var once sync.Once
	c := cli{t: t, exec: goTrainer(func(s trial.Session, it int) {
		if it == 3 {
			<-seen // the test saw the run in the dashboard
		}
	})}
	path, _ := writeSpec(t, "dash", gridSpec)
	errb, code := startCLI(context.Background(), c, "run", path, "--dashboard", "--dashboard-addr", "127.0.0.1:0")
	url := waitURL(t, errb, code)
	deadline := time.Now().Add(time.Minute)
	for {
		n, counts := getSummary(t, url)
		if n == 3 && counts["RUNNING"] > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dashboard shows %d trials, %v; want 3, some running", n, counts)
		}
		time.Sleep(20 * time.Millisecond)
	}
	once.Do(func() { close(seen) })
	select {
	case c := <-code:
		if c != exitOK {
			t.Fatalf("hone run --dashboard: exit %d\n%s", c, errb.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("the run did not end")
	}
	if _, err := http.Get(url + "api/summary"); err == nil {
		t.Error("the dashboard still answers after the run ended")
	}
}

// TestDashboardCommand serves a finished experiment with hone dashboard
// until its context ends, and checks the command's refusals.
func TestDashboardCommand(t *testing.T) {
	c := cli{t: t, exec: goTrainer(nil)}
	path, dir := writeSpec(t, "served", gridSpec)
	if code, _, errOut := c.run("run", path); code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errb, code := startCLI(ctx, c, "dashboard", dir, "--addr", "127.0.0.1:0")
	url := waitURL(t, errb, code)
	if n, counts := getSummary(t, url); n != 3 || counts["TERMINATED"] != 3 {
		t.Errorf("the dashboard shows %d trials, %v; want 3 TERMINATED", n, counts)
	}
	cancel()
	select {
	case c := <-code:
		if c != exitOK {
			t.Errorf("hone dashboard stopped with exit %d\n%s", c, errb.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("hone dashboard did not stop with its context")
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"dashboard", t.TempDir(), "--addr", "127.0.0.1:0"}, "holds no experiment"},
		{[]string{"dashboard", dir, "--addr", "0.0.0.0:0"}, "--allow-remote"},
		{[]string{"dashboard", dir, "--addr", "127.0.0.1:0", "--mode", "up"}, "--mode"},
		{[]string{"dashboard", dir, "--addr", "nonsense"}, "nonsense"},
		{[]string{"run", path, "--dashboard", "--dashboard-addr", "0.0.0.0:0"}, "--allow-remote"},
	} {
		code, _, errOut := c.run(tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("hone %s: exit %d, %q; want 2 and %q", strings.Join(tc.args, " "), code, errOut, tc.want)
		}
	}
	// A refused address stops run before the experiment exists.
	p2, d2 := writeSpec(t, "refused", gridSpec)
	c.run("run", p2, "--dashboard", "--dashboard-addr", "0.0.0.0:0")
	if _, err := os.Stat(d2); err == nil {
		t.Errorf("run with a refused dashboard address created %s", d2)
	}

	// --allow-remote serves elsewhere, with a warning.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	errb, code = startCLI(ctx, c, "dashboard", dir, "--addr", "0.0.0.0:0", "--allow-remote")
	waitURL(t, errb, code)
	if !strings.Contains(errb.String(), "warning") || !strings.Contains(errb.String(), "not a loopback address") {
		t.Errorf("no warning for a non-loopback address:\n%s", errb.String())
	}
	cancel()
	<-code
}

// TestS3Dashboard serves an experiment that lives in an object store, from
// another machine's point of view (an empty cache), while it runs: the
// dashboard shows its first result, then one reported later, and the
// trial's files.
func TestS3Dashboard(t *testing.T) {
	storage := s3Storage(t)
	t.Setenv("HONE_CACHE_DIR", t.TempDir())
	gate := make(chan struct{})
	c := cli{t: t, exec: goTrainer(func(s trial.Session, it int) {
		if it == 2 {
			<-gate
		}
	})}
	path, _ := writeSpec(t, "s3dash", `metric: score
mode: max
search_space:
  x: {grid: [5]}
stop: {training_iteration: 3}
command: [unused]
`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runErr, runCode := startCLI(ctx, c, "run", "--storage", storage, path, "--dashboard", "--dashboard-addr", "127.0.0.1:0")
	u := expURL(storage, "s3dash")
	// The run's own dashboard reads its working copy and names the URL.
	runURL := waitURL(t, runErr, runCode)
	for deadline := time.Now().Add(time.Minute); ; {
		var s struct {
			Shown  string `json:"shown"`
			Trials int    `json:"trials"`
		}
		resp, err := http.Get(runURL + "api/summary")
		if err != nil {
			t.Fatal(err)
		}
		_ = json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		if s.Trials == 1 && strings.HasPrefix(s.Shown, "s3://") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run's dashboard shows %+v", s)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The dashboard, started once the bucket has the journal.
	var errb *syncBuffer
	var code <-chan int
	deadline := time.Now().Add(time.Minute)
	for {
		errb, code = startCLI(ctx, c, "dashboard", u, "--addr", "127.0.0.1:0")
		select {
		case c := <-code:
			if c != exitUsage || time.Now().After(deadline) {
				t.Fatalf("hone dashboard %s: exit %d\n%s\nrun:\n%s", u, c, errb.String(), runErr.String())
			}
			time.Sleep(100 * time.Millisecond) // no journal in the bucket yet
			continue
		case <-time.After(200 * time.Millisecond):
		}
		break
	}
	url := waitURL(t, errb, code)
	value := func() (float64, string, bool) {
		resp, err := http.Get(url + "api/trials")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var tb struct {
			Rows []struct {
				ID     string   `json:"id"`
				Status string   `json:"status"`
				Value  *float64 `json:"value"`
			} `json:"rows"`
		}
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&tb) != nil || len(tb.Rows) != 1 || tb.Rows[0].Value == nil {
			return 0, "", false
		}
		return *tb.Rows[0].Value, tb.Rows[0].Status, true
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("after a minute: %s\ndashboard:\n%s", what, errb.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("the first result, the trial running", func() bool {
		v, st, ok := value()
		return ok && v == 5 && st == "RUNNING"
	})
	close(gate)
	waitFor("the last result, the trial finished", func() bool {
		v, st, ok := value()
		return ok && v == 15 && st == "TERMINATED"
	})
	if c := <-runCode; c != exitOK {
		t.Fatalf("run: exit %d\n%s", c, runErr.String())
	}
	var sum struct {
		Shown string `json:"shown"`
		Info  struct {
			Running bool `json:"running"`
		} `json:"info"`
	}
	resp, err := http.Get(url + "api/summary")
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(resp.Body).Decode(&sum)
	resp.Body.Close()
	if !strings.HasPrefix(sum.Shown, "s3://") {
		t.Errorf("the dashboard names the experiment %q", sum.Shown)
	}
	if secret := os.Getenv("AWS_SECRET_ACCESS_KEY"); secret != "" && strings.Contains(sum.Shown+errb.String(), secret) {
		t.Error("the dashboard shows the secret key")
	}
	cancel()
	<-code
}

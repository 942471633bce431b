// Command chaos runs real hone experiments (ASHA, BOHB, PBT, fail_fast,
// one on a small filesystem that fills up, and PBT or ASHA on S3) with
// Python process trials,
// kills and resumes hone at random moments, cuts journals and changes
// specs between resumes, and checks after each experiment what
// docs/RELIABILITY.md says hone guarantees. It prints every invariant that
// broke and a summary, and exits 1 if any did (2 if it could not run).
//
// From the repository root:
//
//	go run ./scripts/chaos              # short mode: one round, 10 to 13 kills
//	go run ./scripts/chaos -kills 100   # long mode
//	go run ./scripts/chaos -seed 42     # repeat a run's choices
//	go run ./scripts/chaos -kinds pbt-s3,asha-s3 -kills 6
//
// The seed fixes every choice the harness makes (when to kill, which
// signal, where to cut); the machine's timing still varies between runs.
// The disk-full experiment needs root (it mounts a small filesystem); it
// is skipped, loudly, otherwise. The experiments on object storage need
// an S3 server: HONE_TEST_S3_URL (s3://BUCKET?endpoint=...&region=...&
// use_path_style=true) and its credentials in AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY, as scripts/s3server.sh sets them; without
// HONE_TEST_S3_URL they are skipped, loudly.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hone-tune/hone/internal/chaos"
)

func main() {
	os.Exit(run())
}

func run() int {
	kills := flag.Int("kills", 10, "least number of kills over all experiments (rounds of each kind run until it is reached)")
	seed := flag.Uint64("seed", 0, "seed of the harness's choices (default: from the clock; printed)")
	keep := flag.Bool("keep", false, "keep the work directory (experiments, logs) even when every check passed")
	quiet := flag.Bool("q", false, "print only failures and the summary")
	only := flag.String("kinds", "", "run only these kinds of experiment, comma-separated (asha, bohb, pbt, failfast, diskfull, pbt-s3, asha-s3)")
	prebuilt := flag.String("hone", "", "run this hone binary instead of building ./cmd/hone (it must be built from this tree: the checks replay its journals with this tree's controller)")
	flag.Parse()
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano()) % 1_000_000_000
	}
	fmt.Printf("chaos: seed %d (repeat with -seed %d), at least %d kills\n", *seed, *seed, *kills)

	root, err := repoRoot()
	if err != nil {
		return harnessError(err)
	}
	work, err := os.MkdirTemp("", "hc")
	if err != nil {
		return harnessError(err)
	}
	bin := filepath.Join(work, "bin", "hone")
	if *prebuilt != "" {
		if bin, err = filepath.Abs(*prebuilt); err != nil {
			return harnessError(err)
		}
	} else {
		build := exec.Command("go", "build", "-o", bin, "./cmd/hone")
		build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return harnessError(fmt.Errorf("build hone: %w", err))
		}
	}
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		if python, err = exec.LookPath("python3"); err != nil {
			return harnessError(errors.New("python3 not found"))
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := chaos.Config{
		Hone: bin, Python: python, Client: filepath.Join(root, "clients", "python", "hone.py"),
		Work: work, Kills: *kills, Seed: *seed, Log: os.Stdout, S3: os.Getenv("HONE_TEST_S3_URL"),
	}
	if *only != "" {
		cfg.Kinds = strings.Split(*only, ",")
	}
	if cfg.S3 == "" {
		fmt.Println("chaos: ########################################################################")
		fmt.Println("chaos: ## HONE_TEST_S3_URL is not set: the experiments on S3 are SKIPPED.")
		fmt.Println("chaos: ## scripts/test.sh starts a real S3 server and sets it; by hand:")
		fmt.Println("chaos: ##   . scripts/s3server.sh && hone_s3_start && go run ./scripts/chaos")
		fmt.Println("chaos: ########################################################################")
	}
	if *quiet {
		cfg.Log = nil
	}
	sum, err := chaos.Run(ctx, cfg)
	if sum != nil {
		printSummary(sum)
	}
	if err != nil {
		fmt.Printf("chaos: work directory kept: %s\n", work)
		return harnessError(err)
	}
	if len(sum.Failures) > 0 || *keep {
		fmt.Printf("chaos: work directory kept (experiments, hone's output in <experiment>.log): %s\n", work)
	} else {
		_ = os.RemoveAll(work)
	}
	if len(sum.Failures) > 0 {
		fmt.Printf("chaos: FAILED: %d invariant checks failed (seed %d)\n", len(sum.Failures), sum.Seed)
		return 1
	}
	fmt.Printf("chaos: every invariant held (seed %d)\n", sum.Seed)
	return 0
}

func harnessError(err error) int {
	fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
	return 2
}

// repoRoot finds the directory of hone's go.mod from the current one up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/hone-tune/hone\n") {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("run from inside the hone repository (no go.mod of github.com/hone-tune/hone above the current directory)")
		}
		dir = up
	}
}

func printSummary(s *chaos.Summary) {
	fmt.Printf("\n== chaos summary (seed %d, %s)\n", s.Seed, s.Elapsed.Round(time.Second))
	fmt.Printf("%-9s %5s %-42s %7s  %-60s %6s %5s\n", "kind", "exps", "kills", "resumes", "faults", "checks", "fail")
	var kinds []string
	for k := range s.Kinds {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var tk, tr, tc, tf int
	for _, k := range kinds {
		st := s.Kinds[k]
		if st.Experiments == 0 && len(st.Skipped) == 0 {
			continue // a kind that takes turns (pbt-s3, asha-s3) and had none
		}
		n := 0
		for _, c := range st.Kills {
			n += c
		}
		tk += n
		tr += st.Resumes
		tc += st.Checks
		tf += st.Failures
		fmt.Printf("%-9s %5d %-42s %7d  %-60s %6d %5d\n", k, st.Experiments, fmt.Sprintf("%d %s", n, counts(st.Kills)), st.Resumes, counts(st.Faults), st.Checks, st.Failures)
		if st.Unshipped > 0 {
			fmt.Printf("          at most %d journal lines not yet in the bucket at a SIGKILL\n", st.Unshipped)
		}
		for _, why := range st.Skipped {
			fmt.Printf("          %s\n", why)
		}
	}
	fmt.Printf("%-9s %5s %-42d %7d  %-60s %6d %5d\n", "total", "", tk, tr, "", tc, tf)
	fmt.Printf("\ninvariants checked: %s\n", counts(s.Checked))
	if len(s.Failures) > 0 {
		byInv := map[string]int{}
		for _, f := range s.Failures {
			byInv[f.Invariant]++
		}
		fmt.Printf("\nfailed invariants: %s\n", counts(byInv))
		for _, f := range s.Failures {
			fmt.Printf("  %s\n", f)
		}
	}
}

// counts renders a map of counts as "a 2, b 1" in key order.
func counts(m map[string]int) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "-"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hone-tune/hone/bench/searchbench"
)

// TestSmoke runs the command in smoke mode (2 seeds, a tiny budget, one
// problem per family, concurrency 1 and 4, Optuna if it is or can be
// installed) into a temporary directory, and checks the report: its
// summary, a row for every method of every problem with figures, the
// problems' table, the plots, and that QUALITY.md is what was printed.
func TestSmoke(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-smoke", "-q", "-out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	report := stdout.String()
	optuna := strings.Contains(report, "Optuna 3.") && strings.Contains(report, " ran.")
	if !optuna {
		msg := "SMOKE RUN WITHOUT OPTUNA: " + lineWith(report, "Optuna")
		t.Log(msg)
		fmt.Fprintln(os.Stderr, "searchbench TestSmoke:", msg)
	}
	for _, want := range []string{"# Search quality", "cd bench && go run ./cmd/searchbench -smoke", "## Summary",
		"hone's best method is at or below", "Parallel efficiency", "Searcher CPU per run", "## Problems",
		searchbench.NotesBegin, searchbench.NotesEnd, "## Details per problem", "## Larger runs: ",
		"Parallel efficiency at ", "first full-fidelity result at 4"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, name := range searchbench.SmokeProblems {
		i := strings.Index(report, "### "+name+"\n")
		if i < 0 {
			t.Errorf("no section for %s", name)
			continue
		}
		section := report[i:]
		if j := strings.Index(section[4:], "### "); j >= 0 {
			section = section[:j+4]
		}
		for _, m := range searchbench.Methods() {
			if strings.HasPrefix(m, "optuna") && !optuna {
				continue
			}
			row := lineWith(section, "| "+m+" |")
			if row == "" {
				t.Errorf("%s: no row for %s", name, m)
				continue
			}
			if strings.Count(row, "[") != 2 {
				t.Errorf("%s: row %q lacks the figures of two concurrencies", name, row)
			}
		}
		if st, err := os.Stat(filepath.Join(out, "quality", name+".png")); err != nil || st.Size() == 0 {
			t.Errorf("no plot for %s: %v", name, err)
		}
	}
	if st, err := os.Stat(filepath.Join(out, "quality", "parallel.png")); err != nil || st.Size() == 0 {
		t.Errorf("no parallel-efficiency plot: %v", err)
	}
	saved, err := os.ReadFile(filepath.Join(out, "QUALITY.md"))
	if err != nil || !strings.HasPrefix(report, string(saved)) {
		t.Errorf("QUALITY.md differs from what was printed (err %v)", err)
	}
}

// TestNotesKept: the hand-written notes of the report survive a rerun.
func TestNotesKept(t *testing.T) {
	out := t.TempDir()
	note := "A note written by hand."
	old := "# Search quality\n\n" + searchbench.NotesBegin + "\n" + note + "\n" + searchbench.NotesEnd + "\n"
	if err := os.WriteFile(filepath.Join(out, "QUALITY.md"), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-q", "-out", out, "-functions", "currin", "-methods", "random,tpe", "-seeds", "1", "-budget", "2",
		"-concurrency", "1", "-plots=false"}
	if err := run(context.Background(), args, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(out, "QUALITY.md"))
	if err != nil || !strings.Contains(string(data), searchbench.NotesBegin+"\n"+note+"\n"+searchbench.NotesEnd) {
		t.Errorf("notes not kept (err %v):\n%s", err, data)
	}
}

// TestFrom: a report written again from a run's saved results is the
// report of the run.
func TestFrom(t *testing.T) {
	out := t.TempDir()
	args := []string{"-q", "-out", out, "-functions", "currin-mislead", "-methods", "random,asha,tpe,bohb", "-seeds", "2",
		"-budget", "4", "-concurrency", "1,4"}
	if err := run(context.Background(), args, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(filepath.Join(out, "QUALITY.md"))
	if err != nil {
		t.Fatal(err)
	}
	again := t.TempDir()
	if err := run(context.Background(), []string{"-q", "-out", again, "-from", filepath.Join(out, "runs.json")}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	second, err := os.ReadFile(filepath.Join(again, "QUALITY.md"))
	if err != nil || !bytes.Equal(first, second) {
		t.Errorf("the report from the saved run differs (err %v):\n%s\n----\n%s", err, first, second)
	}
	if st, err := os.Stat(filepath.Join(again, "quality", "currin-mislead.png")); err != nil || st.Size() == 0 {
		t.Errorf("no plot from the saved run: %v", err)
	}
}

// TestFromMerges: runs of seeds 1-2 and 3-4 merged with -from give the
// runs of one run of seeds 1-4, and the report says so.
func TestFromMerges(t *testing.T) {
	base := []string{"-q", "-functions", "currin-mislead", "-methods", "random,asha,tpe-asha", "-budget", "4",
		"-concurrency", "1,4", "-scale=false", "-plots=false"}
	dirs := map[string]string{}
	for name, extra := range map[string][]string{"a": {"-seeds", "2"}, "b": {"-seeds", "2", "-first-seed", "3"}, "all": {"-seeds", "4"}} {
		dirs[name] = t.TempDir()
		if err := run(context.Background(), append(append([]string{"-out", dirs[name]}, base...), extra...), io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	merged, _, err := loadRuns([]string{filepath.Join(dirs["a"], "runs.json"), filepath.Join(dirs["b"], "runs.json")})
	if err != nil {
		t.Fatal(err)
	}
	whole, _, err := loadRuns([]string{filepath.Join(dirs["all"], "runs.json")})
	if err != nil {
		t.Fatal(err)
	}
	if len(merged.Cells) != len(whole.Cells) {
		t.Fatalf("%d cells merged, %d in the run of 4 seeds", len(merged.Cells), len(whole.Cells))
	}
	for i, c := range merged.Cells {
		w := whole.Cells[i]
		if c.Seeds != 4 || !slices.Equal(c.Methods, w.Methods) {
			t.Fatalf("cell %d: %d seeds, methods %v; want 4, %v", i, c.Seeds, c.Methods, w.Methods)
		}
		for _, m := range c.Methods {
			for j, tr := range c.Traces[m] {
				if wt := w.Traces[m][j]; tr.Seed != wt.Seed || !slices.Equal(tr.Points, wt.Points) || tr.Trials != wt.Trials {
					t.Errorf("%s at %d, %s, seed %d: merged run differs from the run of 4 seeds", c.Problem.Name, c.Concurrency, m, wt.Seed)
				}
			}
		}
	}
	out := t.TempDir()
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"-q", "-out", out, "-plots=false", "-from",
		filepath.Join(dirs["a"], "runs.json") + "," + filepath.Join(dirs["b"], "runs.json")}, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"× 4 seeds", "-first-seed 3", "merged seed by seed", "-from part1.json,part2.json"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the merged report lacks %q", want)
		}
	}
	// Runs of other code do not merge.
	bad := filepath.Join(t.TempDir(), "bad.json")
	data, err := os.ReadFile(filepath.Join(dirs["all"], "runs.json"))
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(data), `"Trials":`, `"Trials":1000`, 1)
	if err := os.WriteFile(bad, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), []string{"-q", "-out", t.TempDir(), "-from", filepath.Join(dirs["a"], "runs.json") + "," + bad}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "differs") {
		t.Errorf("merging a changed run: %v, want an error that it differs", err)
	}
	// Unless the later file is taken for the changed method, whose runs
	// then replace the earlier ones.
	res, info, err := loadRuns([]string{filepath.Join(dirs["all"], "runs.json"), bad + ":asha"})
	if err != nil {
		t.Fatalf("replacing asha: %v", err)
	}
	if got := res.Cells[0].Traces["asha"][0].Trials; got < 1000 {
		t.Errorf("asha's first run has %d trials, want the replacing file's (1000 and more)", got)
	}
	if !strings.Contains(info.Command, "-from part1.json,part2.json:asha") {
		t.Errorf("command %q does not say which methods were taken from the second file", info.Command)
	}
	if _, _, err := loadRuns([]string{bad + ":nope"}); err == nil || !strings.Contains(err.Error(), `unknown method "nope"`) {
		t.Errorf("an unknown method to take: %v", err)
	}
}

// lineWith returns the first line of s containing sub, or "".
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-functions", "nope"}, {"-methods", "nope", "-smoke"}, {"extra"}, {"-budget", "-1"},
		{"-smoke", "-long"}, {"-concurrency", "0"}} {
		if err := run(context.Background(), append(args, "-out", t.TempDir(), "-q"), io.Discard, io.Discard); err == nil {
			t.Errorf("run(%q) succeeded", args)
		}
	}
}

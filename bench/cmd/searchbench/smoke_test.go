package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

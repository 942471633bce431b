package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-tune/hone/bench/searchbench"
)

// TestSmoke runs the command on two problems, two seeds and a budget of
// 12 with every available method, and checks the table has a row per
// problem and method, and that -quality writes its section of a report
// between the markers and nothing else.
func TestSmoke(t *testing.T) {
	var stdout, stderr bytes.Buffer
	quality := filepath.Join(t.TempDir(), "QUALITY.md")
	before, after := "# Search quality\n\n## Several objectives\n\n", "\n\n## Cell by cell\n"
	if err := os.WriteFile(quality, []byte(before+searchbench.SeveralBegin+"\n(not run yet)\n"+searchbench.SeveralEnd+after), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"-seeds", "2", "-budget", "12", "-problems", "zdt3,dtlz2-mf", "-quality", quality}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	methods := []string{"random", "nsga2", "tpe", "mo-asha", "mo-hyperband"}
	if strings.Contains(stderr.String(), "leaving the Optuna methods out") {
		t.Log("SMOKE RUN WITHOUT OPTUNA: " + strings.TrimSpace(stderr.String()))
	} else {
		methods = append(methods, "optuna-nsga2", "optuna-motpe")
	}
	for _, p := range []string{"zdt3", "dtlz2-mf"} {
		for _, m := range methods {
			found := false
			for _, line := range strings.Split(stdout.String(), "\n") {
				f := strings.Fields(line)
				found = found || len(f) == 8 && f[0] == p && f[1] == m
			}
			if !found {
				t.Errorf("no row for %s on %s in\n%s", m, p, stdout.String())
			}
		}
	}
	data, err := os.ReadFile(quality)
	if err != nil {
		t.Fatal(err)
	}
	section := searchbench.Kept(string(data), searchbench.SeveralBegin, searchbench.SeveralEnd)
	if !strings.HasPrefix(string(data), before+searchbench.SeveralBegin) || !strings.HasSuffix(string(data), searchbench.SeveralEnd+after) {
		t.Errorf("-quality changed the report outside its section:\n%s", data)
	}
	for _, want := range []string{"Written by `cd bench && go run ./cmd/mobench -seeds 2", "- **Goal**: hone's best multi-objective method", "| zdt3 | `tpe` |", "| dtlz2-mf | `mo-asha` |"} {
		if !strings.Contains(section, want) {
			t.Errorf("the section lacks %q:\n%s", want, section)
		}
	}
	if err := run(context.Background(), []string{"-methods", "nope"}, &stdout, &stderr); err == nil {
		t.Error("an unknown method is accepted")
	}
}

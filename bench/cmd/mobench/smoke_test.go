package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestSmoke runs the command on two problems, two seeds and a budget of
// 12 with every available method, and checks the table has a row per
// problem and method.
func TestSmoke(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-seeds", "2", "-budget", "12", "-problems", "zdt3,dtlz2-mf"}, &stdout, &stderr); err != nil {
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
	if err := run(context.Background(), []string{"-methods", "nope"}, &stdout, &stderr); err == nil {
		t.Error("an unknown method is accepted")
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/examples/internal/spirals"
	"github.com/hone-tune/hone/results"
)

// cancelOnComplete cancels a run once a trial has finished.
type cancelOnComplete struct {
	hone.NopCallback
	cancel context.CancelFunc
}

func (c cancelOnComplete) OnTrialComplete(*hone.Trial) { c.cancel() }

// TestExample runs a small population, stops it as soon as the first trial
// finishes and resumes it; then it checks what PBT did against the
// experiment directory: exploits happened, every schedule step is an
// explored copy of the one before, a clone trains on from its donor's
// weights with its new lr, and the best trial beats chance.
func TestExample(t *testing.T) {
	// Seed 9 samples two good and two poor configurations, so the poor
	// ones clone the good ones. Every checkpoint is kept (keep 0) for the
	// weight-continuation check, which loads the donors' checkpoints.
	o := options{dir: filepath.Join(t.TempDir(), "pbt"), population: 4, epochs: 12, interval: 2,
		trainSize: 3000, keep: 0, seed: 9, out: io.Discard, log: io.Discard}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := run(ctx, o, cancelOnComplete{cancel: cancel}); err != nil {
		t.Fatal(err)
	}
	before := openResults(t, o.dir)
	finished := map[string]int{}
	for _, tr := range before.Trials {
		if tr.Status.Finished() {
			finished[tr.ID] = len(rows(t, tr))
		}
	}
	if len(finished) == 0 || len(finished) == o.population {
		t.Fatalf("%d of %d trials finished before the stop, want some but not all", len(finished), o.population)
	}

	var out bytes.Buffer
	o.out = &out
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"resuming the experiment", "best trial", "schedule of trial"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	t.Logf("report:\n%s", tail(out.String(), "best trial"))

	res := openResults(t, o.dir)
	if len(res.Trials) != o.population {
		t.Fatalf("%d trials, want %d", len(res.Trials), o.population)
	}
	for _, tr := range res.Trials {
		if tr.Status != hone.StatusTerminated {
			t.Errorf("trial %s ended %s", tr.ID, tr.Status)
		}
		if n, ok := finished[tr.ID]; ok && len(rows(t, tr)) != n {
			t.Errorf("finished trial %s was redone: %d results before the stop, %d after", tr.ID, n, len(rows(t, tr)))
		}
	}

	exploited := 0
	for _, tr := range res.Trials {
		lin, err := tr.Lineage()
		if err != nil {
			t.Fatal(err)
		}
		if len(lin) == 0 {
			continue
		}
		exploited++
		checkSchedule(t, tr, lin)
		checkContinuation(t, res, tr, lin[len(lin)-1], o.trainSize)
	}
	if exploited == 0 {
		t.Fatal("no trial cloned another: PBT never exploited")
	}

	_, acc, err := res.Best(hone.Objective{Metric: "val_accuracy", Mode: hone.Max}, results.ScopeAll)
	if err != nil {
		t.Fatal(err)
	}
	if acc < 0.7 {
		t.Errorf("best val_accuracy %.4f: no better than chance (0.5) on two balanced classes", acc)
	}
}

// checkSchedule checks that each step of tr's schedule is the configuration
// before it, explored: lr multiplied by a perturbation factor or redrawn
// within its range, momentum a neighbour in its list or redrawn from it.
func checkSchedule(t *testing.T, tr *results.Trial, lin []results.Exploit) {
	t.Helper()
	steps, err := tr.Schedule()
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != len(lin)+1 {
		t.Fatalf("trial %s: %d schedule steps for %d exploits", tr.ID, len(steps), len(lin))
	}
	for i := 1; i < len(steps); i++ {
		prev, cur := steps[i-1].Config, steps[i].Config
		if steps[i].From != lin[i-1].DonorIteration || steps[i].From < steps[i-1].From {
			t.Errorf("trial %s: step %d starts at epoch %d after one at %d (exploit as of donor epoch %d)",
				tr.ID, i, steps[i].From, steps[i-1].From, lin[i-1].DonorIteration)
		}
		if i > 1 && !sameConfig(lin[i-1].DonorConfig, lin[i-2].Config) {
			t.Errorf("trial %s: exploit %d cloned config %v, but the lineage's config then was %v",
				tr.ID, i, lin[i-1].DonorConfig, lin[i-2].Config)
		}
		a, b := number(t, prev, "lr"), number(t, cur, "lr")
		ratio := b / a
		factor := math.Abs(ratio-1.2) < 1e-9 || math.Abs(ratio-0.8) < 1e-9
		if b == a || (!factor && (b < lrMin || b > lrMax)) {
			t.Errorf("trial %s: lr %.6g -> %.6g at epoch %d: neither x1.2, x0.8 nor a draw from [%g, %g]",
				tr.ID, a, b, steps[i].From, lrMin, lrMax)
		}
		if momentumIndex(t, cur) < 0 {
			t.Errorf("trial %s: momentum %v at epoch %d is not one of %v", tr.ID, cur["momentum"], steps[i].From, momenta())
		}
		for _, k := range []string{"hidden", "batch_size"} {
			if number(t, prev, k) != number(t, cur, k) {
				t.Errorf("trial %s: %s changed at epoch %d; it is not mutated", tr.ID, k, steps[i].From)
			}
		}
	}
}

// checkContinuation checks that after its last exploit e, tr trained with
// e's lr and momentum, and that its first epoch then continued from the
// donor's weights with the new configuration: loading a checkpoint of the
// donor at the epoch tr restarted from into a trainable set up with e's
// configuration and training one epoch gives exactly the loss and accuracy
// tr reported, while one epoch from scratch does not.
func checkContinuation(t *testing.T, res *results.Experiment, tr *results.Trial, e results.Exploit, size int) {
	t.Helper()
	donor := byTag(res, e.Donor)
	if donor == nil {
		t.Errorf("trial %s: donor %q is not in the experiment", tr.ID, e.Donor)
		return
	}
	// The rows after the exploit are in the tail trained with e's
	// configuration (PBT changes a configuration only by an exploit); the
	// first of them is a restart (iterations_since_restore 1), as are the
	// first rows after a pause. Pausing restarts from the trial's own
	// checkpoint; the exploit from the donor's. An earlier exploit to the
	// same configuration makes the tail longer, hence the search.
	rs := rows(t, tr)
	lr, mom := number(t, e.Config, "lr"), number(t, e.Config, "momentum")
	k := len(rs)
	for k > 0 && rowNumber(t, rs[k-1], "lr") == lr && rowNumber(t, rs[k-1], "momentum") == mom {
		k--
	}
	if k == len(rs) {
		t.Errorf("trial %s: no result trained with lr %.6g and momentum %v after its exploit at epoch %d", tr.ID, lr, mom, e.TargetIteration)
		return
	}
	var tried []string
	for i := len(rs) - 1; i >= k; i-- {
		if rowNumber(t, rs[i], hone.FieldIterationsSinceRestore) != 1 {
			continue
		}
		// The policy log gives the epoch of the donor checkpoint the
		// clone restored.
		from := int(rowNumber(t, rs[i], hone.FieldTrainingIteration)) - 1
		if from != e.DonorIteration {
			continue
		}
		want := [2]float64{rowNumber(t, rs[i], "loss"), rowNumber(t, rs[i], "val_accuracy")}
		for _, cp := range donor.Checkpoints {
			if epochs(t, cp) != from {
				continue
			}
			if got := oneEpoch(t, size, e.Config, cp); got != want {
				tried = append(tried, fmt.Sprintf("%s: %v at epoch %d, reported %v", filepath.Base(cp), got, from+1, want))
				continue
			}
			if got := oneEpoch(t, size, e.Config, ""); got == want {
				t.Errorf("trial %s: its first epoch after the exploit equals one from scratch: %v", tr.ID, got)
			}
			return
		}
	}
	t.Errorf("trial %s: no checkpoint of donor %s, trained one epoch with lr %.6g momentum %v, gives a result of the trial after its exploit at epoch %d (%s)",
		tr.ID, donor.ID, lr, mom, e.TargetIteration, strings.Join(tried, "; "))
}

// oneEpoch trains one epoch with cfg, from the checkpoint in dir (or from
// scratch if dir is ""), and returns the loss and the accuracy.
func oneEpoch(t *testing.T, size int, cfg hone.Config, dir string) [2]float64 {
	t.Helper()
	tr := &spirals.Trainable{Size: size}
	if err := tr.Setup(cfg); err != nil {
		t.Fatal(err)
	}
	if dir != "" {
		if err := tr.Load(dir); err != nil {
			t.Fatal(err)
		}
	}
	m, err := tr.Step(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return [2]float64{m["loss"].(float64), m["val_accuracy"].(float64)}
}

// epochs returns how many epochs the network in a checkpoint was trained.
func epochs(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "model.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Epochs int `json:"epochs"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m.Epochs
}

func openResults(t *testing.T, dir string) *results.Experiment {
	t.Helper()
	res, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func rows(t *testing.T, tr *results.Trial) []results.Row {
	t.Helper()
	rs, err := tr.Results()
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func number(t *testing.T, cfg hone.Config, key string) float64 {
	t.Helper()
	v, ok := hone.Number(cfg[key])
	if !ok {
		t.Fatalf("config %v has no number %q", cfg, key)
	}
	return v
}

func rowNumber(t *testing.T, r results.Row, key string) float64 {
	t.Helper()
	v, ok := r.Value(key)
	if !ok {
		t.Fatalf("result %v has no number %q", r, key)
	}
	return v
}

func momentumIndex(t *testing.T, cfg hone.Config) int {
	m := number(t, cfg, "momentum")
	for i, v := range momenta() {
		if x, _ := hone.Number(v); x == m {
			return i
		}
	}
	return -1
}

func sameConfig(a, b hone.Config) bool {
	for _, k := range []string{"lr", "momentum", "hidden", "batch_size"} {
		x, _ := hone.Number(a[k])
		y, _ := hone.Number(b[k])
		if x != y {
			return false
		}
	}
	return true
}

// byTag returns the trial whose tag starts with tag's index.
func byTag(res *results.Experiment, tag string) *results.Trial {
	i, err := strconv.Atoi(trialName(tag))
	if err != nil {
		return nil
	}
	for _, tr := range res.Trials {
		if tr.Index == i {
			return tr
		}
	}
	return nil
}

// tail returns s from the first occurrence of from.
func tail(s, from string) string {
	if i := strings.Index(s, from); i >= 0 {
		return s[i:]
	}
	return s
}

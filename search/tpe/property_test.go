package tpe

import (
	"fmt"
	"math"
	"testing"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/search/fidelity"
	"github.com/hone-tune/hone/space"
	"pgregory.net/rapid"
)

// Any interleaving of suggestions, results at any times, completions and
// failures, with rungs, the liar and either estimator: every suggestion
// is a configuration of the space, the searcher's state round-trips, and a
// searcher restored from it makes the same suggestions as the original
// from then on.
func TestPropertyRungs(t *testing.T) {
	sp := space.Space{"x": space.Uniform(0, 1), "n": space.RandInt(1, 6), "c": space.Choice("a", "b", "c")}
	rapid.Check(t, func(rt *rapid.T) {
		o := Options{Metric: "loss", NumSamples: -1, Seed: rapid.Uint64().Draw(rt, "seed"), NStartupTrials: rapid.IntRange(1, 6).Draw(rt, "startup"),
			Multivariate: rapid.Bool().Draw(rt, "multi"), ConstantLiar: rapid.Bool().Draw(rt, "liar"), FidelityCheck: rapid.Bool().Draw(rt, "check"),
			Rungs: &Rungs{TimeAttr: "t", Budgets: []float64{1, 3, 9}}}
		s, err := New(sp, o)
		if err != nil {
			rt.Fatal(err)
		}
		var live []string
		step := func(s *Searcher, i int, draw func(string) int) {
			switch op := draw("op"); {
			case op == 0 || len(live) == 0:
				id := fmt.Sprint("t", s.Suggested())
				cfg, err := s.Suggest(id)
				if err != nil {
					rt.Fatal(err)
				}
				if err := sp.Check(cfg); err != nil {
					rt.Fatalf("suggestion %v: %v", cfg, err)
				}
				live = append(live, id)
			case op == 1:
				k := draw("which") % len(live)
				tv := float64(draw("time") % 12)
				loss := float64(draw("loss")%7) / 3
				if draw("nan") == 0 {
					loss = math.NaN()
				}
				s.OnResult(live[k], &hone.Result{Metrics: map[string]any{"t": tv, "loss": loss}})
			default:
				k := draw("which") % len(live)
				var last *hone.Result
				if draw("last") > 0 {
					last = &hone.Result{Metrics: map[string]any{"t": float64(draw("time") % 12), "loss": float64(draw("loss") % 5)}}
				}
				s.OnTrialComplete(live[k], last, draw("fail") == 0)
				live = append(live[:k], live[k+1:]...)
			}
		}
		n := rapid.IntRange(1, 120).Draw(rt, "n")
		for i := range n {
			step(s, i, func(l string) int { return rapid.IntRange(0, 3).Draw(rt, fmt.Sprint(l, i)) })
			if err := sameTraining(s); err != nil {
				rt.Fatalf("after step %d: %v", i, err)
			}
		}
		data, err := s.MarshalState()
		if err != nil {
			rt.Fatal(err)
		}
		r, err := New(sp, o)
		if err != nil {
			rt.Fatal(err)
		}
		if err := r.UnmarshalState(data); err != nil {
			rt.Fatalf("restore: %v\n%s", err, data)
		}
		if again, _ := r.MarshalState(); string(again) != string(data) {
			rt.Fatalf("state changed across a round trip:\n%s\n%s", data, again)
		}
		if s.Floor() != r.Floor() || s.Observed() != r.Observed() {
			rt.Fatalf("floor %v / %v, observed %d / %d", s.Floor(), r.Floor(), s.Observed(), r.Observed())
		}
		// The same further calls give the same suggestions.
		saved := append([]string(nil), live...)
		var outs [2][]string
		for j, x := range []*Searcher{s, r} {
			live = append(live[:0], saved...)
			for i := range 30 {
				// A fixed script, the same for both.
				script := []int{0, 1, 2, 1, 0, 3, 1, 2}
				k := i % len(script)
				step(x, i, func(l string) int { return (script[k] + len(l) + i) % 4 })
				if len(live) > 0 {
					outs[j] = append(outs[j], live[len(live)-1])
				}
			}
			cfg, err := x.Suggest("last")
			if err != nil {
				rt.Fatal(err)
			}
			outs[j] = append(outs[j], fmt.Sprint(cfg))
		}
		if fmt.Sprint(outs[0]) != fmt.Sprint(outs[1]) {
			rt.Fatalf("the restored searcher diverged:\n%v\n%v", outs[0], outs[1])
		}
	})
}

// sameTraining checks that rungTraining, which keeps a ranking, gives what
// split gives over every row of the definition (rowsAt).
func sameTraining(s *Searcher) error {
	good, bad, ok := s.rungTraining()
	floor := s.floorIndex()
	rows, n := s.rowsAt(floor)
	need := s.startup
	if floor > 0 {
		need = fidelity.MinTrusted(s.startup)
	}
	want := n >= need
	fresh := 0
	if floor > 0 {
		// Above a misleading budget, need of them must have been
		// suggested since the floor rose.
		for _, r := range rows {
			if !r.liar && r.seq >= s.freshFrom {
				fresh++
			}
		}
		want = fresh >= need
	}
	if ok != want {
		return fmt.Errorf("rungTraining ok %v with %d observations (%d suggested since the floor rose at suggestion %d), %d needed", ok, n, fresh, s.freshFrom, need)
	}
	if !ok {
		return nil
	}
	wantGood, _ := split(rows, s.gamma(n))
	// The bad rows are the others but the running trials observed at the
	// floor or above (unless runningBad), the newest maxBad of them.
	inGood, running := map[int]bool{}, map[int]bool{}
	for _, r := range wantGood {
		inGood[r.seq] = true
	}
	for _, t := range s.all {
		running[t.seq] = !t.done
	}
	var wantBad []row
	for _, r := range rows {
		if !r.liar && (inGood[r.seq] || running[r.seq] && !s.runningBad) {
			continue
		}
		wantBad = append(wantBad, r)
	}
	if len(wantBad) > maxBad {
		wantBad = wantBad[len(wantBad)-maxBad:]
	}
	// Printed, so that NaN coordinates compare equal and nil equals empty.
	if fmt.Sprint(good) != fmt.Sprint(wantGood) || fmt.Sprint(bad) != fmt.Sprint(wantBad) {
		return fmt.Errorf("rungTraining:\n good %v\n bad %v\nsplit:\n good %v\n bad %v", good, bad, wantGood, wantBad)
	}
	return nil
}
